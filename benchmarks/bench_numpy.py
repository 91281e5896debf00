"""NumPy-interface benchmark: the seeds' MLP written Gluon 2 style (``forward(self, x)`` on
``mx.np.ndarray`` under ``npx.set_np()``), hybridized by deferred compute, against the same
MLP as a ``hybrid_forward`` HybridSequential on ``mx.nd`` arrays (hybridized by symbolic
tracing) and PyTorch eager, all in one process and in interleaved rounds.

The MLP is d2l's (Dense(256, relu), Dense(128, relu), Dense(2) on a 1x512 input); each run
is 1000 calls outside autograd, then ``waitall()``, at batch 1 and at batch 256. Target: the
np/forward(x) version within 10% of the hybrid_forward version (both compile to the same
graph and code; the difference is the per-call cost of the np path).

Run with ``python benchmarks/bench_numpy.py [--repeat 11] [--json out.json]``.
"""
import argparse

import common  # noqa: F401  (puts the checkout on sys.path)
from common import finish, fmt, interleaved

import torch  # noqa: E402

import neomx as mx  # noqa: E402
from neomx import gluon, nd, np, npx  # noqa: E402
from neomx.gluon import nn  # noqa: E402

CALLS = 1000


class NumpyMLP(gluon.HybridBlock):
    """The MLP in the style of the d2l book's second edition."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden1 = nn.Dense(256, activation='relu')
        self.hidden2 = nn.Dense(128, activation='relu')
        self.output = nn.Dense(2)

    def forward(self, x):
        return self.output(self.hidden2(self.hidden1(x)))


def legacy_mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation='relu'), nn.Dense(128, activation='relu'), nn.Dense(2))
    net.initialize()
    net.hybridize()
    return net


def figures(batch, repeat):
    """Seconds per CALLS calls: np/forward(x) hybridized, hybrid_forward hybridized, PyTorch
    eager (no_grad), medians of interleaved rounds."""
    x_nd = nd.random.normal(shape=(batch, 512))
    legacy = legacy_mlp()
    npx.set_np()
    try:
        x_np = np.random.normal(size=(batch, 512))
        gluon2 = NumpyMLP()
        gluon2.initialize()
        gluon2.hybridize()
        assert type(gluon2(x_np)) is np.ndarray
    finally:
        npx.reset_np()
    tnet = torch.nn.Sequential(torch.nn.Linear(512, 256), torch.nn.ReLU(),
                               torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, 2))
    tx = torch.randn(batch, 512)

    def run(net, x):
        def fn():
            for _ in range(CALLS):
                net(x)
            mx.nd.waitall()
        return fn

    def torch_run():
        with torch.no_grad():
            for _ in range(CALLS):
                tnet(tx)
    t = interleaved({'np': run(gluon2, x_np), 'legacy': run(legacy, x_nd), 'torch': torch_run},
                    repeat, warmup=2)
    return t['np'], t['legacy'], t['torch']


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--repeat', type=int, default=11)
    ap.add_argument('--json')
    args = ap.parse_args()
    rows, notes = [], []
    for batch in (1, 256):
        t_np, t_legacy, t_torch = figures(batch, args.repeat)
        rows += [['batch %d: np / forward(x), hybridized' % batch, t_np * 1e6 / CALLS,
                  t_np / t_legacy, t_np / t_torch],
                 ['batch %d: nd / hybrid_forward, hybridized' % batch, t_legacy * 1e6 / CALLS,
                  1.0, t_legacy / t_torch],
                 ['batch %d: PyTorch eager (no_grad)' % batch, t_torch * 1e6 / CALLS,
                  t_torch / t_legacy, 1.0]]
        notes.append('batch %d: target np/forward(x) <= 1.10x hybrid_forward: %s (%s)'
                     % (batch, fmt(t_np / t_legacy), 'met' if t_np / t_legacy <= 1.10
                        else 'MISSED'))
    notes.append('median of %d interleaved rounds of %d calls each, one process, %d intra-op '
                 'thread(s), outside autograd; waitall() ends each run'
                 % (args.repeat, CALLS, torch.get_num_threads()))
    finish({'title': 'NumPy interface: the seeds\' MLP as a Gluon 2 block (np, forward(x)) '
                     'against hybrid_forward',
            'about': 'Microseconds per call of the MLP (512-256-128-2), both neomx versions '
                     'hybridized; ratios against the hybrid_forward version and against '
                     'PyTorch eager in the same run.',
            'headers': ['implementation', 'us/call', 'vs hybrid_forward', 'vs PyTorch'],
            'rows': rows, 'notes': notes}, args)


if __name__ == '__main__':
    main()
