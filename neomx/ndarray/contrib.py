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

__all__ = ['boolean_mask', 'isnan', 'isinf', 'isfinite']


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


def __getattr__(name):
    full = '_contrib_' + name
    if _registry.exists(full):
        return _nd_function(_registry.get(full))
    raise AttributeError("neomx.nd.contrib has no operator %r" % name)
