"""Indexing operators: take, batch_take, pick, one_hot, where, topk, sort, argsort, gather_nd,
scatter_nd.

Indices may come in any dtype (MXNet's are float32 by default) and are truncated to integers.
Out-of-range indices follow ``mode``: 'clip' clamps them to the axis, 'wrap' takes them
modulo its length, 'raise' fails.
"""
import torch

from ..base import dtype_torch
from .registry import Bool, DType, Enum, Float, Int, IntOrNone, ShapeError, Shape, register

_MODE = Enum('clip', 'wrap', 'raise', default='clip')


def _norm_axis(axis, ndim):
    if not -ndim <= axis < ndim:
        raise ShapeError("axis %d is out of range for an array of %d dims" % (axis, ndim))
    return axis % ndim


def _fit(idx, n, mode):
    """Integer indices into an axis of length ``n`` according to ``mode``."""
    idx = idx.long()
    if idx.device.type == 'meta':
        return idx      # shape inference: clamp on 'meta' would import torch's compiler stack
    if mode == 'wrap':
        return torch.remainder(idx, n)
    if mode == 'raise':
        bad = (idx < -n) | (idx >= n)
        if bool(bad.any()):
            raise IndexError("index %d is out of range for an axis of length %d"
                             % (int(idx[bad][0]), n))
        return torch.remainder(idx, n)
    return torch.clamp(idx, 0, n - 1)


def _take(a, indices, axis, mode):
    """Slices of ``a`` along ``axis`` at ``indices``: the result has shape
    ``a.shape[:axis] + indices.shape + a.shape[axis+1:]``."""
    axis = _norm_axis(axis, a.dim())
    n = a.shape[axis]
    if n == 0:
        raise ShapeError("cannot take from axis %d of length 0" % axis)
    idx = _fit(indices, n, mode)
    out = torch.index_select(a, axis, idx.reshape(-1))
    return out.reshape(tuple(a.shape[:axis]) + tuple(indices.shape) + tuple(a.shape[axis + 1:]))


register('take', inputs=('a', 'indices'), fluent=True,
         attrs={'axis': Int(0), 'mode': _MODE})(_take)


def _batch_take(a, indices):
    """``a[i, indices[i]]`` for each row i of a 2-d ``a`` (indices clipped)."""
    if a.dim() != 2 or indices.dim() != 1 or indices.shape[0] != a.shape[0]:
        raise ShapeError("batch_take needs a of shape (N, k) and indices of shape (N,), got %s "
                         "and %s" % (tuple(a.shape), tuple(indices.shape)))
    idx = _fit(indices, a.shape[1], 'clip')
    return torch.gather(a, 1, idx.reshape(-1, 1)).reshape(-1)


register('batch_take', inputs=('a', 'indices'))(_batch_take)


def _pick(data, index, axis, keepdims, mode):
    """``data`` at ``index`` along ``axis``: index has the shape of ``data`` without that
    axis (or with it as 1)."""
    if axis is None:
        raise ShapeError("axis=None is not supported; pick needs an axis")
    ax = _norm_axis(axis, data.dim())
    expect = tuple(data.shape[:ax]) + tuple(data.shape[ax + 1:])
    if tuple(index.shape) == expect:
        index = index.unsqueeze(ax)
    elif tuple(index.shape) != expect[:ax] + (1,) + expect[ax:]:
        raise ShapeError("index of shape %s does not fit data %s along axis %d (expected %s)"
                         % (tuple(index.shape), tuple(data.shape), axis, expect))
    out = torch.gather(data, ax, _fit(index, data.shape[ax], mode))
    return out if keepdims else out.squeeze(ax).reshape(expect or (1,))


register('pick', inputs=('data', 'index'), fluent=True,
         attrs={'axis': IntOrNone(-1), 'keepdims': Bool(False), 'mode': _MODE})(_pick)


def _one_hot(indices, depth, on_value, off_value, dtype):
    """``on_value`` at each index of a new last axis of length ``depth``, ``off_value``
    elsewhere (everywhere for an index outside [0, depth))."""
    if depth < 0:
        raise ShapeError("depth must be >= 0, got %d" % depth)
    hot = indices.long().unsqueeze(-1) == torch.arange(depth, device=indices.device)
    dt = dtype_torch(dtype)
    return torch.where(hot, torch.tensor(on_value, dtype=dt, device=indices.device),
                       torch.tensor(off_value, dtype=dt, device=indices.device))


def _one_hot_rule(attrs, shapes, dtypes):
    if attrs['depth'] < 0:
        raise ShapeError("depth must be >= 0, got %d" % attrs['depth'])
    return (tuple(shapes[0]) + (attrs['depth'],),), (attrs['dtype'],)


register('one_hot', inputs=('indices',), fluent=True, infer=_one_hot_rule,
         attrs={'depth': Int(), 'on_value': Float(1.0), 'off_value': Float(0.0),
                'dtype': DType('float32')})(_one_hot)


def _where_rule(attrs, shapes, dtypes):
    c, x, y = shapes
    if x != y:
        raise ShapeError("x %s and y %s must have the same shape" % (x, y))
    if dtypes[1] != dtypes[2]:
        raise ShapeError("x and y have different dtypes %s and %s" % (dtypes[1], dtypes[2]))
    if c != x and not (len(c) == 1 and x and c[0] == x[0]):
        raise ShapeError("condition %s must have the shape of x %s, or be 1-d of length %d"
                         % (c, x, x[0] if x else 0))
    return (x,), (dtypes[1],)


def _where(condition, x, y):
    """``x`` where ``condition`` is nonzero, else ``y``; a 1-d condition selects whole rows."""
    cond = condition != 0
    if cond.dim() < x.dim():
        cond = cond.reshape(cond.shape + (1,) * (x.dim() - cond.dim()))
    return torch.where(cond, x, y)


register('where', inputs=('condition', 'x', 'y'), infer=_where_rule, infer_attrs=())(_where)


# -- sorting --------------------------------------------------------------------------------

def _flat_axis(data, axis):
    if axis is None:
        return data.reshape(-1), 0
    return data, _norm_axis(axis, data.dim())


def _topk(data, axis, k, ret_typ, is_ascend, dtype):
    """The ``k`` largest (smallest with ``is_ascend``) entries along ``axis`` (of the flattened
    array when None): their indices, values, both, or a 0/1 mask of them."""
    x, ax = _flat_axis(data, axis)
    n = x.shape[ax]
    if k > n:
        raise ShapeError("k=%d is larger than axis %s of length %d" % (k, axis, n))
    kk = n if k <= 0 else k
    values, indices = torch.topk(x, kk, dim=ax, largest=not is_ascend, sorted=True)
    if ret_typ == 'value':
        return values
    if ret_typ == 'mask':
        mask = torch.zeros_like(x).scatter(ax, indices, 1)
        return mask.reshape(data.shape)
    indices = indices.to(dtype_torch(dtype))
    if ret_typ == 'both':
        return values, indices
    return indices


register('topk', fluent=True,
         num_outputs=lambda attrs: 2 if attrs['ret_typ'] == 'both' else 1,
         attrs={'axis': IntOrNone(-1), 'k': Int(1),
                'ret_typ': Enum('value', 'indices', 'mask', 'both', default='indices'),
                'is_ascend': Bool(False), 'dtype': DType('float32')})(_topk)


def _sort(data, axis, is_ascend):
    """``data`` sorted along ``axis`` (flattened when None)."""
    x, ax = _flat_axis(data, axis)
    return torch.sort(x, dim=ax, descending=not is_ascend, stable=True)[0]


register('sort', fluent=True, attrs={'axis': IntOrNone(-1), 'is_ascend': Bool(True)})(_sort)


def _argsort(data, axis, is_ascend, dtype):
    """The indices that sort ``data`` along ``axis`` (flattened when None), in ``dtype``."""
    x, ax = _flat_axis(data, axis)
    idx = torch.sort(x, dim=ax, descending=not is_ascend, stable=True)[1]
    return idx.to(dtype_torch(dtype))


register('argsort', fluent=True,
         attrs={'axis': IntOrNone(-1), 'is_ascend': Bool(True), 'dtype': DType('float32')})(_argsort)


# -- n-d gather and scatter -----------------------------------------------------------------

def _nd_index(indices, shape, name):
    m = indices.shape[0] if indices.dim() else 0
    if indices.dim() == 0 or m > len(shape) or m == 0:
        raise ShapeError("%s: indices of shape %s do not index an array of shape %s (expected "
                         "(M, ...) with 1 <= M <= %d)" % (name, tuple(indices.shape),
                                                         tuple(shape), len(shape)))
    return tuple(indices.long().unbind(0))


def _gather_nd(data, indices):
    """``out[i...] = data[indices[0][i...], ..., indices[M-1][i...]]``: shape
    ``indices.shape[1:] + data.shape[M:]``."""
    out = data[_nd_index(indices, data.shape, 'gather_nd')]
    return out.reshape(1) if out.dim() == 0 else out


register('gather_nd', inputs=('data', 'indices'))(_gather_nd)


def _scatter_nd(data, indices, shape):
    """An array of ``shape``, zero except ``out[indices[:, i...]] = data[i...]`` (the inverse
    of gather_nd)."""
    idx = _nd_index(indices, shape, 'scatter_nd')
    expect = tuple(indices.shape[1:]) + tuple(shape[len(idx):])
    if tuple(data.shape) != expect:
        raise ShapeError("data of shape %s does not fit indices %s and shape %s (expected %s)"
                         % (tuple(data.shape), tuple(indices.shape), shape, expect))
    out = torch.zeros(shape, dtype=data.dtype, device=data.device)
    return out.index_put(idx, data)


register('scatter_nd', inputs=('data', 'indices'), attrs={'shape': Shape()})(_scatter_nd)
