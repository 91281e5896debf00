"""``mx.optimizer.contrib``: GroupAdaGrad.

>>> import neomx as mx
>>> opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=1.0)
>>> w = mx.nd.ones((2, 2))
>>> h = opt.create_state(0, w)
>>> opt.update(0, w, mx.nd.array([[3.0, 4.0], [0.0, 0.0]]), h)
>>> h.asnumpy().ravel().tolist(), w.asnumpy()[1].tolist()
([12.5, 0.0], [1.0, 1.0])
"""
from ..base import MXNetError
from ..ndarray import NDArray, zeros
from ..ndarray import contrib as _contrib
from .optimizer import Optimizer, register

__all__ = ['GroupAdaGrad']


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one learning rate per row of a 2-d weight::

        g = clip(rescale_grad * grad, clip_gradient)
        history += mean(g * g, axis=1, keepdims=True)
        weight -= lr * g / sqrt(history + eps)

    A row_sparse gradient updates its stored rows only (the others' steps are 0 anyway).
    Weight decay is not supported (``wd`` must be 0), as in MXNet.
    """

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        if weight.ndim != 2:
            raise MXNetError("GroupAdaGrad: weights must be 2-d (one rate per row), got shape %s"
                             % (weight.shape,))
        return zeros((weight.shape[0], 1), weight.context, stype=weight.stype)

    def update(self, index, weight, grad, state):
        if not isinstance(weight, NDArray) or not isinstance(grad, NDArray):
            raise MXNetError("GroupAdaGrad.update: weight and grad must be NDArrays")
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if wd != 0:
            raise MXNetError("GroupAdaGrad: weight decay is not supported (wd=%s)" % wd)
        clip = -1.0 if self.clip_gradient is None else self.clip_gradient
        _contrib.group_adagrad_update(weight, grad, state, out=weight, lr=lr,
                                      rescale_grad=self.rescale_grad, clip_gradient=clip,
                                      epsilon=self.float_stable_eps)
