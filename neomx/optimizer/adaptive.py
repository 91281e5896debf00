"""Rules with per-coordinate step sizes outside the Adam family: RMSProp, AdaGrad,
AdaDelta, FTRL and FTML.

>>> import neomx as mx
>>> opt = mx.optimizer.create('rmsprop', learning_rate=0.01, centered=True)
>>> len(opt.create_state(0, mx.nd.zeros((2,))))
3
"""
import numpy as np
import torch

from ..ndarray import zeros
from .optimizer import (Optimizer, register, _f32, _sub32, _clip_, _rescaled, _rescaled_wd,
                        _states, _python_clip, _moving_average_, _moving_square_)

__all__ = ['RMSProp', 'AdaGrad', 'AdaDelta', 'Ftrl', 'FTML']


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton's (``centered=False``)::

        g = clip(rescale_grad * grad + wd * weight)
        n = (1 - gamma1) * g * g + gamma1 * n
        weight -= lr * g / sqrt(n + epsilon)

    or Graves's (``centered=True``)::

        n = (1 - gamma1) * g * g + gamma1 * n
        gm = (1 - gamma1) * g + gamma1 * gm
        delta = gamma2 * delta - lr * g / sqrt(n - gm * gm + epsilon)
        weight += delta

    with the weight clipped to ``[-clip_weights, clip_weights]`` when ``clip_weights`` is set.
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        n = 3 if self.centered else 1
        return tuple(zeros(weight.shape, weight.context) for _ in range(n))

    def _hyper(self):
        h = super()._hyper()
        cw = self.clip_weights
        h.update(gamma1=_f32(self.gamma1), gamma2=_f32(self.gamma2), epsilon=_f32(self.epsilon),
                 centered=self.centered, clip_weights=_f32(cw) if cw and cw >= 0 else None)
        return h

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _rescaled_wd(gs, ws, wds, h)
        one_g1 = _sub32(1.0, h['gamma1'])
        n = _states(ss, 0)
        _moving_square_(n, g, h['gamma1'], one_g1)
        if h['centered']:
            gm, delta = _states(ss, 1), _states(ss, 2)
            _moving_average_(gm, g, h['gamma1'], one_g1)
            denom = torch._foreach_mul(gm, gm)
            torch._foreach_sub_(denom, n)
            torch._foreach_neg_(denom)
            torch._foreach_add_(denom, h['epsilon'])
            torch._foreach_sqrt_(denom)
            torch._foreach_mul_(delta, h['gamma2'])
            torch._foreach_addcdiv_(delta, torch._foreach_mul(g, [_f32(lr) for lr in lrs]),
                                    denom, value=-1.0)
            torch._foreach_add_(ws, delta)
        else:
            denom = torch._foreach_add(n, h['epsilon'])
            torch._foreach_sqrt_(denom)
            step = torch._foreach_div(g, denom)
            torch._foreach_mul_(step, [_f32(lr) for lr in lrs])
            torch._foreach_sub_(ws, step)
        if h['clip_weights'] is not None:
            _clip_(ws, h['clip_weights'])


@register
class AdaGrad(Optimizer):
    """AdaGrad::

        g = clip(rescale_grad * grad)
        history += g * g
        weight += (g / sqrt(history + eps) + wd * weight) * -lr
    """

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context)   # history (float32, as in MXNet)

    def _lazy_rows(self):
        return True     # MXNet's sparse adagrad_update: the gradient's rows only

    def _hyper(self):
        h = super()._hyper()
        h.update(clip_py=self.clip_gradient, eps=_f32(self.float_stable_eps))
        return h

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _python_clip(torch._foreach_mul(gs, h['rescale_grad']), h['clip_py'])
        history = _states(ss, 0)
        torch._foreach_add_(history, torch._foreach_mul(g, g))
        denom = torch._foreach_add(history, h['eps'])
        torch._foreach_sqrt_(denom)
        step = torch._foreach_div(g, denom)
        if any(wds):
            torch._foreach_add_(step, torch._foreach_mul(ws, [_f32(wd) for wd in wds]))
        torch._foreach_mul_(step, [_f32(-lr) for lr in lrs])
        torch._foreach_add_(ws, step)


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler); uses no learning rate::

        g = clip(rescale_grad * grad)
        acc_g = rho * acc_g + (1 - rho) * g * g
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta * delta
        weight -= delta + wd * weight

    Unlike MXNet, the gradient array itself is left unscaled.
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context),    # accumulated g
                zeros(weight.shape, weight.context))    # accumulated delta

    def _hyper(self):
        h = super()._hyper()
        h.update(clip_py=self.clip_gradient, rho=_f32(self.rho),
                 one_rho=_f32(1. - self.rho), epsilon=_f32(self.epsilon))
        return h

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _python_clip(torch._foreach_mul(gs, h['rescale_grad']), h['clip_py'])
        acc_g, acc_delta = _states(ss, 0), _states(ss, 1)
        _moving_square_(acc_g, g, h['rho'], h['one_rho'])
        delta = torch._foreach_add(acc_delta, h['epsilon'])
        torch._foreach_sqrt_(delta)
        denom = torch._foreach_add(acc_g, h['epsilon'])
        torch._foreach_sqrt_(denom)
        torch._foreach_div_(delta, denom)
        torch._foreach_mul_(delta, g)
        _moving_square_(acc_delta, delta, h['rho'], h['one_rho'])
        if any(wds):
            torch._foreach_add_(delta, torch._foreach_mul(ws, [_f32(wd) for wd in wds]))
        torch._foreach_sub_(ws, delta)


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al.)::

        g = clip(rescale_grad * grad)
        z += g - (sqrt(n + g * g) - sqrt(n)) * weight / lr
        n += g * g
        weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (abs(z) > lamda1)
    """

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context),    # z
                zeros(weight.shape, weight.context))    # n

    def _lazy_rows(self):
        return True     # MXNet's ftrl_update on a row_sparse gradient: its rows only

    def _hyper(self):
        h = super()._hyper()
        h.update(lamda1=_f32(self.lamda1), beta=_f32(self.beta))
        return h

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        lrs = [_f32(lr) for lr in lrs]
        g = _rescaled(gs, h)
        z, n = _states(ss, 0), _states(ss, 1)
        sq = torch._foreach_mul(g, g)
        grown = torch._foreach_add(n, sq)
        torch._foreach_sqrt_(grown)
        torch._foreach_sub_(grown, torch._foreach_sqrt(n))
        torch._foreach_mul_(grown, ws)
        torch._foreach_div_(grown, lrs)
        torch._foreach_add_(z, torch._foreach_sub(g, grown))
        torch._foreach_add_(n, sq)
        lam = h['lamda1']
        for w, zi, ni, lr, wd in zip(ws, z, n, lrs, wds):
            num = torch.sign(zi) * lam - zi
            den = (h['beta'] + torch.sqrt(ni)) / lr + _f32(wd)
            w.copy_(num / den * (zi.abs() > lam).to(w.dtype))


@register
class FTML(Optimizer):
    """FTML, Follow the Moving Leader (Zheng & Kwok)::

        g = clip(rescale_grad * grad + wd * weight)
        v = beta2 * v + (1 - beta2) * g * g
        d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)
        z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight
        d = d_t
        weight = -z / d_t
    """

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return tuple(zeros(weight.shape, weight.context, dtype=weight.dtype) for _ in range(3))

    def _hyper(self):
        h = super()._hyper()
        h.update(beta1=_f32(self.beta1), beta2=_f32(self.beta2), epsilon=_f32(self.epsilon))
        return h

    def _step_values(self, indices, lrs, wds):
        counts = self._index_update_count
        return lrs, wds, [counts[idx] for idx in indices]

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _rescaled_wd(gs, ws, wds, h)
        b1, b2 = np.float32(h['beta1']), np.float32(h['beta2'])
        d, v, z = _states(ss, 0), _states(ss, 1), _states(ss, 2)
        torch._foreach_mul_(v, float(b2))
        sq = torch._foreach_mul(g, g)
        torch._foreach_mul_(sq, float(np.float32(1) - b2))
        torch._foreach_add_(v, sq)
        for k, t in enumerate(extras):
            t = np.float32(t)
            coef1 = np.float32(1) - b1 ** t
            coef2 = np.float32(1) - b2 ** t
            d_t = torch.sqrt(v[k] / float(coef2)) + h['epsilon']
            d_t.mul_(float(coef1 / np.float32(lrs[k])))
            zk = z[k]
            zk.mul_(float(b1))
            zk.add_(g[k] * float(np.float32(1) - b1))
            zk.sub_((d_t - d[k] * float(b1)) * ws[k])
            d[k].copy_(d_t)
            ws[k].copy_(-zk / d_t)
