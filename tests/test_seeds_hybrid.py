"""The seeds' hybrid-programming code (d2l "Computational Performance" 8.1), run as written."""
import time

import numpy as np
import pytest

import neomx as mx
from neomx import nd, sym
from neomx.gluon import nn
from neomx.symbol import NotImplementedForSymbol


class HybridNet(nn.HybridBlock):
    def __init__(self, **kwargs):
        super(HybridNet, self).__init__(**kwargs)
        self.hidden = nn.Dense(10)
        self.output = nn.Dense(2)

    def hybrid_forward(self, F, x):
        print('F: ', F)
        print('x: ', x)
        x = F.relu(self.hidden(x))
        print('hidden: ', x)
        return self.output(x)


def test_seed_hybridnet_prints_ndarray_then_symbol_once(capsys):
    net = HybridNet()
    net.initialize()
    x = nd.random.normal(shape=(1, 4))
    before = net(x)
    out = capsys.readouterr().out
    assert "F:  <module 'neomx.ndarray'" in out
    assert '<NDArray 1x4 @cpu(0)>' in out and '<NDArray 1x10 @cpu(0)>' in out
    net.hybridize()
    first = net(x)
    out = capsys.readouterr().out
    assert "F:  <module 'neomx.symbol'" in out
    assert 'x:  <Symbol data>' in out
    assert 'hidden:  <Symbol hybridnet' in out
    second = net(x)
    assert capsys.readouterr().out == ''      # later calls run the graph: no prints
    np.testing.assert_allclose(first.asnumpy(), before.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(second.asnumpy(), before.asnumpy(), rtol=1e-5, atol=1e-6)


def test_seed_exercise_asnumpy_and_if_in_hybrid_forward():
    class WithAsnumpy(HybridNet):
        def hybrid_forward(self, F, x):
            x.asnumpy()
            return self.output(F.relu(self.hidden(x)))

    class WithIf(HybridNet):
        def hybrid_forward(self, F, x):
            if x.sum() > 0:
                x = x * 2
            return self.output(F.relu(self.hidden(x)))

    for cls, msg in ((WithAsnumpy, 'Function asnumpy is not implemented for Symbol and only '
                                   'available in NDArray.'),
                     (WithIf, 'Function __bool__ (namely operator "bool") is not implemented '
                              'for Symbol and only available in NDArray.')):
        net = cls()
        net.initialize()
        x = nd.random.normal(shape=(1, 4))
        net(x)                                  # imperative: runs
        net.hybridize()
        with pytest.raises(NotImplementedForSymbol) as e:
            net(x)
        assert str(e.value) == msg

    class WithFor(HybridNet):                   # a Python for loop is unrolled: fine
        def hybrid_forward(self, F, x):
            for _ in range(3):
                x = x + 1
            return self.output(F.relu(self.hidden(x)))
    net = WithFor()
    net.initialize()
    x = nd.random.normal(shape=(1, 4))
    ref = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_seed_net_on_symbol_returns_symbol():
    net = HybridNet()
    net.initialize()
    out = net(sym.var('data'))
    assert isinstance(out, sym.Symbol)
    assert out.list_outputs()[0].endswith('_fwd_output')


def get_net():
    net = nn.HybridSequential()  # 这里创建HybridSequential实例
    net.add(nn.Dense(256, activation='relu'),
            nn.Dense(128, activation='relu'),
            nn.Dense(2))
    net.initialize()
    return net


def benchmark(net, x):
    start = time.time()
    for i in range(1000):
        _ = net(x)
    nd.waitall()  # 等待所有计算完成方便计时
    return time.time() - start


def test_seed_get_net_and_benchmark_run_and_agree():
    x = nd.random.normal(shape=(1, 512))
    net = get_net()
    before = net(x).asnumpy()
    assert benchmark(net, x) > 0
    net.hybridize()
    after = net(x).asnumpy()
    assert benchmark(net, x) > 0
    np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-6)
    assert net(x).shape == (1, 2)


def test_seed_export_and_import_give_same_outputs(tmp_path):
    x = nd.random.normal(shape=(1, 512))
    net = get_net()
    net.hybridize()
    y = net(x)
    net.export(str(tmp_path / 'my_mlp'))
    back = mx.gluon.SymbolBlock.imports(str(tmp_path / 'my_mlp-symbol.json'), ['data'],
                                        str(tmp_path / 'my_mlp-0000.params'))
    np.testing.assert_allclose(back(x).asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)
