"""The seeds' asynchronous-computation experiment (d2l 8.2): how long queuing
``y = nd.dot(x, x).sum()`` on a 2000x2000 ``x`` takes, against the time until ``y`` is ready.

With an asynchronous engine the first is microseconds and the second is the matrix product;
PyTorch on CPU runs the product inside the call, so its two times are the same. MXNet 1.9.1
runs the same code in its own environment.

    python benchmarks/bench_async_queue.py [--repeat 7] [--no-mxnet] [--json PATH]
"""
import inspect
import statistics
import time

import common  # noqa: F401  (puts the checkout on sys.path)
from common import finish, fmt, parser, ratio, run_mxnet

import torch

import neomx as mx  # noqa: F401
from neomx import nd

N = 2000


def queue_and_finish(nd, x, repeat):
    """Median (time to queue, time until ready) of ``y = nd.dot(x, x).sum()``; the same
    source runs under MXNet (``nd`` is either framework's)."""
    nd.waitall()
    y = nd.dot(x, x).sum()      # warm up
    y.wait_to_read()
    queued, ready = [], []
    for _ in range(repeat):
        nd.waitall()
        t0 = time.perf_counter()
        y = nd.dot(x, x).sum()
        t1 = time.perf_counter()
        y.wait_to_read()
        t2 = time.perf_counter()
        queued.append(t1 - t0)
        ready.append(t2 - t0)
    return statistics.median(queued), statistics.median(ready)


MXNET_CODE = inspect.getsource(queue_and_finish) + '''
import json
import mxnet as mx
from mxnet import nd
x = nd.random.uniform(shape=(%d, %d))
print(json.dumps(queue_and_finish(nd, x, %d)))
'''


def torch_times(repeat):
    x = torch.rand(N, N)
    torch.mm(x, x).sum()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        torch.mm(x, x).sum()
        samples.append(time.perf_counter() - t0)
    t = statistics.median(samples)
    return t, t


def main():
    args = parser(__doc__).parse_args()
    repeat = args.repeat or 7
    x = nd.random.uniform(shape=(N, N))
    neomx_q, neomx_r = queue_and_finish(nd, x, repeat)
    torch_q, torch_r = torch_times(repeat)
    ref = None if args.no_mxnet else run_mxnet(MXNET_CODE % (N, N, repeat))
    rows = [['neomx', neomx_q * 1e3, neomx_r * 1e3, ratio(neomx_q, neomx_r),
             ratio(neomx_r, torch_r)],
            ['PyTorch eager', torch_q * 1e3, torch_r * 1e3, 1.0, 1.0]]
    if ref:
        rows.append(['MXNet 1.9.1', ref[0] * 1e3, ref[1] * 1e3, ratio(ref[0], ref[1]),
                     ratio(ref[1], torch_r)])
    notes = ['median of %d runs; torch intra-op threads in this process: %d (neomx gives its '
             'one CPU device all cores, and PyTorch runs with the same); MXNet uses its own '
             'default threads'
             % (repeat, torch.get_num_threads()),
             'neomx queues the work in %s us, %s of the time until it is done'
             % (fmt(neomx_q * 1e6), fmt(ratio(neomx_q, neomx_r)))]
    if ref is None:
        notes.append('MXNet 1.9.1 reference not run')
    finish({'title': 'Queuing against finishing (`nd.dot(x, x).sum()`, 2000x2000)',
            'about': 'Milliseconds from the call until it returns ("queued") and until the '
                     'result is ready ("ready").',
            'headers': ['implementation', 'queued (ms)', 'ready (ms)', 'queued/ready',
                        'ready vs PyTorch'],
            'rows': rows, 'notes': notes}, args)


if __name__ == '__main__':
    main()
