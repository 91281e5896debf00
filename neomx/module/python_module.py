"""Modules written in Python: ``PythonModule`` (no parameters; subclasses compute) and
``PythonLossModule`` (a loss whose gradient ``grad_func(scores, labels)`` gives), for use at
the end of a SequentialModule.

>>> import neomx as mx
>>> loss = mx.mod.PythonLossModule(grad_func=lambda scores, labels: scores - labels)
>>> loss.bind([('data', (2,))], [('softmax_label', (2,))])
>>> loss.forward(mx.io.DataBatch([mx.nd.array([1, 2])], [mx.nd.array([1, 0])]), is_train=True)
>>> loss.backward()
>>> loss.get_input_grads()[0].asnumpy().tolist()
[0.0, 2.0]
"""
import logging

from .. import ndarray as nd
from ..base import MXNetError
from ..initializer import Uniform
from .base_module import BaseModule

__all__ = ['PythonModule', 'PythonLossModule']


class PythonModule(BaseModule):
    """A module without parameters (``init_params``, ``init_optimizer`` and ``update`` do
    nothing). Subclasses give ``_compute_output_shapes``, ``forward``, ``backward``,
    ``get_outputs`` and ``get_input_grads``."""

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super().__init__(logger=logger)
        self._data_names = list(data_names) if isinstance(data_names, tuple) else data_names
        self._label_names = list(label_names) if isinstance(label_names, tuple) \
            else label_names
        self._output_names = output_names
        self._data_shapes = self._label_shapes = self._output_shapes = None

    @property
    def data_names(self):
        return self._data_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        return self._data_shapes

    @property
    def label_shapes(self):
        return self._label_shapes

    @property
    def output_shapes(self):
        return self._output_shapes

    def get_params(self):
        return {}, {}

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        self.params_initialized = True

    def update(self):
        pass

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise RuntimeError('PythonModule does not support presliced labels')
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if grad_req != 'write':
            raise MXNetError("PythonModule: only grad_req='write' is supported, got %r"
                             % (grad_req,))
        names = [x[0] for x in data_shapes]
        if names != list(self._data_names):
            raise MXNetError('PythonModule.bind: data %s, expected %s' % (names,
                                                                         self._data_names))
        if label_shapes is not None:
            labels = [x[0] for x in label_shapes]
            if self._label_names is None or labels != list(self._label_names):
                raise MXNetError('PythonModule.bind: labels %s, expected %s'
                                 % (labels, self._label_names))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = data_shapes
        self._label_shapes = label_shapes
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        raise NotImplementedError()

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        self.optimizer_initialized = True


class PythonLossModule(PythonModule):
    """A loss: its output is its input (the scores); its input gradient is
    ``grad_func(scores, labels)``."""

    def __init__(self, name='pyloss', data_names=('data',), label_names=('softmax_label',),
                 logger=logging, grad_func=None):
        super().__init__(data_names, label_names, [name + '_output'], logger=logger)
        if len(data_names) != 1 or len(label_names) != 1:
            raise MXNetError('PythonLossModule takes one data and one label input')
        if grad_func is not None and not callable(grad_func):
            raise MXNetError('PythonLossModule: grad_func must be callable')
        self._name = name
        self._scores = self._labels = self._scores_grad = None
        self._grad_func = grad_func

    def _compute_output_shapes(self):
        return [(self._name + '_output', self._data_shapes[0][1])]

    def forward(self, data_batch, is_train=None):
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        return [self._scores]

    def backward(self, out_grads=None):
        if out_grads is not None:
            raise MXNetError('PythonLossModule.backward: a loss takes no out_grads')
        if not self.for_training:
            raise MXNetError('PythonLossModule.backward: bind with for_training=True')
        self._backward_impl()

    def _backward_impl(self):
        if self._grad_func is None:
            raise NotImplementedError('PythonLossModule: give grad_func or override '
                                      '_backward_impl')
        grad = self._grad_func(self._scores, self._labels)
        self._scores_grad = grad if isinstance(grad, nd.NDArray) else nd.array(grad)

    def get_input_grads(self, merge_multi_context=True):
        return [self._scores_grad]

    def install_monitor(self, mon):
        raise NotImplementedError('PythonLossModule has no executors to monitor')
