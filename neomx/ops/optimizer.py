"""MXNet's optimizer update operators (``nd.sgd_update``, ``nd.adam_update``, ...).

Each returns the updated weight (MXNet code passes ``out=weight``) and writes its state
inputs (momentum, moments, ...) in place, as MXNet's do. The rules are MXNet 1.9's, gradient
rescaling and clipping included: ``g = clip(rescale_grad * grad, clip_gradient)`` (no
clipping when ``clip_gradient <= 0``).

>>> import neomx as mx
>>> w, g, mom = mx.nd.ones(2), mx.nd.ones(2), mx.nd.zeros(2)
>>> mx.nd.sgd_mom_update(w, g, mom, lr=0.1, momentum=0.9, out=w).asnumpy().tolist()
[0.8999999761581421, 0.8999999761581421]
>>> mom.asnumpy().tolist()
[-0.10000000149011612, -0.10000000149011612]
"""
import torch

from .registry import same_as_input
from .registry import Bool, Float, Int, register

__all__ = []


def _rescaled(grad, rescale_grad, clip):
    g = grad * rescale_grad
    return g.clamp(-clip, clip) if clip > 0 else g


def _update(name, inputs, states, attrs, doc):
    """Registers update operator ``name`` whose kernel is the decorated function."""
    def deco(fn):
        fn.__doc__ = doc
        register(name, inputs=inputs, mutate=states, infer=same_as_input, infer_attrs=(),
                 attrs=attrs)(fn)
        return fn
    return deco


_COMMON = {'wd': Float(0.0), 'rescale_grad': Float(1.0), 'clip_gradient': Float(-1.0)}


@_update('sgd_update', ('weight', 'grad'), (),
         dict(lr=Float(), **_COMMON, lazy_update=Bool(True)),
         "weight = (1 - lr * wd) * weight - lr * g")
def _sgd(weight, grad, lr, wd, rescale_grad, clip_gradient, lazy_update):
    return (1 - lr * wd) * weight - lr * _rescaled(grad, rescale_grad, clip_gradient)


@_update('sgd_mom_update', ('weight', 'grad', 'mom'), ('mom',),
         dict(lr=Float(), momentum=Float(0.0), **_COMMON, lazy_update=Bool(True)),
         "mom = momentum * mom - lr * (g + wd * weight); weight = weight + mom")
def _sgd_mom(weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient, lazy_update):
    g = _rescaled(grad, rescale_grad, clip_gradient)
    mom.mul_(momentum).sub_(lr * (g + wd * weight))
    return weight + mom


@_update('nag_mom_update', ('weight', 'grad', 'mom'), ('mom',),
         dict(lr=Float(), momentum=Float(0.0), **_COMMON),
         "g' = g + wd * weight; mom = momentum * mom - lr * g'; "
         "weight = weight + momentum * mom - lr * g' (MXNet, given out=weight, takes the "
         "weight decay of mom from the updated weight)")
def _nag_mom(weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient):
    g = _rescaled(grad, rescale_grad, clip_gradient) + wd * weight
    mom.mul_(momentum).sub_(lr * g)
    return weight + momentum * mom - lr * g


@_update('signsgd_update', ('weight', 'grad'), (), dict(lr=Float(), **_COMMON),
         "weight = (1 - lr * wd) * weight - lr * sign(grad)")
def _signsgd(weight, grad, lr, wd, rescale_grad, clip_gradient):
    return (1 - lr * wd) * weight - lr * torch.sign(grad)


@_update('signum_update', ('weight', 'grad', 'mom'), ('mom',),
         dict(lr=Float(), momentum=Float(0.0), **_COMMON, wd_lh=Float(0.0)),
         "mom = momentum * mom - (1 - momentum) * (wd * weight + g); "
         "weight = (1 - lr * wd_lh) * weight + lr * sign(mom)")
def _signum(weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient, wd_lh):
    g = _rescaled(grad, rescale_grad, clip_gradient)
    mom.mul_(momentum).sub_((1 - momentum) * (wd * weight + g))
    return (1 - lr * wd_lh) * weight + lr * torch.sign(mom)


@_update('adam_update', ('weight', 'grad', 'mean', 'var'), ('mean', 'var'),
         dict(lr=Float(), beta1=Float(0.9), beta2=Float(0.999), epsilon=Float(1e-8),
              **_COMMON, lazy_update=Bool(True)),
         "g' = clip(rescale_grad * grad + wd * weight, clip_gradient); "
         "mean = beta1 * mean + (1 - beta1) * g'; "
         "var = beta2 * var + (1 - beta2) * g'^2; "
         "weight = weight - lr * mean / (sqrt(var) + epsilon)")
def _adam(weight, grad, mean, var, lr, beta1, beta2, epsilon, wd, rescale_grad,
          clip_gradient, lazy_update):
    g = _rescaled(grad + wd / rescale_grad * weight, rescale_grad, clip_gradient)
    mean.mul_(beta1).add_((1 - beta1) * g)
    var.mul_(beta2).add_((1 - beta2) * g * g)
    return weight - lr * mean / (torch.sqrt(var) + epsilon)


def _clip_weights(w, bound):
    return w.clamp(-bound, bound) if bound > 0 else w


@_update('rmsprop_update', ('weight', 'grad', 'n'), ('n',),
         dict(lr=Float(), gamma1=Float(0.95), epsilon=Float(1e-8), **_COMMON,
              clip_weights=Float(-1.0)),
         "g' = clip(rescale_grad * grad + wd * weight, clip_gradient); "
         "n = (1 - gamma1) * g'^2 + gamma1 * n; weight = clip(weight - lr * g' / sqrt(n + epsilon), clip_weights)")
def _rmsprop(weight, grad, n, lr, gamma1, epsilon, wd, rescale_grad, clip_gradient,
             clip_weights):
    g = _rescaled(grad + wd / rescale_grad * weight, rescale_grad, clip_gradient)
    n.mul_(gamma1).add_((1 - gamma1) * g * g)
    return _clip_weights(weight - lr * g / torch.sqrt(n + epsilon), clip_weights)


@_update('rmspropalex_update', ('weight', 'grad', 'n', 'g', 'delta'), ('n', 'g', 'delta'),
         dict(lr=Float(), gamma1=Float(0.95), gamma2=Float(0.9), epsilon=Float(1e-8),
              **_COMMON, clip_weights=Float(-1.0)),
         "g' = clip(rescale_grad * grad + wd * weight, clip_gradient); "
         "n = (1 - gamma1) * g'^2 + gamma1 * n; g = (1 - gamma1) * g' + gamma1 * g; "
         "delta = gamma2 * delta - lr * g' / sqrt(n - g^2 + epsilon); "
         "weight = clip(weight + delta, clip_weights)")
def _rmspropalex(weight, grad, n, g_avg, delta, lr, gamma1, gamma2, epsilon, wd, rescale_grad,
                 clip_gradient, clip_weights):
    g = _rescaled(grad + wd / rescale_grad * weight, rescale_grad, clip_gradient)
    n.mul_(gamma1).add_((1 - gamma1) * g * g)
    g_avg.mul_(gamma1).add_((1 - gamma1) * g)
    delta.mul_(gamma2).sub_(lr * g / torch.sqrt(n - g_avg * g_avg + epsilon))
    return _clip_weights(weight + delta, clip_weights)


@_update('ftrl_update', ('weight', 'grad', 'z', 'n'), ('z', 'n'),
         dict(lr=Float(), lamda1=Float(0.01), beta=Float(1.0), **_COMMON),
         "z += g - (sqrt(n + g^2) - sqrt(n)) * weight / lr; n += g^2; "
         "weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)")
def _ftrl(weight, grad, z, n, lr, lamda1, beta, wd, rescale_grad, clip_gradient):
    g = _rescaled(grad, rescale_grad, clip_gradient)
    z.add_(g - (torch.sqrt(n + g * g) - torch.sqrt(n)) * weight / lr)
    n.add_(g * g)
    w = (torch.sign(z) * lamda1 - z) / ((beta + torch.sqrt(n)) / lr + wd)
    return w * (z.abs() > lamda1).to(w.dtype)


@_update('ftml_update', ('weight', 'grad', 'd', 'v', 'z'), ('d', 'v', 'z'),
         dict(lr=Float(), beta1=Float(0.6), beta2=Float(0.999), epsilon=Float(1e-8), t=Int(),
              wd=Float(0.0), rescale_grad=Float(1.0), clip_grad=Float(-1.0)),
         "g' = clip(rescale_grad * grad + wd * weight, clip_grad); "
         "v = beta2 * v + (1 - beta2) * g'^2; "
         "d_t = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) + epsilon); "
         "z = beta1 * z + (1 - beta1) * g' - (d_t - beta1 * d) * weight; d = d_t; "
         "weight = -z / d_t")
def _ftml(weight, grad, d, v, z, lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_grad):
    g = _rescaled(grad, rescale_grad, -1.0) + wd * weight
    if clip_grad > 0:
        g = g.clamp(-clip_grad, clip_grad)
    v.mul_(beta2).add_((1 - beta2) * g * g)
    d_t = (1 - beta1 ** t) / lr * (torch.sqrt(v / (1 - beta2 ** t)) + epsilon)
    z.mul_(beta1).add_((1 - beta1) * g - (d_t - beta1 * d) * weight)
    d.copy_(d_t)
    return -z / d_t


# -- MXNet's contrib updates: AdamW (decoupled weight decay) and GroupAdaGrad --

def adamw_step(weight, grad, mean, var, scale, lr, eta, beta1, beta2, epsilon, wd,
               clip_gradient):
    """One AdamW step (MXNet's ``adamw_update``; no bias correction): ``mean`` and ``var``
    are updated in place, the new weight is returned. A ``scale`` (rescale_grad) of 0, inf or
    NaN skips the step, leaving everything as it was, as MXNet's does for a loss scaler's
    overflow."""
    s = float(scale.reshape(-1)[0]) if isinstance(scale, torch.Tensor) else float(scale)
    if s == 0 or s != s or s in (float('inf'), float('-inf')):
        return weight.clone()
    g = grad.to(mean.dtype) * s
    if clip_gradient >= 0:
        g = g.clamp(-clip_gradient, clip_gradient)
    mean.mul_(beta1).add_((1 - beta1) * g)
    var.mul_(beta2).add_((1 - beta2) * g * g)
    return weight - eta * (lr * mean / (var.sqrt() + epsilon) + wd * weight)


_ADAMW = dict(lr=Float(), eta=Float(), beta1=Float(0.9), beta2=Float(0.999),
              epsilon=Float(1e-8), wd=Float(0.0), clip_gradient=Float(-1.0))


@_update('_contrib_adamw_update', ('weight', 'grad', 'mean', 'var', 'rescale_grad'),
         ('mean', 'var'), _ADAMW,
         "m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2; "
         "weight -= eta (lr m / (sqrt(v) + epsilon) + wd weight), g = clip(rescale_grad grad); "
         "skipped where rescale_grad is 0, inf or NaN")
def _adamw(weight, grad, mean, var, rescale_grad, lr, eta, beta1, beta2, epsilon, wd,
           clip_gradient):
    return adamw_step(weight, grad, mean, var, rescale_grad, lr, eta, beta1, beta2, epsilon,
                      wd, clip_gradient)


@_update('_contrib_mp_adamw_update',
         ('weight', 'grad', 'mean', 'var', 'weight32', 'rescale_grad'),
         ('mean', 'var', 'weight32'), _ADAMW,
         "adamw_update on the float32 master copy weight32; the weight is its cast")
def _mp_adamw(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1, beta2, epsilon,
              wd, clip_gradient):
    new = adamw_step(weight32, grad, mean, var, rescale_grad, lr, eta, beta1, beta2, epsilon,
                     wd, clip_gradient)
    weight32.copy_(new)
    return new.to(weight.dtype)


@_update('_contrib_group_adagrad_update', ('weight', 'grad', 'history'), ('history',),
         dict(lr=Float(), rescale_grad=Float(1.0), clip_gradient=Float(-1.0),
              epsilon=Float(1e-5)),
         "history += mean(g^2, axis=1, keepdims); weight -= lr g / sqrt(history + epsilon) "
         "(one learning rate per row), g = clip(rescale_grad grad)")
def _group_adagrad(weight, grad, history, lr, rescale_grad, clip_gradient, epsilon):
    g = _rescaled(grad, rescale_grad, clip_gradient)
    history.add_((g * g).reshape(g.shape[0], -1).mean(dim=1).reshape(history.shape))
    return weight - lr * g / (history + epsilon).sqrt().reshape((-1,) + (1,) * (g.dim() - 1))
