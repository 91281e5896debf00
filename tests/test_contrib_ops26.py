"""MXNet 1.9.1's contrib operators: hawkesll, DGL's graph operators on csr graphs, AdamW's
update operators (single and multi-tensor) and GroupAdaGrad."""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd as ag
from neomx import nd
from neomx.base import MXNetError

HAWKES = '''
mu = nd.array([[1.5, 2.0, 3.0], [1.0, 0.5, 2.0]])
alpha = nd.array([0.2, 0.3, 0.4])
beta = nd.array([2.0, 1.0, 3.0])
lags = nd.array([[6, 7, 8, 9, 3], [1, 2, 3, 4, 2]])
marks = nd.array([[0, 1, 2, 1, 0], [1, 2, 0, 0, 2]]).astype('int32')
states = nd.array([[0.5, 0.0, 1.0], [0.0, 0.2, 0.0]])
for t in (mu, alpha, beta):
    t.attach_grad()
with mx.autograd.record():
    ll, s = nd.contrib.hawkesll(mu, alpha, beta, states, lags, marks, nd.array([4, 5]),
                                nd.array([40.0, 30.0]))
ll.backward()
print([v.asnumpy().ravel().tolist() for v in (ll, s, mu.grad, alpha.grad, beta.grad)])
'''


def test_hawkesll_matches_mxnet(mxnet_ref):
    want = eval(mxnet_ref('import mxnet as mx\nfrom mxnet import nd\n' + HAWKES))
    out = {}
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(HAWKES, {'mx': mx, 'nd': nd}, out)
    got = eval(buf.getvalue())
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def _graph():
    indptr = np.array([0, 2, 3, 5, 5])
    indices = np.array([1, 3, 2, 0, 3])
    data = np.array([10, 11, 12, 13, 14], dtype=np.int64)
    return nd.sparse.csr_matrix((data, indices, indptr), shape=(4, 4))


def test_dgl_graph_operators():
    g = _graph()
    assert nd.contrib.edge_id(g, nd.array([0, 0, 2, 3]), nd.array([3, 2, 0, 0])).asnumpy() \
        .tolist() == [11, -1, 13, -1]
    adj = nd.contrib.dgl_adjacency(g)
    assert adj.dtype == np.float32 and adj.data.asnumpy().tolist() == [1] * 5
    sub, orig = nd.contrib.dgl_subgraph(g, nd.array([0, 2, 3], dtype='int64'),
                                        return_mapping=True)
    assert sub.asnumpy().tolist() == [[0, 0, 0], [1, 0, 2], [0, 0, 0]]   # new ids 0, 1, 2
    assert orig.asnumpy().tolist() == [[0, 0, 11], [13, 0, 14], [0, 0, 0]]
    with pytest.raises(MXNetError, match='sorted'):
        nd.contrib.dgl_subgraph(g, nd.array([2, 0], dtype='int64'))
    mx.random.seed(3)
    ids, csr, layer = nd.contrib.dgl_csr_neighbor_uniform_sample(
        g, nd.array([0], dtype='int64'), num_args=2, num_hops=2, num_neighbor=5,
        max_num_vertices=4)
    n = int(ids.asnumpy()[-1])
    assert ids.asnumpy()[:n].tolist() == [0, 1, 2, 3] and csr.shape == (4, 4)
    assert layer.asnumpy().tolist() == [0, 1, 2, 1]
    csr.check_format()
    compact = nd.contrib.dgl_graph_compact(csr, ids, graph_sizes=(n,), return_mapping=False)
    assert compact.shape == (n, n)
    ids, csr, prob, layer = nd.contrib.dgl_csr_neighbor_non_uniform_sample(
        g, nd.array([0.9, 0.8, 0.2, 0.4]), nd.array([2], dtype='int64'), num_args=3,
        num_hops=1, num_neighbor=1, max_num_vertices=3)
    assert prob.dtype == np.float32 and prob.shape == (3,) and ids.shape == (4,)
    with pytest.raises(MXNetError, match='csr'):
        nd.contrib.dgl_adjacency(nd.ones((2, 2)))


def _adamw_ref(w, g, m, v, scale, lr, eta, wd, b1=0.9, b2=0.999, eps=1e-8):
    g = g * scale
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    return w - eta * (lr * m / (np.sqrt(v) + eps) + wd * w), m, v


def test_adamw_updates_single_and_multi_tensor():
    rng = np.random.RandomState(0)
    shapes = [(3, 4), (5,)]
    ws = [rng.rand(*s).astype(np.float32) for s in shapes]
    gs = [rng.rand(*s).astype(np.float32) - 0.5 for s in shapes]
    w, g = [nd.array(a) for a in ws], [nd.array(a) for a in gs]
    m, v = [nd.zeros(s) for s in shapes], [nd.zeros(s) for s in shapes]
    before = [a.asnumpy() for a in w]
    for bad in (0.0, np.nan, np.inf):                   # skipped, as MXNet's
        nd.contrib.multi_adamw_update(w, g, m, v, bad, out=w, lrs=[0.1, 0.2], wds=[0.1, 0],
                                      etas=[1.0, 0.5])
        nd.contrib.adamw_update(w[0], g[0], m[0], v[0], bad, lr=0.1, eta=1.0, out=w[0])
    for a, b in zip(w, before):
        np.testing.assert_array_equal(a.asnumpy(), b)
    nd.contrib.multi_adamw_update(w, g, m, v, nd.array([2.0]), out=w, lrs=[0.1, 0.2],
                                  wds=[0.1, 0.0], etas=[1.0, 0.5])
    for i, (lr, wd, eta) in enumerate(((0.1, 0.1, 1.0), (0.2, 0.0, 0.5))):
        rw, rm, rv = _adamw_ref(ws[i], gs[i], 0, 0, 2.0, lr, eta, wd)
        np.testing.assert_allclose(w[i].asnumpy(), rw, rtol=1e-5)
        np.testing.assert_allclose(m[i].asnumpy(), rm, rtol=1e-5)
    w16, w32 = nd.array(ws[0]).astype('float16'), nd.array(ws[0])
    m0, v0 = nd.zeros(shapes[0]), nd.zeros(shapes[0])
    nd.contrib.mp_adamw_update(w16, g[0].astype('float16'), m0, v0, w32, 1.0, lr=0.1, eta=1.0,
                               out=w16)
    rw = _adamw_ref(ws[0], gs[0].astype(np.float16).astype(np.float32), 0, 0, 1.0, 0.1, 1.0,
                    0)[0]
    np.testing.assert_allclose(w32.asnumpy(), rw, rtol=1e-5)
    assert w16.dtype == np.float16
    with pytest.raises(MXNetError, match='expected 2 weights'):
        nd.contrib.multi_adamw_update(w, g, m[:1], v, 1.0, lrs=[1, 1], wds=[0, 0],
                                      etas=[1, 1])


def test_group_adagrad():
    opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.5, eps=1e-5, clip_gradient=1.0)
    w = nd.ones((2, 2))
    h = opt.create_state(0, w)
    assert h.shape == (2, 1)
    g = np.array([[3.0, 0.5], [0.2, 0.4]], dtype=np.float32)
    opt.update(0, w, nd.array(g), h)
    gc = np.clip(g, -1, 1)
    hist = (gc * gc).mean(axis=1, keepdims=True)
    np.testing.assert_allclose(h.asnumpy(), hist, rtol=1e-6)
    np.testing.assert_allclose(w.asnumpy(), 1 - 0.5 * gc / np.sqrt(hist + 1e-5), rtol=1e-5)
    ws = nd.ones((2, 2)).tostype('row_sparse')
    hs = opt.create_state(0, ws)
    opt.update(0, ws, nd.array(g).tostype('row_sparse'), hs)
    assert hs.stype == 'row_sparse'
    np.testing.assert_allclose(hs.asnumpy(), hist, rtol=1e-6)
    with pytest.raises(MXNetError, match='weight decay'):
        mx.optimizer.contrib.GroupAdaGrad(wd=0.1).update(0, w, nd.array(g), h)
