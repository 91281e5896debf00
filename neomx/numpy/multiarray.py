"""``mx.np.ndarray`` and the core of ``mx.np``: arrays with NumPy's semantics on neomx's
engine, registry and autograd.

An ``ndarray`` is an ``NDArray`` (same storage, engine Var, autograd state) whose operations
follow NumPy: 0-d arrays, full reductions to shape ``()``, NumPy indexing and broadcasting,
dtype promotion between arrays, ``bool`` comparisons. ``NDArray.as_np_ndarray()`` and
``ndarray.as_nd_ndarray()`` switch between the two without copying. Every function here
pushes registry operators (``_npi_add``, ``_np_sum``, ...), so the same code runs
imperatively, under autograd, and traced into a hybridized graph.

>>> from neomx import np
>>> a = np.arange(6).reshape(2, 3)
>>> a.sum()
array(15.)
>>> (a > 2).dtype
dtype('bool')
>>> a[1, ::-1].tolist()
[5.0, 4.0, 3.0]
"""
import numbers
import sys

import numpy as onp
import torch

from .. import engine as _engine
from ..base import MXNetError, dtype_name, mode
from ..context import Context, current_context
from ..ndarray import ndarray as _ndm
from ..ndarray.gen import parse_ctx
from ..ndarray.ndarray import NDArray, Storage, _make, invoke
from ..ops import registry
from ..ops.numpy import np_reshape_target
from ..util import set_module, wrap_np_binary_func

__all__ = ['ndarray', 'array', 'asarray', 'empty', 'zeros', 'ones', 'full', 'empty_like',
           'zeros_like', 'ones_like', 'full_like', 'arange', 'linspace', 'logspace', 'eye',
           'identity', 'add', 'subtract', 'multiply', 'divide', 'true_divide', 'floor_divide',
           'mod', 'remainder', 'fmod', 'power', 'float_power', 'maximum', 'minimum', 'fmax',
           'fmin', 'equal', 'not_equal', 'greater', 'greater_equal', 'less', 'less_equal',
           'logical_and', 'logical_or', 'logical_xor', 'bitwise_and', 'bitwise_or',
           'bitwise_xor', 'arctan2', 'hypot', 'copysign', 'ldexp', 'lcm', 'gcd', 'sum', 'prod',
           'mean', 'std', 'var', 'max', 'min', 'amax', 'amin', 'all', 'any', 'argmax', 'argmin',
           'reshape', 'transpose', 'squeeze', 'expand_dims', 'concatenate', 'stack', 'split',
           'array_split', 'hsplit', 'vsplit', 'dsplit', 'copy', 'dot', 'matmul', 'shape',
           'size', 'ndim', 'may_share_memory', 'shares_memory']

_REAL = (numbers.Number, onp.bool_, onp.number)
_FLOAT_NAMES = ('float16', 'float32', 'float64', 'bfloat16')


# -- calling operators --------------------------------------------------------------------------

_OPS = {}


def _op(name):
    op = _OPS.get(name)
    if op is None:
        op = _OPS[name] = registry.get(name)
    return op


def _np(r):
    """``r`` (an array or a list of them) as ``ndarray``: same objects, class changed."""
    if isinstance(r, list):
        for o in r:
            o.__class__ = ndarray
        return r
    if r.__class__ is not ndarray:
        r.__class__ = ndarray
    return r


def _symbol_class():
    from ..symbol.symbol import Symbol
    return Symbol


def _is_symbol(x):
    return not isinstance(x, NDArray) and isinstance(x, _symbol_class())


def _invoke(name, inputs=(), out=None, ctx=None, cast_out=False, **attrs):
    """Pushes registry operator ``name`` on ``inputs`` with ``attrs``; ndarray results. On
    symbols (a block traced with ``F = mx.sym``) it builds a graph node instead."""
    op = _op(name)
    for x in inputs:
        if x is not None and not isinstance(x, NDArray):
            from ..symbol.numpy import apply
            return apply(op, inputs, op.parse_attrs(attrs))
    parsed = op.parse_attrs(attrs)
    if out is not None:
        if not isinstance(out, NDArray):
            raise TypeError("%s: out must be an mxnet.numpy.ndarray, got %s"
                            % (name, type(out).__name__))
        if not cast_out:
            _check_out_dtype(op, inputs, parsed, out)
    return _np(invoke(op, inputs, parsed, out=out, ctx=ctx))


def _check_out_dtype(op, inputs, attrs, out):
    """``out=`` must have the result's dtype (MXNet casts nothing into it)."""
    try:
        _, dtypes = op.infer(attrs, tuple(None if x is None else x._shape for x in inputs),
                             tuple(None if x is None else x._dtype for x in inputs))
    except registry.ShapeError:
        return          # invoke raises it with the operator's message
    if dtypes and dtypes[0] != out._dtype:
        raise TypeError("%s: the result has dtype %s but out= has dtype %s"
                        % (op.name, dtypes[0], out._dtype))


def _ctx(ctx):
    return parse_ctx(ctx) or current_context()


def _device_of(*arrays):
    for a in arrays:
        if isinstance(a, NDArray):
            return a._ctx
    return None


def _as_np(x, ctx=None, dtype=None):
    """``x`` (an ndarray, NDArray, NumPy array, list or number) as an ``ndarray``."""
    if isinstance(x, NDArray):
        if x.__class__ is not ndarray:
            x = x.as_np_ndarray()
        return x
    if _is_symbol(x):
        return x.as_np_ndarray()
    return array(x, dtype=dtype, ctx=ctx)


def _is_real(x):
    return isinstance(x, _REAL) and not isinstance(x, onp.ndarray)


# -- the array ----------------------------------------------------------------------------------

def _np_index():
    from . import indexing
    return indexing


@set_module('mxnet.numpy')
class ndarray(NDArray):
    """An n-dimensional array with NumPy's semantics (see the module docstring)."""
    __slots__ = ()

    # --- attributes ---
    @property
    def dtype(self):
        return onp.dtype(_ndm.dtype_np(self._dtype))

    @property
    def device(self):
        return self._ctx

    @property
    def T(self):
        return self.transpose()

    @property
    def grad(self):
        g = self._var.grad
        if g is not None and g.__class__ is not ndarray:
            g = g.as_np_ndarray()
        return g

    # --- conversion ---
    def as_nd_ndarray(self):
        """The same storage as a legacy ``NDArray`` (0-d arrays become shape (1,))."""
        out = _make(self._var, self._shape or (1,), self._dtype, self._ctx, self._view)
        return out

    def as_np_ndarray(self):
        return self

    def asnumpy(self):
        return super().asnumpy()

    def item(self, *args):
        a = self.asnumpy()
        return a.item(*args)

    def tolist(self):
        return self.asnumpy().tolist()

    def asscalar(self):
        if self.size != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(())[()]

    def astype(self, dtype, order='K', casting='unsafe', subok=True, copy=True):
        name = dtype_name(dtype)
        if not copy and name == self._dtype:
            return self
        return _invoke('_npi_astype', (self,), dtype=name)

    def copy(self, order='C'):
        if order != 'C':
            raise NotImplementedError("copy: only order='C' is supported, got %r" % (order,))
        return _invoke('_np_copy', (self,))

    def copyto(self, other):
        r = super().copyto(other)
        return _np(r) if isinstance(r, NDArray) else r

    def as_in_context(self, context):
        if self._ctx == context:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def to_device(self, device):
        return self.as_in_context(device)

    def detach(self):
        return _np(super().detach())

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype)

    # NumPy's functions and ufuncs on mx.np arrays run mx.np's (numpy/_dispatch.py)
    def __array_function__(self, func, types, args, kwargs):
        from ._dispatch import array_function
        return array_function(func, types, args, kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from ._dispatch import array_ufunc
        return array_ufunc(ufunc, method, inputs, kwargs)

    def __reduce__(self):
        return (_from_numpy, (self.asnumpy(), str(self._ctx.device_type), self._ctx.device_id))

    # --- printing ---
    def __repr__(self):
        a = self.asnumpy()
        r = repr(a)
        if self._dtype == 'float32':
            r = r.replace(', dtype=float32', '')
        elif 'dtype=' not in r and self._dtype != 'bool':
            r = r[:-1] + ', dtype=%s)' % self._dtype
        if self._ctx.device_type != 'cpu':
            r = r[:-1] + ', ctx=%s)' % self._ctx
        return r

    def __str__(self):
        s = str(self.asnumpy())
        if self._ctx.device_type != 'cpu':
            s += ' @%s' % self._ctx
        return s

    def __format__(self, fmt):
        if self.ndim == 0:
            return format(self.asnumpy()[()], fmt)
        if fmt:
            raise TypeError("unsupported format string passed to mxnet.numpy.ndarray.__format__")
        return str(self)

    # --- Python protocols ---
    def __bool__(self):
        n = self.size
        if n == 1:
            return bool(self.asnumpy().reshape(()))
        if n == 0:
            raise ValueError("The truth value of an empty array is ambiguous. Use `array.size > 0` "
                             "to check that an array is not empty.")
        raise ValueError("The truth value of an ndarray with more than one element is "
                         "ambiguous. Use a.any() or a.all()")

    def __len__(self):
        if not self._shape:
            raise TypeError('len() of unsized object')
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError('iteration over a 0-d array')
        for i in range(self._shape[0]):
            yield self[i]

    def __float__(self):
        if self.size != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return float(self.asnumpy().reshape(()))

    def __int__(self):
        if self.size != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        return int(self.asnumpy().reshape(()))

    def __index__(self):
        if self.ndim != 0 or self._dtype not in ('int8', 'uint8', 'int32', 'int64', 'int16'):
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.asnumpy())

    __hash__ = NDArray.__hash__

    # --- indexing ---
    def __getitem__(self, key):
        return _np_index().getitem(self, key)

    def __setitem__(self, key, value):
        _np_index().setitem(self, key, value)

    # --- views and shapes ---
    def reshape(self, *args, **kwargs):
        """A view with shape ``args`` (NumPy's rules: one -1 is inferred)."""
        order = kwargs.pop('order', 'C')
        if 'newshape' in kwargs:
            shape = kwargs.pop('newshape')
        elif 'shape' in kwargs:
            shape = kwargs.pop('shape')
        elif len(args) == 1 and (isinstance(args[0], (list, tuple)) or args[0] is None):
            shape = args[0]
        else:
            shape = args
        if kwargs:
            raise TypeError("reshape: unexpected arguments %s" % ', '.join(kwargs))
        if order != 'C':
            raise NotImplementedError("reshape: only order='C' is supported")
        return reshape(self, shape)

    def reshape_view(self, *shape):
        return self.reshape(*shape)

    def transpose(self, *axes):
        if len(axes) == 1 and (isinstance(axes[0], (list, tuple)) or axes[0] is None):
            axes = axes[0]
        return transpose(self, axes or None)

    def flatten(self, order='C'):
        return reshape(self, (-1,)).copy() if not mode.tracing else reshape(self, (-1,))

    def ravel(self, order='C'):
        return reshape(self, (-1,))

    def squeeze(self, axis=None):
        return squeeze(self, axis)

    def expand_dims(self, axis):
        return expand_dims(self, axis)

    def swapaxes(self, axis1, axis2):
        from . import _op as fns
        return fns.swapaxes(self, axis1, axis2)

    def repeat(self, repeats, axis=None):
        from . import _op as fns
        return fns.repeat(self, repeats, axis)

    def tile(self, reps):
        from . import _op as fns
        return fns.tile(self, reps)

    def split(self, indices_or_sections, axis=0):
        return split(self, indices_or_sections, axis)

    def broadcast_to(self, shape):
        from . import _op as fns
        return fns.broadcast_to(self, shape)

    def broadcast_like(self, other):
        from . import _op as fns
        return fns.broadcast_to(self, other.shape)

    def take(self, indices, axis=None, mode='raise'):
        from . import _op as fns
        return fns.take(self, indices, axis, mode=mode)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        from . import _op as fns
        return fns.diagonal(self, offset, axis1, axis2)

    def nonzero(self):
        from . import _op as fns
        return fns.nonzero(self)

    def sort(self, axis=-1, kind=None, order=None):
        from . import _op as fns
        return fns.sort(self, axis, kind, order)

    def argsort(self, axis=-1, kind=None, order=None):
        from . import _op as fns
        return fns.argsort(self, axis, kind, order)

    def clip(self, min=None, max=None, out=None):  # pylint: disable=redefined-builtin
        from . import _op as fns
        return fns.clip(self, min, max, out=out)

    def round(self, decimals=0, out=None):
        from . import _op as fns
        return fns.round(self, decimals, out=out)

    def cumsum(self, axis=None, dtype=None, out=None):
        from . import _op as fns
        return fns.cumsum(self, axis, dtype, out)

    def flip(self, axis=None):
        from . import _op as fns
        return fns.flip(self, axis)

    # --- reductions ---
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        return sum(self, axis, dtype, out, keepdims, initial)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        return prod(self, axis, dtype, out, keepdims, initial)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return mean(self, axis, dtype, out, keepdims)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return std(self, axis, dtype, out, ddof, keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return var(self, axis, dtype, out, ddof, keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        return max(self, axis, out, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return min(self, axis, out, keepdims)

    def all(self, axis=None, out=None, keepdims=False):
        return all(self, axis, out, keepdims)

    def any(self, axis=None, out=None, keepdims=False):
        return any(self, axis, out, keepdims)

    def argmax(self, axis=None, out=None):
        return argmax(self, axis, out)

    def argmin(self, axis=None, out=None):
        return argmin(self, axis, out)

    def dot(self, b, out=None):
        return dot(self, b, out=out)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        from . import _op as fns
        return fns.trace(self, offset, axis1, axis2, dtype, out)

    def norm(self, ord=None, axis=None, keepdims=False):  # pylint: disable=redefined-builtin
        from . import linalg
        return linalg.norm(self, ord, axis, keepdims)

    # --- autograd ---
    def attach_grad(self, grad_req='write', stype=None):
        from ..autograd import mark_variables
        mark_variables([self], [zeros_like(self)], grad_req)

    # --- arithmetic ---
    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __sub__(self, other):
        return subtract(self, other)

    def __rsub__(self, other):
        return subtract(other, self)

    def __mul__(self, other):
        return multiply(self, other)

    def __rmul__(self, other):
        return multiply(other, self)

    def __truediv__(self, other):
        return true_divide(self, other)

    def __rtruediv__(self, other):
        return true_divide(other, self)

    def __floordiv__(self, other):
        return floor_divide(self, other)

    def __rfloordiv__(self, other):
        return floor_divide(other, self)

    def __mod__(self, other):
        return mod(self, other)

    def __rmod__(self, other):
        return mod(other, self)

    def __pow__(self, other):
        return power(self, other)

    def __rpow__(self, other):
        return power(other, self)

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def __and__(self, other):
        return bitwise_and(self, other)

    __rand__ = __and__

    def __or__(self, other):
        return bitwise_or(self, other)

    __ror__ = __or__

    def __xor__(self, other):
        return bitwise_xor(self, other)

    __rxor__ = __xor__

    def __invert__(self):
        return _invoke('_npi_bitwise_not', (self,))

    def __neg__(self):
        return _invoke('_npi_negative', (self,))

    def __pos__(self):
        return self

    def __abs__(self):
        return _invoke('_npi_absolute', (self,))

    def __eq__(self, other):
        if other is None:
            return False
        return equal(self, other)

    def __ne__(self, other):
        if other is None:
            return True
        return not_equal(self, other)

    def __lt__(self, other):
        return less(self, other)

    def __le__(self, other):
        return less_equal(self, other)

    def __gt__(self, other):
        return greater(self, other)

    def __ge__(self, other):
        return greater_equal(self, other)

    def __iadd__(self, other):
        return _binary('add', self, other, self, True)

    def __isub__(self, other):
        return _binary('subtract', self, other, self, True)

    def __imul__(self, other):
        return _binary('multiply', self, other, self, True)

    def __itruediv__(self, other):
        return _binary('true_divide', self, other, self, True)

    def __imod__(self, other):
        return _binary('mod', self, other, self, True)

    def __ipow__(self, other):
        return _binary('power', self, other, self, True)

    def __ifloordiv__(self, other):
        return _binary('floor_divide', self, other, self, True)


def _from_numpy(a, device_type, device_id):
    return array(a, dtype=a.dtype, ctx=Context(device_type, device_id))


def _as_np_ndarray(self):
    """The same storage as an ``mx.np.ndarray`` (NumPy semantics)."""
    out = _make(self._var, self._shape, self._dtype, self._ctx, self._view)
    out.__class__ = ndarray
    return out


NDArray.as_np_ndarray = _as_np_ndarray
_ndm._numpy = sys.modules[__name__]     # ndarray.array_class() names ndarray from now on


# -- creation -----------------------------------------------------------------------------------

def _host_dtype(obj, dtype):
    if dtype is not None:
        return dtype_name(dtype)
    if isinstance(obj, (onp.ndarray, onp.generic)):
        try:
            return dtype_name(obj.dtype)
        except TypeError:
            return 'float32'
    return 'float32'


@set_module('mxnet.numpy')
def array(object, dtype=None, ctx=None, copy=True, device=None):  # pylint: disable=redefined-builtin
    """An array holding a copy of ``object`` (an array, NumPy array, list or number). The dtype
    is ``dtype``, else that of an array argument, else float32 (MXNet's default)."""
    ctx = ctx if ctx is not None else device
    if isinstance(object, NDArray):
        name = object._dtype if dtype is None else dtype_name(dtype)
        c = _ctx(ctx) if ctx is not None else object._ctx
        src = object if object.__class__ is ndarray else object.as_np_ndarray()
        if c != src._ctx:
            src = src.copyto(c)
        elif copy:
            src = src.copy()
        return src if src._dtype == name else src.astype(name)
    if isinstance(object, torch.Tensor):
        object = object.detach().cpu().numpy()
    name = _host_dtype(object, dtype)
    if name == 'bfloat16':
        a = onp.array(object, dtype=onp.float32)
    else:
        try:
            a = onp.array(object, dtype=_ndm.dtype_np(name))
        except OverflowError:
            # NumPy 2 refuses Python integers out of the dtype's range; MXNet (NumPy 1) wraps
            # them around, as a cast does: this conversion does, NumPy's own stay as they are
            a = onp.array(object).astype(_ndm.dtype_np(name))
        except (TypeError, ValueError) as e:
            if isinstance(object, (list, tuple)) and any(isinstance(o, NDArray) for o in object):
                return stack([_as_np(o) for o in object]).astype(name)
            raise MXNetError("array: cannot convert %s to an array of %s: %s"
                             % (type(object).__name__, name, e)) from None
    # (onp.array copied it; ascontiguousarray would turn a 0-d array into 1-d)
    t = torch.from_numpy(a if a.flags.c_contiguous else onp.array(a, order='C'))
    if name == 'bfloat16':
        t = t.to(torch.bfloat16)
    from ..ndarray.creation import _from_host
    return _np(_from_host(t, ctx))


def asarray(a, dtype=None, ctx=None):
    """``a`` itself when it is an ndarray of ``dtype``, else ``array(a, dtype)``."""
    if isinstance(a, ndarray) and (dtype is None or dtype_name(dtype) == a._dtype):
        return a
    return array(a, dtype=dtype, ctx=ctx, copy=False)


def _shape_arg(shape):
    if shape is None:
        return ()
    if isinstance(shape, (int, onp.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _create(name, shape, dtype, ctx, order='C', **attrs):
    if order != 'C':
        raise NotImplementedError("%s: only order='C' is supported, got %r" % (name[5:], order))
    return _invoke(name, (), ctx=_ctx(ctx), shape=_shape_arg(shape),
                   dtype=dtype_name(dtype) if dtype is not None else 'float32', **attrs)


def empty(shape, dtype=None, order='C', ctx=None, device=None):
    """An array whose values are not set."""
    return _create('_npi_empty', shape, dtype, ctx or device, order)


def zeros(shape, dtype=None, order='C', ctx=None, device=None):
    """An array of zeros (float32 unless ``dtype`` says otherwise)."""
    return _create('_npi_zeros', shape, dtype, ctx or device, order)


def ones(shape, dtype=None, order='C', ctx=None, device=None):
    """An array of ones."""
    return _create('_npi_ones', shape, dtype, ctx or device, order)


def full(shape, fill_value, dtype=None, order='C', ctx=None, out=None, device=None):
    """An array filled with ``fill_value`` (an array value is broadcast)."""
    ctx = ctx or device
    if isinstance(fill_value, NDArray):
        from . import _op as fns
        r = fns.broadcast_to(fill_value.as_np_ndarray(), _shape_arg(shape))
        r = r.astype(dtype) if dtype is not None else r.copy()
        return r if out is None else _assign(out, r)
    if dtype is None:
        dtype = ('bool' if isinstance(fill_value, (bool, onp.bool_)) else
                 'int64' if isinstance(fill_value, (int, onp.integer)) else 'float32')
    r = _create('_npi_full', shape, dtype, ctx, value=_py(fill_value))
    return r if out is None else _assign(out, r)


def _py(v):
    return v.item() if isinstance(v, (onp.generic, onp.ndarray)) else v


def _assign(out, value):
    out[...] = value
    return out


def _like(name, a, dtype, **attrs):
    a = _as_np(a)
    return _invoke(name, (), ctx=a._ctx, shape=a._shape,
                   dtype=dtype_name(dtype) if dtype is not None else a._dtype, **attrs)


def empty_like(prototype, dtype=None, order='C', subok=False, shape=None):
    """An array of ``prototype``'s shape and dtype whose values are not set."""
    return _like('_npi_empty', prototype, dtype)


def zeros_like(a, dtype=None, order='C', ctx=None, out=None):
    """Zeros of ``a``'s shape and dtype."""
    r = _like('_npi_zeros', a, dtype)
    return r if out is None else _assign(out, r)


def ones_like(a, dtype=None, order='C', ctx=None, out=None):
    """Ones of ``a``'s shape and dtype."""
    r = _like('_npi_ones', a, dtype)
    return r if out is None else _assign(out, r)


def full_like(a, fill_value, dtype=None, order='C', ctx=None, out=None):
    """``fill_value`` in ``a``'s shape (and dtype unless given)."""
    a = _as_np(a)
    r = _invoke('_npi_full_like', (a,), fill_value=_py(fill_value),
                dtype=dtype_name(dtype) if dtype is not None else None)
    return r if out is None else _assign(out, r)


def arange(start, stop=None, step=1, dtype=None, ctx=None, device=None):
    """Evenly spaced values in ``[start, stop)`` (float32 unless ``dtype`` is given)."""
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    return _invoke('_npi_arange', (), ctx=_ctx(ctx or device), start=float(start),
                   stop=float(stop), step=float(step),
                   dtype=dtype_name(dtype) if dtype is not None else 'float32')


class _NumValueError(MXNetError, ValueError):
    """A bad count: MXNet raises MXNetError, NumPy ValueError."""


class _NumTypeError(MXNetError, TypeError):
    """A count that is not an integer: MXNet raises MXNetError, NumPy TypeError."""


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None,
             device=None):
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    if isinstance(start, NDArray) or isinstance(stop, NDArray) or not _is_real(start) \
            or not _is_real(stop):
        from .fallback import fallback
        return fallback('linspace')(start, stop, num, endpoint, retstep, dtype, axis)
    if int(num) != num:
        raise _NumTypeError("linspace: number of samples, %s, must be an integer" % (num,))
    if num < 0:
        raise _NumValueError("linspace: number of samples, %s, must be non-negative" % (num,))
    r = _invoke('_npi_linspace', (), ctx=_ctx(ctx or device), start=float(start),
                stop=float(stop), num=int(num), endpoint=bool(endpoint),
                dtype=dtype_name(dtype) if dtype is not None else 'float32')
    if retstep:
        div = (num - 1) if endpoint else num
        return r, (stop - start) / div if div > 0 else float('nan')
    return r


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None):
    """``base ** linspace(start, stop, num)``."""
    y = linspace(start, stop, num, endpoint, dtype='float64' if dtype is None else None,
                 ctx=ctx)
    r = power(float(base), y)
    return r.astype(dtype if dtype is not None else 'float32')


def eye(N, M=None, k=0, dtype=None, ctx=None, device=None, **kwargs):
    """A 2-d array with ones on diagonal ``k``."""
    return _invoke('_npi_eye', (), ctx=_ctx(ctx or device), N=int(N),
                   M=None if M is None else int(M), k=int(k),
                   dtype=dtype_name(dtype) if dtype is not None else 'float32')


def identity(n, dtype=None, ctx=None):
    """The ``n`` x ``n`` identity matrix."""
    return eye(n, dtype=dtype, ctx=ctx)


# -- elementwise binary ---------------------------------------------------------------------------

_FLIP = {'less': 'greater', 'greater': 'less', 'less_equal': 'greater_equal',
         'greater_equal': 'less_equal', 'equal': 'equal', 'not_equal': 'not_equal'}
_COMMUTATIVE = ('add', 'multiply', 'maximum', 'minimum', 'fmax', 'fmin', 'logical_and',
                'logical_or', 'logical_xor', 'bitwise_and', 'bitwise_or', 'bitwise_xor',
                'hypot')


def _scalar_value(x):
    if isinstance(x, (onp.generic,)):
        x = x.item()
    return x


def _binary(name, x1, x2, out=None, cast_out=False):
    """``name`` (``add``, ...) of two arrays, an array and a number, or two numbers; with
    ``cast_out`` (in-place operators), the result is cast into ``out``."""
    a1, a2 = isinstance(x1, NDArray), isinstance(x2, NDArray)
    if not (a1 and a2) and (_is_symbol(x1) or _is_symbol(x2)):
        a1, a2 = a1 or _is_symbol(x1), a2 or _is_symbol(x2)
        if a1 and a2:
            return _invoke('_npi_' + name, (_as_np(x1), _as_np(x2)), out=out, cast_out=cast_out)
    elif a1 and a2:
        if x1._ctx != x2._ctx:
            raise MXNetError("%s: operands are on different devices (%s and %s)"
                             % (name, x1._ctx, x2._ctx))
        return _invoke('_npi_' + name, (_as_np(x1), _as_np(x2)), out=out, cast_out=cast_out)
    if a1 and _is_real(x2):
        return _invoke('_npi_%s_scalar' % name, (_as_np(x1),), out=out, cast_out=cast_out,
                       scalar=float(_scalar_value(x2)),
                       is_int=isinstance(x2, (int, onp.integer)))
    if a2 and _is_real(x1):
        s = _scalar_value(x1)
        if name in _COMMUTATIVE:
            opname = '_npi_%s_scalar' % name
        elif name in _FLIP:
            opname = '_npi_%s_scalar' % _FLIP[name]
        else:
            opname = '_npi_r%s_scalar' % name
        if not registry.exists(opname):
            return _binary(name, full_like(x2, s), x2, out, cast_out)
        return _invoke(opname, (_as_np(x2),), out=out, cast_out=cast_out, scalar=float(s),
                       is_int=isinstance(s, (int, onp.integer)))
    if not a1 and not a2:
        if (isinstance(x1, onp.ndarray) or isinstance(x2, onp.ndarray) or
                isinstance(x1, (list, tuple)) or isinstance(x2, (list, tuple))):
            return _binary(name, array(x1, dtype=_host_dtype(x1, None) if
                                       isinstance(x1, onp.ndarray) else None), x2, out)
        r = getattr(onp, _NUMPY_NAME.get(name, name))(x1, x2)
        return array(r, dtype=_host_dtype(onp.asarray(r), None) if onp.asarray(r).dtype != onp.float64
                     else 'float32')
    other = x2 if a1 else x1
    if isinstance(other, (onp.ndarray, list, tuple)):
        conv = array(other, dtype=_host_dtype(other, None) if isinstance(other, onp.ndarray)
                     else None, ctx=_device_of(x1, x2))
        return _binary(name, x1 if a1 else conv, conv if a1 else x2, out, cast_out)
    raise TypeError("%s: operand type %s is not supported (expected an mxnet.numpy.ndarray or "
                    "a number)" % (name, type(other).__name__))


_NUMPY_NAME = {'mod': 'mod', 'true_divide': 'true_divide'}


def _binary_fn(name, doc):
    def fn(x1, x2, out=None, **kwargs):
        return _binary(name, x1, x2, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return set_module('mxnet.numpy')(wrap_np_binary_func(fn))


add = _binary_fn('add', "``x1 + x2`` elementwise, broadcasting.")
subtract = _binary_fn('subtract', "``x1 - x2`` elementwise, broadcasting.")
multiply = _binary_fn('multiply', "``x1 * x2`` elementwise, broadcasting.")
true_divide = _binary_fn('true_divide', "``x1 / x2`` elementwise (integers give float32).")
divide = true_divide
floor_divide = _binary_fn('floor_divide', "``x1 // x2`` elementwise.")
mod = _binary_fn('mod', "``x1 % x2`` elementwise (the sign of the divisor).")
remainder = mod
fmod = _binary_fn('fmod', "C's fmod elementwise (the sign of the dividend).")
power = _binary_fn('power', "``x1 ** x2`` elementwise.")
maximum = _binary_fn('maximum', "The elementwise maximum (NaN propagates).")
minimum = _binary_fn('minimum', "The elementwise minimum (NaN propagates).")
fmax = _binary_fn('fmax', "The elementwise maximum (NaN ignored).")
fmin = _binary_fn('fmin', "The elementwise minimum (NaN ignored).")
equal = _binary_fn('equal', "``x1 == x2`` elementwise, as bool.")
not_equal = _binary_fn('not_equal', "``x1 != x2`` elementwise, as bool.")
greater = _binary_fn('greater', "``x1 > x2`` elementwise, as bool.")
greater_equal = _binary_fn('greater_equal', "``x1 >= x2`` elementwise, as bool.")
less = _binary_fn('less', "``x1 < x2`` elementwise, as bool.")
less_equal = _binary_fn('less_equal', "``x1 <= x2`` elementwise, as bool.")
logical_and = _binary_fn('logical_and', "Elementwise logical and, as bool.")
logical_or = _binary_fn('logical_or', "Elementwise logical or, as bool.")
logical_xor = _binary_fn('logical_xor', "Elementwise logical xor, as bool.")
bitwise_and = _binary_fn('bitwise_and', "Elementwise bitwise and.")
bitwise_or = _binary_fn('bitwise_or', "Elementwise bitwise or.")
bitwise_xor = _binary_fn('bitwise_xor', "Elementwise bitwise xor.")
arctan2 = _binary_fn('arctan2', "Elementwise arc tangent of ``x1 / x2``, quadrant-aware.")
hypot = _binary_fn('hypot', "Elementwise ``sqrt(x1**2 + x2**2)``.")
copysign = _binary_fn('copysign', "``x1`` with the sign of ``x2``, elementwise.")
ldexp = _binary_fn('ldexp', "``x1 * 2 ** x2`` elementwise.")
lcm = _binary_fn('lcm', "Elementwise least common multiple.")
gcd = _binary_fn('gcd', "Elementwise greatest common divisor.")


def float_power(x1, x2, out=None, **kwargs):
    """``x1 ** x2`` computed in float64."""
    return power(_as_np(x1).astype('float64') if isinstance(x1, NDArray) else float(x1),
                 _as_np(x2).astype('float64') if isinstance(x2, NDArray) else x2, out=out)


# -- reductions -----------------------------------------------------------------------------------

def _axis(axis):
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    return int(axis)


def _dt(dtype):
    return dtype_name(dtype) if dtype is not None else None


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):  # pylint: disable=redefined-builtin
    """The sum over ``axis`` (all axes when None)."""
    return _invoke('_np_sum', (_as_np(a),), out=out, axis=_axis(axis), dtype=_dt(dtype),
                   keepdims=keepdims, initial=initial)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """The product over ``axis``."""
    return _invoke('_np_prod', (_as_np(a),), out=out, axis=_axis(axis), dtype=_dt(dtype),
                   keepdims=keepdims, initial=initial)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """The mean over ``axis`` (integers give float32)."""
    return _invoke('_npi_mean', (_as_np(a),), out=out, axis=_axis(axis), dtype=_dt(dtype),
                   keepdims=keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """The standard deviation over ``axis``."""
    return _invoke('_npi_std', (_as_np(a),), out=out, axis=_axis(axis), dtype=_dt(dtype),
                   ddof=ddof, keepdims=keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """The variance over ``axis``."""
    return _invoke('_npi_var', (_as_np(a),), out=out, axis=_axis(axis), dtype=_dt(dtype),
                   ddof=ddof, keepdims=keepdims)


def max(a, axis=None, out=None, keepdims=False, initial=None):  # pylint: disable=redefined-builtin
    """The maximum over ``axis``."""
    return _invoke('_np_max', (_as_np(a),), out=out, axis=_axis(axis), keepdims=keepdims,
                   initial=initial)


def min(a, axis=None, out=None, keepdims=False, initial=None):  # pylint: disable=redefined-builtin
    """The minimum over ``axis``."""
    return _invoke('_np_min', (_as_np(a),), out=out, axis=_axis(axis), keepdims=keepdims,
                   initial=initial)


amax = max
amin = min


def all(a, axis=None, out=None, keepdims=False):  # pylint: disable=redefined-builtin
    """Whether every element over ``axis`` is true."""
    return _invoke('_np_all', (_as_np(a),), out=out, axis=_axis(axis), keepdims=keepdims)


def any(a, axis=None, out=None, keepdims=False):  # pylint: disable=redefined-builtin
    """Whether some element over ``axis`` is true."""
    return _invoke('_np_any', (_as_np(a),), out=out, axis=_axis(axis), keepdims=keepdims)


def argmax(a, axis=None, out=None, keepdims=False):
    """Indices of the maxima along ``axis`` (of the flattened array when None), int64."""
    return _invoke('_npi_argmax', (_as_np(a),), out=out, axis=axis, keepdims=keepdims)


def argmin(a, axis=None, out=None, keepdims=False):
    """Indices of the minima along ``axis``, int64."""
    return _invoke('_npi_argmin', (_as_np(a),), out=out, axis=axis, keepdims=keepdims)


# -- shapes ---------------------------------------------------------------------------------------

class _ReshapeError(MXNetError, ValueError):
    """A shape that does not fit: MXNet raises MXNetError, NumPy ValueError."""


def reshape(a, newshape, order='C'):
    """``a`` with shape ``newshape`` (one -1 inferred); a view sharing ``a``'s storage."""
    a = _as_np(a)
    newshape = _shape_arg(newshape) if not isinstance(newshape, (int, onp.integer)) \
        else (int(newshape),)
    if not mode.tracing and isinstance(a, NDArray):
        try:
            new = np_reshape_target(a._shape, newshape)
        except registry.ShapeError as e:
            raise _ReshapeError(str(e)) from None
        out = _make(a._var, new, a._dtype, a._ctx, a._view or 0)
        out.__class__ = ndarray
        return out
    return _invoke('_np_reshape', (a,), newshape=newshape, order=order)


def transpose(a, axes=None):
    """``a`` with its axes permuted (reversed when ``axes`` is None)."""
    if axes is not None:
        axes = tuple(int(x) for x in axes)
        if len(set(axes)) != len(axes):
            raise ValueError("transpose: repeated axis in %s" % (axes,))
    return _invoke('_np_transpose', (_as_np(a),), axes=axes)


def squeeze(x, axis=None):
    """``x`` without its axes of length 1 (those of ``axis`` only, when given)."""
    return _invoke('_np_squeeze', (_as_np(x),), axis=_axis(axis))


def expand_dims(a, axis):
    """``a`` with a new axis of length 1 at ``axis``."""
    return _invoke('_npi_expand_dims', (_as_np(a),), axis=_axis(axis))


def concatenate(seq, axis=0, out=None):
    """The arrays of ``seq`` joined along ``axis`` (flattened first when None)."""
    arrays = [_as_np(a) for a in seq]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    return _invoke('_npi_concatenate', arrays, out=out, axis=None if axis is None else int(axis),
                   num_args=len(arrays))


def stack(arrays, axis=0, out=None):
    """The arrays joined along a new axis ``axis``."""
    arrays = [_as_np(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {a._shape for a in arrays if isinstance(a, NDArray)}
    if len(shapes) > 1:
        raise ValueError("all input arrays must have the same shape, got %s"
                         % ', '.join(str(s) for s in sorted(shapes)))
    return _invoke('_npi_stack', arrays, out=out, axis=int(axis), num_args=len(arrays))


def _split(a, indices_or_sections, axis, exact):
    a = _as_np(a)
    if isinstance(a, NDArray) and not a._shape:
        raise ValueError("split: a 0-d array cannot be split")
    ios = indices_or_sections
    if isinstance(ios, NDArray):
        ios = ios.asnumpy().tolist()
    ios = int(ios) if isinstance(ios, (int, onp.integer)) else tuple(int(i) for i in ios)
    axis = int(axis)
    try:
        outs = _invoke('_npi_split', (a,), indices_or_sections=ios, axis=axis, exact=exact)
    except MXNetError as e:
        if 'equal division' in str(e):
            raise ValueError('array split does not result in an equal division') from None
        raise
    return outs if isinstance(outs, list) else [outs]


def split(ary, indices_or_sections, axis=0):
    """``ary`` split into equal sections (an int) or at indices (a list) along ``axis``."""
    return _split(ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    """``split`` that allows sections of unequal size."""
    return _split(ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections):
    """``split`` along axis 1 (axis 0 for 1-d arrays)."""
    ary = _as_np(ary)
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """``split`` along axis 0 (of arrays with at least 2 dims)."""
    ary = _as_np(ary)
    if ary.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """``split`` along axis 2 (of arrays with at least 3 dims)."""
    ary = _as_np(ary)
    if ary.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


def copy(a):
    """A copy of ``a``."""
    return _as_np(a).copy()


def dot(a, b, out=None):
    """NumPy's dot: products of scalars, inner product of vectors, matrix product, and the
    sum over the last axis of ``a`` and the second-to-last of ``b``."""
    a, b = _as_np(a, ctx=_device_of(a, b)), _as_np(b, ctx=_device_of(a, b))
    return _invoke('_np_dot', (a, b), out=out)


def matmul(a, b, out=None, **kwargs):
    """The matrix product with NumPy's broadcasting of stacks of matrices."""
    a, b = _as_np(a, ctx=_device_of(a, b)), _as_np(b, ctx=_device_of(a, b))
    return _invoke('_npi_matmul', (a, b), out=out)


def shape(a):
    """The shape of ``a``."""
    return _as_np(a).shape


def size(a, axis=None):
    """The number of elements of ``a`` (along ``axis``)."""
    a = _as_np(a)
    return a.size if axis is None else a.shape[axis]


def ndim(a):
    """The number of dimensions of ``a``."""
    return _as_np(a).ndim


def may_share_memory(a, b, max_work=None):
    """Whether ``a`` and ``b`` may share elements (views of one array over overlapping
    ranges; neomx's views are contiguous, so this is exact)."""
    return shares_memory(a, b)


def shares_memory(a, b, max_work=None):
    """Whether ``a`` and ``b`` share elements of one storage."""
    if a._var is not b._var:
        return False
    if a.size == 0 or b.size == 0:
        return False
    lo1, lo2 = a._view or 0, b._view or 0
    return lo1 < lo2 + b.size and lo2 < lo1 + a.size
