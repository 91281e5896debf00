"""Creation: array, zeros, ones, full, empty, arange, eye, linspace, *_like; dtypes, contexts
and errors."""
import numpy as np
import pytest

import neomx as mx
from neomx import nd


def test_array_from_lists_numpy_and_ndarrays(ctx):
    a = nd.array([[1, 2], [3, 4]], ctx=ctx)
    assert a.shape == (2, 2) and a.dtype == np.float32 and a.context == ctx
    assert nd.array([1, 2, 3], dtype='int32').dtype == np.int32
    # MXNet 1.9: numpy sources become float32 unless a dtype is given.
    assert nd.array(np.array([1, 2, 3], dtype=np.int64)).dtype == np.float32
    assert nd.array(np.array([1.5, 2]), dtype=np.float64).dtype == np.float64
    assert nd.array([[1, 2]], dtype=np.float16).dtype == np.float16
    assert nd.array([True, False]).asnumpy().tolist() == [1, 0]
    assert nd.array([]).shape == (0,)
    # MXNet 1.9 keeps a 0-d source 0-d (its operators then see an unknown shape).
    assert nd.array(5).shape == () and nd.array(np.ones(())).asscalar() == 1
    i = nd.array([1, 2, 3], dtype='int32')
    copy = nd.array(i)
    assert copy.dtype == np.int32 and copy._var is not i._var
    assert nd.array(i, dtype='float64').dtype == np.float64
    with pytest.raises(mx.MXNetError, match='array'):
        nd.array([[1, 2], [3]])


def test_array_copies_its_source():
    src = np.arange(4, dtype=np.float32)
    a = nd.array(src)
    src[0] = 100
    assert a.asnumpy()[0] == 0
    b = nd.array(a)
    b[:] = 7
    assert a.asnumpy().tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize('f,value', [(nd.zeros, 0), (nd.ones, 1)])
def test_zeros_ones(f, value, ctx):
    a = f((2, 3), ctx=ctx)
    assert a.shape == (2, 3) and a.context == ctx and a.dtype == np.float32
    assert np.all(a.asnumpy() == value)
    assert f(3).shape == (3,)
    assert f((2,), dtype='int64').dtype == np.int64
    assert f(shape=(1, 2), dtype=np.float16).dtype == np.float16
    # MXNet 1.x: no empty axis and no scalar, except under NumPy shape semantics
    for shape in [(2, 0), (), (2, -1)]:
        with pytest.raises(mx.MXNetError, match='dimension'):
            f(shape)
    with mx.np_shape():
        assert f((2, 0)).shape == (2, 0)
        assert f(()).asnumpy().shape == ()


def test_full_and_empty(ctx):
    assert nd.full((2, 2), 7, ctx=ctx).asnumpy().tolist() == [[7, 7], [7, 7]]
    assert nd.full((2,), 7.5, dtype='int32').asnumpy().tolist() == [7, 7]
    assert nd.full(3, 2).shape == (3,)
    assert np.isinf(nd.full((2,), np.inf).asnumpy()).all()
    out = nd.zeros((2,))
    r = nd.full((2,), 4, out=out)
    assert r is out and out.asnumpy().tolist() == [4, 4]
    e = nd.empty((2, 3), ctx=ctx, dtype='float64')
    assert e.shape == (2, 3) and e.dtype == np.float64


def test_creation_errors():
    with pytest.raises(mx.MXNetError, match=r'shape \(\) has no dimensions'):
        nd.zeros(())
    with pytest.raises(mx.MXNetError, match='negative'):
        nd.ones((2, -1))
    with pytest.raises(mx.MXNetError, match="dtype='complex64' is not a valid dtype"):
        nd.zeros((2,), dtype='complex64')


@pytest.mark.parametrize('args,kw', [
    ((5,), {}), ((1, 5), {}), ((1, 5, 0.5), {}), ((5, 1, -1), {}), ((0, 5), dict(repeat=2)),
    ((5,), dict(dtype='int32')), ((0, 1, 0.3), {}), ((), dict(start=2, stop=6, step=2)),
], ids=str)
def test_arange(args, kw, ctx):
    a = nd.arange(*args, ctx=ctx, **kw)
    start = kw.get('start', args[0] if args else 0)
    stop = kw.get('stop', args[1] if len(args) > 1 else None)
    step = kw.get('step', args[2] if len(args) > 2 else 1)
    expected = np.arange(start, stop, step) if stop is not None else np.arange(start)
    expected = np.repeat(expected, kw.get('repeat', 1))
    np.testing.assert_allclose(a.asnumpy(), expected.astype(np.float32), rtol=1e-6)
    assert a.dtype == np.dtype(kw.get('dtype', 'float32'))
    assert a.context == ctx


def test_arange_errors():
    with pytest.raises(mx.MXNetError, match='step'):
        nd.arange(0, 5, 0)


def test_eye_linspace(ctx):
    np.testing.assert_array_equal(nd.eye(3, ctx=ctx).asnumpy(), np.eye(3))
    np.testing.assert_array_equal(nd.eye(2, 3).asnumpy(), np.eye(2, 3))
    np.testing.assert_array_equal(nd.eye(3, k=1).asnumpy(), np.eye(3, k=1))
    e = nd.eye(3, 4, -1, dtype='int32')
    assert e.dtype == np.int32 and e.asnumpy().tolist() == np.eye(3, 4, -1).tolist()
    np.testing.assert_allclose(nd.linspace(0, 1, 5, ctx=ctx).asnumpy(), np.linspace(0, 1, 5))
    np.testing.assert_allclose(nd.linspace(0, 1, 5, endpoint=False).asnumpy(),
                               np.linspace(0, 1, 5, endpoint=False), rtol=1e-6)
    assert nd.linspace(0, 10, 3, dtype='int32').asnumpy().tolist() == [0, 5, 10]


def test_like_ops_keep_shape_dtype_and_context(ctx):
    x = nd.array([[1, 2, 3]], dtype='int32', ctx=ctx)
    z, o = nd.zeros_like(x), nd.ones_like(x)
    assert z.dtype == o.dtype == np.int32 and z.context == ctx
    assert z.asnumpy().tolist() == [[0, 0, 0]] and o.asnumpy().tolist() == [[1, 1, 1]]
    assert x.zeros_like().shape == (1, 3) and x.ones_like().shape == (1, 3)


def test_creation_on_other_devices():
    a = nd.ones((2,), ctx=mx.cpu(1))
    assert a.context == mx.cpu(1)
    assert nd.arange(3, ctx='cpu(1)').context == mx.cpu(1)
    with mx.cpu(1):
        assert nd.zeros((2,)).context == mx.cpu(1)
        assert nd.array([1]).context == mx.cpu(1)
    assert nd.zeros((2,)).context == mx.cpu(0)
