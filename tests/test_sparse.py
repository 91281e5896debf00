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
    assert nd.relu(a).stype == 'default'         # operators fall back to dense results
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
