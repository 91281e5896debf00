"""Tiny-operator dispatch: 1000 x ``y = x + 1`` on a 1x512 array.

Two modes, as in the seeds (d2l 8.2.3): *async* pushes all 1000 operations and calls
``nd.waitall()`` once; *sync* calls ``y.wait_to_read()`` after each. The cost per operation
is compared with PyTorch eager doing the same additions in the same process (PyTorch on CPU
is synchronous, so it has one figure) and with MXNet 1.9.1 running the same loops in its own
environment. neomx is measured under ThreadedEngine (the default) and NaiveEngine.

Targets: async <= 8 us/op and <= 2.5x PyTorch.

    python benchmarks/bench_dispatch.py [--repeat 21] [--no-mxnet] [--json PATH]
"""
import contextlib

import common  # noqa: F401  (puts the checkout on sys.path)
from common import finish, fmt, interleaved, parser, ratio, run_mxnet

import torch

import neomx as mx
from neomx import nd

TARGET_US = 8.0
TARGET_VS_TORCH = 2.5

MXNET_CODE = '''
import json
import mxnet as mx
from mxnet import nd
N, REPEAT = %d, %d
x = nd.ones((1, 512))
def run_async():
    for _ in range(N):
        y = x + 1
    nd.waitall()
def run_sync():
    for _ in range(N):
        y = x + 1
        y.wait_to_read()
x2 = nd.ones((1, 512))
def run_arrays():
    for _ in range(N):
        y = x + x2
    nd.waitall()
def run_relu():
    for _ in range(N):
        y = nd.relu(x)
    nd.waitall()
print(json.dumps({'async': median_time(run_async, REPEAT, 3) / N,
                  'sync': median_time(run_sync, REPEAT, 3) / N,
                  'x + y': median_time(run_arrays, REPEAT, 3) / N,
                  'relu': median_time(run_relu, REPEAT, 3) / N}))
'''


@contextlib.contextmanager
def using(engine):
    """Runs a block under ``engine`` (an engine object, reused across rounds)."""
    previous = mx.engine.current()
    mx.engine.set_engine_type(engine)
    try:
        yield
    finally:
        mx.engine.set_engine_type(previous)


def measure(n, repeat):
    x = nd.ones((1, 512))
    xt = torch.ones(1, 512)
    threaded = mx.engine.current()
    naive = mx.engine.NaiveEngine()

    def neomx_async():
        for _ in range(n):
            y = x + 1  # noqa: F841
        nd.waitall()

    def neomx_sync():
        for _ in range(n):
            y = x + 1
            y.wait_to_read()

    def naive_async():
        with using(naive):
            neomx_async()

    def naive_sync():
        with using(naive):
            neomx_sync()

    def torch_eager():
        for _ in range(n):
            y = xt + 1  # noqa: F841

    # Two more operations, to show the general paths: arithmetic between two arrays, and an
    # operator called as nd.<op>.
    x2 = nd.ones((1, 512))
    xt2 = torch.ones(1, 512)

    def neomx_arrays():
        for _ in range(n):
            y = x + x2  # noqa: F841
        nd.waitall()

    def torch_arrays():
        for _ in range(n):
            y = xt + xt2  # noqa: F841

    def neomx_relu():
        for _ in range(n):
            y = nd.relu(x)  # noqa: F841
        nd.waitall()

    def torch_relu():
        for _ in range(n):
            y = torch.relu(xt)  # noqa: F841

    times = interleaved({'async': neomx_async, 'sync': neomx_sync, 'naive async': naive_async,
                         'naive sync': naive_sync, 'torch': torch_eager,
                         'x + y': neomx_arrays, 'torch x + y': torch_arrays,
                         'relu': neomx_relu, 'torch relu': torch_relu}, repeat, warmup=3)
    assert threaded is mx.engine.current()
    return {k: v / n for k, v in times.items()}


def main():
    args = parser(__doc__).parse_args()
    repeat = args.repeat or 21
    n = 1000
    t = measure(n, repeat)
    ref = None if args.no_mxnet else run_mxnet(MXNET_CODE % (n, repeat))
    torch_us = t['torch'] * 1e6
    rows = []
    op = '`x + 1`'
    for label, key, ref_key in [('neomx, ThreadedEngine', 'async', 'async'),
                                ('neomx, ThreadedEngine', 'sync', 'sync'),
                                ('neomx, NaiveEngine', 'naive async', 'async'),
                                ('neomx, NaiveEngine', 'naive sync', 'sync')]:
        us = t[key] * 1e6
        rows.append([op, label, key.split()[-1], us, ratio(us, torch_us),
                     ratio(us, ref[ref_key] * 1e6) if ref else None])
    rows.append([op, 'PyTorch eager', '-', torch_us, 1.0,
                 ratio(torch_us, ref['async'] * 1e6) if ref else None])
    if ref:
        for mode in ('async', 'sync'):
            us = ref[mode] * 1e6
            rows.append([op, 'MXNet 1.9.1', mode, us, ratio(us, torch_us), 1.0])
    for key, op in (('x + y', '`x + y` (two arrays)'), ('relu', '`nd.relu(x)`')):
        base = t['torch ' + key] * 1e6
        mx_us = ref[key] * 1e6 if ref else None
        us = t[key] * 1e6
        rows.append([op, 'neomx, ThreadedEngine', 'async', us, ratio(us, base),
                     ratio(us, mx_us) if ref else None])
        rows.append([op, 'PyTorch eager', '-', base, 1.0, ratio(base, mx_us) if ref else None])
        if ref:
            rows.append([op, 'MXNet 1.9.1', 'async', mx_us, ratio(mx_us, base), 1.0])
    async_us = t['async'] * 1e6
    met = lambda ok: 'met' if ok else 'MISSED'
    notes = ['targets: async %s us/op <= %g (%s); async %sx PyTorch <= %g (%s)'
             % (fmt(async_us), TARGET_US, met(async_us <= TARGET_US), fmt(async_us / torch_us),
                TARGET_VS_TORCH, met(async_us / torch_us <= TARGET_VS_TORCH)),
             'median of %d rounds of %d operations; the neomx and PyTorch variants alternate '
             'within each round; MXNet runs in its own process (default ThreadedEnginePerDevice)'
             % (repeat, n),
             'torch intra-op threads: %d' % torch.get_num_threads()]
    if ref is None:
        notes.append('MXNet 1.9.1 reference not run')
    finish({'title': 'Tiny-operator dispatch (1000 x `y = x + 1`, 1x512)',
            'about': 'Microseconds per operation; "vs" columns are ratios (lower is better); '
                     'the MXNet column compares each row with MXNet in the same mode. The '
                     'targets are for `x + 1`; the last rows show two other operations on the '
                     'same 1x512 arrays.',
            'headers': ['operation', 'implementation', 'mode', 'us/op', 'vs PyTorch',
                        'vs MXNet 1.9.1'],
            'rows': rows, 'notes': notes}, args)


if __name__ == '__main__':
    main()
