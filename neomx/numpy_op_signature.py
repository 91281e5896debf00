"""NumPy's signatures for the ``mx.np`` functions of builtin ``_np_*`` operators (as MXNet's
``mxnet.numpy_op_signature``): ``inspect.signature(mx.np.sum)`` shows NumPy's arguments.

>>> import inspect
>>> from neomx import np
>>> str(inspect.signature(np.transpose))
'(a, axes=None)'
"""
import inspect

from . import _numpy_op_doc
from . import numpy as mx_np
from . import numpy_extension as mx_npx

__all__ = ['_get_builtin_op']

_SUBMODULES = {'_np_': ('_random_', '_linalg_'), '_npx_': ('_image_', '_random_')}


def _get_builtin_op(op_name):
    """The mx.np (``_np_*``) or mx.npx (``_npx_*``) function of operator ``op_name``, or None
    for other names; a ValueError when the module has no such function."""
    for prefix, root in (('_np_', mx_np), ('_npx_', mx_npx)):
        if op_name.startswith(prefix):
            break
    else:
        return None
    rest = op_name[len(prefix):]
    module = root
    for sub in _SUBMODULES[prefix]:
        if rest.startswith(sub[1:]):
            module = getattr(root, sub[1:-1], None)
            if module is None:
                raise ValueError('Cannot find submodule %s in module %s'
                                 % (sub[1:-1], root.__name__))
            rest = rest[len(sub) - 1:]
            break
    op = getattr(module, rest, None)
    if op is None:
        raise ValueError('Cannot find operator %s in module %s' % (rest, module.__name__))
    return op


def _register_op_signatures():
    for name in dir(_numpy_op_doc):
        op = _get_builtin_op(name) if name.startswith('_np') else None
        if op is not None:
            op.__signature__ = inspect.signature(getattr(_numpy_op_doc, name))


_register_op_signatures()
