"""``sym.random``: random sampling nodes (drawn from the device's generator when run).

>>> import neomx as mx
>>> mx.sym.random.uniform(shape=(2, 3)).infer_shape()
([], [(2, 3)], [])
"""
from ..base import MXNetError
from ..ops import registry
from .symbol import Symbol, _create

__all__ = ['uniform', 'normal', 'randn', 'randint', 'exponential', 'gamma', 'poisson',
           'negative_binomial', 'generalized_negative_binomial', 'multinomial', 'shuffle']


def _draw(opname, hint, name, attr, **attrs):
    attrs = {k: v for k, v in attrs.items() if v is not None}
    if isinstance(attrs.get('shape'), int):
        attrs['shape'] = (attrs['shape'],)
    return _create(registry.get(opname), hint, (), attrs, name, attr)


def _sample(opname, hint, params, shape, dtype, name, attr):
    attrs = {'shape': (shape,) if isinstance(shape, int) else (shape or ())}
    if dtype is not None:
        attrs['dtype'] = dtype
    return _create(registry.get(opname), hint, params, attrs, name, attr)


def uniform(low=0, high=1, shape=None, dtype=None, name=None, attr=None, **kwargs):
    """Samples from U[low, high); ``low``/``high`` may be Symbols (one distribution each)."""
    if isinstance(low, Symbol):
        return _sample('_sample_uniform', '_sample_uniform', (low, high), shape, dtype, name, attr)
    return _draw('_random_uniform', '_random_uniform', name, attr, low=low, high=high,
                 shape=shape, dtype=dtype)


def normal(loc=0, scale=1, shape=None, dtype=None, name=None, attr=None, **kwargs):
    """Samples from N(loc, scale^2); ``loc``/``scale`` may be Symbols."""
    if isinstance(loc, Symbol):
        return _sample('_sample_normal', '_sample_normal', (loc, scale), shape, dtype, name, attr)
    return _draw('_random_normal', '_random_normal', name, attr, loc=loc, scale=scale,
                 shape=shape, dtype=dtype)


def randn(*shape, **kwargs):
    """Samples from N(loc, scale^2) of shape ``shape``; with none, of the shape inference
    finds for it (as MXNet; a ``data`` argument is ignored as there)."""
    kwargs.pop('data', None)
    return normal(kwargs.pop('loc', 0), kwargs.pop('scale', 1), shape or (), **kwargs)


def randint(low, high, shape=None, dtype=None, name=None, attr=None, **kwargs):
    return _draw('_random_randint', '_random_randint', name, attr, low=low, high=high,
                 shape=shape, dtype=dtype)


def _either(random_op, sample_op, params, shape, dtype, name, attr):
    """``random_op`` with numbers for ``params`` (a dict), ``sample_op`` with Symbols (one
    distribution each)."""
    values = list(params.values())
    if any(isinstance(v, Symbol) for v in values):
        return _sample(sample_op, sample_op, tuple(values), shape, dtype, name, attr)
    return _draw(random_op, random_op, name, attr, shape=shape, dtype=dtype, **params)


def exponential(scale=1, shape=None, dtype=None, name=None, attr=None, **kwargs):
    return _either('_random_exponential', '_sample_exponential', {'lam': 1.0 / scale}, shape,
                   dtype, name, attr)


def gamma(alpha=1, beta=1, shape=None, dtype=None, name=None, attr=None, **kwargs):
    return _either('_random_gamma', '_sample_gamma', {'alpha': alpha, 'beta': beta}, shape,
                   dtype, name, attr)


def poisson(lam=1, shape=None, dtype=None, name=None, attr=None, **kwargs):
    return _either('_random_poisson', '_sample_poisson', {'lam': lam}, shape, dtype, name, attr)


def negative_binomial(k=1, p=1, shape=None, dtype=None, name=None, attr=None, **kwargs):
    return _either('_random_negative_binomial', '_sample_negative_binomial', {'k': k, 'p': p},
                   shape, dtype, name, attr)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, name=None, attr=None,
                                  **kwargs):
    return _either('_random_generalized_negative_binomial',
                   '_sample_generalized_negative_binomial', {'mu': mu, 'alpha': alpha}, shape,
                   dtype, name, attr)


def multinomial(data, shape=None, get_prob=False, dtype='int32', name=None, attr=None,
                **kwargs):
    if not isinstance(data, Symbol):
        raise MXNetError("sym.random.multinomial: data must be a Symbol")
    return _create(registry.get('_sample_multinomial'), '_sample_multinomial', (data,),
                   {'shape': shape or (), 'get_prob': get_prob, 'dtype': dtype}, name, attr)


def shuffle(data, name=None, attr=None, **kwargs):
    return _create(registry.get('_shuffle'), '_shuffle', (data,), {}, name, attr)


# ``sym.random.<distribution>_like(data, ...)``: samples in the shape and dtype of ``data``.
def _like_functions():
    from .symbol import sym_function
    for dist in ('uniform', 'normal', 'exponential', 'gamma', 'poisson', 'negative_binomial',
                 'generalized_negative_binomial'):
        fname = dist + '_like'
        globals()[fname] = sym_function(registry.get('_random_' + fname), fname)
        __all__.append(fname)


_like_functions()
