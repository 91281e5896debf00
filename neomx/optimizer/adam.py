"""The Adam family: Adam, AdamW, Adamax, Nadam and LAMB. Their moment updates are
``_moving_average_`` and ``_moving_square_`` (optimizer.py); each rule gives the ``1 - beta``
coefficients as its MXNet kernel rounds them.

>>> import neomx as mx
>>> opt = mx.optimizer.create('lamb', learning_rate=0.01)
>>> type(opt).__name__
'LAMB'
"""
import math

import numpy as np
import torch

from ..ndarray import zeros
from .optimizer import (Optimizer, register, _f32, _sub32, _aggregate_size, _rescaled,
                        _rescaled_wd, _states, _python_clip, _moving_average_,
                        _moving_square_)

__all__ = ['Adam', 'AdamW', 'Adamax', 'Nadam', 'LAMB']


@register
class Adam(Optimizer):
    """Adam, with MXNet's bias correction folded into the learning rate::

        g = clip(rescale_grad * grad + wd * weight)
        mean = beta1 * mean + (1 - beta1) * g
        var = beta2 * var + (1 - beta2) * g * g
        weight -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * mean / (sqrt(var) + epsilon)

    >>> import neomx as mx
    >>> opt = mx.optimizer.Adam(learning_rate=0.1)
    >>> w = mx.nd.zeros((1,))
    >>> opt.update(0, w, mx.nd.ones((1,)), opt.create_state(0, w))
    >>> round(float(w.asscalar()), 4)
    -0.1
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def _lazy_rows(self):
        return self.lazy_update

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype),   # mean
                zeros(weight.shape, weight.context, dtype=weight.dtype))   # variance

    def _hyper(self):
        h = super()._hyper()
        h.update(beta1=_f32(self.beta1), beta2=_f32(self.beta2), epsilon=_f32(self.epsilon))
        return h

    def _step_values(self, indices, lrs, wds):
        counts = self._index_update_count
        out = []
        for idx, lr in zip(indices, lrs):
            t = counts[idx]
            out.append(lr * math.sqrt(1. - self.beta2 ** t) / (1. - self.beta1 ** t))
        return out, wds, [None] * len(indices)

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _rescaled_wd(gs, ws, wds, h)
        _adam_step(ws, g, ss, lrs, h)


def _adam_step(ws, g, ss, lrs, h):
    """The moment updates and the step of Adam, for a prepared gradient ``g``."""
    means, variances = _states(ss, 0), _states(ss, 1)
    _moving_average_(means, g, h['beta1'], _sub32(1.0, h['beta1']))
    _moving_square_(variances, g, h['beta2'], _sub32(1.0, h['beta2']))
    denom = torch._foreach_sqrt(variances)
    torch._foreach_add_(denom, h['epsilon'])
    # w + (-1) * (step / denom): the same rounding as w - step / denom, one pass fewer.
    torch._foreach_addcdiv_(ws, torch._foreach_mul(means, [_f32(lr) for lr in lrs]), denom,
                            value=-1.0)


@register
class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): the weight shrinks by
    ``lr * wd * weight`` before the Adam step, and ``wd`` stays out of the moments. Not in
    MXNet 1.9's registry (which has the ``adamw_update`` operator only); here for convenience.

    >>> import neomx as mx
    >>> opt = mx.optimizer.create('adamw', learning_rate=0.1, wd=0.5)
    >>> w = mx.nd.ones((1,))
    >>> opt.update(0, w, mx.nd.zeros((1,)), opt.create_state(0, w))
    >>> round(float(w.asscalar()), 4)
    0.95
    """

    def _step_values(self, indices, lrs, wds):
        decays = [lr * wd for lr, wd in zip(lrs, wds)]
        lrs, wds, _ = super()._step_values(indices, lrs, wds)
        return lrs, wds, decays

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _rescaled(gs, h)
        if any(extras):
            torch._foreach_mul_(ws, [_sub32(1.0, d) for d in extras])
        _adam_step(ws, g, ss, lrs, h)


@register
class Adamax(Optimizer):
    """AdaMax, Adam with the infinity norm::

        g = clip(rescale_grad * grad + wd * weight)
        m = beta1 * m + (1 - beta1) * g
        u = maximum(beta2 * u, abs(g))
        weight -= lr / (1 - beta1**t) * m / u
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    create_state = Adam.create_state

    def _hyper(self):
        h = super()._hyper()
        h.update(beta1=_f32(self.beta1), one_b1=_f32(1. - self.beta1), beta2=_f32(self.beta2),
                 clip_py=self.clip_gradient)
        return h

    def _step_values(self, indices, lrs, wds):
        counts = self._index_update_count
        return ([lr / (1. - self.beta1 ** counts[idx]) for idx, lr in zip(indices, lrs)], wds,
                [None] * len(indices))

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _python_clip(_rescaled_wd(gs, ws, wds, h, clip=False), h['clip_py'])
        m, u = _states(ss, 0), _states(ss, 1)
        _moving_average_(m, g, h['beta1'], h['one_b1'])
        torch._foreach_mul_(u, h['beta2'])
        torch._foreach_maximum_(u, torch._foreach_abs(g))
        torch._foreach_addcdiv_(ws, torch._foreach_mul(m, [_f32(lr) for lr in lrs]), u,
                                value=-1.0)


@register
class Nadam(Optimizer):
    """Adam with Nesterov momentum (Dozat), with MXNet's momentum schedule (``m_schedule`` is
    kept by the optimizer and advances at every update of any weight, as in MXNet)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    create_state = Adam.create_state

    def _hyper(self):
        h = super()._hyper()
        h.update(beta1=_f32(self.beta1), one_b1=_f32(1. - self.beta1), beta2=_f32(self.beta2),
                 one_b2=_f32(1. - self.beta2), epsilon=_f32(self.epsilon),
                 clip_py=self.clip_gradient)
        return h

    def _step_values(self, indices, lrs, wds):
        counts = self._index_update_count
        extras = []
        for idx in indices:
            t = counts[idx]
            mom_t = self.beta1 * (1. - 0.5 * pow(0.96, t * self.schedule_decay))
            mom_t1 = self.beta1 * (1. - 0.5 * pow(0.96, (t + 1) * self.schedule_decay))
            self.m_schedule = self.m_schedule * mom_t
            m_schedule_next = self.m_schedule * mom_t1
            extras.append((mom_t, mom_t1, self.m_schedule, m_schedule_next,
                           pow(self.beta2, t)))
        return lrs, wds, extras

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _python_clip(_rescaled_wd(gs, ws, wds, h, clip=False), h['clip_py'])
        m, v = _states(ss, 0), _states(ss, 1)
        _moving_average_(m, g, h['beta1'], h['one_b1'])
        _moving_square_(v, g, h['beta2'], h['one_b2'])
        e = list(zip(*extras))
        mom_t, mom_t1, sched, sched_next, beta2_t = e
        g_prime = torch._foreach_div(g, [_f32(1. - s) for s in sched])
        m_prime = torch._foreach_div(m, [_f32(1. - s) for s in sched_next])
        v_prime = torch._foreach_div(v, [_f32(1. - b) for b in beta2_t])
        m_bar = torch._foreach_mul(g_prime, [_f32(1. - x) for x in mom_t])
        torch._foreach_add_(m_bar, torch._foreach_mul(m_prime, [_f32(x) for x in mom_t1]))
        denom = torch._foreach_sqrt(v_prime)
        torch._foreach_add_(denom, h['epsilon'])
        torch._foreach_addcdiv_(ws, torch._foreach_mul(m_bar, [_f32(lr) for lr in lrs]), denom,
                                value=-1.0)


@register
class LAMB(Optimizer):
    """LAMB (You et al.): Adam's step scaled per tensor by the trust ratio
    ``||weight|| / ||step||``, as MXNet's multi-tensor ``multi_lamb_update``::

        g = clip(rescale_grad * grad)
        mean = beta1 * mean + (1 - beta1) * g
        var = beta2 * var + (1 - beta2) * g * g
        step = mean_hat / (sqrt(var_hat) + epsilon) + wd * weight   (bias-corrected hats)
        r1 = ||weight|| clipped to [lower_bound, upper_bound]; r2 = ||step||
        weight -= lr * (r1 / r2 if r1 and r2 else 1) * step
    """
    _elementwise = False     # the norms need whole tensors

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, _aggregate_size(45)))

    create_state = Adam.create_state

    def _hyper(self):
        h = super()._hyper()
        h.update(beta1=_f32(self.beta1), beta2=_f32(self.beta2),
                 one_b1=_sub32(1.0, self.beta1), one_b2=_sub32(1.0, self.beta2),
                 epsilon=_f32(self.epsilon), bias_correction=self.bias_correction,
                 lower=_f32(self.lower_bound) if self.lower_bound else None,
                 upper=_f32(self.upper_bound) if self.upper_bound else None)
        return h

    def _step_values(self, indices, lrs, wds):
        counts = self._index_update_count
        return lrs, wds, [counts[idx] for idx in indices]

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _rescaled(gs, h)
        means, variances = _states(ss, 0), _states(ss, 1)
        _moving_average_(means, g, h['beta1'], h['one_b1'])
        _moving_square_(variances, g, h['beta2'], h['one_b2'])
        if h['bias_correction']:
            one = np.float32(1)
            b1, b2 = np.float32(h['beta1']), np.float32(h['beta2'])
            mean_hat = torch._foreach_div(means, [float(one - b1 ** np.float32(t))
                                                  for t in extras])
            denom = torch._foreach_div(variances, [float(one - b2 ** np.float32(t))
                                                   for t in extras])
        else:
            mean_hat, denom = means, torch._foreach_mul(variances, 1.0)
        torch._foreach_sqrt_(denom)
        torch._foreach_add_(denom, h['epsilon'])
        step = torch._foreach_div(mean_hat, denom)
        if any(wds):
            torch._foreach_add_(step, torch._foreach_mul(ws, [_f32(wd) for wd in wds]))
        for w, st, lr in zip(ws, step, lrs):
            r1 = w.float().square().sum().sqrt()
            r2 = st.float().square().sum().sqrt()
            if h['lower'] is not None:
                r1 = torch.clamp(r1, min=h['lower'])
            if h['upper'] is not None:
                r1 = torch.clamp(r1, max=h['upper'])
            ratio = torch.where((r1 == 0) | (r2 == 0), torch.ones_like(r1), r1 / r2)
            w.sub_(st * (ratio * _f32(lr)).to(w.dtype))
