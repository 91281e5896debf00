"""``nd.random``: sampling on each device's own generator.

>>> import neomx as mx
>>> mx.random.seed(42)
>>> mx.nd.random.uniform(shape=(2, 3)).shape
(2, 3)
"""
from .. import engine as _engine
from ..base import MXNetError
from ..context import Context
from ..ops import registry
from .gen import parse_ctx
from .ndarray import NDArray, invoke, rng_var, user_line

__all__ = ['uniform', 'normal', 'randn', 'randint', 'exponential', 'gamma', 'poisson',
           'multinomial', 'shuffle', 'seed']


def _draw(opname, ctx, out, where, **attrs):
    op = registry.get(opname)
    shape = attrs.get('shape')
    if shape is None:
        attrs['shape'] = out.shape if out is not None else (1,)
    elif isinstance(shape, int):
        attrs['shape'] = (shape,)
    if attrs.get('dtype') is None:
        attrs.pop('dtype', None)
    ctx = parse_ctx(ctx) or (out.context if out is not None else None)
    return invoke(op, (), op.parse_attrs(attrs), out=out, ctx=ctx, where=where)


def _sample(opname, params, shape, dtype, out, where):
    op = registry.get(opname)
    if isinstance(shape, int):
        shape = (shape,)
    attrs = op.parse_attrs({'shape': shape or (), 'dtype': dtype})
    return invoke(op, list(params), attrs, out=out, where=where)


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from U[low, high); ``low``/``high`` may be arrays (one distribution each)."""
    if isinstance(low, NDArray):
        return _sample('_sample_uniform', (low, high), shape, dtype, out, user_line())
    return _draw('_random_uniform', ctx, out, user_line(), low=low, high=high, shape=shape,
                 dtype=dtype)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from N(loc, scale^2); ``loc``/``scale`` may be arrays."""
    if isinstance(loc, NDArray):
        return _sample('_sample_normal', (loc, scale), shape, dtype, out, user_line())
    return _draw('_random_normal', ctx, out, user_line(), loc=loc, scale=scale, shape=shape,
                 dtype=dtype)


def randn(*shape, **kwargs):
    loc = kwargs.pop('loc', 0)
    scale = kwargs.pop('scale', 1)
    return _draw('_random_normal', kwargs.pop('ctx', None), kwargs.pop('out', None), user_line(),
                 loc=loc, scale=scale, shape=shape or (1,), dtype=kwargs.pop('dtype', None))


def randint(low, high, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Integers drawn uniformly from [low, high)."""
    return _draw('_random_randint', ctx, out, user_line(), low=low, high=high, shape=shape,
                 dtype=dtype)


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    return _draw('_random_exponential', ctx, out, user_line(), lam=1.0 / scale, shape=shape,
                 dtype=dtype)


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    return _draw('_random_gamma', ctx, out, user_line(), alpha=alpha, beta=beta, shape=shape,
                 dtype=dtype)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    return _draw('_random_poisson', ctx, out, user_line(), lam=lam, shape=shape, dtype=dtype)


def multinomial(data, shape=None, get_prob=False, out=None, dtype='int32', **kwargs):
    """Draws indices from the categorical distributions in the last axis of ``data``."""
    op = registry.get('_sample_multinomial')
    attrs = op.parse_attrs({'shape': shape or (), 'get_prob': get_prob, 'dtype': dtype})
    return invoke(op, [data], attrs, out=out, where=user_line())


def shuffle(data, **kwargs):
    """A copy of ``data`` with its first axis randomly permuted."""
    return invoke(registry.get('_shuffle'), [data], {}, where=user_line())


def seed(seed_state, ctx='all'):
    """Seeds the generator of ``ctx`` (every device in use with ``'all'``); the seed is applied
    in order with the random operations already pushed."""
    from .ndarray import _RNG, _SEED, seed_for
    if not isinstance(seed_state, int):
        raise MXNetError("seed: expected an integer, got %r" % (seed_state,))
    if ctx == 'all':
        from ..context import cpu
        _SEED[0] = seed_state
        targets = set(_RNG) | {cpu(0)}
    else:
        targets = {parse_ctx(ctx) if not isinstance(ctx, Context) else ctx}
    where = user_line()
    for c in targets:
        var = rng_var(c)
        value = seed_for(c, seed_state)

        def fn(var=var, value=value):
            var.generator.manual_seed(value)
        _engine._engine.push(fn, [var], [var], c, '_seed', where)
