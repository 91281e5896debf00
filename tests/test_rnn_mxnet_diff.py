"""Differential tests against real MXNet 1.9.1: the recurrent layers give the same outputs,
states and gradients for the same weights (every mode, layout and direction); an LSTM
language model's MXNet ``.params`` load into neomx and give MXNet's outputs; its exported
``-symbol.json`` (with the RNN operator) imports into neomx, and neomx's export imports into
MXNet."""
import json
import os

import numpy as np
import pytest

import neomx

CASES = [(mode, layout, bi) for mode in ('lstm', 'gru', 'rnn_tanh', 'rnn_relu')
         for layout in ('TNC', 'NTC') for bi in (False, True)]

# Runs under both frameworks (``mx`` is mxnet or neomx): per case, the layer's outputs, final
# states and gradients for the inputs and weights in ``d``, saved to ``d/<case>_<tag>.npz``.
LAYERS = '''
import json, numpy as np
def run_layers(mx, d, tag):
    for i, (mode, layout, bi) in enumerate(json.load(open(d + '/cases.json'))):
        kw = dict(num_layers=2, layout=layout, bidirectional=bi, input_size=4, prefix='r_')
        if mode.startswith('rnn_'):
            layer = mx.gluon.rnn.RNN(3, activation=mode[4:], **kw)
        else:
            layer = (mx.gluon.rnn.LSTM if mode == 'lstm' else mx.gluon.rnn.GRU)(3, **kw)
        layer.initialize()
        w = np.load('%s/%d_w.npz' % (d, i))
        for name, p in layer.collect_params().items():
            p.set_data(mx.nd.array(w[name]))
        x = mx.nd.array(np.load('%s/%d_x.npy' % (d, i)))
        states = [mx.nd.array(s) for s in np.load('%s/%d_s.npz' % (d, i)).values()]
        x.attach_grad()
        with mx.autograd.record():
            out, new = layer(x, states)
            loss = (out * out).sum() + sum((s * s).sum() for s in new)
        loss.backward()
        res = {'out': out.asnumpy(), 'dx': x.grad.asnumpy()}
        res.update({'state%d' % k: s.asnumpy() for k, s in enumerate(new)})
        res.update({'d_' + k: p.grad().asnumpy() for k, p in layer.collect_params().items()})
        np.savez('%s/%d_%s.npz' % (d, i, tag), **res)
'''

# The language model of the docs example, small: Embedding, 2-layer LSTM, Dense decoder.
LM = '''
def make_lm(mx):
    class LM(mx.gluon.HybridBlock):
        def __init__(self, **kw):
            super(LM, self).__init__(**kw)
            with self.name_scope():
                self.embed = mx.gluon.nn.Embedding(20, 8)
                self.lstm = mx.gluon.rnn.LSTM(12, num_layers=2, dropout=0.2)
                self.out = mx.gluon.nn.Dense(20, flatten=False)
        def hybrid_forward(self, F, x, h, c):
            y, (h, c) = self.lstm(self.embed(x), [h, c])
            return self.out(y), h, c
    return LM(prefix='lm_')
'''


def _write_inputs(d):
    rng = np.random.RandomState(7)
    with open(os.path.join(d, 'cases.json'), 'w') as f:
        json.dump(CASES, f)
    for i, (mode, layout, bi) in enumerate(CASES):
        kw = dict(num_layers=2, layout=layout, bidirectional=bi, input_size=4, prefix='r_')
        layer = (neomx.gluon.rnn.RNN(3, activation=mode[4:], **kw) if mode.startswith('rnn_')
                 else (neomx.gluon.rnn.LSTM if mode == 'lstm' else neomx.gluon.rnn.GRU)(3, **kw))
        np.savez('%s/%d_w.npz' % (d, i), **{k: rng.uniform(-0.6, 0.6, p.shape).astype('f')
                                             for k, p in layer.collect_params().items()})
        shape = (5, 2, 4) if layout == 'TNC' else (2, 5, 4)
        np.save('%s/%d_x.npy' % (d, i), rng.uniform(-1, 1, shape).astype('f'))
        states = {'s%d' % k: rng.uniform(-1, 1, info['shape']).astype('f')
                  for k, info in enumerate(layer.state_info(2))}
        np.savez('%s/%d_s.npz' % (d, i), **states)


def test_layers_match_mxnet(tmp_path, mxnet_ref):
    d = str(tmp_path)
    _write_inputs(d)
    mxnet_ref(LAYERS + 'import mxnet as mx\nrun_layers(mx, %r, "ref")' % d)
    namespace = {}
    exec(LAYERS, namespace)
    namespace['run_layers'](neomx, d, 'neo')
    for i, case in enumerate(CASES):
        ref = np.load('%s/%d_ref.npz' % (d, i))
        got = np.load('%s/%d_neo.npz' % (d, i))
        assert sorted(ref.files) == sorted(got.files), case
        for k in ref.files:
            np.testing.assert_allclose(got[k], ref[k], rtol=1e-4, atol=2e-5,
                                       err_msg='%s: %s' % (case, k))


def test_language_model_params_and_symbol_files_from_mxnet(tmp_path, mxnet_ref):
    d = str(tmp_path)
    tokens = np.random.RandomState(3).randint(0, 20, (6, 4)).astype('f')
    np.save(d + '/tokens.npy', tokens)
    mxnet_ref(LM + '''
import mxnet as mx, numpy as np
mx.random.seed(5)
net = make_lm(mx)
net.initialize(mx.init.Xavier())
x = mx.nd.array(np.load('{d}/tokens.npy'))
h = mx.nd.zeros((2, 4, 12))
net(x, h, h)
net.save_parameters('{d}/lm.params')
net.hybridize()
out, h1, c1 = net(x, h, h)
np.save('{d}/lm_out.npy', out.asnumpy())
np.save('{d}/lm_c.npy', c1.asnumpy())
net.export('{d}/lm')
'''.format(d=d))
    mx = neomx
    namespace = {}
    exec(LM, namespace)
    net = namespace['make_lm'](mx)
    net.load_parameters(d + '/lm.params')
    x, h = mx.nd.array(tokens), mx.nd.zeros((2, 4, 12))
    out, _, c = net(x, h, h)
    np.testing.assert_allclose(out.asnumpy(), np.load(d + '/lm_out.npy'), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c.asnumpy(), np.load(d + '/lm_c.npy'), rtol=1e-4, atol=1e-5)
    imported = mx.gluon.SymbolBlock.imports(d + '/lm-symbol.json', ['data0', 'data1', 'data2'],
                                            d + '/lm-0000.params')
    np.testing.assert_allclose(imported(x, h, h)[0].asnumpy(), np.load(d + '/lm_out.npy'),
                               rtol=1e-4, atol=1e-5)
    # and back: neomx's export of the same model imports into MXNet
    net.hybridize()
    net(x, h, h)
    net.export(d + '/neo')
    diff = mxnet_ref('''
import mxnet as mx, numpy as np
net = mx.gluon.SymbolBlock.imports('{d}/neo-symbol.json', ['data0', 'data1', 'data2'],
                                   '{d}/neo-0000.params')
x = mx.nd.array(np.load('{d}/tokens.npy'))
h = mx.nd.zeros((2, 4, 12))
print(float(np.abs(net(x, h, h)[0].asnumpy() - np.load('{d}/lm_out.npy')).max()))
'''.format(d=d))
    assert float(diff.strip().splitlines()[-1]) < 1e-4
