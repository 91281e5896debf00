"""``nd.random``: sampling on each device's own generator.

Scalar parameters draw ``shape`` samples from one distribution; NDArray parameters draw
``shape`` samples from each of their distributions (the result has shape
``param.shape + shape``). Every device has its own generator, seeded by ``seed``: the same
seed gives the same numbers under either engine.

>>> import neomx as mx
>>> mx.random.seed(42)
>>> mx.nd.random.uniform(shape=(2, 3)).shape
(2, 3)
>>> mx.nd.random.normal(mx.nd.zeros(2), mx.nd.ones(2), shape=4).shape
(2, 4)
"""
from .. import engine as _engine
from ..base import MXNetError
from ..context import Context
from ..ops import registry
from .gen import parse_ctx
from .ndarray import NDArray, invoke, rng_var

__all__ = ['uniform', 'normal', 'randn', 'randint', 'exponential', 'gamma', 'poisson',
           'negative_binomial', 'generalized_negative_binomial', 'multinomial', 'shuffle',
           'seed']


def _shape(shape):
    if shape is None:
        return ()
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _draw(random_op, sample_op, params, shape, dtype, ctx, out):
    """One of MXNet's two forms: ``random_op`` with scalar parameters (``params`` maps their
    attribute names to values), or ``sample_op`` when they are NDArrays."""
    values = list(params.values())
    if any(isinstance(v, NDArray) for v in values):
        if not all(isinstance(v, NDArray) for v in values):
            raise MXNetError("%s: distribution parameters must be all NDArrays or all numbers, "
                             "got %s" % (sample_op, ', '.join(type(v).__name__ for v in values)))
        op = registry.get(sample_op)
        attrs = op.parse_attrs({'shape': _shape(shape), 'dtype': dtype})
        return invoke(op, values, attrs, out=out)
    op = registry.get(random_op)
    kw = dict(params)
    kw['shape'] = _shape(shape) or (out.shape if out is not None else (1,))
    if dtype is not None:
        kw['dtype'] = dtype
    ctx = parse_ctx(ctx) or (out.context if out is not None else None)
    return invoke(op, (), op.parse_attrs(kw), out=out, ctx=ctx)


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from U[low, high)."""
    return _draw('_random_uniform', '_sample_uniform', {'low': low, 'high': high}, shape, dtype,
                 ctx, out)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from N(loc, scale^2)."""
    return _draw('_random_normal', '_sample_normal', {'loc': loc, 'scale': scale}, shape, dtype,
                 ctx, out)


def randn(*shape, **kwargs):
    """Samples from N(loc, scale^2) of shape ``shape`` (``randn(2, 3)``)."""
    loc = kwargs.pop('loc', 0)
    scale = kwargs.pop('scale', 1)
    return _draw('_random_normal', '_sample_normal', {'loc': loc, 'scale': scale}, shape or (1,),
                 kwargs.pop('dtype', None), kwargs.pop('ctx', None), kwargs.pop('out', None))


def randint(low, high, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Integers drawn uniformly from [low, high) (int32 unless ``dtype`` says otherwise)."""
    return _draw('_random_randint', None, {'low': low, 'high': high}, shape, dtype, ctx, out)


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the exponential distribution of mean ``scale``."""
    return _draw('_random_exponential', '_sample_exponential', {'lam': 1.0 / scale}, shape, dtype,
                 ctx, out)


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the gamma distribution of shape ``alpha`` and scale ``beta``."""
    return _draw('_random_gamma', '_sample_gamma', {'alpha': alpha, 'beta': beta}, shape, dtype,
                 ctx, out)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples from the Poisson distribution of rate ``lam``."""
    return _draw('_random_poisson', '_sample_poisson', {'lam': lam}, shape, dtype, ctx, out)


def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Failures before the ``k``-th success in trials succeeding with probability ``p``."""
    return _draw('_random_negative_binomial', '_sample_negative_binomial', {'k': k, 'p': p},
                 shape, dtype, ctx, out)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None, out=None,
                                  **kwargs):
    """Counts with mean ``mu`` and dispersion ``alpha``."""
    return _draw('_random_generalized_negative_binomial', '_sample_generalized_negative_binomial',
                 {'mu': mu, 'alpha': alpha}, shape, dtype, ctx, out)


def multinomial(data, shape=None, get_prob=False, out=None, dtype='int32', **kwargs):
    """Draws indices from the categorical distributions in the last axis of ``data``; with
    ``get_prob`` also returns the log-probabilities of the draws."""
    op = registry.get('_sample_multinomial')
    attrs = op.parse_attrs({'shape': _shape(shape), 'get_prob': get_prob, 'dtype': dtype})
    return invoke(op, [data], attrs, out=out)


def shuffle(data, **kwargs):
    """A copy of ``data`` with its first axis randomly permuted."""
    return invoke(registry.get('_shuffle'), [data], {}, out=kwargs.get('out'))


def seed(seed_state, ctx='all'):
    """Seeds the generator of ``ctx`` (every device with ``'all'``, including devices first
    used later); the seed takes effect in order with the random operations already pushed."""
    from .ndarray import _RNG, _SEED, seed_for
    if isinstance(seed_state, bool) or not isinstance(seed_state, int):
        raise MXNetError("seed: expected an integer, got %r" % (seed_state,))
    if ctx == 'all':
        from ..context import cpu
        _SEED[0] = seed_state
        targets = set(_RNG) | {cpu(0)}
    else:
        targets = {ctx if isinstance(ctx, Context) else parse_ctx(ctx)}
    for c in targets:
        var = rng_var(c)
        value = seed_for(c, seed_state)

        def fn(var=var, value=value):
            var.generator.manual_seed(value)
        _engine.push(fn, [var], [var], c, '_seed')


# ``nd.random.<distribution>_like(data, ...)``: samples in the shape and dtype of ``data``.
def _like_functions():
    from .gen import nd_function
    for dist in ('uniform', 'normal', 'exponential', 'gamma', 'poisson', 'negative_binomial',
                 'generalized_negative_binomial'):
        fname = dist + '_like'
        f = nd_function(registry.get('_random_' + fname))
        f.__name__ = f.__qualname__ = fname
        globals()[fname] = f
        __all__.append(fname)


_like_functions()
