"""Creation operators (no array inputs) and random sampling.

Creation kernels receive ``device``; random kernels receive ``generator``, the generator of
the device the operator runs on (each device has its own, seeded by ``mx.random.seed``).
"""
import math

import torch

from ..base import dtype_torch
from .registry import Bool, DType, Float, FloatOrNone, Int, ShapeError, Shape, Str, register


def _shape_rule(attrs, shapes, dtypes):
    shape = attrs['shape']
    if not shape and not _np_shape():
        raise ShapeError("shape () has no dimensions; MXNet arrays have at least one, as (1,)")
    # a negative dimension is an unknown one, as 0 (symbols: inference may find it)
    return (tuple(max(d, 0) for d in shape),), (attrs.get('dtype') or 'float32',)


def _np_shape():
    from ..util import is_np_shape     # the setting lives with mx.util; read at call time
    return is_np_shape()


_CREATE = {'shape': Shape(()), 'ctx': Str(''), 'dtype': DType('float32')}


def _zeros(shape, ctx, dtype, device):
    return torch.zeros(shape, dtype=dtype_torch(dtype), device=device)


def _ones(shape, ctx, dtype, device):
    return torch.ones(shape, dtype=dtype_torch(dtype), device=device)


def _empty(shape, ctx, dtype, device):
    return torch.empty(shape, dtype=dtype_torch(dtype), device=device)


def _full(shape, ctx, dtype, value, device):
    return torch.full(shape, value, dtype=dtype_torch(dtype), device=device)


register('_zeros', inputs=(), attrs=_CREATE, creation=True, infer=_shape_rule)(_zeros)
register('_ones', inputs=(), attrs=_CREATE, creation=True, infer=_shape_rule)(_ones)
register('_empty', inputs=(), attrs=_CREATE, creation=True, infer=_shape_rule)(_empty)
register('_full', inputs=(), attrs=dict(_CREATE, value=Float()), creation=True,
         infer=_shape_rule)(_full)


def _arange_len(start, stop, step, repeat):
    if stop is None:
        start, stop = 0.0, start
    if step == 0:
        raise ShapeError("arange: step must not be 0")
    n = int(math.ceil((stop - start) / step))
    return max(n, 0) * repeat, start, stop


def _arange_rule(attrs, shapes, dtypes):
    n, _, _ = _arange_len(attrs['start'], attrs['stop'], attrs['step'], attrs['repeat'])
    return ((n,),), (attrs['dtype'] or 'float32',)


def _arange(start, stop, step, repeat, infer_range, ctx, dtype, device):
    """Evenly spaced values in [start, stop), each repeated ``repeat`` times."""
    n, start, stop = _arange_len(start, stop, step, repeat)
    if device.type == 'meta':
        return torch.empty((n,), dtype=dtype_torch(dtype), device=device)
    count = n // repeat if repeat else 0
    t = dtype_torch(dtype)
    if t.is_floating_point:
        r = torch.arange(count, dtype=torch.float64, device=device) * step + start
    else:
        # as MXNet: start and step in the integer type, then start + i * step in it
        # (wrapping in uint8): arange(1.3, 456.6, 1.3, dtype='int32') is 1, 2, 3, ...
        r = (torch.arange(count, dtype=torch.int64, device=device) * int(step) + int(start))
        if t == torch.uint8:
            r = torch.remainder(r, 256)
    if repeat > 1:
        r = r.repeat_interleave(repeat)
    return r.to(dtype_torch(dtype))


register('_arange', inputs=(), creation=True, infer=_arange_rule,
         attrs={'start': Float(0.0), 'stop': FloatOrNone(None), 'step': Float(1.0),
                'repeat': Int(1), 'infer_range': Bool(False), 'ctx': Str(''),
                'dtype': DType('float32')})(_arange)


def _eye_rule(attrs, shapes, dtypes):
    n, m = attrs['N'], attrs['M'] or attrs['N']
    if n < 0 or m < 0:
        raise ShapeError("N=%d, M=%d: a dimension cannot be negative" % (attrs['N'], attrs['M']))
    return ((n, m),), (attrs['dtype'] or 'float32',)


def _eye(N, M, k, ctx, dtype, device):
    M = M or N
    out = torch.zeros((N, M), dtype=dtype_torch(dtype), device=device)
    if device.type != 'meta':
        out.diagonal(k).fill_(1)
    return out


register('_eye', inputs=(), creation=True, infer=_eye_rule,
         attrs={'N': Int(), 'M': Int(0), 'k': Int(0), 'ctx': Str(''),
                'dtype': DType('float32')})(_eye)


def _linspace_rule(attrs, shapes, dtypes):
    if attrs['num'] < 0:
        raise ShapeError("num=%d: the number of values cannot be negative" % attrs['num'])
    return ((attrs['num'],),), (attrs['dtype'] or 'float32',)


def _linspace(start, stop, num, endpoint, ctx, dtype, device):
    if endpoint:
        r = torch.linspace(start, stop, num, dtype=torch.float64, device=device)
    else:
        r = torch.linspace(start, stop, num + 1, dtype=torch.float64, device=device)[:num]
    return r.to(dtype_torch(dtype))


register('_linspace', inputs=(), creation=True, infer=_linspace_rule,
         attrs={'start': Float(), 'stop': Float(), 'num': Int(), 'endpoint': Bool(True),
                'ctx': Str(''), 'dtype': DType('float32')})(_linspace)


# -- random ---------------------------------------------------------------------------------

def _uniform(low, high, shape, ctx, dtype, device, generator):
    t = dtype_torch(dtype)
    if device.type == 'meta':
        return torch.empty(shape, dtype=t, device=device)
    if t in (torch.float16, torch.bfloat16):
        # Drawn in float32 and rounded: torch's own half-precision draws are coarse, and
        # exact zeros come about once in 4000 values (0 / 0 in an Adamax update).
        return torch.empty(shape, device=device).uniform_(low, high, generator=generator).to(t)
    return torch.empty(shape, dtype=t, device=device).uniform_(low, high, generator=generator)


def _normal(loc, scale, shape, ctx, dtype, device, generator):
    out = torch.empty(shape, dtype=dtype_torch(dtype), device=device)
    return out.normal_(loc, scale, generator=generator) if device.type != 'meta' else out


def _randint_rule(attrs, shapes, dtypes):
    if attrs['high'] <= attrs['low']:
        raise ShapeError("low=%d must be below high=%d" % (attrs['low'], attrs['high']))
    return _shape_rule(attrs, shapes, dtypes)


def _randint(low, high, shape, ctx, dtype, device, generator):
    return torch.randint(low, high, shape, dtype=dtype_torch(dtype), device=device,
                         generator=generator)


def _exponential(lam, shape, ctx, dtype, device, generator):
    out = torch.empty(shape, dtype=dtype_torch(dtype), device=device)
    return out.exponential_(lam, generator=generator) if device.type != 'meta' else out


def _gamma(alpha, beta, shape, ctx, dtype, device, generator):
    if device.type == 'meta':
        return torch.empty(shape, dtype=dtype_torch(dtype), device=device)
    conc = torch.full(shape, alpha, dtype=torch.float32, device=device)
    return (torch._standard_gamma(conc, generator=generator) * beta).to(dtype_torch(dtype))


def _poisson(lam, shape, ctx, dtype, device, generator):
    if device.type == 'meta':
        return torch.empty(shape, dtype=dtype_torch(dtype), device=device)
    rates = torch.full(shape, lam, dtype=torch.float32, device=device)
    return torch.poisson(rates, generator=generator).to(dtype_torch(dtype))


def _gamma_poisson(shape_k, scale, generator):
    """Poisson draws whose rates are Gamma(shape_k, scale) draws: negative binomial counts."""
    rates = torch._standard_gamma(shape_k, generator=generator) * scale
    return torch.poisson(rates, generator=generator)


def _negative_binomial(k, p, shape, ctx, dtype, device, generator):
    """Failures before the k-th success of trials succeeding with probability p."""
    if device.type == 'meta':
        return torch.empty(shape, dtype=dtype_torch(dtype), device=device)
    kk = torch.full(shape, float(k), dtype=torch.float32, device=device)
    return _gamma_poisson(kk, (1.0 - p) / p, generator).to(dtype_torch(dtype))


def _generalized_negative_binomial(mu, alpha, shape, ctx, dtype, device, generator):
    """Counts of mean ``mu`` and dispersion ``alpha`` (Poisson(mu) when alpha is 0)."""
    if device.type == 'meta':
        return torch.empty(shape, dtype=dtype_torch(dtype), device=device)
    if alpha == 0:
        return _poisson(mu, shape, ctx, dtype, device, generator)
    kk = torch.full(shape, 1.0 / alpha, dtype=torch.float32, device=device)
    return _gamma_poisson(kk, alpha * mu, generator).to(dtype_torch(dtype))


_RAND = {'shape': Shape(()), 'ctx': Str(''), 'dtype': DType('float32')}
register('_random_uniform', inputs=(), creation=True, rng=True, infer=_shape_rule,
         aliases=('random_uniform', 'uniform'),
         attrs=dict(low=Float(0.0), high=Float(1.0), **_RAND))(_uniform)
register('_random_normal', inputs=(), creation=True, rng=True, infer=_shape_rule,
         aliases=('random_normal', 'normal'),
         attrs=dict(loc=Float(0.0), scale=Float(1.0), **_RAND))(_normal)
register('_random_randint', inputs=(), creation=True, rng=True, infer=_randint_rule,
         aliases=('random_randint',),
         attrs=dict(low=Int(), high=Int(), shape=Shape(()), ctx=Str(''),
                    dtype=DType('int32')))(_randint)
register('_random_exponential', inputs=(), creation=True, rng=True, infer=_shape_rule,
         aliases=('random_exponential',), attrs=dict(lam=Float(1.0), **_RAND))(_exponential)
register('_random_gamma', inputs=(), creation=True, rng=True, infer=_shape_rule,
         aliases=('random_gamma',),
         attrs=dict(alpha=Float(1.0), beta=Float(1.0), **_RAND))(_gamma)
register('_random_poisson', inputs=(), creation=True, rng=True, infer=_shape_rule,
         aliases=('random_poisson',), attrs=dict(lam=Float(1.0), **_RAND))(_poisson)
register('_random_negative_binomial', inputs=(), creation=True, rng=True, infer=_shape_rule,
         aliases=('random_negative_binomial',),
         attrs=dict(k=Int(1), p=Float(1.0), **_RAND))(_negative_binomial)
register('_random_generalized_negative_binomial', inputs=(), creation=True, rng=True,
         infer=_shape_rule, aliases=('random_generalized_negative_binomial',),
         attrs=dict(mu=Float(1.0), alpha=Float(1.0), **_RAND))(_generalized_negative_binomial)


def _like(draw, name):
    """The ``_random_<name>_like`` kernel: ``draw``'s samples in ``data``'s shape and dtype
    (and no gradient to ``data``)."""
    def kernel(data, generator, **params):
        return draw(shape=tuple(data.shape), ctx='', dtype=_dtype_of(data), device=data.device,
                    generator=generator, **params)
    kernel.__name__ = '_random_%s_like' % name
    kernel.__doc__ = 'Samples of the %s distribution in the shape and dtype of ``data``.' % name
    return kernel


def _dtype_of(t):
    from ..base import dtype_name
    return dtype_name(t.dtype)


for _name, _draw_fn, _params in (
        ('uniform', _uniform, dict(low=Float(0.0), high=Float(1.0))),
        ('normal', _normal, dict(loc=Float(0.0), scale=Float(1.0))),
        ('exponential', _exponential, dict(lam=Float(1.0))),
        ('gamma', _gamma, dict(alpha=Float(1.0), beta=Float(1.0))),
        ('poisson', _poisson, dict(lam=Float(1.0))),
        ('negative_binomial', _negative_binomial, dict(k=Int(1), p=Float(1.0))),
        ('generalized_negative_binomial', _generalized_negative_binomial,
         dict(mu=Float(1.0), alpha=Float(1.0)))):
    register('_random_%s_like' % _name, inputs=('data',), rng=True, attrs=_params,
             aliases=('random_%s_like' % _name,),
             infer=lambda attrs, shapes, dtypes: ((shapes[0],), (dtypes[0],)),
             infer_attrs=())(_like(_draw_fn, _name))


def _zipfian_draws(n, range_max, device, generator):
    """``n`` classes in [0, range_max) from the log-uniform (Zipfian) distribution,
    P(c) = log((c + 2) / (c + 1)) / log(range_max + 1), by inverting its CDF."""
    u = torch.rand(n, dtype=torch.float64, device=device, generator=generator)
    c = torch.floor(torch.exp(u * math.log(range_max + 1))).long() - 1
    return c.clamp_(0, range_max - 1)


def _unique_zipfian_row(num_sampled, range_max, device, generator):
    """(``num_sampled`` distinct Zipfian classes in the order first drawn, the number of
    draws it took)."""
    draws = torch.empty(0, dtype=torch.long, device=device)
    while True:
        draws = torch.cat([draws, _zipfian_draws(max(num_sampled, 1024), range_max, device,
                                                 generator)])
        values, inverse = torch.unique(draws, return_inverse=True)
        if values.numel() < num_sampled:
            continue
        first = torch.full((values.numel(),), draws.numel(), dtype=torch.long, device=device)
        first.scatter_reduce_(0, inverse, torch.arange(draws.numel(), device=device), 'amin')
        order = torch.sort(first).values[:num_sampled]
        return draws[order], int(order[-1]) + 1


def _sample_unique_zipfian(range_max, shape, generator, device):
    """Per row of ``shape`` (batch, num_sampled): distinct classes drawn from the Zipfian
    distribution over [0, range_max) and the number of draws that took (MXNet's sampler of
    candidates for sampled softmax)."""
    batch, num_sampled = shape
    if num_sampled > range_max:
        raise ShapeError("cannot draw %d distinct classes out of range_max=%d"
                         % (num_sampled, range_max))
    if device.type == 'meta':
        return (torch.empty(shape, dtype=torch.int64, device=device),
                torch.empty((batch,), dtype=torch.int64, device=device))
    rows, trials = [], []
    for _ in range(batch):
        classes, n = _unique_zipfian_row(num_sampled, range_max, device, generator)
        rows.append(classes)
        trials.append(n)
    return torch.stack(rows), torch.tensor(trials, dtype=torch.int64, device=device)


def _unique_zipfian_rule(attrs, shapes, dtypes):
    shape = tuple(attrs['shape'])
    if len(shape) != 2:
        raise ShapeError("shape must be (batch_size, num_sampled), got %s" % (shape,))
    return (shape, (shape[0],)), ('int64', 'int64')


register('_sample_unique_zipfian', inputs=(), rng=True, creation=True, num_outputs=2,
         infer=_unique_zipfian_rule,
         attrs={'range_max': Int(), 'shape': Shape(())})(_sample_unique_zipfian)


def _shuffle(data, generator):
    """A copy of ``data`` with its first axis randomly permuted."""
    if data.device.type == 'meta':
        return torch.empty_like(data)
    perm = torch.randperm(data.shape[0], generator=generator, device=data.device)
    return data[perm]


register('_shuffle', inputs=('data',), rng=True, aliases=('shuffle',),
         infer=lambda attrs, shapes, dtypes: ((shapes[0],), (dtypes[0],)))(_shuffle)


def _multinomial_rule(attrs, shapes, dtypes):
    shape = shapes[0][:-1] + tuple(attrs['shape'])
    out = ((shape or (1,)),)
    if attrs['get_prob']:
        return out * 2, (attrs['dtype'], dtypes[0])
    return out, (attrs['dtype'],)


def _multinomial(data, shape, get_prob, dtype, generator):
    """Draws category indices from the distributions in the last axis of ``data``."""
    k = data.shape[-1]
    n = 1
    for d in shape:
        n *= d
    flat = data.reshape(-1, k).float()
    idx = torch.multinomial(flat, max(n, 1), replacement=True, generator=generator)
    out_shape = tuple(data.shape[:-1]) + tuple(shape)
    idx = idx.reshape(out_shape or (1,))
    if get_prob:
        prob = torch.gather(flat, 1, idx.reshape(flat.shape[0], -1)).reshape(idx.shape)
        return idx.to(dtype_torch(dtype)), torch.log(prob).to(data.dtype)
    return idx.to(dtype_torch(dtype))


register('_sample_multinomial', inputs=('data',), rng=True, aliases=('sample_multinomial',),
         infer=_multinomial_rule,
         num_outputs=lambda attrs: 2 if attrs['get_prob'] else 1,
         attrs={'shape': Shape(()), 'get_prob': Bool(False), 'dtype': DType('int32')})(_multinomial)


def _sample_rule(attrs, shapes, dtypes):
    if any(s != shapes[0] for s in shapes[1:]):
        raise ShapeError("distribution parameters have different shapes %s" % (list(shapes),))
    return (tuple(shapes[0]) + tuple(attrs['shape']),), (attrs['dtype'] or dtypes[0],)


def _expand_params(p, shape):
    return p.reshape(tuple(p.shape) + (1,) * len(shape)).expand(tuple(p.shape) + tuple(shape))


def _sample_uniform(low, high, shape, dtype, generator):
    lo, hi = _expand_params(low, shape), _expand_params(high, shape)
    u = torch.empty(lo.shape, dtype=torch.float32, device=low.device)
    if low.device.type != 'meta':
        u.uniform_(0, 1, generator=generator)
    return (lo + (hi - lo) * u).to(dtype_torch(dtype or low.dtype))


def _sample_normal(mu, sigma, shape, dtype, generator):
    m, s = _expand_params(mu, shape), _expand_params(sigma, shape)
    z = torch.empty(m.shape, dtype=torch.float32, device=mu.device)
    if mu.device.type != 'meta':
        z.normal_(0, 1, generator=generator)
    return (m + s * z).to(dtype_torch(dtype or mu.dtype))


def _sample_exponential(lam, shape, dtype, generator):
    out = torch.empty(_expand_params(lam, shape).shape, dtype=torch.float32, device=lam.device)
    if lam.device.type != 'meta':
        out.exponential_(1.0, generator=generator)
    return (out / _expand_params(lam, shape)).to(dtype_torch(dtype or lam.dtype))


def _sample_gamma(alpha, beta, shape, dtype, generator):
    a, b = _expand_params(alpha, shape), _expand_params(beta, shape)
    if alpha.device.type == 'meta':
        return torch.empty(a.shape, dtype=dtype_torch(dtype or alpha.dtype), device='meta')
    g = torch._standard_gamma(a.float().contiguous(), generator=generator)
    return (g * b).to(dtype_torch(dtype or alpha.dtype))


def _sample_poisson(lam, shape, dtype, generator):
    rates = _expand_params(lam, shape)
    if lam.device.type == 'meta':
        return torch.empty(rates.shape, dtype=dtype_torch(dtype or lam.dtype), device='meta')
    return torch.poisson(rates.float().contiguous(), generator=generator).to(
        dtype_torch(dtype or lam.dtype))


def _sample_negative_binomial(k, p, shape, dtype, generator):
    kk, pp = _expand_params(k, shape), _expand_params(p, shape)
    if k.device.type == 'meta':
        return torch.empty(kk.shape, dtype=dtype_torch(dtype or k.dtype), device='meta')
    return _gamma_poisson(kk.float().contiguous(), (1.0 - pp) / pp, generator).to(
        dtype_torch(dtype or k.dtype))


def _sample_generalized_negative_binomial(mu, alpha, shape, dtype, generator):
    m, a = _expand_params(mu, shape), _expand_params(alpha, shape)
    if mu.device.type == 'meta':
        return torch.empty(m.shape, dtype=dtype_torch(dtype or mu.dtype), device='meta')
    # alpha = 0 is Poisson(mu): a huge gamma shape with a tiny scale has the same limit.
    a = torch.clamp(a.float(), min=1e-12)
    return _gamma_poisson((1.0 / a).contiguous(), a * m, generator).to(
        dtype_torch(dtype or mu.dtype))


_SAMPLE = {'shape': Shape(()), 'dtype': DType(None)}
register('_sample_uniform', inputs=('low', 'high'), rng=True, aliases=('sample_uniform',),
         infer=_sample_rule, attrs=_SAMPLE)(_sample_uniform)
register('_sample_normal', inputs=('mu', 'sigma'), rng=True, aliases=('sample_normal',),
         infer=_sample_rule, attrs=_SAMPLE)(_sample_normal)
register('_sample_exponential', inputs=('lam',), rng=True, aliases=('sample_exponential',),
         infer=_sample_rule, attrs=_SAMPLE)(_sample_exponential)
register('_sample_gamma', inputs=('alpha', 'beta'), rng=True, aliases=('sample_gamma',),
         infer=_sample_rule, attrs=_SAMPLE)(_sample_gamma)
register('_sample_poisson', inputs=('lam',), rng=True, aliases=('sample_poisson',),
         infer=_sample_rule, attrs=_SAMPLE)(_sample_poisson)
register('_sample_negative_binomial', inputs=('k', 'p'), rng=True,
         aliases=('sample_negative_binomial',), infer=_sample_rule,
         attrs=_SAMPLE)(_sample_negative_binomial)
register('_sample_generalized_negative_binomial', inputs=('mu', 'alpha'), rng=True,
         aliases=('sample_generalized_negative_binomial',), infer=_sample_rule,
         attrs=_SAMPLE)(_sample_generalized_negative_binomial)


def _bernoulli_like(data, p, generator):
    """1 with probability ``p``, else 0, in ``data``'s shape and dtype (dropout masks)."""
    u = torch.empty(data.shape, dtype=torch.float32, device=data.device)
    if data.device.type != 'meta':
        u.uniform_(0, 1, generator=generator)
    return (u < p).to(data.dtype)


register('_bernoulli_like', inputs=('data',), rng=True, attrs={'p': Float(0.5)},
         infer=lambda attrs, shapes, dtypes: ((shapes[0],), (dtypes[0],)),
         infer_attrs=())(_bernoulli_like)


# -- densities of the sampling distributions (MXNet's random_pdf_*) -------------------------------

def _param(p, sample, event=0):
    """``p`` (shape a prefix of the sample's batch shape, plus ``event`` trailing dims)
    reshaped to broadcast against ``sample``."""
    lead = p.dim() - event
    if tuple(p.shape[:lead]) != tuple(sample.shape[:lead]):
        raise ShapeError("parameters of shape %s do not match the leading dims of the sample %s"
                         % (tuple(p.shape), tuple(sample.shape)))
    extra = sample.dim() - p.dim()
    return p.reshape(tuple(p.shape[:lead]) + (1,) * extra + tuple(p.shape[lead:]))


def _log_binomial_coef(x, k):
    return torch.lgamma(x + k) - torch.lgamma(x + 1) - torch.lgamma(k)


_LOG_PDF = {
    'uniform': (('low', 'high'), lambda x, lo, hi: torch.where(
        (x >= lo) & (x <= hi), -torch.log(hi - lo), torch.full_like(x, float('-inf')))),
    'normal': (('mu', 'sigma'), lambda x, mu, s: -0.5 * ((x - mu) / s) ** 2 - torch.log(s)
               - 0.5 * math.log(2 * math.pi)),
    'gamma': (('alpha', 'beta'), lambda x, a, b: a * torch.log(b) + (a - 1) * torch.log(x)
              - b * x - torch.lgamma(a)),
    'exponential': (('lam',), lambda x, lam: torch.log(lam) - lam * x),
    'poisson': (('lam',), lambda x, lam: x * torch.log(lam) - lam - torch.lgamma(x + 1)),
    'negative_binomial': (('k', 'p'), lambda x, k, p: _log_binomial_coef(x, k)
                          + k * torch.log(p) + x * torch.log1p(-p)),
    'generalized_negative_binomial': (('mu', 'alpha'), lambda x, mu, a: _log_binomial_coef(
        x, 1 / a) + (1 / a) * torch.log(1 / (1 + a * mu)) + x * torch.log(a * mu / (1 + a * mu))),
}


def _register_pdf(name, params, log_pdf):
    def kernel(sample, *args, is_log):
        ps = [_param(p, sample).to(sample.dtype) for p in args]
        out = log_pdf(sample, *ps)
        return out if is_log else torch.exp(out)
    kernel.__name__ = '_random_pdf_' + name
    kernel.__doc__ = ("The %s density (or its log with ``is_log``) of each sample, under the "
                      "parameters of its leading dims." % name.replace('_', ' '))
    register('_random_pdf_' + name, aliases=('random_pdf_' + name,),
             inputs=('sample',) + params, attrs={'is_log': Bool(False)})(kernel)


for _name, (_params, _f) in _LOG_PDF.items():
    _register_pdf(_name, _params, _f)


def _pdf_dirichlet(sample, alpha, is_log):
    """The Dirichlet density of each sample (its last axis), under ``alpha``."""
    a = _param(alpha, sample, event=1).to(sample.dtype)
    out = (torch.lgamma(a.sum(-1)) - torch.lgamma(a).sum(-1)
           + ((a - 1) * torch.log(sample)).sum(-1))
    out = out if is_log else torch.exp(out)
    return out.reshape(1) if out.dim() == 0 else out


register('_random_pdf_dirichlet', aliases=('random_pdf_dirichlet',), inputs=('sample', 'alpha'),
         attrs={'is_log': Bool(False)})(_pdf_dirichlet)
