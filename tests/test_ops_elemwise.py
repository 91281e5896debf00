"""Elementwise operators: unary maths, binary with broadcasting, with scalars, and their
dtype rules (checked against MXNet 1.9.1's behaviour)."""
import math
import os

import numpy as np
import pytest
import torch

import neomx as mx
from neomx import autograd, nd
from opcheck import check_op

RNG = np.random.RandomState(7)


def _away_from_integers(shape, low, high, rng=RNG):
    """Values in [low, high) at least 0.1 from an integer or a half (rounding ops)."""
    x = rng.uniform(low, high, size=shape)
    return np.floor(x * 2) / 2 + 0.1 + 0.3 * rng.uniform(size=shape)


_DOMAINS = {
    'any': lambda: RNG.uniform(-2, 2, size=(2, 3)),
    'pos': lambda: RNG.uniform(0.2, 3, size=(2, 3)),
    'unit': lambda: RNG.uniform(-0.9, 0.9, size=(2, 3)),
    'gt1': lambda: RNG.uniform(1.2, 3, size=(2, 3)),
    'small': lambda: RNG.uniform(-1.2, 1.2, size=(2, 3)),
    'steps': lambda: _away_from_integers((2, 3), -3, 3),
    'nonzero': lambda: np.array([[-1.5, -0.6, 0.4], [0.9, 1.7, -2.2]]),
}


def _vec(f):
    return np.vectorize(f, otypes=[np.float64])


def _torch(f):
    return lambda x: f(torch.from_numpy(np.asarray(x, dtype=np.float64))).numpy()


UNARY = [
    ('abs', np.abs, 'nonzero'), ('sign', np.sign, 'nonzero'), ('negative', np.negative, 'any'),
    ('exp', np.exp, 'any'), ('expm1', np.expm1, 'any'), ('log', np.log, 'pos'),
    ('log1p', np.log1p, 'pos'), ('log2', np.log2, 'pos'), ('log10', np.log10, 'pos'),
    ('sqrt', np.sqrt, 'pos'), ('rsqrt', lambda x: 1 / np.sqrt(x), 'pos'),
    ('cbrt', np.cbrt, 'nonzero'), ('rcbrt', lambda x: 1 / np.cbrt(x), 'pos'),
    ('square', np.square, 'any'), ('reciprocal', np.reciprocal, 'pos'),
    ('sin', np.sin, 'any'), ('cos', np.cos, 'any'), ('tan', np.tan, 'small'),
    ('arcsin', np.arcsin, 'unit'), ('arccos', np.arccos, 'unit'), ('arctan', np.arctan, 'any'),
    ('sinh', np.sinh, 'any'), ('cosh', np.cosh, 'any'), ('tanh', np.tanh, 'any'),
    ('arcsinh', np.arcsinh, 'any'), ('arccosh', np.arccosh, 'gt1'),
    ('arctanh', np.arctanh, 'unit'), ('degrees', np.degrees, 'any'),
    ('radians', np.radians, 'any'), ('floor', np.floor, 'steps'), ('ceil', np.ceil, 'steps'),
    ('round', lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), 'steps'),
    ('rint', np.rint, 'steps'), ('fix', np.fix, 'steps'), ('trunc', np.trunc, 'steps'),
    ('relu', lambda x: np.maximum(x, 0), 'nonzero'),
    ('sigmoid', lambda x: 1 / (1 + np.exp(-x)), 'any'),
    ('softsign', lambda x: x / (1 + np.abs(x)), 'any'),
    ('erf', _vec(math.erf), 'any'), ('erfinv', _torch(torch.erfinv), 'unit'),
    ('gamma', _vec(math.gamma), 'pos'), ('gammaln', _vec(math.lgamma), 'pos'),
    ('softrelu', lambda x: np.log1p(np.exp(x)), 'any'),
    ('log_sigmoid', lambda x: -np.log1p(np.exp(-x)), 'any'),
    ('mish', lambda x: x * np.tanh(np.log1p(np.exp(x))), 'any'),
]


@pytest.mark.parametrize('name,ref,domain', UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, ref, domain, ctx):
    f = getattr(nd, name)
    x = _DOMAINS[domain]()
    check_op(f, ref, [x], ctx, rtol=1e-4, atol=1e-5)
    # The fluent method is the same operator.
    a = nd.array(x, ctx=ctx)
    if hasattr(a, name):
        np.testing.assert_allclose(getattr(a, name)().asnumpy(), f(a).asnumpy())


def test_rounding_ties_follow_mxnet():
    x = nd.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.6])
    # round: halves away from zero; rint: halves down (MXNet 1.9.1's results).
    assert nd.round(x).asnumpy().tolist() == [1, 2, 3, -1, -2, -3, 1]
    assert nd.rint(x).asnumpy().tolist() == [0, 1, 2, -1, -2, -3, 1]
    assert nd.fix(x).asnumpy().tolist() == [0, 1, 2, 0, -1, -2, 0]


def test_gamma_negative_and_poles():
    g = nd.gamma(nd.array([-2.5, -1.5, -0.5, -1.0, 0.0, 5.0])).asnumpy()
    np.testing.assert_allclose(g[:3], [math.gamma(-2.5), math.gamma(-1.5), math.gamma(-0.5)],
                               rtol=1e-5)
    assert np.isnan(g[3]) and g[4] == np.inf           # MXNet 1.9.1: nan at -1, inf at 0
    assert g[5] == pytest.approx(24.0, rel=1e-6)


def test_gradients_at_poles_are_mxnets():
    # (checked against MXNet 1.9.1) gamma, gammaln and cbrt at 0 and the negative integers;
    # elementwise maximum and minimum give a tie, and nothing at a NaN, to one side
    x = nd.array([0.0, -1.0, 2.5])
    for name, want in (('gamma', [np.inf, np.nan, 1.3293406 * 0.7031568]),
                       ('gammaln', [np.inf, np.inf, 0.7031568]),
                       ('cbrt', [np.inf, 1 / 3, 1 / (3 * 2.5 ** (2 / 3))])):
        x.attach_grad()
        with autograd.record():
            y = getattr(nd, name)(x)
        y.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5)
    a, b = nd.array([np.nan, 1.0, 2.0, 3.0]), nd.array([1.0, np.nan, 2.0, 1.0])
    for name, to_a, to_b in (('_maximum', [0, 0, 1, 1], [0, 0, 0, 0]),
                             ('_minimum', [0, 0, 1, 0], [0, 0, 0, 1])):
        a.attach_grad()
        b.attach_grad()
        with autograd.record():
            y = getattr(nd._internal, name)(a, b)
        y.backward()
        assert a.grad.asnumpy().tolist() == to_a and b.grad.asnumpy().tolist() == to_b


def test_unary_on_integers_truncates_like_mxnet():
    i = nd.array([[1, 2, 3], [4, 5, 6]], dtype='int32')
    for name, expected in [('exp', [2, 7, 20, 54, 148, 403]), ('sqrt', [1, 1, 1, 2, 2, 2]),
                           ('sigmoid', [0] * 6), ('reciprocal', [1, 0, 0, 0, 0, 0]),
                           ('gamma', [1, 1, 2, 6, 24, 120]), ('square', [1, 4, 9, 16, 25, 36]),
                           ('negative', [-1, -2, -3, -4, -5, -6])]:
        out = getattr(nd, name)(i)
        assert out.dtype == np.int32, name
        assert out.asnumpy().ravel().tolist() == expected, name


def test_logical_not():
    x = nd.array([0.0, 2.0, -1.0])
    assert nd.logical_not(x).asnumpy().tolist() == [1, 0, 0]
    assert nd.logical_not(x.astype('int32')).dtype == np.int32


def _ab():
    a = RNG.uniform(0.5, 2.0, size=(2, 3))
    b = RNG.uniform(0.5, 2.0, size=(1, 3))
    return a, b


BINARY = [
    ('add', np.add), ('sub', np.subtract), ('mul', np.multiply), ('div', np.divide),
    ('power', np.power), ('maximum', np.maximum), ('minimum', np.minimum),
    ('hypot', np.hypot),
]


@pytest.mark.parametrize('name,ref', BINARY, ids=[b[0] for b in BINARY])
def test_broadcast_binary(name, ref, ctx):
    a, b = _ab()
    b = b + 0.05   # no ties for maximum/minimum
    check_op(getattr(nd, 'broadcast_' + name), ref, [a, b], ctx)
    check_op(getattr(nd, 'broadcast_' + name), ref, [a, a[:, :1] + 0.03], ctx)


def test_broadcast_mod(ctx):
    a = np.array([[5.3, -5.3, 2.2], [7.7, -1.1, 3.4]])
    b = np.array([[3.0, 3.0, -1.5]])
    check_op(nd.broadcast_mod, np.mod, [a, b], ctx)


@pytest.mark.parametrize('name,ref', [('elemwise_add', np.add), ('elemwise_sub', np.subtract),
                                      ('elemwise_mul', np.multiply),
                                      ('elemwise_div', np.divide)])
def test_elemwise_binary(name, ref, ctx):
    a, _ = _ab()
    b = RNG.uniform(0.5, 2.0, size=a.shape)
    check_op(getattr(nd, name), ref, [a, b], ctx)


def test_elemwise_needs_equal_shapes():
    with pytest.raises(mx.MXNetError, match=r'elemwise_add.*\(2, 3\).*\(3,\)'):
        nd.elemwise_add(nd.ones((2, 3)), nd.ones((3,)))


COMPARE = [('equal', np.equal), ('not_equal', np.not_equal), ('greater', np.greater),
           ('greater_equal', np.greater_equal), ('lesser', np.less),
           ('lesser_equal', np.less_equal), ('logical_and', np.logical_and),
           ('logical_or', np.logical_or), ('logical_xor', np.logical_xor)]


@pytest.mark.parametrize('name,ref', COMPARE, ids=[c[0] for c in COMPARE])
def test_broadcast_compare(name, ref, ctx):
    a = np.array([[1.0, 0.0, 3.0], [2.0, 2.0, -1.0]])
    b = np.array([[1.0, 0.0, 2.0]])
    out = check_op(getattr(nd, 'broadcast_' + name), lambda x, y: ref(x, y).astype(x.dtype),
                   [a, b], ctx, grad=False)
    assert out[0].dtype == np.float32
    # Comparisons return the input's dtype, integers included.
    i = getattr(nd, 'broadcast_' + name)(nd.array(a, dtype='int32'), nd.array(b, dtype='int32'))
    assert i.dtype == np.int32
    assert i.asnumpy().tolist() == ref(a, b).astype(np.int32).tolist()


SCALAR = [
    ('+', lambda x, s: x + s), ('-', lambda x, s: x - s), ('*', lambda x, s: x * s),
    ('/', lambda x, s: x / s), ('**', lambda x, s: x ** s), ('%', lambda x, s: x % s),
]


@pytest.mark.parametrize('op,f', SCALAR, ids=[s[0] for s in SCALAR])
def test_scalar_operators(op, f, ctx):
    x = RNG.uniform(0.5, 2.0, size=(2, 3)) + 0.01
    check_op(lambda a: f(a, 1.7), lambda a: f(a, np.float32(1.7)), [x], ctx)
    # The reflected form: scalar on the left.
    check_op(lambda a: f(2.5, a), lambda a: f(np.float32(2.5), a), [x], ctx,
             grad=op != '%')


def test_scalar_ops_by_name(ctx):
    x = np.array([[0.5, -1.5, 2.0], [3.5, -0.2, 1.0]])
    for name, ref in [('_plus_scalar', lambda a: a + 2), ('_minus_scalar', lambda a: a - 2),
                      ('_rminus_scalar', lambda a: 2 - a), ('_mul_scalar', lambda a: a * 2),
                      ('_div_scalar', lambda a: a / 2), ('_rdiv_scalar', lambda a: 2 / a),
                      ('_maximum_scalar', lambda a: np.maximum(a, 0.7)),
                      ('_minimum_scalar', lambda a: np.minimum(a, 0.7)),
                      ('_power_scalar', lambda a: a ** 2)]:
        scalar = 0.7 if 'imum' in name else 2
        f = nd.ndarray._op(name)
        check_op(lambda a: f(a, scalar=scalar), ref, [x], ctx)


def test_comparison_operators_return_input_dtype():
    x = nd.array([[1.5, -2.5, 3], [0.5, 4, -1]])
    assert (x > 1).asnumpy().tolist() == [[1, 0, 1], [0, 1, 0]]
    assert (x == 1.5).dtype == np.float32
    assert (1 < x).asnumpy().tolist() == (x > 1).asnumpy().tolist()
    i = nd.array([1, 2, 3], dtype='int32')
    assert (i > 1.5).dtype == np.int32
    # The scalar is cast to the array's dtype first: 1.5 becomes 1 for an int32 array.
    assert (i > 1.5).asnumpy().tolist() == [0, 1, 1]
    assert (x != 1).asnumpy().tolist() == [[1, 1, 1], [1, 1, 1]]


def test_scalar_takes_the_array_dtype():
    i = nd.array([[1, 2, 3], [4, 5, 6]], dtype='int32')
    assert (i * 1.7).asnumpy().tolist() == [[1, 2, 3], [4, 5, 6]]
    assert (i + 1.7).dtype == np.int32
    assert (i / 2).asnumpy().tolist() == [[0, 1, 1], [2, 2, 3]]
    assert (-i / 2).asnumpy().tolist() == [[0, -1, -1], [-2, -2, -3]]
    assert (i - 1.5).asnumpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert (1.5 - i).asnumpy().tolist() == [[0, -1, -2], [-3, -4, -5]]
    assert (i ** 2).asnumpy().tolist() == [[1, 4, 9], [16, 25, 36]]
    u8 = nd.array([1, 2, 250], dtype='uint8')
    assert (u8 + 10).asnumpy().tolist() == [11, 12, 4]   # wraps as uint8


def test_float_scalar_is_rounded_to_the_array_dtype_first():
    # float16 x * 0.1 computes with 0.1 rounded to float16 (MXNet's rule; the differential
    # tests compare the bits), on the hot path, the named operator and while recording alike.
    x = nd.array(np.linspace(-3, 3, 64), dtype='float16')
    h = np.float16(0.1)
    want = (x.asnumpy().astype(np.float32) * np.float32(h)).astype(np.float16)
    np.testing.assert_array_equal((x * 0.1).asnumpy(), want)
    np.testing.assert_array_equal(nd._internal._mul_scalar(x, scalar=0.1).asnumpy(), want)
    with mx.autograd.record():
        np.testing.assert_array_equal((x * 0.1).asnumpy(), want)
    # Signed zeros and NaN stay what they are, though cached as tensors.
    one = nd.ones((2,))
    assert np.signbit((one * -0.0).asnumpy()).all()
    assert not np.signbit((one * 0.0).asnumpy()).any()
    assert np.isnan((one + float('nan')).asnumpy()).all()
    assert (one * 3).asnumpy().tolist() == [3, 3]


_ARITH = [lambda x, o: x + o, lambda x, o: o + x, lambda x, o: x - o, lambda x, o: o - x,
          lambda x, o: x * o, lambda x, o: o * x, lambda x, o: x / o, lambda x, o: o / x,
          lambda x, o: x % o, lambda x, o: x ** o, lambda x, o: x > o, lambda x, o: x <= o]


@pytest.mark.parametrize('dtype', ['float32', 'float16', 'float64', 'int32'])
def test_arithmetic_gives_the_same_bits_on_every_call(dtype):
    # The first call of a kind infers its spec, the second remembers how it runs, later ones
    # take the hot path (one dictionary, run at once): all must agree, with NumPy as well.
    x = nd.array([[1.5, -2.0, 3.25], [2.5, 4.0, -1.0]], dtype=dtype)
    y = nd.array([[2.0, 1.5, -1.5], [4.0, 1.0, 2.5]], dtype=dtype)
    for i, f in enumerate(_ARITH):
        for other in (3, -2.5, 0.1, -0.0, float('nan'), y, y[1]):
            if dtype == 'int32' and (isinstance(other, float) and other != other
                                     or i in (6, 8) and not isinstance(other, nd.NDArray)
                                     and int(other) == 0):
                continue      # nan has no int32 value; 0.1 becomes 0, and x / 0 raises
            if i in (3, 7) and isinstance(other, nd.NDArray):
                continue      # only a number reaches the reflected methods
            # (x % 0 is 0 in MXNet, nan in NumPy: compared between calls only.)
            got = [f(x, other).asnumpy() for _ in range(4)]
            for g in got[1:]:
                np.testing.assert_array_equal(g, got[0], err_msg='%d %r' % (i, other))
                assert g.dtype == got[0].dtype
            if dtype != 'int32' and not isinstance(other, nd.NDArray) and not (i == 8 and not other):
                o = np.array(other, dtype=dtype)
                with np.errstate(all='ignore'):     # NumPy's x / 0 gives inf as we do
                    want = np.asarray(f(x.asnumpy(), o)).astype(dtype)
                np.testing.assert_allclose(got[-1], want, rtol=1e-3, equal_nan=True,
                                           err_msg='%d %r' % (i, other))
    if dtype != 'int32':
        for _ in range(3):
            np.testing.assert_array_equal(np.signbit((x * -0.0).asnumpy()),
                                          ~np.signbit((x * 0.0).asnumpy()))


def test_hot_path_waits_for_pending_writes_and_keeps_errors():
    x = nd.ones((2, 3))
    for _ in range(3):
        (x + 1).wait_to_read()
        nd.relu(x).wait_to_read()
    big = nd.ones((300, 300))
    for _ in range(3):
        # A queued write into x, then the tiny operations that read it: they see its result.
        nd.dot(big, big, out=big)
        x[:] = big[:2, :3]
        assert (x + 1).asnumpy().tolist() == [[301.0] * 3] * 2
        assert nd.relu(x - 1).asnumpy().tolist() == [[299.0] * 3] * 2
        assert (x * nd.ones((2, 3))).asnumpy().tolist() == [[300.0] * 3] * 2
        big[:] = 1
    # An array whose producing operation failed passes the error on through the hot path.
    bad = nd.ones((2,), dtype='int32') / 0
    for _ in range(3):
        with pytest.raises(mx.MXNetError):
            (bad + 1).wait_to_read()
    assert (x + 1).sum().asscalar() == 6 * 301


def test_binary_ops_on_different_dtypes_raise_at_push_time():
    a = nd.ones((2, 3))
    b = nd.ones((2, 3), dtype='int32')
    with pytest.raises(mx.MXNetError) as info:
        a + b
    msg = str(info.value)
    assert 'broadcast_add' in msg and 'float32' in msg and 'int32' in msg
    assert os.path.basename(__file__) in msg     # the user's line


def test_broadcast_shape_error_names_operator_shapes_and_line():
    with pytest.raises(mx.MXNetError) as info:
        nd.ones((2, 3)) * nd.ones((3, 2))
    msg = str(info.value)
    assert 'broadcast_mul' in msg and '(2, 3)' in msg and '(3, 2)' in msg
    assert os.path.basename(__file__) in msg


def test_mod_semantics_match_mxnet():
    a = nd.array([5, -5, 5, -5, 0, 5.5])
    b = nd.array([3, 3, -3, -3, 3, 0])
    assert (a % b).asnumpy().tolist() == [2, 1, -1, -2, 0, 0]      # 0 for a zero divisor
    assert (a % 0).asnumpy().tolist() == [0] * 6
    assert (7 % b).asnumpy().tolist() == [1, 1, -2, -2, 1, 0]
    ia, ib = a.astype('int32'), nd.array([3, 3, -3, -3, 3, 1], dtype='int32')
    assert (ia % ib).asnumpy().tolist() == [2, 1, -1, -2, 0, 0]
    assert (ia % 0).asnumpy().tolist() == [0] * 6


def test_helpers_accept_scalars_on_either_side():
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    assert nd.maximum(x, 2.5).asnumpy().tolist() == [[2.5, 2.5], [3, 4]]
    assert nd.maximum(2.5, x).asnumpy().tolist() == [[2.5, 2.5], [3, 4]]
    assert nd.subtract(1, x).asnumpy().tolist() == [[0, -1], [-2, -3]]
    np.testing.assert_allclose(nd.divide(2, x).asnumpy(), [[2, 1], [2 / 3, 0.5]], rtol=1e-6)
    assert nd.power(2, x).asnumpy().tolist() == [[2, 4], [8, 16]]
    assert nd.greater(2, x).asnumpy().tolist() == [[1, 0], [0, 0]]
    assert nd.lesser_equal(x, nd.array([[1, 1]])).asnumpy().tolist() == [[1, 0], [0, 0]]
    assert nd.logical_and(x, 0).asnumpy().tolist() == [[0, 0], [0, 0]]
    assert nd.logical_or(x * 0, 1).asnumpy().tolist() == [[1, 1], [1, 1]]
    assert nd.logical_xor(x - 1, 1).asnumpy().tolist() == [[1, 0], [0, 0]]
    # two numbers give a number, as MXNet's helpers do
    assert nd.add(1, 2) == 3 and nd.power(0.5, 2) == 0.25 and nd.greater(2, 1) == 1
    with pytest.raises(TypeError, match='an NDArray or a number'):
        nd.add('a', 2)


def test_add_n(ctx):
    a, b, c = (RNG.randn(2, 3) for _ in range(3))
    check_op(lambda x, y, z: nd.add_n(x, y, z), lambda x, y, z: x + y + z, [a, b, c], ctx)
    check_op(lambda x, y: nd.ElementWiseSum(x, y), np.add, [a, b], ctx)
    with pytest.raises(mx.MXNetError, match='add_n'):
        nd.add_n(nd.ones((2,)), nd.ones((3,)))


def test_clip(ctx):
    x = np.array([[-2.0, -0.4, 0.3], [0.8, 1.6, 3.0]])
    check_op(lambda a: nd.clip(a, 0, 1), lambda a: np.clip(a, 0, 1), [x], ctx)
    check_op(lambda a: nd.clip(a, a_min=-1, a_max=2), lambda a: np.clip(a, -1, 2), [x], ctx)
    check_op(lambda a: a.clip(0, 2), lambda a: np.clip(a, 0, 2), [x], ctx)
    i = nd.array([1, 2, 3, 4, 5], dtype='int32')
    assert nd.clip(i, 1.5, 4.5).asnumpy().tolist() == [1, 2, 3, 4, 4]


def test_smooth_l1_and_hard_sigmoid(ctx):
    x = np.array([[-2.0, -0.4, 0.3], [0.8, 1.6, 3.0]])

    def smooth_l1(a, s=1.0):
        return np.where(np.abs(a) < 1 / s ** 2, 0.5 * (s * a) ** 2, np.abs(a) - 0.5 / s ** 2)
    check_op(lambda a: nd.smooth_l1(a, 1), smooth_l1, [x], ctx)
    check_op(lambda a: nd.smooth_l1(a, scalar=2.0), lambda a: smooth_l1(a, 2.0), [x], ctx)
    check_op(nd.hard_sigmoid, lambda a: np.clip(0.2 * a + 0.5, 0, 1), [x], ctx)


def test_like_identity_and_blockgrad(ctx):
    x = RNG.randn(2, 3)
    check_op(nd.zeros_like, np.zeros_like, [x], ctx)
    check_op(nd.ones_like, np.ones_like, [x], ctx)
    check_op(nd.identity, lambda a: a, [x], ctx)
    # BlockGrad passes values and stops the gradient.
    check_op(lambda a: nd.BlockGrad(a) * a, lambda a: a * a, [x], ctx, grad=False)
    a = nd.array(x, ctx=ctx)
    a.attach_grad()
    with mx.autograd.record():
        y = (nd.stop_gradient(a * 2) * a).sum()
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), 2 * x, rtol=1e-6)


def test_cast(ctx):
    x = np.array([[1.7, -2.5, 3.2]])
    out = check_op(lambda a: nd.Cast(a, dtype='float64'), lambda a: a.astype(np.float64), [x],
                   ctx)
    assert out[0].dtype == np.float64
    assert nd.cast(nd.array(x), 'int32').asnumpy().tolist() == [[1, -2, 3]]
    assert nd.array(x).astype('float16').dtype == np.float16
    assert nd.array(x).astype(np.uint8, copy=False).dtype == np.uint8


@pytest.mark.parametrize('name,ref', [
    ('_maximum', np.maximum), ('_minimum', np.minimum), ('_power', np.power),
    ('_mod', np.mod), ('_hypot', np.hypot), ('_plus', np.add), ('_minus', np.subtract),
    ('_mul', np.multiply), ('_div', np.divide),
])
def test_same_shape_binary_by_internal_name(name, ref, ctx):
    a = RNG.uniform(0.5, 2.0, size=(2, 3))
    b = RNG.uniform(0.6, 2.1, size=(2, 3))
    check_op(nd.ndarray._op(name), ref, [a, b], ctx)
    with pytest.raises(mx.MXNetError, match='differ'):
        nd.ndarray._op(name)(nd.ones((2, 3)), nd.ones((1, 3)))


@pytest.mark.parametrize('name,ref', [c for c in COMPARE], ids=[c[0] for c in COMPARE])
def test_same_shape_compare_and_scalar_forms(name, ref):
    a = np.array([[1.0, 0.0, 3.0], [2.0, 2.0, -1.0]])
    b = np.array([[1.0, 0.0, 2.0], [0.0, 2.0, 5.0]])
    out = nd.ndarray._op('_' + name)(nd.array(a), nd.array(b))
    assert out.asnumpy().tolist() == ref(a, b).astype(np.float32).tolist()
    s = nd.ndarray._op('_%s_scalar' % name)(nd.array(a), scalar=2.0)
    assert s.asnumpy().tolist() == ref(a, 2.0).astype(np.float32).tolist()


def test_hypot_rpower_and_bernoulli_scalars(ctx):
    x = RNG.uniform(0.5, 2.0, size=(2, 3))
    check_op(lambda a: nd.ndarray._op('_hypot_scalar')(a, scalar=3.0),
             lambda a: np.hypot(a, 3.0), [x], ctx)
    check_op(lambda a: nd.ndarray._op('_rpower_scalar')(a, scalar=2.0), lambda a: 2.0 ** a,
             [x], ctx)
    mx.random.seed(0)
    mask = nd.ndarray._op('_bernoulli_like')(nd.ones((1000,), ctx=ctx), p=0.3).asnumpy()
    assert set(np.unique(mask)) <= {0.0, 1.0} and abs(mask.mean() - 0.3) < 0.06


def test_amp_casts(ctx):
    x = RNG.randn(2, 3)
    out = check_op(lambda a: nd.amp_cast(a, dtype='float64'), lambda a: a, [x], ctx)
    assert out[0].dtype == np.float64
    assert nd.amp_cast(nd.ones(2, dtype='int32'), dtype='float16').dtype == np.int32
    a, b, c = nd.amp_multicast(nd.ones(2, dtype='float16'), nd.ones(2), nd.ones(2, dtype='int32'),
                               num_outputs=3)
    assert (a.dtype, b.dtype, c.dtype) == (np.float32, np.float32, np.int32)
    a, b = nd.amp_multicast(nd.ones(2, dtype='float16'), nd.ones(2), num_outputs=2,
                            cast_narrow=True)
    assert a.dtype == b.dtype == np.float16


def test_operators_without_attributes_ignore_keyword_arguments():
    """As MXNet's operators without a parameter struct (MXNet's own loss test passes axis= to
    broadcast_maximum); an operator with attributes still names an unknown one."""
    out = nd.broadcast_maximum(nd.array([0]), nd.array([[1], [-2]]), axis=1)
    assert out.asnumpy().tolist() == [[1], [0]]
    with pytest.raises(mx.MXNetError, match="unknown attribute 'axis'"):
        nd.FullyConnected(nd.ones((1, 2)), nd.ones((3, 2)), nd.ones((3,)), num_hidden=3, axis=1)
