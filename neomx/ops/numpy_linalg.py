"""The operators of ``mx.np.linalg``: torch.linalg under MXNet's ``_npi_`` names, batched
over leading axes, differentiable where torch's are."""
import math

import torch

from .numpy import Lit, _promoted
from .registry import Bool, ShapeError, Str, register

__all__ = []


def _float(x):
    return x if x.is_floating_point() else x.to(torch.float32)


def _square(name, a):
    if a.dim() < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError("%s: last 2 dimensions of the array must be square, got shape %s"
                         % (name, tuple(a.shape)))


def _norm(x, ord, axis, keepdims, flag=-1):
    x = _float(x)
    if ord in ('inf', '-inf'):
        ord = float(ord)
    if axis is None and ord is None:
        r = torch.linalg.vector_norm(x.reshape(-1))
        return r.reshape((1,) * x.dim()) if keepdims else r
    if axis is None:
        axis = tuple(range(x.dim()))
    axes = axis if isinstance(axis, tuple) else (axis,)
    if len(axes) == 1:
        o = 2 if ord is None else ord
        if o == 'fro' or o == 'nuc':
            raise ShapeError("norm: invalid norm order %r for vectors" % (o,))
        return torch.linalg.vector_norm(x, o, dim=axes, keepdim=keepdims)
    o = 'fro' if ord is None else ord
    return torch.linalg.matrix_norm(x, o, dim=axes, keepdim=keepdims)


register('_npi_norm', inputs=('x',), attrs={'ord': Lit(None), 'axis': Lit(None),
                                            'keepdims': Bool(False), 'flag': Lit(-1)})(_norm)


def _svd(a):
    u, s, vh = torch.linalg.svd(_float(a), full_matrices=False)
    return u, s, vh


register('_npi_svd', inputs=('a',), num_outputs=3)(_svd)


def _cholesky(a, lower=True):
    _square('cholesky', a)
    L = torch.linalg.cholesky(_float(a))
    return L if lower else L.transpose(-1, -2).contiguous()


register('_npi_cholesky', inputs=('a',), attrs={'lower': Bool(True)})(_cholesky)


def _inv(a):
    _square('inv', a)
    return torch.linalg.inv(_float(a))


register('_npi_inv', inputs=('a',))(_inv)


def _det(a):
    _square('det', a)
    return torch.linalg.det(_float(a))


register('_npi_det', inputs=('a',))(_det)


def _slogdet(a):
    _square('slogdet', a)
    s, l = torch.linalg.slogdet(_float(a))
    return s, l


register('_npi_slogdet', inputs=('a',), num_outputs=2)(_slogdet)


def _solve(a, b):
    a, b = _promoted(_float(a), _float(b))
    _square('solve', a)
    if b.dim() == a.dim() - 1:
        return torch.linalg.solve(a, b.unsqueeze(-1)).squeeze(-1)
    return torch.linalg.solve(a, b)


register('_npi_solve', inputs=('a', 'b'))(_solve)


def _pinv(a, rcond=1e-15, hermitian=False):
    return torch.linalg.pinv(_float(a), rtol=rcond, hermitian=hermitian)


def _pinv_arr(a, rcond, hermitian=False):
    return torch.linalg.pinv(_float(a), rtol=rcond.to(_float(a).dtype), hermitian=hermitian)


register('_npi_pinv_scalar_rcond', inputs=('a',),
         attrs={'rcond': Lit(1e-15), 'hermitian': Bool(False)})(_pinv)
register('_npi_pinv', inputs=('a', 'rcond'), attrs={'hermitian': Bool(False)})(_pinv_arr)


def _eig(a):
    _square('eig', a)
    w, v = torch.linalg.eig(_float(a))
    if a.device.type != 'meta' and bool((w.imag.abs() > 1e-5 * (1 + w.real.abs())).any()):
        raise ShapeError("eig: the matrix has complex eigenvalues, which neomx (real arrays "
                         "only) cannot return")
    return w.real.contiguous(), v.real.contiguous()


register('_npi_eig', inputs=('a',), num_outputs=2)(_eig)


def _eigvals(a):
    return _eig(a)[0]


register('_npi_eigvals', inputs=('a',))(_eigvals)


def _eigh(a, UPLO='L'):
    _square('eigh', a)
    w, v = torch.linalg.eigh(_float(a), UPLO=UPLO)
    return w, v


register('_npi_eigh', inputs=('a',), num_outputs=2, attrs={'UPLO': Str('L')})(_eigh)


def _eigvalsh(a, UPLO='L'):
    _square('eigvalsh', a)
    return torch.linalg.eigvalsh(_float(a), UPLO=UPLO)


register('_npi_eigvalsh', inputs=('a',), attrs={'UPLO': Str('L')})(_eigvalsh)


def _qr(a):
    q, r = torch.linalg.qr(_float(a))
    return q, r


register('_npi_qr', inputs=('a',), num_outputs=2)(_qr)


def _tensorinv(a, ind=2):
    shape = tuple(a.shape)
    if ind <= 0:
        raise ShapeError("tensorinv: ind must be > 0")
    left, right = shape[:ind], shape[ind:]
    if math.prod(left) != math.prod(right):
        raise ShapeError("tensorinv: the product of the first ind dimensions must equal that "
                         "of the others, got shape %s" % (shape,))
    inv = torch.linalg.inv(_float(a).reshape(math.prod(left), -1))
    return inv.reshape(right + left)


register('_npi_tensorinv', inputs=('a',), attrs={'ind': Lit(2)})(_tensorinv)


def _tensorsolve(a, b, a_axes=None):
    a, b = _promoted(_float(a), _float(b))
    if a_axes is not None:
        allaxes = list(range(a.dim()))
        for k in a_axes:
            allaxes.remove(k % a.dim())
            allaxes.insert(a.dim(), k % a.dim())
        a = a.permute(allaxes)
    # MXNet's solution shape: the trailing a.ndim - b.ndim axes of (permuted) a, as a Python
    # slice (so equal ranks give all of a's shape)
    oshape = tuple(a.shape)[-(a.dim() - b.dim()):]
    n = math.prod(oshape)
    x = torch.linalg.solve(a.reshape(-1, n), b.reshape(-1))
    return x.reshape(oshape)


register('_npi_tensorsolve', inputs=('a', 'b'), attrs={'a_axes': Lit(None)})(_tensorsolve)


def _lstsq(a, b, rcond=None, squeeze=False):
    a, b = _promoted(_float(a), _float(b))
    bb = b.unsqueeze(-1) if b.dim() == 1 else b
    res = torch.linalg.lstsq(a.cpu().double(), bb.cpu().double(), rcond=rcond, driver='gelsd')
    x = res.solution.to(a.dtype).to(a.device)
    rank = res.rank.to(torch.int64).to(a.device).reshape(())
    s = res.singular_values.to(a.dtype).to(a.device)
    m, n = a.shape[-2], a.shape[-1]
    if int(rank) == n and m > n:
        resid = ((a @ x - bb) ** 2).sum(-2)
    else:
        resid = torch.zeros((0,), dtype=a.dtype, device=a.device)
    if b.dim() == 1:
        x = x.squeeze(-1)
        resid = resid.reshape(-1)
    return x, resid, rank, s


register('_npi_lstsq', inputs=('a', 'b'), num_outputs=4,
         attrs={'rcond': Lit(None), 'squeeze': Bool(False)})(_lstsq)


def _matrix_rank(M, tol=None, hermitian=False):
    M = _float(M)
    if M.dim() < 2:
        return (M != 0).any().to(torch.int64)
    return torch.linalg.matrix_rank(M, atol=tol, hermitian=hermitian).to(torch.int64)


register('_npi_matrix_rank', inputs=('M',), attrs={'tol': Lit(None),
                                                   'hermitian': Bool(False)})(_matrix_rank)


def _matrix_power(a, n):
    _square('matrix_power', a)
    return torch.linalg.matrix_power(a if n >= 0 else _float(a), n)


register('_npi_matrix_power', inputs=('a',), attrs={'n': Lit(1)})(_matrix_power)


def _cond(x, p=None):
    return torch.linalg.cond(_float(x), p)


register('_npi_cond', inputs=('x',), attrs={'p': Lit(None)})(_cond)
