"""Hybridization benchmark: the seeds' MLP and a small ResNet training step.

1. The MLP of the seeds (d2l 8.1: Dense(256, relu), Dense(128, relu), Dense(2) on a 1x512
   input), 1000 calls outside autograd then ``nd.waitall()``: neomx imperative, neomx
   hybridized, PyTorch eager under ``no_grad`` (same process, same thread settings, in
   interleaved rounds), and
   MXNet 1.9.1 imperative/hybridized from the reference environment (a subprocess) when it is
   installed. Targets: hybridized <= 0.75x PyTorch eager and <= 0.5x neomx imperative.
2. A training step (forward, softmax cross-entropy, backward, SGD update) of a small ResNet
   (two residual stages, BatchNorm, batch 16 of 3x32x32), neomx hybridized against the same
   model in PyTorch. Target: <= 1.1x PyTorch.

Each figure is the best of ``--repeat`` rounds (the machine may be shared); run with
``python benchmarks/bench_hybrid.py [--repeat 5] [--no-mxnet] [--json out.json]``.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

import common  # noqa: F401  (puts the checkout on sys.path)
from common import MXNET_REF, ROOT, finish, fmt, interleaved, own_threads

import torch  # noqa: E402

import neomx as mx  # noqa: E402
from neomx import autograd, gluon, nd  # noqa: E402
from neomx.gluon import nn  # noqa: E402

CALLS = 1000


def best(fn, repeat):
    fn()                                   # warm up (traces, compiles, allocates)
    times = []
    for _ in range(repeat):
        own_threads()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


# -- 1. the seeds' MLP ---------------------------------------------------------------------

def get_net():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation='relu'), nn.Dense(128, activation='relu'), nn.Dense(2))
    net.initialize()
    return net


def mlp_figures(repeat):
    """Seconds per CALLS calls of the MLP: neomx imperative, neomx hybridized and PyTorch eager
    (no_grad), the median of rounds that run all three in turn, so that the machine's changing
    speed falls on all of them alike."""
    x = nd.random.normal(shape=(1, 512))
    imperative = get_net()
    hybridized = get_net()
    hybridized.hybridize()
    tnet = torch.nn.Sequential(torch.nn.Linear(512, 256), torch.nn.ReLU(),
                               torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, 2))
    tx = torch.randn(1, 512)

    def neomx_run(net):
        def run():
            for _ in range(CALLS):
                net(x)
            nd.waitall()
        return run

    def torch_run():
        with torch.no_grad():
            for _ in range(CALLS):
                tnet(tx)
    t = interleaved({'imperative': neomx_run(imperative), 'hybridized': neomx_run(hybridized),
                     'torch': torch_run}, repeat, warmup=2)
    return t['imperative'], t['hybridized'], t['torch']


MXNET_MLP = r'''
import time, mxnet as mx
from mxnet import nd
from mxnet.gluon import nn
def get_net():
    net = nn.HybridSequential()
    net.add(nn.Dense(256, activation='relu'), nn.Dense(128, activation='relu'), nn.Dense(2))
    net.initialize()
    return net
def best(fn, repeat):
    fn(); ts = []
    for _ in range(repeat):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return min(ts)
x = nd.random.normal(shape=(1, 512))
net = get_net()
def run():
    for _ in range(1000):
        net(x)
    nd.waitall()
imp = best(run, REPEAT)
net.hybridize()
hyb = best(run, REPEAT)
print(imp, hyb)
'''


# -- 2. a small ResNet training step ---------------------------------------------------------

class Residual(nn.HybridBlock):
    def __init__(self, channels, strides=1, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.conv1 = nn.Conv2D(channels, 3, padding=1, strides=strides)
            self.bn1 = nn.BatchNorm()
            self.conv2 = nn.Conv2D(channels, 3, padding=1)
            self.bn2 = nn.BatchNorm()
            self.down = nn.Conv2D(channels, 1, strides=strides) if strides != 1 else None

    def hybrid_forward(self, F, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        if self.down is not None:
            x = self.down(x)
        return F.relu(y + x)


def small_resnet():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(16, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'),
                Residual(16), Residual(32, strides=2), nn.GlobalAvgPool2D(), nn.Dense(10))
    return net


class TorchResidual(torch.nn.Module):
    def __init__(self, cin, channels, strides=1):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, channels, 3, padding=1, stride=strides)
        self.bn1 = torch.nn.BatchNorm2d(channels, eps=1e-5, momentum=0.1)
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1)
        self.bn2 = torch.nn.BatchNorm2d(channels)
        self.down = torch.nn.Conv2d(cin, channels, 1, stride=strides) if strides != 1 else None

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        if self.down is not None:
            x = self.down(x)
        return torch.relu(y + x)


def torch_resnet():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16),
                               torch.nn.ReLU(), TorchResidual(16, 16), TorchResidual(16, 32, 2),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                               torch.nn.Linear(32, 10))


STEPS = 20
BATCH = 16


def train_neomx(repeat):
    net = small_resnet()
    net.initialize(mx.init.Xavier() if hasattr(mx, 'init') else None)
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.05})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x = nd.random.normal(shape=(BATCH, 3, 32, 32))
    y = nd.array(np.random.randint(0, 10, BATCH))

    def run():
        for _ in range(STEPS):
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(BATCH)
        nd.waitall()
    return best(run, repeat) / STEPS


def train_torch(repeat):
    net = torch_resnet()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(BATCH, 3, 32, 32)
    y = torch.randint(0, 10, (BATCH,))

    def run():
        for _ in range(STEPS):
            opt.zero_grad()
            loss = loss_fn(net(x), y)
            loss.backward()
            opt.step()
    return best(run, repeat) / STEPS


def mxnet_figures(repeat):
    if not os.path.exists(MXNET_REF):
        return None
    env = dict(os.environ)
    env.pop('PYTHONPATH', None)
    r = subprocess.run([MXNET_REF, '-c', MXNET_MLP.replace('REPEAT', str(repeat))],
                       capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        print('MXNet run failed:', r.stderr[-500:], file=sys.stderr)
        return None
    imp, hyb = map(float, r.stdout.split()[-2:])
    return imp, hyb


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--no-mxnet', action='store_true')
    ap.add_argument('--no-train', action='store_true')
    ap.add_argument('--json')
    args = ap.parse_args()
    res = {}
    imp, hyb, teager = mlp_figures(max(args.repeat, 11))
    res['mlp'] = {'neomx_imperative_s': imp, 'neomx_hybridized_s': hyb,
                  'torch_eager_no_grad_s': teager}
    if not args.no_mxnet:
        m = mxnet_figures(args.repeat)
        if m is not None:
            res['mlp']['mxnet_imperative_s'], res['mlp']['mxnet_hybridized_s'] = m
    threads = torch.get_num_threads()
    rows = [['neomx imperative', imp * 1e6 / CALLS, imp / teager, None],
            ['neomx hybridized', hyb * 1e6 / CALLS, hyb / teager, hyb / imp],
            ['PyTorch eager (no_grad)', teager * 1e6 / CALLS, 1.0, None]]
    if 'mxnet_imperative_s' in res['mlp']:
        mi, mh = res['mlp']['mxnet_imperative_s'], res['mlp']['mxnet_hybridized_s']
        rows += [['MXNet 1.9.1 imperative', mi * 1e6 / CALLS, mi / teager, None],
                 ['MXNet 1.9.1 hybridized', mh * 1e6 / CALLS, mh / teager, mh / mi]]
    notes = ['targets: hybridized <= 0.75x PyTorch eager: %s (%s); hybridized <= 0.5x '
             'imperative: %s (%s)' % (fmt(hyb / teager), 'met' if hyb / teager <= 0.75 else
                                      'MISSED', fmt(hyb / imp),
                                      'met' if hyb / imp <= 0.5 else 'MISSED'),
             'neomx and PyTorch: median of %d interleaved rounds of %d calls each; MXNet: best '
             'of %d runs; %d intra-op thread(s), outside autograd; nd.waitall() ends each run'
             % (max(args.repeat, 11), CALLS, args.repeat, threads)]
    if not args.no_train:
        n = max(2, args.repeat // 2)
        tn = train_neomx(n)
        tt = train_torch(n)
        res['resnet_train_step'] = {'neomx_hybridized_s': tn, 'torch_s': tt}
        rows += [['small ResNet training step, neomx hybridized (ms)', tn * 1e3, tn / tt, None],
                 ['small ResNet training step, PyTorch (ms)', tt * 1e3, 1.0, None]]
        notes.append('small ResNet: batch %d of 3x32x32, best of %d x %d steps; target '
                     'neomx <= 1.1x PyTorch: %s (%s)' % (BATCH, n, STEPS, fmt(tn / tt),
                                                         'met' if tn / tt <= 1.1 else 'MISSED'))
    finish({'title': 'Hybridization: the seeds\' MLP (512-256-128-2, batch 1) and a small ResNet '
                     'training step',
            'about': 'Microseconds per call of the MLP (milliseconds per step for the ResNet); '
                     'ratios against PyTorch doing the same in the same run, and hybridized '
                     'against imperative.',
            'headers': ['implementation', 'us/call', 'vs PyTorch', 'vs imperative'],
            'rows': rows, 'notes': notes}, args)


if __name__ == '__main__':
    main()
