"""A LeNet training step (d2l's Gluon LeNet, batch 256, 28x28 inputs, SGD) and data-parallel
training on two CPU devices.

Every variant runs in a fresh process of its own (thread pools of one framework must not spin
while another measures), and the variants alternate over several rounds; each figure is the
median over rounds of each process's median step.

Each step is the seeds' Gluon loop: ``split_and_load``, one loss per device under
``autograd.record()``, ``backward``, ``trainer.step(batch_size)``, then ``nd.waitall()`` so a
step is timed to its end. neomx runs it imperatively and hybridized; PyTorch runs the same
model with 1 intra-op thread and with one per core, and the better of the two is "PyTorch's
best configuration"; MXNet 1.9.1 runs the same source in its own environment.

Target: neomx's step <= 1.3x PyTorch's best. Data-parallel figures (cpu(0) and cpu(1) against
cpu(0) alone, the same global batch) are recorded, not targeted.

    python benchmarks/bench_training.py [--repeat 5] [--rounds 3] [--no-mxnet] [--json PATH]
"""
import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys

import common  # noqa: F401  (puts the checkout on sys.path)
from common import TIMING_HELPERS, finish, fmt, median_time, parser, ratio, run_mxnet

import torch

import neomx as mx

BATCH = 256
TARGET = 1.3
STEPS = 3          # steps per timed sample


def lenet_step(mx, ctxs, hybridize, batch, steps):
    """A function running ``steps`` training steps of LeNet on ``ctxs`` (the same source runs
    under MXNet 1.9.1)."""
    from mxnet_like import autograd, gluon, init, nd  # replaced by the caller's modules
    nn = gluon.nn
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, kernel_size=5, activation='sigmoid'), nn.MaxPool2D(pool_size=2, strides=2),
            nn.Conv2D(16, kernel_size=5, activation='sigmoid'), nn.MaxPool2D(pool_size=2, strides=2),
            nn.Dense(120, activation='sigmoid'), nn.Dense(84, activation='sigmoid'), nn.Dense(10))
    net.initialize(init=init.Xavier(), ctx=ctxs)
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    X = nd.random.uniform(shape=(batch, 1, 28, 28))
    y = nd.random.randint(0, 10, shape=(batch,)).astype('float32')
    nd.waitall()

    def run():
        for _ in range(steps):
            xs = gluon.utils.split_and_load(X, ctxs)
            ys = gluon.utils.split_and_load(y, ctxs)
            with autograd.record():
                ls = [loss(net(a), b) for a, b in zip(xs, ys)]
            for l in ls:
                l.backward()
            trainer.step(batch)
        nd.waitall()
    return run


def _source():
    src = inspect.getsource(lenet_step)
    return src.replace('    from mxnet_like import autograd, gluon, init, nd  # replaced by the '
                       "caller's modules\n",
                       '    from mxnet import autograd, gluon, init, nd\n')


def neomx_step(ctxs, hybridize):
    namespace = {}
    exec(compile(_source().replace('from mxnet import', 'from neomx import'), __file__, 'exec'),
         namespace)
    return namespace['lenet_step'](mx, ctxs, hybridize, BATCH, STEPS)


MXNET_CODE = TIMING_HELPERS + _source() + '''
import json
import mxnet as mx
ctxs = [mx.cpu(i) for i in range(%d)]
print(json.dumps(median_time(lenet_step(mx, ctxs, %s, %d, %d), %d, warmup=2)))
'''

def torch_step(threads):
    tnn = torch.nn
    net = tnn.Sequential(tnn.Conv2d(1, 6, 5), tnn.Sigmoid(), tnn.MaxPool2d(2, 2),
                         tnn.Conv2d(6, 16, 5), tnn.Sigmoid(), tnn.MaxPool2d(2, 2), tnn.Flatten(),
                         tnn.Linear(256, 120), tnn.Sigmoid(), tnn.Linear(120, 84), tnn.Sigmoid(),
                         tnn.Linear(84, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    lossf = tnn.CrossEntropyLoss()
    X = torch.rand(BATCH, 1, 28, 28)
    y = torch.randint(0, 10, (BATCH,))

    def run():
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            for _ in range(STEPS):
                opt.zero_grad()
                lossf(net(X), y).backward()
                opt.step()
        finally:
            torch.set_num_threads(before)
    return run


VARIANTS = {   # name: (framework, devices or threads, hybridize)
    'neomx imperative': ('neomx', 1, False),
    'neomx hybridized': ('neomx', 1, True),
    'neomx hybridized, 2 devices': ('neomx', 2, True),
    'PyTorch 1 thread': ('torch', 1, None),
    'PyTorch %d threads' % mx.engine.cpu_budget(): ('torch', mx.engine.cpu_budget(), None),
    'MXNet 1.9.1 imperative': ('mxnet', 1, False),
    'MXNet 1.9.1 hybridized': ('mxnet', 1, True),
    'MXNet 1.9.1 hybridized, 2 devices': ('mxnet', 2, True),
}


def child(name, repeat):
    """Seconds per step of variant ``name``, measured in this process."""
    kind, n, hybridize = VARIANTS[name]
    if kind == 'neomx':
        fn = neomx_step([mx.cpu(i) for i in range(n)], hybridize)
    else:
        fn = torch_step(n)
    return median_time(fn, repeat, warmup=2) / STEPS


def measure(name, repeat):
    kind, n, hybridize = VARIANTS[name]
    if kind == 'mxnet':
        v = run_mxnet(MXNET_CODE % (n, hybridize, BATCH, STEPS, repeat))
        return None if v is None else v / STEPS
    env = {k: v for k, v in os.environ.items() if not k.startswith(('OMP_',))}
    r = subprocess.run([sys.executable, os.path.abspath(__file__), '--child', name, '--repeat',
                        str(repeat)], capture_output=True, text=True, timeout=900, env=env)
    if r.returncode != 0:
        raise RuntimeError('variant %r failed:\n%s' % (name, r.stderr[-3000:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    p = parser(__doc__)
    p.add_argument('--child', help=argparse.SUPPRESS)
    p.add_argument('--rounds', type=int, default=3, help='rounds of all variants (default 3)')
    args = p.parse_args()
    repeat = args.repeat or 5
    if args.child:
        print(json.dumps(child(args.child, repeat)))
        return
    names = [n for n in VARIANTS if not (args.no_mxnet and VARIANTS[n][0] == 'mxnet')]
    samples = {n: [] for n in names}
    for _ in range(args.rounds):
        for n in names:
            v = measure(n, repeat)
            if v is not None:
                samples[n].append(v)
    t = {n: statistics.median(v) for n, v in samples.items() if v}
    cores = mx.engine.cpu_budget()
    torch_names = ('PyTorch 1 thread', 'PyTorch %d threads' % cores)
    best_name = min(torch_names, key=t.get)
    best = t[best_name]
    rows = []
    for name in names:
        if name not in t:
            continue
        ref = t.get(name.replace('neomx', 'MXNet 1.9.1')) if name.startswith('neomx') else None
        rows.append([name, t[name] * 1e3, BATCH / t[name], ratio(t[name], best),
                     ratio(t[name], ref)])
    one, two = t['neomx hybridized'], t['neomx hybridized, 2 devices']
    step = min(t['neomx imperative'], one)
    notes = ['target: neomx step <= %g x PyTorch best (%s): %s (%s)'
             % (TARGET, best_name, fmt(step / best), 'met' if step / best <= TARGET else 'MISSED'),
             'data parallel, cpu(0) and cpu(1) against cpu(0) alone (same global batch %d): '
             '%sx the samples per second' % (BATCH, fmt(one / two)),
             'each variant in its own process; %d rounds alternating the variants, each process '
             'the median of %d samples of %d steps; neomx shares the %d cores between its CPU '
             'devices' % (args.rounds, repeat, STEPS, cores)]
    if not any(n.startswith('MXNet') for n in t):
        notes.append('MXNet 1.9.1 reference not run')
    finish({'title': 'LeNet training step (batch %d, 28x28, SGD)' % BATCH,
            'about': 'Milliseconds per step (forward, loss, backward, update, synchronised); '
                     'ratios against PyTorch\'s best configuration and against MXNet 1.9.1 '
                     'doing the same.',
            'headers': ['implementation', 'ms/step', 'samples/s', 'vs PyTorch best',
                        'vs MXNet 1.9.1'],
            'rows': rows, 'notes': notes}, args)


if __name__ == '__main__':
    main()
