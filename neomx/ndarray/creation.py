"""Array creation and the Python-level helpers of ``nd`` (``array``, ``zeros``, ``maximum``,
``concatenate``, ...), which dispatch to registry operators."""
import math
import operator

import numpy as np
import torch

from .. import engine as _engine
from ..base import MXNetError, dtype_name, numeric_types
from ..context import current_context
from ..ops import registry
from ..ops.layout import dense
from .gen import parse_ctx
from .ndarray import NDArray, Storage, _binary, _check_writable, _make, from_tensor, invoke
from .run import store_into

__all__ = ['array', 'empty', 'zeros', 'ones', 'full', 'arange', 'eye', 'linspace', 'from_numpy',
           'from_dlpack', 'to_dlpack_for_read', 'to_dlpack_for_write', 'add', 'subtract',
           'multiply', 'divide', 'true_divide', 'modulo', 'power', 'maximum', 'minimum', 'hypot',
           'equal', 'not_equal', 'greater', 'greater_equal', 'lesser', 'lesser_equal',
           'logical_and', 'logical_or', 'logical_xor', 'concatenate', 'moveaxis', 'onehot_encode',
           'imdecode', 'split_v2', 'histogram', 'reset_arrays']


def _ctx(ctx):
    return parse_ctx(ctx) or current_context()


def _from_host(tensor, ctx):
    """An array on ``ctx`` holding the host tensor ``tensor`` (owned by the new array)."""
    ctx = _ctx(ctx)
    # NumPy calls an array C-contiguous whatever the strides of its axes of length 1: a
    # transposed batch of one-channel images keeps channels-last strides (see ops.layout)
    tensor = dense(tensor)
    if ctx.device_typeid != 2:
        return _make(Storage(tensor), tuple(tensor.shape), dtype_name(tensor.dtype), ctx)
    out = _make(Storage(), tuple(tensor.shape), dtype_name(tensor.dtype), ctx)
    dev = ctx.torch_device
    var = out._var

    def fn():
        var.tensor = tensor.to(dev, non_blocking=False)
    _engine.push(fn, [], [var], ctx, '_from_host', copy=True)
    return out


def array(source_array, ctx=None, dtype=None):
    """An array holding a copy of ``source_array`` (NDArray, numpy array, list, scalar);
    dtype float32 unless given or copied from an NDArray.

    >>> import neomx as mx
    >>> mx.nd.array([[1, 2], [3, 4]]).shape
    (2, 2)
    """
    if isinstance(source_array, NDArray) and source_array.stype != 'default' or \
            hasattr(source_array, 'tocoo') and hasattr(source_array, 'nnz'):   # scipy.sparse
        from .sparse import array as sparse_array
        return sparse_array(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, NDArray):
        dtype = source_array._dtype if dtype is None else dtype_name(dtype)
        out = source_array.as_in_context(_ctx(ctx)) if ctx is not None else source_array
        if out is source_array:
            out = source_array.copy()
        return out if out._dtype == dtype else out.astype(dtype)
    if isinstance(source_array, torch.Tensor):
        source_array = source_array.detach().cpu().numpy()
    name = dtype_name(dtype) if dtype is not None else 'float32'
    try:
        try:
            a = np.array(source_array, dtype=_NP.get(name, np.float32))
        except OverflowError:
            # a Python int outside the dtype's range: MXNet 1.9.1 (on NumPy < 2) wraps it,
            # nd.array([-1], dtype='uint8') is [255]; NumPy 2 refuses it in np.array
            a = np.array(source_array).astype(_NP.get(name, np.float32))
    except (TypeError, ValueError, OverflowError) as e:
        raise MXNetError("array: cannot convert %s to an array of %s: %s"
                         % (type(source_array).__name__, name, e)) from None
    # MXNet keeps a 0-d source 0-d (np.ascontiguousarray would make it 1-d).
    t = torch.from_numpy(a if a.flags['C_CONTIGUOUS'] else a.copy(order='C'))
    if name == 'bfloat16':
        t = t.to(torch.bfloat16)
    return _from_host(t, ctx)


_NP = {'float32': np.float32, 'float64': np.float64, 'float16': np.float16, 'uint8': np.uint8,
       'int32': np.int32, 'int8': np.int8, 'int64': np.int64, 'bool': np.bool_,
       'int16': np.int16}


def from_numpy(ndarray, zero_copy=True):
    """An array on cpu(0) from a numpy array. With ``zero_copy`` it shares the memory, and, as
    in MXNet, the numpy array becomes read-only (write through the NDArray) and must be
    C-contiguous; otherwise the values are copied."""
    if not zero_copy:
        return array(ndarray, dtype=ndarray.dtype)
    if not ndarray.flags['C_CONTIGUOUS']:
        raise ValueError("from_numpy: only C-contiguous arrays can be shared (zero_copy=True); "
                         "got an array of shape %s with strides %s"
                         % (ndarray.shape, ndarray.strides))
    t = torch.from_numpy(ndarray)
    ndarray.flags['WRITEABLE'] = False
    return from_tensor(t)


def from_dlpack(dlpack):
    """An array sharing the memory of a DLPack capsule or of any object with ``__dlpack__``
    (torch and JAX arrays)."""
    return from_tensor(torch.utils.dlpack.from_dlpack(dlpack))


def to_dlpack_for_read(data):
    return data.to_dlpack_for_read()


def to_dlpack_for_write(data):
    return data.to_dlpack_for_write()


def _create(opname, shape, ctx, dtype, **attrs):
    op = registry.get(opname)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(d) for d in shape)    # a list or a NumPy array of sizes too
    _check_creation_shape(opname.strip('_'), shape)
    attrs = op.parse_attrs(dict(attrs, shape=shape, dtype=dtype or 'float32'))
    return invoke(op, (), attrs, ctx=_ctx(ctx))


def _into(out, r):
    """``r`` written into ``out`` (an NDArray of its shape) when given, as MXNet's ``out=``."""
    if out is None:
        return r
    if not isinstance(out, NDArray) or out.shape != r.shape:
        raise MXNetError("out= must be an NDArray of shape %s, got %s"
                         % (r.shape, getattr(out, 'shape', type(out).__name__)))
    out[:] = r
    return out


def _check_creation_shape(name, shape):
    """MXNet 1.x arrays have at least one axis and no empty one, except under NumPy shape
    semantics (``mx.np_shape()``), where () is a scalar and 0 an empty axis."""
    from ..util import is_np_shape
    if any(d < 0 for d in shape):
        raise MXNetError("%s: shape %s has a negative dimension" % (name, tuple(shape)))
    if is_np_shape():
        return
    if not shape:
        raise MXNetError("%s: shape () has no dimensions; MXNet arrays have at least one, as "
                         "(1,) (a scalar needs mx.np_shape())" % name)
    if 0 in shape:
        raise MXNetError("%s: shape %s has an empty dimension; zero-size arrays need "
                         "mx.np_shape()" % (name, tuple(shape)))


def empty(shape, ctx=None, dtype=None, stype=None):
    """An array whose values are not set (a sparse ``stype`` holds no values: zeros)."""
    if stype is not None and stype != 'default':
        from .sparse import empty as sparse_empty
        return sparse_empty(stype, shape, ctx=ctx, dtype=dtype)
    return _create('_empty', shape, ctx, dtype)


def zeros(shape, ctx=None, dtype=None, stype=None, out=None, **kwargs):
    """An array of zeros (of storage type ``stype``, see ``nd.sparse``)."""
    if stype is not None and stype != 'default':
        from .sparse import zeros as sparse_zeros
        return _into(out, sparse_zeros(stype, shape, ctx=ctx, dtype=dtype))
    return _into(out, _create('_zeros', shape, ctx, dtype))


def ones(shape, ctx=None, dtype=None, out=None, **kwargs):
    """An array of ones."""
    return _into(out, _create('_ones', shape, ctx, dtype))


def full(shape, val, ctx=None, dtype=None, out=None):
    """An array filled with ``val``."""
    r = _create('_full', shape, ctx, dtype, value=val)
    if out is not None:
        out[:] = r
        return out
    return r


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, ctx=None, dtype=None):
    """Evenly spaced values in [start, stop)."""
    op = registry.get('_arange')
    attrs = op.parse_attrs({'start': start, 'stop': stop, 'step': step, 'repeat': repeat,
                            'dtype': dtype or 'float32'})
    return invoke(op, (), attrs, ctx=_ctx(ctx))


def eye(N, M=0, k=0, ctx=None, dtype=None, **kwargs):
    op = registry.get('_eye')
    attrs = op.parse_attrs({'N': N, 'M': M, 'k': k, 'dtype': dtype or 'float32'})
    return invoke(op, (), attrs, ctx=_ctx(ctx))


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None):
    op = registry.get('_linspace')
    attrs = op.parse_attrs({'start': start, 'stop': stop, 'num': num, 'endpoint': endpoint,
                            'dtype': dtype or 'float32'})
    return invoke(op, (), attrs, ctx=_ctx(ctx))


# -- binary helpers accepting scalars on either side ---------------------------------------

def _helper(name, array_op, scalar_op, rscalar_op, on_numbers):
    def f(lhs, rhs):
        if isinstance(lhs, NDArray):
            return _binary(lhs, rhs, array_op, scalar_op)
        if isinstance(rhs, NDArray):
            if isinstance(lhs, numeric_types):
                return _binary(rhs, lhs, None, rscalar_op)
            return _binary(array(lhs, ctx=rhs._ctx, dtype=rhs._dtype), rhs, array_op, scalar_op)
        if isinstance(lhs, numeric_types) and isinstance(rhs, numeric_types):
            return on_numbers(lhs, rhs)      # two numbers give a number, as in MXNet
        raise TypeError("%s: at least one argument must be an NDArray or a number, got %s and "
                        "%s" % (name, type(lhs).__name__, type(rhs).__name__))
    f.__name__ = name
    f.__doc__ = ("Elementwise %s with broadcasting; either side may be a scalar (both: a "
                 "number)." % name)
    return f


def _test(cmp):
    return lambda x, y: 1 if cmp(x, y) else 0


add = _helper('add', 'broadcast_add', '_plus_scalar', '_plus_scalar', operator.add)
subtract = _helper('subtract', 'broadcast_sub', '_minus_scalar', '_rminus_scalar', operator.sub)
multiply = _helper('multiply', 'broadcast_mul', '_mul_scalar', '_mul_scalar', operator.mul)
divide = _helper('divide', 'broadcast_div', '_div_scalar', '_rdiv_scalar', operator.truediv)
true_divide = divide
modulo = _helper('modulo', 'broadcast_mod', '_mod_scalar', '_rmod_scalar', operator.mod)
power = _helper('power', 'broadcast_power', '_power_scalar', '_rpower_scalar', operator.pow)
maximum = _helper('maximum', 'broadcast_maximum', '_maximum_scalar', '_maximum_scalar',
                  lambda x, y: x if x > y else y)
minimum = _helper('minimum', 'broadcast_minimum', '_minimum_scalar', '_minimum_scalar',
                  lambda x, y: x if x < y else y)
hypot = _helper('hypot', 'broadcast_hypot', '_hypot_scalar', '_hypot_scalar', math.hypot)
equal = _helper('equal', 'broadcast_equal', '_equal_scalar', '_equal_scalar',
                _test(operator.eq))
not_equal = _helper('not_equal', 'broadcast_not_equal', '_not_equal_scalar',
                    '_not_equal_scalar', _test(operator.ne))
greater = _helper('greater', 'broadcast_greater', '_greater_scalar', '_lesser_scalar',
                  _test(operator.gt))
greater_equal = _helper('greater_equal', 'broadcast_greater_equal', '_greater_equal_scalar',
                        '_lesser_equal_scalar', _test(operator.ge))
lesser = _helper('lesser', 'broadcast_lesser', '_lesser_scalar', '_greater_scalar',
                 _test(operator.lt))
lesser_equal = _helper('lesser_equal', 'broadcast_lesser_equal', '_lesser_equal_scalar',
                       '_greater_equal_scalar', _test(operator.le))
logical_and = _helper('logical_and', 'broadcast_logical_and', '_logical_and_scalar',
                      '_logical_and_scalar', _test(lambda x, y: x and y))
logical_or = _helper('logical_or', 'broadcast_logical_or', '_logical_or_scalar',
                     '_logical_or_scalar', _test(lambda x, y: x or y))
logical_xor = _helper('logical_xor', 'broadcast_logical_xor', '_logical_xor_scalar',
                      '_logical_xor_scalar', _test(lambda x, y: bool(x) ^ bool(y)))


def concatenate(arrays, axis=0, always_copy=True):
    """Joins ``arrays`` along ``axis``."""
    if not arrays:
        raise MXNetError("concatenate: no arrays given")
    if len(arrays) == 1 and not always_copy:
        return arrays[0]
    op = registry.get('Concat')
    return invoke(op, list(arrays), op.parse_attrs({'dim': axis, 'num_args': len(arrays)}))


def _axis_list(axes, ndim, what):
    axes = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError("moveaxis: %s axis %d is out of range for an array of %d "
                             "dimensions" % (what, a, ndim))
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError("moveaxis: repeated %s axis in %s" % (what, axes))
    return out


def moveaxis(tensor, source, destination):
    """The array with axes ``source`` (an int or a sequence) moved to ``destination``, the
    others kept in order, as ``numpy.moveaxis``."""
    src = _axis_list(source, tensor.ndim, 'source')
    dst = _axis_list(destination, tensor.ndim, 'destination')
    if len(src) != len(dst):
        raise ValueError("moveaxis: `source` and `destination` arguments must have the same "
                         "number of elements (%d and %d)" % (len(src), len(dst)))
    axes = [n for n in range(tensor.ndim) if n not in src]
    for d, s_ in sorted(zip(dst, src)):
        axes.insert(d, s_)
    op = registry.get('transpose')
    return invoke(op, [tensor], op.parse_attrs({'axes': tuple(axes)}))


def onehot_encode(indices, out):
    op = registry.get('one_hot')
    return invoke(op, [indices], op.parse_attrs({'depth': out.shape[1]}), out=out)


def imdecode(*args, **kwargs):
    raise MXNetError("imdecode: image decoding is not part of neomx; decode with PIL or "
                     "imageio and pass the pixels to nd.array")



def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Splits ``ary`` along ``axis`` into ``indices_or_sections`` equal parts (an int) or at
    the given indices (a tuple), as ``numpy.split``.

    >>> import neomx as mx
    >>> [p.shape for p in mx.nd.split_v2(mx.nd.zeros((3, 4)), (1, 3), axis=1)]
    [(3, 1), (3, 2), (3, 1)]
    """
    size = ary.shape[axis]
    if isinstance(indices_or_sections, int):
        if indices_or_sections <= 0 or size % indices_or_sections:
            raise MXNetError("split_v2: axis %d of length %d does not split into %d equal parts"
                             % (axis, size, indices_or_sections))
        step = size // indices_or_sections
        indices = [i * step for i in range(indices_or_sections)]
    elif isinstance(indices_or_sections, (tuple, list)):
        indices = [0] + list(indices_or_sections)
    else:
        raise MXNetError("split_v2: indices_or_sections must be an int or a tuple, got %r"
                         % (indices_or_sections,))
    op = registry.get('_split_v2')
    out = invoke(op, [ary], op.parse_attrs({'indices': indices, 'axis': axis,
                                             'squeeze_axis': squeeze_axis}))
    return out if isinstance(out, list) else [out]


def histogram(a, bins=10, range=None):
    """(counts, bin edges) of the values of ``a``: ``bins`` equal bins over ``range`` (the
    data's min and max when None, which waits for the data, as MXNet does), or the edges in
    the NDArray ``bins``.

    >>> import neomx as mx
    >>> counts, edges = mx.nd.histogram(mx.nd.array([0.1, 0.5, 2.0, 3.9]), bins=4, range=(0, 4))
    >>> counts.asnumpy().tolist()
    [2, 0, 1, 1]
    """
    op = registry.get('_histogram')
    if isinstance(bins, NDArray):
        return invoke(op, [a, bins], op.parse_attrs({}))
    if not isinstance(bins, int) or bins <= 0:
        raise MXNetError("histogram: bins must be a positive int or an NDArray of edges, got %r"
                         % (bins,))
    if range is None:
        values = a.asnumpy()
        range = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
        if range[0] == range[1]:
            range = (range[0] - 0.5, range[1] + 0.5)     # numpy's rule for a single value
    return invoke(op, [a, None], op.parse_attrs({'bin_cnt': bins, 'range': range}))


def reset_arrays(*arrays, num_arrays=None):
    """Sets every array of ``arrays`` to 0 in place, with one operation per device (MXNet's
    ``reset_arrays``, which ``zero_grad`` uses).

    >>> import neomx as mx
    >>> a, b = mx.nd.ones((2,)), mx.nd.ones((3,))
    >>> mx.nd.reset_arrays(a, b, num_arrays=2)
    >>> a.asnumpy().tolist() + b.asnumpy().tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0]
    """
    if num_arrays is not None and int(num_arrays) != len(arrays):
        raise MXNetError("reset_arrays: num_arrays=%s but %d arrays were given"
                         % (num_arrays, len(arrays)))
    groups = {}
    for a in arrays:
        if not isinstance(a, NDArray):
            raise MXNetError("reset_arrays: expected NDArrays, got %s" % type(a).__name__)
        _check_writable(a)
        groups.setdefault(a._ctx, []).append(a)
    for ctx, group in groups.items():
        def fn(group=group):
            for a in group:
                t = a._tensor(write=True)
                if t is None:
                    store_into(a, torch.zeros(a._shape, device=ctx.torch_device))
                else:
                    t.detach().zero_()
        _engine.push(fn, [], [a._var for a in group], ctx, 'reset_arrays')
