"""neomx.test_utils: MXNet's public test helpers."""
import os

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx import test_utils as tu


def test_default_context():
    assert tu.default_context() == mx.cpu(0)
    try:
        tu.set_default_context(mx.cpu(1))
        assert tu.default_context() == mx.cpu(1)
        assert nd.zeros((1,)).context == mx.cpu(1)
    finally:
        tu.set_default_context(mx.cpu(0))
    with pytest.raises(mx.MXNetError, match='Context'):
        tu.set_default_context('cpu')


def test_tolerances():
    assert tu.get_rtol() == 1e-4 and tu.get_rtol(0.5) == 0.5
    assert tu.get_atol(dtype=np.float64) == 1e-20
    assert tu.get_tols(np.ones(1, np.float16), np.ones(1, np.float64), None, None) == (1e-2, 1e-1)
    assert tu.get_tols(np.ones(1), np.ones(1), 1e-3, 1e-6) == (1e-3, 1e-6)


def test_same_and_almost_equal():
    a = nd.array([1.0, 2.0])
    assert tu.same(a, np.array([1.0, 2.0]))
    assert not tu.same(a, [1.0, 2.5])
    assert tu.almost_equal(a, [1.0, 2.0 + 1e-6])
    assert not tu.almost_equal(a, [1.0, 2.1])
    assert tu.almost_equal(a, [[1.0, 2.0]])                       # broadcast
    assert not tu.almost_equal(a, [[1.0, 2.0]], use_broadcast=False)
    assert not tu.almost_equal(a, [1.0, 2.0, 3.0])
    assert tu.almost_equal([np.nan, 1.0], [np.nan, 1.0], equal_nan=True)
    assert not tu.almost_equal([np.nan, 1.0], [np.nan, 1.0])
    assert tu.almost_equal_ignore_nan([np.nan, 1.0], [5.0, 1.0])


def test_assert_almost_equal_reports_the_worst_element():
    tu.assert_almost_equal(nd.array([1.0, 2.0]), nd.array([1.0, 2.00001]))
    tu.assert_almost_equal(np.array([1.0, 2.0]), [1.0, 2.0], rtol=0, atol=0)
    tu.assert_almost_equal(np.array([True, False]), np.array([True, False]))
    with pytest.raises(AssertionError) as info:
        tu.assert_almost_equal(nd.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.0]),
                               names=('mine', 'theirs'))
    msg = str(info.value)
    assert 'Location of maximum error: (1,)' in msg and 'mine=2.0' in msg and 'theirs=2.5' in msg
    with pytest.raises(AssertionError, match='cannot be compared'):
        tu.assert_almost_equal(np.ones(2), np.ones(3))
    with pytest.raises(AssertionError, match='shape'):
        tu.assert_almost_equal(np.ones((1, 2)), np.ones(2), use_broadcast=False)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal([np.nan], [np.nan])
    tu.assert_almost_equal([np.nan], [np.nan], equal_nan=True)
    tu.assert_almost_equal_ignore_nan([np.nan, 2.0], [1.0, 2.0])
    tu.assert_allclose(nd.array([1.0]), [1.0])
    with pytest.raises(AssertionError):
        tu.assert_allclose(nd.array([1.0]), [1.1])


def test_find_max_violation():
    index, viol = tu.find_max_violation(np.array([1.0, 5.0, 2.0]), np.array([1.0, 4.0, 2.0]),
                                        rtol=0.1, atol=0.0)
    assert index == (1,) and viol == pytest.approx(2.5)


def test_assert_exception():
    tu.assert_exception(int, ValueError, 'x')
    with pytest.raises(AssertionError, match='did not raise'):
        tu.assert_exception(int, ValueError, '3')


def test_retry():
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) >= 2
    flaky()
    assert len(calls) == 2

    @tu.retry(2)
    def broken():
        assert False, 'always'
    with pytest.raises(AssertionError, match='always'):
        broken()


def test_random_helpers():
    np.random.seed(0)
    a = tu.random_arrays((2, 3))
    assert a.shape == (2, 3) and a.dtype == np.float32
    b, c = tu.random_arrays((1,), ())
    assert b.shape == (1,) and c.shape == ()
    for _ in range(20):
        s2 = tu.rand_shape_2d(3, 4)
        assert 1 <= s2[0] <= 3 and 1 <= s2[1] <= 4
        s3 = tu.rand_shape_3d()
        assert len(s3) == 3 and all(1 <= d <= 10 for d in s3)
        sn = tu.rand_shape_nd(4, dim=2, allow_zero_size=True)
        assert len(sn) == 4 and all(0 <= d <= 2 for d in sn)
    x = tu.rand_ndarray((3, 2))
    assert isinstance(x, nd.NDArray) and x.shape == (3, 2) and x.dtype == np.float32
    assert tu.rand_ndarray((2,), dtype='float64', ctx=mx.cpu(1)).context == mx.cpu(1)
    assert tu.rand_ndarray((2,), modifier_func=lambda v: v * 0).asnumpy().tolist() == [0, 0]
    c = tu.rand_ndarray((4, 5), stype='csr', density=0.5)
    assert c.stype == 'csr' and c.shape == (4, 5)
    r, (data, idx) = tu.rand_sparse_ndarray((6, 2), 'row_sparse', density=1.0, data_init=2)
    assert r.stype == 'row_sparse' and idx.tolist() == list(range(6)) and (data == 2).all()
    assert sorted(tu.random_sample(range(5), 5)) == [0, 1, 2, 3, 4]
    assert len(tu.random_sample('abcdef', 3)) == 3


def test_np_reduce():
    x = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(tu.np_reduce(x, 1, False, np.sum), x.sum(1))
    np.testing.assert_array_equal(tu.np_reduce(x, (0, 2), True, np.max),
                                  x.max(axis=(0, 2), keepdims=True))
    np.testing.assert_array_equal(tu.np_reduce(x, None, False, np.sum), x.sum())


def test_check_numeric_gradient_with_functions():
    tu.check_numeric_gradient(lambda a, b: a * b + nd.sin(a), [[1.0, 2.0], [3.0, -1.0]])
    tu.check_numeric_gradient(lambda a: [nd.exp(a), a.sum()], [np.array([[0.1, 0.2]])])
    tu.check_numeric_gradient(lambda a, b: nd.dot(a, b), [np.random.randn(2, 3),
                                                           np.random.randn(3, 2)],
                              grad_nodes=[1], dtype=np.float32, rtol=5e-2, atol=1e-2)
    with pytest.raises(AssertionError, match='GRADIENT of arg0'):
        # BlockGrad hides half of the dependence: the gradients differ.
        tu.check_numeric_gradient(lambda a: nd.BlockGrad(a) * a, [[1.0, 2.0]])
    with pytest.raises(mx.MXNetError, match='Symbol'):
        tu.check_numeric_gradient(lambda a: a, {'a': [1.0]})


def test_symbol_checks_are_reachable_from_test_utils():
    x, y = mx.sym.var('x'), mx.sym.var('y')
    s = mx.sym.sin(x) * y
    xv, yv = np.array([0.5, 1.0]), np.array([2.0, 3.0])
    tu.check_numeric_gradient(s, [xv, yv])
    tu.check_numeric_gradient(s, {'x': xv, 'y': yv}, grad_nodes=['x'])
    out = tu.check_symbolic_forward(s, [xv, yv], [np.sin(xv) * yv])
    assert out[0].shape == (2,)
    tu.check_symbolic_forward(s, {'x': xv, 'y': yv}, {s.list_outputs()[0]: np.sin(xv) * yv})
    tu.check_symbolic_backward(s, [xv, yv], [np.ones(2)], [np.cos(xv) * yv, np.sin(xv)])
    tu.check_symbolic_backward(s, [xv, yv], [np.ones(2)], {'y': np.sin(xv)})
    with pytest.raises(AssertionError):
        tu.check_symbolic_forward(s, [xv, yv], [np.cos(xv) * yv])
    # MXNet's other symbolic helpers are here too.
    assert tu.check_consistency is not None and tu.simple_forward is not None


def test_environment_and_set_env_var():
    os.environ.pop('NEOMX_TU_A', None)
    os.environ['NEOMX_TU_B'] = 'keep'
    with tu.environment('NEOMX_TU_A', '1'):
        assert os.environ['NEOMX_TU_A'] == '1'
    assert 'NEOMX_TU_A' not in os.environ
    with tu.environment({'NEOMX_TU_A': 2, 'NEOMX_TU_B': None}):
        assert os.environ['NEOMX_TU_A'] == '2' and 'NEOMX_TU_B' not in os.environ
    assert os.environ['NEOMX_TU_B'] == 'keep' and 'NEOMX_TU_A' not in os.environ
    with pytest.raises(ValueError):
        with tu.environment('only-a-name'):
            pass
    assert tu.set_env_var('NEOMX_TU_B', 'new') == 'keep'
    assert tu.set_env_var('NEOMX_TU_C', 'x', default_val='none') == 'none'
    del os.environ['NEOMX_TU_B'], os.environ['NEOMX_TU_C']


def test_list_gpus_and_dtype():
    assert tu.list_gpus() == list(range(mx.num_gpus()))
    assert tu.default_dtype() == np.float32
