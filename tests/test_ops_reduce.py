"""Reductions: axis / keepdims / exclude, MXNet's (1,) for a full reduction, dtypes,
gradients, and errors; moments and softmin."""
import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx.test_utils import np_reduce
from opcheck import check_op

RNG = np.random.RandomState(3)
X = RNG.uniform(-2, 2, size=(2, 3, 4))


def _np_full(r):
    r = np.asarray(r)
    return r.reshape(1) if r.ndim == 0 else r


def _ref(f, axis=None, keepdims=False, exclude=False):
    def ref(x):
        ax = axis
        if exclude:
            ax = tuple(k for k in range(x.ndim) if k not in np.atleast_1d(axis) % x.ndim)
        if ax == ():
            ax = None
        return _np_full(np_reduce(x, ax, keepdims, f))
    return ref


AXES = [dict(), dict(axis=1), dict(axis=-1), dict(axis=(0, 2)), dict(axis=1, keepdims=True),
        dict(axis=(1,), exclude=True), dict(keepdims=True), dict(axis=())]

REDUCERS = [('sum', np.sum), ('mean', np.mean), ('prod', np.prod), ('max', np.max),
            ('min', np.min), ('nansum', np.nansum), ('nanprod', np.nanprod)]


@pytest.mark.parametrize('name,f', REDUCERS, ids=[r[0] for r in REDUCERS])
@pytest.mark.parametrize('kw', AXES, ids=[str(a) for a in AXES])
def test_reduce(name, f, kw, ctx):
    x = X[:, :2, :3]    # small: the numeric gradient runs the op twice per element
    check_op(lambda a: getattr(nd, name)(a, **kw), _ref(f, **kw), [x], ctx)


def test_full_reduction_has_shape_1_and_positional_axis():
    x = nd.array(X)
    assert nd.sum(x).shape == (1,)
    assert nd.sum(x, 1).shape == (2, 4)            # positional axis
    assert x.sum(1).shape == (2, 4)
    assert x.mean(axis=0, keepdims=1).shape == (1, 3, 4)
    assert nd.sum(x, axis=(), exclude=True).shape == (1,)
    assert nd.sum(x, axis=(0, 1, 2), exclude=True).shape == (2, 3, 4)   # nothing reduced
    assert nd.max(x, keepdims=True).shape == (1, 1, 1)
    np.testing.assert_allclose(nd.sum_axis(x, axis=1).asnumpy(), X.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(nd.max_axis(x, axis=2).asnumpy(), X.max(axis=2), rtol=1e-6)


def test_integer_reductions_keep_the_dtype():
    i = nd.array(np.arange(24).reshape(2, 3, 4), dtype='int32')
    assert nd.sum(i, axis=1).dtype == np.int32
    assert nd.mean(i, axis=0).asnumpy().tolist() == (np.arange(24).reshape(2, 3, 4)
                                                    .sum(0) // 2).tolist()
    assert nd.mean(i).asnumpy().tolist() == [11]        # 11.5 truncated
    assert nd.max(i).asnumpy().tolist() == [23]
    assert nd.nansum(i).asnumpy().tolist() == [276]


def test_nan_reductions_skip_nans():
    n = nd.array([[1, np.nan, 3], [np.nan, 2, 2]])
    assert nd.nansum(n, axis=1).asnumpy().tolist() == [4, 4]
    assert nd.nanprod(n, axis=0).asnumpy().tolist() == [1, 2, 6]
    assert nd.nansum(n).asnumpy().tolist() == [8]


def test_max_gradient_goes_to_every_tie():
    # MXNet gives the whole gradient to each element equal to the maximum.
    a = nd.array([1.0, 3.0, 3.0])
    a.attach_grad()
    with mx.autograd.record():
        y = nd.max(a)
    y.backward()
    assert a.grad.asnumpy().tolist() == [0, 1, 1]
    b = nd.array([[4.0, 1.0], [4.0, 0.0]])
    b.attach_grad()
    with mx.autograd.record():
        y = nd.min(b, axis=1, keepdims=True) * nd.array([[2.0], [3.0]])
    y.backward()
    assert b.grad.asnumpy().tolist() == [[0, 2], [0, 3]]


def test_reduction_errors_name_the_axis():
    x = nd.ones((2, 3))
    with pytest.raises(mx.MXNetError, match=r'sum: axis 2 is out of range'):
        nd.sum(x, axis=2)
    with pytest.raises(mx.MXNetError, match='duplicates'):
        nd.sum(x, axis=(1, -1))
    with pytest.raises(mx.MXNetError, match='argmax: axis 5'):
        nd.argmax(x, axis=5)


@pytest.mark.parametrize('name,f', [('argmax', np.argmax), ('argmin', np.argmin)])
def test_argmax_argmin(name, f, ctx):
    x = RNG.permutation(24).reshape(2, 3, 4).astype(np.float64)
    for kw in (dict(axis=1), dict(axis=-1), dict(axis=0, keepdims=True), dict()):
        def ref(a, kw=kw):
            r = f(a, axis=kw.get('axis'))
            if kw.get('keepdims'):
                r = np.expand_dims(r, kw['axis'])
            return _np_full(r).astype(a.dtype)
        out = check_op(lambda a: getattr(nd, name)(a, **kw), ref, [x], ctx, grad=False)
        assert out[0].dtype == np.float32     # indices in the input's dtype
    assert getattr(nd, name)(nd.array(x), 1).shape == (2, 4)   # positional axis
    assert getattr(nd, name)(nd.array(x, dtype='int32'), axis=1).dtype == np.int32
    assert getattr(nd, name)(nd.array(x, dtype='float64'), axis=1).dtype == np.float64
    assert getattr(nd, name)(nd.array(x), keepdims=True).shape == (1, 1, 1)


def test_argmax_channel():
    x = nd.array(np.arange(24).reshape(2, 3, 4))
    out = nd.argmax_channel(x)       # MXNet reduces axis 1
    assert out.shape == (2, 4) and out.asnumpy().tolist() == [[2] * 4] * 2
    assert nd.argmax_channel(nd.array([[0, 5, 2], [9, 1, 1]])).asnumpy().tolist() == [1, 0]


@pytest.mark.parametrize('kw', [dict(), dict(ord=1), dict(axis=1), dict(ord=1, axis=(1, 2)),
                                dict(axis=1, keepdims=True), dict(axis=-1)],
                         ids=str)
def test_norm(kw, ctx):
    x = X[:, :2, :3]

    def ref(a):
        o = kw.get('ord', 2)
        axis = kw.get('axis')
        r = (np.abs(a) if o == 1 else a * a).sum(axis=axis, keepdims=kw.get('keepdims', False))
        return _np_full(r if o == 1 else np.sqrt(r))
    check_op(lambda a: nd.norm(a, **kw), ref, [x], ctx)


def test_norm_dtypes_and_errors():
    x = nd.array(X)
    assert nd.norm(x, out_dtype='float64').dtype == np.float64
    assert nd.norm(nd.array([[3, 4]], dtype='int32')).asnumpy().tolist() == [5]
    assert x.norm().shape == (1,)
    with pytest.raises(mx.MXNetError, match='ord=1 and ord=2'):
        nd.norm(x, ord=3)
    # The gradient of the L2 norm at zero is 0 rather than NaN.
    z = nd.zeros((2, 2))
    z.attach_grad()
    with mx.autograd.record():
        n = nd.norm(z)
    n.backward()
    assert z.grad.asnumpy().tolist() == [[0, 0], [0, 0]]


def test_moments(ctx):
    x = X[:, :2, :3]
    check_op(lambda a: nd.moments(a, axes=(0, 1)),
             lambda a: [a.mean(axis=(0, 1)), a.var(axis=(0, 1))], [x], ctx)
    mean, var = nd.moments(nd.array(x), axes=(0, 2), keepdims=True)
    assert mean.shape == var.shape == (1, 2, 1)
    with pytest.raises(mx.MXNetError, match='moments'):
        nd.moments(nd.array(x))


def test_softmin(ctx):
    x = RNG.randn(2, 3)

    def softmin(a, axis=-1, t=1.0):
        e = np.exp(-a / t - (-a / t).max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)
    check_op(nd.softmin, softmin, [x], ctx)
    check_op(lambda a: nd.softmin(a, axis=0), lambda a: softmin(a, 0), [x], ctx)
    check_op(lambda a: nd.softmin(a, temperature=2.0), lambda a: softmin(a, t=2.0), [x], ctx)
    check_op(lambda a: a.softmin(), softmin, [x], ctx, grad=False)
    assert nd.softmin(nd.array(x), dtype='float64').dtype == np.float64


def test_cumsum(ctx):
    x = RNG.randn(2, 3)
    check_op(nd.cumsum, lambda a: np.cumsum(a), [x], ctx)
    check_op(lambda a: nd.cumsum(a, axis=1), lambda a: np.cumsum(a, axis=1), [x], ctx)
    assert nd.cumsum(nd.array([1, 2], dtype='int32')).dtype == np.int32
    assert nd.cumsum(nd.array([1, 2]), dtype='float64').dtype == np.float64


def test_all_finite():
    assert nd.all_finite(nd.array([1.0, np.inf])).asnumpy().tolist() == [0]
    assert nd.all_finite(nd.array([1.0, 2.0])).asnumpy().tolist() == [1]
    assert nd.multi_all_finite(nd.ones(2), nd.ones(3), num_arrays=2).asnumpy().tolist() == [1]
    assert nd.multi_all_finite(nd.ones(2), nd.array([np.nan]), num_arrays=2).asnumpy().tolist() \
        == [0]


def test_histogram():
    data = nd.array([0.1, 0.5, 0.7, 2.0, 3.9, 4.0, -1.0])
    counts, edges = nd.histogram(data, bins=4, range=(0, 4))
    assert counts.dtype == np.int64
    ref_counts, ref_edges = np.histogram(data.asnumpy(), bins=4, range=(0, 4))
    assert counts.asnumpy().tolist() == ref_counts.tolist()
    np.testing.assert_allclose(edges.asnumpy(), ref_edges)
    counts, edges = nd.histogram(data, bins=nd.array([0, 1, 2.5, 4]))
    assert counts.asnumpy().tolist() == np.histogram(data.asnumpy(), [0, 1, 2.5, 4])[0].tolist()
    counts, edges = nd.histogram(data, bins=3)
    ref_counts, ref_edges = np.histogram(data.asnumpy(), bins=3)
    assert counts.asnumpy().tolist() == ref_counts.tolist()
    np.testing.assert_allclose(edges.asnumpy(), ref_edges, rtol=1e-6)
    with pytest.raises(mx.MXNetError, match='bins'):
        nd.histogram(data, bins=0)
    # MXNet's edges to the bit: (low * (n - i) + high * i) / n, so a symmetric range has an
    # edge at exactly 0 (a value there counts in the bin above it)
    _, edges = nd.histogram(nd.array([0.0], dtype='float64'), bins=6, range=(-2.5, 2.5))
    assert edges.asnumpy().tolist() == [(-2.5 * (6 - i) + 2.5 * i) / 6 for i in range(7)]
    assert edges.asnumpy()[3] == 0.0


def test_multi_sum_sq():
    out = nd.multi_sum_sq(nd.array([1, 2]), nd.array([[3.0]]), num_arrays=2)
    assert out.shape == (2,) and out.asnumpy().tolist() == [5, 9]


def test_attributes_given_positionally_are_parsed_per_value():
    """nd.<op>(x, value, ...) remembers its parsed attributes per positional value (and per
    name given beside them): each call gets its own, 0.0 and -0.0 stay apart, and an array
    where an attribute would be is still an input."""
    x = nd.array(np.arange(24.0).reshape(2, 3, 4))
    for _ in range(2):                      # parsed, then remembered
        assert nd.sum(x, 1).shape == (2, 4)
        assert nd.sum(x, 2).shape == (2, 3)
        assert nd.sum(x, 2, keepdims=True).shape == (2, 3, 1)
        assert nd.sum(x, 2, True).shape == (2, 3, 1)
        i = nd.array([1, 0, 3])
        assert nd.one_hot(i, 4).shape == (3, 4)
        assert nd.one_hot(i, 5, 2, -1).asnumpy()[0].tolist() == [-1, 2, -1, -1, -1]
        y = nd.array([-1.0, 1.0])
        assert (1 / nd.clip(y, 0, 1)).asnumpy().tolist()[0] == np.inf     # an int zero, kept
        assert (1 / nd.clip(y, 0.0, 1.0)).asnumpy().tolist()[0] == np.inf
        assert (1 / nd.clip(y, -0.0, 1.0)).asnumpy().tolist()[0] == -np.inf
        assert (1 / nd.clip(y, a_min=-0.0, a_max=1)).asnumpy().tolist()[0] == -np.inf
    a, b = nd.ones((2, 3)), nd.ones((3, 2))
    assert nd.dot(a, b, True, True).shape == (3, 3)
    assert nd.broadcast_add(a, nd.ones((1, 3))).shape == (2, 3)
