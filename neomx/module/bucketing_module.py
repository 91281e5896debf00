"""``BucketingModule``: one Module per bucket key (a sequence length, say), made by
``sym_gen(key) -> (symbol, data_names, label_names)`` when a batch of that key first comes,
all sharing the default bucket's parameters, gradients and optimizer.

>>> import neomx as mx
>>> def sym_gen(n):
...     data = mx.sym.var('data')
...     w = mx.sym.var('w', shape=(1,), init=mx.init.One())
...     return mx.sym.make_loss(mx.sym.broadcast_mul(data, w) * n), ('data',), None
>>> mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=2)
>>> mod.bind([('data', (3,))])
>>> mod.init_params()
>>> mod.forward(mx.io.DataBatch([mx.nd.ones((3,))], bucket_key=5,
...                             provide_data=[mx.io.DataDesc('data', (3,))]), is_train=False)
>>> mod.get_outputs()[0].asnumpy().tolist()
[5.0, 5.0, 5.0]
"""
import logging
import warnings

import numpy as np

from .. import context as ctx
from .. import ndarray as nd
from .. import symbol as sym
from ..base import MXNetError
from ..initializer import Uniform
from ..model import load_params
from ..symbol.name import NameManager
from .base_module import BaseModule, _check_input_names
from .module import Module

__all__ = ['BucketingModule']


class BucketingModule(BaseModule):
    """See the module docstring. The other arguments are Module's, for every bucket."""

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=ctx.cpu(),
                 work_load_list=None, fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None):
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise MXNetError('BucketingModule: default_bucket_key is required')
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, 'data', True)
        _check_input_names(symbol, label_names, 'label', False)
        _check_input_names(symbol, state_names, 'state', True)
        _check_input_names(symbol, fixed_param_names, 'fixed_param', True)
        self._compression_params = compression_params
        self._fixed_param_names = fixed_param_names
        self._state_names = state_names
        self._context = context
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _call_sym_gen(self, *args, **kwargs):
        # fresh automatic names for each bucket's symbol, so that they agree across buckets
        with NameManager():
            return self._sym_gen(*args, **kwargs)

    def _new_module(self, symbol, data_names, label_names):
        return Module(symbol, data_names, label_names, logger=self.logger,
                      context=self._context, work_load_list=self._work_load_list,
                      fixed_param_names=self._fixed_param_names, state_names=self._state_names,
                      group2ctxs=self._group2ctxs, compression_params=self._compression_params)

    @property
    def data_names(self):
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self):
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        self._require('data_shapes', 'binded')
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        self._require('label_shapes', 'binded')
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        self._require('output_shapes', 'binded')
        return self._curr_module.output_shapes

    def get_params(self):
        self._require('get_params', 'params_initialized')
        self._curr_module._params_dirty = self._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init)
            return
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. set_params call '
                          'ignored.', stacklevel=2)
            return
        self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing,
                                     force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        self._require('init_params', 'binded')
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        self._require('get_states', 'binded', 'params_initialized')
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        self._require('set_states', 'binded', 'params_initialized')
        self._curr_module.set_states(states, value)

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Binds the default bucket's module (the others follow in ``switch_bucket``)."""
        if self.params_initialized:
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if shared_module is not None:
            raise MXNetError('BucketingModule.bind: shared_module is not supported')
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.binded = True
        self._grad_req = grad_req
        module = self._buckets.get(self._default_bucket_key)
        if module is None:
            module = self._new_module(*self._call_sym_gen(self._default_bucket_key))
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, shared_module=None, grad_req=self._grad_req)
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        if self.params_initialized:
            self.set_params(arg_params, aux_params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Makes ``bucket_key``'s module current (binding it, sharing the default bucket's
        parameters, the first time)."""
        self._require('switch_bucket', 'binded')
        module = self._buckets.get(bucket_key)
        if module is None or not module.binded:
            if module is None:
                module = self._new_module(*self._call_sym_gen(bucket_key))
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=self._buckets[self._default_bucket_key],
                        grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
            self._buckets[bucket_key] = module
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        self._require('init_optimizer', 'binded', 'params_initialized')
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring.')
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for mod in self._buckets.values():
            if mod is not self._curr_module:
                mod.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Binds the module of the batch's bucket ahead of its ``forward``."""
        self._require('prepare', 'binded', 'params_initialized')
        original = self._curr_bucket_key
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original, None, None)

    def forward(self, data_batch, is_train=None):
        self._require('forward', 'binded', 'params_initialized')
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        self._require('backward', 'binded', 'params_initialized')
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        self._require('update', 'binded', 'params_initialized', 'optimizer_initialized')
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        self._require('get_outputs', 'binded', 'params_initialized')
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._require('get_input_grads', 'binded', 'params_initialized')
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._require('update_metric', 'binded', 'params_initialized')
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    @property
    def symbol(self):
        self._require('symbol', 'binded')
        return self._curr_module.symbol

    def install_monitor(self, mon):
        self._require('install_monitor', 'binded')
        self._monitor = mon
        for mod in self._buckets.values():
            mod.install_monitor(mon)

    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Writes the parameters (``prefix-%04d.params``), each bucket's symbol
        (``prefix-<key>-symbol.json``) and the bucket keys (``prefix.buckets``)."""
        if not self._buckets:
            raise MXNetError('BucketingModule.save_checkpoint: no bucket to save')
        self.save_params('%s-%04d.params' % (prefix, epoch))
        for key in self._buckets:
            symbol = self._call_sym_gen(key)[0]
            symbol.save('%s-%s-symbol.json' % (prefix, key), remove_amp_cast=remove_amp_cast)
        nd.save('%s.buckets' % prefix, nd.array(list(self._buckets.keys()), dtype=np.int32))

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule from ``save_checkpoint``'s files (``sym_gen`` and
        ``default_bucket_key`` are needed again)."""
        if sym_gen is None or default_bucket_key is None:
            raise MXNetError('BucketingModule.load: sym_gen and default_bucket_key are required')
        keys = [int(k) for k in nd.load('%s.buckets' % prefix)[0].asnumpy().astype('int32')]
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key in keys:
            _, data_names, label_names = sym_gen(key)
            symbol = sym.load('%s-%s-symbol.json' % (prefix, key))
            mod._buckets[key] = Module(symbol, data_names, label_names, **kwargs)
            if key == default_bucket_key:
                mod._curr_module = mod._buckets[key]
        if mod._curr_module is None:
            raise MXNetError('BucketingModule.load: %s.buckets does not list the default bucket '
                             '%r (it lists %s)' % (prefix, default_bucket_key, keys))
        arg_params, aux_params = load_params(prefix, epoch)
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod

    @staticmethod
    def load_dict(sym_dict=None, sym_gen=None, default_bucket_key=None, arg_params=None,
                  aux_params=None, **kwargs):
        """A BucketingModule from symbols by bucket key and parameter dicts."""
        if sym_dict is None or arg_params is None or aux_params is None or \
                default_bucket_key is None:
            raise MXNetError('BucketingModule.load_dict: sym_dict, arg_params, aux_params and '
                             'default_bucket_key are required')
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key, loaded in sym_dict.items():
            _, data_names, label_names = sym_gen(default_bucket_key)
            mod._buckets[key] = Module(loaded, data_names, label_names, **kwargs)
            if key == default_bucket_key:
                mod._curr_module = mod._buckets[key]
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod
