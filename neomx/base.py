"""Shared foundations: the error type, dtype tables and environment settings.

Everything else in neomx imports from here; this module imports nothing of neomx.
"""
import os
import sys
import threading

import numpy as np
import torch

__all__ = ['MXNetError', 'NotSupportedForSparseNDArray', 'numeric_types', 'integer_types',
           'string_types', 'dtype_np', 'dtype_torch', 'dtype_name', 'env_int', 'env_str',
           'data_dir']


class MXNetError(RuntimeError):
    """The error neomx raises for invalid operations, as MXNet's ``mxnet.base.MXNetError``."""


class NotSupportedForSparseNDArray(MXNetError):
    pass


numeric_types = (float, int, np.generic)
integer_types = (int, np.integer)
string_types = (str,)

# MXNet's type flags (the numbers in .params files and symbol JSON `__dtype__`).
_TABLE = [
    # name       numpy        torch           flag
    ('float32', np.float32, torch.float32, 0),
    ('float64', np.float64, torch.float64, 1),
    ('float16', np.float16, torch.float16, 2),
    ('uint8', np.uint8, torch.uint8, 3),
    ('int32', np.int32, torch.int32, 4),
    ('int8', np.int8, torch.int8, 5),
    ('int64', np.int64, torch.int64, 6),
    ('bool', np.bool_, torch.bool, 7),
    ('int16', np.int16, torch.int16, 8),
    ('bfloat16', None, torch.bfloat16, 12),
]
_BY_NAME = {name: (npt, tt, flag) for name, npt, tt, flag in _TABLE}
_NAME_OF_TORCH = {tt: name for name, _, tt, _ in _TABLE}
_NAME_OF_FLAG = {flag: name for name, _, _, flag in _TABLE}
_NAME_OF_NP = {np.dtype(npt): name for name, npt, _, _ in _TABLE if npt is not None}
_CACHE = {}


def dtype_name(dtype):
    """Canonical name ('float32', ...) of a dtype given as a name, numpy type, torch dtype or
    MXNet type flag. Raises a TypeError naming the value for anything else."""
    try:
        return _CACHE[dtype]
    except (KeyError, TypeError):
        pass
    name = None
    if isinstance(dtype, str):
        name = dtype if dtype in _BY_NAME else None
    elif isinstance(dtype, torch.dtype):
        name = _NAME_OF_TORCH.get(dtype)
    elif isinstance(dtype, bool):
        name = None
    elif isinstance(dtype, int):
        name = _NAME_OF_FLAG.get(dtype)
    elif dtype is None:
        name = 'float32'
    else:
        try:
            name = _NAME_OF_NP.get(np.dtype(dtype))
        except TypeError:
            name = None
    if name is None:
        raise TypeError("unsupported dtype %r: expected one of %s" % (dtype, ', '.join(_BY_NAME)))
    try:
        _CACHE[dtype] = name
    except TypeError:
        pass
    return name


def dtype_np(dtype):
    """The numpy type (e.g. ``numpy.float32``) MXNet reports as ``NDArray.dtype``."""
    npt = _BY_NAME[dtype_name(dtype)][0]
    if npt is None:
        raise TypeError("dtype bfloat16 has no numpy equivalent")
    return npt


def dtype_torch(dtype):
    return _BY_NAME[dtype_name(dtype)][1]


def dtype_flag(dtype):
    return _BY_NAME[dtype_name(dtype)][2]


def env_str(*names, default=None):
    """The first of the environment variables ``names`` that is set (neomx's own name first,
    then MXNet's), or ``default``."""
    for name in names:
        value = os.environ.get(name)
        if value not in (None, ''):
            return value
    return default


def data_dir():
    """Where datasets and models are kept: ``$NEOMX_HOME`` or ``$MXNET_HOME``, else
    ``~/.mxnet`` (MXNet's folder, so files it downloaded are found)."""
    return os.path.expanduser(env_str('NEOMX_HOME', 'MXNET_HOME', default='~/.mxnet'))


def env_int(*names, default=None):
    value = env_str(*names)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise MXNetError("environment variable %s=%r: expected an integer" % (names[0], value)) from None


class _Mode(threading.local):
    """The front end's autograd mode, per Python thread (read when an operation is pushed)."""
    recording = False
    training = False


mode = _Mode()


# -- where an operation was pushed from ---------------------------------------------------

_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep   # the neomx package
_INTERNAL = {}


def user_line(depth=2):
    """(file, line) of the innermost caller outside neomx, for error messages."""
    f = sys._getframe(depth)
    internal = _INTERNAL
    while f is not None:
        name = f.f_code.co_filename
        r = internal.get(name)
        if r is None:
            r = internal[name] = name.startswith(_PKG)
        if not r:
            return (name, f.f_lineno)
        f = f.f_back
    return None
