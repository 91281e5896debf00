"""``nd.contrib``: operators registered as ``_contrib_<name>``, and a few composites.

>>> import neomx as mx
>>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])
>>> mx.nd.contrib.boolean_mask(x, mx.nd.array([1, 0, 1])).asnumpy().tolist()
[[1.0, 2.0], [5.0, 6.0]]
"""
import numpy as np

from ..base import MXNetError
from ..ops import registry as _registry
from .gen import nd_function as _nd_function

__all__ = ['boolean_mask', 'isnan', 'isinf', 'isfinite', 'rand_zipfian', 'BatchNormWithReLU', 'getnnz']


def _op(name):
    return _nd_function(_registry.get(name))


def boolean_mask(data, index, axis=0, out=None):
    """The slices of ``data`` along ``axis`` where the 1-d ``index`` is nonzero.

    The result's shape depends on the values of ``index``, so this waits for them (as
    MXNet's operator does); gradients flow to the selected slices.
    """
    if index.ndim != 1 or not -data.ndim <= axis < data.ndim or \
            index.shape[0] != data.shape[axis]:
        raise MXNetError("boolean_mask: index of shape %s does not fit axis %d of data %s "
                         "(expected a 1-d index of that axis' length)"
                         % (index.shape, axis, data.shape))
    from .creation import array
    keep = np.flatnonzero(index.asnumpy())
    return _op('take')(data, array(keep, ctx=data.context, dtype='int64'), axis=axis, out=out)


def isnan(data):
    """1 where ``data`` is NaN, else 0 (in ``data``'s dtype)."""
    return data != data


def isinf(data):
    """1 where ``data`` is +inf or -inf, else 0."""
    return data.abs() == np.inf


def isfinite(data):
    """1 where ``data`` is neither NaN nor infinite, else 0."""
    return (data == data) * (data.abs() != np.inf)


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Draws ``num_sampled`` classes (with replacement) from the Zipfian distribution over
    [0, range_max), P(c) = log((c + 2) / (c + 1)) / log(range_max + 1): (the classes,
    int64; the expected count of each of ``true_classes`` in such a draw; the expected count
    of each drawn class), as for a sampled softmax's correction."""
    from ..context import current_context
    from .random import uniform
    ctx = ctx or current_context()
    log_range = np.log(range_max + 1)
    u = uniform(0, log_range, shape=(num_sampled,), dtype='float64', ctx=ctx)
    sampled = (u.exp() - 1).astype('int64') % range_max
    return (sampled, _expected_count(true_classes.as_in_context(ctx), log_range, num_sampled),
            _expected_count(sampled, log_range, num_sampled))


def _expected_count(classes, log_range, num_sampled):
    c = classes.astype('float64')
    return ((c + 2.0) / (c + 1.0)).log() * (num_sampled / log_range)


def BatchNormWithReLU(data, gamma, beta, moving_mean, moving_var, **kwargs):
    """``BatchNorm`` (same arguments) followed by a ReLU: MXNet 1.9.1's fused MKL-DNN
    operator, here the two operators."""
    from . import relu
    out = _op('BatchNorm')(data, gamma, beta, moving_mean, moving_var, **kwargs)
    if isinstance(out, (list, tuple)):
        return [relu(out[0])] + list(out[1:])
    return relu(out)


def getnnz(data, axis=None):
    """The number of stored values of a CSR array (int64): in all (shape (1,)) or, with
    ``axis=1``, per row (MXNet 1.9.1 has no ``axis=0``)."""
    from .creation import array
    if getattr(data, 'stype', 'default') != 'csr':
        raise MXNetError("getnnz: expected a CSR array (stype 'csr'), got stype %r"
                         % getattr(data, 'stype', 'default'))
    if axis not in (None, 1, -1):
        raise MXNetError("getnnz with axis = %s is not supported (None or 1)" % (axis,))
    stored = data.indptr.asnumpy().astype(np.int64)
    counts = np.array([stored[-1]]) if axis is None else np.diff(stored)
    return array(counts, ctx=data.context, dtype='int64')


def __getattr__(name):
    full = '_contrib_' + name
    if _registry.exists(full):
        return _nd_function(_registry.get(full))
    from ..ops.contrib import UNAVAILABLE, unavailable
    if name in UNAVAILABLE:
        return unavailable(name, 'nd.contrib')
    raise AttributeError("neomx.nd.contrib has no operator %r" % name)
