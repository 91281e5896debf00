"""NumPy indexing of ``mx.np.ndarray``: ``a[key]`` and ``a[key] = value``.

Basic indexing (integers, slices, ``None``, ``...``) gives a view sharing storage when the
result is contiguous (``a[1]``, ``a[2:4]``, ``a[1, 2]`` as a 0-d array) and otherwise a copy
made by ``_npi_index``; integer, list and array indices (advanced indexing) go through
``_npi_advanced_index``; a boolean array selects the elements where it is true. All of them
are operators, so they are recorded by autograd and by a hybridizing trace. Assignment
writes in place.

>>> from neomx import np
>>> a = np.arange(12).reshape(3, 4)
>>> a[1, 2]
array(6.)
>>> a[:, [0, 3]].shape
(3, 2)
>>> a[a > 9].tolist()
[10.0, 11.0]
"""
import numpy as onp
import torch

from ..base import MXNetError, mode
from ..ndarray.indexing import _ascending, setitem as _nd_setitem
from ..ndarray.ndarray import NDArray, _make, invoke
from ..ops import registry
from ..ops.numpy import Lit, np_register

__all__ = ['getitem', 'setitem']

_INT = (int, onp.integer)
_INTS = ('int8', 'uint8', 'int16', 'int32', 'int64')


# -- keys as attributes -------------------------------------------------------------------------
# An index key as a Python literal (hashable, and readable back from symbol JSON): an integer,
# None (new axis), '...', ('slice', start, stop, step) or ('index', k) for the k-th array input.

def _encode(k):
    if isinstance(k, slice):
        return ('slice', _int_or_none(k.start), _int_or_none(k.stop), _int_or_none(k.step))
    if k is Ellipsis:
        return '...'
    if k is None:
        return None
    if isinstance(k, _Slot):
        return ('index', k.k)
    return int(k)


def _int_or_none(v):
    if v is None:
        return None
    if isinstance(v, NDArray):
        return int(v.item())
    return int(v)


def _decode(k, arrays=()):
    if isinstance(k, tuple):
        if k[0] == 'slice':
            return slice(k[1], k[2], k[3])
        t = arrays[k[1]]
        return t if t.dtype == torch.bool else t.long()
    if k == '...':
        return Ellipsis
    return k


class _Slot:
    __slots__ = ('k',)

    def __init__(self, k):
        self.k = k


def _basic_kernel(data, key):
    k = tuple(_decode(x) for x in key)
    pos, flips = _ascending(tuple(data.shape), k)
    out = data[pos]
    if flips:
        out = torch.flip(out, flips)
    return out


def _advanced_kernel(data, *indices, key):
    k = tuple(_decode(x, indices) for x in key)
    if any(isinstance(x, slice) and x.step is not None and x.step < 0 for x in k):
        data, k = _reverse_slices(data, k)
    return data[k]


def _reverse_slices(data, key):
    """(``data`` with each negative-step slice of ``key`` applied to its axis, ``key`` with
    those slices made ``:``): torch has no negative steps, and taking them first keeps the
    placement of the advanced indices' axes."""
    def span(k):
        if k is None:
            return 0
        if isinstance(k, torch.Tensor) and k.dtype == torch.bool:
            return max(k.dim(), 1)
        return 1
    consuming = sum(span(k) for k in key if k is not Ellipsis)
    out, axis = [], 0
    for k in key:
        if k is Ellipsis:
            axis += max(data.dim() - consuming, 0)
        elif isinstance(k, slice) and k.step is not None and k.step < 0:
            r = range(data.shape[axis])[k]
            if len(r):
                data = data.narrow(axis, r[-1], r[0] - r[-1] + 1)
                data = torch.flip(data[(slice(None),) * axis + (slice(None, None, -k.step),)],
                                  (axis,))
            else:
                data = data.narrow(axis, 0, 0)
            k = slice(None)
        axis += span(k) if k is not Ellipsis else 0
        out.append(k)
    return data, tuple(out)


np_register('_npi_index', inputs=('data',), view=True, attrs={'key': Lit(())})(_basic_kernel)
np_register('_npi_advanced_index', inputs=('data', '*indices'), view=True,
            attrs={'key': Lit(())})(_advanced_kernel)


def _boolean_kernel(data, index, axis, size):
    if axis:
        data = data.movedim(axis, 0)
        out = data[index]
        return out.movedim(0, axis)
    return data[index]


def _boolean_rule(attrs, shapes, dtypes):
    shape, ishape = shapes
    axis, n = attrs['axis'], len(ishape)
    if tuple(shape[axis:axis + n]) != tuple(ishape):
        raise registry.ShapeError("boolean index of shape %s does not match the indexed "
                                  "dimensions %s" % (ishape, shape[axis:axis + n]))
    out = tuple(shape[:axis]) + (attrs['size'],) + tuple(shape[axis + n:])
    return (out,), (dtypes[0],)


np_register('_npi_boolean_mask', inputs=('data', 'index'), view=True, infer=_boolean_rule,
            attrs={'axis': Lit(0), 'size': Lit(0)})(_boolean_kernel)


# -- getitem -------------------------------------------------------------------------------------

_BASIC = (int, onp.integer, slice, type(Ellipsis), type(None))
_GEOMETRY = {}


def _is_basic(key):
    return all(isinstance(k, _BASIC) and not isinstance(k, (bool, onp.bool_)) for k in key)


def _geometry(shape, key):
    """(shape, storage offset or None) of basic ``key`` on a contiguous array of ``shape``."""
    memo = (shape, key)
    g = _GEOMETRY.get(memo)
    if g is None:
        k = tuple(_decode(x) for x in key)
        pos, flips = _ascending(shape, k)
        try:
            m = torch.empty(shape, device='meta')[pos]
        except IndexError as e:
            raise IndexError("index %s is out of bounds for an array of shape %s: %s"
                             % (_show(k), shape, e)) from None
        offset = m.storage_offset() if m.is_contiguous() and not flips else None
        g = (tuple(m.shape), offset)
        if len(_GEOMETRY) > 4096:
            _GEOMETRY.clear()
        _GEOMETRY[memo] = g
    return g


def _show(k):
    return k[0] if len(k) == 1 else k


def _as_tuple(key):
    if isinstance(key, tuple):
        return key
    return (key,)


def _np_class():
    from .multiarray import ndarray
    return ndarray


def _wrap(r):
    cls = _np_class()
    if isinstance(r, list):
        for o in r:
            o.__class__ = cls
    else:
        r.__class__ = cls
    return r


def _index_array(k, x):
    from .multiarray import array, ndarray
    if isinstance(k, NDArray):
        a = k if k.__class__ is ndarray else k.as_np_ndarray()
        return a.as_in_context(x._ctx)
    a = onp.asarray(k)
    if a.dtype == onp.bool_:
        return array(a, dtype='bool', ctx=x._ctx)
    if a.dtype.kind not in 'iu' and a.size:
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
                         "and integer or boolean arrays are valid indices")
    return array(a, dtype='int64', ctx=x._ctx)


def getitem(x, key):
    """``x[key]`` with NumPy's rules (see the module docstring)."""
    if isinstance(key, range):
        key = list(key)
    if isinstance(key, list) and not any(isinstance(k, (list, tuple, slice, NDArray,
                                                        onp.ndarray)) or k is None
                                         or k is Ellipsis for k in key):
        key = onp.asarray(key)
    key = _as_tuple(key)
    if any(isinstance(k, NDArray) and k.ndim == 0 and k._dtype in _INTS for k in key):
        # a 0-d integer array is an integer index (basic indexing), as in NumPy
        key = tuple(int(k.item()) if isinstance(k, NDArray) and k.ndim == 0 and
                    k._dtype in _INTS else k for k in key)
    if _is_basic(key):
        ekey = tuple(_encode(k) for k in key)
        shape, offset = _geometry(x._shape, ekey)
        if offset is not None and mode.tracing is None:
            out = _make(x._var, shape, x._dtype, x._ctx, (x._view or 0) + offset)
            return _wrap(out)
        return _wrap(invoke(registry.get('_npi_index'), (x,), {'key': ekey}))
    arrays, template = [], []
    for k in key:
        if isinstance(k, (bool, onp.bool_)):
            k = onp.asarray(k)
        if isinstance(k, (NDArray, list, tuple, range, onp.ndarray)):
            # inside the key, a tuple or a range is an index list, as in NumPy
            arrays.append(_index_array(list(k) if isinstance(k, range) else k, x))
            template.append(_Slot(len(arrays) - 1))
        else:
            template.append(k)
    if any(a._dtype == 'bool' for a in arrays):
        return _boolean(x, template, arrays)
    ekey = tuple(_encode(k) for k in template)
    return _wrap(invoke(registry.get('_npi_advanced_index'), [x] + arrays, {'key': ekey}))


def _boolean(x, template, arrays):
    """``x[key]`` with boolean arrays in ``key``: NumPy's meaning, each boolean array replaced
    by the integer arrays of its true positions (read now: they give the result's shape)."""
    from .multiarray import array
    consumed = sum(arrays[k.k].ndim if isinstance(k, _Slot) and arrays[k.k]._dtype == 'bool'
                   else (0 if k is None or k is Ellipsis else 1) for k in template)
    axis, new_template, new_arrays, empty = 0, [], [], False
    for k in template:
        if k is Ellipsis:
            axis += x.ndim - consumed
            new_template.append(k)
            continue
        if not isinstance(k, _Slot):
            axis += 0 if k is None else 1
            new_template.append(k)
            continue
        a = arrays[k.k]
        if a._dtype != 'bool':
            new_arrays.append(a)
            new_template.append(_Slot(len(new_arrays) - 1))
            axis += 1
            continue
        if a.ndim == 0:                 # a[True] adds an axis; a[False] an empty one
            new_template.append(None)
            empty = empty or not bool(a.asnumpy())
            continue
        if axis + a.ndim > x.ndim or tuple(x._shape[axis:axis + a.ndim]) != a._shape:
            raise IndexError("boolean index did not match indexed array along dimension %d; "
                             "dimension is %s but corresponding boolean dimension is %s"
                             % (axis, x._shape[axis:axis + a.ndim], a._shape))
        pos = onp.nonzero(a.asnumpy())
        for p in pos:
            new_arrays.append(array(p, dtype='int64', ctx=x._ctx))
            new_template.append(_Slot(len(new_arrays) - 1))
        axis += a.ndim
    ekey = tuple(_encode(k) for k in new_template)
    if new_arrays:
        out = invoke(registry.get('_npi_advanced_index'), [x] + new_arrays, {'key': ekey})
    else:
        out = invoke(registry.get('_npi_index'), (x,), {'key': ekey})
    out = _wrap(out)
    if empty:
        first_new = next(i for i, k in enumerate(new_template) if k is None)
        out = out[(slice(None),) * first_new + (slice(0, 0),)]
    return out


def symbolic_getitem(sym, key):
    """``sym[key]`` for an mx.np symbol: basic keys only (integers, slices, None, ...)."""
    key = _as_tuple(key)
    if not _is_basic(key):
        raise NotImplementedError("symbolic indexing supports integers, slices, None and "
                                  "Ellipsis only, got %r" % (key,))
    from ..symbol.numpy import apply
    return apply(registry.get('_npi_index'), (sym,), {'key': tuple(_encode(k) for k in key)})


# -- setitem -------------------------------------------------------------------------------------

def setitem(x, key, value):
    """``x[key] = value``, in place, broadcasting ``value`` (an array, NumPy array, list or
    number) to the selection."""
    from .multiarray import array
    if isinstance(value, (list, tuple, onp.ndarray, onp.generic)) and not isinstance(
            value, (onp.bool_,)) and not isinstance(value, onp.generic):
        value = array(value, dtype=x._dtype, ctx=x._ctx)
    elif isinstance(value, onp.generic):
        value = value.item()
    if mode.recording and isinstance(value, NDArray) and value._var.leaves:
        raise MXNetError("Inplace operations (+=, -=, x[:]=, etc) are not supported when "
                         "recording with autograd: x[%r] = value with a value in the recorded "
                         "graph" % (key,))
    if isinstance(key, list):
        key = onp.asarray(key)
    tkey = _as_tuple(key)
    scalars = [k for k in tkey if isinstance(k, (bool, onp.bool_)) or
               isinstance(k, NDArray) and k._dtype == 'bool' and k.ndim == 0]
    if scalars:
        # NumPy: a True index adds an axis of length 1, a False one selects nothing
        if not all(bool(k) for k in scalars):
            return
        tkey = tuple(k for k in tkey if not any(k is s for s in scalars))
        key = tkey
    masks = [k for k in tkey if isinstance(k, NDArray) and k._dtype == 'bool' or
             isinstance(k, onp.ndarray) and k.dtype == onp.bool_]
    if masks:
        _set_boolean(x, tkey, value)
        return
    conv = []
    for k in tkey:
        if isinstance(k, NDArray):
            k = k.as_nd_ndarray() if k.ndim else int(k.item())
        conv.append(k)
    key = tuple(conv) if isinstance(key, tuple) or len(conv) != 1 else conv[0]
    if not x._shape:
        if key not in ((), Ellipsis, slice(None)):
            raise IndexError("too many indices for array: array is 0-dimensional")
        _set_whole(x, value)
        return
    _nd_setitem(x, key, value)


def _set_whole(x, value):
    from .. import engine as _engine
    from ..ndarray.ndarray import _check_writable
    _check_writable(x)
    reads = [value._var] if isinstance(value, NDArray) else []

    def fn():
        dst = x._tensor(write=True)
        with torch.no_grad():
            if isinstance(value, NDArray):
                dst.copy_(value._tensor().reshape(dst.shape).to(dst.dtype))
            else:
                dst.fill_(value)
    _engine.push(fn, reads, [x._var], x._ctx, '_npi_set_value')


def _set_boolean(x, key, value):
    from .. import engine as _engine
    from ..ndarray.ndarray import _check_writable
    from .multiarray import array
    _check_writable(x)
    conv, reads = [], []
    for k in key:
        if isinstance(k, onp.ndarray):
            k = array(k, dtype='bool', ctx=x._ctx)
        if isinstance(k, NDArray):
            reads.append(k._var)
        conv.append(k)
    if isinstance(value, NDArray):
        reads.append(value._var)

    def fn():
        dst = x._tensor(write=True)
        k = tuple(c._tensor() if isinstance(c, NDArray) else c for c in conv)
        v = value._tensor().to(dst.dtype) if isinstance(value, NDArray) else value
        with torch.no_grad():
            try:
                dst[k] = v
            except RuntimeError as e:
                raise MXNetError("__setitem__ with a boolean index: %s" % e) from None
    _engine.push(fn, reads, [x._var], x._ctx, '_npi_boolean_mask_assign')
