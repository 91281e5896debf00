"""LSTM benchmark: a 2-layer LSTM (256 hidden, input 256) over a sequence of 35 steps with a
batch of 32, forward and backward (gradients of the input and every weight): neomx's
``gluon.rnn.LSTM`` hybridized and imperative against ``torch.nn.LSTM`` in the same process
(interleaved rounds), and MXNet 1.9.1's hybridized ``gluon.rnn.LSTM`` when its environment is
installed. Target: neomx hybridized within 1.15x PyTorch.

Both run ATen's fused LSTM kernel; neomx adds flattening the weights into MXNet's packed
parameter vector and splitting its gradient back, the engine's push and the autograd glue.

    python benchmarks/bench_rnn.py [--repeat 15] [--no-mxnet] [--json out.json]
"""
import common  # noqa: F401  (puts the checkout on sys.path)
from common import finish, fmt, interleaved, parser, ratio, run_mxnet

import torch  # noqa: E402

import neomx as mx  # noqa: E402
from neomx import autograd, nd  # noqa: E402

T, N, I, H, L = 35, 32, 256, 256, 2


def neomx_step(hybridize):
    layer = mx.gluon.rnn.LSTM(H, num_layers=L, input_size=I)
    layer.initialize()
    if hybridize:
        layer.hybridize()
    x = nd.random.uniform(-1, 1, shape=(T, N, I))
    x.attach_grad()
    w = layer.l0_i2h_weight

    def run():
        with autograd.record():
            out = layer(x)
        out.backward()
        w.grad().wait_to_read()
        x.grad.wait_to_read()
    return run


def torch_step():
    layer = torch.nn.LSTM(I, H, num_layers=L)
    x = torch.empty(T, N, I).uniform_(-1, 1).requires_grad_()

    def run():
        layer.zero_grad(set_to_none=False)
        x.grad = None
        out, _ = layer(x)
        out.backward(torch.ones_like(out))
    return run


MXNET = '''
import json
import mxnet as mx
layer = mx.gluon.rnn.LSTM(%d, num_layers=%d, input_size=%d)
layer.initialize()
layer.hybridize()
x = mx.nd.random.uniform(-1, 1, shape=(%d, %d, %d))
x.attach_grad()
def run():
    with mx.autograd.record():
        out = layer(x)
    out.backward()
    mx.nd.waitall()
print(json.dumps(median_time(run, %%d, warmup=2)))
''' % (H, L, I, T, N, I)


def main():
    args = parser(__doc__).parse_args()
    repeat = args.repeat or 15
    times = interleaved({'hybrid': neomx_step(True), 'imperative': neomx_step(False),
                         'torch': torch_step()}, repeat, warmup=2)
    mxnet = None if args.no_mxnet else run_mxnet(MXNET % repeat)
    torch_t = times['torch']
    rows = [['neomx gluon.rnn.LSTM, hybridized', times['hybrid'] * 1e3,
             ratio(times['hybrid'], torch_t)],
            ['neomx gluon.rnn.LSTM, imperative', times['imperative'] * 1e3,
             ratio(times['imperative'], torch_t)],
            ['PyTorch torch.nn.LSTM', torch_t * 1e3, 1.0],
            ['MXNet 1.9.1 gluon.rnn.LSTM, hybridized', None if mxnet is None else mxnet * 1e3,
             ratio(mxnet, torch_t)]]
    finish({'title': 'LSTM forward and backward (2 layers, 256 hidden, sequence 35, batch 32)',
            'about': 'Milliseconds per forward+backward step (input and weight gradients), '
                     'median of %d interleaved rounds; ratio to PyTorch in the same process '
                     '(MXNet: its own process, same machine).' % repeat,
            'headers': ['variant', 'ms per step', 'x PyTorch'],
            'rows': rows,
            'notes': ['Target: neomx hybridized <= 1.15x PyTorch; measured %s.'
                      % fmt(ratio(times['hybrid'], torch_t)),
                      'torch threads: %d' % torch.get_num_threads()]}, args)


if __name__ == '__main__':
    main()
