"""The subgraph API: backends partition graphs into _CachedOp nodes (MXNet's layout, names and
JSON), and a partitioned graph computes what the original does."""
import ctypes

import numpy as np
import pytest

import neomx as mx
from neomx import gluon, nd
from neomx.base import MXNetError, SymbolHandle, _LIB, c_str, c_str_array, check_call, mx_uint
from neomx.symbol import subgraph


def _net():
    x = mx.sym.var('data', shape=(2, 3))
    e = mx.sym.exp(x, name='exp0')
    return mx.sym.elemwise_add(mx.sym.cos(e, name='cos0'), mx.sym.sin(e, name='sin0'),
                               name='_plus0')


@pytest.fixture
def default_ops():
    names = ['exp', 'sin', 'elemwise_add']
    check_call(_LIB.MXSetSubgraphPropertyOpNamesV2(c_str('default'), mx_uint(len(names)),
                                                   c_str_array(names)))
    yield names
    check_call(_LIB.MXRemoveSubgraphPropertyOpNamesV2(c_str('default')))


def test_partition_groups_connected_operators_without_cycles(default_ops):
    net = _net()
    p = net.optimize_for('default')
    # exp and sin together; the addition apart, since cos between them would make a cycle
    # (the names are MXNet 1.9.1's for this graph)
    assert p.get_internals().list_outputs() == [
        'data', '_CachedOp0_exp0_output', '_CachedOp0_sin0_output', 'cos0_output',
        '_CachedOp1__plus0_output']
    assert p.list_inputs() == net.list_inputs() and net.list_outputs() == ['_plus0_output']
    x = nd.random.uniform(shape=(2, 3))
    np.testing.assert_allclose(p.eval(data=x)[0].asnumpy(), net.eval(data=x)[0].asnumpy())
    # the JSON holds each group under "subgraphs" and reads back
    back = mx.sym.load_json(p.tojson())
    assert '"subgraphs"' in p.tojson()
    assert back.get_internals().list_outputs() == p.get_internals().list_outputs()
    np.testing.assert_allclose(back.eval(data=x)[0].asnumpy(), net.eval(data=x)[0].asnumpy())


def test_auxiliary_states_stay_auxiliary_inside_a_subgraph():
    x = mx.sym.var('data')
    net = mx.sym.BatchNorm(mx.sym.exp(x), name='bn')
    p = subgraph.partition_by_names(net._outputs, ['exp', 'BatchNorm'])
    p = mx.sym.Symbol(p)
    assert p.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert p.list_arguments() == ['data', 'bn_gamma', 'bn_beta']
    assert p.infer_shape(data=(2, 3))[1] == [(2, 3)]


def test_c_api_builds_a_partitioned_symbol():
    net = _net()
    out = SymbolHandle()
    names = ['exp', 'sin']
    check_call(_LIB.MXBuildSubgraphByOpNames(net.handle, c_str('default'), mx_uint(2),
                                             c_str_array(names), ctypes.byref(out)))
    p = mx.sym.Symbol(out)
    assert p.get_internals().list_outputs()[1] == '_CachedOp0_exp0_output'
    assert [b for b in c_str_array(['a', 'bc'])] == [b'a', b'bc']


def test_cached_op_node_from_json_and_backends():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    inner = mx.sym._internal._mul_scalar(a * b, scalar=2, name='_mulscalar0')
    y = mx.sym._internal._CachedOp(mx.sym.var('a'), mx.sym.var('b'), subgraph=inner.tojson())
    args = {'a': nd.array([1.0, 2.0]), 'b': nd.array([3.0, 4.0])}
    assert y.eval(**args)[0].asnumpy().tolist() == [6.0, 16.0]
    with pytest.raises(MXNetError, match='one symbol for each'):
        mx.sym._internal._CachedOp(a, subgraph=inner.tojson())
    with pytest.raises(MXNetError, match="unknown subgraph backend 'nope'"):
        inner.optimize_for('nope')
    subgraph.register_backend('muls', lambda node: node.op.name == '_mul_scalar')
    assert 'muls' in subgraph.backends()
    assert inner.optimize_for('muls').get_internals().list_outputs()[-1] == \
        '_CachedOp0__mulscalar0_output'


def test_hybridize_with_a_subgraph_backend(default_ops, tmp_path):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(4, activation='relu'), gluon.nn.Dense(2))
    net.initialize()
    x = nd.random.normal(shape=(3, 5))
    want = net(x).asnumpy()
    check_call(_LIB.MXSetSubgraphPropertyOpNamesV2(c_str('default'), mx_uint(1),
                                                   c_str_array(['FullyConnected'])))
    net.hybridize(backend='default')
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    net.export(str(tmp_path / 'net'))
    text = (tmp_path / 'net-symbol.json').read_text()
    assert '_CachedOp' in text
    back = gluon.SymbolBlock.imports(str(tmp_path / 'net-symbol.json'), ['data'],
                                     str(tmp_path / 'net-0000.params'))
    np.testing.assert_allclose(back(x).asnumpy(), want, rtol=1e-6)
    net.hybridize(backend='unknown-backend')
    with pytest.raises(MXNetError, match='unknown backend'):
        net(x)


def test_library_load_says_what_it_cannot_do(tmp_path):
    with pytest.raises(MXNetError, match='does NOT exist'):
        mx.library.load(str(tmp_path / 'libnope.so'))
    txt = tmp_path / 'notes.txt'
    txt.write_text('x')
    with pytest.raises(MXNetError, match='NOT a library file'):
        mx.library.load(str(txt))
    lib = tmp_path / 'libcustom.so'
    lib.write_bytes(b'\x7fELF')
    with pytest.raises(MXNetError, match='cannot load MXNet C\\+\\+ extension libraries'):
        mx.library.load(str(lib))
