"""NDArray behaviours: attributes known without waiting, MXNet 1.9's view/copy rule for basic
indexing, __setitem__, in-place operators, synchronisation, repr, NumPy and DLPack interop,
pickling and the Python protocols."""
import contextlib
import gc
import io
import json
import pickle
import threading
import time

import numpy as np
import pytest
import torch

import neomx as mx
from neomx import nd


def _blocked(shape=(2, 3)):
    """An array whose producing operation waits for the returned event (set after 10 s at the
    latest, so a test that wrongly waits fails instead of hanging)."""
    x = nd.zeros(shape)
    ev = threading.Event()
    timer = threading.Timer(10, ev.set)
    timer.start()
    mx.engine.push(lambda: ev.wait(), [], [x._var], x.context, 'block')
    return x, ev, timer


@pytest.fixture
def threaded():
    """These tests hold an operation back: they need the asynchronous engine."""
    with mx.engine.engine_scope('ThreadedEngine'):
        yield


def test_attributes_never_wait(threaded):
    x, ev, timer = _blocked()
    t0 = time.time()
    y = (x + 1).reshape((3, 2)).astype('float64')
    z = nd.dot(y, x.astype('float64'))
    assert (y.shape, y.dtype, y.context, y.size, y.ndim) == ((3, 2), np.float64, mx.cpu(0), 6, 2)
    assert z.shape == (3, 3) and z.stype == 'default'
    assert len(y) == 3
    assert time.time() - t0 < 5, 'reading attributes waited for the computation'
    ev.set()
    timer.cancel()
    assert y.asnumpy().tolist() == [[1, 1], [1, 1], [1, 1]]


def test_wait_to_read_and_write(threaded):
    x, ev, timer = _blocked()
    y = x + 1
    done = []
    t = threading.Thread(target=lambda: (y.wait_to_read(), done.append(1)))
    t.start()
    time.sleep(0.2)
    assert not done, 'wait_to_read returned before the write finished'
    ev.set()
    t.join(5)
    timer.cancel()
    assert done
    x.wait_to_write()
    nd.waitall()
    assert y.asnumpy().sum() == 6


# Keys and whether MXNet 1.9.1 returns a view (True) or a copy (False) for a (3, 4) array.
VIEW_RULE = [
    (1, True), (slice(1, 3), True), ((1, slice(2, 4)), True), ((slice(None), 1), False),
    ((slice(None), slice(1, 3)), False), ((1, 2), True), (slice(None, None, 2), False),
    ((Ellipsis, 1), False), (None, True), ((1, None), True), ((slice(1, 2), slice(0, 4)), True),
    ((slice(0, 1), slice(1, 3)), True), ((slice(1, 3),), True), ((1, Ellipsis), True),
    ((slice(None), slice(None)), True), (Ellipsis, True), (slice(-2, None), True), ((-1,), True),
    ((slice(None), slice(None, None, -1)), False),
]


@pytest.mark.parametrize('key,view', VIEW_RULE, ids=[str(k) for k, _ in VIEW_RULE])
def test_basic_indexing_view_or_copy(key, view):
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = nd.array(base)
    part = x[key]
    expected = base[key]
    assert part.shape == (expected.shape or (1,))
    np.testing.assert_array_equal(part.asnumpy().reshape(expected.shape), expected)
    part[:] = 100
    assert (x.asnumpy().max() == 100) == view


def test_views_follow_writes_to_their_parent():
    x = nd.array(np.arange(12).reshape(3, 4))
    row = x[1]
    sub = x[1:3]
    x[:] = 7
    assert row.asnumpy().tolist() == [7, 7, 7, 7]
    x += 1
    assert sub.asnumpy().tolist() == [[8] * 4] * 2
    r = x.reshape((4, 3))
    r[0] = -1
    assert x.asnumpy()[0].tolist() == [-1, -1, -1, 8]
    y = nd.array(np.arange(24).reshape(2, 3, 4))
    v = y[1][1:3]
    v[:] = -5
    assert y.asnumpy()[1, 1:3].ravel().tolist() == [-5] * 8


def test_advanced_indexing_copies():
    x = nd.array(np.arange(12).reshape(3, 4))
    base = x.asnumpy()
    cases = [([0, 2], base[[0, 2]]), (nd.array([0, 2]), base[[0, 2]]),
             ((nd.array([0, 2]), nd.array([1, 3])), base[[0, 2], [1, 3]]),
             (([0, 2], slice(1, 3)), base[[0, 2], 1:3]), (np.array([0, 2]), base[[0, 2]]),
             ((slice(1, 2), [0, 3]), base[1:2, [0, 3]]), ((slice(None), slice(None, None, -1)),
                                                         base[:, ::-1])]
    for key, expected in cases:
        part = x[key]
        np.testing.assert_array_equal(part.asnumpy(), expected)
        part[:] = -1
        np.testing.assert_array_equal(x.asnumpy(), base)
    assert x[1, 2].shape == (1,) and x[1, 2].asscalar() == 6
    with pytest.raises(IndexError):
        x[3]
    with pytest.raises(IndexError):
        x[-4]


def _set(key, value, dtype='float32'):
    a = nd.array(np.arange(12).reshape(3, 4), dtype=dtype)
    a[key] = value
    return a.asnumpy().tolist()


def test_setitem():
    base = np.arange(12).reshape(3, 4)

    def expect(key, value):
        b = base.astype(np.float64).copy()
        b[key] = value
        return b.tolist()
    assert _set(1, 5) == expect(1, 5)
    assert _set(slice(None), 2) == expect(slice(None), 2)
    assert _set((slice(None), 1), nd.array([7, 8, 9])) == expect((slice(None), 1), [7, 8, 9])
    assert _set((slice(None), 1), 3.5) == expect((slice(None), 1), 3.5)
    assert _set(1, np.array([1, 2, 3, 4])) == expect(1, [1, 2, 3, 4])
    assert _set(1, [1, 2, 3, 4]) == expect(1, [1, 2, 3, 4])
    assert _set(slice(0, 2), nd.array([[1], [2]])) == expect(slice(0, 2), [[1], [2]])
    assert _set((1, 2), 42) == expect((1, 2), 42)
    assert _set(nd.array([0, 2]), 0) == expect([0, 2], 0)
    assert _set([0, 2], nd.array([1, 2, 3, 4])) == expect([0, 2], [1, 2, 3, 4])
    assert _set((nd.array([0, 2]), nd.array([1, 3])), nd.array([-1, -2])) == \
        expect(([0, 2], [1, 3]), [-1, -2])
    assert _set((slice(None), [0, 3]), 0) == expect((slice(None), [0, 3]), 0)
    assert _set(slice(None, None, 2), 0) == expect(slice(None, None, 2), 0)
    assert _set((slice(None), slice(None, None, -1)), nd.array([1, 2, 3, 4])) == \
        expect((slice(None), slice(None, None, -1)), [1, 2, 3, 4])
    assert _set((1, Ellipsis), 1) == expect((1, Ellipsis), 1)
    assert _set((1,), nd.array([[1, 2, 3, 4]])) == expect(1, [1, 2, 3, 4])
    assert _set(slice(None), nd.ones((3, 4), dtype='int32')) == np.ones((3, 4)).tolist()
    # Values take the array's dtype.
    assert _set(1, 2.7, 'int32')[1] == [2, 2, 2, 2]
    assert _set(1, nd.array([1.5, 2.5, 3.5, 4.5]), 'int32')[1] == [1, 2, 3, 4]


def test_setitem_of_an_array_onto_itself_copies_nothing():
    """``x[:] *= s`` (gradient clipping in the book) ends with ``x[:] = x[:]``: the values are
    there already, and no copy is pushed; a whole row onto itself, or a part of the storage
    onto another part, still copies."""
    from neomx import engine
    x = nd.array(np.arange(12.0).reshape(3, 4))
    eng = engine.current()
    nd.waitall()
    eng.trace = []
    try:
        x[:] *= 2
        x[:] = x
        nd.waitall()
        names = [t[1] for t in eng.trace]
    finally:
        eng.trace = None
    assert x.asnumpy().tolist() == (np.arange(12.0).reshape(3, 4) * 2).tolist()
    assert len(names) == 1 and 'set' not in names[0], names
    row = x[1]
    row[:] = x[2]                   # another part of the same storage: copied
    assert x.asnumpy()[1].tolist() == [16.0, 18.0, 20.0, 22.0]
    x[:] = x.astype('float64')      # another array (another dtype): copied
    assert x.asnumpy()[0].tolist() == [0.0, 2.0, 4.0, 6.0]


def test_setitem_errors_at_push_time():
    x = nd.zeros((3, 4))
    with pytest.raises(IndexError, match='index 5'):
        x[5] = 1
    with pytest.raises(mx.MXNetError, match=r'shape \(4, 3\)'):
        x[:] = nd.ones((4, 3))
    with pytest.raises(mx.MXNetError, match=r'shape \(3,\)'):
        x[1] = nd.array([1, 2, 3])


def test_setitem_from_another_device():
    x = nd.zeros((2, 2))
    x[0] = nd.ones((2,), ctx=mx.cpu(1))
    assert x.asnumpy().tolist() == [[1, 1], [0, 0]]


def test_in_place_operators_keep_the_array():
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    var = x._var
    row = x[0]
    ident = id(x)
    x += 1
    x -= nd.array([[0.5, 0.5]])
    x *= 2
    x /= nd.array([[1.0], [2.0]])
    assert id(x) == ident and x._var is var
    np.testing.assert_allclose(x.asnumpy(), [[3, 5], [3.5, 4.5]])
    assert row.asnumpy().tolist() == [3, 5]
    x %= 2
    np.testing.assert_allclose(x.asnumpy(), [[1, 1], [1.5, 0.5]])
    i = nd.array([5, 6], dtype='int32')
    i += 1.9
    assert i.dtype == np.int32 and i.asnumpy().tolist() == [6, 7]
    with pytest.raises(TypeError):
        x += 'a'


def test_in_place_operators_on_views_and_in_order_with_pending_readers():
    """``x += y`` and ``x *= 2`` take the fast path into the existing array: a view writes its
    part of the storage, an operation queued before the write reads the old values, and a
    result broadcast to another shape than the target's is refused as before."""
    from neomx import engine
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    part = x[1:]
    part += 10                          # a view: its rows of x
    part *= nd.array([[2.0, 1.0]])      # an array broadcast to the view's shape
    assert x.asnumpy().tolist() == [[1, 2], [26, 14]]
    w = engine.current().worker(mx.cpu())
    w.exec_lock.acquire()               # the worker is busy: what follows is queued
    try:
        before = x * 1                  # reads x before the write below
        x += 1
        after = x * 1
    finally:
        w.exec_lock.release()
    assert before.asnumpy().tolist() == [[1, 2], [26, 14]]
    assert after.asnumpy().tolist() == [[2, 3], [27, 15]]
    v = nd.ones((2,))
    with pytest.raises(mx.MXNetError):
        v += nd.ones((2, 2))            # the result's shape is not the target's
    assert v.asnumpy().tolist() == [1, 1]


def test_out_argument_writes_in_place():
    x = nd.array([1.0, 4.0])
    out = nd.zeros((2,))
    r = nd.sqrt(x, out=out)
    assert r is out and out.asnumpy().tolist() == [1, 2]
    with pytest.raises(mx.MXNetError, match='out='):
        nd.sqrt(x, out=nd.zeros((3,)))


def test_asnumpy_asscalar_and_conversions():
    x = nd.array([[1, 2], [3, 4]])
    a = x.asnumpy()
    a[0, 0] = 100
    assert x.asnumpy()[0, 0] == 1                  # a copy
    assert a.dtype == np.float32
    s = nd.array([3]).asscalar()
    assert isinstance(s, np.float32) and s == 3
    assert isinstance(nd.array([3], dtype='int32').asscalar(), np.int32)
    with pytest.raises(ValueError):
        x.asscalar()
    assert float(nd.array([2.5])) == 2.5 and int(nd.array([2.5])) == 2
    assert bool(nd.array([2])) and not bool(nd.array([0]))
    with pytest.raises(ValueError):
        bool(x)
    assert len(x) == 2
    rows = list(x)
    assert len(rows) == 2 and all(isinstance(r, nd.NDArray) for r in rows)
    assert rows[1].asnumpy().tolist() == [3, 4]
    assert [10, 20, 30][nd.array([1], dtype='int32')] == 20      # __index__
    assert x.tolist() == [[1, 2], [3, 4]]
    assert (x == None) is False and (x != None) is True     # noqa: E711


def test_repr_matches_mxnet():
    assert repr(nd.array([[1, 2, 3], [4, 5, 6]])) == \
        '\n[[1. 2. 3.]\n [4. 5. 6.]]\n<NDArray 2x3 @cpu(0)>'
    assert repr(nd.array([1.5, 2], dtype='int32')) == '\n[1 2]\n<NDArray 2 @cpu(0)>'
    assert repr(nd.array([0.25], ctx=mx.cpu(1))) == '\n[0.25]\n<NDArray 1 @cpu(1)>'
    assert str(nd.array([1e-8, 1])) == '\n[1.e-08 1.e+00]\n<NDArray 2 @cpu(0)>'


def test_numpy_interop():
    x = nd.array([[1, 2], [3, 4]], dtype='int32')
    a = np.asarray(x)
    assert a.dtype == np.int32 and a.tolist() == [[1, 2], [3, 4]]
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    np.testing.assert_array_equal(np.array(x) * 2, (x * 2).asnumpy())
    f = nd.array([1.0, 2.0, 3.0])
    assert (f + np.array([1, 2, 3])).asnumpy().tolist() == [2, 4, 6]
    src = np.array([1.0, 2.0])
    shared = nd.from_numpy(src)
    # Zero copy: as in MXNet the numpy array turns read-only; writes go through the NDArray.
    with pytest.raises(ValueError):
        src[0] = 9
    shared[0] = 9
    shared.wait_to_read()
    assert src[0] == 9
    assert nd.from_numpy(src, zero_copy=False).asnumpy()[0] == 9
    with pytest.raises(ValueError, match='C-contiguous'):
        nd.from_numpy(np.ones((2, 3)).T)
    assert nd.from_numpy(np.array(7.0)).shape == ()


def test_dlpack_with_torch():
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    x = nd.from_dlpack(t)
    assert x.shape == (2, 3) and x.dtype == np.float32
    t[0, 0] = 42                                      # shares memory
    assert x.asnumpy()[0, 0] == 42
    y = nd.array([[1.0, 2.0], [3.0, 4.0]])
    ty = torch.from_dlpack(y)
    assert ty.tolist() == [[1, 2], [3, 4]]
    ty[1, 1] = -1                                     # shares memory
    assert y.asnumpy()[1, 1] == -1
    cap = nd.to_dlpack_for_read(y)
    assert torch.utils.dlpack.from_dlpack(cap).tolist() == [[1, 2], [3, -1]]
    w = torch.utils.dlpack.from_dlpack(nd.to_dlpack_for_write(y))
    w.fill_(5)
    assert y.asnumpy().tolist() == [[5, 5], [5, 5]]
    z = nd.from_dlpack(torch.ones(3, dtype=torch.int64))
    assert z.dtype == np.int64 and (z + 1).asnumpy().tolist() == [2, 2, 2]


def test_pickle_keeps_values_dtype_and_context():
    for x in (nd.array([[1.5, 2], [3, 4]]), nd.array([1, 2], dtype='int64', ctx=mx.cpu(1))):
        y = pickle.loads(pickle.dumps(x))
        assert y.shape == x.shape and y.dtype == x.dtype and y.context == x.context
        np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


def test_copies_between_contexts():
    x = nd.array([1.0, 2.0])
    assert x.as_in_context(mx.cpu(0)) is x
    y = x.as_in_context(mx.cpu(1))
    assert y.context == mx.cpu(1) and y.asnumpy().tolist() == [1, 2]
    z = x.copyto(mx.cpu(1))
    x[:] = 0
    assert z.asnumpy().tolist() == [1, 2]
    target = nd.zeros((2,), ctx=mx.cpu(1))
    assert z.copyto(target) is target and target.asnumpy().tolist() == [1, 2]
    with pytest.raises(mx.MXNetError, match='shape'):
        x.copyto(nd.zeros((3,)))
    c = x.copy()
    assert c._var is not x._var
    assert x.astype('float32', copy=False) is x
    with pytest.raises(mx.MXNetError, match='different devices'):
        x + y


def test_transpose_property_and_detach():
    x = nd.array([[1.0, 2.0, 3.0]])
    assert x.T.shape == (3, 1)
    v = nd.array([1.0, 2.0])
    assert v.T is v
    d = x.detach()
    assert d.asnumpy().tolist() == x.asnumpy().tolist()


def test_operator_failure_is_raised_at_synchronisation():
    x = nd.array([5.0])
    y = nd.take(x, nd.array([3.0]), mode='raise')       # fails when it runs
    with pytest.raises(mx.MXNetError, match='take'):
        y.asnumpy()
    assert (x + 1).asnumpy().tolist() == [6]             # the engine keeps working


# Run under MXNet 1.9.1 and neomx alike: values, shapes and view-or-copy of reads, and the
# results of writes.
INDEXING = r'''
import json
import numpy as np
nd = mx.nd
base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
reads = ['[1]', '[1, 2]', '[1, 2, 3]', '[:, 1]', '[:, 1:3]', '[..., 2]', '[1, ..., 1]', '[None, 1]',
         '[::-1]', '[:, ::-2, 1]', '[[1, 0], :, [0, 3]]', '[1, [0, 2]]', '[-1]', '[0:0]',
         '[1][1:3]', '[1:2, 1:2, 1:2]']
writes = [('[1]', '5'), ('[:, 1]', 'nd.array([7, 8, 9, 10])'), ('[1, 2]', 'np.arange(4)'),
          ('[:, ::-1, 0]', 'nd.array([[1, 2, 3]])'), ('[[0, 1], 0, [1, 2]]', '-1'),
          ('[1, [0, 2]]', 'nd.ones((2, 4))'), ('[..., 3]', '2.5'), ('[:]', '0')]
out = {}
for key in reads:
    x = nd.array(base)
    part = eval('x' + key)
    value = part.asnumpy().tolist()
    part[:] = -1
    out['read' + key] = [list(part.shape), value, float(x.asnumpy().min()) == -1.0]
for key, val in writes:
    x = nd.array(base)
    exec('x' + key + ' = ' + val)
    out['write' + key] = x.asnumpy().tolist()
print(json.dumps(out))
'''


def test_indexing_matches_mxnet(mxnet_ref):
    expected = json.loads(mxnet_ref('import mxnet as mx\n' + INDEXING).strip().splitlines()[-1])
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(INDEXING, {'mx': mx})
    got = json.loads(buf.getvalue().strip().splitlines()[-1])
    for key, value in expected.items():
        assert got[key] == value, key


def test_view_methods_with_inplace():
    t = nd.arange(30).reshape(2, 3, 5)
    copy, view = t.flatten(), t.flatten(inplace=True)
    assert copy.shape == view.shape == (2, 15)
    t[0] = -1
    assert copy.asnumpy()[0, 0] == 0 and view.asnumpy()[0, 0] == -1
    d = nd.ones((1, 4, 1))
    assert d.squeeze(inplace=True).shape == (4,) and d.squeeze(axis=2).shape == (1, 4)
    e = d.expand_dims(0, inplace=True)
    d[:] = 5
    assert e.shape == (1, 1, 4, 1) and e.asnumpy().ravel().tolist() == [5] * 4


def test_basic_slices_that_are_contiguous_are_views():
    x = nd.arange(24).reshape((2, 3, 4))
    is_contiguous = nd.NDArray._basic_indexing_slice_is_contiguous
    for key in [(slice(None), slice(1, 2), slice(None)), (slice(0, 1), slice(None, None, -1),
                                                          slice(None)),
                (slice(1, 2), slice(2, 3), slice(None, None, -1))]:
        expected = np.arange(24).reshape((2, 3, 4))[key].flags.contiguous
        assert is_contiguous(key, (2, 3, 4)) == expected
    y = x.copy()
    v = y[0:1, 2:3, ::-1]          # one row reversed: not contiguous, a copy
    assert not is_contiguous((slice(0, 1), slice(2, 3), slice(None, None, -1)), (2, 3, 4))
    w = y[1:2, 1:2, 3:4][:]
    w[:] = 0
    assert y.asnumpy()[1, 1, 3] == 0 and v.shape == (1, 1, 4)


def test_moveaxis_as_numpy():
    x = nd.zeros((4, 1, 2, 3))
    for src, dst in [(0, 2), ([0, 1], [2, 3]), ([3, 0], [1, 0]), (-1, 0), (range(4), range(4))]:
        assert nd.moveaxis(x, src, dst).shape == np.moveaxis(np.zeros((4, 1, 2, 3)), src,
                                                             dst).shape
    for src, dst in [(4, 0), ([0, 0], [0, 1]), (0, [0, 1])]:
        with pytest.raises(ValueError):
            nd.moveaxis(x, src, dst)


def test_integer_rounding_is_exact_and_out_for_creation():
    a = nd.array([50000001], dtype='int32')
    for f in ('floor', 'ceil', 'round', 'rint', 'fix', 'trunc'):
        assert getattr(a, f)().asnumpy().tolist() == [50000001], f
    out = nd.zeros((2, 2))
    assert nd.ones((2, 2), out=out) is out and out.asnumpy().tolist() == [[1, 1], [1, 1]]
    nd.zeros((2, 2), out=out)
    assert out.asnumpy().sum() == 0


def test_broadcast_like_axes():
    lhs, rhs = nd.ones((1, 2, 1, 3)), nd.ones((5, 6, 7, 8))
    assert nd.broadcast_like(lhs, rhs, lhs_axes=(0, 2), rhs_axes=(1, 3)).shape == (6, 2, 8, 3)
    assert nd.broadcast_like(nd.ones((1, 3)), nd.ones((4, 3))).shape == (4, 3)
    with pytest.raises(mx.MXNetError, match='non-empty'):
        nd.broadcast_like(lhs, rhs, lhs_axes=(), rhs_axes=())


def test_advanced_keys_with_negative_steps_and_long_values():
    a = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
    x = nd.array(a, dtype='int32')
    key = (1, [2], slice(None, None, -1))
    np.testing.assert_array_equal(x[key].asnumpy(), a[key])
    value = np.array([7, 8, 9, 10], dtype=np.int32)
    x[key] = nd.array(value, dtype='int32')
    a[key] = value
    np.testing.assert_array_equal(x.asnumpy(), a)
    y = nd.zeros((3, 4))
    y[1:3] = nd.array(np.ones((1, 1, 1, 4)))     # leading 1s of the value are dropped
    assert y.asnumpy().sum() == 8


def test_c_api_dlpack_entry_points():
    import ctypes
    from neomx.base import NDArrayHandle, _LIB, c_str, check_call
    x = nd.array([[1, 2, 3], [4, 5, 6]])
    # As MXNet's code did: the capsule's pointer handed to MXNDArrayFromDLPack, which takes
    # ownership, and the capsule renamed so that it does not free the tensor again.
    capsule = ctypes.py_object(nd.to_dlpack_for_read(x))
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    handle = NDArrayHandle()
    check_call(_LIB.MXNDArrayFromDLPack(ctypes.c_void_p(get(capsule, c_str('dltensor'))),
                                        ctypes.byref(handle)))
    ctypes.pythonapi.PyCapsule_SetName(capsule, c_str('used_dltensor'))
    ctypes.pythonapi.PyCapsule_SetDestructor(capsule, None)
    y = nd.NDArray(handle=handle)
    assert y.asnumpy().tolist() == x.asnumpy().tolist()
    with pytest.raises(mx.MXNetError, match='already used'):
        nd.NDArray(handle=handle)
    with pytest.raises(mx.MXNetError, match='null'):
        check_call(_LIB.MXNDArrayFromDLPack(ctypes.c_void_p(), ctypes.byref(handle)))
    with pytest.raises(AttributeError, match='no MXNet C library'):
        _LIB.MXNDArrayCreate


def test_arrays_pass_through_ctypes_as_handles():
    # MXNet code given an array in a monitor callback casts it with ctypes and makes an NDArray
    # of the handle, with the names ``from mxnet.operator import *`` gives.
    ns = {}
    exec('from neomx.operator import *', ns)
    ctypes, NDArrayHandle, NDArray = ns['ctypes'], ns['NDArrayHandle'], ns['NDArray']
    x = nd.array([[1, 2], [3, 4]])
    handle = ctypes.cast(x, NDArrayHandle)
    assert handle.value == ctypes.cast(x, NDArrayHandle).value     # the same while x lives
    for _ in range(2):                                            # and not used up
        y = NDArray(handle, writable=False)
        assert y.asnumpy().tolist() == [[1, 2], [3, 4]] and y._var is x._var
    value = handle.value
    del x, y
    gc.collect()
    with pytest.raises(mx.MXNetError, match='not a handle'):
        NDArray(value)

    seen = {}

    def callback(name, arr):
        a = NDArray(ctypes.cast(arr, NDArrayHandle), writable=False)
        seen[ns['py_str'](name)] = nd.min(a).asscalar()
    sym = mx.sym.Convolution(mx.sym.Variable('data'), kernel=(1, 1), num_filter=1, name='conv')
    exe = sym.simple_bind(mx.cpu(), data=(1, 3, 4, 4))
    exe.arg_dict['data'][:] = 2
    exe.set_monitor_callback(callback, monitor_all=True)
    exe.forward(is_train=False)
    nd.waitall()
    assert set(seen) == {'data', 'conv_data', 'conv_weight', 'conv_bias', 'conv_output'}
    assert seen['data'] == 2 and seen['conv_bias'] == 0


def test_one_element_asnumpy_converts_to_a_number():
    # MXNet code turns a reduction, a 1-d array of one element, into a number with
    # float(x.asnumpy()) or '%f' % x.asnumpy(); NumPy 2 refuses that for an ndarray, so
    # asnumpy() gives an ndarray subclass that converts as NumPy 1 did and is otherwise the same.
    loss = nd.array([1.0, 2.0, 4.5]).sum()
    a = loss.asnumpy()
    assert float(a) == 7.5 and int(a) == 7 and complex(a) == 7.5
    assert '%f' % a == '7.500000' and '%d' % a == '7' and '%.2f' % (a / 3) == '2.50'
    assert float(nd.ones((1, 1, 1)).asnumpy()) == 1.0
    assert int(nd.array([3], dtype='int64').asnumpy()) == 3
    # the same array in every other respect
    assert isinstance(a, np.ndarray) and a.shape == (1,) and a.dtype == np.float32
    assert a.flags.owndata and a.flags.c_contiguous and a.base is None
    assert repr(a) == 'array([7.5], dtype=float32)' and str(a) == '[7.5]'
    assert type(np.asarray(a)) is np.ndarray and a.tolist() == [7.5]
    b = pickle.loads(pickle.dumps(a))
    assert type(b) is np.ndarray and b.tolist() == [7.5]
    buf = io.BytesIO()
    np.save(buf, a)
    buf.seek(0)
    assert type(np.load(buf)) is np.ndarray
    np.testing.assert_allclose(a, [7.5])
    np.testing.assert_array_equal(a, np.array([7.5], dtype=np.float32))
    # results with one element keep the conversion (as on NumPy 1); others are plain ndarrays
    assert float(a * 2) == 15.0 and float(np.sqrt(a)) == pytest.approx(7.5 ** 0.5)
    big = a + np.zeros(3)
    assert type(big) is np.ndarray and big.shape == (3,)
    assert isinstance(a.sum(), np.floating) and type(a.reshape(())) is not np.ndarray
    # arrays of any other size are plain ndarrays, and still refuse float() as NumPy 2 does
    for x in (nd.ones((2,)), nd.ones((2, 3))):
        assert type(x.asnumpy()) is np.ndarray
    with pytest.raises(TypeError):
        float(nd.ones((2,)).asnumpy())
    with pytest.raises(TypeError):
        float(a[1:])                      # a view with no element
    assert type(mx.np.ones((1,)).asnumpy()).__name__ in ('ndarray', 'OneElementArray')
    assert float(mx.np.ones((1,)).asnumpy()) == 1.0


def test_nan_propagates_through_maximum_minimum_relu():
    # As MXNet (and NumPy's maximum/minimum): a NaN on either side gives NaN.
    a = nd.array([[1.0, np.nan], [np.nan, 2.0]])
    b = nd.array([[np.nan, 0.5], [3.0, 1.0]])
    nan = float('nan')
    np.testing.assert_equal(nd.maximum(a, b).asnumpy(), [[nan, nan], [nan, 2.0]])
    np.testing.assert_equal(nd.minimum(a, b).asnumpy(), [[nan, nan], [nan, 1.0]])
    np.testing.assert_equal(nd.relu(a).asnumpy(), [[1.0, nan], [nan, 2.0]])


@pytest.mark.xfail(strict=True, reason="known difference: MXNet's relu gradient is NaN at a NaN "
                   "input; torch's relu backward (kept for speed) gives the head gradient there")
def test_relu_gradient_at_nan_is_nan():
    a = nd.array([np.nan, -1.0, 1.0])
    a.attach_grad()
    with mx.autograd.record():
        y = nd.relu(a)
    y.backward()
    np.testing.assert_equal(a.grad.asnumpy(), [np.nan, 0.0, 1.0])


def test_context_names_mxnets_class_and_pickles_without_the_alias():
    # Libraries name the class as MXNet does (GluonTS decodes only 'mxnet.context.Context');
    # a pickle of a context still loads in a process that has not aliased mxnet.
    assert (type(mx.cpu()).__module__, type(mx.cpu()).__qualname__) == ('mxnet.context',
                                                                         'Context')
    code = ('import pickle, sys; c = pickle.loads(sys.stdin.buffer.read()); '
            'print(c, "mxnet" in sys.modules)')
    import subprocess
    import sys
    r = subprocess.run([sys.executable, '-c', code], input=pickle.dumps(mx.cpu(1)),
                       capture_output=True, timeout=120)
    assert r.stdout.decode().split() == ['cpu(1)', 'False'], r.stderr.decode()[-500:]


def test_array_wraps_python_ints_outside_the_dtype(mxnet_ref):
    # MXNet 1.9.1 (NumPy < 2) wraps them as C does; NumPy 2's np.array refuses them. GluonTS's
    # serialization tests build mx.nd.array([[1, 2, 3], [-1, -2, 0]], dtype=np.uint8).
    code = '''
import mxnet as mx, numpy as np
print(mx.nd.array([[1, 2, 3], [-1, -2, 0]], dtype=np.uint8).asnumpy().tolist())
print(mx.nd.array([300, -129, 5], dtype='int8').asnumpy().tolist())
print(mx.nd.array([2**40, -1], dtype='int32').asnumpy().tolist())
print(mx.nd.array([-1.0, 2.5], dtype='uint8').asnumpy().tolist())
'''
    want = mxnet_ref(code)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code.replace('mxnet', 'neomx'), {})
    assert out.getvalue() == want
    with pytest.raises(mx.MXNetError, match="array: cannot convert list to an array of int8"):
        nd.array([2**70], dtype='int8')


def test_nd_functions_parse_attributes_by_name_once_per_set_of_values(monkeypatch):
    """A layer's call (``F.FullyConnected(x, w, b, num_hidden=4, ...)``) parses its attributes
    once per set of values; other values, a required attribute left out, an unknown one, an
    input given by name and the sign of a zero scalar are still honoured."""
    from neomx.ops import registry
    op = registry.get('FullyConnected')
    parser = op.attrs['num_hidden']
    seen = []

    class Counting:
        default = parser.default

        def __call__(self, name, key, value):
            seen.append(value)
            return parser(name, key, value)
    monkeypatch.setitem(op.attrs, 'num_hidden', Counting())
    x, w = nd.ones((2, 3)), nd.ones((4, 3))
    for _ in range(3):
        y = nd.FullyConnected(x, w, None, no_bias=True, num_hidden=4, name='fwd')
    assert y.shape == (2, 4) and y.asnumpy().tolist() == [[3.0] * 4] * 2
    assert seen == [4]
    assert nd.FullyConnected(x, w[:2], no_bias=True, num_hidden=2).shape == (2, 2)
    assert seen == [4, 2]
    with pytest.raises(mx.MXNetError, match='num_hidden'):
        nd.FullyConnected(x, w, no_bias=True)
    for _ in range(2):
        with pytest.raises(mx.MXNetError, match='unknown attribute'):
            nd.FullyConnected(x, w, no_bias=True, num_hidden=4, bogus=1)
    assert nd.FullyConnected(x, weight=w, no_bias=True, num_hidden=4).shape == (2, 4)
    for _ in range(2):
        assert not np.signbit(nd._internal._mul_scalar(x, scalar=0.0).asnumpy()).any()
        assert np.signbit(nd._internal._mul_scalar(x, scalar=-0.0).asnumpy()).all()
