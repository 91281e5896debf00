"""Peak memory of a loop that never synchronises (the seeds' d2l 8.2.4 on memory).

Each iteration copies a 1 MB batch in from NumPy (allocated at once, as a data loader does)
and queues a product that reads it. The product is slower than the copy, so without any
synchronisation the front end runs ahead and every queued product keeps its batch alive:
memory grows with the length of the loop (MXNet: apache/mxnet#8011, #14211). neomx's engine
blocks the pusher once ``NEOMX_ENGINE_MAX_INFLIGHT`` operations wait on a device (512 by
default), so the loop runs in bounded memory.

Each figure comes from a fresh process: the growth of its resident set's high-water mark
(VmHWM) over its resident set just before the loop. Variants: neomx with the default limit,
with a limit of 64, without a limit (0), PyTorch (synchronous) and MXNet 1.9.1.

    python benchmarks/bench_backpressure.py [--iters 2000] [--no-mxnet] [--json PATH]

Without a limit the loop can hold ``--iters`` MB at its peak: keep it within the machine.
"""
import sys

import common  # noqa: F401  (puts the checkout on sys.path)
from common import finish, fmt, parser, ratio, run_mxnet, run_python

ITERS = 2000

# The loop, as run in each fresh process; FRAMEWORK is 'neomx', 'mxnet' or 'torch'.
LOOP = '''
import json, time
import numpy as np
FRAMEWORK, ITERS = %r, %d

def rss_kb(field):
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(field + ':'):
                return int(line.split()[1])

host = np.random.RandomState(0).rand(256, 1024).astype(np.float32)     # 1 MB
if FRAMEWORK == 'torch':
    import torch
    w = torch.rand(1024, 64)
    def step():
        x = torch.from_numpy(host).clone()
        return torch.mm(x, w)
    def sync(y):
        pass
else:
    if FRAMEWORK == 'neomx':
        import neomx as mx
    else:
        import mxnet as mx
    nd = mx.nd
    w = nd.random.uniform(shape=(1024, 64))
    def step():
        x = nd.array(host)        # 1 MB, allocated now
        return nd.dot(x, w)       # queued; holds x until it runs
    def sync(y):
        y.wait_to_read()
for _ in range(20):               # warm up, then measure from here
    sync(step())
if FRAMEWORK != 'torch':
    nd.waitall()
base = rss_kb('VmRSS')
t0 = time.perf_counter()
for i in range(ITERS):
    y = step()                    # never synchronised inside the loop
t1 = time.perf_counter()
if FRAMEWORK != 'torch':
    nd.waitall()
t2 = time.perf_counter()
info = {'peak_mb': (rss_kb('VmHWM') - base) / 1024.0, 'loop_s': t1 - t0, 'total_s': t2 - t0}
if FRAMEWORK == 'neomx':
    info['max_inflight'] = mx.engine.current().max_inflight
print(json.dumps(info), flush=True)
'''


def main():
    p = parser(__doc__)
    p.add_argument('--iters', type=int, default=ITERS)
    args = p.parse_args()
    n = args.iters
    runs = [('neomx, default limit', 'neomx', {}),
            ('neomx, NEOMX_ENGINE_MAX_INFLIGHT=64', 'neomx', {'NEOMX_ENGINE_MAX_INFLIGHT': '64'}),
            ('neomx, no limit (NEOMX_ENGINE_MAX_INFLIGHT=0)', 'neomx',
             {'NEOMX_ENGINE_MAX_INFLIGHT': '0'}),
            ('PyTorch eager', 'torch', {})]
    results = {}
    for label, framework, env in runs:
        results[label] = run_python(sys.executable, LOOP % (framework, n), env)
    if not args.no_mxnet:
        results['MXNet 1.9.1'] = run_mxnet(LOOP % ('mxnet', n))
    default = results['neomx, default limit']
    rows = []
    for label, r in results.items():
        if r is None:
            continue
        name = label
        if 'max_inflight' in r and label == 'neomx, default limit':
            name = 'neomx, default limit (%d)' % r['max_inflight']
        rows.append([name, r['peak_mb'], r['loop_s'], r['total_s'],
                     ratio(r['total_s'], default['total_s'])])
    mxnet = results.get('MXNet 1.9.1')
    notes = ['%d iterations, each copying in a 1 MB batch and queuing a (256x1024)x(1024x64) '
             'product; each row is a fresh process' % n,
             'peak = growth of VmHWM over VmRSS before the loop; "loop" is the time the '
             'front end spent in the loop, "total" includes the final nd.waitall()']
    if mxnet:
        notes.append('neomx with its default limit peaks at %sx MXNet 1.9.1\'s growth. MXNet\'s '
                     'nd.array copies synchronously, queued behind the operations already '
                     'pushed to the device, so its loop never runs ahead (nor overlaps the copy '
                     'with computation)' % fmt(ratio(default['peak_mb'], mxnet['peak_mb'])))
    else:
        notes.append('MXNet 1.9.1 reference not run')
    finish({'title': 'Memory of a loop that never synchronises (%d x 1 MB batches)' % n,
            'about': 'Peak growth of the resident set (MB) and times (s); the last column is '
                     'the total time relative to neomx with its default limit.',
            'headers': ['implementation', 'peak (MB)', 'loop (s)', 'total (s)',
                        'total vs neomx default'],
            'rows': rows, 'notes': notes}, args)


if __name__ == '__main__':
    main()
