"""``mxnet.numpy_dispatch_protocol``: NumPy functions and ufuncs on ``mx.np`` arrays run
``mx.np``'s (see ``neomx/numpy/_dispatch.py``)."""
from .numpy._dispatch import (ARRAY_FUNCTIONS as _NUMPY_ARRAY_FUNCTION_LIST,  # noqa: F401
                              ARRAY_UFUNCS as _NUMPY_ARRAY_UFUNC_LIST,
                              with_array_function_protocol, with_array_ufunc_protocol)

__all__ = ['with_array_function_protocol', 'with_array_ufunc_protocol']
