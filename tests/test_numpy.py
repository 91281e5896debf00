"""mx.np / mx.npx: NumPy semantics on neomx arrays (MXNet 1.9.1's behaviour where it differs
from NumPy), interchange with NDArray, autograd, and Gluon on mx.np.ndarray."""
import numpy as onp
import pytest

import neomx as mx
from neomx import autograd, gluon, np, npx
from neomx.gluon import nn


@pytest.fixture
def np_mode():
    npx.set_np()
    yield
    npx.reset_np()


def test_ndarray_shares_storage_with_ndarray():
    a = mx.nd.zeros((2, 3))
    b = a.as_np_ndarray()
    assert type(b) is np.ndarray and isinstance(b, mx.nd.NDArray)
    b[1, 2] = 5
    assert a.asnumpy()[1, 2] == 5
    c = b.as_nd_ndarray()
    assert type(c) is mx.nd.NDArray and c.shape == (2, 3)


def test_zero_dim_and_reductions():
    a = np.arange(6).reshape(2, 3)
    s = a.sum()
    assert s.shape == () and float(s) == 15.0
    assert a.sum(axis=0).shape == (3,)
    assert a.sum(axis=1, keepdims=True).shape == (2, 1)
    assert a[1, 2].shape == () and a[1, 2].item() == 5.0
    assert a.mean().dtype == onp.float32


def test_mxnet_dtype_rules():
    i32 = np.arange(3, dtype='int32')
    # an array with a number keeps the array's dtype; the number is cast first (MXNet)
    assert (i32 + 1.5).dtype == onp.int32 and (i32 + 1.5).tolist() == [1, 2, 3]
    assert (i32 < 1.5).tolist() == [True, False, False]
    # true division of integers gives float32, MXNet's default float
    assert (i32 / 2).dtype == onp.float32
    # arrays of different dtypes are promoted; int8 with uint8 gives int32
    assert (i32 + np.ones(3, dtype='float16')).dtype == onp.float16
    assert (np.ones(3, dtype='int8') + np.ones(3, dtype='uint8')).dtype == onp.int32
    assert np.array([1, 2]).dtype == onp.float32            # lists default to float32
    assert np.array(onp.ones(2)).dtype == onp.float64       # numpy arrays keep theirs
    assert np.sum(np.ones(3, dtype='bool')).dtype == onp.int64


def test_repr_and_format():
    assert repr(np.ones((2,))) == 'array([1., 1.])'
    assert repr(np.array([1, 2], dtype='int32')) == 'array([1, 2], dtype=int32)'
    assert '{:0.3g}'.format(np.array(onp.pi)) == '3.14'
    assert str(np.ones((2,))) == '[1. 1.]'


def test_indexing():
    a = np.arange(12).reshape(3, 4)
    row = a[1]              # a view
    a[1, ::-1] = np.array([7, 8, 9, 10])
    assert row.tolist() == [10.0, 9.0, 8.0, 7.0]
    assert a[:, [0, 3]].shape == (3, 2)
    assert a[a > 9].tolist() == [10.0, 10.0, 11.0]
    assert a[None, ..., 1].shape == (1, 3)
    b = np.zeros((3,))
    b[b == 0] = 2
    assert b.tolist() == [2.0, 2.0, 2.0]


def test_autograd_on_np_arrays():
    x = np.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = (x * x).sum()
    y.backward()
    assert type(x.grad) is np.ndarray
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_npx_reshape_codes():
    x = np.ones((8, 3, 3, 3, 4, 4))
    assert npx.reshape(x, (-6, 2, -1, -4)).shape == (2, 4, 3, 3, 3, 4, 4)
    assert npx.reshape(x, (-5, -4)).shape == (24, 3, 3, 4, 4)
    assert npx.reshape(np.ones((8, 3, 2, 4, 8)), (-4, -1, 2, -6), reverse=True).shape == \
        (8, 3, 2, 4, 4, 2)


def test_set_np_switches():
    assert not npx.is_np_array()
    npx.set_np()
    try:
        assert npx.is_np_array() and npx.is_np_shape()
    finally:
        npx.reset_np()
    assert not npx.is_np_array()


def test_use_np_class_wraps_inherited_methods():
    # MXNet's use_np wraps inherited methods too: initialize() creates np parameters.
    @mx.util.use_np
    class Block(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = self.params.get('w', shape=(3, 2))

        def hybrid_forward(self, F, x, w):
            return F.np.dot(x, w)

    net = Block()
    net.initialize()
    assert type(net.w.data()) is np.ndarray
    assert type(net(np.ones((4, 3)))) is np.ndarray


class _Gluon2MLP(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = nn.Dense(8, activation='relu')
        self.out = nn.Dense(3)

    def forward(self, x):
        return npx.relu(self.out(self.hidden(x))) * 2 + 1


def test_gluon2_forward_hybridized_by_deferred_compute(np_mode, tmp_path):
    net = _Gluon2MLP()
    net.initialize()
    x = np.random.uniform(size=(4, 5))
    eager = net(x)
    net.hybridize()
    hybrid = net(x)
    assert type(hybrid) is np.ndarray
    assert onp.allclose(hybrid.asnumpy(), eager.asnumpy())
    assert 'fullyconnected' in net.hybridized_code()      # one compiled graph
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    assert net.out.weight.grad().shape == (3, 8)
    sym_file, params_file = net.export(str(tmp_path / 'mlp'))
    loaded = gluon.SymbolBlock.imports(sym_file, ['data'], params_file)
    assert onp.allclose(loaded(x).asnumpy(), eager.asnumpy(), atol=1e-6)


def test_gluon2_deferred_init_through_infer_shape(np_mode):
    class Scale(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = gluon.Parameter('w', shape=(0,), allow_deferred_init=True)

        def infer_shape(self, x):
            self.w.shape = (x.shape[-1],)

        def forward(self, x):
            return x * self.w.data()

    for hybridize in (False, True):
        net = Scale()
        net.initialize(mx.init.One())
        if hybridize:
            net.hybridize()
        assert net(np.ones((2, 4))).shape == (2, 4)
        assert net.w.shape == (4,)


def test_save_load_zero_dim(tmp_path):
    f = str(tmp_path / 'a.npx')
    npx.save(f, {'s': np.array(2.5), 'v': np.arange(3)})
    back = npx.load(f)
    assert back['s'].shape == () and float(back['s']) == 2.5
    assert back['v'].tolist() == [0.0, 1.0, 2.0]


def test_integer_arrays_are_differentiated_as_in_mxnet():
    x = np.arange(12, dtype='int32').reshape(3, 4)
    x.attach_grad()
    with autograd.record():
        y = x[1] * 2
    y.backward()
    assert x.grad.dtype == onp.int32
    assert x.grad.asnumpy().tolist() == [[0] * 4, [2] * 4, [0] * 4]


def test_backward_from_a_view_head():
    # the head is a view (reshape / 0-d index) of a recorded result: legacy arrays too
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    with autograd.record():
        v = (x * 2).reshape((6,))
    v.backward()
    assert x.grad.asnumpy().tolist() == [[2.0] * 3] * 2
    a = np.array(3.0)
    a.attach_grad()
    with autograd.record():
        b = (a * a)[()]
    b.backward()
    assert float(a.grad) == 6.0


def test_boolean_and_scalar_indices():
    a = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype='int32')
    assert a[np.array(True, dtype='bool')].shape == (1, 3, 3)
    assert a[np.array(False, dtype='bool')].shape == (0, 3, 3)
    assert a[np.array(0, dtype='int32')].tolist() == [1, 2, 3]     # 0-d int: basic index
    b = np.array([[True, False, True], [False, True, False], [True, False, True]], dtype='bool')
    assert a[b].tolist() == [1, 3, 5, 7, 9]
    assert a[:, b[1]].tolist() == [[2], [5], [8]]
    with pytest.raises(IndexError):
        np.ones((5, 4, 3))[np.array([True], dtype='bool')]
    c = np.zeros((2, 3))
    c[False, 1] = 8             # selects nothing
    c[0, np.array([True, False, True], dtype='bool')] = 5
    assert c.tolist() == [[5.0, 0.0, 5.0], [0.0, 0.0, 0.0]]


def test_setitem_of_recorded_value_is_refused():
    x = np.zeros((3, 4))
    y = np.ones((4,))
    y.attach_grad()
    with pytest.raises(mx.MXNetError, match='Inplace operations'):
        with autograd.record():
            x[0] = y


def test_order_other_than_c_is_not_implemented():
    with pytest.raises(NotImplementedError):
        np.empty((2,), order='F')
    with pytest.raises(NotImplementedError):
        np.ones((2,)).copy(order='F')


def test_hybridized_outputs_keep_their_class():
    @mx.util.use_np
    class NumpyOut(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.np.add(x, x), F.np.multiply(x, x)

    class LegacyOut(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x.as_nd_ndarray() + x.as_nd_ndarray(), x.as_nd_ndarray() * 2

    @mx.util.use_np
    class Mixed(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x.as_nd_ndarray() + 1, F.np.multiply(x, x)

    x = np.ones((2, 3))
    for block, cls in ((NumpyOut, np.ndarray), (LegacyOut, mx.nd.NDArray)):
        net = block()
        for hybridize in (False, True):
            if hybridize:
                net.hybridize()
            assert all(type(o) is cls for o in net(x))
    net = Mixed()
    with pytest.raises(TypeError):      # under np semantics every output is mx.np.ndarray
        net(x)
    net.hybridize()
    with pytest.raises(TypeError):
        net(x)


def test_np_hybrid_forward_deferred_init_through_np_symbols(np_mode):
    class Regression(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w1 = self.params.get('w1', shape=(0, 5), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w1):
            return F.npx.relu(x.dot(w1)).sum()

    net = Regression()
    net.initialize()
    net.hybridize()
    assert net(np.ones((4, 7))).shape == ()
    assert net.w1.shape == (7, 5)
    x = mx.sym.var('x').as_np_ndarray()
    assert (np.dot(x, x.T).sum()).infer_shape(x=(2, 3))[1] == [()]


def test_hybridized_zero_size_and_single_split(np_mode):
    class Split(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.np.split(x, 1)[0] + F.np.ones(x.shape[1:])

    for shape in ((0, 2), (3, 2)):
        net = Split()
        net.hybridize()
        assert net(np.ones(shape)).shape == shape


def test_multinomial_zero_sizes_leave_the_generator_usable():
    assert np.random.multinomial(10, [0.2, 0.8], size=(0, 2)).shape == (0, 2, 2)
    assert np.random.multinomial(10, []).size == 0
    assert np.random.uniform(size=(2,)).shape == (2,)


def test_gluon2_captured_constant_is_exported(np_mode, tmp_path):
    class Shift(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.offset = np.array([1.0, 2.0, 3.0])     # not a Parameter: a constant

        def forward(self, x):
            return x + self.offset

    net = Shift()
    net.hybridize()
    x = np.ones((2, 3))
    assert net(x).tolist() == [[2.0, 3.0, 4.0]] * 2
    sym_file, params_file = net.export(str(tmp_path / 'shift'))
    loaded = gluon.SymbolBlock.imports(sym_file, ['data'], params_file)
    assert loaded(x).tolist() == [[2.0, 3.0, 4.0]] * 2


def test_advanced_index_with_negative_step_slices():
    base = onp.arange(4 * 6 * 5).reshape(4, 6, 5).astype('float32')
    keys = [([0], [[1]], slice(None, None, -1)), ([1, 2], slice(None, None, -2)),
            (slice(None, None, -3), [1, 2]), (Ellipsis, [0, 2], slice(4, 1, -2)),
            (None, [1], slice(None, None, -1), Ellipsis, [3]), (slice(0, 3, -1), [1])]
    for key in keys:
        mx_key = tuple(np.array(k, dtype='int32') if isinstance(k, list) else k for k in key)
        on_key = tuple(onp.array(k) if isinstance(k, list) else k for k in key)
        assert np.array(base)[mx_key].asnumpy().tolist() == base[on_key].tolist(), key
    x = np.array(base)
    x.attach_grad()
    with autograd.record():
        y = x[np.array([1, 2], dtype='int32'), ::-2]
    y.backward()
    want = onp.zeros_like(base)
    want[[1, 2], ::-2] = 1
    assert x.grad.asnumpy().tolist() == want.tolist()
    x[np.array([1, 2], dtype='int32'), ::-2] = -5
    base[[1, 2], ::-2] = -5
    assert x.asnumpy().tolist() == base.tolist()


def test_tuple_and_range_indices_are_index_lists():
    base = onp.arange(3 * 5 * 4).reshape(3, 5, 4).astype('int32')
    for key in (([1, 2], slice(1, 3), (2, 3)), range(2), range(2, 0, -1), (range(2), [1])):
        x = np.array(base)
        assert x[key].asnumpy().tolist() == base[key].tolist(), key
        want = base.copy()
        want[key] = -1
        x[key] = -1
        assert x.asnumpy().tolist() == want.tolist(), key


def test_value_shape_longer_than_a_basic_index_result():
    a = np.zeros((2, 3, 4), dtype='int32')
    a[1, 2, 3] = np.array([[7]])            # leading ones of the value are dropped
    a[0, 1] = np.arange(4).reshape(1, 1, 4)
    assert int(a[1, 2, 3]) == 7 and a[0, 1].tolist() == [0, 1, 2, 3]
    b = np.zeros((3,))
    b[:] = np.ones((1, 1, 3))
    assert b.tolist() == [1.0, 1.0, 1.0]
    e = np.zeros((0,))
    e[:] = np.ones((1, 1, 0))
    assert e.shape == (0,)


def test_npx_nonzero_of_a_0d_array():
    # one row per element and one column: a 0-d array counts as a 1-element vector
    assert npx.nonzero(np.array(5.0)).shape == (1, 1)
    assert npx.nonzero(np.array(0.0)).shape == (0, 1)
    assert np.argwhere(np.array(5.0)).shape == (1, 0)      # NumPy's argwhere keeps ndim 0


def test_quantile_result_dtype():
    # float64 stays float64; every other dtype, float16 included, gives float32 (MXNet)
    for dtype, want in (('float16', 'float32'), ('int32', 'float32'), ('float64', 'float64')):
        a = np.array([[1, 2, 3], [4, 5, 6]], dtype=dtype)
        for method in ('linear', 'lower', 'higher', 'nearest', 'midpoint'):
            r = np.quantile(a, 0.4, axis=1, interpolation=method)
            assert r.dtype == onp.dtype(want)
            ref = onp.quantile(a.asnumpy().astype('float64'), 0.4, axis=1, method=method)
            assert onp.allclose(r.asnumpy(), ref, atol=1e-3)
        assert np.percentile(a, 50).dtype == onp.dtype(want)


def test_npx_names_are_real_operators():
    # a name npx exports is an operator or helper that runs, never a placeholder that raises
    for name in npx.__all__:
        assert getattr(npx, name) is not None, name
    assert npx.roi_pooling(np.arange(16.0).reshape(1, 1, 4, 4), np.array([[0, 0, 0, 3, 3]]),
                           pooled_size=(2, 2), spatial_scale=1.0).shape == (1, 1, 2, 2)


def test_unknown_parameter_dimensions_are_minus_one_under_np_shape():
    net = nn.Dense(4)
    net.initialize()
    assert net.weight.shape == (4, 0) and repr(net) == 'Dense(None -> 4, linear)'
    npx.set_np()
    try:
        assert net.weight.shape == (4, -1)
        assert repr(net) == 'Dense(-1 -> 4, linear)'
        assert 'shape=(4, -1)' in repr(net.weight)
        net(np.ones((2, 3)))
        assert net.weight.shape == (4, 3)
        p = gluon.Parameter('w', shape=(-1, 2))      # -1 given for unknown: stored as such
        p.shape = (5, 2)
        assert p.shape == (5, 2)
    finally:
        npx.reset_np()
    assert gluon.Parameter('v', shape=(-1, 2)).shape == (0, 2)
