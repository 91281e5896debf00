"""``mxnet.base._LIB``: the few entry points of MXNet's C API that Python code calls directly
and that have a meaning without MXNet's library.

neomx has no C library. What it offers here works as MXNet's functions do, through ctypes:
``MXNDArrayFromDLPack`` (and ``...Ex``) take a pointer to a ``DLManagedTensor`` and write an
NDArray handle, which ``NDArray(handle=...)`` turns into the array; ``MXNDArrayToDLPack``
writes the pointer of a new ``DLManagedTensor``; ``MXNDArrayCallDLPackDeleter`` frees one;
the subgraph API's ``MXBuildSubgraphByOpNames`` writes a Symbol handle (``Symbol(handle)``),
``MXSetSubgraphPropertyOpNames`` / ``MXRemoveSubgraphPropertyOpNames`` (and ``...V2``) set the
operators of the test backends 'default' and 'default_v2' (symbol/subgraph.py);
``MXGetLastError`` says why a call returned -1. Every other name raises an AttributeError that
says so.

>>> import ctypes, neomx as mx
>>> from neomx.base import _LIB, NDArrayHandle, check_call
>>> x = mx.nd.ones((2, 3))
>>> ptr = ctypes.c_void_p()
>>> check_call(_LIB.MXNDArrayToDLPack(x.handle, ctypes.byref(ptr)))
0
>>> h = NDArrayHandle()
>>> check_call(_LIB.MXNDArrayFromDLPack(ptr, ctypes.byref(h)))
0
>>> mx.nd.NDArray(handle=h).asnumpy().sum()
np.float32(6.0)
"""
import ctypes

import torch

from . import base
from .ndarray.handles import array_of_handle, handle_of
from .ndarray.ndarray import NDArray, from_tensor

__all__ = ['LIB']

_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_PyCapsule_SetName = ctypes.pythonapi.PyCapsule_SetName
_PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

def _fail(msg):
    base.LAST_ERROR.message = msg
    return -1


def _write(out, value):
    """Writes ``value`` through ``out``, a ctypes ``byref(c_void_p)`` or a c_void_p pointer."""
    target = getattr(out, '_obj', out)
    if isinstance(target, ctypes.c_void_p):
        target.value = value
    else:
        ctypes.cast(out, ctypes.POINTER(ctypes.c_void_p))[0] = value


def _from_dlpack(dlpack, out_handle):
    ptr = dlpack.value if isinstance(dlpack, ctypes.c_void_p) else dlpack
    if not ptr:
        return _fail("MXNDArrayFromDLPack: null DLManagedTensor pointer")
    try:
        capsule = _PyCapsule_New(ptr, b'dltensor', None)
        tensor = torch.utils.dlpack.from_dlpack(capsule)    # takes the tensor's ownership
        _write(out_handle, handle_of(from_tensor(tensor)))
    except Exception as e:      # as the C API, an error code and a message
        return _fail("MXNDArrayFromDLPack: %s" % e)
    return 0


def _text(value):
    value = getattr(value, 'value', value)
    return value.decode('utf-8') if isinstance(value, bytes) else str(value)


def _names(num, names):
    """The strings of a ``c_str_array`` (or a list) of ``num`` names."""
    n = getattr(num, 'value', num)
    return [_text(names[i]) for i in range(int(n))]


def _symbol_of(handle):
    from .symbol.symbol import Symbol
    if isinstance(handle, Symbol):
        return handle
    sym = array_of_handle(handle)
    if not isinstance(sym, Symbol):
        raise TypeError("expected a Symbol's handle (sym.handle), got %r" % (handle,))
    return sym


class _CAPI:
    """See the module docstring."""

    def MXNDArrayFromDLPack(self, dlpack, out_handle):  # noqa: N802 (MXNet's names)
        return _from_dlpack(dlpack, out_handle)

    def MXNDArrayFromDLPackEx(self, dlpack, transient_handle, out_handle):  # noqa: N802
        return _from_dlpack(dlpack, out_handle)

    def MXNDArrayToDLPack(self, handle, out_dlpack):  # noqa: N802
        arr = handle if isinstance(handle, NDArray) else None
        if arr is None:
            return _fail("MXNDArrayToDLPack: expected an NDArray's handle (x.handle)")
        try:
            capsule = torch.utils.dlpack.to_dlpack(arr._data().detach())
            ptr = _PyCapsule_GetPointer(capsule, b'dltensor')
            _PyCapsule_SetName(capsule, b'used_dltensor')    # the caller owns it now
            _write(out_dlpack, ptr)
        except Exception as e:
            return _fail("MXNDArrayToDLPack: %s" % e)
        return 0

    def MXNDArrayCallDLPackDeleter(self, dlpack):  # noqa: N802
        ptr = dlpack.value if isinstance(dlpack, ctypes.c_void_p) else dlpack
        if ptr:
            deleter = ctypes.cast(ptr + _DELETER_OFFSET, ctypes.POINTER(_DELETER))[0]
            if deleter:
                deleter(ptr)
        return 0

    # -- the subgraph API (symbol/subgraph.py) --
    def MXBuildSubgraphByOpNames(self, sym_handle, backend, num, op_names, out):  # noqa: N802
        from .symbol.subgraph import partition_by_names
        from .symbol.symbol import Symbol, _copy_graph
        try:
            sym = _symbol_of(sym_handle)
            heads = partition_by_names(_copy_graph(sym._outputs, {}), _names(num, op_names))
            _write(out, handle_of(Symbol(heads)))
        except Exception as e:
            return _fail("MXBuildSubgraphByOpNames: %s" % e)
        return 0

    def MXSetSubgraphPropertyOpNames(self, backend, num, op_names):  # noqa: N802
        from .symbol.subgraph import set_op_names
        set_op_names(_text(backend), _names(num, op_names))
        return 0

    def MXSetSubgraphPropertyOpNamesV2(self, backend, num, op_names):  # noqa: N802
        return self.MXSetSubgraphPropertyOpNames(backend, num, op_names)

    def MXRemoveSubgraphPropertyOpNames(self, backend):  # noqa: N802
        from .symbol.subgraph import remove_op_names
        remove_op_names(_text(backend))
        return 0

    def MXRemoveSubgraphPropertyOpNamesV2(self, backend):  # noqa: N802
        return self.MXRemoveSubgraphPropertyOpNames(backend)

    def MXGetLastError(self):  # noqa: N802
        return getattr(base.LAST_ERROR, 'message', '').encode('utf-8')

    def __getattr__(self, name):
        raise AttributeError("mxnet.base._LIB.%s: neomx has no MXNet C library; only %s are "
                             "provided" % (name, ', '.join(n for n in dir(_CAPI)
                                                           if n.startswith('MX'))))


# DLManagedTensor: DLTensor (data pointer, device (2 ints), ndim, dtype (4 bytes), shape,
# strides, byte_offset) then manager_ctx and the deleter.
class _DLTensor(ctypes.Structure):
    _fields_ = [('data', ctypes.c_void_p), ('device_type', ctypes.c_int),
                ('device_id', ctypes.c_int), ('ndim', ctypes.c_int),
                ('dtype', ctypes.c_uint8 * 4), ('shape', ctypes.c_void_p),
                ('strides', ctypes.c_void_p), ('byte_offset', ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DELETER_OFFSET = ctypes.sizeof(_DLTensor) + ctypes.sizeof(ctypes.c_void_p)

LIB = _CAPI()
base._LIB = LIB     # mxnet.base._LIB
