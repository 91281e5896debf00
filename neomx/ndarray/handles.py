"""What stands for MXNet's C handles: integers (as ctypes writes them) naming NDArrays and
Symbols, given out by ``_LIB.MXNDArrayFromDLPack`` and ``MXBuildSubgraphByOpNames``
(``handle_of``, used up by ``NDArray(handle=...)`` and ``Symbol(handle)``) and passed by ctypes
for an array or symbol itself (``parameter_of``: ``ctypes.cast(arr, NDArrayHandle)`` in
MXNet's monitor callbacks). ``neomx/_capi.py`` is the C API that uses them.

>>> import neomx as mx
>>> x = mx.nd.ones((2,))
>>> array_of_handle(handle_of(x)) is x
True
"""
import ctypes
import itertools
import threading
import weakref

from ..base import MXNetError

__all__ = ['handle_of', 'parameter_of', 'array_of_handle']

# Handles given out, each an NDArray (or Symbol) until ``NDArray(handle=...)`` takes it.
_HANDLES = {}
_NEXT = itertools.count(1 << 20)
_LOCK = threading.Lock()


def handle_of(arr):
    """A new handle (an integer, as ctypes writes it) for NDArray or Symbol ``arr``."""
    with _LOCK:
        h = next(_NEXT)
        _HANDLES[h] = arr
    return h


# Arrays handed to ctypes as themselves (``NDArray._as_parameter_``: ``ctypes.cast(arr,
# NDArrayHandle)`` in a monitor callback), by their id while they live.
_PASSED = weakref.WeakValueDictionary()


def parameter_of(arr):
    """The handle ctypes passes for NDArray ``arr``: the same while the array lives, and not
    used up by ``NDArray(handle=...)``."""
    with _LOCK:
        _PASSED[id(arr)] = arr
    return ctypes.c_void_p(id(arr))


def array_of_handle(handle):
    """The NDArray (or Symbol) of a handle from ``handle_of`` (a ctypes value or an integer;
    such a handle is used up) or from ``parameter_of``."""
    value = handle.value if isinstance(handle, ctypes.c_void_p) else handle
    with _LOCK:
        arr = _HANDLES.pop(value, None)
        if arr is None:
            arr = _PASSED.get(value)
    if arr is None:
        raise MXNetError("handle %r: not a handle neomx gave out (from _LIB.MXNDArrayFromDLPack "
                         "or MXBuildSubgraphByOpNames, or an array or symbol passed through "
                         "ctypes), or one already used" % (value,))
    return arr
