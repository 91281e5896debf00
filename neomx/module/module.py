"""``Module``: a symbol trained on one or several devices.

>>> import numpy as np, neomx as mx
>>> data = mx.sym.var('data')
>>> net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=2, name='fc'),
...                            name='softmax')
>>> X = np.random.RandomState(0).randn(40, 3).astype('float32')
>>> it = mx.io.NDArrayIter(X, (X[:, 0] > 0).astype('float32'), batch_size=10)
>>> mod = mx.mod.Module(net)
>>> mod.fit(it, num_epoch=20, optimizer_params={'learning_rate': 0.5})
>>> mod.score(it, 'acc')[0][1] > 0.9
True

Each device's executor runs its slice of the batch as one compiled operation (the symbol's
CachedOp program); the update is one fused optimizer operation per device, after the gradients
are summed through a KVStore when there are several devices (MXNet's choices of store and of
``update_on_kvstore``).
"""
import logging
import warnings

from .. import atomic
from .. import context as ctx
from .. import optimizer as opt
from ..base import MXNetError
from ..initializer import InitDesc, Uniform
from ..io import DataDesc
from ..model import (_create_kvstore, _initialize_kvstore, _update_params,
                     _update_params_on_kvstore, load_checkpoint)
from ..ndarray import zeros
from ..ndarray.sparse import zeros as sparse_zeros
from ..ndarray.utils import _write_atomic
from .base_module import BaseModule, _check_input_names, _parse_data_desc
from .executor_group import DataParallelExecutorGroup

__all__ = ['Module']


def _zeros_like(arr):
    """Zeros of ``arr``'s shape, dtype and storage type, on the CPU."""
    if arr.stype == 'default':
        return zeros(arr.shape, dtype=arr.dtype)
    return sparse_zeros(arr.stype, arr.shape, dtype=arr.dtype)


class Module(BaseModule):
    """A module computing ``symbol``: ``data_names`` and ``label_names`` are its inputs fed
    from batches; ``state_names`` inputs kept from call to call (``set_states``); the other
    arguments are parameters (``fixed_param_names`` not trained). ``context``: one context or
    a list (data parallelism, split by ``work_load_list``); ``group2ctxs`` places
    ``ctx_group`` attributes' arrays."""

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=ctx.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None):
        super().__init__(logger=logger)
        if isinstance(context, ctx.Context):
            context = [context]
        self._context = list(context)
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        if len(work_load_list) != len(self._context):
            raise MXNetError('Module: work_load_list has %d entries for %d contexts'
                             % (len(work_load_list), len(self._context)))
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._symbol = symbol
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, 'data', True)
        _check_input_names(symbol, label_names, 'label', False)
        _check_input_names(symbol, state_names, 'state', True)
        _check_input_names(symbol, fixed_param_names, 'fixed_param', True)
        inputs = data_names + label_names + state_names
        self._param_names = [x for x in symbol.list_arguments() if x not in inputs]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()
        self._arg_params = None
        self._aux_params = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = None
        self._updater = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module from a checkpoint (``prefix-symbol.json``, ``prefix-%04d.params`` and,
        with ``load_optimizer_states``, ``prefix-%04d.states`` once the optimizer is
        initialised); ``kwargs`` go to the constructor."""
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = '%s-%04d.states' % (prefix, epoch)
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Writes ``prefix-symbol.json``, ``prefix-%04d.params`` and, when asked, the
        optimizer's states to ``prefix-%04d.states``."""
        self._symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
        param_name = '%s-%04d.params' % (prefix, epoch)
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = '%s-%04d.states' % (prefix, epoch)
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        self._require('data_shapes', 'binded')
        return self._data_shapes

    @property
    def label_shapes(self):
        self._require('label_shapes', 'binded')
        return self._label_shapes

    @property
    def output_shapes(self):
        self._require('output_shapes', 'binded')
        return self._exec_group.get_output_shapes()

    def get_params(self):
        self._require('get_params', 'params_initialized')
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialises the parameters: from ``arg_params``/``aux_params`` where they are given,
        else with ``initializer`` (a missing one is an error unless ``allow_missing``);
        ``allow_extra`` accepts names the symbol lacks."""
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. init_params call '
                          'ignored.', stacklevel=2)
            return
        self._require('init_params', 'binded')

        def fill(desc, arr, given):
            if given is not None:
                if desc in given:
                    src = given[desc]
                    if src is not arr:
                        if src.shape != arr.shape:
                            raise MXNetError('init_params: %s has shape %s; the module '
                                             'expects %s' % (desc, src.shape, arr.shape))
                        (src.astype(arr.dtype) if src.dtype != arr.dtype else src).copyto(arr)
                    return
                if not allow_missing:
                    raise RuntimeError('%s is not presented' % desc)
            if initializer is not None:
                initializer(desc, arr)

        attrs = self._symbol.attr_dict()
        for params, given in ((self._arg_params, arg_params), (self._aux_params, aux_params)):
            for name, arr in sorted(params.items()):
                fill(InitDesc(name, attrs.get(name, None)), arr, given)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. set_params call '
                          'ignored.', stacklevel=2)
            return
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Makes the executors for inputs of ``data_shapes`` / ``label_shapes`` (DataDesc or
        ``(name, shape)``); ``shared_module``: a bound module whose parameters (and data
        buffers) these executors share."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if not for_training and inputs_need_grad:
            raise MXNetError('Module.bind: inputs_need_grad needs for_training=True')
        data_shapes, label_shapes = _parse_data_desc(self.data_names, self.label_names,
                                                     data_shapes, label_shapes)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes, self._label_shapes = data_shapes, label_shapes
        shared_group = None
        if shared_module is not None:
            if not (isinstance(shared_module, Module) and shared_module.binded and
                    shared_module.params_initialized):
                raise MXNetError('Module.bind: shared_module must be a bound Module with '
                                 'initialized parameters')
            shared_group = shared_module._exec_group
            if len(shared_group.execs) < len(self._context):
                raise MXNetError('Module.bind: shared_module has fewer devices')
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad, shared_group,
            logger=self.logger, fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            group2ctxs=self._group2ctxs, state_names=self._state_names)
        self._total_exec_bytes = self._exec_group._total_exec_bytes
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            # parameters loaded before binding (Module.load): into the new executors
            self._exec_group.set_params(self._arg_params, self._aux_params)
        else:
            if self._arg_params is not None or self._aux_params is not None:
                raise MXNetError('Module.bind: parameters exist but are not initialized')
            self._arg_params = {name: _zeros_like(x[0]) for name, x in
                                zip(self._param_names, self._exec_group.param_arrays)}
            self._aux_params = {name: zeros(x[0].shape, dtype=x[0].dtype)
                                for name, x in zip(self._aux_names, self._exec_group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def reshape(self, data_shapes, label_shapes=None):
        """Re-binds for new input shapes (the parameters are kept)."""
        self._require('reshape', 'binded')
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Sets up the optimizer (a name with ``optimizer_params``, or an Optimizer) and, with
        several devices, the KVStore; ``rescale_grad`` defaults to 1 / batch size."""
        self._require('init_optimizer', 'binded', 'params_initialized')
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring...')
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kvstore, update_on_kvstore = _create_kvstore(kvstore, len(self._context),
                                                     self._arg_params)
        batch_size = self._exec_group.batch_size
        if kvstore and 'dist' in kvstore.type and '_sync' in kvstore.type:
            batch_size *= kvstore.num_workers
        rescale_grad = 1.0 / batch_size
        names = self._exec_group.param_names
        if update_on_kvstore:
            idx2name = dict(enumerate(names))
        else:
            n = len(self._context)
            idx2name = {i * n + k: name for i, name in enumerate(names) for k in range(n)}
        if isinstance(optimizer, str):
            optimizer_params = dict(optimizer_params)
            optimizer_params.setdefault('rescale_grad', rescale_grad)
            optimizer = opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name,
                                   **optimizer_params)
        else:
            if not isinstance(optimizer, opt.Optimizer):
                raise MXNetError('Module.init_optimizer: optimizer must be a name or an '
                                 'Optimizer, got %r' % (optimizer,))
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn('Optimizer created manually outside Module but rescale_grad is not '
                              'normalized to 1.0/batch_size/num_workers (%s vs. %s). Is this '
                              'intended?' % (optimizer.rescale_grad, rescale_grad),
                              stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        self._optimizer = optimizer
        self._kvstore = kvstore
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            _initialize_kvstore(kvstore, self._exec_group.param_arrays, self._arg_params,
                                self._param_names, update_on_kvstore)
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Uses ``shared_module``'s optimizer, store and updater."""
        if not shared_module.optimizer_initialized:
            raise MXNetError('borrow_optimizer: the shared module has no optimizer yet')
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def forward(self, data_batch, is_train=None):
        """Runs a batch (a DataBatch, anything with ``.data``, or a list of batches one per
        device); re-binds first when its shapes differ from the bound ones."""
        self._require('forward', 'binded', 'params_initialized')
        current = tuple(d.shape for d in self._data_shapes)
        if isinstance(data_batch, list):
            new = []
            for i in range(len(data_batch[0].data)):
                shape = data_batch[0].data[i].shape
                if any(db.data[i].shape != shape for db in data_batch):
                    raise MXNetError('Module.forward: all data batches in a list need to have '
                                     'the same shape')
                new.append((len(data_batch) * shape[0],) + tuple(shape[1:]))
            new = tuple(new)
        else:
            new = tuple(d.shape for d in data_batch.data)
        if current != new:
            if getattr(data_batch, 'provide_data', None):
                new_dshape = data_batch.provide_data
            else:
                new_dshape = [DataDesc(d.name, shape, d.dtype, d.layout)
                              for d, shape in zip(self._data_shapes, new)]
            if getattr(data_batch, 'provide_label', None):
                new_lshape = data_batch.provide_label
            elif getattr(data_batch, 'label', None) and self._label_shapes:
                new_lshape = [DataDesc(d.name, lb.shape, d.dtype, d.layout)
                              for d, lb in zip(self._label_shapes, data_batch.label)]
            else:
                new_lshape = None
            self.reshape(new_dshape, new_lshape)
        self._exec_group.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Back-propagates (``out_grads`` for outputs that are not losses)."""
        self._require('backward', 'binded', 'params_initialized')
        self._exec_group.backward(out_grads=out_grads)

    def update(self):
        """Applies the optimizer to the gradients of the last backward."""
        self._require('update', 'binded', 'params_initialized', 'optimizer_initialized')
        self._params_dirty = True
        group = self._exec_group
        if self._update_on_kvstore:
            _update_params_on_kvstore(group.param_arrays, group.grad_arrays, self._kvstore,
                                      group.param_names)
        else:
            _update_params(group.param_arrays, group.grad_arrays, updater=self._updater,
                           num_device=len(self._context), kvstore=self._kvstore,
                           param_names=group.param_names)

    def get_outputs(self, merge_multi_context=True):
        self._require('get_outputs', 'binded', 'params_initialized')
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._require('get_input_grads', 'binded', 'params_initialized')
        if not self.inputs_need_grad:
            raise MXNetError('get_input_grads: bind with inputs_need_grad=True')
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        self._require('get_states', 'binded', 'params_initialized')
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        self._require('set_states', 'binded', 'params_initialized')
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def _sync_params_from_devices(self):
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    def save_optimizer_states(self, fname):
        """Writes the optimizer's states (the store's when it updates) to ``fname``."""
        self._require('save_optimizer_states', 'optimizer_initialized')
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            _write_atomic(fname, self._updater.get_states())

    def load_optimizer_states(self, fname):
        """Reads optimizer states written by ``save_optimizer_states``."""
        self._require('load_optimizer_states', 'optimizer_initialized')
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            self._updater.set_states(atomic.read(fname))

    def install_monitor(self, mon):
        """Installs ``mon`` (an ``mx.mon.Monitor``) on every executor."""
        self._require('install_monitor', 'binded')
        self._exec_group.install_monitor(mon)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        self._require('prepare', 'binded')
        if sparse_row_id_fn is not None:
            warnings.warn(UserWarning('sparse_row_id_fn is not used: neomx parameters are '
                                      'dense'))
