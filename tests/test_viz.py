"""mx.viz: print_summary prints MXNet 1.9.1's table (compared with it), for Symbols and
hybridized blocks; plot_network builds a graphviz graph (skipped without the package)."""
import warnings

import pytest

import neomx as mx
from neomx import gluon

NET = '''
data = mx.sym.Variable('data')
emb = mx.sym.Embedding(data=data, name='emb1', input_dim=100, output_dim=28)
conv = mx.sym.Convolution(data=emb, name='conv1', num_filter=32, kernel=(3, 3), stride=(2, 2))
bn = mx.sym.BatchNorm(data=conv, name='bn1')
act = mx.sym.Activation(data=bn, name='relu1', act_type='relu')
pool = mx.sym.Pooling(data=act, name='mp1', kernel=(2, 2), stride=(2, 2), pool_type='max')
fc1 = mx.sym.FullyConnected(data=pool, name='fc1', num_hidden=10)
fc2 = mx.sym.FullyConnected(data=fc1, name='fc2', num_hidden=10, no_bias=True)
out = mx.sym.SliceChannel(data=fc2, num_outputs=2, name='slice_1')
mx.viz.print_summary(out)
mx.viz.print_summary(out, {'data': (1, 3, 28)}, line_length=90)
mx.viz.print_summary(mx.sym.elemwise_add(fc1, fc2, name='sum'), {'data': (1, 3, 28)})
'''


def test_print_summary_prints_mxnets_table(mxnet_ref, capsys):
    want = mxnet_ref('import mxnet as mx\n' + NET)
    exec(NET, {'mx': mx})
    assert capsys.readouterr().out == want


def test_print_summary_of_a_hybridized_block(capsys):
    net = gluon.nn.HybridSequential(prefix='net_')
    with net.name_scope():
        net.add(gluon.nn.Dense(8, in_units=4, activation='relu'), gluon.nn.Dense(2, in_units=8))
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((1, 4)))
    mx.viz.print_summary(net, shape={'data': (1, 4)})
    out = capsys.readouterr().out
    assert 'net_dense0_fwd(FullyConnected)' in out and 'Total params: 58' in out
    with pytest.raises(TypeError, match='Symbol or a HybridBlock'):
        mx.viz.print_summary('not a net')


def test_plot_network_draws_the_graph_and_warns_of_repeated_names():
    pytest.importorskip('graphviz')
    net = mx.sym.FullyConnected(mx.sym.var('data'), name='fc', num_hidden=8)
    net = mx.sym.Activation(net, name='relu1', act_type='relu')
    net = mx.sym.FullyConnected(net, name='fc', num_hidden=2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        dot = mx.viz.plot_network(net, shape={'data': (4, 5)}, node_attrs={'fixedsize': 'false'})
    assert len(w) == 1 and 'Repeated names: fc' in str(w[0].message)
    src = dot.source
    assert 'FullyConnected\n8' in src and 'label=8' in src and 'fc_weight' not in src
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        shown = mx.viz.plot_network(net, hide_weights=False).source
    assert 'relu1' in shown and 'fc_weight' in shown
