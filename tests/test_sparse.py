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
