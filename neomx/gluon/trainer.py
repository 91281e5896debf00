"""The Trainer: applies an optimizer to a set of Parameters, reducing their gradients across
devices through a KVStore.

A step is a handful of engine operations, whatever the number of parameters: the gradients of
all parameters go to the KVStore in one ``pushpull`` (a few copy and sum operations per
device), and the update of all parameters of a device is one fused operation. Parameters on
several devices end the step identical: either the store updates its copy and every device
pulls it (``update_on_kvstore``, MXNet's default with several devices), or every device
applies the same update to the same summed gradient.

>>> import neomx as mx
>>> from neomx import autograd, gluon
>>> w = gluon.Parameter('w', shape=(2,), init=mx.init.One())
>>> w.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
>>> trainer = gluon.Trainer([w], 'sgd', {'learning_rate': 0.5})
>>> for ctx in (mx.cpu(0), mx.cpu(1)):
...     with autograd.record():
...         loss = (w.data(ctx) * 2).sum()
...     loss.backward()
>>> trainer.step(batch_size=2)
>>> w.data(mx.cpu(1)).asnumpy().tolist()     # 1 - 0.5 * (2 + 2) / 2
[0.0, 0.0]
"""
import os
from math import prod

from .. import atomic, autograd, optimizer as opt
from ..kvstore import KVStore, KVStoreBase, create as _create_kvstore
from ..ndarray.utils import _write_atomic
from .parameter import Parameter, ParameterDict

__all__ = ['Trainer']


def _make_kvstore(kvstore, num_device, params):
    """(store, update_on_kvstore) for ``kvstore`` (a name, a store or None), as MXNet decides:
    no store for one device in one process; updates on the store unless
    ``MXNET_UPDATE_ON_KVSTORE=0`` or, for 'local', a parameter above 16M elements."""
    update_on_kvstore = bool(int(os.getenv('MXNET_UPDATE_ON_KVSTORE', "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and 'dist' not in kvstore:
            kv = None
        else:
            kv = _create_kvstore(kvstore)
            if kvstore == 'local':
                sizes = [prod(p.shape or ()) for p in params]
                if sizes and max(sizes) > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise TypeError('kvstore must be KVStore, str or None, got %r' % (kvstore,))
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= kv.is_capable(KVStoreBase.OPTIMIZER)
    return kv, update_on_kvstore


class Trainer:
    """Applies ``optimizer`` to ``params`` (a ParameterDict, a dict or a list of Parameters).

    Parameters
    ----------
    params : ParameterDict, dict or list of Parameter
        A dict is taken in the order of its sorted names, as in MXNet.
    optimizer : str or Optimizer
    optimizer_params : dict
        Arguments of the optimizer, such as ``{'learning_rate': 0.1}``, when ``optimizer`` is
        a name.
    kvstore : str, KVStore or None
        How gradients are reduced across devices ('device' by default; ignored with a single
        device).
    compression_params : dict
        Gradient compression (not implemented: an error if given).
    update_on_kvstore : bool
        Whether the store applies the updates (None: MXNet's choice, see ``_make_kvstore``).
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore='device',
                 compression_params=None, update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[key] for key in sorted(list(params.keys()))]
        if not isinstance(params, (list, tuple)):
            raise ValueError("First argument must be a list or dict of Parameters, got %s."
                             % (type(params)))
        self._params = []
        self._param2idx = {}
        self._contains_sparse_weight = False
        self._contains_sparse_grad = False
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError("First argument must be a list or dict of Parameters, got list "
                                 "of %s." % (type(param)))
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
            self._contains_sparse_weight |= param._stype != 'default'
            self._contains_sparse_grad |= param._grad_stype != 'default'
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params or {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {'kvstore': kvstore, 'update_on_kvstore': update_on_kvstore}
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = []
        self._reset_kvstore()

    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise AssertionError(
                    "All Parameters must be initialized on the same set of contexts, but "
                    "Parameter %s is initialized on %s while previous Parameters are "
                    "initialized on %s." % (param.name, str(ctx), str(contexts)))
            contexts = ctx
        return contexts

    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = {i: param for i, param in enumerate(self._params)}
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise AssertionError("optimizer_params must be None if optimizer is an instance "
                                     "of Optimizer instead of str")
            self._optimizer = optimizer
            # Not a copy: lr_mult and wd_mult changed on a Parameter later take effect.
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    # -- the store ------------------------------------------------------------------------
    def _init_params(self):
        """Copies each initialised parameter into the store and from there to every device
        (parameters still waiting for deferred initialisation are left for later)."""
        if not self._kv_initialized:
            raise AssertionError("Cannot initialize parameters in KVStore when KVStore is not "
                                 "initialized.")
        waiting, keys, values, outs = [], [], [], []
        if self._kvstore:
            for param in self._params_to_init:
                if param._deferred_init:
                    waiting.append(param)
                elif param._stype != 'default':
                    # A sparse weight lives in the store; row_sparse_data pulls its rows.
                    self._kvstore.init(self._param2idx[param.name], param._data[0])
                else:
                    arrays = param._check_and_get(param._data, list)
                    keys.append(self._param2idx[param.name])
                    values.append(arrays[0])
                    outs.append(arrays)
            if keys:
                if isinstance(self._kvstore, KVStore):
                    self._kvstore.broadcast(keys, values, outs)
                else:   # a store of the user's, written for MXNet's one key per call
                    for k, v, o in zip(keys, values, outs):
                        self._kvstore.broadcast(k, v, o, priority=-k)
        self._params_to_init = waiting

    def _reset_kvstore(self):
        if self._kvstore and 'dist' in self._kvstore.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_kvstore(self):
        config = self._kvstore_params
        if self._contains_sparse_weight:
            self._init_sparse_kvstore(config)
            return
        kvstore, update_on_kvstore = _make_kvstore(config['kvstore'], len(self._contexts),
                                                   self._params)
        self._distributed = 'dist' in kvstore.type if kvstore else False
        if self._contains_sparse_grad:
            # Dense weights with row_sparse gradients: updated on the store only when it is
            # distributed, unless asked.
            update_on_kvstore = self._distributed
            if config['update_on_kvstore'] is not None:
                if config['update_on_kvstore'] is False and self._distributed:
                    raise ValueError("Cannot set update_on_kvstore=False on dist kvstore when "
                                     "sparse gradients are present.")
                update_on_kvstore = config['update_on_kvstore']
            self._finish_kvstore(kvstore, update_on_kvstore)
            return
        if self._distributed and 'async' in kvstore.type:
            update_on_kvstore = True
            if config['update_on_kvstore'] is False:
                raise ValueError("Please set update_on_kvstore=True when training in async "
                                 "mode.")
        if kvstore is not None and config['update_on_kvstore'] is not None:
            update_on_kvstore = config['update_on_kvstore']
        if update_on_kvstore and not kvstore.is_capable('optimizer'):
            if config['update_on_kvstore']:
                raise ValueError("Please set update_on_kvstore=False when training with {}"
                                 .format(type(kvstore)))
            update_on_kvstore = False
        self._finish_kvstore(kvstore, update_on_kvstore)

    def _init_sparse_kvstore(self, config):
        """Sparse weights live in a store, which updates them (whatever the devices)."""
        kvstore = config['kvstore']
        if isinstance(kvstore, str):
            kvstore = _create_kvstore(kvstore)
        elif not isinstance(kvstore, KVStoreBase):
            raise TypeError("Cannot create '%s' KVStore with row_sparse parameters. The type "
                            "must be KVStore or str." % (kvstore,))
        if not kvstore.is_capable(KVStoreBase.OPTIMIZER):
            raise AssertionError("KVStore with sparse weight requires optimizer support. "
                                 "However, %s does not support optimizer." % type(kvstore))
        if config['update_on_kvstore'] is False:
            raise ValueError("Cannot set update_on_kvstore=False when sparse weights are "
                             "present.")
        self._distributed = 'dist' in kvstore.type
        self._finish_kvstore(kvstore, True)

    def _finish_kvstore(self, kvstore, update_on_kvstore):
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore = kvstore
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    def _row_sparse_pull(self, parameter, out, row_id, full_idx=False):
        """Pulls the rows ``row_id`` of a sparse parameter from the store into ``out``
        (all of them with ``full_idx``). Called in a forward pass too: the store's copies and
        the pull stay outside any recorded graph, as in MXNet."""
        with autograd.pause():
            self._prepare()
            idx = self._param2idx[parameter.name]
            if full_idx and 'dist' not in self._kvstore.type:
                if row_id.size != out.shape[0]:
                    raise AssertionError("row_sparse pull of all rows: %d row ids for %d rows"
                                         % (row_id.size, out.shape[0]))
                self._kvstore.pull(idx, out=out, priority=-idx, ignore_sparse=False)
            else:
                self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    def _prepare(self):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    def _check_initialized(self):
        """Raises for a parameter not initialised yet, before its gradient is looked at: one
        whose initialisation waits for the first forward pass gets MXNet's
        DeferredInitializationError (which its store raises reading every parameter), not a
        warning that its gradient is stale."""
        for param in self._params:
            if param._data is None:
                param._check_and_get(None, list)

    # -- the optimizer --------------------------------------------------------------------
    @property
    def learning_rate(self):
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate can be "
                              "accessed.")
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        if isinstance(self._optimizer, opt.Optimizer):
            return self._optimizer
        raise UserWarning("Optimizer has not been initialized yet")

    def set_learning_rate(self, lr):
        """Sets the optimizer's learning rate (an error when it has an ``lr_scheduler``)."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate is "
                              "mutated.")
        self._optimizer.set_learning_rate(lr)

    def _check_and_rescale_grad(self, scale):
        if self._update_on_kvstore and self._distributed and self._kv_initialized:
            if self._optimizer.rescale_grad != scale:
                raise UserWarning('Possible change in the `batch_size` from previous `step` '
                                  'detected. Optimizer gradient normalizing factor will not '
                                  'change w.r.t new batch_size when update_on_kvstore=True and '
                                  'when distributed kvstore is used.')
        self._optimizer.rescale_grad = scale

    # -- steps ----------------------------------------------------------------------------
    def step(self, batch_size, ignore_stale_grad=False):
        """One update of every parameter from its gradients, scaled by ``1/batch_size``:
        ``allreduce_grads`` then ``update``. Call it after ``backward``, outside ``record``.

        With ``ignore_stale_grad``, parameters whose gradient no backward pass has written
        since the last step are skipped instead of raising.
        """
        self._check_and_rescale_grad(self._scale / batch_size)
        self._prepare()
        self._check_initialized()
        self._check_stale(ignore_stale_grad)
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self):
        """Sums each parameter's gradients across devices (into every device's gradient), for
        use with ``update`` when the gradients are to be changed in between (clipping)."""
        self._prepare()
        self._check_initialized()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError('allreduce_grads() when parameters are updated on kvstore is '
                                 'not supported. Try setting `update_on_kvstore` to False when '
                                 'creating trainer.')
        self._allreduce_grads()

    def update(self, batch_size, ignore_stale_grad=False):
        """The update half of ``step`` (after ``allreduce_grads``)."""
        self._prepare()
        self._check_initialized()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError('update() when parameters are updated on kvstore is not '
                                 'supported. Try setting `update_on_kvstore` to False when '
                                 'creating trainer.')
        self._check_and_rescale_grad(self._scale / batch_size)
        self._check_stale(ignore_stale_grad)
        self._update(ignore_stale_grad)

    def _check_stale(self, ignore_stale_grad):
        if ignore_stale_grad:
            return
        for param in self._params:
            if param.grad_req == 'null':
                continue
            for data in param._check_and_get(param._data, list):
                if not data._fresh_grad:
                    raise UserWarning(
                        "Gradient of Parameter `%s` on context %s has not been updated by "
                        "backward since last `step`. This could mean a bug in your model that "
                        "made it only use a subset of the Parameters (Blocks) for this "
                        "iteration. If you are intentionally only using a subset, call step "
                        "with ignore_stale_grad=True to suppress this warning and skip "
                        "updating of Parameters with stale gradient"
                        % (param.name, str(data.context)))

    def _allreduce_grads(self):
        """One pushpull for all parameters: the gradients go to the store, and the sums (or,
        updating on the store, the new weights) come back."""
        if not self._kvstore:
            return
        keys, grads, datas = [], [], []
        for i, param in enumerate(self._params):
            if param.grad_req == 'null':
                continue
            if param._grad_stype != 'default':
                self._push_sparse_grad(i, param)
            else:
                keys.append(i)
                grads.append(param.list_grad())
                if self._update_on_kvstore:
                    datas.append(param.list_data())
        if not keys:
            return
        if not isinstance(self._kvstore, KVStore):
            # A store of the user's, written for MXNet's one key per call.
            for n, k in enumerate(keys):
                self._kvstore.pushpull(k, grads[n], out=datas[n] if datas else None,
                                       priority=-k)
        elif self._update_on_kvstore:
            self._kvstore.pushpull(keys, grads, out=datas)
        else:
            self._kvstore.pushpull(keys, grads)

    def _push_sparse_grad(self, i, param):
        """Pushes a row_sparse gradient; for a dense weight, pulls back the new weight
        (updating on the store) or the summed gradient. A sparse weight stays in the store."""
        grads = param.list_grad()
        self._kvstore.push(i, grads, priority=-i)
        if param._stype == 'default':
            pull = param.list_data() if self._update_on_kvstore else grads
            self._kvstore.pull(i, pull, priority=-i, ignore_sparse=self._distributed)

    def _update(self, ignore_stale_grad=False):
        loss_scaler = getattr(self, '_amp_loss_scaler', None)
        if loss_scaler is not None and loss_scaler.has_overflow(self._params):
            return
        if self._kvstore and self._update_on_kvstore:
            return      # the store updated the weights during the pushpull
        updates = [([], [], []) for _ in self._updaters]
        for i, param in enumerate(self._params):
            if param.grad_req == 'null':
                continue
            for (idx, grads, weights), arr, grad in zip(updates, param.list_data(),
                                                         param.list_grad()):
                if not ignore_stale_grad or arr._fresh_grad:
                    idx.append(i)
                    grads.append(grad)
                    weights.append(arr)
                    arr._fresh_grad = False
        for updater, (idx, grads, weights) in zip(self._updaters, updates):
            if idx:
                updater(idx, grads, weights)

    # -- states ---------------------------------------------------------------------------
    def save_states(self, fname):
        """Writes the optimizer and its states (momentum, ...) to ``fname``: MXNet's pickled
        format, written atomically. The Parameters' ``lr_mult``/``wd_mult`` are not saved."""
        self._prepare()
        if self._update_on_kvstore:
            if self._params_to_init:
                raise AssertionError("Cannot save trainer states when some parameters are not "
                                     "yet initialized in kvstore.")
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            _write_atomic(fname, self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname):
        """Loads the optimizer and its states written by ``save_states``."""
        self._prepare()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            states = atomic.read(fname)
            for updater in self._updaters:
                updater.set_states(states)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = {i: param for i, param in enumerate(self._params)}
