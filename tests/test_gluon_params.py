"""Parameter, Constant and ParameterDict: copies per context, gradients, deferred
initialisation, grad_req, casting, saving and loading."""
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon, nd
from neomx.gluon import Parameter, ParameterDict


def test_initialize_on_several_contexts_gives_equal_copies():
    p = Parameter('w', shape=(3, 4), init=mx.init.Xavier())
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    assert p.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    a, b = p.list_data()
    assert a.context == mx.cpu(0) and b.context == mx.cpu(1)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert p.data(mx.cpu(1)) is b
    assert [g.context for g in p.list_grad()] == [mx.cpu(0), mx.cpu(1)]
    with mx.cpu(1):
        assert p.data() is b            # the current context picks the copy
    with pytest.raises(RuntimeError, match=r"Parameter 'w' was not initialized on context "
                                           r"cpu\(2\)"):
        p.data(mx.cpu(2))


def test_uninitialized_and_deferred_errors_name_the_parameter():
    p = Parameter('fc_weight', shape=(4, 0), allow_deferred_init=True)
    with pytest.raises(RuntimeError, match="Parameter 'fc_weight' has not been initialized"):
        p.data()
    p.initialize()
    with pytest.raises(gluon.DeferredInitializationError, match="'fc_weight'.*deferred"):
        p.data()
    assert p.list_ctx() == [mx.cpu(0)]
    p.shape = (4, 7)
    p._finish_deferred_init()
    assert p.data().shape == (4, 7)
    q = Parameter('q', shape=(2, 0))
    with pytest.raises(ValueError, match=r"Cannot initialize Parameter 'q' because it has "
                                         r"invalid shape: \(2, 0\)"):
        q.initialize()


def test_shape_setter_fills_unknown_dims_only():
    p = Parameter('w', shape=(0, 3))
    p.shape = (5, 3)
    assert p.shape == (5, 3)
    with pytest.raises(AssertionError, match='incompatible'):
        p.shape = (5, 4)


def test_gradients_flow_into_each_copy():
    p = Parameter('w', shape=(2,), init=mx.init.One())
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    for ctx, k in ((mx.cpu(0), 2.0), (mx.cpu(1), 3.0)):
        with autograd.record():
            y = (p.data(ctx) * k).sum()
        y.backward()
    np.testing.assert_array_equal(p.grad(mx.cpu(0)).asnumpy(), [2, 2])
    np.testing.assert_array_equal(p.grad(mx.cpu(1)).asnumpy(), [3, 3])
    p.zero_grad()
    assert (p.grad(mx.cpu(0)).asnumpy() == 0).all()


def test_grad_req_add_null_and_differentiable():
    p = Parameter('w', shape=(2,), init=mx.init.One(), grad_req='add')
    p.initialize()
    for _ in range(2):
        with autograd.record():
            y = (p.data() * 2).sum()
        y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [4, 4])
    data = p.data()
    p.grad_req = 'null'
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        p.grad()
    assert p.data() is data             # the same array, no longer recorded
    p.grad_req = 'write'
    with autograd.record():
        y = (p.data() * 5).sum()
    y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [5, 5])
    frozen = Parameter('f', shape=(2,), differentiable=False)
    assert frozen.grad_req == 'null'
    frozen.grad_req = 'write'
    assert frozen.grad_req == 'null'
    with pytest.raises(AssertionError, match="grad_req must be one of"):
        Parameter('g', grad_req='sometimes')


def test_force_reinit_and_warning():
    p = Parameter('w', shape=(2,), init='zeros')
    p.initialize()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        p.initialize(init=mx.init.One())
    assert any('already initialized' in str(x.message) for x in w)
    assert (p.data().asnumpy() == 0).all()
    p.initialize(init=mx.init.One(), force_reinit=True)
    assert (p.data().asnumpy() == 1).all()


def test_set_data_reset_ctx_and_reduce():
    p = Parameter('w', shape=(2,), init='zeros')
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    p.set_data(nd.array([1, 2]))
    for d in p.list_data():
        np.testing.assert_array_equal(d.asnumpy(), [1, 2])
    p.data(mx.cpu(1))[:] = nd.array([3, 4], ctx=mx.cpu(1))
    np.testing.assert_array_equal(p._reduce().asnumpy(), [2, 3])     # the average
    p.reset_ctx(mx.cpu(2))
    assert p.list_ctx() == [mx.cpu(2)]
    np.testing.assert_array_equal(p.data(mx.cpu(2)).asnumpy(), [2, 3])
    # set_data before a deferred initialisation is the value it starts from
    q = Parameter('q', shape=(0,), allow_deferred_init=True)
    q.initialize()
    q.set_data(nd.array([7, 8, 9]))
    q._finish_deferred_init()
    np.testing.assert_array_equal(q.data().asnumpy(), [7, 8, 9])


def test_cast_keeps_gradients_working():
    p = Parameter('w', shape=(2,), init='ones')
    p.initialize()
    p.cast('float64')
    assert p.data().dtype == np.float64 and p.grad().dtype == np.float64
    with autograd.record():
        y = (p.data() * 3).sum()
    y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [3, 3])


def test_constant():
    c = gluon.Constant('c', [[1, 2], [3, 4]])
    assert c.grad_req == 'null'
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        c.grad_req = 'write'
    assert c.grad_req == 'null' and w
    c.initialize()
    np.testing.assert_array_equal(c.data().asnumpy(), [[1, 2], [3, 4]])
    assert repr(c).startswith('Constant c (shape=(2, 2)')


def test_parameter_dict_get_shares_and_checks():
    shared = ParameterDict('net_')
    w = shared.get('weight', shape=(2, 0))
    d = ParameterDict('net_', shared=shared)
    assert d.get('weight') is w
    assert d.get('weight', shape=(2, 5)) is w and w.shape == (2, 5)
    with pytest.raises(AssertionError, match="desired attribute does not match"):
        d.get('weight', shape=(3, 5))
    assert list(d.keys()) == ['net_weight'] and 'net_weight' in d and len(d) == 1
    const = d.get_constant('const', [1.0, 2.0])
    assert d.get_constant('const') is const
    with pytest.raises(KeyError, match='No constant named'):
        d.get_constant('missing')
    other = ParameterDict('net_')
    other.get('weight')
    with pytest.raises(AssertionError, match='different Parameters with the same name'):
        d.update(other)


def test_parameter_dict_initialize_setattr_zero_grad_reset_ctx():
    d = ParameterDict('m_')
    d.get('w', shape=(2, 2))
    d.get('b', shape=(2,), init='ones')
    d.initialize(mx.init.Constant(0.5), ctx=[mx.cpu(0), mx.cpu(1)])
    np.testing.assert_array_equal(d['m_w'].data().asnumpy(), 0.5)    # current context
    np.testing.assert_array_equal(d['m_w'].data(mx.cpu(1)).asnumpy(), 0.5)
    np.testing.assert_array_equal(d['m_b'].data(mx.cpu(0)).asnumpy(), 1)
    assert sorted(map(str, d.list_ctx())) == ['cpu(0)', 'cpu(1)']
    d.setattr('lr_mult', 0.1)
    assert all(p.lr_mult == 0.1 for p in d.values())
    d.setattr('grad_req', 'add')
    with autograd.record():
        y = (d['m_w'].data(mx.cpu(0)) * 2).sum()
    y.backward()
    assert (d['m_w'].grad(mx.cpu(0)).asnumpy() == 2).all()
    d.zero_grad()
    assert (d['m_w'].grad(mx.cpu(0)).asnumpy() == 0).all()
    d.reset_ctx(mx.cpu(3))
    assert d.list_ctx() == [mx.cpu(3)]
    assert 'm_ (' in repr(d) and 'Parameter m_w (shape=(2, 2)' in repr(d)


def test_parameter_dict_save_load_with_prefixes(tmp_path):
    d = ParameterDict('net_')
    d.get('weight', shape=(2, 3), init='ones')
    d.get('bias', shape=(2,), init='zeros')
    d.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    path = str(tmp_path / 'p.params')
    d.save(path, strip_prefix='net_')
    assert sorted(nd.load(path)) == ['bias', 'weight']
    e = ParameterDict('other_')
    e.get('weight', shape=(2, 0), allow_deferred_init=True)
    e.get('bias', shape=(2,))
    e.load(path, ctx=mx.cpu(0), restore_prefix='other_')
    assert e['other_weight'].shape == (2, 3)
    np.testing.assert_array_equal(e['other_weight'].data().asnumpy(), 1)
    f = ParameterDict('f_')
    f.get('weight', shape=(2, 3))
    with pytest.raises(AssertionError, match="'bias' loaded from .* is not present"):
        f.load(path, restore_prefix='f_')
    f.load(path, restore_prefix='f_', ignore_extra=True)
    g = ParameterDict('g_')
    g.get('weight', shape=(2, 3))
    g.get('scale', shape=(1,))
    with pytest.raises(AssertionError, match="'scale' is missing"):
        g.load(path, restore_prefix='g_', ignore_extra=True)
    h = ParameterDict('h_')
    h.get('weight', shape=(2, 3), dtype='float64')
    with pytest.raises(AssertionError, match='dtype incompatible'):
        h.load(path, restore_prefix='h_', ignore_extra=True)
    h.load(path, restore_prefix='h_', ignore_extra=True, cast_dtype=True)
    assert h['h_weight'].data().dtype == np.float64


def test_var_is_a_symbol_with_the_parameter_name():
    p = Parameter('fc_weight', shape=(3, 4), lr_mult=2.0)
    v = p.var()
    assert isinstance(v, mx.sym.Symbol) and v.name == 'fc_weight'
    assert p.var() is v


def test_seed_makes_initialisation_reproducible():
    def weights():
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Dense(4, in_units=3), gluon.nn.Conv2D(2, 3, in_channels=1))
        net.initialize(mx.init.Xavier(), ctx=[mx.cpu(0), mx.cpu(1)])
        return [p.data(mx.cpu(1)).asnumpy() for p in net.collect_params().values()]
    mx.random.seed(11)
    first = weights()
    mx.random.seed(11)
    second = weights()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(weights()[0], first[0])


def test_load_with_saved_dtype_casts_initialised_arrays(tmp_path):
    """cast_dtype with dtype_source='saved' gives already initialised parameters the file's
    dtypes (their arrays too), and dtype then is the numpy type, as in MXNet."""
    src = gluon.ParameterDict('')
    src.get('w0', shape=(2, 2), dtype='float32')
    src.get('w1', shape=(2, 2), dtype='int8')
    src.initialize(mx.init.One())
    src.save(str(tmp_path / 'p.params'))
    dst = gluon.ParameterDict('')
    dst.get('w0', shape=(2, 2), dtype='float16')
    dst.get('w1', shape=(2, 2), dtype='float64')
    dst.load(str(tmp_path / 'p.params'), cast_dtype=True, dtype_source='current')
    assert (dst['w0'].data().dtype, dst['w1'].data().dtype) == (np.float16, np.float64)
    dst.load(str(tmp_path / 'p.params'), cast_dtype=True, dtype_source='saved')
    assert (dst['w0'].data().dtype, dst['w1'].data().dtype) == (np.float32, np.int8)
    assert dst['w0'].dtype is np.float32


class _Doubled(Parameter):
    """A parameter computing its array at each data() call (as a weight-drop wrapper does)."""

    def __init__(self, p):
        super().__init__(p.name, grad_req=p.grad_req, shape=p.shape, dtype=p.dtype)
        self._data, self._grad = p._data, p._grad
        self._ctx_list, self._ctx_map = p._ctx_list, p._ctx_map
        self.calls = 0

    def data(self, ctx=None):
        self.calls += 1
        return self._check_and_get(self._data, ctx) * 2


@pytest.mark.parametrize('hybridize', [False, True])
def test_a_replaced_parameter_and_data_per_call(hybridize):
    # A block asks a parameter whose class overrides data() at every call, and sees a
    # parameter replaced in its registry (its cached arrays are dropped), as MXNet's blocks
    # call data() each time.
    net = gluon.nn.Dense(2, in_units=2, use_bias=False)
    net.initialize(mx.init.One())
    if hybridize:
        net.hybridize()
    x = nd.ones((1, 2))
    assert net(x).asnumpy().tolist() == [[2, 2]]
    doubled = _Doubled(net.weight)
    net._reg_params['weight'] = doubled
    assert net(x).asnumpy().tolist() == [[4, 4]]
    net(x)
    assert doubled.calls >= 2
    with autograd.record():
        y = net(x).sum()
    y.backward()
    assert net.weight.grad().asnumpy().tolist() == [[2, 2], [2, 2]]
    del net._reg_params['weight']
    net._reg_params['weight'] = net.weight
    assert net(x).asnumpy().tolist() == [[2, 2]]
