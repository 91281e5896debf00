"""``mx.np`` (``mx.numpy``): NumPy's interface on neomx's arrays, engine and autograd.

>>> from neomx import np, npx
>>> npx.set_np()
>>> x = np.ones((2, 3))
>>> (x * 2).sum(axis=1)
array([6., 6.])
>>> npx.reset_np()
"""
import numpy as _onp

from .multiarray import *  # noqa: F401,F403
from .multiarray import __all__ as _multiarray_all
from .multiarray import ndarray
from ._op import *  # noqa: F401,F403
from ._op import __all__ as _op_all
from . import random, linalg, _internal  # noqa: F401
from .fallback import *  # noqa: F401,F403
from .fallback import __all__ as _fallback_all
from ..util import set_np_shape as _set_np_shape  # noqa: F401
from ..util import use_np, use_np_shape, use_np_array  # noqa: F401

# NumPy's scalar types and constants, as MXNet's np module has them.
bool_ = _onp.bool_
bool = _onp.bool_  # pylint: disable=redefined-builtin
int8 = _onp.int8
uint8 = _onp.uint8
int16 = _onp.int16
int32 = _onp.int32
int64 = _onp.int64
float16 = _onp.float16
float32 = _onp.float32
float64 = _onp.float64
dtype = _onp.dtype
finfo = _onp.finfo
iinfo = _onp.iinfo
pi = _onp.pi
e = _onp.e
euler_gamma = _onp.euler_gamma
inf = _onp.inf
Inf = _onp.inf
PINF = _onp.inf
NINF = -_onp.inf
nan = _onp.nan
NaN = _onp.nan
NAN = _onp.nan
PZERO = 0.0
NZERO = -0.0
newaxis = None
_STR_2_DTYPE_ = {'float16': float16, 'float32': float32, 'float64': float64, 'float': float64,
                 'uint8': uint8, 'int8': int8, 'int32': int32, 'int64': int64, 'int': int64,
                 'bool': bool_, 'bool_': bool_, None: None}

__all__ = list(_multiarray_all) + list(_op_all) + list(_fallback_all) + [
    'random', 'linalg', 'ndarray', 'bool_', 'int8', 'uint8', 'int16', 'int32', 'int64',
    'float16', 'float32', 'float64', 'pi', 'e', 'inf', 'nan', 'newaxis', 'finfo', 'iinfo',
    'dtype']


def __getattr__(name):
    # mx.sym.np._Symbol: the NumPy-style symbol class (mx.sym.np is this module)
    if name == '_Symbol':
        from ..symbol.numpy import _Symbol
        return _Symbol
    raise AttributeError("module 'neomx.numpy' has no attribute %r" % (name,))


def _install():
    # nd.np (F.np in a hybrid_forward called on arrays) is this module
    import sys
    from .. import ndarray
    ndarray.np = sys.modules[__name__]


_install()
