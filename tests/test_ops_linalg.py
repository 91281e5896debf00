"""dot (MXNet's N-d flattening), batch_dot, khatri_rao and the nd.linalg family."""
import numpy as np
import pytest

import neomx as mx
from neomx import nd
from opcheck import check_op

RNG = np.random.RandomState(13)


def _spd(n, batch=()):
    a = RNG.randn(*(batch + (n, n)))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _lower(n, batch=()):
    return np.tril(RNG.uniform(0.5, 1.5, size=batch + (n, n))) + np.eye(n)


@pytest.mark.parametrize('sa,sb,kw,ref', [
    ((2, 3), (3, 4), {}, lambda a, b: a @ b),
    ((3, 2), (3, 4), dict(transpose_a=True), lambda a, b: a.T @ b),
    ((2, 3), (4, 3), dict(transpose_b=True), lambda a, b: a @ b.T),
    ((3, 2), (4, 3), dict(transpose_a=True, transpose_b=True), lambda a, b: a.T @ b.T),
    ((3,), (3,), {}, lambda a, b: np.array([a @ b])),
    ((3,), (3, 2), {}, lambda a, b: a @ b),
    ((2, 3), (3,), {}, lambda a, b: a @ b),
    ((2, 2, 3), (3, 2), {}, lambda a, b: np.tensordot(a, b, 1)),
    ((2, 2, 3), (3, 2, 2), {}, lambda a, b: np.tensordot(a, b, 1)),
    ((3, 2, 2), (3, 2), dict(transpose_a=True),
     lambda a, b: (a.reshape(3, -1).T @ b).reshape(2, 2, 2)),
    ((2, 3), (2, 2, 3), dict(transpose_b=True),
     lambda a, b: (a @ b.reshape(-1, 3).T).reshape(2, 2, 2)),
], ids=str)
def test_dot(sa, sb, kw, ref, ctx):
    check_op(lambda a, b: nd.dot(a, b, **kw), ref, [RNG.randn(*sa), RNG.randn(*sb)], ctx)


def test_dot_positional_and_errors():
    a, b = nd.ones((2, 3)), nd.ones((2, 3))
    assert nd.dot(a, b, False, True).shape == (2, 2)
    assert (a @ b.T).shape == (2, 2)
    with pytest.raises(mx.MXNetError, match=r'dot.*inner dimensions'):
        nd.dot(a, b)
    with pytest.raises(mx.MXNetError, match='dtypes'):
        nd.dot(a, b.astype('float64'), transpose_b=True)


@pytest.mark.parametrize('sa,sb,kw', [
    ((2, 2, 3), (2, 3, 2), {}), ((2, 3, 2), (2, 3, 2), dict(transpose_a=True)),
    ((2, 2, 3), (2, 2, 3), dict(transpose_b=True)), ((2, 2, 2, 3), (2, 2, 3, 1), {}),
], ids=str)
def test_batch_dot(sa, sb, kw, ctx):
    def ref(a, b):
        a = np.swapaxes(a, -1, -2) if kw.get('transpose_a') else a
        b = np.swapaxes(b, -1, -2) if kw.get('transpose_b') else b
        return a @ b
    check_op(lambda a, b: nd.batch_dot(a, b, **kw), ref, [RNG.randn(*sa), RNG.randn(*sb)], ctx)
    with pytest.raises(mx.MXNetError, match='batch_dot'):
        nd.batch_dot(nd.ones((2, 3, 4)), nd.ones((3, 4, 5)))


def test_khatri_rao(ctx):
    a, b = RNG.randn(2, 3), RNG.randn(3, 3)
    ref = lambda x, y: np.einsum('ik,jk->ijk', x, y).reshape(-1, 3)     # noqa: E731
    check_op(lambda x, y: nd.khatri_rao(x, y), ref, [a, b], ctx)


def test_gemm_family(ctx):
    a, b, c = RNG.randn(2, 3), RNG.randn(3, 2), RNG.randn(2, 2)
    L = nd.linalg
    check_op(lambda x, y, z: L.gemm(x, y, z, alpha=1.5, beta=2.0),
             lambda x, y, z: 1.5 * x @ y + 2 * z, [a, b, c], ctx)
    check_op(lambda x, y: L.gemm2(x, y, transpose_a=True, transpose_b=True, alpha=2),
             lambda x, y: 2 * x.T @ y.T, [b, a], ctx)
    check_op(lambda x, y: L.gemm2(x, y), lambda x, y: x @ y,
             [RNG.randn(2, 2, 3), RNG.randn(2, 3, 2)], ctx)
    check_op(lambda x: L.syrk(x, alpha=0.5), lambda x: 0.5 * x @ x.T, [a], ctx)
    check_op(lambda x: L.syrk(x, transpose=True), lambda x: x.T @ x, [a], ctx)
    assert nd.linalg_gemm2(nd.ones((2, 2)), nd.ones((2, 2))).shape == (2, 2)


def test_cholesky_family(ctx):
    L = nd.linalg
    spd = _spd(3)
    check_op(L.potrf, np.linalg.cholesky, [spd], ctx, grad=False)
    low = _lower(3)
    check_op(L.potri, lambda x: np.linalg.inv(x @ x.T), [low], ctx, wrt=[], grad=False)
    check_op(L.sumlogdiag, lambda x: np.array([np.log(np.diag(x)).sum()]), [low], ctx)
    check_op(L.sumlogdiag, lambda x: np.log(np.diagonal(x, 0, 1, 2)).sum(-1),
             [_lower(2, (3,))], ctx)
    # Gradients of potrf through a symmetric input.
    check_op(lambda x: L.potrf((x + x.T) * 0.5), lambda x: np.linalg.cholesky((x + x.T) / 2),
             [spd], ctx, grad_rtol=1e-2)


def test_triangular_family(ctx):
    L = nd.linalg
    a, b = _lower(3), RNG.randn(3, 2)
    check_op(lambda x, y: L.trmm(x, y, alpha=2.0), lambda x, y: 2 * np.tril(x) @ y, [a, b], ctx)
    check_op(lambda x, y: L.trmm(x, y.T, transpose=True, rightside=True),
             lambda x, y: y.T @ np.tril(x).T, [a, b], ctx)
    check_op(lambda x, y: L.trsm(x, y), lambda x, y: np.linalg.solve(np.tril(x), y), [a, b], ctx)
    check_op(lambda x, y: L.trsm(x, y, transpose=True, alpha=0.5),
             lambda x, y: np.linalg.solve(np.tril(x).T, 0.5 * y), [a, b], ctx)
    check_op(lambda x, y: L.trsm(x, y.T, rightside=True),
             lambda x, y: y.T @ np.linalg.inv(np.tril(x)), [a, b], ctx)
    check_op(lambda x, y: L.trsm(x.T, y, lower=False),
             lambda x, y: np.linalg.solve(np.tril(x).T, y), [a, b], ctx)


def test_inverse_det_slogdet(ctx):
    L = nd.linalg
    m = _spd(3)
    check_op(L.inverse, np.linalg.inv, [m], ctx)
    check_op(L.det, lambda x: np.array([np.linalg.det(x)]), [m], ctx, grad_rtol=1e-2)
    check_op(L.det, np.linalg.det, [np.stack([m, m * 2])], ctx, grad=False)
    check_op(L.slogdet, lambda x: [np.array([s]) for s in np.linalg.slogdet(x)],
             [-m], ctx, wrt=[0])


def test_factorisations(ctx):
    L = nd.linalg
    a = RNG.randn(2, 3)
    q, low = L.gelqf(nd.array(a, ctx=ctx))
    q, low = q.asnumpy(), low.asnumpy()
    np.testing.assert_allclose(low @ q, a, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(q @ q.T, np.eye(2), atol=1e-5)
    assert np.allclose(low, np.tril(low))
    s = _spd(3)
    u, lam = L.syevd(nd.array(s, ctx=ctx))
    u, lam = u.asnumpy(), lam.asnumpy()
    np.testing.assert_allclose(u.T @ np.diag(lam) @ u, s, rtol=1e-4, atol=1e-4)
    assert np.all(np.diff(lam) >= 0)
    # MXNet's sign convention: the largest entry of each eigenvector is positive.
    assert np.all(u[np.arange(3), np.abs(u).argmax(1)] > 0)
    u2, _ = L.syevd(nd.array([[4.0, 2.0], [2.0, 3.0]]))
    np.testing.assert_allclose(u2.asnumpy(), [[-0.6154122, 0.7882054], [0.7882054, 0.6154122]],
                               rtol=1e-5)


def test_diag_and_triangle_packing(ctx):
    L = nd.linalg
    m = RNG.randn(3, 3)
    check_op(lambda x: L.extractdiag(x, offset=1), lambda x: np.diag(x, 1), [m], ctx)
    check_op(lambda x: L.makediag(x, offset=-1), lambda x: np.diag(x, -1), [RNG.randn(2)], ctx)
    check_op(L.extracttrian, lambda x: x[np.tril_indices(3)], [m], ctx)
    check_op(lambda x: L.extracttrian(x, offset=1), lambda x: x[np.triu_indices(3, 1)], [m], ctx)
    v = RNG.randn(6)

    def make(x, offset=0):
        n = 3 + abs(offset)
        out = np.zeros((n, n))
        out[np.tril_indices(n, offset) if offset <= 0 else np.triu_indices(n, offset)] = x
        return out
    check_op(L.maketrian, make, [v], ctx)
    check_op(lambda x: L.maketrian(x, offset=-1), lambda x: make(x, -1), [v], ctx)
    assert nd.linalg.maketrian(nd.array([1, 2, 3])).asnumpy().tolist() == [[1, 0], [2, 3]]
    with pytest.raises(mx.MXNetError, match='triangular number'):
        nd.linalg.maketrian(nd.ones(4))
    with pytest.raises(mx.MXNetError, match='square'):
        nd.linalg.inverse(nd.ones((2, 3)))
