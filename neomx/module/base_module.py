"""``BaseModule``: the interface every module implements, and the loops written over it once
(``fit``, ``score``, ``predict``, ``iter_predict``).

A module goes through states: bound (``bind``: inputs' shapes known, executors made),
parameters initialised (``init_params``), optimizer initialised (``init_optimizer``); then
``forward``/``backward``/``update`` run a batch. ``fit`` does all of it.
"""
import logging
import time
import warnings

import numpy as np

from .. import metric
from .. import ndarray
from ..base import MXNetError, _as_list
from ..context import cpu
from ..initializer import Uniform
from ..io import DataBatch, DataDesc, DataIter
from ..model import BatchEndParam

__all__ = ['BaseModule']


def _check_input_names(symbol, names, typename, throw):
    """Warns (or raises ValueError) for names that are not arguments of ``symbol``, listing
    the arguments that could have been meant."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [a for a in args if not a.endswith(('_weight', '_bias', '_gamma', '_beta'))]
        msg = ("You created Module with Module(..., %s_names=%s) but input with name '%s' is "
               "not found in symbol.list_arguments(). Did you mean one of:\n\t%s"
               % (typename, str(names), name, '\n\t'.join(candidates)))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _check_names_match(data_names, data_shapes, name, throw):
    actual = [x[0] for x in data_shapes]
    if sorted(data_names) != sorted(actual):
        msg = ("Data provided by %s_shapes don't match names specified by %s_names (%s vs. %s)"
               % (name, name, str(data_shapes), str(data_names)))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg)


def _as_desc(x, what):
    if isinstance(x, DataDesc):
        return x
    try:
        name, shape = x[0], x[1]
    except (TypeError, IndexError):
        raise TypeError("Module.bind: each of %s must be a DataDesc or a (name, shape) pair, "
                        "got %r" % (what, x)) from None
    if not isinstance(shape, (tuple, list)) or \
            not all(isinstance(d, (int, np.integer)) for d in shape):
        raise TypeError("Module.bind: the shape of %r in %s must be a tuple of ints, got %r"
                        % (name, what, shape))
    return DataDesc(name, tuple(int(d) for d in shape), *x[2:])


def _parse_data_desc(data_names, label_names, data_shapes, label_shapes):
    """``data_shapes`` and ``label_shapes`` as DataDesc lists, checked against the names."""
    data_shapes = [_as_desc(x, 'data_shapes') for x in data_shapes]
    _check_names_match(data_names, data_shapes, 'data', True)
    if label_shapes is not None:
        label_shapes = [_as_desc(x, 'label_shapes') for x in label_shapes]
        _check_names_match(label_names, label_shapes, 'label', False)
    else:
        _check_names_match(label_names, [], 'label', False)
    return data_shapes, label_shapes


class BaseModule:
    """The module interface (see the module docstring). Subclasses implement ``bind``,
    ``init_params``, ``init_optimizer``, ``forward``, ``backward``, ``update``, ``get_outputs``,
    ``update_metric`` and the ``*_names`` / ``*_shapes`` properties."""

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    # -- high-level loops ------------------------------------------------------------------
    def forward_backward(self, data_batch):
        """``forward(is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def _require(self, what, *flags):
        names = {'binded': 'bind()', 'params_initialized': 'init_params()',
                 'optimizer_initialized': 'init_optimizer()'}
        for flag in flags:
            if not getattr(self, flag):
                raise MXNetError('%s: call %s first' % (what, names[flag]))

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Runs ``eval_data`` (the first ``num_batch`` batches) through the module and returns
        the metric's ``(name, value)`` pairs."""
        self._require('score', 'binded', 'params_initialized')
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            if isinstance(eval_batch, list):
                self.update_metric(eval_metric, [eb.label for eb in eval_batch],
                                   pre_sliced=True)
            else:
                self.update_metric(eval_metric, eval_batch.label)
            if batch_end_callback is not None:
                params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                       locals=locals())
                for cb in _as_list(batch_end_callback):
                    cb(params)
            actual_num_batch += 1
        if score_end_callback:
            params = BatchEndParam(epoch=epoch, nbatch=actual_num_batch,
                                   eval_metric=eval_metric, locals=locals())
            for cb in _as_list(score_end_callback):
                cb(params)
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yields ``(outputs, nbatch, batch)`` for each batch, padding removed."""
        self._require('iter_predict', 'binded', 'params_initialized')
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield outputs, nbatch, eval_batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """The outputs for ``eval_data`` (a DataIter, or one NDArray / numpy array batch),
        padding removed and, with ``merge_batches``, joined across batches (a single array
        for a single output unless ``always_output_list``)."""
        self._require('predict', 'binded', 'params_initialized')
        if isinstance(eval_data, (ndarray.NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = ndarray.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError('eval_data must be of type NDArray or DataIter')
        if reset:
            eval_data.reset()
        output_list = []
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            output_list.append([out[0:out.shape[0] - pad].copy() for out in self.get_outputs()])
        if not output_list:
            return output_list
        if not merge_batches:
            return output_list
        num_outputs = len(output_list[0])
        if any(len(out) != num_outputs for out in output_list):
            raise MXNetError('Module.predict: cannot merge batches whose numbers of outputs '
                             'differ (bucketing?); use merge_batches=False')
        merged = [ndarray.concat(*[out[i] for out in output_list], dim=0)
                  for i in range(num_outputs)]
        if num_outputs == 1 and not always_output_list:
            return merged[0]
        return merged

    def fit(self, train_data, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', optimizer='sgd',
            optimizer_params=(('learning_rate', 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=Uniform(0.01), arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None):
        """Trains the module on ``train_data`` for epochs ``begin_epoch`` to ``num_epoch``:
        binds, initialises parameters and optimizer (unless done already), then for each
        batch forward, backward, update and metric; logs the epoch's metric and time, calls
        the epoch-end callbacks with the parameters, and scores ``eval_data`` if given."""
        if num_epoch is None:
            raise MXNetError('Module.fit: please specify number of epochs (num_epoch)')
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)

        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            data_iter = iter(train_data)
            end_of_batch = False
            next_data_batch = next(data_iter)
            eval_name_vals = []
            while not end_of_batch:
                data_batch = next_data_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                if isinstance(data_batch, list):
                    self.update_metric(eval_metric, [db.label for db in data_batch],
                                       pre_sliced=True)
                else:
                    self.update_metric(eval_metric, data_batch.label)
                # only one batch is referenced at a time: an iterator may reuse its buffers
                del data_batch
                try:
                    next_data_batch = next(data_iter)
                    self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if monitor is not None:
                    monitor.toc_print()
                if end_of_batch:
                    eval_name_vals = eval_metric.get_global_name_value()
                if batch_end_callback is not None:
                    params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                           locals=locals())
                    for cb in _as_list(batch_end_callback):
                        cb(params)
                nbatch += 1
            for name, val in eval_name_vals:
                self.logger.info('Epoch[%d] Train-%s=%f', epoch, name, val)
            self.logger.info('Epoch[%d] Time cost=%.3f', epoch, time.time() - tic)

            # the parameters of the module's executors, for the callbacks and for saving
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            if epoch_end_callback is not None:
                for cb in _as_list(epoch_end_callback):
                    cb(epoch, self.symbol, arg_params, aux_params)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info('Epoch[%d] Validation-%s=%f', epoch, name, val)
            train_data.reset()

    # -- the interface --------------------------------------------------------------------
    @property
    def data_names(self):
        raise NotImplementedError()

    @property
    def output_names(self):
        raise NotImplementedError()

    @property
    def data_shapes(self):
        raise NotImplementedError()

    @property
    def label_shapes(self):
        raise NotImplementedError()

    @property
    def output_shapes(self):
        raise NotImplementedError()

    def get_params(self):
        """``(arg_params, aux_params)``: dicts of the parameters by name."""
        raise NotImplementedError()

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        raise NotImplementedError()

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Sets the parameters from the dicts (``init_params`` without an initializer)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def save_params(self, fname):
        """Writes the parameters to ``fname`` (``arg:``/``aux:`` keys, MXNet's format)."""
        arg_params, aux_params = self.get_params()
        arrays = {'arg:%s' % k: v.as_in_context(cpu()) for k, v in arg_params.items()}
        arrays.update({'aux:%s' % k: v.as_in_context(cpu()) for k, v in aux_params.items()})
        ndarray.save(fname, arrays)

    def load_params(self, fname):
        """Sets the parameters from a file written by ``save_params``."""
        from ..model import _split_params
        arg_params, aux_params = _split_params(ndarray.load(fname), fname)
        self.set_params(arg_params, aux_params)

    def get_states(self, merge_multi_context=True):
        self._require('get_states', 'binded', 'params_initialized')
        if merge_multi_context:
            raise MXNetError('get_states: this module has no states to merge')
        return []

    def set_states(self, states=None, value=None):
        self._require('set_states', 'binded', 'params_initialized')
        if states or value:
            raise MXNetError('set_states: this module has no states')

    def install_monitor(self, mon):
        raise NotImplementedError()

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Gets the module ready for ``data_batch`` (a bucketing module switches bucket)."""
        if sparse_row_id_fn is not None:
            warnings.warn(UserWarning('sparse_row_id_fn is not invoked for BaseModule.'))

    def forward(self, data_batch, is_train=None):
        raise NotImplementedError()

    def backward(self, out_grads=None):
        raise NotImplementedError()

    def get_outputs(self, merge_multi_context=True):
        raise NotImplementedError()

    def get_input_grads(self, merge_multi_context=True):
        raise NotImplementedError()

    def update(self):
        raise NotImplementedError()

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        raise NotImplementedError()

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        raise NotImplementedError()

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        raise NotImplementedError()

    @property
    def symbol(self):
        """The symbol the module computes."""
        return self._symbol
