"""gluon.rnn: cells (names, symbolic shapes, unroll with layouts, merging and valid lengths,
the modifier and bidirectional cells), the fused layers (against the stack of cells sharing
their weights, hybridized against imperative, deferred input sizes, parameter file names,
export), and the contrib cells."""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon, nd
from neomx.gluon import contrib, rnn


def _sym_steps(n=3):
    return [mx.sym.var('rnn_t%d_data' % i) for i in range(n)]


def _shapes(n=3, shape=(10, 50)):
    return {'rnn_t%d_data' % i: shape for i in range(n)}


@pytest.mark.parametrize('cls', [rnn.RNNCell, rnn.LSTMCell, rnn.GRUCell])
def test_cell_parameter_and_output_names(cls):
    cell = cls(100, prefix='rnn_')
    outputs, _ = cell.unroll(3, _sym_steps())
    outputs = mx.sym.Group(outputs)
    assert sorted(cell.collect_params().keys()) == ['rnn_h2h_bias', 'rnn_h2h_weight',
                                                    'rnn_i2h_bias', 'rnn_i2h_weight']
    assert outputs.list_outputs() == ['rnn_t0_out_output', 'rnn_t1_out_output',
                                      'rnn_t2_out_output']
    assert outputs.infer_shape(**_shapes())[1] == [(10, 100)] * 3


@pytest.mark.parametrize('act', ['relu', 'sigmoid', 'softrelu', 'tanh', 'softsign'])
def test_lstm_cell_activations(act):
    cell = rnn.LSTMCell(5, prefix='rnn_', activation=act, recurrent_activation=act)
    outputs, _ = cell.unroll(3, _sym_steps())
    assert mx.sym.Group(outputs).infer_shape(**_shapes())[1] == [(10, 5)] * 3


def test_stack_residual_and_bidirectional_names():
    stack = rnn.SequentialRNNCell()
    for i in range(3):
        cell = rnn.LSTMCell(100, prefix='rnn_stack%d_' % i)
        stack.add(rnn.ResidualCell(cell) if i == 1 else cell)
    outputs, _ = stack.unroll(3, _sym_steps())
    outputs = mx.sym.Group(outputs)
    assert 'rnn_stack1_i2h_weight' in stack.collect_params()
    assert outputs.list_outputs() == ['rnn_stack2_t%d_out_output' % i for i in range(3)]
    assert outputs.infer_shape(**_shapes())[1] == [(10, 100)] * 3
    bi = rnn.BidirectionalCell(rnn.LSTMCell(100, prefix='rnn_l0_'),
                               rnn.LSTMCell(100, prefix='rnn_r0_'), output_prefix='rnn_bi_')
    outputs = mx.sym.Group(bi.unroll(3, _sym_steps())[0])
    assert outputs.list_outputs() == ['rnn_bi_t%d_output' % i for i in range(3)]
    assert outputs.infer_shape(**_shapes())[1] == [(10, 200)] * 3


def test_residual_of_zero_weights_is_identity_when_evaluated():
    """The zero begin states (batch size 0 in the symbol) get their size at evaluation."""
    cell = rnn.ResidualCell(rnn.BidirectionalCell(rnn.GRUCell(25, prefix='rnn_l_'),
                                                  rnn.GRUCell(25, prefix='rnn_r_')))
    outputs = mx.sym.Group(cell.unroll(2, _sym_steps(2), merge_outputs=False)[0])
    zeros = {'rnn_%s_%s' % (d, n): nd.zeros(s) for d in 'lr' for n, s in
             (('i2h_weight', (75, 50)), ('i2h_bias', (75,)), ('h2h_weight', (75, 25)),
              ('h2h_bias', (75,)))}
    res = outputs.eval(rnn_t0_data=nd.ones((10, 50)) + 5, rnn_t1_data=nd.ones((10, 50)) + 5,
                       **zeros)
    for r in res:
        np.testing.assert_array_equal(r.asnumpy(), np.full((10, 50), 6.0))


def test_zoneout_cell_symbolic_shapes():
    cell = rnn.ZoneoutCell(rnn.RNNCell(100, prefix='rnn_'), zoneout_outputs=0.5,
                           zoneout_states=0.5)
    outputs = mx.sym.Group(cell.unroll(3, _sym_steps())[0])
    assert outputs.infer_shape(**_shapes())[1] == [(10, 100)] * 3


@pytest.mark.parametrize('layout', ['NTC', 'TNC'])
@pytest.mark.parametrize('merge', [True, False])
def test_unroll_layouts_and_merging(layout, merge):
    cell = rnn.GRUCell(6, input_size=4)
    cell.initialize()
    x = nd.random.uniform(shape=(2, 5, 4) if layout == 'NTC' else (5, 2, 4))
    out, states = cell.unroll(5, x, layout=layout, merge_outputs=merge)
    steps = cell.unroll(5, [x[:, t] if layout == 'NTC' else x[t] for t in range(5)],
                        layout=layout, merge_outputs=False)[0]
    if merge:
        assert out.shape == ((2, 5, 6) if layout == 'NTC' else (5, 2, 6))
        out = [out[:, t] if layout == 'NTC' else out[t] for t in range(5)]
    assert len(out) == 5 and states[0].shape == (2, 6)
    for a, b in zip(out, steps):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)


@pytest.mark.parametrize('make', [
    lambda: rnn.LSTMCell(7),
    lambda: rnn.BidirectionalCell(rnn.GRUCell(7), rnn.GRUCell(7)),
    lambda: contrib.rnn.VariationalDropoutCell(rnn.RNNCell(7)),
])
def test_unroll_valid_length_matches_truncated_sequences(make):
    cell = make()
    cell.collect_params().initialize()
    cell.hybridize()
    lengths = [3, 6, 1]
    x = nd.random.normal(shape=(3, 6, 4))
    outs, states = cell.unroll(6, x, valid_length=nd.array(lengths), merge_outputs=True,
                               layout='NTC')
    for i, n in enumerate(lengths):
        one, one_states = cell.unroll(n, x[i:i + 1, :n], merge_outputs=True, layout='NTC')
        np.testing.assert_allclose(outs[i:i + 1, :n].asnumpy(), one.asnumpy(), rtol=1e-4,
                                   atol=1e-5)
        assert not outs[i, n:].asnumpy().any()
        for s, t in zip(states, one_states):
            np.testing.assert_allclose(s[i:i + 1].asnumpy(), t.asnumpy(), rtol=1e-4, atol=1e-5)


def test_cells_hybridized_match_imperative_with_gradients():
    for cell in (rnn.LSTMCell(10, input_size=6), rnn.GRUCell(10, input_size=6),
                 rnn.BidirectionalCell(rnn.LSTMCell(10, input_size=6),
                                       rnn.LSTMCell(10, input_size=6))):
        cell.collect_params().initialize()
        x = nd.random.uniform(shape=(4, 3, 6))
        x.attach_grad()
        results = []
        for hybrid in (False, True):
            if hybrid:
                cell.hybridize()
            with autograd.record():
                out = cell.unroll(3, x, merge_outputs=True)[0]
            out.backward()
            results.append((out.asnumpy(), x.grad.asnumpy().copy()))
        for a, b in zip(*results):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_dropout_and_zoneout_cells_in_training_and_prediction():
    base = rnn.RNNCell(8, input_size=5)
    zone = rnn.ZoneoutCell(base, 0.5, 0.5)
    zone.collect_params().initialize()
    x = nd.ones((4, 3, 5))
    pred = zone.unroll(3, x, merge_outputs=True)[0].asnumpy()
    with pytest.raises(mx.MXNetError, match='modifier'):
        base.begin_state(batch_size=4)
    zone.base_cell._modified = False        # outside training zoneout changes nothing
    np.testing.assert_allclose(pred, base.unroll(3, x, merge_outputs=True)[0].asnumpy())
    zone.base_cell._modified = True
    with autograd.record():
        train = zone.unroll(3, x, merge_outputs=True)[0].asnumpy()
    assert train.shape == pred.shape and np.abs(train - pred).max() > 0
    drop = rnn.DropoutCell(0.5)
    np.testing.assert_array_equal(drop.unroll(3, x, merge_outputs=True)[0].asnumpy(), x.asnumpy())
    with autograd.record():
        dropped = drop.unroll(3, x, merge_outputs=True)[0].asnumpy()
    assert set(np.unique(dropped)) <= {0.0, 2.0} and (dropped == 0).any()
    with pytest.raises(mx.MXNetError, match='stepped'):
        rnn.BidirectionalCell(rnn.RNNCell(2), rnn.RNNCell(2))(x[:, 0], [])


def _fused_and_stack(mode, bidirectional, num_layers, hidden=6):
    make_layer = {'lstm': rnn.LSTM, 'gru': rnn.GRU,
                  'rnn_tanh': lambda *a, **k: rnn.RNN(*a, activation='tanh', **k),
                  'rnn_relu': lambda *a, **k: rnn.RNN(*a, activation='relu', **k)}[mode]
    layer = make_layer(hidden, num_layers=num_layers, bidirectional=bidirectional,
                       layout='NTC', input_size=5)
    stack = layer._unfuse()
    layer.initialize(mx.init.Uniform(0.5))
    return layer, stack


@pytest.mark.parametrize('mode', ['lstm', 'gru', 'rnn_tanh', 'rnn_relu'])
@pytest.mark.parametrize('bidirectional', [False, True])
def test_fused_layer_matches_stack_of_cells(mode, bidirectional):
    """Outputs, states, input and weight gradients of a layer equal those of the cells
    ``_unfuse`` builds on the same parameters."""
    layer, stack = _fused_and_stack(mode, bidirectional, 2)
    x = nd.random.normal(shape=(3, 4, 5))
    results = []
    for fused in (True, False):
        x = x.copy()
        x.attach_grad()
        with autograd.record():
            if fused:
                out, new_states = layer(x, layer.begin_state(3))
            else:
                out, new_states = stack.unroll(4, x, stack.begin_state(batch_size=3),
                                               layout='NTC', merge_outputs=True)
            loss = (out * out).sum()
        loss.backward()
        grads = {k: p.grad().asnumpy().copy() for k, p in layer.collect_params().items()}
        results.append((out.asnumpy(), x.grad.asnumpy(), grads, new_states))
    (o1, g1, w1, s1), (o2, g2, w2, s2) = results
    np.testing.assert_allclose(o1, o2, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g1, g2, rtol=1e-4, atol=1e-5)
    for k in w1:
        np.testing.assert_allclose(w1[k], w2[k], rtol=1e-4, atol=1e-5, err_msg=k)
    # the stack's states are per cell: [h, c] of l0, (r0,) l1, ...; the layer's are stacked
    per = 2 if mode == 'lstm' else 1
    for i, fused in enumerate(s1):
        np.testing.assert_allclose(fused.asnumpy(),
                                   np.stack([s.asnumpy() for s in s2[i::per]]), rtol=1e-4,
                                   atol=1e-5)


def test_layer_hybridized_matches_imperative_and_infers_input_size():
    assert repr(rnn.LSTM(8, num_layers=2, bidirectional=True, dropout=0.3)) == \
        'LSTM(None -> 8, TNC, num_layers=2, dropout=0.3, bidirectional)'
    layer = rnn.LSTM(8, num_layers=2, bidirectional=True)
    layer.initialize()
    x = nd.random.uniform(shape=(5, 3, 7))
    x.attach_grad()
    results = []
    for hybrid in (False, True):
        if hybrid:
            layer.hybridize()
        with autograd.record():
            out = layer(x)
        out.backward()
        results.append((layer(x).asnumpy(), x.grad.asnumpy().copy()))
    assert layer.l0_i2h_weight.shape == (32, 7) and layer.r0_i2h_weight.shape == (32, 7)
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert repr(layer) == 'LSTM(7 -> 8, TNC, num_layers=2, bidirectional)'


def test_layer_inside_hybrid_sequential_infers_its_input_size():
    net = gluon.nn.HybridSequential()
    net.add(rnn.GRU(6, bidirectional=True, layout='NTC'), gluon.nn.Dense(3, flatten=False))
    net.initialize()
    net.hybridize()
    assert net(nd.ones((2, 4, 5))).shape == (2, 4, 3)
    assert net[0].l0_i2h_weight.shape == (18, 5)


def test_layer_states_in_and_out_and_shape_check():
    layer = rnn.GRU(4, num_layers=2)
    layer.initialize()
    layer.hybridize()
    x = nd.ones((3, 2, 5))
    assert isinstance(layer(x), nd.NDArray)
    out, states = layer(x, layer.begin_state(2))       # traced again for the other outputs
    assert out.shape == (3, 2, 4) and states[0].shape == (2, 2, 4)
    assert isinstance(layer(x), nd.NDArray)
    fresh = rnn.GRU(4, num_layers=2, input_size=5)
    fresh.initialize()
    with pytest.raises(ValueError, match='Invalid recurrent state shape'):
        fresh(x, nd.zeros((1, 2, 4)))


def test_layer_sequence_length():
    layer = rnn.LSTM(5, bidirectional=True, use_sequence_length=True, input_size=3)
    layer.initialize()
    x = nd.random.uniform(shape=(4, 2, 3))
    out = layer(x, sequence_length=nd.array([4, 2]))
    assert out.shape == (4, 2, 10) and not out[2:, 1].asnumpy().any()
    np.testing.assert_allclose(out[:2, 1:2].asnumpy(), layer(x[:2, 1:2],
                               sequence_length=nd.array([2])).asnumpy(), rtol=1e-5, atol=1e-6)


def test_layer_parameter_names_and_file_keys(tmp_path):
    layer = rnn.LSTM(4, num_layers=2, bidirectional=True, input_size=3, prefix='lstm_')
    layer.initialize()
    names = list(layer.collect_params().keys())
    assert names[:5] == ['lstm_l0_i2h_weight', 'lstm_l0_h2h_weight', 'lstm_l0_i2h_bias',
                         'lstm_l0_h2h_bias', 'lstm_r0_i2h_weight']
    path = str(tmp_path / 'lstm.params')
    layer.save_parameters(path)
    keys = sorted(nd.load(path))
    assert '_unfused.0.l_cell.i2h_weight' in keys and '_unfused.1.r_cell.h2h_bias' in keys
    other = rnn.LSTM(4, num_layers=2, bidirectional=True, input_size=3)
    other.load_parameters(path)
    x = nd.ones((2, 1, 3))
    np.testing.assert_allclose(other(x).asnumpy(), layer(x).asnumpy())
    uni = rnn.GRU(3, input_size=2)
    assert '_unfused.0.i2h_weight' in uni._collect_params_with_prefix()


def test_lstm_projection_layer_matches_lstmp_cells():
    layer = rnn.LSTM(8, projection_size=4, num_layers=2, bidirectional=True, prefix='lstm0_')
    stack = rnn.HybridSequentialRNNCell(prefix='lstm0_')
    with stack.name_scope():
        for i in range(2):
            stack.add(rnn.BidirectionalCell(contrib.rnn.LSTMPCell(8, 4, prefix='l%d_' % i),
                                            contrib.rnn.LSTMPCell(8, 4, prefix='r%d_' % i)))
    layer.initialize()
    stack.initialize()
    x = nd.random.uniform(shape=(3, 2, 5))
    layer.infer_shape(x, layer.begin_state(2))
    stack_params = stack.collect_params()
    for name, p in layer.collect_params().items():
        w = nd.random.uniform(-0.5, 0.5, shape=p.shape)
        p.set_data(w)
        stack_params[name].set_data(w)
    out, states = layer(x, layer.begin_state(2))
    ref, ref_states = stack.unroll(3, x, stack.begin_state(batch_size=2), layout='TNC',
                                   merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(states[1].asnumpy(),
                               np.stack([s.asnumpy() for s in ref_states[1::2]]), rtol=1e-4,
                               atol=1e-5)


def test_export_and_import_of_hybridized_cells_and_layers(tmp_path):
    class Unrolled(gluon.HybridBlock):
        def __init__(self, make):
            super().__init__()
            with self.name_scope():
                self.cell = make()

        def hybrid_forward(self, F, seq):
            return self.cell.unroll(inputs=seq, length=2, merge_outputs=True)[0]

    x = nd.random.uniform(shape=(1, 2, 4))
    for i, block in enumerate([Unrolled(lambda: rnn.LSTMCell(3)),
                               Unrolled(lambda: rnn.GRUCell(3)),
                               rnn.LSTM(3, num_layers=2, layout='NTC')]):
        block.initialize()
        block.hybridize()
        expected = block(x).asnumpy()
        prefix = str(tmp_path / ('m%d' % i))
        block.export(prefix)
        # the layer's zero begin states are inputs of its graph, as in MXNet
        names = ['data'] if i < 2 else ['data0', 'data1', 'data2']
        loaded = gluon.SymbolBlock.imports(prefix + '-symbol.json', names,
                                           prefix + '-0000.params')
        inputs = [x] if i < 2 else [x] + block.begin_state(1)
        np.testing.assert_allclose(loaded(*inputs).asnumpy(), expected, rtol=1e-6)


def test_lstm_cpu_inference_with_ones():
    """All-ones weights: the layer and its unfused cells give MXNet's published values."""
    expected = np.array([[[0.72045636, 0.72045636, 0.95215213, 0.95215213]] * 2,
                         [[0.95215213, 0.95215213, 0.72045636, 0.72045636]] * 2])
    x = nd.ones((2, 2, 2))
    model = rnn.LSTM(2, num_layers=6, bidirectional=True)
    cells = model._unfuse()
    model.initialize(mx.init.One())
    np.testing.assert_allclose(model(x).asnumpy(), expected, rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(cells.unroll(2, x, layout='TNC', merge_outputs=True)[0].asnumpy(),
                               expected, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize('kind', ['RNN', 'LSTM', 'GRU'])
def test_conv_cells_shapes_and_deferred_channels(kind):
    for dims, shape in ((1, (10, 50)), (2, (10, 20, 50))):
        cell = getattr(contrib.rnn, 'Conv%dD%sCell' % (dims, kind))(shape, 12, 3, 3,
                                                                     prefix='rnn_')
        outputs = mx.sym.Group(cell.unroll(3, _sym_steps())[0])
        assert outputs.list_outputs() == ['rnn_t%d_out_output' % i for i in range(3)]
        out = (1, 12) + tuple(s - 2 for s in shape[1:])
        assert outputs.infer_shape(**_shapes(shape=(1,) + shape))[1] == [out] * 3
    cell = getattr(contrib.rnn, 'Conv1D%sCell' % kind)((0, 7), 10, (3,), (3,))
    cell.hybridize()
    cell.initialize()
    x = nd.ones((8, 3, 5, 7))
    x.attach_grad()
    with autograd.record():
        cell.unroll(3, x, merge_outputs=True)[0].backward()
    assert cell.i2h_weight.shape[1] == 5 and x.grad.shape == x.shape


def test_variational_dropout_shares_its_mask_across_steps():
    cell = contrib.rnn.VariationalDropoutCell(rnn.RNNCell(6, input_size=4), drop_inputs=0.5,
                                              drop_outputs=0.5)
    cell.initialize(mx.init.One())
    with autograd.record():
        out = cell.unroll(5, nd.ones((3, 5, 4)), merge_outputs=True)[0].asnumpy()
    zero = out == 0
    assert zero.any() and (zero == zero[:, :1]).all()


def test_context_default_ctx_is_the_current_context():
    with pytest.warns(DeprecationWarning):
        assert mx.Context.default_ctx == mx.current_context()
    with mx.cpu(1), pytest.warns(DeprecationWarning):
        assert mx.Context.default_ctx == mx.cpu(1)


def test_char_lm_example_learns(capsys):
    from neomx.examples import char_lm
    char_lm.main(['--epochs', '3', '--chars', '4000', '--hidden', '32', '--layers', '1',
                  '--seq-len', '20', '--batch-size', '8'])
    rows = [line.split() for line in capsys.readouterr().out.splitlines()
            if line.strip()[:1].isdigit() and len(line.split()) == 4]
    assert [int(r[0]) for r in rows] == [1, 2, 3]
    train = [float(r[1]) for r in rows]
    assert train[-1] < train[0] < 100
