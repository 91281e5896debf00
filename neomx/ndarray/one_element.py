"""What ``asnumpy()`` gives for a one-element array under NumPy 2: NumPy 1's scalar conversions.

MXNet 1.x has no 0-d arrays, so a full reduction is a 1-d array of one element, and MXNet code
turns it into a number with ``float(x.asnumpy())`` or ``'%f' % x.asnumpy()`` (d2l does in every
training loop). NumPy 1 allowed that; NumPy 1.25 deprecated it and NumPy 2.3+ raises TypeError
("only 0-dimensional arrays can be converted to Python scalars"). ndarray's conversion slots
cannot be changed from Python, so ``asnumpy()`` of an array with exactly one element and at
least one dimension returns a ``OneElementArray`` where the installed NumPy refuses: a subclass
of ``numpy.ndarray`` that adds ``__float__``, ``__int__`` and ``__complex__`` and nothing else.

What stays as before: shape, dtype, values, memory (it owns its data, C order), ``isinstance(a,
np.ndarray)``, ``repr`` (``array([1.5], dtype=float32)``), ``str``, ``np.asarray(a)`` (a plain
ndarray), ``np.save`` and pickling (both give a plain ndarray back, so a pickle does not need
neomx). What differs: ``type(a) is np.ndarray`` is False. Results computed from it keep the
conversions while they have one element and at least one dimension (``a * 2``, ``a - b``: as on
NumPy 1); ufunc results of any other size are plain ndarrays.

>>> import numpy as np, neomx as mx
>>> a = mx.nd.ones((3,)).sum().asnumpy()
>>> float(a), '%.1f' % a, int(a * 2), isinstance(a, np.ndarray), a.shape
(3.0, '3.0', 6, True, (1,))
>>> a
array([3.], dtype=float32)
"""
import warnings

import numpy as np

__all__ = ['OneElementArray', 'NEEDED', 'copy_of']


def _numpy_converts_one_element():
    """Whether the installed NumPy turns a 1-d array of one element into a float silently."""
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        try:
            float(np.ones(1))
        except (TypeError, DeprecationWarning):
            return False
    return True


NEEDED = not _numpy_converts_one_element()


class OneElementArray(np.ndarray):
    """A ``numpy.ndarray`` that converts to a Python number when it has exactly one element, as
    every ndarray did in NumPy 1 (see the module's docstring)."""

    def _element(self):
        # A view of a one-element array may have no element (a[1:]): then ndarray's own error.
        return np.ndarray.reshape(self, -1)[0] if self.size == 1 else None

    def __float__(self):
        e = self._element()
        return np.ndarray.__float__(self) if e is None else float(e)

    def __int__(self):
        e = self._element()
        return np.ndarray.__int__(self) if e is None else int(e)

    def __complex__(self):
        e = self._element()
        return np.ndarray.__complex__(self) if e is None else complex(e)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        out = super().__array_wrap__(array, context, return_scalar)
        if isinstance(out, OneElementArray) and (out.ndim == 0 or out.size != 1):
            out = out.view(np.ndarray)
            if return_scalar and out.ndim == 0:
                return out[()]              # a.sum() is a NumPy scalar, as for an ndarray
        return out

    def __repr__(self):
        return repr(self.view(np.ndarray))

    # Pickled (and so sent to other processes, or copied by copy.copy's fallback) as the plain
    # ndarray it is equal to.
    def __reduce__(self):
        return self.view(np.ndarray).__reduce__()

    def __reduce_ex__(self, protocol):
        return self.view(np.ndarray).__reduce_ex__(protocol)


def copy_of(a):
    """A copy of the one-element ndarray ``a`` that owns its memory, as ``asnumpy()`` gives it."""
    out = OneElementArray(a.shape, a.dtype)
    out[...] = a
    return out
