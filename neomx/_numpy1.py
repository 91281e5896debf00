"""NumPy 1's names that NumPy 2 removed, for code written against MXNet.

MXNet-era code uses ``np.int``, ``np.float``, ``np.NaN``, ``np.round_``, ``np.product`` and the
like, which NumPy 1.24 and 2.0 removed; with NumPy 2 such a line fails before it reaches an
MXNet call. ``restore()`` puts back the ones the installed NumPy lacks, as the aliases NumPy 1
had (``np.int`` is Python's ``int``, ``np.float_`` is ``np.float64``, ...). It adds names only:
nothing NumPy defines is replaced, and under NumPy 1 it does nothing.

It runs when code imports ``mxnet`` (``neomx run``, or the ``mxnet`` alias): such code is written
for MXNet 1.x and its NumPy. ``import neomx`` alone leaves NumPy as it is.
"""
import numpy as np

__all__ = ['restore', 'ALIASES']


def _asfarray(a, dtype=np.float64):
    dtype = np.dtype(dtype)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    return np.asarray(a, dtype=dtype)


def _msort(a):
    return np.sort(a, axis=0)


def _in1d(ar1, ar2, assume_unique=False, invert=False, kind=None):
    return np.isin(np.ravel(ar1), ar2, assume_unique=assume_unique, invert=invert, kind=kind)


# name -> a function of the numpy module giving NumPy 1's value for it
ALIASES = {
    'int': lambda m: int, 'float': lambda m: float, 'complex': lambda m: complex,
    'object': lambda m: object, 'str': lambda m: str, 'unicode': lambda m: str,
    'NaN': lambda m: m.nan, 'NAN': lambda m: m.nan,
    'Inf': lambda m: m.inf, 'Infinity': lambda m: m.inf, 'infty': lambda m: m.inf,
    'PINF': lambda m: m.inf, 'NINF': lambda m: -m.inf, 'PZERO': lambda m: 0.0,
    'NZERO': lambda m: -0.0,
    'round_': lambda m: m.round, 'product': lambda m: m.prod, 'cumproduct': lambda m: m.cumprod,
    'sometrue': lambda m: m.any, 'alltrue': lambda m: m.all, 'trapz': lambda m: m.trapezoid,
    'asfarray': lambda m: _asfarray, 'msort': lambda m: _msort, 'in1d': lambda m: _in1d,
    'float_': lambda m: m.float64, 'complex_': lambda m: m.complex128,
    'cfloat': lambda m: m.complex128, 'singlecomplex': lambda m: m.complex64,
    'longfloat': lambda m: m.longdouble, 'longcomplex': lambda m: m.clongdouble,
    'clongfloat': lambda m: m.clongdouble, 'string_': lambda m: m.bytes_,
    'unicode_': lambda m: m.str_, 'int0': lambda m: m.intp, 'uint0': lambda m: m.uintp,
    'bool8': lambda m: m.bool_, 'object0': lambda m: m.object_, 'str0': lambda m: m.str_,
    'bytes0': lambda m: m.bytes_, 'void0': lambda m: m.void,
}


def restore():
    """Adds the names of ``ALIASES`` that the installed NumPy lacks; returns them."""
    added = []
    for name, value in ALIASES.items():
        if name not in vars(np):
            try:
                setattr(np, name, value(np))
            except AttributeError:      # a NumPy without the name the alias stands for
                continue
            added.append(name)
    return added
