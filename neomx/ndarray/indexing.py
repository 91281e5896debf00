"""``NDArray.__getitem__`` and ``__setitem__`` with MXNet 1.9's rules.

Basic indexing (integers, slices, Ellipsis, None) returns a view sharing storage when the
result is contiguous in memory (``x[1]``, ``x[1:3]``, ``x[1, 2:4]``), and a copy otherwise
(``x[:, 1]``, ``x[::-1]``). Advanced indexing (NDArray, list or numpy indices) returns a
copy. Assignment writes into the array's storage in place for every kind of key; a key that
does not fit the array, or a value that does not fit the selection, raises at once.

>>> import neomx as mx
>>> x = mx.nd.arange(6).reshape((2, 3))
>>> row = x[1]            # a view
>>> x[1, ::-1] = mx.nd.array([7, 8, 9])
>>> row.asnumpy().tolist()
[9.0, 8.0, 7.0]
"""
import numpy as np
import torch

from .. import engine as _engine
from ..base import MXNetError, dtype_torch, mode, numeric_types
from ..ops import registry
from ..ops.registry import Any, register
from . import ndarray as _ndarray
from .creation import array
from .ndarray import NDArray, _check_writable, _make, invoke

__all__ = ['getitem', 'setitem', 'is_contiguous_key']

_BASIC = (int, np.integer, slice, type(Ellipsis), type(None))


def _is_basic(key):
    if isinstance(key, tuple):
        return all(isinstance(k, _BASIC) and not isinstance(k, bool) for k in key)
    return isinstance(key, _BASIC) and not isinstance(key, bool)


def _hashable(key):
    if isinstance(key, slice):
        return ('s', key.start, key.stop, key.step)
    if isinstance(key, tuple):
        return tuple(_hashable(k) for k in key)
    if isinstance(key, np.integer):
        return int(key)
    return key


_GEOMETRY = {}


def _geometry(shape, key):
    """(result shape, storage offset or None when not contiguous) of ``key`` on a contiguous
    array of ``shape``."""
    memo = (shape, _hashable(key))
    g = _GEOMETRY.get(memo)
    if g is None:
        pos, flips = _ascending(shape, key)
        try:
            m = torch.empty(shape, device='meta')[pos]
        except IndexError as e:
            raise IndexError("index %r does not fit shape %s: %s" % (key, shape, e)) from None
        out_shape = tuple(m.shape)
        flips = [f for f in flips if out_shape[f] > 1]    # reversing one element is no reversal
        offset = m.storage_offset() if m.is_contiguous() and not flips else None
        g = (out_shape or (1,), offset)
        if len(_GEOMETRY) > 4096:
            _GEOMETRY.clear()
        _GEOMETRY[memo] = g
    return g


def _has_negative_step(key):
    if isinstance(key, slice):
        return key.step is not None and key.step < 0
    return isinstance(key, tuple) and any(isinstance(k, slice) and k.step is not None and
                                          k.step < 0 for k in key)


def _ascending(shape, key):
    """(``key`` with each negative-step slice replaced by the ascending slice of the same
    elements, the result axes to flip afterwards): torch has no negative steps."""
    if not _has_negative_step(key):
        return key, ()
    key = key if isinstance(key, tuple) else (key,)
    consuming = sum(1 for k in key if k is not None and k is not Ellipsis)
    out, flips, axis, oaxis = [], [], 0, 0
    for k in key:
        if k is Ellipsis:
            span = max(len(shape) - consuming, 0)
            axis, oaxis = axis + span, oaxis + span
        elif k is None:
            oaxis += 1
        elif isinstance(k, slice):
            if axis >= len(shape):
                raise IndexError("too many indices for an array of shape %s" % (shape,))
            if k.step is not None and k.step < 0:
                r = range(shape[axis])[k]
                k = slice(r[-1], r[0] + 1, -k.step) if len(r) else slice(0, 0)
                flips.append(oaxis)
            axis, oaxis = axis + 1, oaxis + 1
        else:
            axis += 1
        out.append(k)
    return tuple(out), tuple(flips)


def is_contiguous_key(key, shape):
    """Whether basic index ``key`` selects a contiguous part of a C-contiguous array of
    ``shape`` (then ``x[key]`` is a view sharing ``x``'s storage)."""
    return _geometry(tuple(shape), tuple(key) if isinstance(key, list) else key)[1] is not None


def getitem(x, key):
    if mode.tracing is not None and _is_basic(key):     # views are not operators: copy
        return invoke(registry.get('_getitem'), [x], {'key': key})
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and x._shape:
        return x._at(int(key))
    if isinstance(key, slice) and key.step in (None, 1) and x._shape:
        start, stop, _ = key.indices(x._shape[0])
        return x._slice0(start, max(start, stop))
    if _is_basic(key):
        shape, offset = _geometry(x._shape, key)
        if offset is not None:
            return _make(x._var, shape, x._dtype, x._ctx, (x._view or 0) + offset)
        op = registry.get('_getitem')
        return invoke(op, [x], {'key': key})
    template, arrays = _split_key(x, key)
    op = registry.get('_advanced_getitem')
    return invoke(op, [x] + arrays, {'key': template})


class _Slot:
    """Where the k-th index array goes in an advanced key."""
    __slots__ = ('k',)

    def __init__(self, k):
        self.k = k

    def __repr__(self):
        return '<index %d>' % self.k


def _split_key(x, key):
    arrays = []

    def conv(k):
        if isinstance(k, NDArray):
            arrays.append(k.as_in_context(x._ctx))
            return _Slot(len(arrays) - 1)
        if isinstance(k, (list, np.ndarray)):
            arrays.append(array(np.asarray(k), ctx=x._ctx, dtype='int64'))
            return _Slot(len(arrays) - 1)
        if isinstance(k, bool):
            raise IndexError("boolean scalar indices are not supported")
        return k
    if isinstance(key, tuple):
        return tuple(conv(k) for k in key), arrays
    return conv(key), arrays


def _fill(template, index_tensors):
    def back(k):
        if isinstance(k, _Slot):
            t = index_tensors[k.k]
            return t if t.dtype == torch.bool else t.long()
        return k
    if isinstance(template, tuple):
        return tuple(back(k) for k in template)
    return back(template)


def _getitem_kernel(data, key):
    pos, flips = _ascending(tuple(data.shape), key)
    out = data[pos]
    if flips:
        out = torch.flip(out, flips)
    return out.reshape(1) if out.dim() == 0 else out


def _flip_negative_steps(data, key):
    """(data flipped along the axes that ``key`` slices with a negative step, ``key`` with
    those slices made ascending): torch has no negative steps."""
    if not isinstance(key, tuple):
        key = (key,)
    if not any(isinstance(k, slice) and k.step is not None and k.step < 0 for k in key):
        return data, key
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    out, axis, flips = [], 0, []
    for k in key:
        if k is Ellipsis:
            axis += max(data.dim() - consumed, 0)
        elif k is not None:
            if isinstance(k, slice) and k.step is not None and k.step < 0:
                n = data.shape[axis]
                r = range(n)[k]
                k = slice(n - 1 - r[0], n - r[-1], -k.step) if len(r) else slice(0, 0)
                flips.append(axis)
            axis += 1
        out.append(k)
    return torch.flip(data, flips), tuple(out)


def _advanced_kernel(data, *indices, key):
    data, key = _flip_negative_steps(data, _fill(key, indices))
    out = data[key]
    return out.reshape(1) if out.dim() == 0 else out


register('_getitem', attrs={'key': Any()}, view=True)(_getitem_kernel)
register('_advanced_getitem', inputs=('data', '*index'), attrs={'key': Any()},
         view=True)(_advanced_kernel)


def setitem(x, key, value):
    _check_writable(x, None, (value,) if isinstance(value, NDArray) else ())
    reads = []
    if isinstance(value, NDArray):
        if value._ctx != x._ctx:
            value = value.as_in_context(x._ctx)
        reads.append(value._var)
    elif isinstance(value, numeric_types) and not isinstance(value, np.ndarray):
        value = float(value) if not isinstance(value, (bool, np.bool_)) else bool(value)
    else:
        value = array(value, ctx=x._ctx, dtype=x._dtype)
        reads.append(value._var)
    full = isinstance(key, slice) and key == slice(None)
    if (full and isinstance(value, NDArray) and value._var is x._var and
            (value._view or 0) == (x._view or 0) and value._shape == x._shape and
            value._dtype == x._dtype):
        # x[:] = x[:], what ``x[:] *= s`` ends with (the book's gradient clipping): the
        # value is already there, and copying an array onto itself would only cost a pass
        return
    if _is_basic(key):
        template, arrays = key, []
    else:
        template, arrays = _split_key(x, key)
        reads.extend(a._var for a in arrays)
    if not full:
        _check_shape(x, template, arrays, value)
    elif isinstance(value, NDArray) and value._shape != x._shape:
        _check_shape(x, template, arrays, value)
    flips = ()
    if not arrays and not full:
        template, flips = _ascending(x._shape, template)
    if not (full and x._view is None):
        # What the write leaves alone is part of the result: a partial write into a failed
        # array leaves it failed.
        reads.append(x._var)

    def fn():
        if full and x._view is None and x._var.tensor is None:
            # The operation that was to produce x failed: a full assignment gives it storage
            # again, as in MXNet.
            x._var.tensor = torch.empty(x._shape, dtype=dtype_torch(x._dtype),
                                        device=x._ctx.torch_device)
        dst = x._tensor(write=True)
        v = value._tensor() if isinstance(value, NDArray) else value
        if isinstance(v, torch.Tensor) and v.dtype != dst.dtype:
            v = v.to(dst.dtype)
        with torch.no_grad():
            if full:
                if isinstance(v, torch.Tensor):
                    while v.dim() > dst.dim() and v.shape[0] == 1:
                        v = v[0]        # leading 1s of the value are dropped, as MXNet does
                    dst.copy_(v)
                else:
                    dst.fill_(v)
            else:
                k = _fill(template, [a._tensor() for a in arrays]) if arrays else template
                sel = None
                if arrays and _has_negative_step(k):
                    # the positions the key selects, found on a flipped index grid
                    grid, k2 = _flip_negative_steps(
                        torch.arange(dst.numel(), device=dst.device).reshape(dst.shape), k)
                    sel = grid[k2]
                if isinstance(v, torch.Tensor) and v.dim() > 1:
                    rank = (dst[k] if sel is None else sel).dim()
                    while v.dim() > rank and v.shape[0] == 1:
                        v = v[0]        # leading 1s of the value are dropped, as MXNet does
                if flips and isinstance(v, torch.Tensor):
                    v = torch.flip(v.expand(dst[k].shape), flips)
                if sel is not None:
                    flat = dst.view(-1)
                    flat[sel.reshape(-1)] = (v.expand(sel.shape).reshape(-1)
                                             if isinstance(v, torch.Tensor) else v)
                else:
                    dst[k] = v
    _engine.push(fn, reads, [x._var], x._ctx, '_set_value' if full else '_slice_assign')


def _check_shape(x, key, arrays, value):
    """Raises now, in the caller's thread, when the index does not fit the array or the value
    cannot be assigned to the selection."""
    if not arrays:
        target = _geometry(x._shape, key)[0]      # memoised; raises IndexError
    else:
        m, k = _flip_negative_steps(torch.empty(x._shape, device='meta'), _fill(
            key, [torch.zeros(a._shape, dtype=torch.long, device='meta') for a in arrays]))
        try:
            target = tuple(m[k].shape)
        except IndexError as e:
            raise IndexError("index %r does not fit shape %s: %s" % (key, x._shape, e)) from None
    if not isinstance(value, NDArray):
        return
    vshape = tuple(value._shape)
    while len(vshape) > len(target) and vshape[0] == 1:
        vshape = vshape[1:]     # torch drops leading 1s of the value, as MXNet does
    try:
        ok = tuple(torch.broadcast_shapes(vshape, target)) == target
    except RuntimeError:
        ok = False
    if not ok:
        raise MXNetError("__setitem__: cannot assign a value of shape %s to index %r of an array "
                         "of shape %s (the selection has shape %s)"
                         % (value._shape, key, x._shape, target))


_ndarray._getitem = getitem        # x[key] and x[key] = value call them
_ndarray._setitem = setitem
