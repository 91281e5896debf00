"""``npx.save`` / ``npx.load``: MXNet's ``.params`` format with ``mx.np.ndarray`` (0-d arrays
included) in and out."""
from ..ndarray import utils as _nd_utils
from ..ndarray.ndarray import NDArray
from ..util import np_shape

__all__ = ['save', 'load']


def save(file, arr):
    """Saves an ndarray, a list of them or a dict of them to ``file``."""
    if isinstance(arr, NDArray):
        arr = [arr]
    if isinstance(arr, dict):
        for k, v in arr.items():
            if not isinstance(v, NDArray):
                raise TypeError("npx.save: value of %r is %s, not an ndarray"
                                % (k, type(v).__name__))
    elif isinstance(arr, (list, tuple)):
        for v in arr:
            if not isinstance(v, NDArray):
                raise TypeError("npx.save: %s is not an ndarray" % type(v).__name__)
    else:
        raise ValueError("npx.save: data must be an ndarray, a list or a dict of them")
    with np_shape(True):        # npx files are written and read under NumPy shape semantics
        _nd_utils.save(file, arr)


def load(file):
    """Loads what ``save`` wrote, as ``mx.np.ndarray`` (a list, or a dict for named arrays)."""
    with np_shape(True):
        data = _nd_utils.load(file)
    if isinstance(data, dict):
        return {k: v.as_np_ndarray() for k, v in data.items()}
    return [v.as_np_ndarray() for v in data]
