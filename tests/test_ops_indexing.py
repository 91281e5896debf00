"""Indexing operators: take, batch_take, pick, one_hot, where, topk, sort, argsort,
gather_nd, scatter_nd, boolean_mask."""
import numpy as np
import pytest

import neomx as mx
from neomx import nd
from opcheck import check_op

RNG = np.random.RandomState(11)
X = np.arange(12).reshape(3, 4) * 1.5 - 5 + RNG.uniform(0, 0.1, size=(3, 4))


def _np_take(a, idx, axis=0, mode='clip'):
    idx = np.asarray(idx).astype(np.int64)
    n = a.shape[axis]
    idx = np.mod(idx, n) if mode == 'wrap' else np.clip(idx, 0, n - 1)
    return np.take(a, idx, axis=axis)


@pytest.mark.parametrize('idx,kw', [
    ([0, 2], {}), ([0, 2, 5, -1], {}), ([0, 2, 5, -1], dict(mode='wrap')),
    ([0, 2, 5, -1], dict(axis=1)), ([0, 2, 5, -1], dict(axis=1, mode='wrap')),
    ([[0, 1], [2, 0]], {}), ([[0, 1], [2, 0]], dict(axis=-1)), ([1.7, 0.2], {}),
], ids=str)
def test_take(idx, kw, ctx):
    idx = np.array(idx, dtype=np.float32)
    check_op(lambda a, i: nd.take(a, i, **kw), lambda a, i: _np_take(a, i, **kw), [X, idx], ctx,
             wrt=[0])


def test_take_details(ctx):
    x = nd.array(X, ctx=ctx)
    i = nd.array([0, 1], dtype='int32', ctx=ctx)
    np.testing.assert_allclose(nd.take(x, i).asnumpy(), X[[0, 1]].astype(np.float32))
    np.testing.assert_allclose(x.take(nd.array([1], ctx=ctx)).asnumpy(), X[[1]].astype(np.float32))
    assert nd.take(x, i, 1, 'wrap').shape == (3, 2)           # positional axis and mode
    with pytest.raises(mx.MXNetError, match='index 5'):
        nd.take(x, nd.array([5], ctx=ctx), mode='raise').wait_to_read()
    # Repeated indices accumulate their gradients.
    a = nd.array([[1.0, 2.0], [3.0, 4.0]], ctx=ctx)
    a.attach_grad()
    with mx.autograd.record():
        y = nd.take(a, nd.array([0, 0, 1], ctx=ctx)).sum()
    y.backward()
    assert a.grad.asnumpy().tolist() == [[2, 2], [1, 1]]


def test_batch_take(ctx):
    a = RNG.randn(3, 4)
    idx = np.array([0, 3, 1], dtype=np.float32)
    check_op(nd.batch_take, lambda x, i: x[np.arange(3), i.astype(int)], [a, idx], ctx, wrt=[0])


@pytest.mark.parametrize('index,kw,ref', [
    ([0, 1, 3], {}, lambda x: x[np.arange(3), [0, 1, 3]]),
    ([0, 1, 3], dict(axis=1), lambda x: x[np.arange(3), [0, 1, 3]]),
    ([0, 1, 2, 0], dict(axis=0), lambda x: x[[0, 1, 2, 0], np.arange(4)]),
    ([0, 1, 5], dict(axis=-1, mode='clip'), lambda x: x[np.arange(3), [0, 1, 3]]),
    ([0, 1, 5], dict(axis=-1, mode='wrap'), lambda x: x[np.arange(3), [0, 1, 1]]),
    ([0, 1, -1], dict(axis=1, keepdims=True), lambda x: x[np.arange(3), [0, 1, 0]][:, None]),
    ([[0], [1], [3]], dict(keepdims=True), lambda x: x[np.arange(3), [0, 1, 3]][:, None]),
], ids=str)
def test_pick(index, kw, ref, ctx):
    check_op(lambda x, i: nd.pick(x, i, **kw), lambda x, i: ref(x),
             [X, np.array(index, dtype=np.float32)], ctx, wrt=[0])


def test_pick_positional_and_errors(ctx):
    x = nd.array(X, ctx=ctx)
    assert nd.pick(x, nd.array([0, 1, -1], ctx=ctx), 1, True).shape == (3, 1)
    assert x.pick(nd.array([0, 1, 3], ctx=ctx)).shape == (3,)
    with pytest.raises(mx.MXNetError, match='pick'):
        nd.pick(x, nd.array([0, 1], ctx=ctx))


def test_one_hot(ctx):
    i = nd.array([1, 0, 3], ctx=ctx)
    assert nd.one_hot(i, 4).asnumpy().tolist() == np.eye(4)[[1, 0, 3]].tolist()
    out = nd.one_hot(i, depth=4, on_value=5, off_value=-1)
    assert out.asnumpy().tolist() == (np.eye(4)[[1, 0, 3]] * 6 - 1).tolist()
    # Out-of-range indices give a row of off_value.
    out = nd.one_hot(nd.array([1, 0, 5, -1], ctx=ctx), 4, dtype='int32')
    assert out.dtype == np.int32
    assert out.asnumpy().tolist() == [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    # every index in range (one write each) and out of range give the same rows
    for rows in ([1, 3], [1, 3, 4]):
        out = nd.one_hot(nd.array(rows, ctx=ctx), 4, on_value=7, off_value=2, dtype='int32')
        assert out.asnumpy().tolist()[:2] == [[2, 7, 2, 2], [2, 2, 2, 7]]
    assert nd.one_hot(nd.array([4, 2], ctx=ctx), 4).asnumpy().tolist() == \
        [[0, 0, 0, 0], [0, 0, 1, 0]]
    assert nd.one_hot(nd.array([[1, 0], [2, 1]], ctx=ctx), 3).shape == (2, 2, 3)
    assert nd.one_hot(nd.array([2], dtype='int32', ctx=ctx), 3).dtype == np.float32
    assert i.one_hot(4).shape == (3, 4)
    # Fractional indices are truncated, as MXNet casts them; depth 0 gives an empty last axis.
    assert nd.one_hot(nd.array([1.7, 0.2, 2.9], ctx=ctx), 3).asnumpy().tolist() == \
        [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    assert nd.one_hot(i, 0).shape == (3, 0)
    o = nd.zeros((2, 3), ctx=ctx)
    nd.onehot_encode(nd.array([1, 0], ctx=ctx), o)
    assert o.asnumpy().tolist() == [[0, 1, 0], [1, 0, 0]]


def test_where(ctx):
    c = np.array([[1, 0, 1], [0, 0, 1]], dtype=np.float32)
    a, b = RNG.randn(2, 3), RNG.randn(2, 3)
    check_op(lambda x, y: nd.where(nd.array(c, ctx=ctx), x, y), lambda x, y: np.where(c, x, y),
             [a, b], ctx)
    row = np.array([1, 0], dtype=np.float32)
    check_op(lambda x, y: nd.where(nd.array(row, ctx=ctx), x, y),
             lambda x, y: np.where(row[:, None] != 0, x, y), [a, b], ctx)
    out = nd.where(condition=nd.array(c, dtype='int32', ctx=ctx), x=nd.array(a, ctx=ctx),
                   y=nd.array(b, ctx=ctx))
    np.testing.assert_allclose(out.asnumpy(), np.where(c, a, b).astype(np.float32))
    with pytest.raises(mx.MXNetError, match='same shape'):
        nd.where(nd.array(c), nd.array(a), nd.zeros((2, 1)))
    with pytest.raises(mx.MXNetError, match='condition'):
        nd.where(nd.array([1, 0, 1]), nd.array(a), nd.array(b))


M = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])


@pytest.mark.parametrize('kw,expected', [
    (dict(), [[0], [1]]),
    (dict(k=2), [[0, 2], [1, 2]]),
    (dict(axis=0), [[0, 1, 1]]),
    (dict(k=2, ret_typ='value'), [[3, 2], [5, 4]]),
    (dict(k=2, ret_typ='mask'), [[1, 0, 1], [0, 1, 1]]),
    (dict(k=2, ret_typ='indices', is_ascend=True), [[1, 2], [0, 2]]),
    (dict(axis=None), [4]),
    (dict(axis=None, k=3), [4, 5, 0]),
    (dict(k=0), [[0, 2, 1], [1, 2, 0]]),
], ids=str)
def test_topk(kw, expected, ctx):
    out = nd.topk(nd.array(M, ctx=ctx), **kw)
    assert out.asnumpy().tolist() == expected     # MXNet 1.9.1's results
    assert out.dtype == np.float32


def test_topk_both_dtype_and_gradient(ctx):
    v, i = nd.topk(nd.array(M, ctx=ctx), k=2, ret_typ='both', dtype='int64')
    assert v.asnumpy().tolist() == [[3, 2], [5, 4]] and i.dtype == np.int64
    assert nd.topk(nd.array(M, ctx=ctx), k=2, dtype='int32').dtype == np.int32
    assert nd.topk(nd.array(M, ctx=ctx), -1, 2).asnumpy().tolist() == [[0, 2], [1, 2]]
    x = RNG.permutation(12).reshape(3, 4).astype(np.float64)
    check_op(lambda a: nd.topk(a, k=2, ret_typ='value'), lambda a: -np.sort(-a, axis=-1)[:, :2],
             [x], ctx)
    with pytest.raises(mx.MXNetError, match='k=5'):
        nd.topk(nd.array(M), k=5)


def test_sort_argsort(ctx):
    x = RNG.permutation(12).reshape(3, 4).astype(np.float64)
    check_op(nd.sort, lambda a: np.sort(a, -1), [x], ctx)
    check_op(lambda a: nd.sort(a, axis=0, is_ascend=False), lambda a: -np.sort(-a, 0), [x], ctx)
    check_op(lambda a: nd.sort(a, axis=None), lambda a: np.sort(a, axis=None), [x], ctx)
    check_op(nd.argsort, lambda a: np.argsort(a, -1).astype(np.float32), [x], ctx, grad=False)
    check_op(lambda a: nd.argsort(a, axis=0, is_ascend=False),
             lambda a: np.argsort(-a, 0).astype(np.float32), [x], ctx, grad=False)
    assert nd.argsort(nd.array(x), dtype='int32').dtype == np.int32
    assert nd.argsort(nd.array(M), axis=None).asnumpy().tolist() == [3, 1, 2, 0, 5, 4]
    assert nd.array(x).sort().shape == (3, 4) and nd.array(x).argsort().shape == (3, 4)


def test_gather_nd_scatter_nd(ctx):
    idx = np.array([[0, 2], [1, 3]], dtype=np.float32)
    check_op(nd.gather_nd, lambda a, i: a[i[0].astype(int), i[1].astype(int)], [X, idx], ctx,
             wrt=[0])
    check_op(nd.gather_nd, lambda a, i: a[i[0].astype(int)],
             [X, np.array([[0, 2]], dtype=np.float32)], ctx, wrt=[0])
    assert nd.gather_nd(nd.array(X), nd.array([[1], [2]])).shape == (1,)

    def scatter(d, i, shape=(2, 3)):
        out = np.zeros(shape)
        out[tuple(i.astype(int))] = d
        return out
    data = RNG.randn(2)
    check_op(lambda d, i: nd.scatter_nd(d, i, shape=(2, 3)), scatter,
             [data, np.array([[0, 1], [1, 2]], dtype=np.float32)], ctx, wrt=[0])
    rows = RNG.randn(1, 3)
    check_op(lambda d, i: nd.scatter_nd(d, i, (2, 3)), scatter,
             [rows, np.array([[1]], dtype=np.float32)], ctx, wrt=[0])
    with pytest.raises(mx.MXNetError, match='scatter_nd'):
        nd.scatter_nd(nd.ones((3,)), nd.array([[0, 1]]), shape=(2, 3))
    with pytest.raises(mx.MXNetError, match='gather_nd'):
        nd.gather_nd(nd.array(X), nd.array([[0], [1], [2]]))


def test_boolean_mask(ctx):
    check_op(lambda a: nd.contrib.boolean_mask(a, nd.array([1, 0, 1], ctx=ctx)),
             lambda a: a[[0, 2]], [X], ctx)
    check_op(lambda a: nd.contrib.boolean_mask(a, nd.array([0, 1, 1, 0], ctx=ctx), axis=1),
             lambda a: a[:, [1, 2]], [X], ctx)
    assert nd.contrib.boolean_mask(nd.array(X), nd.zeros(3)).shape == (0, 4)
    with pytest.raises(mx.MXNetError, match='boolean_mask'):
        nd.contrib.boolean_mask(nd.array(X), nd.ones(4))


def test_contrib_isnan_isinf_isfinite():
    x = nd.array([1.0, np.nan, np.inf, -np.inf])
    assert nd.contrib.isnan(x).asnumpy().tolist() == [0, 1, 0, 0]
    assert nd.contrib.isinf(x).asnumpy().tolist() == [0, 0, 1, 1]
    assert nd.contrib.isfinite(x).asnumpy().tolist() == [1, 0, 0, 0]


def test_ravel_unravel(ctx):
    idx = nd.array([[1, 2], [0, 3]], ctx=ctx)
    flat = nd.ravel_multi_index(idx, shape=(3, 4))
    assert flat.asnumpy().tolist() == np.ravel_multi_index(([1, 2], [0, 3]), (3, 4)).tolist()
    back = nd.unravel_index(flat, shape=(3, 4))
    assert back.shape == (2, 2) and back.asnumpy().tolist() == [[1, 2], [0, 3]]
    with pytest.raises(mx.MXNetError, match='ravel_multi_index'):
        nd.ravel_multi_index(nd.ones((3, 2)), shape=(3, 4))


SEQ = np.arange(24, dtype=np.float64).reshape(3, 2, 4) * 0.1


def _np_mask(x, lengths, value=0.0, axis=0):
    out = x.copy()
    for b, n in enumerate(lengths):
        if axis == 0:
            out[int(n):, b] = value
        else:
            out[b, int(n):] = value
    return out


def test_sequence_mask(ctx):
    lengths = np.array([1, 3], dtype=np.float32)
    check_op(lambda x, n: nd.SequenceMask(x, n, use_sequence_length=True, value=-1),
             lambda x, n: _np_mask(x, n, -1), [SEQ, lengths], ctx, wrt=[0])
    check_op(lambda x, n: nd.SequenceMask(x, n, use_sequence_length=True, axis=1),
             lambda x, n: _np_mask(x, n, 0, axis=1), [SEQ.transpose(1, 0, 2), lengths], ctx,
             wrt=[0])
    check_op(nd.SequenceMask, lambda x: x, [SEQ], ctx)     # no lengths: nothing masked
    with pytest.raises(mx.MXNetError, match='sequence_length'):
        nd.SequenceMask(nd.array(SEQ), nd.array([1, 2, 3]), use_sequence_length=True)


def test_sequence_last_and_reverse(ctx):
    lengths = np.array([1, 3], dtype=np.float32)
    check_op(lambda x, n: nd.SequenceLast(x, n, use_sequence_length=True),
             lambda x, n: np.stack([x[0, 0], x[2, 1]]), [SEQ, lengths], ctx, wrt=[0])
    check_op(nd.SequenceLast, lambda x: x[-1], [SEQ], ctx)
    check_op(lambda x, n: nd.SequenceLast(x, n, use_sequence_length=True, axis=1),
             lambda x, n: np.stack([x[0, 0], x[1, 2]]), [SEQ.transpose(1, 0, 2), lengths], ctx,
             wrt=[0])

    def reverse(x, n):
        out = x.copy()
        for b, k in enumerate(n.astype(int)):
            out[:k, b] = x[:k, b][::-1]
        return out
    check_op(lambda x, n: nd.SequenceReverse(x, n, use_sequence_length=True), reverse,
             [SEQ, lengths], ctx, wrt=[0])
    check_op(nd.SequenceReverse, lambda x: x[::-1], [SEQ], ctx)


def test_legacy_element_0index_ops(ctx):
    a = RNG.randn(3, 4)
    idx = np.array([1, 0, 3], dtype=np.float32)
    check_op(nd.choose_element_0index, lambda x, i: x[np.arange(3), i.astype(int)], [a, idx], ctx,
             wrt=[0])

    def fill(x, m, i):
        x = x.copy()
        x[np.arange(3), i.astype(int)] = m
        return x
    check_op(nd.fill_element_0index, fill, [a, RNG.randn(3), idx], ctx, wrt=[0, 1])
    with pytest.raises(mx.MXNetError, match='fill_element_0index'):
        nd.fill_element_0index(nd.ones((3, 4)), nd.ones(2), nd.ones(3))


def test_boolean_mask_in_a_graph_and_a_hybridized_block():
    import warnings
    x, i = mx.sym.var('x'), mx.sym.var('i')
    m = mx.sym.contrib.boolean_mask(x, i)
    assert m.infer_shape_partial(x=(3, 4), i=(3,))[1] == [(0, 4)]    # rows: known when run
    assert '_contrib_boolean_mask' in m.tojson()

    class Masked(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, data, index):
            return F.contrib.boolean_mask(data, index) * 2

    block = Masked()
    block.hybridize()
    data = nd.array([[1, 2], [3, 4], [5, 6]])
    data.attach_grad()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        with mx.autograd.record():
            out = block(data, nd.array([1, 0, 1]))
    assert any('runs imperatively' in str(x.message) for x in w)
    out.backward()
    assert out.asnumpy().tolist() == [[2, 4], [10, 12]]
    assert data.grad.asnumpy().tolist() == [[2, 2], [0, 0], [2, 2]]


@pytest.mark.parametrize('reduction', ['none', 'add', 'max'])
def test_scatter_elements(ctx, reduction):
    data = np.random.RandomState(0).randn(3, 4)
    # distinct positions per column for 'none' (a repeated one keeps an arbitrary write)
    idx = np.array([[2, 0, 1, -1], [0, 1, 2, 0]], dtype=np.int64)
    upd = np.random.RandomState(1).randn(2, 4)

    def ref(d, i, u):
        out = d.copy()
        for r in range(i.shape[0]):
            for c in range(i.shape[1]):
                row = i[r, c] % d.shape[0]
                if reduction == 'none':
                    out[row, c] = u[r, c]
                elif reduction == 'add':
                    out[row, c] += u[r, c]
                else:
                    out[row, c] = max(out[row, c], u[r, c])
        return out
    check_op(lambda d, i, u: nd._internal._scatter_elements(d, i, u, axis=0,
                                                           reduction=reduction),
             ref, [data, idx, upd], ctx, wrt=[0, 2])
