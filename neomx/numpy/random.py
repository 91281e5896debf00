"""``mx.np.random``: NumPy's random sampling on the device's generator (seeded by
``mx.random.seed`` / ``npx.random.seed``). Parameters may be numbers or arrays (broadcast with
``size``); samples are differentiable in array parameters where the distribution allows it.

>>> from neomx import np
>>> np.random.uniform(0, 1, size=(2, 3)).shape
(2, 3)
"""
import numpy as onp

from ..base import dtype_name
from ..ndarray.ndarray import NDArray
from .multiarray import _as_np, _ctx, _invoke, _np, _shape_arg, array

__all__ = ['uniform', 'normal', 'lognormal', 'logistic', 'gumbel', 'exponential', 'rayleigh',
           'weibull', 'pareto', 'power', 'gamma', 'chisquare', 'beta', 'randint', 'rand',
           'randn', 'choice', 'multinomial', 'multivariate_normal', 'shuffle', 'seed',
           'random', 'random_sample', 'sample', 'ranf', 'permutation', 'standard_normal']


def _size(size):
    if size is None:
        return None
    return _shape_arg(size)


def _sample(name, params, defaults, size, dtype, ctx, out, integer=False):
    arrays = [p for p in params if isinstance(p, NDArray)]
    if not arrays:          # numbers are checked now; arrays when the kernel reads them
        from ..ops.numpy_random import check_params
        check_params(name, list(params))
    attrs = {}
    if arrays:
        dev = arrays[0]._ctx
        inputs = tuple(_as_np(p) if isinstance(p, NDArray) else
                       array(p if p is not None else onp.nan, ctx=dev) for p in params)
        ctx = dev
    else:
        inputs = (None,) * len(params)
        for k, p in zip(defaults, params):
            attrs[k] = None if p is None else float(p) if not integer else int(p)
    d = dtype_name(dtype) if dtype is not None else ('int64' if integer else 'float32')
    return _invoke('_npi_' + name, inputs, out=out, ctx=_ctx(ctx), size=_size(size), dtype=d,
                   **attrs)


def uniform(low=0.0, high=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples from the uniform distribution on ``[low, high)``."""
    return _sample('uniform', (low, high), ('low', 'high'), size, dtype, ctx, out)


def normal(loc=0.0, scale=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples from the normal distribution of mean ``loc`` and standard deviation ``scale``."""
    return _sample('normal', (loc, scale), ('loc', 'scale'), size, dtype, ctx, out)


def lognormal(mean=0.0, sigma=1.0, size=None, dtype=None, ctx=None, out=None):
    """Samples whose logarithm is normal with ``mean`` and ``sigma``."""
    return _sample('lognormal', (mean, sigma), ('mean', 'sigma'), size, dtype, ctx, out)


def logistic(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    """Samples from the logistic distribution."""
    return _sample('logistic', (loc, scale), ('loc', 'scale'), size, None, ctx, out)


def gumbel(loc=0.0, scale=1.0, size=None, ctx=None, out=None):
    """Samples from the Gumbel distribution."""
    return _sample('gumbel', (loc, scale), ('loc', 'scale'), size, None, ctx, out)


def exponential(scale=1.0, size=None, ctx=None, out=None):
    """Samples from the exponential distribution of mean ``scale``."""
    return _sample('exponential', (scale,), ('scale',), size, None, ctx, out)


def rayleigh(scale=1.0, size=None, ctx=None, out=None):
    """Samples from the Rayleigh distribution."""
    return _sample('rayleigh', (scale,), ('scale',), size, None, ctx, out)


def weibull(a, size=None, ctx=None, out=None):
    """Samples from the Weibull distribution of shape ``a``."""
    return _sample('weibull', (a,), ('a',), size, None, ctx, out)


def pareto(a, size=None, ctx=None, out=None):
    """Samples from the Pareto II (Lomax) distribution of shape ``a``."""
    return _sample('pareto', (a,), ('a',), size, None, ctx, out)


def power(a, size=None, ctx=None, out=None):
    """Samples in [0, 1] from the power distribution of exponent ``a - 1``."""
    return _sample('powerd', (a,), ('a',), size, None, ctx, out)


def gamma(shape, scale=1.0, size=None, dtype=None, ctx=None, out=None):  # pylint: disable=redefined-outer-name
    """Samples from the gamma distribution of ``shape`` and ``scale``."""
    return _sample('gamma', (shape, scale), ('shape', 'scale'), size, dtype, ctx, out)


def chisquare(df, size=None, dtype=None, ctx=None):
    """Samples from the chi-square distribution with ``df`` degrees of freedom."""
    return _sample('chisquare', (df,), ('df',), size, dtype, ctx, None)


def beta(a, b, size=None, dtype=None, ctx=None):
    """Samples from the beta distribution."""
    return _sample('beta', (a, b), ('a', 'b'), size, dtype, ctx, None)


def randint(low, high=None, size=None, dtype=None, ctx=None, out=None):
    """Random integers in ``[low, high)`` (``[0, low)`` when ``high`` is None), int64."""
    if high is None:
        low, high = 0, low
    if dtype is None:
        dtype = 'int64'
    return _sample('random_randint', (low, high), ('low', 'high'), size, dtype, ctx, out,
                   integer=True)


def rand(*size, **kwargs):
    """Uniform samples in [0, 1) of shape ``size``."""
    return uniform(size=size, **kwargs)


def randn(*size, **kwargs):
    """Standard normal samples of shape ``size``."""
    return normal(size=size, **kwargs)


def standard_normal(size=None, dtype=None, ctx=None):
    return normal(size=size, dtype=dtype, ctx=ctx)


def random(size=None, ctx=None):
    """Uniform samples in [0, 1)."""
    return uniform(size=size, ctx=ctx)


random_sample = sample = ranf = random


def choice(a, size=None, replace=True, p=None, ctx=None, out=None):
    """A random sample from ``arange(a)`` (an int) or the elements of 1-d array ``a``."""
    if isinstance(a, NDArray):
        idx = choice(a.shape[0], size, replace, p, ctx=a._ctx)
        return a[idx]
    n = int(a)
    inputs = (None, None)
    if p is not None:
        p = _as_np(p)
        inputs = (p, p)
    r = _invoke('_npi_choice', inputs, out=out, ctx=_ctx(ctx), n=n, size=_size(size),
                replace=bool(replace), weighted=p is not None)
    return r


def multinomial(n, pvals, size=None, **kwargs):
    """Counts of ``n`` draws over the categories of probabilities ``pvals``."""
    pv = _as_np(pvals, dtype='float64') if not isinstance(pvals, NDArray) else _as_np(pvals)
    if pv.size and float(pv[:-1].sum()) > 1 + 1e-6:
        raise ValueError("sum(pvals[:-1]) > 1.0")
    return _invoke('_npi_multinomial', (pv,), n=int(n), size=_size(size))


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None):
    """Samples from the multivariate normal of ``mean`` and covariance ``cov``."""
    return _invoke('_npi_mvn', (_as_np(mean), _as_np(cov)), size=_size(size))


def shuffle(x):
    """Shuffles ``x`` in place along its first axis."""
    r = _invoke('_npi_shuffle', (x,))
    x[...] = r


def permutation(x):
    """A shuffled copy of ``x`` (or of ``arange(x)``)."""
    from .multiarray import arange
    if not isinstance(x, NDArray):
        x = arange(int(x), dtype='int64')
    return _invoke('_npi_shuffle', (_as_np(x),))


def seed(seed, ctx='all'):  # pylint: disable=redefined-outer-name
    """Seeds the generators (``mx.random.seed``)."""
    from ..ndarray import random as _random
    _random.seed(seed, ctx)
