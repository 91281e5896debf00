"""``SequentialModule``: modules chained so that each one's outputs are the next one's data
(and, backwards, each one's input gradients the previous one's output gradients).

>>> import neomx as mx
>>> first = mx.mod.Module(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc'),
...                       label_names=None)
>>> second = mx.mod.Module(mx.sym.SoftmaxOutput(mx.sym.var('data'), name='softmax'))
>>> seq = mx.mod.SequentialModule().add(first).add(second, take_labels=True, auto_wiring=True)
>>> seq.bind([('data', (2, 3))], [('softmax_label', (2,))])
>>> seq.output_shapes
[('softmax_output', (2, 4))]
"""
import copy
import logging

from ..base import MXNetError
from ..initializer import Uniform
from .base_module import BaseModule

__all__ = ['SequentialModule']


class SequentialModule(BaseModule):
    """See the module docstring. ``add(module, take_labels=..., auto_wiring=...)``: with
    ``take_labels`` the module gets the batch's labels (and updates the metric); with
    ``auto_wiring`` the previous module's outputs are renamed to this module's data names."""
    META_TAKE_LABELS = 'take_labels'
    META_AUTO_WIRING = 'auto_wiring'

    def __init__(self, logger=logging):
        super().__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self._data_shapes = None
        self._meta_keys = {self.META_TAKE_LABELS, self.META_AUTO_WIRING}

    def add(self, module, **kwargs):
        """Appends ``module``; returns self, for chaining."""
        unknown = set(kwargs) - self._meta_keys
        if unknown:
            raise MXNetError('SequentialModule.add: unknown option(s) %s (expected %s)'
                             % (', '.join(sorted(unknown)), ', '.join(sorted(self._meta_keys))))
        self._modules.append(module)
        self._metas.append(kwargs)
        self.binded = self.params_initialized = self.optimizer_initialized = False
        return self

    def _takes_labels(self, i):
        return bool(self._metas[i].get(self.META_TAKE_LABELS, False))

    @property
    def data_names(self):
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        self._require('data_shapes', 'binded')
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        self._require('label_shapes', 'binded')
        return self._label_shapes

    @property
    def output_shapes(self):
        self._require('output_shapes', 'binded')
        return self._modules[-1].output_shapes

    def get_params(self):
        self._require('get_params', 'binded', 'params_initialized')
        arg_params, aux_params = {}, {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        self._require('init_params', 'binded')
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=allow_extra)
        owners = ({}, {})
        for i, module in enumerate(self._modules):
            for seen, names in zip(owners, module.get_params()):
                for name in names:
                    if name in seen:
                        raise MXNetError('SequentialModule: duplicated parameter name %r in '
                                         'module %d (%s), already used in module %d (%s)'
                                         % (name, i, type(module).__name__, seen[name],
                                            type(self._modules[seen[name]]).__name__))
                    seen[name] = i
        self.params_initialized = True

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if inputs_need_grad and not for_training:
            raise MXNetError('SequentialModule.bind: inputs_need_grad needs for_training')
        if shared_module is not None:
            raise MXNetError('SequentialModule.bind: shared_module is not supported')
        if not self._modules:
            raise MXNetError('SequentialModule.bind: no modules added')
        self.binded = True
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._label_shapes = label_shapes
        shapes = data_shapes
        any_labels = False
        for i, module in enumerate(self._modules):
            labels = label_shapes if self._takes_labels(i) else None
            any_labels |= self._takes_labels(i)
            if self._metas[i].get(self.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(shapes):
                    raise MXNetError('SequentialModule: module %d takes %d inputs, the previous '
                                     'one gives %d' % (i, len(names), len(shapes)))
                shapes = [(name, s[1]) for name, s in zip(names, shapes)]
            # every module after the first must hand gradients back to the one before it
            module.bind(data_shapes=shapes, label_shapes=labels, for_training=for_training,
                        inputs_need_grad=bool(inputs_need_grad or (for_training and i > 0)),
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            shapes = module.output_shapes
        if not any_labels:
            self._label_shapes = None

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        self._require('init_optimizer', 'binded', 'params_initialized')
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring.')
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    def forward(self, data_batch, is_train=None):
        self._require('forward', 'binded', 'params_initialized')
        batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            batch.data = module.get_outputs()
            if hasattr(batch, 'provide_data'):
                names = [x[0] for x in module.output_shapes]
                batch.provide_data = [(name, x.shape) for name, x in zip(names, batch.data)]

    def backward(self, out_grads=None):
        self._require('backward', 'binded', 'params_initialized')
        for i in range(len(self._modules) - 1, -1, -1):
            module = self._modules[i]
            module.backward(out_grads=out_grads)
            if i == 0:
                break
            out_grads = module.get_input_grads()

    def update(self):
        self._require('update', 'binded', 'params_initialized', 'optimizer_initialized')
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        self._require('get_outputs', 'binded', 'params_initialized')
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._require('get_input_grads', 'binded', 'params_initialized')
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._require('update_metric', 'binded', 'params_initialized')
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        self._require('install_monitor', 'binded')
        for module in self._modules:
            module.install_monitor(mon)
