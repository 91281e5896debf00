"""Indexing operators: take, batch_take, pick, one_hot, where, topk, sort, argsort, gather_nd,
scatter_nd.

Indices may come in any dtype (MXNet's are float32 by default) and are truncated to integers.
Out-of-range indices follow ``mode``: 'clip' clamps them to the axis, 'wrap' takes them
modulo its length, 'raise' fails.
"""
import torch

from ..base import dtype_torch
from .layout import dense
from .registry import Bool, DType, Enum, Float, Int, IntOrNone, ShapeError, Shape, get, register

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
    if mode == 'raise':     # MXNet's: negative indices are out of range too
        bad = (idx < 0) | (idx >= n)
        if bool(bad.any()):
            raise IndexError("index %d is out of range [0, %d) of the axis"
                             % (int(idx[bad][0]), n))
        return idx
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


register('take', inputs=('a', 'indices'),
         attrs={'axis': Int(0), 'mode': _MODE})(_take)


def _batch_take(a, indices):
    """``a[i, indices[i]]`` for each row i of a 2-d ``a`` (indices clipped)."""
    if a.dim() != 2 or indices.dim() != 1 or indices.shape[0] != a.shape[0]:
        raise ShapeError("batch_take needs a of shape (N, k) and indices of shape (N,), got %s "
                         "and %s" % (tuple(a.shape), tuple(indices.shape)))
    idx = _fit(indices, a.shape[1], 'clip')
    return torch.gather(a, 1, idx.reshape(-1, 1)).reshape(-1)


register('batch_take', inputs=('a', 'indices'))(_batch_take)
get('batch_take').differentiable = False     # MXNet registers no gradient for it


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


def _pick_rule(attrs, shapes, dtypes):
    data, index = tuple(shapes[0]), tuple(shapes[1])
    if attrs['axis'] is None:
        raise ShapeError("axis=None is not supported; pick needs an axis")
    ax = _norm_axis(attrs['axis'], len(data))
    expect = data[:ax] + data[ax + 1:]
    if index != expect and index != expect[:ax] + (1,) + expect[ax:]:
        raise ShapeError("index of shape %s does not fit data %s along axis %d (expected %s)"
                         % (index, data, attrs['axis'], expect))
    out = expect[:ax] + (1,) + expect[ax:] if attrs['keepdims'] else (expect or (1,))
    return (out,), (dtypes[0],)


register('pick', inputs=('data', 'index'), infer=_pick_rule,
         infer_attrs=('axis', 'keepdims'),
         attrs={'axis': IntOrNone(-1), 'keepdims': Bool(False), 'mode': _MODE})(_pick)


def _one_hot(indices, depth, on_value, off_value, dtype):
    """``on_value`` at each index of a new last axis of length ``depth``, ``off_value``
    elsewhere (everywhere for an index outside [0, depth))."""
    if depth < 0:
        raise ShapeError("depth must be >= 0, got %d" % depth)
    idx = indices.long()
    out = torch.full(tuple(idx.shape) + (depth,), off_value, dtype=dtype_torch(dtype),
                     device=indices.device)
    if depth and idx.numel():
        lo, hi = idx.aminmax()
        if lo.item() >= 0 and hi.item() < depth:
            # every index inside [0, depth): one write each, half the torch calls of the
            # general case below (the book's one-hot RNN inputs: 12 us instead of 22)
            out.scatter_(-1, idx.unsqueeze(-1), on_value)
            return out
        # one write per index: on_value at it, or off_value at a clamped place for an index
        # outside [0, depth) (the row stays all off_value)
        inside = (idx >= 0) & (idx < depth)
        values = torch.where(inside, on_value, off_value).to(out.dtype)
        out.scatter_(-1, idx.clamp(0, depth - 1).unsqueeze(-1), values.unsqueeze(-1))
    return out


def _one_hot_rule(attrs, shapes, dtypes):
    if attrs['depth'] < 0:
        raise ShapeError("depth must be >= 0, got %d" % attrs['depth'])
    return (tuple(shapes[0]) + (attrs['depth'],),), (attrs['dtype'],)


register('one_hot', inputs=('indices',), infer=_one_hot_rule,
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


def _where_fill(attrs, shapes):
    """x and y have one shape: an unknown one takes the other's (or the condition's)."""
    c, x, y = shapes
    known = [s for s in (x, y, c) if s and all(s)]
    if not known:
        return shapes
    like = known[0] if (x and all(x)) or (y and all(y)) or len(known[0]) > 1 else None
    if like is None:
        return shapes
    return [c, x if x and all(x) else like, y if y and all(y) else like]


register('where', inputs=('condition', 'x', 'y'), infer=_where_rule, infer_attrs=(),
         fill=_where_fill)(_where)


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


def _sorted_shape(shape, axis):
    """(shape the sort works on, its axis): the flattened array when axis is None."""
    if axis is None:
        n = 1
        for d in shape:
            n *= d
        return (n,), 0
    return tuple(shape), _norm_axis(axis, len(shape))


def _topk_rule(attrs, shapes, dtypes):
    shape, ax = _sorted_shape(shapes[0], attrs['axis'])
    n, k = shape[ax], attrs['k']
    if k > n:
        raise ShapeError("k=%d is larger than axis %s of length %d" % (k, attrs['axis'], n))
    picked = shape[:ax] + (n if k <= 0 else k,) + shape[ax + 1:]
    kind = attrs['ret_typ']
    if kind == 'mask':
        return (tuple(shapes[0]),), (dtypes[0],)
    if kind == 'value':
        return (picked,), (dtypes[0],)
    if kind == 'both':
        return (picked, picked), (dtypes[0], attrs['dtype'])
    return (picked,), (attrs['dtype'],)


def _sort_rule(attrs, shapes, dtypes):
    shape, _ = _sorted_shape(shapes[0], attrs['axis'])
    return (shape,), (attrs.get('dtype') or dtypes[0],)


register('topk', infer=_topk_rule,
         num_outputs=lambda attrs: 2 if attrs['ret_typ'] == 'both' else 1,
         attrs={'axis': IntOrNone(-1), 'k': Int(1),
                'ret_typ': Enum('value', 'indices', 'mask', 'both', default='indices'),
                'is_ascend': Bool(False), 'dtype': DType('float32')})(_topk)


def _sort(data, axis, is_ascend):
    """``data`` sorted along ``axis`` (flattened when None)."""
    x, ax = _flat_axis(data, axis)
    return torch.sort(x, dim=ax, descending=not is_ascend, stable=True)[0]


register('sort', infer=_sort_rule, attrs={'axis': IntOrNone(-1), 'is_ascend': Bool(True)})(_sort)


def _argsort(data, axis, is_ascend, dtype):
    """The indices that sort ``data`` along ``axis`` (flattened when None), in ``dtype``."""
    x, ax = _flat_axis(data, axis)
    idx = torch.sort(x, dim=ax, descending=not is_ascend, stable=True)[1]
    return idx.to(dtype_torch(dtype))


register('argsort', infer=_sort_rule,
         attrs={'axis': IntOrNone(-1), 'is_ascend': Bool(True), 'dtype': DType('float32')})(
    _argsort)


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


def _gather_nd_rule(attrs, shapes, dtypes):
    data, indices = tuple(shapes[0]), tuple(shapes[1])
    m = indices[0] if indices else 0
    if not indices or m > len(data) or m == 0:
        raise ShapeError("gather_nd: indices of shape %s do not index an array of shape %s "
                         "(expected (M, ...) with 1 <= M <= %d)" % (indices, data, len(data)))
    return (indices[1:] + data[m:] or (1,),), (dtypes[0],)


register('gather_nd', inputs=('data', 'indices'), infer=_gather_nd_rule,
         infer_attrs=())(_gather_nd)


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


def _ravel_multi_index(data, shape):
    """Flat indices into ``shape`` of the multi-indices in the columns of ``data`` (ndim, N)."""
    if data.dim() < 1 or data.shape[0] != len(shape):
        raise ShapeError("data of shape %s does not hold %d-d indices for shape %s"
                         % (tuple(data.shape), len(shape), shape))
    strides = []
    acc = 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    w = torch.tensor(strides[::-1], dtype=data.dtype, device=data.device)
    return (data * w.reshape((-1,) + (1,) * (data.dim() - 1))).sum(0)


def _unravel_index(data, shape):
    """The multi-indices into ``shape`` of the flat indices ``data``: shape (ndim,) + data's."""
    flat = data.long()
    out = []
    for d in reversed(shape[1:]):
        out.append(torch.remainder(flat, d))
        flat = torch.div(flat, d, rounding_mode='floor')
    out.append(flat)        # the leading axis takes the rest (its size may be -1: unknown)
    return torch.stack(out[::-1]).to(data.dtype)


def _ravel_rule(attrs, shapes, dtypes):
    if not shapes[0] or shapes[0][0] != len(attrs['shape']):
        raise ShapeError("data of shape %s does not hold %d-d indices for shape %s"
                         % (shapes[0], len(attrs['shape']), attrs['shape']))
    return (tuple(shapes[0][1:]) or (1,),), (dtypes[0],)


register('_ravel_multi_index', aliases=('ravel_multi_index',), attrs={'shape': Shape()},
         infer=_ravel_rule)(_ravel_multi_index)
register('_unravel_index', aliases=('unravel_index',), attrs={'shape': Shape()},
         infer=lambda a, s, d: (((len(a['shape']),) + tuple(s[0]),), (d[0],)))(_unravel_index)


# -- sequences (time-major by default: axis 0 is time, axis 1 the batch) --------------------------

def _seq_lengths(sequence_length, data, axis, use):
    t = data.shape[axis]
    batch = data.shape[1 - axis]
    if not use:
        return torch.full((batch,), t, dtype=torch.long, device=data.device)
    if sequence_length is None or tuple(sequence_length.shape) != (batch,):
        raise ShapeError("sequence_length must have shape (%d,) for data %s, got %s"
                         % (batch, tuple(data.shape), None if sequence_length is None
                            else tuple(sequence_length.shape)))
    return sequence_length.long()


def _seq_axis(axis, data):
    if axis not in (0, 1) or data.dim() < 2:
        raise ShapeError("axis must be 0 (time-major) or 1 (batch-major) for data of at least "
                         "2 dims, got axis=%d and shape %s" % (axis, tuple(data.shape)))
    return axis


def _seq_valid(data, lengths, axis):
    """A boolean mask broadcasting against ``data``: time step < length of its sequence."""
    t = torch.arange(data.shape[axis], device=data.device)
    valid = t.reshape(-1, 1) < lengths.reshape(1, -1)          # (T, B)
    if axis == 1:
        valid = valid.t()
    return valid.reshape(tuple(valid.shape) + (1,) * (data.dim() - 2))


def _sequence_mask(data, sequence_length=None, use_sequence_length=False, value=0.0, axis=0):
    """``data`` with the steps beyond each sequence's length set to ``value``."""
    axis = _seq_axis(axis, data)
    if data.device.type == 'meta':
        return torch.empty_like(data)
    lengths = _seq_lengths(sequence_length, data, axis, use_sequence_length)
    # batch-major: the transposed mask would give the result its layout
    return dense(torch.where(_seq_valid(data, lengths, axis), data,
                             torch.tensor(value, dtype=data.dtype, device=data.device)))


def _sequence_last(data, sequence_length=None, use_sequence_length=False, axis=0):
    """The last valid step of each sequence: shape ``data.shape`` without the time axis."""
    axis = _seq_axis(axis, data)
    out_shape = (data.shape[1 - axis],) + tuple(data.shape[2:])
    if data.device.type == 'meta':
        return torch.empty(out_shape, dtype=data.dtype, device='meta')
    lengths = _seq_lengths(sequence_length, data, axis, use_sequence_length)
    steps = torch.clamp(lengths - 1, min=0)
    batch = torch.arange(out_shape[0], device=data.device)
    return data[steps, batch] if axis == 0 else data[batch, steps]


def _sequence_reverse(data, sequence_length=None, use_sequence_length=False, axis=0):
    """Each sequence's valid steps in reverse order (the padding stays in place)."""
    if axis != 0:
        raise ShapeError("SequenceReverse supports axis=0 (time-major) only, got %d" % axis)
    _seq_axis(axis, data)
    if data.device.type == 'meta':
        return torch.empty_like(data)
    lengths = _seq_lengths(sequence_length, data, 0, use_sequence_length)
    t = torch.arange(data.shape[0], device=data.device).reshape(-1, 1)
    src = torch.where(t < lengths.reshape(1, -1), lengths.reshape(1, -1) - 1 - t, t)   # (T, B)
    batch = torch.arange(data.shape[1], device=data.device).reshape(1, -1)
    return data[src, batch]


def _seq_rule(last):
    def rule(attrs, shapes, dtypes):
        data = shapes[0]
        axis = attrs['axis']
        if axis not in (0, 1) or len(data) < 2:
            raise ShapeError("axis must be 0 (time-major) or 1 (batch-major) for data of at "
                             "least 2 dims, got axis=%d and shape %s" % (axis, data))
        batch = data[1 - axis]
        if attrs['use_sequence_length']:
            n = shapes[1] if len(shapes) > 1 else None
            if n != (batch,):
                raise ShapeError("sequence_length must have shape (%d,) for data %s, got %s"
                                 % (batch, data, n))
        if last:
            return ((batch,) + tuple(data[2:]),), (dtypes[0],)
        return (data,), (dtypes[0],)
    return rule


_SEQ_INPUTS = dict(inputs=('data', 'sequence_length'),
                   drop_inputs=lambda attrs: () if attrs['use_sequence_length']
                   else ('sequence_length',))
register('SequenceMask', attrs={'use_sequence_length': Bool(False), 'value': Float(0.0),
                                'axis': Int(0)}, infer=_seq_rule(False), **_SEQ_INPUTS)(
    _sequence_mask)
register('SequenceLast', attrs={'use_sequence_length': Bool(False), 'axis': Int(0)},
         infer=_seq_rule(True), **_SEQ_INPUTS)(_sequence_last)
register('SequenceReverse', attrs={'use_sequence_length': Bool(False), 'axis': Int(0)},
         infer=_seq_rule(False), **_SEQ_INPUTS)(_sequence_reverse)


def _choose_element_0index(lhs, rhs):
    """``lhs[i, rhs[i]]`` for each row i (MXNet's legacy name for pick along axis 1)."""
    return _pick(lhs, rhs, 1, False, 'clip')


def _fill_element_0index(lhs, mhs, rhs):
    """A copy of ``lhs`` with ``lhs[i, rhs[i]] = mhs[i]`` for each row i."""
    if lhs.dim() != 2 or tuple(mhs.shape) != (lhs.shape[0],) or \
            tuple(rhs.shape) != (lhs.shape[0],):
        raise ShapeError("fill_element_0index needs lhs (N, k), mhs (N,) and rhs (N,), got "
                         "%s, %s and %s" % (tuple(lhs.shape), tuple(mhs.shape), tuple(rhs.shape)))
    idx = _fit(rhs, lhs.shape[1], 'clip').reshape(-1, 1)
    return lhs.scatter(1, idx, mhs.reshape(-1, 1).to(lhs.dtype))


register('choose_element_0index', inputs=('lhs', 'rhs'))(_choose_element_0index)
register('fill_element_0index', inputs=('lhs', 'mhs', 'rhs'))(_fill_element_0index)


_SCATTER_REDUCE = {'add': 'sum', 'mul': 'prod', 'max': 'amax', 'min': 'amin'}


def _scatter_elements(data, indices, updates, axis=0, reduction='none'):
    """A copy of ``data`` with ``updates`` written along ``axis`` at ``indices`` (of the
    updates' shape; negative ones count from the end), or combined with what is there by
    ``reduction`` (add, mul, max, min): ONNX's ScatterElements, torch's scatter. MXNet has no
    such operator; ONNX import needs it (ScatterND goes through it too)."""
    axis = _norm_axis(axis, data.dim())
    if indices.shape != updates.shape:
        raise ShapeError("_scatter_elements: indices %s and updates %s differ in shape"
                         % (tuple(indices.shape), tuple(updates.shape)))
    idx = torch.where(indices < 0, indices + data.shape[axis], indices).long()
    updates = updates.to(data.dtype)
    if reduction == 'none':
        return data.scatter(axis, idx, updates)
    return data.scatter_reduce(axis, idx, updates, reduce=_SCATTER_REDUCE[reduction])


register('_scatter_elements', inputs=('data', 'indices', 'updates'),
         attrs={'axis': Int(0), 'reduction': Enum('none', 'add', 'mul', 'max', 'min',
                                                  default='none')},
         infer=lambda attrs, shapes, dtypes: ((shapes[0],), (dtypes[0],)))(_scatter_elements)
