"""Storage types as MXNet 1.9.1 names them: csr and row_sparse arrays, kept dense (values,
``stype``, the parts ``data``/``indices``/``indptr``, sparse gradients, conversions)."""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd as ag
from neomx import gluon, nd
from neomx.base import MXNetError

DENSE = np.array([[0, 1, 0], [2, 0, 3], [0, 0, 0]], dtype=np.float32)


def test_csr_parts_and_conversions():
    a = nd.array(DENSE).tostype('csr')
    assert isinstance(a, nd.sparse.CSRNDArray) and a.stype == 'csr'
    assert a.data.asnumpy().tolist() == [1, 2, 3]
    assert a.indices.asnumpy().tolist() == [1, 0, 2]
    assert a.indptr.asnumpy().tolist() == [0, 1, 3, 3]
    assert a.indices.dtype == np.int64
    b = nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [1, 0, 2], [0, 1, 3, 3]), shape=(3, 3))
    np.testing.assert_array_equal(b.asnumpy(), DENSE)
    d = b.tostype('default')
    assert type(d) is nd.NDArray and d.stype == 'default'
    assert (a * 2).stype == 'csr'                # a sparse rule, as MXNet's
    assert nd.relu(a).stype == 'csr'             # relu(0) is 0: MXNet keeps the type
    assert nd.exp(a).stype == 'default'          # the others fall back to dense results
    np.testing.assert_array_equal((a * 2).asnumpy(), DENSE * 2)
    with pytest.raises(mx.MXNetError, match='2-d'):
        nd.ones((2, 2, 2)).tostype('csr')
    with pytest.raises(mx.MXNetError, match='unknown storage type'):
        nd.ones(2).tostype('coo')


def test_row_sparse_parts():
    r = nd.sparse.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [0, 2]), shape=(4, 2))
    assert r.stype == 'row_sparse'
    assert r.indices.asnumpy().tolist() == [0, 2]
    assert r.data.asnumpy().tolist() == [[1, 2], [3, 4]]
    assert r.asnumpy().tolist() == [[1, 2], [0, 0], [3, 4], [0, 0]]
    z = nd.zeros((3, 2), stype='row_sparse')
    assert z.stype == 'row_sparse' and z.indices.shape == (0,)
    assert r.copyto(mx.cpu(1)).stype == 'row_sparse'


def test_sparse_gradients_and_detach():
    for stype in ('default', 'csr', 'row_sparse'):
        x = nd.zeros((2, 2), stype=stype)
        assert x.stype == stype
        x.attach_grad()
        assert x.grad.stype == stype                 # the array's own by default
        assert x.detach().stype == stype
        x.attach_grad(stype='row_sparse')
        assert x.grad.stype == 'row_sparse'
    lhs = nd.array([[1.0, 0, 2], [0, 3, 0]]).tostype('csr')
    rhs = nd.ones((3, 2)).tostype('row_sparse')
    rhs.attach_grad()
    with ag.record():
        y = nd.dot(lhs, rhs)
    y.backward()
    assert rhs.grad.stype == 'row_sparse'
    np.testing.assert_allclose(rhs.grad.asnumpy(), lhs.asnumpy().T @ np.ones((2, 2)))


def test_parts_of_a_csr_matrix():
    import scipy.sparse as sps
    m = nd.array([[0, 5, 0], [7, 0, 8]]).tostype('csr')
    assert m.indptr.asnumpy().tolist() == [0, 1, 3]
    assert m.indices.asnumpy().tolist() == [1, 0, 2]
    assert m.data.asnumpy().tolist() == [5, 7, 8]
    assert (m.asscipy() != sps.csr_matrix([[0, 5, 0], [7, 0, 8]])).nnz == 0
    big = nd.sparse.csr_matrix(sps.coo_matrix(([2.0], ([99], [999]))).tocsr())
    assert big.shape == (100, 1000) and big.asnumpy()[99, 999] == 2
    assert isinstance(big[10:20], nd.sparse.CSRNDArray)        # rows of a csr matrix
    parts = gluon.utils.split_and_load(big, [mx.cpu(0), mx.cpu(1)])
    assert [type(p).__name__ for p in parts] == ['CSRNDArray'] * 2
    assert parts[1].context == mx.cpu(1) and parts[1].asnumpy()[49, 999] == 2
    with pytest.raises(MXNetError, match='2-d'):
        nd.ones((2, 2, 2)).tostype('csr')


def test_operations_keep_or_drop_the_storage_type():
    # the storage types MXNet 1.9.1 gives (checked against it)
    x = nd.array([[0, 0], [1, 2]]).tostype('row_sparse')
    d = nd.ones((2, 2))
    assert (x * 2).stype == 'row_sparse' and (x / 2).stype == 'row_sparse'
    assert (x + x).stype == 'row_sparse' and (-x).stype == 'row_sparse'
    assert (x * d).stype == 'row_sparse' and (2 * x).stype == 'row_sparse'
    assert (d * x).stype == 'default' and (x / d).stype == 'default'
    assert (x + 1).stype == 'default' and (x + 1).asnumpy().tolist() == [[1, 1], [2, 3]]
    assert nd.sigmoid(x).stype == 'default'             # no sparse rule: dense values
    assert x.copyto(mx.cpu(1)).stype == 'row_sparse' and x.astype('float64').stype == 'row_sparse'
    assert x.tostype('default').stype == 'default'
    kept = nd.sparse.retain(x, nd.array([0]))
    assert kept.stype == 'row_sparse' and kept.asnumpy().tolist() == [[0, 0], [0, 0]]
    kept = nd.sparse.retain(nd.array([[1, 1], [np.nan, 2]]).tostype('row_sparse'),
                            nd.array([1]))
    assert np.isnan(kept.asnumpy()[1, 0]) and kept.asnumpy()[0].tolist() == [0, 0]


def test_creation_forms_dtypes_and_shapes():
    # the dtypes and shapes MXNet 1.9.1 gives (checked against it)
    for make in (nd.sparse.csr_matrix, nd.sparse.row_sparse_array):
        assert make(np.ones((2, 3))).dtype == np.float64          # NumPy's own dtype
        assert make(np.ones((2, 3), dtype=np.int32)).dtype == np.int32
        assert make(nd.ones((2, 3), dtype='float64')).dtype == np.float64
        assert make([[1, 2, 3]]).dtype == np.float32               # lists: float32
        z = make((2, 3), dtype='int32', ctx=mx.cpu(1))
        assert z.dtype == np.int32 and z.context == mx.cpu(1) and z.asnumpy().sum() == 0
        with pytest.raises(ValueError, match='shape mismatch'):
            make((2, 2), shape=(3, 2))
        with pytest.raises(ValueError, match='shape mismatch'):
            make(nd.ones((2, 2)), shape=(3, 2))
    shape = (np.int64(2), np.int32(3))                             # NumPy integers are a shape
    assert nd.sparse.row_sparse_array(shape).shape == (2, 3)
    # parts: the dtype of the data (float32 for lists); the shape from the indices
    c = nd.sparse.csr_matrix((np.array([1.0, 2.0]), [2, 0], [0, 1, 2]))
    assert c.shape == (2, 3) and c.dtype == np.float64
    assert c.asnumpy().tolist() == [[0, 0, 1], [2, 0, 0]]
    assert nd.sparse.csr_matrix(([1, 2], [2, 0], [0, 1, 2]), dtype='int32').dtype == np.int32
    r = nd.sparse.row_sparse_array((np.ones((1, 2, 3)), [4]))
    assert r.shape == (5, 2, 3) and r.dtype == np.float64 and r.indices.asnumpy().tolist() == [4]
    with pytest.raises(ValueError, match='invalid shape'):         # nothing to infer it from
        nd.sparse.csr_matrix(([], [], [0, 0]))
    with pytest.raises(ValueError, match='invalid shape'):
        nd.sparse.row_sparse_array((np.zeros((0, 3)), []))
    # coordinates: repeated positions add up
    coo = nd.sparse.csr_matrix(([1.0, 2.0, 3.0], ([0, 1, 1], [1, 0, 0])), shape=(2, 3))
    assert coo.stype == 'csr' and coo.asnumpy().tolist() == [[0, 1, 0], [5, 0, 0]]
    # empty/zeros with a storage type
    e = nd.empty((2, 3), stype='csr')
    assert isinstance(e, nd.sparse.CSRNDArray) and e.asnumpy().sum() == 0
    assert nd.empty((2, 3), stype='default').stype == 'default'
    with pytest.raises(ValueError, match='unknown storage type'):
        nd.sparse.zeros('coo', (2, 2))
    with pytest.raises(ValueError, match='2-d'):
        nd.array([1, 2, 3]).tostype('csr')


def test_scipy_dtype_is_kept_and_duplicates_add_up():
    sps = pytest.importorskip('scipy.sparse')
    m = sps.csr_matrix((np.array([1, 2, 3, 4, 1]), np.array([0, 2, 2, 1, 1]),
                        np.array([0, 3, 3, 5])), shape=(3, 3), dtype=np.float64)
    for make in (nd.array, nd.sparse.array, nd.sparse.csr_matrix):
        a = make(m)
        assert a.stype == 'csr' and a.dtype == np.float64
        assert a.indices.asnumpy().tolist() == [0, 2, 1]            # canonical: summed, sorted
        assert a.data.asnumpy().tolist() == [1, 5, 5]


def test_check_format_reports_invalid_parts():
    data = [7, 8, 9]
    for indices, indptr in (([0, 2, 1], [0, 5, 2, 3]),     # indptr past the values
                            ([2, 1, 1], [0, 2, 2, 3]),     # columns not ascending in a row
                            ([1, 2, 1], [0, 2, 2, 4]),     # indptr does not end at nnz
                            ([0, 2, 1], [0, -2, 2, 3]),    # decreasing indptr
                            ([0, 5, 1], [0, 2, 2, 3])):    # column out of range
        a = nd.sparse.csr_matrix((data, indices, indptr), shape=(3, 4))
        a.check_format(full_check=False)                    # MXNet's quick check passes these
        with pytest.raises(MXNetError, match='check_format'):
            a.check_format()
    for indices in ([1, 4], [1, 0], [1, -2]):               # out of range, unordered, negative
        r = nd.sparse.row_sparse_array(([[1, 2], [3, 4]], indices), shape=(3, 2))
        with pytest.raises(MXNetError, match='row indices'):
            r.check_format()
    nd.sparse.csr_matrix((data, [0, 2, 1], [0, 2, 2, 3]), shape=(3, 4)).check_format()
    nd.sparse.row_sparse_array(([[1, 2]], [2]), shape=(3, 2)).check_format()
    nd.sparse.zeros('csr', (2, 2)).check_format()
    assert nd.sparse.zeros('csr', (2, 2))._num_aux == 2
    assert nd.sparse.zeros('row_sparse', (2, 2))._num_aux == 1


def test_comparisons_keep_the_storage_type_where_zero_compares_false():
    # MXNet 1.9.1: x (op) number stays sparse exactly when 0 (op) number is false
    for stype in ('csr', 'row_sparse'):
        y = nd.ones((2, 3)).tostype(stype)
        cases = {'y == 1': (y == 1, stype), '1 == y': (1 == y, stype),
                 'y == 0': (y == 0, 'default'),
                 'y != 0': (y != 0, stype), 'y != 1': (y != 1, 'default'),
                 'y > 0': (y > 0, stype), '0 > y': (0 > y, stype), 'y > -1': (y > -1, 'default'),
                 'y >= 0': (y >= 0, 'default'), 'y >= 1': (y >= 1, stype),
                 'y < 0': (y < 0, stype), 'y < 1': (y < 1, 'default'),
                 'y <= 0': (y <= 0, 'default'), '1 <= y': (1 <= y, stype),
                 'y == y': (y == y, 'default')}
        for text, (z, want) in cases.items():
            assert z.stype == want, (stype, text)
        assert (y > 0).asnumpy().tolist() == [[1, 1, 1]] * 2
        assert (0 > y).asnumpy().sum() == 0 and (y >= 1).dtype == np.float32
    assert {y: 1}[y] == 1                                   # still hashable


def test_rows_take_pickle_and_retain_arguments():
    import pickle
    a = nd.array([[1, 0], [0, 2], [3, 0]]).tostype('csr')
    for key, want in ((1, [[0, 2]]), (-1, [[3, 0]]), (slice(-2, None), [[0, 2], [3, 0]])):
        row = a[key]
        assert isinstance(row, nd.sparse.CSRNDArray) and row.asnumpy().tolist() == want
    with pytest.raises(IndexError):
        a[3]
    t = nd.take(a, nd.array([0, 2, 7]), mode='clip')
    assert isinstance(t, nd.sparse.CSRNDArray) and t.indptr.asnumpy().tolist() == [0, 1, 2, 3]
    assert t.asnumpy().tolist() == [[1, 0], [3, 0], [3, 0]]
    assert nd.take(a, nd.array([0, 4]), mode='wrap').asnumpy().tolist() == [[1, 0], [0, 2]]
    assert nd.take(a, nd.array([0]), mode='raise').stype == 'default'   # MXNet's fallback
    assert nd.take(a, nd.array([0]), axis=1).stype == 'default'
    for x in (a, a.tostype('row_sparse')):
        b = pickle.loads(pickle.dumps(x))
        assert type(b) is type(x) and b.asnumpy().tolist() == x.asnumpy().tolist()
    with pytest.raises(MXNetError, match='invalid_arg'):
        nd.sparse.retain(a.tostype('row_sparse'), nd.array([0]), invalid_arg=1)


def test_fully_connected_takes_a_column_bias():
    # MXNet 1.9.1 takes a (num_hidden, 1) bias as well as (num_hidden,) (its non-MKL-DNN path)
    x, w = nd.array(np.arange(6).reshape(2, 3)), nd.ones((4, 3))
    b = nd.array(np.arange(1, 5).reshape(4, 1))
    out = nd.FullyConnected(x, w, b, num_hidden=4)
    np.testing.assert_allclose(out.asnumpy(), x.asnumpy() @ w.asnumpy().T + np.arange(1, 5))
    w_rsp = w.tostype('row_sparse')
    np.testing.assert_allclose(nd.sparse.FullyConnected(x.tostype('csr'), w_rsp, b,
                                                        num_hidden=4).asnumpy(), out.asnumpy())
    with pytest.raises(MXNetError, match='bias'):
        nd.FullyConnected(x, w, nd.ones((1, 4)), num_hidden=4)


def test_powerlaw_csr_generator():
    from neomx import test_utils as tu
    a, (indptr, indices, data) = tu.rand_sparse_ndarray((8, 100), 'csr', density=0.1,
                                                       distribution='powerlaw')
    assert len(data) == 80 and a.data.shape == (80,)
    per_row = np.diff(indptr).tolist()
    assert per_row == [2, 4, 8, 16, 32, 16, 1, 1]           # 2^(i+1) from the left, then 1 each
    assert indices[indptr[3]:indptr[4]].tolist() == list(range(16))
    assert (data > 1).all() and (data < 3).all()
    with pytest.raises(ValueError):
        tu.rand_sparse_ndarray((8, 100), 'csr', density=0.01, distribution='powerlaw')


# -- storage: torch's sparse tensors, memory proportional to what is stored --

def test_storage_holds_only_the_stored_values():
    import torch
    n = 100000                                   # dense: 40 GB of float32
    a = nd.sparse.csr_matrix(([1.0, 2.0, 3.0], [5, 99999, 7], [0, 2] + [3] * (n - 1)),
                             shape=(n, n))
    t = a._sparse_now()
    assert t.layout is torch.sparse_csr and t.values().numel() == 3 and a.nnz == 3
    assert (a * 2)._sparse_now().values().tolist() == [2.0, 4.0, 6.0]
    assert (a * 2).stype == 'csr' and nd.sqrt(a).stype == 'csr'
    y = nd.dot(a, nd.ones((n, 2)))               # csr times dense: dense, from the 3 values
    assert y.stype == 'default' and y[0].asnumpy().tolist() == [3.0, 3.0]
    z = nd.dot(a, nd.ones((n, 2)), transpose_a=True)
    assert z.stype == 'row_sparse' and z.indices.asnumpy().tolist() == [5, 7, 99999]
    assert z._sparse_now().values().shape == (3, 2)
    r = nd.sparse.retain(z, nd.array([7, 99999]))
    assert r.indices.asnumpy().tolist() == [7, 99999] and r.data.asnumpy()[1, 0] == 2
    assert a[1:3].stype == 'csr' and a[1:3].nnz == 1
    assert a.copyto(mx.cpu(1))._sparse_now().values().numel() == 3


def test_storage_type_rules_follow_mxnet():
    # the storage types MXNet 1.9.1 gives (checked against it)
    d = nd.array([[0, 2], [3, 0]])
    c, r = d.tostype('csr'), d.tostype('row_sparse')
    assert nd.elemwise_mul(d, c).stype == 'csr' and nd.elemwise_mul(r, d).stype == 'row_sparse'
    assert nd.elemwise_add(c, c).stype == 'csr' and nd.elemwise_add(d, c).stype == 'default'
    assert nd.elemwise_div(c, c).stype == 'default'
    assert nd.broadcast_mul(c, d).stype == 'csr' and nd.broadcast_mul(d, c).stype == 'default'
    assert (c + 0).stype == 'csr' and (c + 1).stype == 'default'
    assert nd.add_n(r, r, r).stype == 'row_sparse' and nd.add_n(r, d).stype == 'default'
    assert nd.clip(c, -1, 1).stype == 'csr' and nd.exp(r).stype == 'default'
    assert nd.sum(c, axis=0).stype == 'default'
    assert nd.concat(c, c, dim=0).stype == 'csr' and nd.concat(c, c, dim=1).stype == 'default'
    assert nd.dot(d, c).stype == 'csr' and nd.dot(c, d).stype == 'default'
    assert nd.dot(d, d, forward_stype='row_sparse').stype == 'row_sparse'
    np.testing.assert_allclose(nd.dot(d, c).asnumpy(), d.asnumpy() @ d.asnumpy())
    np.testing.assert_allclose(nd.dot(c, r, transpose_a=True).asnumpy(),
                               d.asnumpy().T @ d.asnumpy())
    q = nd._internal._square_sum(r, axis=1, keepdims=True)
    assert q.stype == 'row_sparse' and q.asnumpy().ravel().tolist() == [4, 9]
    assert nd._internal._square_sum(r, axis=0).stype == 'default'
    assert nd.contrib.quadratic(c, a=1, b=1, c=0).stype == 'csr'
    assert nd.contrib.quadratic(c, a=1, b=1, c=1).stype == 'default'
    with pytest.raises(ValueError, match='row_sparse to csr'):
        r.tostype('csr')


def test_scatter_operators_touch_the_stored_rows_only():
    lhs = nd.sparse.row_sparse_array(([[2.0, 4.0]], [1]), shape=(3, 2))
    rhs = nd.zeros((3, 2), stype='row_sparse')            # 0 everywhere: x / 0 is inf
    out = nd._internal._scatter_elemwise_div(lhs, nd.ones((3, 2)) * 2)
    assert out.indices.asnumpy().tolist() == [1] and out.data.asnumpy().tolist() == [[1, 2]]
    assert nd._internal._scatter_elemwise_div(lhs, rhs).indices.asnumpy().tolist() == [1]
    plus = nd._internal._scatter_plus_scalar(lhs, scalar=1)
    assert plus.asnumpy().tolist() == [[0, 0], [3, 5], [0, 0]]
    # in a graph bound to sparse arrays, the same (forward without gradients)
    x, y = mx.sym.var('x', stype='row_sparse'), mx.sym.var('y', stype='row_sparse')
    ex = mx.sym._internal._scatter_elemwise_div(x, y).bind(mx.cpu(), {'x': lhs, 'y': rhs})
    o = ex.forward()[0]
    assert o.stype == 'row_sparse' and o.indices.asnumpy().tolist() == [1]


def test_executors_give_the_outputs_storage_types_and_sparse_gradients():
    x = mx.sym.var('x', stype='csr')
    w = mx.sym.var('w')
    c = nd.array([[0, 1, 0], [2, 0, 0]]).tostype('csr')
    ex = mx.sym.sin(x).bind(mx.cpu(), {'x': c})
    assert ex.forward()[0].stype == 'csr'
    ex = (x * 2).simple_bind(mx.cpu(), x=(2, 3))
    assert ex.outputs[0].shape == (2, 3)
    emb = mx.sym.Embedding(mx.sym.var('d'), w, input_dim=5, output_dim=2, sparse_grad=True)
    ex = emb.simple_bind(mx.cpu(), d=(3,), w=(5, 2))
    assert ex.grad_dict['w'].stype == 'row_sparse' and ex.grad_dict['d'].stype == 'default'
    ex.arg_dict['d'][:] = nd.array([1, 3, 1])
    ex.forward(is_train=True)
    ex.backward(nd.ones((3, 2)))
    g = ex.grad_dict['w']
    assert g.indices.asnumpy().tolist() == [1, 3] and g.asnumpy()[1].tolist() == [2, 2]
    dot = mx.sym.dot(x, w).simple_bind(mx.cpu(), x=(2, 3), w=(3, 2))
    assert dot.grad_dict['w'].stype == 'row_sparse'


def test_batch_norm_refuses_fix_gamma_on_sparse_inputs():
    x = nd.ones((2, 3)).tostype('row_sparse')
    g, b, m, v = nd.ones(3), nd.zeros(3), nd.zeros(3), nd.ones(3)
    with pytest.raises(MXNetError, match='fix_gamma=True is not supported for sparse'):
        nd.BatchNorm(x, g, b, m, v, fix_gamma=True)
    assert nd.BatchNorm(x, g, b, m, v, fix_gamma=False).stype == 'default'


def test_sparse_embedding_gradient_stores_the_looked_up_rows():
    w = nd.ones((1000, 4))
    w.attach_grad(stype='row_sparse')
    with ag.record():
        y = nd.Embedding(nd.array([3, 7, 3]), w, input_dim=1000, output_dim=4,
                         sparse_grad=True)
    y.backward()
    w.grad.wait_to_read()
    assert w.grad._var.stored() is not None         # torch's sparse gradient, never dense
    assert w.grad.stype == 'row_sparse' and w.grad.indices.asnumpy().tolist() == [3, 7]
    assert w.grad._sparse_now().values().shape == (2, 4)       # two rows, not 1000
    assert w.grad.asnumpy()[3].tolist() == [2, 2, 2, 2]


def test_assigning_into_a_marked_sparse_array_keeps_its_gradient():
    x = nd.zeros((3, 2), stype='row_sparse')
    x.attach_grad()
    x[:] = nd.array([[1, 1], [0, 0], [2, 2]])
    with ag.record():
        y = x * 3
    y.backward()
    assert y.stype == 'row_sparse' and x.grad.asnumpy().tolist() == [[3, 3]] * 3
    assert x.indices.asnumpy().tolist() == [0, 2]


def test_save_and_load_sparse_records_with_mxnet(mxnet_ref, tmp_path):
    # MXNet's sparse records: the stored values and indices, not the dense array (MXNet
    # 1.9.1's pip build refuses shapes of 2^31 elements or more)
    n = 40000
    big = nd.sparse.csr_matrix(([5.0], [n - 1], [0] + [1] * n), shape=(n, n))
    r = nd.array([[0, 0], [1, 2], [0, 0]]).tostype('row_sparse')
    nd.save(str(tmp_path / 'mine.nd'), {'big': big, 'r': r})
    assert (tmp_path / 'mine.nd').stat().st_size < 2 * 8 * n      # not 4 * n * n bytes
    out = mxnet_ref(
        "import mxnet as mx\n"
        "d = mx.nd.load(%r)\n"
        "print(d['big'].stype, d['big'].shape, d['big'].data.asnumpy().tolist(),"
        " d['r'].indices.asnumpy().tolist(), d['r'].asnumpy().tolist())\n"
        "c = mx.nd.array([[0, 1, 0], [2, 0, 3]]).tostype('csr')\n"
        "mx.nd.save(%r, [c, mx.nd.array([[0, 0], [4, 5]]).tostype('row_sparse')])\n"
        % (str(tmp_path / 'mine.nd'), str(tmp_path / 'theirs.nd')))
    assert out.split()[0] == 'csr' and '[5.0]' in out and '[1]' in out
    c, rr = nd.load(str(tmp_path / 'theirs.nd'))
    assert c.stype == 'csr' and c.indices.asnumpy().tolist() == [1, 0, 2]
    assert rr.stype == 'row_sparse' and rr.asnumpy().tolist() == [[0, 0], [4, 5]]
