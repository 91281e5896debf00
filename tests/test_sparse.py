"""Storage types as MXNet 1.9.1 names them: csr and row_sparse arrays, kept dense (values,
``stype``, the parts ``data``/``indices``/``indptr``, sparse gradients, conversions)."""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd as ag
from neomx import nd

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
    assert (a * 2).stype == 'default'            # operators fall back to dense results
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
