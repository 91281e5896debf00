"""The operator registry and the operators in it (see ``registry``)."""
from . import registry
from .registry import (REQUIRED, Any, Attr, Axis, Bool, DType, Enum, Float, FloatOrNone, Int,
                       IntOrNone, Op, ShapeError, Shape, Str, all_ops, exists, get, register)
from . import elemwise, creation, reduce, shape, linalg, nn  # noqa: F401  (they register)
from . import indexing  # noqa: F401
from . import image  # noqa: F401
from . import contrib_nn  # noqa: F401
from . import contrib, vision, detection  # noqa: F401
from . import rnn  # noqa: F401
from . import optimizer  # noqa: F401
from . import quantization  # noqa: F401
from . import numpy, numpy_random, numpy_linalg  # noqa: F401  (mx.np's operators)
from . import sparse  # noqa: E402  (storage types: rules and kernels on sparse tensors)

sparse.register_value_kernels(get)


__all__ = ['registry', 'Op', 'register', 'get', 'exists', 'all_ops', 'REQUIRED', 'Attr', 'Any',
           'Int', 'IntOrNone', 'Float', 'FloatOrNone', 'Bool', 'Str', 'Enum', 'Shape', 'Axis',
           'DType', 'ShapeError']
