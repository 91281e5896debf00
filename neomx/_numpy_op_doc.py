"""The documented signatures of the ``_np_*`` operators (MXNet's ``mxnet._numpy_op_doc``):
``numpy_op_signature`` gives each ``mx.np`` function of such an operator the signature
written here, which is NumPy's."""
# pylint: disable=unused-argument,redefined-builtin


def _np_all(a, axis=None, keepdims=False, out=None):
    """Whether all elements along ``axis`` are true."""


def _np_any(a, axis=None, keepdims=False, out=None):
    """Whether any element along ``axis`` is true."""


def _np_sometrue(a, axis=None, keepdims=False, out=None):
    """Whether any element along ``axis`` is true (``any``)."""


def _np_max(a, axis=None, keepdims=False, out=None):
    """The maximum along ``axis``."""


def _np_amax(a, axis=None, keepdims=False, out=None):
    """The maximum along ``axis`` (``max``)."""


def _np_min(a, axis=None, keepdims=False, out=None):
    """The minimum along ``axis``."""


def _np_amin(a, axis=None, keepdims=False, out=None):
    """The minimum along ``axis`` (``min``)."""


def _np_atleast_1d(*arys):
    """The inputs as arrays of at least one dimension."""


def _np_atleast_2d(*arys):
    """The inputs as arrays of at least two dimensions."""


def _np_atleast_3d(*arys):
    """The inputs as arrays of at least three dimensions."""


def _np_copy(a, out=None):
    """A copy of ``a``."""


def _np_cumsum(a, axis=None, dtype=None, out=None):
    """Running sums along ``axis`` (of the flattened array when None)."""


def _np_diag(array, k=0):
    """The diagonal of a matrix, or a matrix with the vector on its diagonal."""


def _np_diagflat(array, k=0):
    """A matrix with the flattened input on diagonal ``k``."""


def _np_diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal in the plane of ``axis1`` and ``axis2``."""


def _np_dot(a, b, out=None):
    """NumPy's dot product."""


def _np_moveaxis(a, source, destination):
    """``a`` with axes moved from ``source`` to ``destination``."""


def _np_prod(a, axis=None, dtype=None, out=None, keepdims=False):
    """The product along ``axis``."""


def _np_product(a, axis=None, dtype=None, out=None, keepdims=False):
    """The product along ``axis`` (``prod``)."""


def _np_repeat(a, repeats, axis=None):
    """Each element repeated ``repeats`` times along ``axis``."""


def _np_reshape(a, newshape, order='C', out=None):
    """``a`` with shape ``newshape``."""


def _np_roll(a, shift, axis=None):
    """Elements shifted by ``shift`` along ``axis``."""


def _np_squeeze(a, axis=None, out=None):
    """``a`` without its axes of length one."""


def _np_sum(a, axis=None, dtype=None, keepdims=False, initial=None, out=None):
    """The sum along ``axis``."""


def _np_trace(a, offset=0, axis1=0, axis2=1, out=None):
    """The sum along a diagonal."""


def _np_transpose(a, axes=None):
    """``a`` with its axes permuted."""
