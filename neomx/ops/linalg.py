"""Matrix products (dot, batch_dot, khatri_rao) and the ``linalg`` family (gemm, gemm2,
potrf, potri, trmm, trsm, syrk, sumlogdiag, inverse, det, slogdet, gelqf, syevd, extractdiag,
makediag, extracttrian, maketrian), registered as ``_linalg_<name>`` for ``nd.linalg.<name>``.

The ``linalg`` operators work on the last two axes; leading axes are a batch.
"""
import functools
from math import prod

import torch

from .layout import dense
from .registry import Bool, Float, Int, ShapeError, Str, register


def _dot_shapes(a, b, ta, tb):
    if not a or not b:
        raise ShapeError("dot needs arrays of at least 1 dim, got %s and %s" % (a, b))
    if len(a) == 1 and len(b) == 1:
        if a[0] != b[0]:
            raise ShapeError("vectors of lengths %d and %d" % (a[0], b[0]))
        return (1,)
    # MXNet's dot flattens: lhs (..., k) or transposed (k, ...); rhs (k, ...) or (..., k).
    if ta:
        k_a, rest_a = a[0], a[1:]
    else:
        k_a, rest_a = a[-1], a[:-1]
    if tb:
        k_b, rest_b = b[-1], b[:-1]
    else:
        k_b, rest_b = b[0], b[1:]
    if k_a != k_b:
        raise ShapeError("inner dimensions differ: lhs %s%s and rhs %s%s"
                         % (a, ' transposed' if ta else '', b, ' transposed' if tb else ''))
    return tuple(rest_a) + tuple(rest_b) or (1,)


def _dot_rule(attrs, shapes, dtypes):
    if dtypes[0] != dtypes[1]:
        raise ShapeError("inputs have different dtypes %s and %s" % dtypes)
    return (_dot_shapes(shapes[0], shapes[1], attrs['transpose_a'], attrs['transpose_b']),), \
        (dtypes[0],)


def _dot(lhs, rhs, transpose_a, transpose_b, forward_stype):
    """Matrix product; N-d arrays are flattened to matrices as MXNet does."""
    if lhs.dim() == 1 and rhs.dim() == 1:
        return torch.dot(lhs, rhs).reshape(1)
    if lhs.dim() == 2 and rhs.dim() == 2:
        a = lhs.t() if transpose_a else lhs
        b = rhs.t() if transpose_b else rhs
        return torch.mm(a, b)
    a = lhs.reshape(lhs.shape[0], -1).t() if transpose_a else lhs.reshape(-1, lhs.shape[-1])
    b = rhs.reshape(-1, rhs.shape[-1]).t() if transpose_b else rhs.reshape(rhs.shape[0], -1)
    if lhs.dim() == 1:
        a = lhs.reshape(1, -1)
    if rhs.dim() == 1:
        b = rhs.reshape(-1, 1)
    out = torch.mm(a, b)
    return out.reshape(_dot_shapes(tuple(lhs.shape), tuple(rhs.shape), transpose_a, transpose_b))


def _dot_on_floats(attrs, shapes):
    """torch.mm for a dot of two matrices without transposes (``ops.elemwise``'s
    ``on_floats_for``: the fast path calls it without ``_dot``'s frame)."""
    if (len(shapes[0]) == 2 and len(shapes[1]) == 2 and not attrs['transpose_a'] and
            not attrs['transpose_b']):
        return torch.mm
    return None


_dot.on_floats_for = _dot_on_floats


def _dot_cost(attrs, shapes, out_shapes):
    a = shapes[0]
    k = a[0] if attrs['transpose_a'] and len(a) > 1 else a[-1]
    return prod(out_shapes[0]) * k


def _batch_dot_cost(attrs, shapes, out_shapes):
    a = shapes[0]
    return prod(out_shapes[0]) * (a[-2] if attrs['transpose_a'] else a[-1])


register('dot', inputs=('lhs', 'rhs'), infer=_dot_rule, heavy=True, cost=_dot_cost,
         attrs={'transpose_a': Bool(False), 'transpose_b': Bool(False),
                'forward_stype': Str('None')})(_dot)


def _batch_dot_rule(attrs, shapes, dtypes):
    a, b = shapes
    if len(a) < 3 or len(a) != len(b):
        raise ShapeError("batch_dot needs inputs of one number of dims, at least 3, got %s and %s"
                         % (a, b))
    ta, tb = attrs['transpose_a'], attrs['transpose_b']
    m, ka = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    if a[:-2] != b[:-2] or ka != kb:
        raise ShapeError("batch_dot of %s%s and %s%s" % (a, ' transposed' if ta else '', b,
                                                         ' transposed' if tb else ''))
    if dtypes[0] != dtypes[1]:
        raise ShapeError("inputs have different dtypes %s and %s" % dtypes)
    return (tuple(a[:-2]) + (m, n),), (dtypes[0],)


def _batch_dot(lhs, rhs, transpose_a, transpose_b, forward_stype):
    """Matrix products of the last two axes, batched over the leading ones."""
    a = lhs.transpose(-1, -2) if transpose_a else lhs
    b = rhs.transpose(-1, -2) if transpose_b else rhs
    return torch.matmul(a, b)


register('batch_dot', inputs=('lhs', 'rhs'), infer=_batch_dot_rule, heavy=True,
         cost=_batch_dot_cost,
         attrs={'transpose_a': Bool(False), 'transpose_b': Bool(False),
                'forward_stype': Str('None')})(_batch_dot)


def _khatri_rao(*args, num_args=0):
    """The column-wise Kronecker product of matrices (M_i, N): shape (prod M_i, N)."""
    n = args[0].shape[-1] if args[0].dim() == 2 else -1
    for a in args:
        if a.dim() != 2 or a.shape[1] != n:
            raise ShapeError("khatri_rao needs matrices with one number of columns, got %s"
                             % [tuple(x.shape) for x in args])
    out = args[0]
    for a in args[1:]:
        out = (out.unsqueeze(1) * a.unsqueeze(0)).reshape(-1, n)
    return out.clone() if len(args) == 1 else out


def _khatri_rao_rule(attrs, shapes, dtypes):
    n = shapes[0][-1] if len(shapes[0]) == 2 else -1
    rows = 1
    for s in shapes:
        if len(s) != 2 or s[1] != n:
            raise ShapeError("khatri_rao needs matrices with one number of columns, got %s"
                             % list(shapes))
        rows *= s[0]
    return ((rows, n),), (dtypes[0],)


register('khatri_rao', inputs=('*args',), key_var_num_args='num_args', heavy=True,
         infer=_khatri_rao_rule,
         attrs={'num_args': Int(0)})(_khatri_rao)


# -- linalg ---------------------------------------------------------------------------------

def _mat(x, name, square=False):
    if x.dim() < 2:
        raise ShapeError("%s needs matrices (at least 2 dims), got shape %s"
                         % (name, tuple(x.shape)))
    if square and x.shape[-1] != x.shape[-2]:
        raise ShapeError("%s needs square matrices, got shape %s" % (name, tuple(x.shape)))
    return x


def _t(x, flag):
    return x.transpose(-1, -2) if flag else x


def _batch_scalar(out):
    return out.reshape(1) if out.dim() == 0 else out


def _linalg(name, **spec):
    """Registers ``_linalg_<name>`` (and ``linalg_<name>``); the results are made row-major, as
    LAPACK gives column-major matrices (``view=True`` entries copy their results already)."""
    spec.setdefault('inputs', ('A',))      # MXNet's name for the matrix argument

    def wrap(kernel):
        if spec.get('view'):
            return register('_linalg_' + name, aliases=('linalg_' + name,), **spec)(kernel)

        @functools.wraps(kernel)
        def run(*args, **attrs):
            out = kernel(*args, **attrs)
            return tuple(map(dense, out)) if isinstance(out, tuple) else dense(out)
        register('_linalg_' + name, aliases=('linalg_' + name,), **spec)(run)
        return kernel
    return wrap


def _rows_at(t, axis):
    """``t`` with its rows axis ``axis`` moved next to the columns (the last axis)."""
    axis = axis % t.dim()
    return t if axis == t.dim() - 2 else t.movedim(axis, -2)


def _rows_back(t, axis, ndim):
    axis = axis % ndim
    return t if axis == ndim - 2 else t.movedim(-2, axis)


def _gemm(A, B, C, transpose_a, transpose_b, alpha, beta, axis):
    """``alpha * op(A) @ op(B) + beta * C``; the matrices' rows are along ``axis``, their
    columns along the last axis."""
    n = A.dim()
    A, B, C = _rows_at(A, axis), _rows_at(B, axis), _rows_at(C, axis)
    a, b = _t(_mat(A, 'gemm'), transpose_a), _t(_mat(B, 'gemm'), transpose_b)
    return _rows_back(alpha * torch.matmul(a, b) + beta * C, axis, n)


def _shape_rows_at(shape, axis):
    shape = list(shape)
    axis = axis % len(shape)
    if axis != len(shape) - 2:
        rows = shape.pop(axis)
        shape.insert(len(shape) - 1, rows)
    return tuple(shape)


def _gemm_rule(attrs, shapes, dtypes):
    if not -len(shapes[0]) <= attrs['axis'] < len(shapes[0]) - 1:
        raise ShapeError("gemm: axis %d must be a rows axis before the last of %d"
                         % (attrs['axis'], len(shapes[0])))
    a, b, c = (_shape_rows_at(s, attrs['axis']) for s in shapes)
    if len(a) < 2 or len(b) < 2:
        raise ShapeError("gemm needs matrices, got %s and %s" % (a, b))
    m, ka = (a[-1], a[-2]) if attrs['transpose_a'] else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if attrs['transpose_b'] else (b[-2], b[-1])
    if ka != kb or tuple(c) != tuple(a[:-2]) + (m, n):
        raise ShapeError("gemm of A %s, B %s and C %s does not fit" % tuple(shapes))
    return (tuple(shapes[2]),), (dtypes[0],)


_linalg('gemm', inputs=('A', 'B', 'C'), heavy=True, infer=_gemm_rule,
        attrs={'transpose_a': Bool(False), 'transpose_b': Bool(False), 'alpha': Float(1.0),
               'beta': Float(1.0), 'axis': Int(-2)})(_gemm)


def _gemm2(A, B, transpose_a, transpose_b, alpha, axis):
    """``alpha * op(A) @ op(B)``; rows along ``axis``, columns along the last axis."""
    n = A.dim()
    A, B = _rows_at(A, axis), _rows_at(B, axis)
    a, b = _t(_mat(A, 'gemm2'), transpose_a), _t(_mat(B, 'gemm2'), transpose_b)
    return _rows_back(alpha * torch.matmul(a, b), axis, n)


_linalg('gemm2', inputs=('A', 'B'), heavy=True,
        attrs={'transpose_a': Bool(False), 'transpose_b': Bool(False), 'alpha': Float(1.0),
               'axis': Int(-2)})(_gemm2)


def _potrf(A, lower):
    """The Cholesky factor of symmetric positive definite ``A`` (lower, or upper)."""
    return torch.linalg.cholesky(_mat(A, 'potrf', True), upper=not lower)


_linalg('potrf', attrs={'lower': Bool(True)}, heavy=True)(_potrf)


def _potri(A, lower):
    """The inverse of ``L @ L.T`` (``U.T @ U`` when not lower) from its Cholesky factor."""
    return torch.cholesky_inverse(_mat(A, 'potri', True), upper=not lower)


_linalg('potri', attrs={'lower': Bool(True)}, heavy=True)(_potri)


def _triangle(A, lower):
    return torch.tril(A) if lower else torch.triu(A)


def _trmm(A, B, transpose, rightside, lower, alpha):
    """``alpha * op(A) @ B`` (``B @ op(A)`` with ``rightside``) for triangular ``A``."""
    a = _t(_triangle(_mat(A, 'trmm', True), lower), transpose)
    return alpha * (torch.matmul(B, a) if rightside else torch.matmul(a, B))


def _trsm(A, B, transpose, rightside, lower, alpha):
    """Solves ``op(A) @ X = alpha * B`` (``X @ op(A)`` with ``rightside``) for triangular
    ``A``."""
    a = _t(_triangle(_mat(A, 'trsm', True), lower), transpose)
    upper = lower == transpose
    return torch.linalg.solve_triangular(a, alpha * B, upper=upper, left=not rightside)


def _tri_rule(attrs, shapes, dtypes):
    a, b = shapes
    if len(a) < 2 or a[-1] != a[-2] or len(b) != len(a):
        raise ShapeError("needs a square triangular A and B of as many dims, got %s and %s"
                         % (a, b))
    if b[-1 if attrs['rightside'] else -2] != a[-1]:
        raise ShapeError("A %s does not fit B %s%s" % (a, b, ' (rightside)' if attrs['rightside']
                                                       else ''))
    return (tuple(b),), (dtypes[1],)


_TRI = {'transpose': Bool(False), 'rightside': Bool(False), 'lower': Bool(True),
        'alpha': Float(1.0)}
_linalg('trmm', inputs=('A', 'B'), attrs=_TRI, heavy=True, infer=_tri_rule)(_trmm)
_linalg('trsm', inputs=('A', 'B'), attrs=_TRI, heavy=True, infer=_tri_rule)(_trsm)


def _syrk(A, transpose, alpha):
    """``alpha * A @ A.T`` (``A.T @ A`` with ``transpose``)."""
    a = _mat(A, 'syrk')
    return alpha * (torch.matmul(a.transpose(-1, -2), a) if transpose else
                    torch.matmul(a, a.transpose(-1, -2)))


_linalg('syrk', attrs={'transpose': Bool(False), 'alpha': Float(1.0)}, heavy=True)(_syrk)


def _sumlogdiag(A):
    """The sum of the logarithms of the diagonal of each matrix."""
    d = torch.diagonal(_mat(A, 'sumlogdiag', True), dim1=-2, dim2=-1)
    return _batch_scalar(torch.log(d).sum(-1))


def _square_rule(name):
    def rule(attrs, shapes, dtypes):
        s = shapes[0]
        if len(s) < 2 or s[-1] != s[-2]:
            raise ShapeError("%s needs square matrices, got shape %s" % (name, s))
        return (tuple(s[:-2]) or (1,),), (dtypes[0],)
    return rule


_linalg('sumlogdiag', infer=_square_rule('sumlogdiag'))(_sumlogdiag)


def _inverse(A):
    """The inverse of each square matrix."""
    return torch.linalg.inv(_mat(A, 'inverse', True))


def _det(A):
    """The determinant of each square matrix."""
    return _batch_scalar(torch.linalg.det(_mat(A, 'det', True)))


def _slogdet(A):
    """The sign and the log of the absolute value of each determinant."""
    sign, logabs = torch.linalg.slogdet(_mat(A, 'slogdet', True))
    return _batch_scalar(sign), _batch_scalar(logabs)


_linalg('inverse', heavy=True)(_inverse)
_linalg('det', heavy=True)(_det)
_linalg('slogdet', heavy=True, num_outputs=2, output_names=('sign', 'logdet'))(_slogdet)


def _gelqf(A):
    """The LQ factorisation ``A = L @ Q`` of a wide matrix: Q with orthonormal rows and
    lower triangular L."""
    a = _mat(A, 'gelqf')
    if a.shape[-2] > a.shape[-1]:
        raise ShapeError("gelqf needs rows <= columns, got shape %s" % (tuple(a.shape),))
    q, r = torch.linalg.qr(a.transpose(-1, -2))
    return q.transpose(-1, -2), r.transpose(-1, -2)


_linalg('gelqf', heavy=True, num_outputs=2, output_names=('Q', 'L'))(_gelqf)


def _syevd(A):
    """The eigendecomposition ``A = U.T @ diag(lam) @ U`` of a symmetric matrix: eigenvectors
    as the rows of U, eigenvalues ascending."""
    lam, v = torch.linalg.eigh(_mat(A, 'syevd', True))
    u = v.transpose(-1, -2)
    # MXNet's sign convention: the largest entry (in magnitude) of each eigenvector is positive.
    big = torch.gather(u, -1, u.abs().argmax(-1, keepdim=True))
    return u * torch.where(big < 0, -1.0, 1.0).to(u.dtype), lam


def _syevd_rule(attrs, shapes, dtypes):
    s = shapes[0]
    if len(s) < 2 or s[-1] != s[-2]:
        raise ShapeError("syevd needs square matrices, got shape %s" % (s,))
    return (tuple(s), tuple(s[:-1])), (dtypes[0], dtypes[0])


_linalg('syevd', heavy=True, num_outputs=2, output_names=('U', 'L'), infer=_syevd_rule)(_syevd)


def _extractdiag(A, offset):
    """Diagonal ``offset`` of each matrix."""
    return torch.diagonal(_mat(A, 'extractdiag', True), offset=offset, dim1=-2, dim2=-1)


def _makediag(A, offset):
    """Square matrices with the last axis of ``A`` on diagonal ``offset``."""
    return torch.diag_embed(A, offset=offset)


_linalg('extractdiag', view=True, attrs={'offset': Int(0)})(_extractdiag)
_linalg('makediag', attrs={'offset': Int(0)},
        infer=lambda a, s, d: ((tuple(s[0][:-1]) + (s[0][-1] + abs(a['offset']),) * 2,), (d[0],)))(
    _makediag)


def _trian_index(n, offset, lower, device):
    # offset > 0 selects above the diagonal, < 0 below it; 0 follows ``lower``.
    if offset > 0 or (offset == 0 and not lower):
        return torch.triu_indices(n, n, offset, device=device)
    return torch.tril_indices(n, n, offset, device=device)


def _extracttrian(A, offset, lower):
    """The triangle of each matrix (from diagonal ``offset``) as a vector, row by row."""
    a = _mat(A, 'extracttrian', True)
    r, c = _trian_index(a.shape[-1], offset, lower, a.device)
    return a[..., r, c]


def _maketrian(A, offset, lower):
    """The inverse of extracttrian: matrices whose triangle holds the vectors of ``A``."""
    m = A.shape[-1]
    n = int(((8 * m + 1) ** 0.5 - 1) / 2 + 0.5)
    if n * (n + 1) // 2 != m:
        raise ShapeError("maketrian: %d is not a triangular number" % m)
    size = n + abs(offset)
    r, c = _trian_index(size, offset, lower, A.device)
    out = torch.zeros(tuple(A.shape[:-1]) + (size, size), dtype=A.dtype, device=A.device)
    return _put_trian(out, r, c, A)


def _put_trian(out, r, c, values):
    flat = out.reshape(-1, out.shape[-2] * out.shape[-1])
    flat = flat.index_copy(1, r * out.shape[-1] + c, values.reshape(-1, values.shape[-1]))
    return flat.reshape(out.shape)


def _extracttrian_rule(attrs, shapes, dtypes):
    s = shapes[0]
    if len(s) < 2 or s[-1] != s[-2]:
        raise ShapeError("extracttrian needs square matrices, got shape %s" % (s,))
    n = s[-1] - abs(attrs['offset'])
    return (tuple(s[:-2]) + (max(n, 0) * (max(n, 0) + 1) // 2,),), (dtypes[0],)


def _maketrian_rule(attrs, shapes, dtypes):
    m = shapes[0][-1]
    n = int(((8 * m + 1) ** 0.5 - 1) / 2 + 0.5)
    if n * (n + 1) // 2 != m:
        raise ShapeError("maketrian: %d is not a triangular number" % m)
    size = n + abs(attrs['offset'])
    return (tuple(shapes[0][:-1]) + (size, size),), (dtypes[0],)


_linalg('extracttrian', attrs={'offset': Int(0), 'lower': Bool(True)},
        infer=_extracttrian_rule)(_extracttrian)
_linalg('maketrian', attrs={'offset': Int(0), 'lower': Bool(True)}, infer=_maketrian_rule)(
    _maketrian)
