"""Random sampling operators of ``mx.np.random`` and ``mx.npx.random``.

A distribution's parameters are numbers (attributes) or arrays (inputs, broadcast with
``size``); samples are drawn from the device's generator and transformed by differentiable
torch operations, so gradients flow to array parameters (reparameterised sampling, as MXNet's
``np.random`` operators do for normal, uniform, exponential, Weibull, Pareto, Rayleigh,
log-normal, gamma and beta).
"""
import math

import torch

from ..base import dtype_torch
from .numpy import Lit, _bshape, _np_shape
from .registry import DType, Str, register

__all__ = []


def _sample_shape(size, params):
    if size is not None:
        return _np_shape(size)
    shape = ()
    for p in params:
        if p is not None:
            shape = _bshape(shape, tuple(p.shape))
    return shape


def _rule(attrs, shapes, dtypes):
    size = attrs.get('size')
    if size is not None:
        shape = _np_shape(size)
    else:
        shape = ()
        for s in shapes:
            if s is not None:
                shape = _bshape(shape, s)
    d = attrs.get('dtype') or 'float32'
    return (shape,), (d,)


def _params(arrays, scalars, t):
    """Each parameter as a tensor (an array input) or a Python number (an attribute)."""
    arrays = tuple(arrays) + (None,) * (len(scalars) - len(arrays))
    return [a.to(t) if a is not None else s for a, s in zip(arrays, scalars)]


# Parameter constraints, (index of the parameter, lowest allowed, whether it may equal it):
# a violation is a ValueError, raised when the parameters are read.
CONSTRAINTS = {
    'normal': [(1, 0.0, True)], 'lognormal': [(1, 0.0, True)], 'logistic': [(1, 0.0, True)],
    'gumbel': [(1, 0.0, True)], 'exponential': [(0, 0.0, True)], 'rayleigh': [(0, 0.0, True)],
    'weibull': [(0, 0.0, False)], 'pareto': [(0, 0.0, False)], 'powerd': [(0, 0.0, False)],
    'gamma': [(0, 0.0, False), (1, 0.0, False)], 'chisquare': [(0, 0.0, False)],
    'beta': [(0, 0.0, False), (1, 0.0, False)],
}


def check_params(name, params):
    """Raises ValueError when parameters (numbers or tensors; None for absent) violate the
    distribution's constraints."""
    for i, low, equal_ok in CONSTRAINTS.get(name, ()):
        p = params[i]
        if p is None:
            continue
        bad = (p < low) if equal_ok else (p <= low)
        if bool(bad.any()) if isinstance(bad, torch.Tensor) else bad:
            raise ValueError("np.random.%s: parameter %d must be %s %s"
                             % (name, i, '>=' if equal_ok else '>', low))
    if name == 'bernoulli' and params[0] is not None:
        p = params[0]
        bad = (p < 0) | (p > 1) if isinstance(p, torch.Tensor) else (p < 0 or p > 1)
        if bool(bad.any()) if isinstance(bad, torch.Tensor) else bad:
            raise ValueError("npx.random.bernoulli: prob must be in [0, 1]")


def _register(name, names, defaults, draw, integer=False):
    """``_npi_<name>`` with parameters ``names`` (inputs ``input1``... or attributes)."""
    n = len(names)
    inputs = tuple('input%d' % (i + 1) for i in range(n))
    attrs = {k: Lit(v) for k, v in zip(names, defaults)}
    attrs.update({'size': Lit(None), 'ctx': Str(''),
                  'dtype': DType('int64' if integer else 'float32')})

    def kernel(*args, size=None, ctx='', dtype=None, device=None, generator=None, **kw):
        arrays = tuple(args[:n]) + (None,) * (n - len(args))
        shape = _sample_shape(size, arrays)
        t = dtype_torch(dtype or ('int64' if integer else 'float32'))
        dev = device if device is not None else next(a.device for a in arrays if a is not None)
        if dev.type == 'meta':
            return torch.empty(shape, dtype=t, device=dev)
        ft = t if t.is_floating_point else torch.float32
        ps = _params(arrays, [kw[k] for k in names], ft)
        check_params(name, ps)
        r = draw(shape, ps, ft, dev, generator)
        return r.to(t) if r.dtype != t else r
    kernel.__name__ = name
    register('_npi_' + name, inputs=inputs, attrs=attrs, rng=True, creation=True,
             infer=_rule)(kernel)


def _u(shape, t, dev, g):
    return torch.rand(shape, dtype=t, device=dev, generator=g)


def _z(shape, t, dev, g):
    return torch.randn(shape, dtype=t, device=dev, generator=g)


def _exp1(shape, t, dev, g):
    return torch.empty(shape, dtype=t, device=dev).exponential_(1.0, generator=g)


def _gamma_std(alpha, shape, t, dev, g):
    a = torch.broadcast_to(torch.as_tensor(alpha, dtype=t, device=dev), shape)
    # torch's _standard_gamma takes no generator: draw by Marsaglia-Tsang with our generator.
    return _marsaglia_tsang(a, t, dev, g)


def _marsaglia_tsang(a, t, dev, g):
    """Gamma(a, 1) samples, differentiable in ``a`` through the implicit reparameterisation
    torch provides for ``_standard_gamma`` (its gradient rule), values from our generator."""
    boost = a < 1
    aa = torch.where(boost, a + 1, a).detach()
    d = aa - 1.0 / 3
    c = 1.0 / torch.sqrt(9 * d)
    out = torch.empty_like(aa)
    todo = torch.ones_like(aa, dtype=torch.bool)
    while bool(todo.any()):
        z = torch.randn(aa.shape, dtype=t, device=dev, generator=g)
        u = torch.rand(aa.shape, dtype=t, device=dev, generator=g)
        v = (1 + c * z) ** 3
        ok = (v > 0) & (torch.log(u.clamp_min(1e-30)) < 0.5 * z * z + d - d * v +
                        d * torch.log(v.clamp_min(1e-30)))
        take = todo & ok
        out = torch.where(take, d * v, out)
        todo = todo & ~ok
    u = torch.rand(aa.shape, dtype=t, device=dev, generator=g)
    out = torch.where(boost, out * u.clamp_min(1e-30) ** (1.0 / a.detach()), out)
    if a.requires_grad:
        # d sample / d alpha from torch's rule for standard gamma.
        grad = torch._standard_gamma_grad(a.detach(), out)
        out = out + grad * (a - a.detach())
    return out


_register('uniform', ('low', 'high'), (0.0, 1.0),
          lambda s, p, t, d, g: p[0] + (p[1] - p[0]) * _u(s, t, d, g))
_register('normal', ('loc', 'scale'), (0.0, 1.0),
          lambda s, p, t, d, g: p[0] + p[1] * _z(s, t, d, g))
_register('lognormal', ('mean', 'sigma'), (0.0, 1.0),
          lambda s, p, t, d, g: torch.exp(p[0] + p[1] * _z(s, t, d, g)))
_register('logistic', ('loc', 'scale'), (0.0, 1.0),
          lambda s, p, t, d, g: p[0] + p[1] * torch.logit(_u(s, t, d, g).clamp(1e-7, 1 - 1e-7)))
_register('gumbel', ('loc', 'scale'), (0.0, 1.0),
          lambda s, p, t, d, g: p[0] - p[1] * torch.log(_exp1(s, t, d, g)))
_register('exponential', ('scale',), (1.0,),
          lambda s, p, t, d, g: p[0] * _exp1(s, t, d, g))
_register('rayleigh', ('scale',), (1.0,),
          lambda s, p, t, d, g: p[0] * torch.sqrt(2 * _exp1(s, t, d, g)))
_register('weibull', ('a',), (1.0,),
          lambda s, p, t, d, g: _exp1(s, t, d, g) ** (1.0 / _as_t(p[0], t, d)))
_register('pareto', ('a',), (1.0,),
          lambda s, p, t, d, g: torch.expm1(_exp1(s, t, d, g) / _as_t(p[0], t, d)))
_register('powerd', ('a',), (1.0,),
          lambda s, p, t, d, g: (-torch.expm1(-_exp1(s, t, d, g))) ** (1.0 / _as_t(p[0], t, d)))
_register('gamma', ('shape', 'scale'), (1.0, 1.0),
          lambda s, p, t, d, g: _gamma_std(p[0], s, t, d, g) * p[1])
_register('chisquare', ('df',), (1.0,),
          lambda s, p, t, d, g: 2 * _gamma_std(_as_t(p[0], t, d) / 2, s, t, d, g))


def _beta(s, p, t, d, g):
    x = _gamma_std(p[0], s, t, d, g)
    y = _gamma_std(p[1], s, t, d, g)
    return x / (x + y)


_register('beta', ('a', 'b'), (1.0, 1.0), _beta)


def _randint(s, p, t, d, g):
    lo, hi = p
    u = _u(s, torch.float64, d, g)
    return torch.floor(lo + (hi - lo) * u)


_register('random_randint', ('low', 'high'), (0, 1), _randint, integer=True)


def _bernoulli(s, p, t, d, g):
    prob, logit = p
    if prob is None or (isinstance(prob, float) and math.isnan(prob)) or (
            isinstance(prob, torch.Tensor) and bool(torch.isnan(prob).all()) and
            logit is not None):
        prob = torch.sigmoid(_as_t(logit, t, d))
    return (_u(s, t, d, g) < prob).to(t)


def _as_t(v, t, d):
    return v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=t, device=d)


_register('bernoulli', ('prob', 'logit'), (None, None), _bernoulli)


def _choice(a=None, p=None, n=0, size=None, replace=True, weighted=False, ctx='', device=None,
            generator=None):
    shape = _np_shape(size) if size is not None else ()
    count = math.prod(shape)
    dev = device
    if dev.type == 'meta' or count == 0:
        return torch.zeros(shape, dtype=torch.int64, device=dev)
    w = p.double() if p is not None else torch.ones(n, dtype=torch.float64, device=dev)
    if not replace and count > w.shape[0]:
        raise ValueError("Cannot take a larger sample than population when 'replace=False'")
    idx = torch.multinomial(w, count, replacement=replace, generator=generator)
    return idx.reshape(shape)


register('_npi_choice', inputs=('input1', 'input2'), rng=True, creation=True,
         infer=lambda at, s, d: ((_np_shape(at['size']) if at['size'] is not None else (),),
                                 ('int64',)),
         attrs={'n': Lit(0), 'size': Lit(None), 'replace': Lit(True), 'weighted': Lit(False),
                'ctx': Str('')})(_choice)


def _multinomial(pvals, n, size, ctx='', device=None, generator=None):
    shape = (_np_shape(size) if size is not None else ()) + (pvals.shape[-1],)
    k = pvals.shape[-1]
    count = math.prod(shape[:-1])
    if pvals.device.type == 'meta' or count == 0 or k == 0:
        return torch.zeros(shape, dtype=torch.int64, device=pvals.device)
    draws = torch.multinomial(pvals.double().expand(count, k), n, replacement=True,
                              generator=generator) if n else \
        torch.zeros((count, 0), dtype=torch.int64, device=pvals.device)
    out = torch.zeros((count, k), dtype=torch.int64, device=pvals.device)
    out.scatter_add_(1, draws, torch.ones_like(draws))
    return out.reshape(shape)


register('_npi_multinomial', inputs=('pvals',), rng=True,
         attrs={'n': Lit(1), 'size': Lit(None), 'ctx': Str('')})(_multinomial)


def _mvn(mean, cov, size=None, generator=None):
    shape = (_np_shape(size) if size is not None else ()) + tuple(_bshape(
        tuple(mean.shape), tuple(cov.shape[:-1])))
    if mean.device.type == 'meta':
        return torch.empty(shape, dtype=mean.dtype, device=mean.device)
    t = mean.dtype
    w = torch.float32 if t in (torch.float16, torch.bfloat16) else t     # no half cholesky
    L = torch.linalg.cholesky(cov.to(w))
    z = torch.randn(shape, dtype=w, device=mean.device, generator=generator)
    return (mean.to(w) + torch.einsum('...ij,...j->...i', L, z)).to(t)


register('_npi_mvn', inputs=('mean', 'cov'), rng=True, attrs={'size': Lit(None)})(_mvn)


def _shuffle_first(x, generator=None):
    if x.device.type == 'meta' or x.dim() == 0:
        return x.clone()
    perm = torch.randperm(x.shape[0], generator=generator, device='cpu').to(x.device)
    return x[perm]


register('_npi_shuffle', inputs=('data',), rng=True)(_shuffle_first)
