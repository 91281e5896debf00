"""The fused RNN operator: MXNet's packed parameter layout against a NumPy recurrence written
here, gradients against numeric ones, its symbol interface (arguments, outputs, shape
inference backwards through the packed vector), dropout, sequence lengths, cell-state
clipping and projections; and the shape-inference rules recurrent graphs rely on."""
import json
from math import prod

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx.ops.rnn import rnn_param_size

from opcheck import check_op

GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_rnn(mode, x, params, h0, c0=None, num_layers=1, bidirectional=False, proj=None,
           lengths=None, clip=None):
    """A NumPy reference: returns (out, h_n, c_n). The packed layout is walked here on its
    own: every weight (per layer and direction: i2h, h2h, h2r), then every bias."""
    T, N, I = x.shape
    G, D = GATES[mode], 2 if bidirectional else 1
    H = h0.shape[2] if proj is None else c0.shape[2]
    R = proj or H
    pos = [0]

    def take(shape):
        a = params[pos[0]:pos[0] + prod(shape)].reshape(shape)
        pos[0] += prod(shape)
        return a
    W, ni = {}, I
    for layer in range(num_layers):
        for d in range(D):
            W[layer, d] = [take((G * H, ni)), take((G * H, R))] + \
                ([take((proj, H))] if proj else [])
        ni = R * D
    for layer in range(num_layers):
        for d in range(D):
            W[layer, d] += [take((G * H,)), take((G * H,))]
    assert pos[0] == params.size
    lengths = np.full(N, T) if lengths is None else np.asarray(lengths)
    inp, hs, cs = x, [], []
    for layer in range(num_layers):
        outs = []
        for d in range(D):
            ws = W[layer, d]
            wi, wh = ws[0], ws[1]
            wr = ws[2] if proj else None
            bi, bh = ws[-2], ws[-1]
            h = h0[layer * D + d].copy()
            c = None if c0 is None else c0[layer * D + d].copy()
            out = np.zeros((T, N, R))
            for n in range(N):
                steps = range(lengths[n])
                for t in (reversed(steps) if d == 1 else steps):
                    gi = wi @ inp[t, n] + bi
                    gh = wh @ h[n] + bh
                    if mode == 'lstm':
                        i, f, g, o = np.split(gi + gh, 4)
                        cn = _sigmoid(f) * c[n] + _sigmoid(i) * np.tanh(g)
                        if clip is not None:
                            cn = np.clip(cn, *clip)
                        c[n] = cn
                        hn = _sigmoid(o) * np.tanh(cn)
                        h[n] = hn if wr is None else wr @ hn
                    elif mode == 'gru':
                        ir, iz, inn = np.split(gi, 3)
                        hr, hz, hnn = np.split(gh, 3)
                        r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
                        h[n] = (1 - z) * np.tanh(inn + r * hnn) + z * h[n]
                    else:
                        act = np.tanh if mode == 'rnn_tanh' else (lambda v: np.maximum(v, 0))
                        h[n] = act(gi + gh)
                    out[t, n] = h[n]
            outs.append(out)
            hs.append(h)
            cs.append(c)
        inp = np.concatenate(outs, axis=2)
    return inp, np.stack(hs), (np.stack(cs) if c0 is not None else None)


def _case(mode, bidirectional, num_layers=2, T=4, N=3, I=5, H=4, seed=0, proj=None):
    rng = np.random.RandomState(seed)
    D = 2 if bidirectional else 1
    n = rnn_param_size(mode, I, H, num_layers, bidirectional, proj)
    x = rng.uniform(-1, 1, (T, N, I))
    p = rng.uniform(-0.5, 0.5, (n,))
    h0 = rng.uniform(-1, 1, (num_layers * D, N, proj or H))
    c0 = rng.uniform(-1, 1, (num_layers * D, N, H))
    return x, p, h0, c0


def _call(mode, x, p, h0, c0, **attrs):
    args = [x, p, h0] + ([c0] if mode == 'lstm' else [])
    return nd.RNN(*args, mode=mode, state_outputs=True, **attrs)


@pytest.mark.parametrize('mode', ['lstm', 'gru', 'rnn_tanh', 'rnn_relu'])
@pytest.mark.parametrize('bidirectional', [False, True])
def test_rnn_matches_numpy_recurrence(mode, bidirectional):
    x, p, h0, c0 = _case(mode, bidirectional)
    out = _call(mode, nd.array(x), nd.array(p), nd.array(h0), nd.array(c0), state_size=4,
                num_layers=2, bidirectional=bidirectional)
    ref = np_rnn(mode, x, p, h0, c0 if mode == 'lstm' else None, 2, bidirectional)
    assert len(out) == (3 if mode == 'lstm' else 2)
    for got, want in zip(out, ref):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('mode', ['lstm', 'gru'])
def test_rnn_gradient_matches_numeric(mode):
    x, p, h0, c0 = _case(mode, True, num_layers=1, T=2, N=2, I=2, H=2, seed=1)

    def fn(x, p, h, c):
        return _call(mode, x, p, h, c, state_size=2, num_layers=1, bidirectional=True)

    def ref(x, p, h, c):
        return [a for a in np_rnn(mode, x, p, h, c if mode == 'lstm' else None, 1, True)
                if a is not None]
    check_op(fn, ref, [x, p, h0, c0], wrt=(0, 1, 2, 3) if mode == 'lstm' else (0, 1, 2))


def test_rnn_projection_matches_numpy():
    x, p, h0, c0 = _case('lstm', True, proj=3)
    out = _call('lstm', nd.array(x), nd.array(p), nd.array(h0), nd.array(c0), state_size=4,
                num_layers=2, bidirectional=True, projection_size=3)
    ref = np_rnn('lstm', x, p, h0, c0, 2, True, proj=3)
    assert out[0].shape == (4, 3, 6) and out[1].shape == (4, 3, 3) and out[2].shape == (4, 3, 4)
    for got, want in zip(out, ref):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('mode', ['lstm', 'gru'])
def test_rnn_sequence_length(mode):
    """Outputs past each length are 0 and the states are those at its last step (backward
    direction starting there): cuDNN's semantics."""
    x, p, h0, c0 = _case(mode, True)
    lengths = [4, 1, 3]
    args = [nd.array(x), nd.array(p), nd.array(h0)] + ([nd.array(c0)] if mode == 'lstm' else [])
    out = nd.RNN(*args, sequence_length=nd.array(lengths), mode=mode, state_size=4, num_layers=2,
                 bidirectional=True, state_outputs=True, use_sequence_length=True)
    ref = np_rnn(mode, x, p, h0, c0 if mode == 'lstm' else None, 2, True, lengths=lengths)
    for got, want in zip(out, ref):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-5)
    assert not out[0].asnumpy()[1:, 1].any()


def test_rnn_lstm_state_clip():
    x, p, h0, c0 = _case('lstm', False, num_layers=1)
    p = p * 6       # large weights: unclipped cell states leave [-0.2, 0.2]
    args = [nd.array(a) for a in (x, p, h0, c0)]
    clipped = nd.RNN(*args, mode='lstm', state_size=4, num_layers=1, state_outputs=True,
                     lstm_state_clip_min=-0.2, lstm_state_clip_max=0.2)
    ref = np_rnn('lstm', x, p, h0, c0, 1, False, clip=(-0.2, 0.2))
    for got, want in zip(clipped, ref):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-5)
    plain = nd.RNN(*args, mode='lstm', state_size=4, num_layers=1, state_outputs=True)
    assert np.abs(plain[2].asnumpy()).max() > 0.2 >= np.abs(clipped[2].asnumpy()).max()


def test_rnn_dropout_only_in_training():
    x, p, h0, c0 = _case('lstm', False, num_layers=3)
    args = [nd.array(a) for a in (x, p, h0, c0)]
    attrs = dict(mode='lstm', state_size=4, num_layers=3)
    plain = nd.RNN(*args, **attrs).asnumpy()
    np.testing.assert_allclose(nd.RNN(*args, p=0.5, **attrs).asnumpy(), plain)
    with mx.autograd.train_mode():
        mx.random.seed(3)
        a = nd.RNN(*args, p=0.5, **attrs).asnumpy()
        mx.random.seed(3)
        b = nd.RNN(*args, p=0.5, **attrs).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert np.abs(a - plain).max() > 1e-3


def test_rnn_float64():
    x, p, h0, c0 = _case('rnn_tanh', False, num_layers=1)
    out = nd.RNN(nd.array(x, dtype='float64'), nd.array(p, dtype='float64'),
                 nd.array(h0, dtype='float64'), mode='rnn_tanh', state_size=4, num_layers=1)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.asnumpy(), np_rnn('rnn_tanh', x, p, h0, None)[0], rtol=1e-10)


def test_rnn_wrong_parameter_size_names_it():
    x, p, h0, c0 = _case('gru', False, num_layers=1)
    with pytest.raises(mx.MXNetError, match='parameters'):
        nd.RNN(nd.array(x), nd.array(p[:-1]), nd.array(h0), mode='gru', state_size=4,
               num_layers=1).asnumpy()


def test_rnn_symbol_arguments_outputs_and_shapes():
    lstm = mx.sym.RNN(mode='lstm', num_layers=2, state_size=4, state_outputs=True, name='rnn')
    assert lstm.list_arguments() == ['rnn_data', 'rnn_parameters', 'rnn_state',
                                     'rnn_state_cell']
    assert lstm.list_outputs() == ['rnn_output', 'rnn_state_output', 'rnn_statecell_output']
    args, outs, _ = lstm.infer_shape(rnn_data=(5, 3, 6))
    assert args == [(5, 3, 6), (352,), (2, 3, 4), (2, 3, 4)]
    assert outs == [(5, 3, 4), (2, 3, 4), (2, 3, 4)]
    gru = mx.sym.RNN(mode='gru', num_layers=1, state_size=4, name='g')
    assert gru.list_arguments() == ['g_data', 'g_parameters', 'g_state']
    assert gru.list_outputs() == ['g_output']
    seq = mx.sym.RNN(mode='rnn_relu', num_layers=1, state_size=4, use_sequence_length=True,
                     name='s')
    assert seq.list_arguments()[-1] == 's_sequence_length'
    proj = mx.sym.RNN(mode='lstm', num_layers=2, state_size=4, projection_size=2,
                      bidirectional=True, name='p')
    assert proj.infer_shape(p_data=(5, 3, 6))[0] == [(5, 3, 6), (608,), (4, 3, 2), (4, 3, 4)]


def test_rnn_symbol_json_round_trip_and_bind():
    rnn = mx.sym.RNN(mx.sym.var('x'), mx.sym.var('w'), mx.sym.var('h'), mode='rnn_tanh',
                     state_size=3, num_layers=1, bidirectional=True, p=0.2, name='r')
    attrs = json.loads(rnn.tojson())['nodes'][-1]['attrs']
    assert attrs == {'mode': 'rnn_tanh', 'state_size': '3', 'num_layers': '1',
                     'bidirectional': 'True', 'p': '0.2'}
    again = mx.sym.load_json(rnn.tojson())
    x, p, h0, _ = _case('rnn_tanh', True, num_layers=1, H=3)
    feed = dict(x=nd.array(x), w=nd.array(p), h=nd.array(h0))
    np.testing.assert_allclose(again.eval(**feed)[0].asnumpy(),
                               np_rnn('rnn_tanh', x, p, h0, None, 1, True)[0], rtol=1e-4,
                               atol=1e-5)


def test_packed_weights_inferred_backwards_through_reshape_and_concat():
    """A weight of unknown input size, flattened and concatenated into the packed vector,
    gets its shape from the RNN's data (MXNet infers shapes in both directions); the two
    unknown input weights of a bidirectional layer share what is left equally."""
    pieces = [mx.sym.var('l_wi', shape=(8, 0)), mx.sym.var('l_wh'),
              mx.sym.var('r_wi', shape=(8, 0)), mx.sym.var('r_wh'), mx.sym.var('b')]
    packed = mx.sym._internal._rnn_param_concat(*[mx.sym.reshape(s, shape=(-1,))
                                                  for s in pieces], dim=0, num_args=5)
    rnn = mx.sym.RNN(mx.sym.var('data'), packed, mx.sym.var('s'), state_size=8, num_layers=1,
                     bidirectional=True, mode='rnn_tanh')
    args, outs, _ = rnn.infer_shape(data=(5, 3, 6), l_wh=(8, 8), r_wh=(8, 8), b=(32,))
    assert args[:5] == [(5, 3, 6), (8, 6), (8, 8), (8, 6), (8, 8)]
    assert outs == [(5, 3, 16)]


def test_begin_state_of_unknown_batch_takes_inferred_shape():
    """zeros((0, hidden)) feeding a FullyConnected whose output meets a known one: the batch
    size is inferred backwards and the executor creates the zeros with it."""
    x = mx.sym.var('x')
    h = mx.sym.FullyConnected(mx.sym.zeros(shape=(0, 4)), num_hidden=4, name='h2h')
    out = mx.sym.tanh(mx.sym.FullyConnected(x, num_hidden=4, name='i2h') + h)
    assert out.infer_shape(x=(3, 5))[1] == [(3, 4)]
    res = out.eval(x=nd.ones((3, 5)), i2h_weight=nd.ones((4, 5)), i2h_bias=nd.zeros((4,)),
                   h2h_weight=nd.ones((4, 4)), h2h_bias=nd.ones((4,)))[0]
    np.testing.assert_allclose(res.asnumpy(), np.tanh(np.full((3, 4), 6.0)), rtol=1e-6)


def test_where_takes_a_missing_shape_from_the_other_branch():
    x = mx.sym.var('x')
    out = mx.sym.where(x > 0, x, mx.sym.zeros(shape=(0, 0)))
    assert out.infer_shape(x=(2, 3))[1] == [(2, 3)]
    np.testing.assert_array_equal(out.eval(x=nd.array([[1, -1, 2], [-2, 3, -3]]))[0].asnumpy(),
                                  [[1, 0, 2], [0, 3, 0]])
