"""The SGD family: plain and momentum SGD, Nesterov momentum (NAG), signSGD/Signum,
delay-compensated SGD (DCASGD), Langevin dynamics (SGLD), and MXNet's Test rule.

>>> import neomx as mx
>>> opt = mx.optimizer.create('nag', learning_rate=0.1, momentum=0.9)
>>> type(opt).__name__
'NAG'
"""
import math

import numpy as np
import torch

from ..ndarray import zeros
from .optimizer import (Optimizer, register, _f32, _mul32, _sub32, _aggregate_size, _lr_grad,
                        _rescaled, _states)

__all__ = ['SGD', 'ccSGD', 'NAG', 'Signum', 'DCASGD', 'SGLD', 'Test']


@register
class SGD(Optimizer):
    """Stochastic gradient descent with momentum and weight decay::

        mom = momentum * mom - lr * wd * weight - lr * clip(rescale_grad * grad)
        weight = weight + mom

    (with ``momentum=0`` there is no state and ``weight -= lr * (wd * weight + grad)``).
    With ``lazy_update``, a row_sparse gradient updates only its stored rows (and their
    momentum).

    >>> import neomx as mx
    >>> opt = mx.optimizer.SGD(learning_rate=0.5)
    >>> w = mx.nd.ones((2,))
    >>> opt.update(0, w, mx.nd.ones((2,)), None)
    >>> w.asnumpy().tolist()
    [0.5, 0.5]
    """

    _master_first = False
    _fp16_warning = ("Accumulating with float16 in optimizer can lead to poor accuracy or slow "
                     "convergence. Consider using multi_precision=True option of the SGD "
                     "optimizer")

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = _aggregate_size(4)

    def _lazy_rows(self):
        return self.lazy_update

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return zeros(weight.shape, weight.context, dtype=weight.dtype)
        return None

    def _passes(self, hyper, wds):
        # without momentum, weight decay or clipping, one pass (when the rates agree as well)
        return 1 if not hyper['momentum'] > 0 and hyper['clip'] is None and not any(wds) else 2

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        # MXNet's multi_sgd(_mom)_update, which its SGD uses for every dense update.
        lrwds = [_mul32(lr, wd) for lr, wd in zip(lrs, wds)]
        if not h['momentum'] > 0 and not any(lrwds) and _one_pass_(ws, gs, lrs, h):
            return
        step = _lr_grad(gs, lrs, h)
        if h['momentum'] > 0:
            moms = _states(ss, 0)
            torch._foreach_mul_(moms, h['momentum'])
            if any(lrwds):
                torch._foreach_sub_(moms, torch._foreach_mul(ws, lrwds))
            torch._foreach_sub_(moms, step)
            torch._foreach_add_(ws, moms)
        else:
            if any(lrwds):
                torch._foreach_add_(step, torch._foreach_mul(ws, lrwds))
            torch._foreach_sub_(ws, step)


def _one_pass_(ws, gs, lrs, h):
    """``weight -= (lr * rescale_grad) * grad`` in one pass over each weight (no step tensor):
    the common plain-SGD update, taken when nothing clips and every weight has the same rate.
    False (nothing done) otherwise."""
    if h['clip'] is not None or any(lr != lrs[0] for lr in lrs):
        return False
    torch._foreach_add_(ws, gs, alpha=-_mul32(lrs[0], h['rescale_grad']))
    return True


@register
class ccSGD(SGD):  # noqa: N801  (MXNet's name)
    """[DEPRECATED] The same as :class:`SGD`."""


def _sgd_plain(ws, gs, lrs, wds, h):
    """MXNet's sgd_update: ``(1 - lr * wd) * weight - lr * clip(rescale_grad * grad)``."""
    step = _lr_grad(gs, lrs, h)
    decay = [_sub32(1.0, _mul32(lr, wd)) for lr, wd in zip(lrs, wds)]
    if any(d != 1.0 for d in decay):
        torch._foreach_mul_(ws, decay)
    torch._foreach_sub_(ws, step)


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient::

        mom = momentum * mom
        weight = weight - mom + (momentum + 1) * (mom - lr * (g + wd * weight))
        mom = mom - lr * (g + wd * weight)

    with ``g = clip(rescale_grad * grad)``. As in MXNet, the last line sees the updated
    weight (MXNet's kernel writes the weight in place before reading it again).
    """

    _master_first = False     # (momentum, float32 master), as SGD and MXNet's NAG keep it
    _fp16_warning = SGD._fp16_warning.replace('SGD', 'NAG')

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    create_state = SGD.create_state

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        m = h['momentum']
        if not m > 0:
            return _sgd_plain(ws, gs, lrs, wds, h)
        g = _rescaled(gs, h)
        moms = _states(ss, 0)
        torch._foreach_mul_(moms, m)

        def lr_term():   # lr * (g + wd * weight)
            t = torch._foreach_add(g, torch._foreach_mul(ws, wds)) if any(wds) else \
                torch._foreach_add(g, 0.0)
            torch._foreach_mul_(t, lrs)
            return t
        inner = torch._foreach_sub(moms, lr_term())
        torch._foreach_mul_(inner, _f32(np.float32(m) + np.float32(1)))
        torch._foreach_sub_(ws, moms)
        torch._foreach_add_(ws, inner)
        torch._foreach_sub_(moms, lr_term())


@register
class Signum(Optimizer):
    """signSGD and Signum: steps of fixed size in the sign of the gradient (``momentum=0``)
    or of its moving average::

        mom = momentum * mom - (1 - momentum) * (wd * weight + clip(rescale_grad * grad))
        weight = (1 - lr * wd_lh) * weight + lr * sign(mom)
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return zeros(weight.shape, weight.context, dtype=weight.dtype)
        return None

    def _hyper(self):
        h = super()._hyper()
        h['wd_lh'] = _f32(self.wd_lh) if self.wd_lh else 0.0
        return h

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        m = h['momentum']
        if not m > 0:
            # signsgd_update ignores rescale_grad and clip_gradient.
            decay = [_sub32(1.0, _mul32(lr, wd)) for lr, wd in zip(lrs, wds)]
            sign = torch._foreach_sign(gs)
            torch._foreach_mul_(sign, lrs)
            torch._foreach_mul_(ws, decay)
            torch._foreach_sub_(ws, sign)
            return
        one_m = _sub32(1.0, m)
        moms = _states(ss, 0)
        torch._foreach_mul_(moms, m)
        coef = [_mul32(one_m, wd) for wd in wds]
        if any(coef):
            torch._foreach_sub_(moms, torch._foreach_mul(ws, coef))
        if h['clip'] is None:
            g = torch._foreach_mul(gs, _mul32(one_m, h['rescale_grad']))
        else:
            g = torch._foreach_mul(_rescaled(gs, h), one_m)
        torch._foreach_sub_(moms, g)
        if h['wd_lh']:
            torch._foreach_mul_(ws, [_sub32(1.0, _mul32(lr, h['wd_lh'])) for lr in lrs])
        sign = torch._foreach_sign(moms)
        torch._foreach_mul_(sign, lrs)
        torch._foreach_add_(ws, sign)



@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al.)::

        g = clip(rescale_grad * grad)
        mom = momentum * mom - lr * (g + wd * weight + lamda * g * g * (weight - previous))
        previous = weight
        weight += mom
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        mom = None if self.momentum == 0.0 else zeros(weight.shape, weight.context,
                                                       dtype=weight.dtype)
        return (mom, weight.copy())

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = grad.clip(-self.clip_gradient, self.clip_gradient)
        mom, previous = state
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous))
        if mom is not None:
            mom[:] *= self.momentum
            mom[:] += step
        else:
            mom = step
        previous[:] = weight
        weight[:] += mom


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics: an SGD step of half the learning rate plus
    Gaussian noise of variance ``lr`` (drawn from the device's generator)."""

    def update(self, index, weight, grad, state):
        from ..ndarray import random as _random
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = grad.clip(-self.clip_gradient, self.clip_gradient)
        weight[:] += -lr / 2 * (grad + wd * weight)
        weight[:] += _random.normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                                    ctx=weight.context)


@register
class Test(Optimizer):
    """The test optimizer of MXNet: ``weight += rescale_grad * grad`` and the state copies the
    weight."""

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context)

    def _update_count(self, index):
        """MXNet's Test optimizer does not count its updates."""

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        torch._foreach_add_(ws, torch._foreach_mul(gs, h['rescale_grad']))
        torch._foreach_copy_(_states(ss, 0), ws)
