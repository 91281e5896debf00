"""NumPy-interface benchmark: the seeds' MLP written Gluon 2 style (``forward(self, x)`` on
``mx.np.ndarray`` under ``npx.set_np()``), hybridized by deferred compute, against the same
MLP as a ``hybrid_forward`` HybridSequential on ``mx.nd`` arrays (hybridized by symbolic
tracing) and PyTorch eager, all in one process and in interleaved rounds; MXNet 1.9.1 runs
both versions of the same code in its own process (skipped with ``--no-mxnet``).

The MLP is d2l's (Dense(256, relu), Dense(128, relu), Dense(2) on a 1x512 input); each run
is 1000 calls outside autograd, then ``waitall()``, at batch 1 and at batch 256. Target: the
np/forward(x) version within 10% of the hybrid_forward version (both compile to the same
graph and code; the difference is the per-call cost of the np path). Wall time and the
process's CPU time are both reported: on a shared machine the CPU time is the steadier one.

Run with ``python benchmarks/bench_numpy.py [--repeat 11] [--no-mxnet] [--json out.json]``.
"""

import common  # noqa: F401  (puts the checkout on sys.path)
from common import finish, fmt, interleaved_cpu, parser, run_mxnet

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
    """Seconds per CALLS calls, wall and CPU ({'np', 'legacy', 'torch'} each): np/forward(x)
    hybridized, hybrid_forward hybridized, PyTorch eager (no_grad), medians of interleaved
    rounds."""
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
    return interleaved_cpu({'np': run(gluon2, x_np), 'legacy': run(legacy, x_nd),
                            'torch': torch_run}, repeat, warmup=2)


# The same two MLPs under MXNet 1.9.1, timed alike (median_time is pasted in front).
MXNET_CODE = '''
import json
import mxnet as mx
from mxnet import gluon, nd, np, npx
from mxnet.gluon import nn

class NumpyMLP(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden1 = nn.Dense(256, activation='relu')
        self.hidden2 = nn.Dense(128, activation='relu')
        self.output = nn.Dense(2)

    def forward(self, x):
        return self.output(self.hidden2(self.hidden1(x)))

def run(net, x):
    def fn():
        for _ in range(%(calls)d):
            net(x)
        mx.nd.waitall()
    return fn

out = {}
for batch in (1, 256):
    legacy = nn.HybridSequential()
    legacy.add(nn.Dense(256, activation='relu'), nn.Dense(128, activation='relu'), nn.Dense(2))
    legacy.initialize()
    legacy.hybridize()
    t_legacy = median_time(run(legacy, nd.random.normal(shape=(batch, 512))), %(repeat)d, 2)
    npx.set_np()
    gluon2 = NumpyMLP()
    gluon2.initialize()
    gluon2.hybridize()
    t_np = median_time(run(gluon2, np.random.normal(size=(batch, 512))), %(repeat)d, 2)
    npx.reset_np()
    out[batch] = [t_np, t_legacy]
print(json.dumps(out))
'''


def main():
    ap = parser(__doc__)
    args = ap.parse_args()
    args.repeat = args.repeat or 11
    ref = None if args.no_mxnet else run_mxnet(MXNET_CODE % {'calls': CALLS,
                                                              'repeat': args.repeat})
    rows, notes = [], []
    for batch in (1, 256):
        t, c = figures(batch, args.repeat)
        us = 1e6 / CALLS
        for name, label in (('np', 'np / forward(x), hybridized'),
                            ('legacy', 'nd / hybrid_forward, hybridized'),
                            ('torch', 'PyTorch eager (no_grad)')):
            rows.append(['batch %d: %s' % (batch, label), t[name] * us,
                         t[name] / t['legacy'], t[name] / t['torch'], c[name] * us,
                         c[name] / c['legacy']])
        if ref is not None:
            m_np, m_legacy = ref[str(batch)]
            rows += [['batch %d: MXNet 1.9.1 np / forward(x), hybridized (own process)' % batch,
                      m_np * us, m_np / t['legacy'], m_np / t['torch'], None, None],
                     ['batch %d: MXNet 1.9.1 nd / hybrid_forward, hybridized (own process)'
                      % batch, m_legacy * us, m_legacy / t['legacy'], m_legacy / t['torch'],
                      None, None]]
        wall, cpu = t['np'] / t['legacy'], c['np'] / c['legacy']
        notes.append('batch %d: target np/forward(x) <= 1.10x hybrid_forward: %s wall, %s CPU '
                     '(%s)' % (batch, fmt(wall), fmt(cpu),
                               'met' if max(wall, cpu) <= 1.10 else
                               'met on CPU time only' if cpu <= 1.10 else 'MISSED'))
    notes.append('median of %d interleaved rounds of %d calls each, one process, %d intra-op '
                 'thread(s), outside autograd; waitall() ends each run; MXNet 1.9.1 in its own '
                 'process, the median of %d runs of each version (its ratios are against '
                 'neomx\'s hybrid_forward figure of the same run)'
                 % (args.repeat, CALLS, torch.get_num_threads(), args.repeat))
    finish({'title': 'NumPy interface: the seeds\' MLP as a Gluon 2 block (np, forward(x)) '
                     'against hybrid_forward',
            'about': 'Microseconds per call of the MLP (512-256-128-2), every version '
                     'hybridized; ratios against neomx\'s hybrid_forward version and against '
                     'PyTorch eager in the same run.',
            'headers': ['implementation', 'us/call', 'vs hybrid_forward', 'vs PyTorch',
                        'CPU us/call', 'CPU vs hybrid_forward'],
            'rows': rows, 'notes': notes}, args)


if __name__ == '__main__':
    main()
