"""Automatic parallelism (d2l 8.3): 60 x ``nd.dot(x, x)`` (400x400) on cpu(0) and 60 on cpu(1),
one device after the other (``nd.waitall()`` in between) and both queued together.

Each CPU context has its own engine worker, so the two lists of independent products run at
the same time without the program saying so. PyTorch does the same work one list after the
other in one thread, and with two Python threads (one per list); MXNet 1.9.1 runs the seeds'
code in its own environment.

Target: together <= 0.65x one after the other.

    python benchmarks/bench_parallel.py [--repeat 7] [--no-mxnet] [--json PATH]
"""
import inspect
import threading

import common  # noqa: F401  (puts the checkout on sys.path)
from common import finish, fmt, interleaved, parser, ratio, run_mxnet

import torch

import neomx as mx
from neomx import nd

N, SIZE = 60, 400
TARGET = 0.65


def parallel_variants(mx, nd, n, size):
    """{name: fn} for the three schedules; the same source runs under MXNet."""
    x0 = nd.random.uniform(shape=(size, size), ctx=mx.cpu(0))
    x1 = nd.random.uniform(shape=(size, size), ctx=mx.cpu(1))
    nd.waitall()

    def run(x):
        return [nd.dot(x, x) for _ in range(n)]

    def only_cpu0():
        run(x0)
        nd.waitall()

    def one_after_the_other():
        run(x0)
        nd.waitall()
        run(x1)
        nd.waitall()

    def together():
        run(x0)
        run(x1)
        nd.waitall()
    return {'cpu(0) only': only_cpu0, 'one after the other': one_after_the_other,
            'together': together}


MXNET_CODE = inspect.getsource(parallel_variants) + '''
import json
import mxnet as mx
from mxnet import nd
variants = parallel_variants(mx, nd, %d, %d)
print(json.dumps({name: median_time(fn, %d) for name, fn in variants.items()}))
'''


def torch_variants(n, size):
    x0, x1 = torch.rand(size, size), torch.rand(size, size)
    threads = torch.get_num_threads()

    def run(x):
        return [torch.mm(x, x) for _ in range(n)]

    def one_after_the_other():
        run(x0)
        run(x1)

    def two_threads():
        t = threading.Thread(target=run, args=(x1,))
        t.start()
        run(x0)
        t.join()

    def all_cores():
        # One list after the other, each product using every core (intra-op parallelism).
        torch.set_num_threads(common_cores())
        try:
            run(x0)
            run(x1)
        finally:
            torch.set_num_threads(threads)
    return {'torch one after the other': one_after_the_other, 'torch two threads': two_threads,
            'torch all cores': all_cores}


def common_cores():
    return mx.engine.cpu_budget()


def main():
    args = parser(__doc__).parse_args()
    repeat = args.repeat or 7
    variants = parallel_variants(mx, nd, N, SIZE)
    variants.update(torch_variants(N, SIZE))
    t = interleaved(variants, repeat)
    ref = None if args.no_mxnet else run_mxnet(MXNET_CODE % (N, SIZE, repeat))
    seq, tog = t['one after the other'], t['together']
    rows = [['neomx', 'cpu(0) only', t['cpu(0) only'] * 1e3, None],
            ['neomx', 'one after the other', seq * 1e3, 1.0],
            ['neomx', 'together', tog * 1e3, ratio(tog, seq)],
            ['PyTorch', 'one after the other, %d thread(s)' % torch.get_num_threads(),
             t['torch one after the other'] * 1e3, 1.0],
            ['PyTorch', 'two Python threads', t['torch two threads'] * 1e3,
             ratio(t['torch two threads'], t['torch one after the other'])],
            ['PyTorch', 'one after the other, %d threads' % common_cores(),
             t['torch all cores'] * 1e3,
             ratio(t['torch all cores'], t['torch one after the other'])]]
    if ref:
        rows += [['MXNet 1.9.1', 'cpu(0) only', ref['cpu(0) only'] * 1e3, None],
                 ['MXNet 1.9.1', 'one after the other', ref['one after the other'] * 1e3, 1.0],
                 ['MXNet 1.9.1', 'together', ref['together'] * 1e3,
                  ratio(ref['together'], ref['one after the other'])]]
    met = 'met' if tog / seq <= TARGET else 'MISSED'
    notes = ['target: together <= %g x one after the other: %s (%s)' % (TARGET, fmt(tog / seq),
                                                                       met),
             'neomx together vs PyTorch two threads: %s'
             % fmt(ratio(tog, t['torch two threads'])),
             'median of %d rounds, the neomx and PyTorch schedules alternating within each round; '
             'neomx gives each of the two CPU devices %d intra-op thread(s) on this machine'
             % (repeat, torch.get_num_threads())]
    if ref is None:
        notes.append('MXNet 1.9.1 reference not run')
    finish({'title': 'Automatic parallelism (2 x 60 x `nd.dot`, 400x400, cpu(0) and cpu(1))',
            'about': 'Milliseconds for the whole schedule; the last column is the ratio to '
                     '"one after the other" of the same implementation (lower is better).',
            'headers': ['implementation', 'schedule', 'ms', 'vs one after the other'],
            'rows': rows, 'notes': notes}, args)


if __name__ == '__main__':
    main()
