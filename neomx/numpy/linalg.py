"""``mx.np.linalg``: linear algebra on ``mx.np.ndarray`` (torch.linalg kernels, batched over
leading axes, differentiable where torch's are).

>>> from neomx import np
>>> float(np.linalg.det(np.array([[2.0, 0.0], [0.0, 3.0]])))
6.0
"""
from ..ndarray.ndarray import NDArray
from .multiarray import _as_np, _invoke, dot

__all__ = ['norm', 'svd', 'cholesky', 'inv', 'det', 'slogdet', 'solve', 'pinv', 'eig', 'eigh',
           'eigvals', 'eigvalsh', 'qr', 'tensorinv', 'tensorsolve', 'lstsq', 'matrix_rank',
           'matrix_power', 'multi_dot', 'cond']


def norm(x, ord=None, axis=None, keepdims=False):  # pylint: disable=redefined-builtin
    """The vector or matrix norm of ``x`` (NumPy's ``ord`` choices)."""
    x = _as_np(x)
    if isinstance(axis, list):
        axis = tuple(axis)
    if axis is None and ord is not None and x.ndim not in (1, 2):
        raise ValueError("Improper number of dimensions to norm.")
    if axis is None and ord is not None:
        axis = tuple(range(x.ndim))
    return _invoke('_npi_norm', (x,), ord=ord, axis=axis, keepdims=keepdims)


def svd(a):
    """(u, s, v) with ``a = u @ diag(s) @ v`` (MXNet returns the singular values second)."""
    u, s, v = _invoke('_npi_svd', (_as_np(a),))
    return u, s, v


def cholesky(a):
    """The lower Cholesky factor of symmetric positive-definite ``a``."""
    return _invoke('_npi_cholesky', (_as_np(a),))


def inv(a):
    """The inverse of square ``a``."""
    return _invoke('_npi_inv', (_as_np(a),))


def det(a):
    """The determinant of square ``a``."""
    return _invoke('_npi_det', (_as_np(a),))


def slogdet(a):
    """(sign, log of the absolute determinant)."""
    s, l = _invoke('_npi_slogdet', (_as_np(a),))
    return s, l


def solve(a, b):
    """``x`` with ``a @ x = b``."""
    return _invoke('_npi_solve', (_as_np(a), _as_np(b)))


def pinv(a, rcond=1e-15, hermitian=False):
    """The Moore-Penrose pseudo-inverse."""
    if isinstance(rcond, NDArray):
        return _invoke('_npi_pinv', (_as_np(a), _as_np(rcond)), hermitian=hermitian)
    return _invoke('_npi_pinv_scalar_rcond', (_as_np(a),), rcond=float(rcond),
                   hermitian=hermitian)


def eig(a):
    """(eigenvalues, eigenvectors) of square ``a`` (real ones only)."""
    w, v = _invoke('_npi_eig', (_as_np(a),))
    return w, v


def eigvals(a):
    """The eigenvalues of square ``a`` (real ones only)."""
    return _invoke('_npi_eigvals', (_as_np(a),))


def eigh(a, UPLO='L'):
    """(eigenvalues, eigenvectors) of symmetric ``a``."""
    w, v = _invoke('_npi_eigh', (_as_np(a),), UPLO=UPLO)
    return w, v


def eigvalsh(a, UPLO='L'):
    """The eigenvalues of symmetric ``a``."""
    return _invoke('_npi_eigvalsh', (_as_np(a),), UPLO=UPLO)


def qr(a, mode='reduced'):
    """(q, r) of ``a``."""
    q, r = _invoke('_npi_qr', (_as_np(a),))
    return q, r


def tensorinv(a, ind=2):
    """The inverse of ``a`` seen as a matrix of its first ``ind`` axes by the others."""
    return _invoke('_npi_tensorinv', (_as_np(a),), ind=int(ind))


def tensorsolve(a, b, axes=None):
    """``x`` with ``tensordot(a, x, x.ndim) = b``."""
    return _invoke('_npi_tensorsolve', (_as_np(a), _as_np(b)),
                   a_axes=None if axes is None else tuple(axes))


def lstsq(a, b, rcond='warn'):
    """(solution, residuals, rank, singular values) of the least-squares problem."""
    r = None if rcond in ('warn', None) else float(rcond)
    x, resid, rank, s = _invoke('_npi_lstsq', (_as_np(a), _as_np(b)), rcond=r)
    return x, resid, rank, s


def matrix_rank(M, tol=None, hermitian=False):
    """The rank of ``M``."""
    return _invoke('_npi_matrix_rank', (_as_np(M),), tol=tol, hermitian=hermitian)


def matrix_power(a, n):
    """``a`` to the integer power ``n``."""
    return _invoke('_npi_matrix_power', (_as_np(a),), n=int(n))


def multi_dot(arrays):
    """The product of the matrices in order."""
    out = _as_np(arrays[0])
    for a in arrays[1:]:
        out = dot(out, a)
    return out


def cond(x, p=None):
    """The condition number of ``x``."""
    return _invoke('_npi_cond', (_as_np(x),), p=p)
