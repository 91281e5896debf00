"""The functions of ``mx.np`` beyond the core of multiarray.py: elementwise maths, arrangement,
products, statistics and the helpers built on them. Each pushes registry operators, except
those whose result's shape depends on the values (``nonzero``, ``unique``, ``bincount``...),
which read their input and compute at once, as MXNet does."""
import builtins
import numbers

import numpy as onp
import torch

from ..base import MXNetError, dtype_name
from ..ndarray.ndarray import NDArray
from ..util import set_module, wrap_np_unary_func
from .multiarray import (_as_np, _axis, _binary, _ctx, _device_of, _dt, _invoke, _is_real,
                         _np, _shape_arg, array, concatenate, full_like, ndarray, reshape,
                         split, stack, transpose, zeros)

__all__ = ['absolute', 'abs', 'fabs', 'negative', 'positive', 'sign', 'square', 'rint', 'fix',
           'trunc', 'floor', 'ceil', 'exp', 'expm1', 'log', 'log1p', 'log2', 'log10', 'sqrt',
           'cbrt', 'sin', 'cos', 'tan', 'arcsin', 'arccos', 'arctan', 'sinh', 'cosh', 'tanh',
           'arcsinh', 'arccosh', 'arctanh', 'degrees', 'radians', 'rad2deg', 'deg2rad',
           'reciprocal', 'logical_not', 'isnan', 'isinf', 'isfinite', 'isposinf', 'isneginf',
           'signbit', 'bitwise_not', 'invert', 'around', 'round', 'round_', 'swapaxes',
           'moveaxis', 'rollaxis', 'repeat', 'tile', 'broadcast_to', 'broadcast_arrays', 'flip',
           'flipud', 'fliplr', 'roll', 'rot90', 'tril', 'triu', 'tri', 'diag', 'diagflat',
           'diagonal', 'trace', 'take', 'take_along_axis', 'where', 'clip', 'cumsum', 'cumprod',
           'sort', 'argsort', 'msort', 'diff', 'ediff1d', 'atleast_1d', 'atleast_2d',
           'atleast_3d', 'hstack', 'vstack', 'row_stack', 'dstack', 'column_stack', 'append',
           'insert', 'delete', 'pad', 'nan_to_num', 'tensordot', 'inner', 'outer', 'vdot',
           'kron', 'cross', 'einsum', 'polyval', 'indices', 'resize', 'hanning', 'hamming',
           'blackman', 'meshgrid', 'unravel_index', 'average', 'percentile', 'quantile',
           'median', 'nonzero', 'argwhere', 'flatnonzero', 'count_nonzero', 'unique',
           'bincount', 'histogram', 'isclose', 'allclose', 'array_equal', 'array_equiv',
           'diag_indices_from', 'tril_indices', 'triu_indices', 'ptp', 'ravel',
           'result_type', 'promote_types', 'can_cast', 'isscalar', 'ix_', 'interp',
           'nanmax', 'nanmin', 'nansum', 'nanprod', 'searchsorted', 'empty_like_shape',
           'heaviside', 'divmod', 'modf', 'frexp', 'spacing', 'real', 'sinc', 'set_printoptions']


def _unary(name, opname=None, doc=None):
    opname = opname or '_npi_' + name

    @set_module('mxnet.numpy')
    def fn(x, out=None, **kwargs):
        if isinstance(x, NDArray):
            return _invoke(opname, (_as_np(x),), out=out)
        if _is_real(x) or isinstance(x, (onp.ndarray, list, tuple)):
            return _invoke(opname, (array(x, dtype=_host(x)),), out=out)
        raise TypeError("%s: expected an mxnet.numpy.ndarray or a number, got %s"
                        % (name, type(x).__name__))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or "Elementwise %s." % name
    return wrap_np_unary_func(fn)


def _host(x):
    if isinstance(x, onp.ndarray):
        return dtype_name(x.dtype) if x.dtype != onp.float64 else 'float64'
    return None


absolute = _unary('absolute')
abs = absolute  # pylint: disable=redefined-builtin
fabs = _unary('fabs', '_npi_absolute')
negative = _unary('negative')
sign = _unary('sign')
square = _unary('square')
rint = _unary('rint')
fix = _unary('fix')
trunc = _unary('trunc')
floor = _unary('floor')
ceil = _unary('ceil')
exp = _unary('exp')
expm1 = _unary('expm1')
log = _unary('log')
log1p = _unary('log1p')
log2 = _unary('log2')
log10 = _unary('log10')
sqrt = _unary('sqrt')
cbrt = _unary('cbrt')
sin = _unary('sin')
cos = _unary('cos')
tan = _unary('tan')
arcsin = _unary('arcsin')
arccos = _unary('arccos')
arctan = _unary('arctan')
sinh = _unary('sinh')
cosh = _unary('cosh')
tanh = _unary('tanh')
arcsinh = _unary('arcsinh')
arccosh = _unary('arccosh')
arctanh = _unary('arctanh')
degrees = _unary('degrees')
radians = _unary('radians')
rad2deg = _unary('rad2deg')
deg2rad = _unary('deg2rad')
reciprocal = _unary('reciprocal')
logical_not = _unary('logical_not')
isnan = _unary('isnan')
isinf = _unary('isinf')
isfinite = _unary('isfinite')
isposinf = _unary('isposinf')
isneginf = _unary('isneginf')
signbit = _unary('signbit')
bitwise_not = _unary('bitwise_not')
invert = bitwise_not


def positive(x, out=None, **kwargs):
    """``+x``: a copy."""
    return _as_np(x).copy()


def around(x, decimals=0, out=None, **kwargs):
    """``x`` rounded to ``decimals`` (halves to even, as NumPy)."""
    x = _as_np(x)
    if decimals == 0:
        return _invoke('_npi_around', (x,), out=out)
    return _invoke('_npi_round', (x,), out=out, decimals=int(decimals))


round = around  # pylint: disable=redefined-builtin
round_ = around


def sinc(x):
    """``sin(pi x) / (pi x)``, 1 at 0."""
    x = _as_np(x)
    y = x * onp.pi
    return where(x == 0, 1.0, sin(y) / where(x == 0, 1.0, y))


def real(x):
    """The real part (neomx arrays are real)."""
    return _as_np(x)


# -- arrangement --------------------------------------------------------------------------------

def swapaxes(a, axis1, axis2):
    """``a`` with axes ``axis1`` and ``axis2`` exchanged."""
    return _invoke('_npi_swapaxes', (_as_np(a),), dim1=int(axis1), dim2=int(axis2))


def moveaxis(a, source, destination):
    """``a`` with axes ``source`` moved to ``destination``."""
    return _invoke('_np_moveaxis', (_as_np(a),), source=_axis(source),
                   destination=_axis(destination))


def rollaxis(a, axis, start=0):
    """``a`` with ``axis`` moved before position ``start``."""
    a = _as_np(a)
    n = a.ndim
    axis = axis % n if -n <= axis < n else axis
    start = start + n if start < 0 else start
    if start > axis:
        start -= 1
    if axis == start:
        return a
    return moveaxis(a, axis, start)


def repeat(a, repeats, axis=None):
    """Each element of ``a`` repeated ``repeats`` times along ``axis``."""
    if isinstance(repeats, NDArray):
        repeats = repeats.asnumpy().tolist()
    reps = int(repeats) if isinstance(repeats, (int, onp.integer)) else tuple(int(r) for r
                                                                                in repeats)
    return _invoke('_np_repeat', (_as_np(a),), repeats=reps, axis=axis)


def tile(A, reps):
    """``A`` repeated ``reps`` times per axis."""
    reps = (int(reps),) if isinstance(reps, (int, onp.integer)) else tuple(int(r) for r in reps)
    return _invoke('_npi_tile', (_as_np(A),), reps=reps)


def broadcast_to(array, shape):  # pylint: disable=redefined-outer-name
    """``array`` broadcast to ``shape``."""
    a = _as_np(array)
    shape = _shape_arg(shape)
    try:
        return _invoke('_npi_broadcast_to', (a,), shape=shape)
    except MXNetError as e:
        raise ValueError(str(e)) from None


def broadcast_arrays(*args):
    """The arrays broadcast to their common shape."""
    arrays = [_as_np(a) for a in args]
    shape = tuple(torch.broadcast_shapes(*[a.shape for a in arrays]))
    return [broadcast_to(a, shape) for a in arrays]


def flip(m, axis=None, out=None):
    """``m`` with the order of elements along ``axis`` (all axes when None) reversed."""
    if _is_real(m):
        return m
    return _invoke('_npi_flip', (_as_np(m),), out=out, axis=_axis(axis))


def flipud(m):
    """``flip(m, 0)``."""
    m = _as_np(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


def fliplr(m):
    """``flip(m, 1)``."""
    m = _as_np(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


def roll(a, shift, axis=None):
    """Elements of ``a`` shifted by ``shift`` along ``axis`` (of the flattened array when None)."""
    shift = int(shift) if isinstance(shift, (int, onp.integer)) else tuple(int(s) for s in shift)
    return _invoke('_np_roll', (_as_np(a),), shift=shift, axis=_axis(axis))


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    return _invoke('_npi_rot90', (_as_np(m),), k=int(k), axes=axes)


def tril(m, k=0):
    """``m`` with the elements above diagonal ``k`` zeroed."""
    return _invoke('_npi_tril', (_as_np(m),), k=int(k), lower=True)


def triu(m, k=0):
    """``m`` with the elements below diagonal ``k`` zeroed."""
    return _invoke('_npi_tril', (_as_np(m),), k=int(k), lower=False)


def tri(N, M=None, k=0, dtype=None, ctx=None):
    """A lower-triangular matrix of ones."""
    from .multiarray import ones
    return tril(ones((N, N if M is None else M), dtype=dtype, ctx=ctx), k)


def diag(v, k=0):
    """The diagonal of a matrix, or the matrix with vector ``v`` on its diagonal."""
    return _invoke('_np_diag', (_as_np(v),), k=int(k))


def diagflat(v, k=0):
    """A matrix with the flattened ``v`` on diagonal ``k``."""
    return _invoke('_np_diagflat', (_as_np(v),), k=int(k))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of ``a`` in the plane of ``axis1`` and ``axis2``."""
    return _invoke('_np_diagonal', (_as_np(a),), offset=int(offset), axis1=int(axis1),
                   axis2=int(axis2))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum along a diagonal."""
    return _invoke('_np_trace', (_as_np(a),), out=out, offset=int(offset), axis1=int(axis1),
                   axis2=int(axis2))


def take(a, indices, axis=None, mode='raise', out=None):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array when None)."""
    a = _as_np(a)
    if mode not in ('raise', 'wrap', 'clip'):
        raise ValueError("take: mode must be 'raise', 'wrap' or 'clip', got %r" % (mode,))
    idx = _as_np(indices, ctx=a._ctx, dtype='int64') if not isinstance(indices, NDArray) \
        else _as_np(indices)
    return _invoke('_npi_take', (a, idx), out=out, axis=axis, mode=mode)


def take_along_axis(arr, indices, axis):
    """Values of ``arr`` at ``indices`` along ``axis``."""
    return _invoke('_npi_take_along_axis', (_as_np(arr), _as_np(indices, dtype='int64')),
                   axis=axis)


def where(condition, x=None, y=None):
    """Elements of ``x`` where ``condition`` holds, of ``y`` elsewhere; with one argument,
    ``nonzero(condition)``."""
    if x is None and y is None:
        return nonzero(condition)
    cond = _as_np(condition)
    xa, ya = isinstance(x, NDArray), isinstance(y, NDArray)
    if xa and ya:
        return _invoke('_npi_where', (cond, _as_np(x), _as_np(y)))
    if ya and _is_real(x):
        return _invoke('_npi_where_scalar', (cond, _as_np(y)), scalar=_num(x), lscalar=True)
    if xa and _is_real(y):
        return _invoke('_npi_where_scalar', (cond, _as_np(x)), scalar=_num(y), lscalar=False)
    if _is_real(x) and _is_real(y):
        dt = 'float32' if isinstance(x, float) or isinstance(y, float) else 'int64'
        if isinstance(x, (bool, onp.bool_)) and isinstance(y, (bool, onp.bool_)):
            dt = 'bool'
        return _invoke('_npi_where_scalar2', (cond,), x=_num(x), y=_num(y), dtype=dt)
    return where(cond, _as_np(x, ctx=cond._ctx), _as_np(y, ctx=cond._ctx))


def _num(v):
    return v.item() if isinstance(v, onp.generic) else v


def clip(a, a_min=None, a_max=None, out=None):
    """``a`` with values below ``a_min`` and above ``a_max`` replaced by them."""
    a = _as_np(a)
    if isinstance(a_min, NDArray) or isinstance(a_max, NDArray):
        lo = _as_np(a_min) if isinstance(a_min, NDArray) else full_like(a, -onp.inf if a_min
                                                                          is None else a_min)
        hi = _as_np(a_max) if isinstance(a_max, NDArray) else full_like(a, onp.inf if a_max
                                                                         is None else a_max)
        return _invoke('_npi_clip_arrays', (a, lo, hi), out=out)
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    return _invoke('_npi_clip', (a,), out=out,
                   a_min=None if a_min is None else float(a_min),
                   a_max=None if a_max is None else float(a_max))


def cumsum(a, axis=None, dtype=None, out=None):
    """Running sums along ``axis`` (of the flattened array when None)."""
    return _invoke('_np_cumsum', (_as_np(a),), out=out, axis=_axis(axis), dtype=_dt(dtype))


def cumprod(a, axis=None, dtype=None, out=None):
    """Running products along ``axis``."""
    return _invoke('_npi_cumprod', (_as_np(a),), out=out, axis=_axis(axis), dtype=_dt(dtype))


def sort(a, axis=-1, kind=None, order=None):
    """A sorted copy of ``a`` (stable)."""
    return _invoke('_npi_sort', (_as_np(a),), axis=_axis(axis))


def argsort(a, axis=-1, kind=None, order=None):
    """Indices that sort ``a`` along ``axis`` (stable), int64."""
    return _invoke('_npi_argsort', (_as_np(a),), axis=_axis(axis))


def msort(a):
    """``sort(a, axis=0)``."""
    return sort(a, axis=0)


def diff(a, n=1, axis=-1, prepend=None, append=None):  # pylint: disable=redefined-outer-name
    """The ``n``-th discrete difference along ``axis``."""
    a = _as_np(a)
    if prepend is not None or append is not None:
        parts = []
        if prepend is not None:
            parts.append(broadcast_to(_as_np(prepend), _with_axis(a.shape, axis, 1))
                         if _is_real(prepend) else _as_np(prepend))
        parts.append(a)
        if append is not None:
            parts.append(broadcast_to(_as_np(append), _with_axis(a.shape, axis, 1))
                         if _is_real(append) else _as_np(append))
        a = concatenate(parts, axis=axis)
    if n < 0:
        raise ValueError("order must be non-negative but got %d" % n)
    return _invoke('_npi_diff', (a,), n=int(n), axis=int(axis))


def _with_axis(shape, axis, size):
    s = list(shape)
    s[axis] = size
    return tuple(s)


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened ``ary``, with ``to_begin``
    and ``to_end`` around them."""
    a = _as_np(ary)
    ins, attrs = [a, None, None], {}
    for k, v in (('to_end', to_end), ('to_begin', to_begin)):
        if v is None:
            continue
        if _is_real(v):
            attrs[k + '_scalar'] = _num(v)
        else:
            ins[1 if k == 'to_end' else 2] = _as_np(v, ctx=a._ctx)
    if ins[1] is None and ins[2] is not None:
        attrs['to_end_scalar'] = attrs.get('to_end_scalar')
    if (ins[1] is None) != (ins[2] is None):
        # one array and maybe one scalar: concatenate here instead
        d = _invoke('_npi_ediff1d', (a, None, None))
        parts = []
        if to_begin is not None:
            parts.append(_as_np(to_begin, ctx=a._ctx).reshape(-1).astype(d.dtype)
                         if not _is_real(to_begin) else array([to_begin], dtype=d.dtype))
        parts.append(d)
        if to_end is not None:
            parts.append(_as_np(to_end, ctx=a._ctx).reshape(-1).astype(d.dtype)
                         if not _is_real(to_end) else array([to_end], dtype=d.dtype))
        return concatenate(parts)
    return _invoke('_npi_ediff1d', tuple(ins), **attrs)


def atleast_1d(*arys):
    """Each input as an array of at least 1 dimension."""
    r = [_invoke('_npi_atleast_nd', (_as_np(a),), ndim=1) for a in arys]
    return r[0] if len(r) == 1 else r


def atleast_2d(*arys):
    """Each input as an array of at least 2 dimensions."""
    r = [_invoke('_npi_atleast_nd', (_as_np(a),), ndim=2) for a in arys]
    return r[0] if len(r) == 1 else r


def atleast_3d(*arys):
    """Each input as an array of at least 3 dimensions."""
    r = [_invoke('_npi_atleast_nd', (_as_np(a),), ndim=3) for a in arys]
    return r[0] if len(r) == 1 else r


def hstack(arrays):
    """Arrays joined along axis 1 (axis 0 for 1-d arrays)."""
    arrs = [atleast_1d(a) for a in arrays]
    return concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1)


def vstack(arrays, out=None):
    """Arrays joined along axis 0 (1-d arrays as rows)."""
    return concatenate([atleast_2d(a) for a in arrays], axis=0, out=out)


row_stack = vstack


def dstack(arrays):
    """Arrays joined along axis 2."""
    return concatenate([atleast_3d(a) for a in arrays], axis=2)


def column_stack(tup):
    """1-d arrays as columns of a 2-d array; 2-d arrays joined along axis 1."""
    arrs = []
    for a in tup:
        a = _as_np(a)
        arrs.append(a.reshape(-1, 1) if a.ndim < 2 else a)
    return concatenate(arrs, axis=1)


def append(arr, values, axis=None):  # pylint: disable=redefined-outer-name
    """``values`` appended to ``arr`` (flattened when ``axis`` is None)."""
    arr, values = _as_np(arr), _as_np(values)
    if axis is None:
        return concatenate([arr.reshape(-1), values.reshape(-1)], axis=0)
    return concatenate([arr, values], axis=axis)


def insert(arr, obj, values, axis=None):
    """``values`` inserted into ``arr`` before ``obj`` along ``axis``."""
    arr = _as_np(arr)
    if isinstance(obj, slice):
        n = arr.size if axis is None else arr.shape[axis]
        obj = tuple(range(n)[obj])
    elif isinstance(obj, NDArray):
        obj = obj.asnumpy().tolist()
        obj = tuple(obj) if isinstance(obj, list) else int(obj)
    elif isinstance(obj, (list, tuple, onp.ndarray)):
        obj = tuple(int(o) for o in onp.asarray(obj).reshape(-1))
    else:
        obj = int(obj)
    vals = _as_np(values, ctx=arr._ctx, dtype=arr._dtype) if not isinstance(values, NDArray) \
        else _as_np(values)
    return _invoke('_npi_insert', (arr, vals), obj=obj, axis=axis)


def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` along ``axis``."""
    arr = _as_np(arr)
    index_array = True
    if isinstance(obj, slice):
        n = arr.size if axis is None else arr.shape[axis]
        obj = tuple(range(n)[obj])
    elif isinstance(obj, NDArray):
        obj = obj.asnumpy().tolist()
        obj, index_array = (tuple(obj), True) if isinstance(obj, list) else (int(obj), False)
    elif isinstance(obj, (list, tuple, onp.ndarray)):
        obj = tuple(int(o) for o in onp.asarray(obj).reshape(-1))
    else:
        obj, index_array = int(obj), False
    return _invoke('_npi_delete', (arr,), obj=obj, axis=axis, index_array=index_array)


def pad(x, pad_width=None, mode='constant', **kwargs):  # pylint: disable=redefined-outer-name
    """``x`` padded by ``pad_width`` with ``mode`` ('constant', 'edge', 'reflect', 'symmetric',
    'wrap', 'maximum', 'minimum', 'mean', 'median')."""
    x = _as_np(x)
    if isinstance(pad_width, NDArray):
        pad_width = pad_width.asnumpy()
    if isinstance(pad_width, onp.ndarray):
        pad_width = pad_width.tolist()
    pw = pad_width
    if isinstance(pw, (list, tuple)):
        pw = tuple(tuple(int(v) for v in p) if isinstance(p, (list, tuple)) else int(p)
                   for p in pw)
    else:
        pw = int(pw)
    cv = kwargs.get('constant_values', 0)
    return _invoke('_npi_pad', (x,), pad_width=pw, mode=mode,
                   constant_values=_num(cv) if _is_real(cv) else cv,
                   reflect_type=kwargs.get('reflect_type', 'even'))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None, **kwargs):  # pylint: disable=redefined-outer-name
    """``x`` with NaN and infinities replaced by finite numbers."""
    if _is_real(x):
        return onp.nan_to_num(x, copy, nan, posinf, neginf)
    x = _as_np(x)
    return _invoke('_npi_nan_to_num', (x,), out=None if copy else x, copy=copy,
                   nan=float(nan), posinf=None if posinf is None else float(posinf),
                   neginf=None if neginf is None else float(neginf))


def tensordot(a, b, axes=2):
    """The sum of products over ``axes`` of ``a`` and ``b``."""
    a, b = _as_np(a), _as_np(b)
    if isinstance(axes, (int, onp.integer)):
        return _invoke('_npi_tensordot_int_axes', (a, b), axes=int(axes))
    else:
        a_axes, b_axes = axes
        a_axes = (int(a_axes),) if isinstance(a_axes, (int, onp.integer)) else tuple(a_axes)
        b_axes = (int(b_axes),) if isinstance(b_axes, (int, onp.integer)) else tuple(b_axes)
    if len(a_axes) != len(b_axes):
        raise ValueError("shape-mismatch for sum")
    return _invoke('_npi_tensordot', (a, b), a_axes=a_axes, b_axes=b_axes)


def inner(a, b):
    """The inner product over the last axes."""
    return _invoke('_npi_inner', (_as_np(a), _as_np(b)))


def outer(a, b):
    """The outer product of the flattened inputs."""
    return _invoke('_npi_outer', (_as_np(a), _as_np(b)))


def vdot(a, b):
    """The dot product of the flattened inputs."""
    return _invoke('_npi_vdot', (_as_np(a), _as_np(b)))


def kron(a, b):
    """The Kronecker product."""
    return _invoke('_npi_kron', (_as_np(a), _as_np(b)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of vectors of 2 or 3 elements."""
    if axis is not None:
        axisa = axisb = axisc = axis
    return _invoke('_npi_cross', (_as_np(a), _as_np(b)), axisa=axisa, axisb=axisb, axisc=axisc)


def einsum(*operands, **kwargs):
    """Einstein summation: ``einsum('ij,jk->ik', a, b)``."""
    subscripts = operands[0]
    arrays = [_as_np(o) for o in operands[1:]]
    out = kwargs.get('out')
    return _invoke('_npi_einsum', arrays, out=out, subscripts=subscripts,
                   num_args=len(arrays), optimize=int(bool(kwargs.get('optimize', False))))


def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``."""
    if _is_real(x):
        x = array(x)
    return _invoke('_npi_polyval', (_as_np(p), _as_np(x)))


def indices(dimensions, dtype=None, ctx=None):
    """An array of the index grids of an array of shape ``dimensions``."""
    return _invoke('_npi_indices', (), ctx=_ctx(ctx), dimensions=tuple(int(d) for d in
                                                                        dimensions),
                   dtype=dtype_name(dtype) if dtype is not None else 'int32')


def resize(a, new_shape):
    """``a`` repeated or cut to fill ``new_shape``."""
    return _invoke('_npi_resize', (_as_np(a),), new_shape=_shape_arg(new_shape))


def _window(name):
    def fn(M, dtype=None, ctx=None):
        return _invoke('_npi_' + name, (), ctx=_ctx(ctx), M=int(M),
                       dtype=dtype_name(dtype) if dtype is not None else 'float32')
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = "The %s window of ``M`` points." % name
    return fn


hanning = _window('hanning')
hamming = _window('hamming')
blackman = _window('blackman')


def meshgrid(*xi, **kwargs):
    """Coordinate matrices from coordinate vectors (``indexing='xy'`` or ``'ij'``)."""
    indexing = kwargs.get('indexing', 'xy')
    if indexing not in ('xy', 'ij'):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    arrays = [_as_np(x) for x in xi]
    if not arrays:
        return []
    r = _invoke('_npi_meshgrid', arrays, indexing=indexing, num_args=len(arrays))
    return r if isinstance(r, list) else [r]


def unravel_index(indices, shape, order='C'):  # pylint: disable=redefined-outer-name
    """The coordinates in an array of ``shape`` of flat ``indices``."""
    if isinstance(indices, NDArray):
        r = _invoke('_npi_unravel_index', (_as_np(indices),), shape=_shape_arg(shape))
        return tuple(r[i] for i in range(len(_shape_arg(shape))))
    return onp.unravel_index(indices, shape, order)


def average(a, axis=None, weights=None, returned=False, out=None):
    """The weighted average along ``axis``; with ``returned``, also the sum of weights."""
    a = _as_np(a)
    w = None if weights is None else _as_np(weights)
    if w is not None and w.shape != a.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if w.ndim != 1:
            raise TypeError("1D weights expected when shapes of a and weights differ.")
        if w.shape[0] != a.shape[axis]:
            raise ValueError("Length of weights not compatible with specified axis.")
    avg, wsum = _invoke('_npi_average', (a, w), axis=_axis(axis), returned=returned,
                        weighted=w is not None)
    if out is not None:
        out[...] = avg
        avg = out
    return (avg, wsum) if returned else avg


def percentile(a, q, axis=None, out=None, overwrite_input=None, interpolation='linear',
               keepdims=False):
    """The ``q``-th percentiles along ``axis``."""
    a = _as_np(a)
    if interpolation not in ('linear', 'lower', 'higher', 'midpoint', 'nearest'):
        raise ValueError("interpolation can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "or 'nearest'")
    qa = _as_np(q, ctx=a._ctx, dtype='float64') if not isinstance(q, NDArray) else _as_np(q)
    r = _invoke('_npi_percentile', (a, qa), out=out, axis=_axis(axis),
                interpolation=interpolation, keepdims=keepdims)
    return r


def quantile(a, q, axis=None, out=None, overwrite_input=None, interpolation='linear',
             keepdims=False):
    """The ``q``-th quantiles (0 to 1) along ``axis``."""
    if isinstance(q, NDArray):
        q = q * 100
    else:
        q = onp.asarray(q, dtype=onp.float64) * 100
    return percentile(a, q, axis, out, overwrite_input, interpolation, keepdims)


def median(a, axis=None, out=None, overwrite_input=None, keepdims=False):
    """The median along ``axis``."""
    return quantile(a, 0.5, axis, out, overwrite_input, 'linear', keepdims)


def ptp(a, axis=None, keepdims=False):
    """The range (maximum - minimum) along ``axis``."""
    from .multiarray import max as _max, min as _min
    return _max(a, axis, keepdims=keepdims) - _min(a, axis, keepdims=keepdims)


def ravel(x, order='C'):
    """The flattened array (a view when possible)."""
    return reshape(_as_np(x), (-1,))


# -- functions whose result's shape depends on the values ---------------------------------------

def _eager(x, fn, dtype=None):
    """``fn`` of ``x``'s tensor, computed now (it waits for ``x``), as an ndarray."""
    from ..ndarray.creation import _from_host
    t = fn(x._data().detach())
    if dtype is not None:
        t = t.to(dtype)
    if t.device.type == 'cpu':
        return _np(_from_host(t.contiguous().clone(), x._ctx))
    from ..ndarray.ndarray import from_tensor
    return _np(from_tensor(t.contiguous(), x._ctx))


def nonzero(a):
    """The indices of the non-zero elements, one int64 array per axis."""
    a = _as_np(a)
    if a.ndim == 0:
        a = a.reshape(1)
    idx = _eager(a, lambda t: torch.nonzero(t).t().contiguous())
    return tuple(idx[i] for i in range(a.ndim))


def argwhere(a):
    """The indices of the non-zero elements, grouped by element."""
    return _eager(_as_np(a), lambda t: torch.nonzero(t))


def flatnonzero(a):
    """The indices of the non-zero elements of the flattened array."""
    return _eager(_as_np(a), lambda t: torch.nonzero(t.reshape(-1)).reshape(-1))


def count_nonzero(a, axis=None):
    """The number of non-zero elements along ``axis``."""
    from .multiarray import sum as _sum
    return _sum(_as_np(a) != 0, axis=axis, dtype='int64')


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """The sorted unique elements (along ``axis``), with the indices of first occurrences,
    the inverse indices and the counts on request."""
    a = _as_np(ar)
    host = a.asnumpy()
    res = onp.unique(host, return_index=return_index, return_inverse=return_inverse,
                     return_counts=return_counts, axis=axis)
    if not isinstance(res, tuple):
        return array(res, dtype=a._dtype, ctx=a._ctx)
    out = [array(res[0], dtype=a._dtype, ctx=a._ctx)]
    for r in res[1:]:       # (NumPy 2: the inverse indices have the input's shape)
        out.append(array(r, dtype='int64', ctx=a._ctx))
    return tuple(out)


def bincount(x, weights=None, minlength=0):
    """The number of occurrences of each value of non-negative integer array ``x`` (weighted by
    ``weights``)."""
    x = _as_np(x)
    if x._dtype not in ('int8', 'uint8', 'int32', 'int64', 'bool', 'int16'):
        raise TypeError("input data should be int type")
    if minlength < 0:
        raise ValueError("Minlength must be non-negative")
    h = x.asnumpy()
    if h.size and h.min() < 0:
        raise ValueError("input data should be non-negative")
    w = None if weights is None else _as_np(weights).asnumpy()
    r = onp.bincount(h, w, minlength)
    return array(r, dtype='int64' if w is None else dtype_name(_as_np(weights)._dtype),
                 ctx=x._ctx)


def histogram(a, bins=10, range=None, normed=None, weights=None, density=None):  # pylint: disable=redefined-builtin
    """The histogram of ``a``: (counts, bin edges)."""
    a = _as_np(a)
    b = bins.asnumpy() if isinstance(bins, NDArray) else bins
    h, edges = onp.histogram(a.asnumpy(), b, range, density=density,
                             weights=None if weights is None else _as_np(weights).asnumpy())
    return (array(h, dtype=a._dtype if density else 'int64', ctx=a._ctx),
            array(edges, dtype=a._dtype, ctx=a._ctx))


def diag_indices_from(arr):
    """The indices of the main diagonal of square array ``arr``."""
    arr = _as_np(arr)
    if arr.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    from .multiarray import arange
    idx = arange(arr.shape[0], dtype='int64', ctx=arr._ctx)
    return (idx,) * arr.ndim


def tril_indices(n, k=0, m=None):
    """The indices of the lower triangle of an ``n`` x ``m`` array."""
    return tuple(array(i, dtype='int64') for i in onp.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    """The indices of the upper triangle of an ``n`` x ``m`` array."""
    return tuple(array(i, dtype='int64') for i in onp.triu_indices(n, k, m))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``a`` and ``b`` are equal within tolerance, elementwise."""
    a, b = _as_np(a), _as_np(b, ctx=_as_np(a)._ctx)
    from .multiarray import less_equal, logical_or, logical_and, equal
    close = less_equal(absolute(a - b), atol + rtol * absolute(b))
    close = logical_or(close, equal(a, b))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``a`` and ``b`` is equal within tolerance."""
    from .multiarray import all as _all
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have one shape and equal elements."""
    a1, a2 = _as_np(a1), _as_np(a2)
    if a1.shape != a2.shape:
        return False
    from .multiarray import all as _all
    return bool(_all(a1 == a2))


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` are equal after broadcasting."""
    a1, a2 = _as_np(a1), _as_np(a2)
    try:
        torch.broadcast_shapes(a1.shape, a2.shape)
    except RuntimeError:
        return False
    from .multiarray import all as _all
    return bool(_all(a1 == a2))


def result_type(*arrays_and_dtypes):
    """The dtype of an arithmetic result of the arguments (MXNet's promotion)."""
    from ..ops.numpy import result_dtype
    names = []
    for x in arrays_and_dtypes:
        if isinstance(x, NDArray):
            names.append(x._dtype)
        elif _is_real(x):
            continue
        else:
            names.append(dtype_name(x))
    return onp.dtype(result_dtype(*names)) if names else onp.result_type(*arrays_and_dtypes)


def promote_types(type1, type2):
    """The smallest dtype both ``type1`` and ``type2`` convert to."""
    return onp.promote_types(type1, type2)


def can_cast(from_, to, casting='safe'):
    """NumPy's ``can_cast``."""
    if isinstance(from_, NDArray):
        from_ = from_.dtype
    return onp.can_cast(from_, to, casting)


def isscalar(element):
    """Whether ``element`` is a scalar (0-d ndarrays are not)."""
    return onp.isscalar(element)


def ix_(*args):
    """An open mesh from 1-d sequences, for advanced indexing."""
    out = []
    n = len(args)
    for k, a in enumerate(args):
        a = _as_np(a, dtype='int64') if not isinstance(a, NDArray) else _as_np(a)
        shape = [1] * n
        shape[k] = a.size
        out.append(a.reshape(shape))
    return tuple(out)


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional linear interpolation."""
    xs = x.asnumpy() if isinstance(x, NDArray) else x
    r = onp.interp(xs, _as_np(xp).asnumpy(), _as_np(fp).asnumpy(), left, right, period)
    return array(r, dtype='float32' if not isinstance(r, float) else None)


def _nanreduce(name, fill):
    def fn(a, axis=None, out=None, keepdims=False, **kwargs):
        from . import multiarray as m
        a = _as_np(a)
        f = fill(a) if callable(fill) else fill
        return getattr(m, name)(where(isnan(a), f, a), axis=axis, out=out, keepdims=keepdims)
    fn.__name__ = 'nan' + name
    return fn


nanmax = _nanreduce('max', -onp.inf)
nanmin = _nanreduce('min', onp.inf)
nansum = _nanreduce('sum', 0.0)
nanprod = _nanreduce('prod', 1.0)


def searchsorted(a, v, side='left', sorter=None):
    """Indices where the elements of ``v`` go in sorted ``a``."""
    a = _as_np(a)
    vv = _as_np(v, ctx=a._ctx)
    r = torch.searchsorted(a._data(), vv._data().to(a._data().dtype), right=side == 'right')
    return _eager(vv, lambda t: r)


def empty_like_shape(shape):
    return zeros(shape)


def heaviside(x1, x2, out=None):
    """0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0``."""
    x1 = _as_np(x1)
    return where(x1 < 0, 0.0, where(x1 > 0, 1.0, x2 if isinstance(x2, NDArray) else
                                    full_like(x1, x2)))


def divmod(x1, x2, out=None):  # pylint: disable=redefined-builtin
    """(``x1 // x2``, ``x1 % x2``)."""
    from .multiarray import floor_divide, mod
    return floor_divide(x1, x2), mod(x1, x2)


def modf(x, out=None):
    """(fractional part, integral part) of ``x``."""
    x = _as_np(x)
    i = trunc(x)
    return x - i, i


def frexp(x, out=None):
    """(mantissa, exponent) of ``x``."""
    x = _as_np(x)
    m, e = torch.frexp(x._data())
    return _eager(x, lambda t: m), _eager(x, lambda t: e.to(torch.int32))


def spacing(x, out=None):
    """The distance to the nearest adjacent number."""
    x = _as_np(x)
    return _eager(x, lambda t: torch.nextafter(t, torch.full_like(t, onp.inf)) - t)


@set_module('mxnet.numpy')
def set_printoptions(precision=None, threshold=None, **kwarg):
    """How arrays print: ``precision`` digits, summarised beyond ``threshold`` elements (NumPy's
    print options, which an array's repr and str use); other options raise
    NotImplementedError, as in MXNet.

    >>> from neomx import np
    >>> set_printoptions(precision=3)
    >>> np.array([1.23456])
    array([1.235])
    >>> set_printoptions(precision=8)
    """
    if kwarg:
        raise NotImplementedError("mxnet.numpy.set_printoptions: only precision and threshold "
                                  "are supported, got %s" % ', '.join(sorted(kwarg)))
    onp.set_printoptions(precision=precision, threshold=threshold)
