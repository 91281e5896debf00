"""mx.np operators: the rules MXNet 1.9.1's NumPy interface follows (checked against NumPy
where they agree), imperatively, under autograd and hybridized."""
import numpy as onp
import pytest

import neomx as mx
from neomx import autograd, gluon, np, npx


class _Fn(gluon.HybridBlock):
    """A block applying ``fn(F.np-or-F.npx, *inputs)``, for checking hybridized runs."""

    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def hybrid_forward(self, F, *xs):
        return self._fn(F, *xs)


def _both(fn, *inputs):
    """(imperative result, hybridized result) of ``fn`` on ``inputs``."""
    a = _Fn(fn)(*inputs)
    net = _Fn(fn)
    net.hybridize()
    return a, net(*inputs)


def test_ufunc_keywords_and_out_dtype():
    x = np.ones((2, 2))
    with pytest.raises(NotImplementedError):
        np.exp(x, where=False)
    with pytest.raises(NotImplementedError):
        np.add(x, x, order='C')
    with pytest.raises(TypeError):
        np.add(x, x, casting='mxnet')
    with pytest.raises(TypeError):
        np.isnan(x, out=np.empty_like(x))       # a bool result into a float32 out=
    y = np.zeros((2, 2), dtype='int32')
    y += 1.7                                    # in place: cast into the array
    assert y.dtype == onp.int32 and y.tolist() == [[1, 1], [1, 1]]


def test_reduction_rules():
    a = np.arange(6).reshape(2, 3)
    assert np.all(a, axis=()).shape == (2, 3)          # no axes: elementwise
    assert np.argmax(np.array(3.0), axis=0).shape == ()
    with pytest.raises(mx.MXNetError):
        np.argmin(np.array(3.0), axis=1)
    with pytest.raises(mx.MXNetError):
        np.ones((2, 0)).max()                           # no identity for an empty max
    i8 = np.array([[100, 100], [1, 2]], dtype='int8')
    # NumPy sums in the integer dtype (wrapping), then divides
    assert np.mean(i8, axis=1, dtype='int8').tolist() == onp.mean(
        i8.asnumpy(), axis=1, dtype='int8').astype('int8').tolist()
    v = np.var(np.ones((3,)), axis=(), ddof=1)
    assert bool(np.isnan(v).all())                      # 0 / 0, as NumPy
    h = np.array(onp.random.uniform(-1, 1, 300).astype('float16'))
    assert abs(float(h.sum(dtype='float16')) - float(h.asnumpy().astype('float32').sum())) < 0.1


def test_integer_and_mixed_gradients():
    x = np.array([[1.5, -2.0]], dtype='float16')
    x.attach_grad()
    with autograd.record():
        y = np.mean(x, axis=1, dtype='int32')
    y.backward()
    assert x.grad.tolist() == [[0.5, 0.5]]               # through the integer result
    f, i = np.ones((2,)), np.array([1, 2], dtype='int32')
    f.attach_grad()
    i.attach_grad()
    with autograd.record():
        z = f + i
    z.backward()
    assert f.grad.tolist() == [1.0, 1.0] and i.grad.tolist() == [1, 1]
    a = np.array([5, 7], dtype='int32')
    a.attach_grad()
    with autograd.record():
        m = np.mod(a, 3)
    m.backward()
    assert a.grad.tolist() == [0, 0]                    # MXNet: integer mod has no gradient


def test_shape_functions_as_mxnet():
    assert np.broadcast_to(np.ones((5,)), (3, 4, -2)).shape == (3, 4, 5)   # -2 keeps a dim
    d = np.delete(np.arange(5), [0, 9, -1])             # out of [0, n): ignored
    assert d.tolist() == [1.0, 2.0, 3.0, 4.0]
    p = np.pad(np.arange(2), (3, 3), mode='reflect')   # wider than the array
    assert p.tolist() == onp.pad(onp.arange(2.0), (3, 3), mode='reflect').tolist()
    assert np.squeeze(np.array(1.0), axis=-1).shape == ()
    r = np.roll(np.arange(8).reshape(2, 4), 1, axis=(0, 1))
    assert r.tolist() == onp.roll(onp.arange(8.0).reshape(2, 4), 1, axis=(0, 1)).tolist()
    with pytest.raises(ValueError):
        np.ones((2, 3, 4)).transpose((0, 0, 1))
    with pytest.raises(mx.MXNetError):
        np.eye(-1)
    assert np.dot(np.ones((3, 4)), np.ones((5, 4, 3))).shape == (3, 5, 3)
    assert npx.slice(np.arange(10), begin=(1,), end=(8,), step=None).shape == (7,)
    x = np.zeros((13, 21))
    assert np.shares_memory(x[0, 2:5], x[0, 3:4]) and not np.may_share_memory(x[0], x[1])


def test_linalg_and_random_rules():
    x = np.arange(24).reshape(2, 3, 4)
    assert float(np.linalg.norm(x, ord='inf', axis=(1, 2)).max()) == onp.linalg.norm(
        x.asnumpy(), ord=onp.inf, axis=(1, 2)).max()
    a = np.ones((1, 1, 1))
    assert np.linalg.tensorsolve(a, np.ones((1, 1, 1))).shape == (1, 1, 1)     # MXNet's rule
    m = np.random.multivariate_normal(np.zeros((2,), dtype='float16'),
                                      np.eye(2, dtype='float16'))
    assert m.dtype == onp.float16
    for bad in (-1, 0):
        with pytest.raises(ValueError):
            np.random.weibull(a=bad).asnumpy()
    with pytest.raises(ValueError):
        np.random.gamma(np.array(1.0), np.array(-1.0)).asnumpy()     # raised when read
    assert np.random.uniform(size=(2,)).shape == (2,)                # the generator goes on


def test_hybridized_like_imperative():
    a = np.array([[1.0, onp.nan], [onp.inf, 2.0]])
    x, y = _both(lambda F, v: F.np.nan_to_num(v, False), a.copy())
    assert x.tolist() == y.tolist()
    sym = mx.sym.var('a').as_np_ndarray()
    out = mx.sym.np.tensordot(sym, sym, 1)
    assert out.infer_shape(a=(3, 3))[1] == [(3, 3)]
    data, mask = np.zeros((2, 3)), np.array([True, False, True], dtype='bool')
    r = np.array(mx.np._internal.boolean_mask_assign_scalar(data, mask, 5.0, start_axis=1))
    assert r.tolist() == [[5.0, 0.0, 5.0], [5.0, 0.0, 5.0]]


def test_value_dependent_block_runs_imperatively():
    net = _Fn(lambda F, v: F.np.unique(v))
    net.hybridize()
    with pytest.warns(UserWarning, match='runs imperatively'):
        assert net(np.array([3.0, 1.0, 3.0])).tolist() == [1.0, 3.0]
    assert net(np.array([2.0, 2.0])).tolist() == [2.0]


def test_unique_inverse_has_the_input_shape():
    _, inv = np.unique(np.array([[1, 2], [2, 1]]), return_inverse=True)
    assert inv.shape == (2, 2)          # NumPy 2


def test_operator_value_errors_keep_their_type():
    with pytest.raises(ValueError, match='bad'):
        npx.constraint_check(np.zeros(3, dtype='bool'), 'bad').asnumpy()


def test_linspace_integer_dtype_rounds_down():
    # NumPy 2 floors integer linspace values (NumPy 1.x and MXNet 1.9 truncated towards 0)
    for endpoint in (False, True):
        want = onp.linspace(-2, 4, 30, endpoint=endpoint, dtype='int32')
        assert np.linspace(-2, 4, 30, endpoint=endpoint, dtype='int32').tolist() == want.tolist()
        imperative, hybrid = _both(lambda F, x: x + F.np.linspace(-2, 4, 30, endpoint, dtype='int32'),
                                   np.zeros((), dtype='int32'))
        assert imperative.tolist() == hybrid.tolist() == want.tolist()


def test_linspace_bad_counts_raise_mxnet_and_numpy_errors():
    with pytest.raises(mx.MXNetError):
        np.linspace(0, 10, -1)
    with pytest.raises(ValueError):
        np.linspace(0, 10, -1)
    with pytest.raises(mx.MXNetError):
        np.linspace(0, 1, 2.5)
    with pytest.raises(TypeError):
        np.linspace(0, 1, 2.5)


def test_bitwise_shifts():
    a = onp.array([1, -3, 100, -128, 7], dtype=onp.int8)
    b = onp.array([2, 1, 1, 3, 0], dtype=onp.int8)
    left = mx.nd._internal._npi_bitwise_left_shift(mx.nd.array(a, dtype='int8'),
                                                    mx.nd.array(b, dtype='int8'))
    right = mx.nd._internal._npi_bitwise_right_shift(mx.nd.array(a, dtype='int8'),
                                                     mx.nd.array(b, dtype='int8'))
    assert left.asnumpy().tolist() == onp.left_shift(a, b).tolist()       # wraps in 8 bits
    assert right.asnumpy().tolist() == onp.right_shift(a, b).tolist()     # arithmetic
    # counts outside [0, 8): 0, or -1 for a negative value shifted right (ONNX's BitShift)
    far = mx.nd.array(onp.array([8, -1, 9, 8, 100], dtype=onp.int8), dtype='int8')
    x = mx.nd.array(a, dtype='int8')
    assert mx.nd._internal._npi_bitwise_left_shift(x, far).asnumpy().tolist() == [0] * 5
    assert mx.nd._internal._npi_bitwise_right_shift(x, far).asnumpy().tolist() == \
        [0, -1, 0, -1, 0]
