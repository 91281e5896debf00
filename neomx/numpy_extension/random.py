"""``mx.npx.random``: ``seed``, ``bernoulli`` and the batched samplers ``uniform_n`` /
``normal_n``."""
from ..numpy import random as _np_random
from ..numpy.multiarray import _as_np, _ctx, _invoke, _shape_arg
from ..ndarray.ndarray import NDArray

__all__ = ['seed', 'bernoulli', 'uniform_n', 'normal_n']


def seed(seed, ctx='all'):  # pylint: disable=redefined-outer-name
    """Seeds the generators of ``ctx`` (every device with 'all')."""
    from ..ndarray import random as _random
    _random.seed(seed, ctx)


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """Samples of 1 with probability ``prob`` (or ``sigmoid(logit)``), 0 otherwise."""
    if (prob is None) == (logit is None):
        raise ValueError("Either `prob` or `logit` must be specified, but not both. "
                         "Received prob={}, logit={}".format(prob, logit))
    return _np_random._sample('bernoulli', (prob, logit), ('prob', 'logit'), size, dtype,
                              ctx, out)


def _batch(shape, params):
    shape = () if shape is None else _shape_arg(shape)
    pshape = ()
    for p in params:
        if isinstance(p, NDArray):
            pshape = p.shape
    return shape + tuple(pshape)


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None):
    """Uniform samples of shape ``batch_shape + broadcast(low, high).shape``."""
    return _np_random.uniform(low, high, _batch(batch_shape, (low, high)), dtype, ctx)


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None):
    """Normal samples of shape ``batch_shape + broadcast(loc, scale).shape``."""
    return _np_random.normal(loc, scale, _batch(batch_shape, (loc, scale)), dtype, ctx)
