"""Per-call cost of neomx's dispatch paths in two checkouts, in CPU time of the calling thread.

On a machine shared with other work, wall-clock figures of microsecond operations swing by
2x from one second to the next; the calling thread's CPU time (``time.thread_time``) counts
only what that thread ran, which is what a change to the front end changes. Tiny operations
run in the calling thread (the engine's inline path), so for them it is the whole cost; the
cases that hand work to an engine worker (``relu, 1x65536``; hybridized calls) count only
the pushing thread's share.

Each case runs ``--ops`` times per sample, ``--repeat`` samples per process (median), and
the two checkouts' processes alternate for ``--rounds`` rounds; the table gives the median
over rounds, the range and the ratio after/before.

    python tools/ab_micro.py --before ../before [--after .] [--rounds 6]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r'''
import json, statistics, sys, time
import neomx as mx
from neomx import nd, autograd, gluon

OPS, REPEAT = %d, %d
x = nd.ones((1, 512)); y = nd.ones((1, 512)); big = nd.ones((1, 65536))
v = nd.ones((4, 512))[1:3]
w = nd.ones((1, 512)); w.attach_grad()
net = gluon.nn.HybridSequential()
net.add(gluon.nn.Dense(16, activation='relu'), gluon.nn.Dense(4))
net.initialize(); net.hybridize()
data = nd.ones((2, 8)); net(data); nd.waitall()
sx = mx.sym.var('x'); exe = (sx * 2 + 1).simple_bind(mx.cpu(), x=(1, 512))
mlp = gluon.nn.Sequential()       # the same layers, called imperatively (hybrid_forward, F=nd)
mlp.add(gluon.nn.Dense(16, activation='relu'), gluon.nn.Dropout(0.5), gluon.nn.Dense(4))
mlp.initialize(); mlp(data)
cnn = gluon.nn.Sequential()
cnn.add(gluon.nn.Conv2D(4, 3, padding=1), gluon.nn.BatchNorm(), gluon.nn.Activation('relu'),
        gluon.nn.MaxPool2D(2))
cnn.initialize(); image = nd.ones((1, 1, 4, 4)); cnn(image)
emb = gluon.nn.Embedding(8, 4); emb.initialize(); idx = nd.array([1, 2, 3]); emb(idx)
nd.waitall()


def rec():
    with autograd.record():
        (w * 2).backward()

cases = {
    'x + 1': lambda: x + 1,
    'x + y': lambda: x + y,
    'nd.relu(x)': lambda: nd.relu(x),
    'view + 1 (invoke)': lambda: v + 1,
    'nd.broadcast_add(view, view)': lambda: nd.broadcast_add(v, v),
    'nd.relu(big) (pushed)': lambda: nd.relu(big),
    'recorded w * 2 + backward': rec,
    'hybridized MLP call': lambda: net(data),
    'executor forward': lambda: exe.forward(),
    'imperative MLP call (Dense, Dropout, Dense)': lambda: mlp(data),
    'imperative Conv2D, BatchNorm, Activation, MaxPool2D': lambda: cnn(image),
    'imperative Embedding': lambda: emb(idx),
}
out = {}
for name, f in cases.items():
    n = OPS if 'backward' not in name and 'MLP' not in name and 'executor' not in name \
        and 'imperative' not in name else max(OPS // 10, 1)
    for _ in range(2):
        for _ in range(n):
            f()
        nd.waitall()
    samples = []
    for _ in range(REPEAT):
        t = time.thread_time()
        for _ in range(n):
            f()
        nd.waitall()
        samples.append((time.thread_time() - t) / n * 1e6)
    out[name] = statistics.median(samples)
print(json.dumps(out))
'''


def run(root, ops, repeat):
    env = dict(os.environ, PYTHONPATH=root)
    r = subprocess.run([sys.executable, '-c', CHILD % (ops, repeat)], capture_output=True,
                       text=True, env=env, cwd=root, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-3000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--before', required=True)
    p.add_argument('--after', default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p.add_argument('--rounds', type=int, default=6)
    p.add_argument('--ops', type=int, default=2000)
    p.add_argument('--repeat', type=int, default=7)
    p.add_argument('--json')
    a = p.parse_args(argv)
    sides = {'before': os.path.abspath(a.before), 'after': os.path.abspath(a.after)}
    samples = {'before': [], 'after': []}
    for r in range(a.rounds):
        for side in (['before', 'after'] if r % 2 == 0 else ['after', 'before']):
            samples[side].append(run(sides[side], a.ops, a.repeat))
            print('round %d %s done' % (r + 1, side), file=sys.stderr, flush=True)
    print('CPU microseconds per call of the calling thread, %d rounds alternating '
          '(median [range])\n' % a.rounds)
    print('| case | before | after | after/before |')
    print('|---|---|---|---|')
    for k in samples['before'][0]:
        b = [s[k] for s in samples['before']]
        f = [s[k] for s in samples['after']]
        mb, mf = statistics.median(b), statistics.median(f)
        print('| %s | %.2f [%.2f-%.2f] | %.2f [%.2f-%.2f] | %.3f |'
              % (k, mb, min(b), max(b), mf, min(f), max(f), mf / mb))
    if a.json:
        with open(a.json, 'w') as fh:
            json.dump(samples, fh, indent=1)


if __name__ == '__main__':
    main()
