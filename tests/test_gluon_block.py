"""Block and HybridBlock: naming, registration, parameter collection, initialisation on
several devices, hooks, casting, hybridize flags, deferred initialisation, summary, and
parameter files (structural names; files written by MXNet 1.9.1 load here and back)."""
import inspect
import re
import textwrap
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon, nd
from neomx.gluon import nn


class Model(gluon.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential()
            self.features.add(nn.Dense(8, activation='relu'), nn.Dense(4))
            self.out = nn.Dense(2)

    def forward(self, x):
        return self.out(nd.relu(self.features(x)))


def test_prefixes_and_name_scopes():
    with mx.sym.NameManager():
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Dense(3), nn.Dense(4), nn.Conv2D(2, 3), nn.MaxPool2D(), nn.BatchNorm())
        lone = nn.Dense(5)
        other = nn.HybridSequential(prefix='mynet_')
    assert net.prefix == 'hybridsequential0_' and net.name == 'hybridsequential0'
    assert [b.prefix for b in net._children.values()] == [
        'hybridsequential0_dense0_', 'hybridsequential0_dense1_', 'hybridsequential0_conv0_',
        'hybridsequential0_pool0_', 'hybridsequential0_batchnorm0_']
    assert lone.prefix == 'dense0_' and other.prefix == 'mynet_'
    names = list(net.collect_params().keys())
    assert names[:2] == ['hybridsequential0_dense0_weight', 'hybridsequential0_dense0_bias']
    assert 'hybridsequential0_batchnorm0_running_var' in names
    dense_act = nn.Dense(3, activation='relu', prefix='d_')
    assert dense_act.act.prefix == 'd_relu_'


def test_collect_params_select_and_params_of_children():
    net = Model(prefix='model_')
    all_names = list(net.collect_params().keys())
    assert len(all_names) == 6 and all(n.startswith('model_') for n in all_names)
    assert list(net.params.keys()) == []        # its own dict holds no child parameters
    weights = net.collect_params('.*weight')
    assert isinstance(weights, gluon.ParameterDict)
    assert sorted(weights.keys()) == sorted(n for n in all_names if n.endswith('weight'))
    assert list(net.collect_params('model_dense0_.*|.*out.*').keys()) == [
        'model_dense0_weight', 'model_dense0_bias']


def test_setattr_registration_and_type_change():
    class Net(gluon.Block):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(2)
            self.w = gluon.Parameter('extra', shape=(2,))

        def forward(self, x):
            return self.dense(x)
    net = Net()
    assert list(net._children) == ['dense'] and list(net._reg_params) == ['w']
    assert 'extra' in [p.name for p in net._reg_params.values()]
    with pytest.raises(TypeError, match='Changing attribute type for dense'):
        net.dense = 3
    net.register_child(nn.Dense(1), 'late')
    assert list(net._children) == ['dense', 'late']
    with pytest.raises(ValueError, match='Children of HybridBlock must also be HybridBlock'):
        nn.HybridSequential().add(Net())


def test_unregistered_container_warns():
    class Net(gluon.Block):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Dense(2)]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        Net().collect_params()
    assert any('unregistered container' in str(x.message) for x in w)


def test_forward_on_several_devices_and_gradients():
    net = Model()
    net.initialize(mx.init.Xavier(), ctx=[mx.cpu(0), mx.cpu(1)])
    x = np.random.RandomState(0).randn(4, 5).astype(np.float32)
    outs = []
    for ctx in (mx.cpu(0), mx.cpu(1)):
        xc = nd.array(x, ctx=ctx)
        with autograd.record():
            y = net(xc)
        y.backward()
        assert y.context == ctx
        outs.append(y.asnumpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)
    w = net.out.weight
    np.testing.assert_allclose(w.grad(mx.cpu(0)).asnumpy(), w.grad(mx.cpu(1)).asnumpy(),
                               rtol=1e-5)
    assert np.abs(w.grad(mx.cpu(0)).asnumpy()).sum() > 0
    net.zero_grad()
    assert (w.grad(mx.cpu(1)).asnumpy() == 0).all()


def test_reinitialised_parameters_are_picked_up():
    net = nn.Dense(2, in_units=3)
    net.initialize(mx.init.Zero())
    x = nd.ones((1, 3))
    assert (net(x).asnumpy() == 0).all()
    net.initialize(mx.init.One(), force_reinit=True)
    np.testing.assert_array_equal(net(x).asnumpy(), [[3, 3]])
    net.weight.set_data(nd.ones((2, 3)) * 2)
    np.testing.assert_array_equal(net(x).asnumpy(), [[6, 6]])


def test_deferred_initialisation_fills_shapes_at_first_call():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, kernel_size=3), nn.BatchNorm(), nn.Dense(5))
    net.initialize()
    assert net[0].weight.shape == (4, 0, 3, 3)
    # The name depends on how many Conv2D were made before (MXNet's global counters).
    assert re.fullmatch(r'conv\d+_weight', net[0].weight.name)
    with pytest.raises(gluon.DeferredInitializationError, match=net[0].weight.name):
        net[0].weight.data()
    y = net(nd.ones((2, 3, 6, 6)))
    assert y.shape == (2, 5)
    assert net[0].weight.shape == (4, 3, 3, 3)
    assert net[1].running_mean.shape == (4,)
    assert net[2].weight.shape == (5, 4 * 4 * 4)


def test_deferred_initialisation_error_names_the_parameter():
    class Bad(gluon.HybridBlock):
        def __init__(self):
            super().__init__(prefix='bad_')
            self.w = self.params.get('w', shape=(0, 3), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w):
            return x + F.sum(w)     # nothing tells the shape of w
    b = Bad()
    b.initialize()
    with pytest.raises(ValueError, match=r'bad_w.*\(2, 3\)'):
        b(nd.ones((2, 3)))


def test_infer_shape_and_type():
    net = nn.Dense(3)
    net.initialize()
    net.infer_shape(nd.ones((2, 7)))
    assert net.weight.shape == (3, 7)
    untyped = nn.Dense(3, dtype=None)
    untyped.infer_type(nd.ones((2, 7), dtype='float64'))
    assert np.dtype(untyped.weight.dtype) == np.float64


def test_hooks_apply_and_cast():
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    net.initialize()
    seen = []
    pre = net.register_forward_pre_hook(lambda blk, inp: seen.append(('pre', inp[0].shape)))
    post = net[0].register_forward_hook(lambda blk, inp, out: seen.append(('post', out.shape)))
    net(nd.ones((4, 2)))
    assert seen == [('pre', (4, 2)), ('post', (4, 3))]
    pre.detach()
    with post:
        pass
    net(nd.ones((4, 2)))
    assert len(seen) == 2
    names = []
    net.apply(lambda b: names.append(b.name))
    assert names[-1] == net.name and len(names) == 3
    net.cast('float64')
    assert net[0].weight.data().dtype == np.float64
    assert net(nd.ones((4, 2), dtype='float64')).dtype == np.float64


def test_hybridize_sets_active_recursively_and_dispatches(monkeypatch):
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    net.initialize()
    net.hybridize(static_alloc=True, static_shape=True)
    assert net._active and all(c._active for c in net._children.values())
    assert ('static_alloc', True) in net._flags
    calls = []
    from neomx.gluon import _hybrid
    real = _hybrid.cache_of
    monkeypatch.setattr(_hybrid, 'cache_of', lambda block: calls.append(block) or real(block))
    y = net(nd.ones((4, 2)))
    assert calls == [net] and y.shape == (4, 1)
    net.hybridize(False)
    assert not net._active and not net[0]._active
    net(nd.ones((4, 2)))
    assert calls == [net]
    seq = nn.Sequential()
    seq.add(nn.Dense(1))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        seq.hybridize()
    assert any('Consider using HybridSequential' in str(x.message) for x in w)
    assert seq[0]._active


def test_hybrid_block_on_symbols():
    net = nn.Dense(3, prefix='fc_')
    out = net(mx.sym.var('data'))
    assert isinstance(out, mx.sym.Symbol)
    assert out.list_arguments() == ['data', 'fc_weight', 'fc_bias']
    with pytest.raises(ValueError, match='mixed NDArrays and Symbols'):
        nn.HybridLambda(lambda F, a, b: a + b)(mx.sym.var('a'), [nd.ones((1,))])


def test_sequential_indexing_slicing_and_len():
    net = nn.HybridSequential(prefix='s_')
    net.add(nn.Dense(3), nn.Dense(4), nn.Dense(5))
    assert len(net) == 3 and net[1] is list(net._children.values())[1]
    tail = net[1:]
    assert isinstance(tail, nn.HybridSequential) and len(tail) == 2 and tail[0] is net[1]
    assert tail.prefix == 's_'
    seq = nn.Sequential()
    seq.add(nn.Dense(3), nn.Dense(3))
    assert isinstance(seq[:1], nn.Sequential) and len(seq[:1]) == 1
    assert repr(net).startswith('HybridSequential(\n  (0): Dense(None -> 3, linear)')


def test_lambdas():
    x = nd.array([-1.0, 2.0])
    assert nn.Lambda('relu')(x).asnumpy().tolist() == [0.0, 2.0]
    assert nn.Lambda(lambda a: a * 3)(x).asnumpy().tolist() == [-3.0, 6.0]
    assert nn.HybridLambda('relu')(x).asnumpy().tolist() == [0.0, 2.0]
    with pytest.raises(mx.MXNetError, match='not found'):
        nn.Lambda('no_such_function')
    assert repr(nn.HybridLambda('tanh')) == 'HybridLambda(tanh)'


def test_summary(capsys):
    net = nn.HybridSequential()
    net.add(nn.Dense(8, in_units=4, activation='relu'), nn.Dense(2, in_units=8))
    net.initialize()
    net.summary(nd.ones((3, 4)))
    out = capsys.readouterr().out
    assert 'Activation-1' in out and 'Dense-3' in out and '(3, 8)' in out
    assert 'Total params: 58' in out and 'Trainable params: 58' in out
    net.hybridize()
    with pytest.raises(AssertionError, match='must not be hybridized'):    # MXNet's assert
        net.summary(nd.ones((3, 4)))


# -- parameter files --------------------------------------------------------------------------

def test_save_parameters_uses_structural_names(tmp_path):
    net = Model()
    net.initialize()
    net(nd.ones((1, 5)))
    path = str(tmp_path / 'm.params')
    net.save_parameters(path)
    assert sorted(nd.load(path)) == ['features.0.bias', 'features.0.weight', 'features.1.bias',
                                     'features.1.weight', 'out.bias', 'out.weight']
    other = Model()               # another prefix (model1_): structural names still match
    other.load_parameters(path)
    x = nd.array(np.random.RandomState(1).randn(2, 5))
    np.testing.assert_allclose(other(x).asnumpy(), net(x).asnumpy(), rtol=1e-6)


def test_params_trained_on_two_devices_load_on_one(tmp_path):
    net = Model()
    net.initialize(mx.init.Xavier(), ctx=[mx.cpu(0), mx.cpu(1)])
    x = nd.array(np.random.RandomState(2).randn(3, 5))
    net(x)
    path = str(tmp_path / 'two.params')
    net.save_parameters(path)
    assert not any(k.startswith('module.') or ':' in k for k in nd.load(path))
    single = Model()
    single.load_parameters(path, ctx=mx.cpu(0))
    assert single.out.weight.list_ctx() == [mx.cpu(0)]
    np.testing.assert_allclose(single(x).asnumpy(), net(x).asnumpy(), rtol=1e-6)
    again = Model()
    again.load_parameters(path, ctx=[mx.cpu(2), mx.cpu(3)])
    np.testing.assert_allclose(again(x.as_in_context(mx.cpu(3))).asnumpy(), net(x).asnumpy(),
                               rtol=1e-6)


def test_load_parameters_errors_and_options(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=3))
    net.initialize()
    path = str(tmp_path / 'a.params')
    net.save_parameters(path)
    bigger = nn.HybridSequential()
    bigger.add(nn.Dense(2, in_units=3), nn.Dense(1, in_units=2))
    with pytest.raises(mx.MXNetError, match=re.escape("Parameter '1.weight' is missing in file")):
        bigger.load_parameters(path)
    bigger.load_parameters(path, allow_missing=True)
    bigger[1].initialize()
    bigger.save_parameters(path)
    with pytest.raises(mx.MXNetError, match="'1.weight' loaded from file .* is not present"):
        net.load_parameters(path)
    net.load_parameters(path, ignore_extra=True)
    wrong = nn.HybridSequential()
    wrong.add(nn.Dense(2, in_units=4))
    with pytest.raises(AssertionError, match='shape incompatible'):
        wrong.load_parameters(path, ignore_extra=True)


def test_legacy_prefixed_files_load(tmp_path):
    net = nn.HybridSequential(prefix='net_')
    with net.name_scope():
        net.add(nn.Dense(2, in_units=3))
    net.initialize(mx.init.One())
    path = str(tmp_path / 'legacy.params')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        net.save_params(path)
    assert sorted(nd.load(path)) == ['dense0_bias', 'dense0_weight']
    other = nn.HybridSequential(prefix='other_')
    with other.name_scope():
        other.add(nn.Dense(2, in_units=3))
    other.load_parameters(path)
    np.testing.assert_array_equal(other[0].weight.data().asnumpy(), 1)


_MXNET_NET = '''
class Net(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super(Net, self).__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential()
            self.features.add(nn.Conv2D(4, kernel_size=3, padding=1), nn.BatchNorm(),
                              nn.Activation('relu'), nn.MaxPool2D(), nn.Flatten())
            self.head = nn.HybridSequential()
            self.head.add(nn.Dense(8, activation='tanh'), nn.Dropout(0.5), nn.Dense(3))
    def hybrid_forward(self, F, x):
        return self.head(self.features(x))
'''


def _same_net():
    scope = {'gluon': gluon, 'nn': nn}
    exec(_MXNET_NET, scope)
    return scope['Net']()


def test_mxnet_params_files_load_both_ways(tmp_path, mxnet_ref):
    d = str(tmp_path)
    x = np.random.RandomState(3).randn(2, 3, 6, 6).astype(np.float32)
    np.save(d + '/x.npy', x)
    mxnet_ref('import numpy as np, mxnet as mx\nfrom mxnet import gluon, autograd\n'
              'from mxnet.gluon import nn\n' +
              _MXNET_NET + '''
mx.random.seed(0)
net = Net()
net.initialize(mx.init.Xavier())
x = mx.nd.array(np.load('{d}/x.npy'))
with autograd.record():
    loss = net(x).sum()
loss.backward()              # moves the BatchNorm running statistics
net.save_parameters('{d}/mx.params')
np.save('{d}/mx_out.npy', net(x).asnumpy())
'''.format(d=d))
    net = _same_net()
    net.load_parameters(d + '/mx.params')
    assert net.features[1].running_mean.data().asnumpy().any()
    ours = net(nd.array(x)).asnumpy()
    np.testing.assert_allclose(ours, np.load(d + '/mx_out.npy'), rtol=1e-4, atol=1e-5)
    # and back: a file written here loads in MXNet and gives the same outputs
    net.features[0].weight.set_data(net.features[0].weight.data() * 0.5)
    net.save_parameters(d + '/neo.params')
    np.save(d + '/neo_out.npy', net(nd.array(x)).asnumpy())
    out = mxnet_ref('import numpy as np, mxnet as mx\nfrom mxnet import gluon\n'
                    'from mxnet.gluon import nn\n' + _MXNET_NET + '''
net = Net()
net.load_parameters('{d}/neo.params')
y = net(mx.nd.array(np.load('{d}/x.npy'))).asnumpy()
print(float(np.abs(y - np.load('{d}/neo_out.npy')).max()))
'''.format(d=d))
    assert float(out.strip().splitlines()[-1]) < 1e-4


def test_mxnet_reads_prefixed_collect_params_files(tmp_path, mxnet_ref):
    d = str(tmp_path)
    net = nn.Dense(3, in_units=2, prefix='fc_')
    net.initialize(mx.init.Normal())
    net.collect_params().save(d + '/p.params')
    out = mxnet_ref('''
import mxnet as mx, numpy as np
from mxnet.gluon import nn
net = nn.Dense(3, in_units=2, prefix='fc_')
net.collect_params().load('{d}/p.params')
print(sorted(mx.nd.load('{d}/p.params')), float(net.weight.data().asnumpy().sum()))
'''.format(d=d))
    names, total = out.strip().rsplit(' ', 1)
    assert names == "['fc_bias', 'fc_weight']"
    assert abs(float(total) - float(net.weight.data().asnumpy().sum())) < 1e-5


_NAMING = '''
with NameManager():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, activation='relu'), nn.BatchNorm(), nn.Activation('relu'),
                nn.MaxPool2D(), nn.GlobalAvgPool2D(), nn.Dense(3), nn.Dropout(0.1),
                nn.Embedding(3, 2), nn.LayerNorm(), nn.PReLU(), nn.Conv2DTranspose(2, 2),
                nn.HybridLambda('relu'))
    a, b, c, d = nn.Dense(2), nn.Activation('relu'), nn.HybridSequential(), nn.Sequential()

    class MyBlock(gluon.HybridBlock):
        def __init__(self, **kw):
            super(MyBlock, self).__init__(**kw)
            self.fc = nn.Dense(2)

        def hybrid_forward(self, F, x):
            return self.fc(x)
    m = MyBlock()
    names = (list(net.collect_params().keys()),
             [blk.prefix for blk in [a, b, c, d, m, m.fc]] + list(m.collect_params().keys()))
'''


def test_names_match_mxnet(mxnet_ref):
    out = mxnet_ref('import mxnet as mx\nfrom mxnet import gluon\nfrom mxnet.gluon import nn\n'
                    'from mxnet.name import NameManager\n' + _NAMING + 'print(repr(names))\n')
    scope = {'mx': mx, 'gluon': gluon, 'nn': nn, 'NameManager': mx.sym.NameManager}
    exec(_NAMING, scope)
    assert repr(scope['names']) == out.strip().splitlines()[-1]


def _two_level_net(gluon):
    class Chain(gluon.nn.Block):
        """Children kept under names that depend on how many blocks exist (as in MXNet's
        own test of Block.save): only the saved structure can match them up again."""
        def add(self, block):
            self._children[block.name + str(len(self._children))] = block

        def forward(self, x):
            for block in self._children.values():
                x = block(x)
            return x
    inner = Chain()
    inner.add(gluon.nn.Dense(5, in_units=4))
    net = Chain()
    net.add(inner)
    net.add(gluon.nn.Dense(3, in_units=5))
    return net


def test_block_save_load_restores_names(tmp_path, mxnet_ref):
    """Block.save writes the structure (-model.json) and the parameters; load into a model
    built again the same way (its blocks numbered differently) gives the same outputs. A
    model saved by MXNet 1.9.1 loads the same way."""
    x = np.arange(8, dtype=np.float32).reshape(2, 4) / 8
    net1 = _two_level_net(gluon)
    net1.initialize(mx.init.Uniform(1.0))
    net1.hybridize()
    out1 = net1(nd.array(x)).asnumpy()
    net1.save(str(tmp_path / 'mine'))
    _two_level_net(gluon)                     # shifts the automatic block names
    net2 = _two_level_net(gluon)
    assert list(net2._children) != list(net1._children)
    net2.load(str(tmp_path / 'mine'))
    assert list(net2._children) == list(net1._children)
    np.testing.assert_allclose(net2(nd.array(x)).asnumpy(), out1, rtol=1e-6)
    mxnet_ref(textwrap.dedent('''
        import inspect, numpy as np, mxnet as mx
        from mxnet import gluon
        exec(%r)
        net = _two_level_net(gluon)
        net.initialize(mx.init.Uniform(1.0))
        x = mx.nd.array(np.arange(8, dtype=np.float32).reshape(2, 4) / 8)
        np.save(r'%s', net(x).asnumpy())
        net.save(r'%s')
    ''') % (textwrap.dedent(inspect.getsource(_two_level_net)), tmp_path / 'ref.npy',
            tmp_path / 'theirs'))
    net3 = _two_level_net(gluon)
    net3.load(str(tmp_path / 'theirs'))
    np.testing.assert_allclose(net3(nd.array(x)).asnumpy(), np.load(tmp_path / 'ref.npy'),
                               rtol=1e-6)


def test_hybridized_call_errors_as_mxnet():
    """Once hybridized: a number, a Symbol mixed with arrays, arrays on two devices, or None
    where the traced call had an array are ValueErrors (MXNet's checks)."""
    class Add(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b=None):
            return a if b is None else a + b

    for args in [(nd.ones((2,)), 1), (nd.ones((2,)), mx.sym.var('a')),
                 (nd.ones((2,), ctx=mx.cpu(1)), nd.ones((2,), ctx=mx.cpu(2)))]:
        net = Add()
        net.hybridize()
        with pytest.raises(ValueError):
            net(*args)
    with pytest.raises(ValueError, match='mixed NDArrays and Symbols'):
        Add()(nd.ones((2,)), mx.sym.var('a'))        # not hybridized: the same check
    net = Add()
    net.hybridize()
    assert net(nd.ones((2,)), None).asnumpy().tolist() == [1, 1]
    assert net(nd.ones((2,))).asnumpy().tolist() == [1, 1]   # trailing None: its default
    with pytest.raises(ValueError, match='argument structure'):
        net(nd.ones((2,)), nd.ones((2,)))


def test_symbol_block_export_keeps_its_input_names(tmp_path):
    # as MXNet 1.9.1's: the exported graph's input is the SymbolBlock's own variable
    x = mx.sym.var('x')
    net = gluon.SymbolBlock(mx.sym.FullyConnected(x, num_hidden=2, name='fc'), [x])
    net.initialize()
    net.hybridize()
    y = net(nd.ones((1, 3)))
    sym_file, params_file = net.export(str(tmp_path / 'sb'))
    assert mx.sym.load(sym_file).list_inputs() == ['x', 'fc_weight', 'fc_bias']
    back = gluon.SymbolBlock.imports(sym_file, ['x'], params_file)
    assert (back(nd.ones((1, 3))) == y).asnumpy().all()


def test_symbol_block_rejects_row_sparse_variables():
    data = mx.sym.var('data')
    out = mx.sym.dot(data, mx.sym.var('weight', stype='row_sparse'))
    with pytest.raises(AssertionError, match="storage type is 'row_sparse'"):
        gluon.SymbolBlock(out, data)
    assert gluon.nn.SymbolBlock is gluon.SymbolBlock


def test_sparse_parameters_in_blocks():
    with pytest.raises(AssertionError, match="must be one of 'default'"):
        gluon.Parameter('w', shape=(2, 2), stype='invalid')
    params = gluon.ParameterDict('net_')
    params.get('weight', shape=(3, 3), stype='row_sparse')
    params.get('bias', shape=(3,))
    net = nn.Dense(3, in_units=3, params=params)
    net.initialize()
    with pytest.raises(RuntimeError, match='row_sparse_data'):
        net(nd.ones((1, 3)))                  # a block reads its parameters with data()

