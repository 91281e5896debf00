"""Checkpoints of symbolic models and the training helpers Module shares with MXNet 1.x's older
``FeedForward`` API.

A checkpoint is MXNet's pair of files: ``prefix-symbol.json`` (the graph) and
``prefix-%04d.params`` (``arg:name`` and ``aux:name`` arrays in MXNet's binary format); real
MXNet 1.x reads the ones written here and the reverse.

>>> import os, tempfile, neomx as mx
>>> net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc')
>>> prefix = os.path.join(tempfile.mkdtemp(), 'net')
>>> mx.model.save_checkpoint(prefix, 3, net, {'fc_weight': mx.nd.ones((2, 4)),
...                                            'fc_bias': mx.nd.zeros((2,))}, {})
>>> sym, args, aux = mx.model.load_checkpoint(prefix, 3)
>>> sym.list_arguments(), sorted(args), aux
(['data', 'fc_weight', 'fc_bias'], ['fc_bias', 'fc_weight'], {})
"""
import logging
import os
import warnings
from collections import namedtuple

import numpy as np

from . import io
from . import kvstore as kvs
from . import metric
from . import ndarray as nd
from . import optimizer as opt
from . import symbol as sym
from .base import MXNetError
from .context import Context, cpu
from .initializer import Uniform

__all__ = ['BatchEndParam', 'save_checkpoint', 'load_params', 'load_checkpoint',
           'FeedForward']

BatchEndParam = namedtuple('BatchEndParams', ['epoch', 'nbatch', 'eval_metric', 'locals'])
BatchEndParam.__doc__ = """What batch-end and score-end callbacks receive: the epoch, the
batch number, the metric and the caller's local variables."""


def _create_kvstore(kvstore, num_device, arg_params):
    """(store, update_on_kvstore) as MXNet decides: no store for one device in one process; the
    store applies the updates unless ``MXNET_UPDATE_ON_KVSTORE=0`` or, for 'local', some
    parameter has more than 16M elements."""
    update_on_kvstore = bool(int(os.getenv('MXNET_UPDATE_ON_KVSTORE', '1')))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and 'dist' not in kvstore:
            kv = None
        else:
            kv = kvs.create(kvstore)
            if kvstore == 'local' and arg_params:
                if max(int(np.prod(p.shape)) for p in arg_params.values()) > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise TypeError('kvstore must be a KVStore, a str or None, got %r' % (kvstore,))
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= kv.is_capable(kvs.KVStoreBase.OPTIMIZER)
    return kv, update_on_kvstore


def _initialize_kvstore(kvstore, param_arrays, arg_params, param_names, update_on_kvstore):
    """Puts each parameter into the store (and, when the store updates, its value on every
    device)."""
    if not param_names:
        return
    if update_on_kvstore:
        kvstore.broadcast(list(param_names), [arg_params[n] for n in param_names],
                          out=[list(devs) for devs in param_arrays])
    else:
        kvstore.init(list(param_names), [arg_params[n] for n in param_names])


def _live(param_arrays, grad_arrays, param_names):
    """The (params, grads, name, index) of the parameters that have gradients."""
    return [(p, g, n, i) for i, (p, g, n) in enumerate(zip(param_arrays, grad_arrays,
                                                            param_names))
            if g[0] is not None]


def _update_params_on_kvstore(param_arrays, grad_arrays, kvstore, param_names):
    """Sums each parameter's gradients in the store, which updates it; every device pulls the
    result. One ``pushpull`` for all parameters."""
    live = _live(param_arrays, grad_arrays, param_names)
    if live:
        kvstore.pushpull([n for _, _, n, _ in live], [list(g) for _, g, _, _ in live],
                         out=[list(p) for p, _, _, _ in live])


def _update_params(param_arrays, grad_arrays, updater, num_device, kvstore=None,
                   param_names=None):
    """Sums the gradients across devices through ``kvstore`` (when there is one), then each
    device updates its own copy with ``updater`` (index ``i * num_device + k`` for
    parameter ``i`` on device ``k``, as MXNet numbers them)."""
    live = _live(param_arrays, grad_arrays, param_names or [str(i) for i in
                                                             range(len(param_arrays))])
    if not live:
        return
    if kvstore:
        kvstore.pushpull([n for _, _, n, _ in live], [list(g) for _, g, _, _ in live])
    for k in range(num_device):
        updater([i * num_device + k for _, _, _, i in live], [g[k] for _, g, _, _ in live],
                [p[k] for p, _, _, _ in live])


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Writes ``prefix-symbol.json`` (when ``symbol`` is given) and ``prefix-%04d.params``
    (each array copied to the CPU), atomically."""
    if symbol is not None:
        symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
    arrays = {'arg:%s' % k: v.as_in_context(cpu()) for k, v in arg_params.items()}
    arrays.update({'aux:%s' % k: v.as_in_context(cpu()) for k, v in aux_params.items()})
    name = '%s-%04d.params' % (prefix, epoch)
    nd.save(name, arrays)
    logging.info('Saved checkpoint to "%s"', name)


def _split_params(arrays, fname):
    arg_params, aux_params = {}, {}
    for key, value in arrays.items():
        kind, sep, name = key.partition(':')
        if not sep or kind not in ('arg', 'aux'):
            raise MXNetError("%s: key %r is neither 'arg:<name>' nor 'aux:<name>' (not a "
                             "checkpoint's parameter file)" % (fname, key))
        (arg_params if kind == 'arg' else aux_params)[name] = value
    return arg_params, aux_params


def load_params(prefix, epoch):
    """(arg_params, aux_params) from ``prefix-%04d.params``."""
    fname = '%s-%04d.params' % (prefix, epoch)
    arrays = nd.load(fname)
    if not arrays:
        logging.warning("Params file '%s' is empty", fname)
        return {}, {}
    if not isinstance(arrays, dict):
        raise MXNetError("%s: holds a list of arrays, not named 'arg:'/'aux:' parameters"
                         % fname)
    return _split_params(arrays, fname)


def load_checkpoint(prefix, epoch):
    """(symbol, arg_params, aux_params) from ``prefix-symbol.json`` and
    ``prefix-%04d.params``."""
    symbol = sym.load('%s-symbol.json' % prefix)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params


def _multiple_callbacks(callbacks, *args, **kwargs):
    if isinstance(callbacks, (list, tuple)):
        for cb in callbacks:
            cb(*args, **kwargs)
    elif callbacks:
        callbacks(*args, **kwargs)


class FeedForward:
    """MXNet's oldest training API (deprecated there in favour of ``mx.mod.Module``, on which
    it runs here): a symbol, its parameters and an optimizer, trained by ``fit`` on a
    DataIter or on NumPy arrays (``X``, ``y``) and used by ``predict`` / ``score``.
    ``symbol`` may be a function of a bucket key (``sym_gen``), called with the training data's
    ``default_bucket_key``.
    """

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer='sgd',
                 initializer=Uniform(0.01), numpy_batch_size=128, arg_params=None,
                 aux_params=None, allow_extra_params=False, begin_epoch=0, **kwargs):
        warnings.warn('mxnet.model.FeedForward has been deprecated. Please use mxnet.mod.Module '
                      'instead.', DeprecationWarning, stacklevel=2)
        if isinstance(symbol, sym.Symbol):
            self.symbol, self.sym_gen = symbol, None
        elif callable(symbol):
            self.symbol, self.sym_gen = None, symbol
        else:
            raise TypeError('FeedForward: symbol must be a Symbol or a function of a bucket '
                            'key, got %r' % (symbol,))
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        if ctx is None:
            ctx = [cpu()]
        elif isinstance(ctx, Context):
            ctx = [ctx]
        self.ctx = ctx
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.kwargs = kwargs.copy()
        self.optimizer = optimizer
        self.initializer = initializer
        self.numpy_batch_size = numpy_batch_size
        self.begin_epoch = begin_epoch
        self._pred_mod = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state['_pred_mod'] = None
        return state

    def _own_params(self):
        """The given parameters, without the ones the symbol lacks when extras are allowed."""
        if not self.allow_extra_params or self.symbol is None:
            return self.arg_params, self.aux_params
        args = set(self.symbol.list_arguments())
        auxs = set(self.symbol.list_auxiliary_states())
        return ({k: v for k, v in (self.arg_params or {}).items() if k in args},
                {k: v for k, v in (self.aux_params or {}).items() if k in auxs})

    def _init_iter(self, X, y, is_train):
        if isinstance(X, (np.ndarray, nd.NDArray)):
            if y is None:
                if is_train:
                    raise ValueError('FeedForward: y must be given when X is an array')
                y = np.zeros(X.shape[0])
            if not isinstance(y, (np.ndarray, nd.NDArray)):
                raise TypeError('FeedForward: y must be an array when X is an array')
            if X.shape[0] != y.shape[0]:
                raise ValueError('FeedForward: %d examples but %d labels'
                                 % (X.shape[0], y.shape[0]))
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.reshape((y.shape[0],))
            if y.ndim != 1:
                raise ValueError('FeedForward: labels must be 1-d (or 2-d with one column)')
            batch = min(X.shape[0], self.numpy_batch_size)
            if is_train:
                return io.NDArrayIter(X, y, batch, shuffle=True, last_batch_handle='roll_over')
            return io.NDArrayIter(X, y, batch, shuffle=False)
        if not isinstance(X, io.DataIter):
            raise TypeError('FeedForward: X must be a DataIter, an NDArray or a numpy array')
        return X

    def _init_eval_iter(self, eval_data):
        if eval_data is None or isinstance(eval_data, io.DataIter):
            return eval_data
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            if eval_data[0] is None:
                raise ValueError('FeedForward: eval_data is None')
            if eval_data[1] is None and isinstance(eval_data[0], io.DataIter):
                return eval_data[0]
            x = np.array(eval_data[0]) if isinstance(eval_data[0], list) else eval_data[0]
            y = np.array(eval_data[1]) if isinstance(eval_data[1], list) else eval_data[1]
            return self._init_iter(x, y, is_train=True)
        raise TypeError('FeedForward: eval_data must be a DataIter or an (X, y) pair')

    def _module(self, data):
        from .module import Module
        data_names = [d[0] for d in data.provide_data]
        label_names = [d[0] for d in data.provide_label]
        return Module(self.symbol, data_names, label_names, context=self.ctx)

    def fit(self, X, y=None, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', logger=None, work_load_list=None,
            monitor=None, eval_end_callback=None, eval_batch_end_callback=None):
        """Trains for ``num_epoch`` epochs (of ``epoch_size`` batches when given)."""
        from .callback import LogValidationMetricsCallback
        if eval_end_callback is None:
            eval_end_callback = LogValidationMetricsCallback()
        data = self._init_iter(X, y, is_train=True)
        eval_data = self._init_eval_iter(eval_data)
        if self.sym_gen is not None:
            self.symbol = self.sym_gen(data.default_bucket_key)
        if self.num_epoch is None:
            raise MXNetError('FeedForward.fit: num_epoch is not set')
        if self.epoch_size is not None:
            data = io.ResizeIter(data, self.epoch_size, reset_internal=False)
        mod = self._module(data)
        if logger is not None:
            mod.logger = logger
        arg_params, aux_params = self._own_params()
        optimizer = self.optimizer
        if isinstance(optimizer, str):
            params = dict(self.kwargs)
            params.setdefault('rescale_grad', 1.0 / data.batch_size)
            optimizer = opt.create(optimizer, sym=self.symbol, **params)
        mod.fit(data, eval_data=eval_data, eval_metric=eval_metric,
                epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                kvstore=kvstore, optimizer=optimizer, eval_end_callback=eval_end_callback,
                eval_batch_end_callback=eval_batch_end_callback, initializer=self.initializer,
                arg_params=arg_params, aux_params=aux_params, allow_missing=True,
                begin_epoch=self.begin_epoch, num_epoch=self.num_epoch, monitor=monitor)
        self.arg_params, self.aux_params = mod.get_params()
        self._pred_mod = None

    def _predictor(self, data):
        shapes = [(d[0], d[1]) for d in data.provide_data]
        mod = self._pred_mod
        if mod is not None and mod.data_shapes == [io.DataDesc(*s) for s in shapes]:
            return mod
        from .module import Module
        data_names = [s[0] for s in shapes]
        labels = [n for n in self.symbol.list_arguments()
                  if n.endswith('label') and n not in data_names]
        mod = Module(self.symbol, data_names, labels, context=self.ctx[:1])
        mod.bind(data.provide_data, for_training=False)
        arg_params, aux_params = self._own_params()
        mod.set_params(arg_params, aux_params, allow_missing=False, allow_extra=True)
        self._pred_mod = mod
        return mod

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """The outputs for ``X`` as NumPy arrays (one array for one output); with
        ``return_data`` also the data and labels read."""
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        mod = self._predictor(X)
        outputs, datas, labels = [], [], []
        for i, batch in enumerate(X):
            if num_batch is not None and i == num_batch:
                break
            mod.forward(batch, is_train=False)
            real = X.batch_size - (batch.pad or 0)
            outputs.append([o[0:real].asnumpy() for o in mod.get_outputs()])
            if return_data:
                datas.append([d[0:real].asnumpy() for d in batch.data])
                labels.append([lb[0:real].asnumpy() for lb in batch.label or []])

        def joined(rows):
            if not rows:
                return []
            cols = [np.concatenate(c) for c in zip(*rows)]
            return cols[0] if len(cols) == 1 else cols
        if return_data:
            return joined(outputs), joined(datas), joined(labels)
        return joined(outputs)

    def score(self, X, eval_metric='acc', num_batch=None, batch_end_callback=None, reset=True):
        """The value of ``eval_metric`` over ``X``."""
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        mod = self._predictor(X)
        for i, batch in enumerate(X):
            if num_batch is not None and i == num_batch:
                break
            mod.forward(batch, is_train=False)
            eval_metric.update(batch.label, mod.get_outputs())
            if batch_end_callback is not None:
                _multiple_callbacks(batch_end_callback,
                                    BatchEndParam(0, i, eval_metric, locals()))
        return eval_metric.get()[1]

    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """``save_checkpoint`` of the model (at ``num_epoch`` unless ``epoch`` is given)."""
        epoch = self.num_epoch if epoch is None else epoch
        if epoch is None:
            raise MXNetError('FeedForward.save: give the epoch (num_epoch is not set)')
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params,
                        remove_amp_cast=remove_amp_cast)

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """A model from a checkpoint, continuing at epoch ``epoch``."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None, optimizer='sgd',
               initializer=Uniform(0.01), eval_data=None, eval_metric='acc',
               epoch_end_callback=None, batch_end_callback=None, kvstore='local', logger=None,
               work_load_list=None, eval_end_callback=None, eval_batch_end_callback=None,
               **kwargs):
        """A model made and trained in one call."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                  kvstore=kvstore, logger=logger, work_load_list=work_load_list,
                  eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model
