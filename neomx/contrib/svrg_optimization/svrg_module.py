"""``SVRGModule``: a Module trained with stochastic variance reduced gradients (Johnson &
Zhang, 2013). Every ``update_freq`` epochs it takes the full gradient ``mu`` of the loss over
the whole data at a snapshot ``w~`` of the weights (an auxiliary Module holds the snapshot);
each batch's step then uses ``g(w) - g(w~) + mu``, the batch's gradient at the current weights
corrected by its gradient at the snapshot.

>>> import numpy as np, neomx as mx
>>> x = np.random.RandomState(0).rand(64, 2).astype('float32')
>>> it = mx.io.NDArrayIter(x, x @ np.array([1.0, 2.0], dtype='float32'), batch_size=16,
...                        label_name='lin_reg_label')
>>> net = mx.sym.LinearRegressionOutput(mx.sym.FullyConnected(mx.sym.var('data'),
...     num_hidden=1, name='fc1'), mx.sym.var('lin_reg_label'))
>>> mod = SVRGModule(net, label_names=['lin_reg_label'], update_freq=2)
>>> mod.fit(it, num_epoch=30, optimizer_params=(('learning_rate', 0.5),), eval_metric='mse')
>>> np.round(mod.get_params()[0]['fc1_weight'].asnumpy(), 1).tolist()
[[1.0, 2.0]]
"""
import logging
import time

from ... import metric as _metric
from ... import model as _model
from ... import ndarray as nd
from ...base import _as_list
from ...context import cpu
from ...initializer import Uniform
from ...module import Module
from .svrg_optimizer import _SVRGOptimizer

__all__ = ['SVRGModule']


class SVRGModule(Module):
    """A Module whose updates are SVRG's; ``update_freq`` (a positive int) is the number of
    epochs between full gradients. Other arguments are Module's."""

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=cpu(), work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None, update_freq=None):
        super().__init__(symbol, data_names=data_names, label_names=label_names, logger=logger,
                         context=context, work_load_list=work_load_list,
                         fixed_param_names=fixed_param_names, state_names=state_names,
                         group2ctxs=group2ctxs, compression_params=compression_params)
        if not isinstance(update_freq, int) or isinstance(update_freq, bool):
            raise TypeError("update_freq in SVRGModule must be an integer to represent the "
                            "frequency for calculating full gradients, got %r" % (update_freq,))
        if update_freq <= 0:
            raise ValueError("update_freq in SVRGModule must be a positive integer to represent "
                             "the frequency for calculating full gradients, got %d" % update_freq)
        self.update_freq = update_freq
        # the snapshot's module: its gradients are the batches' gradients at the snapshot
        self._mod_aux = Module(symbol, data_names, label_names, logger, context, work_load_list,
                               fixed_param_names, state_names, group2ctxs, compression_params)
        self._param_dict = None         # per context: {name: full gradient}
        self._ctx_len = len(self._context)

    def _reset_bind(self):
        super()._reset_bind()
        self._mod_aux._reset_bind()

    def reshape(self, data_shapes, label_shapes=None):
        super().reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        super().bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
                     shared_module, grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                               force_rebind, shared_module, grad_req)

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Installs ``optimizer`` wrapped in ``_SVRGOptimizer``; the KVStore also gets a
        ``<name>_full`` slot per parameter for the full gradients."""
        arg_params = self.get_params()[0]
        self._param_dict = [{k: nd.zeros(v.shape, ctx=c) for k, v in arg_params.items()}
                            for c in self._context]
        opt = self._svrg_optimizer(optimizer, kvstore, optimizer_params)
        super().init_optimizer(kvstore=kvstore, optimizer=opt,
                               optimizer_params=optimizer_params, force_init=force_init)
        if self._kvstore:
            for idx, arrays in enumerate(self._exec_group.param_arrays):
                name = self._exec_group.param_names[idx]
                self._kvstore.init(name + '_full', nd.zeros(self._arg_params[name].shape))
                if self._update_on_kvstore:
                    self._kvstore.pull(name + '_full', arrays, priority=-idx)

    def _svrg_optimizer(self, default_opt, kvstore, optimizer_params):
        batch_size = self._exec_group.batch_size
        kv, update_on_kvstore = _model._create_kvstore(kvstore, self._ctx_len, self._arg_params)
        if kv and 'dist' in kv.type and '_sync' in kv.type:
            batch_size *= kv.num_workers
        names = self._exec_group.param_names
        if update_on_kvstore:
            idx2name = dict(enumerate(names))
        else:
            idx2name = {i * self._ctx_len + k: n for k in range(self._ctx_len)
                        for i, n in enumerate(names)}
        for key in self._param_dict[0]:
            idx2name[max(idx2name) + 1 if idx2name else 0] = key + '_full'
        params = dict(optimizer_params)
        params.setdefault('rescale_grad', 1.0 / batch_size)
        params['param_idx2name'] = idx2name
        return _SVRGOptimizer(default_opt, **params)

    def forward(self, data_batch, is_train=None):
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def update(self):
        """A step with the variance-reduced gradients g(w) - g(w~) + mu."""
        self._update_svrg_gradients()
        super().update()

    def update_full_grads(self, train_data):
        """Takes the snapshot (the current weights) and the full gradient there: the mean of
        the batches' gradients over ``train_data`` (summed across workers in a KVStore)."""
        names = self._exec_group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        for c in range(self._ctx_len):
            for name in names:
                self._param_dict[c][name][:] = 0
        train_data.reset()
        nbatch, padding = 0, 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for c in range(self._ctx_len):
                for index, name in enumerate(names):
                    grad = self._mod_aux._exec_group.grad_arrays[index][c]
                    self._param_dict[c][name] += grad
            padding = batch.pad
        batches = nbatch - padding / train_data.batch_size
        for name in names:
            grads = []
            for c in range(self._ctx_len):
                self._param_dict[c][name] /= batches
                grads.append(self._param_dict[c][name])
            if self._kvstore:
                self._accumulate_kvstore(name, grads)

    def _accumulate_kvstore(self, key, value):
        self._kvstore.push(key + '_full', value)
        self._kvstore._barrier()
        self._kvstore.pull(key + '_full', value)
        for c in range(self._ctx_len):
            self._param_dict[c][key] = value[c] / self._ctx_len

    def _update_svrg_gradients(self):
        for c in range(self._ctx_len):
            for index, name in enumerate(self._exec_group.param_names):
                grad = self._exec_group.grad_arrays[index][c]
                grad -= self._mod_aux._exec_group.grad_arrays[index][c]
                grad += self._param_dict[c][name]

    def prepare(self, data_batch, sparse_row_id_fn=None):
        super().prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)

    def fit(self, train_data, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', optimizer='sgd',
            optimizer_params=(('learning_rate', 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=Uniform(0.01), arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None):
        """Module.fit with SVRG's steps: the full gradient is taken at the start of every
        ``update_freq``-th epoch."""
        if num_epoch is None:
            raise ValueError('please specify number of epochs')
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        validation_metric = validation_metric or eval_metric
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            eval_metric.reset()
            tic = time.time()
            if epoch % self.update_freq == 0:
                self.update_full_grads(train_data)
            train_data.reset()
            for nbatch, batch in enumerate(train_data):
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(batch)
                self.update()
                self.update_metric(eval_metric, batch.label)
                if monitor is not None:
                    monitor.toc_print()
                if batch_end_callback is not None:
                    params = _model.BatchEndParam(epoch=epoch, nbatch=nbatch,
                                                  eval_metric=eval_metric, locals=locals())
                    for cb in _as_list(batch_end_callback):
                        cb(params)
            for name, val in eval_metric.get_name_value():
                self.logger.info('Epoch[%d] Train-%s=%f', epoch, name, val)
            self.logger.info('Epoch[%d] Time cost=%.3f', epoch, time.time() - tic)
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            for cb in _as_list(epoch_end_callback or []):
                cb(epoch, self.symbol, arg_params, aux_params)
            if eval_data:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info('Epoch[%d] Validation-%s=%f', epoch, name, val)

import neomx as mx  # noqa: E402,F401  (MXNet's module holds ``mx``)
