"""Initializers: name-based dispatch, the distributions and their scales, registration,
reproducibility under mx.random.seed."""
import json
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx import init, nd


def _fill(initializer, name, shape):
    arr = nd.zeros(shape)
    initializer(init.InitDesc(name), arr)
    return arr.asnumpy()


def test_mx_init_and_mx_initializer_are_the_same_module():
    assert mx.init is mx.initializer
    assert isinstance(mx.init.Xavier(), mx.initializer.Initializer)


def test_name_based_dispatch():
    u = init.Uniform(0.5)
    assert (_fill(u, 'fc_bias', (3,)) == 0).all()
    assert (_fill(u, 'bn_gamma', (3,)) == 1).all()
    assert (_fill(u, 'bn_beta', (3,)) == 0).all()
    assert (_fill(u, 'bn_moving_mean', (3,)) == 0).all()
    assert (_fill(u, 'bn_moving_var', (3,)) == 1).all()
    assert (_fill(u, 'bn_running_mean', (3,)) == 0).all()
    assert (_fill(u, 'bn_running_var', (3,)) == 1).all()
    w = _fill(u, 'fc_weight', (50, 40))
    assert np.abs(w).max() <= 0.5 and w.std() > 0.1
    with pytest.raises(mx.MXNetError, match='Unknown initialization pattern for fc_scale'):
        _fill(u, 'fc_scale', (3,))


def test_own_initializer_in_attrs_wins():
    arr = nd.zeros((2, 2))
    init.Uniform()(init.InitDesc('fc_bias', {'__init__': 'ones'}), arr)
    assert (arr.asnumpy() == 1).all()
    init.Uniform()(init.InitDesc('fc_bias', {'__init__': init.Constant(3)}), arr)
    assert (arr.asnumpy() == 3).all()
    init.Uniform()(init.InitDesc('x', {'__init__': init.Constant(7).dumps()}), arr)
    assert (arr.asnumpy() == 7).all()


def test_constant_zero_one():
    assert (_fill(init.Zero(), 'a_weight', (2, 3)) == 0).all()
    assert (_fill(init.One(), 'a_weight', (2, 3)) == 1).all()
    assert (_fill(init.Constant(0.25), 'a_weight', (2, 3)) == 0.25).all()
    np.testing.assert_array_equal(_fill(init.Constant([1, 2, 3]), 'a_weight', (2, 3)),
                                  [[1, 2, 3], [1, 2, 3]])


def test_normal_and_uniform_statistics():
    mx.random.seed(1)
    w = _fill(init.Normal(0.5), 'w_weight', (200, 100))
    assert abs(w.std() - 0.5) < 0.02 and abs(w.mean()) < 0.02
    w = _fill(init.Uniform(), 'w_weight', (200, 100))
    assert np.abs(w).max() <= 0.07 and abs(w.std() - 0.07 / np.sqrt(3)) < 0.003


@pytest.mark.parametrize('factor_type,rnd_type', [('avg', 'uniform'), ('in', 'gaussian'),
                                                  ('out', 'uniform')])
def test_xavier_scales(factor_type, rnd_type):
    shape = (64, 32, 3, 3)
    fan_in, fan_out = 32 * 9, 64 * 9
    factor = {'avg': (fan_in + fan_out) / 2, 'in': fan_in, 'out': fan_out}[factor_type]
    scale = np.sqrt(2.0 / factor)
    w = _fill(init.Xavier(rnd_type=rnd_type, factor_type=factor_type, magnitude=2), 'c_weight',
              shape)
    if rnd_type == 'uniform':
        assert np.abs(w).max() <= scale * (1 + 1e-6)
        assert abs(w.std() - scale / np.sqrt(3)) < 0.05 * scale
    else:
        assert abs(w.std() - scale) < 0.05 * scale
    with pytest.raises(mx.MXNetError, match='requires at least 2D'):
        _fill(init.Xavier(), 'v_weight', (5,))


def test_msra_prelu_and_orthogonal():
    w = _fill(init.MSRAPrelu(factor_type='in', slope=0), 'w_weight', (100, 50))
    assert abs(w.std() - np.sqrt(2.0 / 50)) < 0.02
    q = _fill(init.Orthogonal(scale=1.0), 'w_weight', (8, 20))
    np.testing.assert_allclose(q @ q.T, np.eye(8), atol=1e-5)
    q = _fill(init.Orthogonal(scale=2.0, rand_type='normal'), 'w_weight', (20, 8))
    np.testing.assert_allclose(q.T @ q, 4 * np.eye(8), atol=1e-4)


def test_mixed_and_load(tmp_path):
    m = init.Mixed(['fc.*', '.*'], [init.Constant(5), init.One()])
    a, b = nd.zeros((2,)), nd.zeros((2,))
    m(init.InitDesc('fc_weight'), a)
    m(init.InitDesc('conv_weight'), b)
    assert (a.asnumpy() == 5).all() and (b.asnumpy() == 1).all()
    path = str(tmp_path / 'w.params')
    nd.save(path, {'arg:fc_weight': nd.ones((2, 2)) * 4})
    loader = init.Load(path, default_init=init.Zero())
    w, c = nd.zeros((2, 2)), nd.ones((3,))
    loader('fc_weight', w)
    loader(init.InitDesc('other_weight'), c)
    assert (w.asnumpy() == 4).all() and (c.asnumpy() == 0).all()
    with pytest.raises(mx.MXNetError, match='shape mismatch'):
        loader('fc_weight', nd.zeros((3, 3)))


def test_register_create_and_dumps():
    @init.register
    class Halves(init.Initializer):
        def _init_weight(self, name, arr):
            arr[:] = 0.5
    assert isinstance(init.create('halves'), Halves)
    assert isinstance(init.create('zeros'), init.Zero)
    x = init.create('xavier', magnitude=2.5)
    assert x.magnitude == 2.5
    dumped = x.dumps()
    assert json.loads(dumped) == ['xavier', {'rnd_type': 'uniform', 'factor_type': 'avg',
                                             'magnitude': 2.5}]
    assert init.create(dumped) == x
    same = init.Normal(0.3)
    assert init.create(same) is same
    with pytest.raises(mx.MXNetError, match="'nosuch' is not registered"):
        init.create('nosuch')


def test_seed_reproduces_draws():
    mx.random.seed(123)
    a = _fill(init.Xavier(), 'w_weight', (4, 5))
    mx.random.seed(123)
    b = _fill(init.Xavier(), 'w_weight', (4, 5))
    c = _fill(init.Xavier(), 'w_weight', (4, 5))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(b, c)


def test_legacy_string_descriptor_warns():
    arr = nd.zeros((2,))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        init.Uniform()('fc_bias', arr)
    assert any(issubclass(x.category, DeprecationWarning) for x in w)
    assert (arr.asnumpy() == 0).all()


def test_bilinear():
    w = _fill(init.Bilinear(), 'up_weight', (1, 1, 4, 4))
    np.testing.assert_allclose(w[0, 0, 0], [0.0625, 0.1875, 0.1875, 0.0625])


def test_constant_dumps_keeps_json_kwargs():
    """Constant.dumps of an array value writes it as a list and keeps it so in _kwargs (as
    MXNet's, whose own test compares with json.dumps of _kwargs); filling is unchanged."""
    for value in (nd.ones((2, 3)), np.ones((2, 3))):
        c = init.Constant(value)
        assert c.dumps() == json.dumps(['constant', c._kwargs])
        assert json.loads(c.dumps())[1]['value'] == [[1.0] * 3] * 2
        assert (_fill(c, 'a_weight', (2, 3)) == 1).all()
    assert init.Constant(1).dumps() == '["constant", {"value": 1}]'
