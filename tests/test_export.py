"""HybridBlock.export and SymbolBlock: files that go both ways between neomx and MXNet 1.9.1."""
import json

import numpy as np
import pytest

import neomx as mx
from neomx import initializer, nd
from neomx.base import MXNetError
from neomx.gluon import SymbolBlock, nn


def small_cnn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1, in_channels=2), nn.BatchNorm(in_channels=4),
            nn.Activation('relu'), nn.MaxPool2D(2), nn.Flatten(), nn.Dense(3, in_units=16))
    net.initialize(initializer.Xavier())
    return net


def test_export_writes_mxnet_files(tmp_path):
    net = small_cnn()
    with pytest.raises(RuntimeError, match='call block.hybridize'):
        net.export(str(tmp_path / 'early'))
    net.hybridize()
    net(nd.ones((1, 2, 4, 4)))
    sym_file, params_file = net.export(str(tmp_path / 'cnn'), epoch=7)
    assert sym_file.endswith('cnn-symbol.json') and params_file.endswith('cnn-0007.params')
    doc = json.load(open(sym_file))
    assert doc['attrs'] == {'mxnet_version': ['int', 10901]}
    assert [n['op'] for n in doc['nodes'] if n['op'] != 'null'] == [
        'Convolution', 'BatchNorm', 'Activation', 'Pooling', 'Flatten', 'FullyConnected']
    keys = sorted(nd.load(params_file))
    assert 'arg:%s' % net[0].weight.name in keys
    assert 'aux:%s' % net[1].running_mean.name in keys
    assert all(k.startswith('arg:') or k.startswith('aux:') for k in keys)


def test_export_and_imports_give_the_same_outputs(tmp_path):
    net = small_cnn()
    net.hybridize()
    x = nd.random.normal(shape=(2, 2, 4, 4))
    with mx.autograd.record():      # move the BatchNorm statistics away from their start
        net(x)
    y = net(x)
    net.export(str(tmp_path / 'cnn'))
    back = SymbolBlock.imports(str(tmp_path / 'cnn-symbol.json'), ['data'],
                               str(tmp_path / 'cnn-0000.params'))
    np.testing.assert_allclose(back(x).asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)
    assert sorted(back.collect_params().keys()) == sorted(net.collect_params().keys())
    # the imported block is a block like any other: symbols in, a symbol out
    s = back(mx.sym.var('data'))
    assert isinstance(s, mx.sym.Symbol) and s.infer_shape(data=(2, 2, 4, 4))[1] == [(2, 3)]


def test_symbol_block_from_symbols_and_training():
    data = mx.sym.var('data')
    out = mx.sym.FullyConnected(mx.sym.relu(data), num_hidden=3, name='fc')
    blk = SymbolBlock(out, data)
    assert sorted(blk.collect_params().keys()) == ['fc_bias', 'fc_weight']
    blk.initialize()
    x = nd.ones((2, 5))
    assert blk(x).shape == (2, 3)              # deferred shapes filled from the input
    assert blk.collect_params()['fc_weight'].shape == (3, 5)
    with mx.autograd.record():
        loss = blk(x).sum()
    loss.backward()
    np.testing.assert_allclose(blk.collect_params()['fc_bias'].grad().asnumpy(), [2.0] * 3)
    with pytest.raises(MXNetError, match='must be variables'):
        SymbolBlock(out, mx.sym.relu(data))


def test_symbol_block_multiple_inputs_and_outputs():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    blk = SymbolBlock([a + b, a * b], [a, b])
    s, p = blk(nd.array([1.0, 2.0]), nd.array([3.0, 4.0]))
    assert s.asnumpy().tolist() == [4.0, 6.0] and p.asnumpy().tolist() == [3.0, 8.0]


def test_our_export_loads_in_mxnet(tmp_path, mxnet_ref):
    net = small_cnn()
    net.hybridize()
    x = nd.random.normal(shape=(2, 2, 4, 4))
    with mx.autograd.record():
        net(x)
    y = net(x)
    net.export(str(tmp_path / 'cnn'))
    np.save(tmp_path / 'x.npy', x.asnumpy())
    mxnet_ref('''
import mxnet as mx, numpy as np
net = mx.gluon.SymbolBlock.imports('cnn-symbol.json', ['data'], 'cnn-0000.params')
np.save('y.npy', net(mx.nd.array(np.load('x.npy'))).asnumpy())
''', cwd=str(tmp_path))
    np.testing.assert_allclose(np.load(tmp_path / 'y.npy'), y.asnumpy(), rtol=1e-4, atol=1e-5)


def test_mxnet_model_zoo_resnet_imports_here(tmp_path, mxnet_ref):
    mxnet_ref('''
import mxnet as mx, numpy as np
from mxnet.gluon.model_zoo import vision
net = vision.resnet18_v1(classes=10)
net.initialize(mx.init.Xavier())
net.hybridize()
x = mx.nd.array(np.random.RandomState(0).rand(2, 3, 32, 32))
with mx.autograd.record():      # training steps move the BatchNorm statistics
    net(x)
y = net(x)
net.export('resnet18')
np.save('x.npy', x.asnumpy()); np.save('y.npy', y.asnumpy())
''', cwd=str(tmp_path))
    net = SymbolBlock.imports(str(tmp_path / 'resnet18-symbol.json'), ['data'],
                              str(tmp_path / 'resnet18-0000.params'), ctx=mx.cpu())
    y = net(nd.array(np.load(tmp_path / 'x.npy')))
    np.testing.assert_allclose(y.asnumpy(), np.load(tmp_path / 'y.npy'), rtol=1e-4, atol=1e-5)
    assert len([n for n in net.collect_params() if n.endswith('running_mean')]) == 20


class _Nested(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x, y):
        return x + y, [x * 2, F.relu(y)]


def test_formats_of_a_traced_call_go_with_an_export(tmp_path):
    # A hybridized block keeps the nested structure of the inputs and outputs it traced, as
    # MXNet's _in_format/_out_format; a SymbolBlock given them back returns the same nesting.
    net = _Nested()
    assert net._in_format is None and net._out_format is None
    net.hybridize()
    x, y = nd.ones((2,)), nd.array([-1.0, 3.0])
    want = net(x, y)
    assert net._in_format == [0, 0] and net._out_format == [0, [0, 0]]
    net.export(str(tmp_path / 'nested'))
    sb = SymbolBlock.imports(str(tmp_path / 'nested-symbol.json'), ['data0', 'data1'])
    assert len(sb(x, y)) == 3                               # flat, as MXNet's import gives
    sb._in_format, sb._out_format = net._in_format, net._out_format
    got = sb(x, y)
    assert len(got) == 2 and len(got[1]) == 2
    for a, b in zip([got[0]] + got[1], [want[0]] + want[1]):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
