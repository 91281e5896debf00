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
