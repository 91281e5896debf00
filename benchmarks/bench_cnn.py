"""Convolutional training: d2l's chapter 5 networks (first edition, Fashion-MNIST's one-channel
images) for a training step and for inference.

AlexNet, VGG (the book's narrower ``small_conv_arch``, channels / 4) and NiN on 224x224 inputs,
GoogLeNet, ResNet-18 and DenseNet on 96x96, as the book trains them. A training step is the
book's loop body: ``autograd.record()``, the network, ``SoftmaxCrossEntropyLoss``,
``backward()``, ``trainer.step(batch_size)`` (SGD at the book's learning rate), then
``nd.waitall()`` so that the step is timed to its end. Inference is the network alone in
predict mode.

Variants, all in one run and alternating (each round runs every variant once, each round in
another seeded random order; each figure is the median over rounds):

- neomx, imperative and hybridized;
- PyTorch eager on the same network (same layers, same shapes; ``torch.optim.SGD``), with
  the thread setting that is fastest on this machine (probed first: 1 thread or one per core)
  and, as a second variant, with the model and input in ``torch.channels_last``;
- MXNet 1.9.1, imperative and hybridized, running the very same Gluon source in its own
  process (``.mxnet-ref/bin/python``), kept alive for the whole run and told over a pipe when
  to take its turn in each round.

Targets (issue 16, a 2-core machine): every network's hybridized step <= 1.0x the faster of
PyTorch eager and MXNet 1.9.1; imperative <= 1.1x.

With ``--gpu`` the networks (ResNet-18 and VGG unless ``--nets`` says otherwise, batch 128)
run on the first GPU, neomx imperative and hybridized against PyTorch eager (both memory
formats) and ``torch.compile`` (default mode); MXNet 1.9.1's reference build has no GPU.

    python benchmarks/bench_cnn.py                       # every network, default batches
    python benchmarks/bench_cnn.py --quick               # a short run: batch 8, few rounds
    python benchmarks/bench_cnn.py --nets resnet,vgg --batch 32 --repeat 5
    python benchmarks/bench_cnn.py --book-batch          # the book's batch sizes (slow)
    python benchmarks/bench_cnn.py --cpu-time --threads 1   # CPU time, for a loaded machine
    python benchmarks/bench_cnn.py --gpu                 # ResNet-18 and VGG, batch 128, GPU

On a machine shared with other work the wall-clock figures measure the scheduler as much as
the frameworks (a step can take five times its CPU time at a load average of 12 on 2 cores,
and the variant whose threads happen to be descheduled loses). ``--cpu-time`` reports instead
the CPU time each step consumes, every thread of the process counted (MXNet's own process
measures its own), with every framework on the same fixed number of intra-op threads
(``--threads``, default 1): the work each framework does, which the load hardly changes.
Spinning intra-op threads count too, so with more than one thread it also shows threads that
wait busily.
"""
import inspect
import json
import os
import random
import select
import statistics
import subprocess
import sys
import textwrap
import time

import common  # noqa: F401  (puts the checkout on sys.path)
from common import MXNET_REF, ROOT, finish, fmt, has_mxnet, own_threads, parser, ratio

import torch

import neomx as mx

# name: (input size, the book's batch size, the book's learning rate)
NETWORKS = {
    'alexnet': (224, 128, 0.01),
    'vgg': (224, 128, 0.05),
    'nin': (224, 128, 0.1),
    'googlenet': (96, 128, 0.1),
    'resnet': (96, 256, 0.05),
    'densenet': (96, 256, 0.1),
}
TITLES = {'alexnet': 'AlexNet', 'vgg': 'VGG-11/4', 'nin': 'NiN', 'googlenet': 'GoogLeNet',
          'resnet': 'ResNet-18', 'densenet': 'DenseNet'}
DEFAULT_BATCH = 32
QUICK_BATCH = 8


# -- the networks, as the book writes them in Gluon ------------------------------------------
# One source for neomx and MXNet 1.9.1 (the import line is swapped). The book's ResNet and
# DenseNet blocks are Blocks with forward(); here they are HybridBlocks with the same body in
# hybrid_forward, so that the same network can be hybridized.

def d2l_net(name):
    from mxnet_like import gluon  # replaced by the caller's module
    nn = gluon.nn

    def seq(*layers):
        s = nn.HybridSequential()
        s.add(*layers)
        return s

    def dense_head():
        return [nn.Dense(4096, activation='relu'), nn.Dropout(0.5),
                nn.Dense(4096, activation='relu'), nn.Dropout(0.5), nn.Dense(10)]

    if name == 'alexnet':
        return seq(nn.Conv2D(96, kernel_size=11, strides=4, activation='relu'),
                   nn.MaxPool2D(pool_size=3, strides=2),
                   nn.Conv2D(256, kernel_size=5, padding=2, activation='relu'),
                   nn.MaxPool2D(pool_size=3, strides=2),
                   nn.Conv2D(384, kernel_size=3, padding=1, activation='relu'),
                   nn.Conv2D(384, kernel_size=3, padding=1, activation='relu'),
                   nn.Conv2D(256, kernel_size=3, padding=1, activation='relu'),
                   nn.MaxPool2D(pool_size=3, strides=2), *dense_head())
    if name == 'vgg':
        def vgg_block(num_convs, num_channels):
            blk = nn.HybridSequential()
            for _ in range(num_convs):
                blk.add(nn.Conv2D(num_channels, kernel_size=3, padding=1, activation='relu'))
            blk.add(nn.MaxPool2D(pool_size=2, strides=2))
            return blk
        arch = ((1, 64), (1, 128), (2, 256), (2, 512), (2, 512))
        return seq(*[vgg_block(n, c // 4) for n, c in arch], *dense_head())
    if name == 'nin':
        def nin_block(num_channels, kernel_size, strides, padding):
            return seq(nn.Conv2D(num_channels, kernel_size, strides, padding, activation='relu'),
                       nn.Conv2D(num_channels, kernel_size=1, activation='relu'),
                       nn.Conv2D(num_channels, kernel_size=1, activation='relu'))
        return seq(nin_block(96, kernel_size=11, strides=4, padding=0),
                   nn.MaxPool2D(pool_size=3, strides=2),
                   nin_block(256, kernel_size=5, strides=1, padding=2),
                   nn.MaxPool2D(pool_size=3, strides=2),
                   nin_block(384, kernel_size=3, strides=1, padding=1),
                   nn.MaxPool2D(pool_size=3, strides=2), nn.Dropout(0.5),
                   nin_block(10, kernel_size=3, strides=1, padding=1),
                   nn.GlobalAvgPool2D(), nn.Flatten())
    if name == 'googlenet':
        class Inception(nn.HybridBlock):
            def __init__(self, c1, c2, c3, c4, **kwargs):
                super(Inception, self).__init__(**kwargs)
                self.p1_1 = nn.Conv2D(c1, kernel_size=1, activation='relu')
                self.p2_1 = nn.Conv2D(c2[0], kernel_size=1, activation='relu')
                self.p2_2 = nn.Conv2D(c2[1], kernel_size=3, padding=1, activation='relu')
                self.p3_1 = nn.Conv2D(c3[0], kernel_size=1, activation='relu')
                self.p3_2 = nn.Conv2D(c3[1], kernel_size=5, padding=2, activation='relu')
                self.p4_1 = nn.MaxPool2D(pool_size=3, strides=1, padding=1)
                self.p4_2 = nn.Conv2D(c4, kernel_size=1, activation='relu')

            def hybrid_forward(self, F, x):
                p1 = self.p1_1(x)
                p2 = self.p2_2(self.p2_1(x))
                p3 = self.p3_2(self.p3_1(x))
                p4 = self.p4_2(self.p4_1(x))
                return F.concat(p1, p2, p3, p4, dim=1)

        return seq(seq(nn.Conv2D(64, kernel_size=7, strides=2, padding=3, activation='relu'),
                       nn.MaxPool2D(pool_size=3, strides=2, padding=1)),
                   seq(nn.Conv2D(64, kernel_size=1, activation='relu'),
                       nn.Conv2D(192, kernel_size=3, padding=1, activation='relu'),
                       nn.MaxPool2D(pool_size=3, strides=2, padding=1)),
                   seq(Inception(64, (96, 128), (16, 32), 32),
                       Inception(128, (128, 192), (32, 96), 64),
                       nn.MaxPool2D(pool_size=3, strides=2, padding=1)),
                   seq(Inception(192, (96, 208), (16, 48), 64),
                       Inception(160, (112, 224), (24, 64), 64),
                       Inception(128, (128, 256), (24, 64), 64),
                       Inception(112, (144, 288), (32, 64), 64),
                       Inception(256, (160, 320), (32, 128), 128),
                       nn.MaxPool2D(pool_size=3, strides=2, padding=1)),
                   seq(Inception(256, (160, 320), (32, 128), 128),
                       Inception(384, (192, 384), (48, 128), 128),
                       nn.GlobalAvgPool2D()),
                   nn.Dense(10))
    if name == 'resnet':
        class Residual(nn.HybridBlock):
            def __init__(self, num_channels, use_1x1conv=False, strides=1, **kwargs):
                super(Residual, self).__init__(**kwargs)
                self.conv1 = nn.Conv2D(num_channels, kernel_size=3, padding=1, strides=strides)
                self.conv2 = nn.Conv2D(num_channels, kernel_size=3, padding=1)
                self.conv3 = (nn.Conv2D(num_channels, kernel_size=1, strides=strides)
                              if use_1x1conv else None)
                self.bn1 = nn.BatchNorm()
                self.bn2 = nn.BatchNorm()

            def hybrid_forward(self, F, X):
                Y = F.relu(self.bn1(self.conv1(X)))
                Y = self.bn2(self.conv2(Y))
                if self.conv3:
                    X = self.conv3(X)
                return F.relu(Y + X)

        def resnet_block(num_channels, num_residuals, first_block=False):
            blk = nn.HybridSequential()
            for i in range(num_residuals):
                if i == 0 and not first_block:
                    blk.add(Residual(num_channels, use_1x1conv=True, strides=2))
                else:
                    blk.add(Residual(num_channels))
            return blk

        return seq(nn.Conv2D(64, kernel_size=7, strides=2, padding=3), nn.BatchNorm(),
                   nn.Activation('relu'), nn.MaxPool2D(pool_size=3, strides=2, padding=1),
                   resnet_block(64, 2, first_block=True), resnet_block(128, 2),
                   resnet_block(256, 2), resnet_block(512, 2),
                   nn.GlobalAvgPool2D(), nn.Dense(10))
    if name == 'densenet':
        def conv_block(num_channels):
            return seq(nn.BatchNorm(), nn.Activation('relu'),
                       nn.Conv2D(num_channels, kernel_size=3, padding=1))

        class DenseBlock(nn.HybridBlock):
            def __init__(self, num_convs, num_channels, **kwargs):
                super(DenseBlock, self).__init__(**kwargs)
                self.net = nn.HybridSequential()
                for _ in range(num_convs):
                    self.net.add(conv_block(num_channels))

            def hybrid_forward(self, F, X):
                for blk in self.net:
                    Y = blk(X)
                    X = F.concat(X, Y, dim=1)
                return X

        def transition_block(num_channels):
            return seq(nn.BatchNorm(), nn.Activation('relu'),
                       nn.Conv2D(num_channels, kernel_size=1),
                       nn.AvgPool2D(pool_size=2, strides=2))

        net = seq(nn.Conv2D(64, kernel_size=7, strides=2, padding=3), nn.BatchNorm(),
                  nn.Activation('relu'), nn.MaxPool2D(pool_size=3, strides=2, padding=1))
        num_channels, growth_rate = 64, 32
        num_convs_in_dense_blocks = [4, 4, 4, 4]
        for i, num_convs in enumerate(num_convs_in_dense_blocks):
            net.add(DenseBlock(num_convs, growth_rate))
            num_channels += num_convs * growth_rate
            if i != len(num_convs_in_dense_blocks) - 1:
                num_channels //= 2
                net.add(transition_block(num_channels))
        net.add(nn.BatchNorm(), nn.Activation('relu'), nn.GlobalAvgPool2D(), nn.Dense(10))
        return net
    raise ValueError('unknown network %r' % (name,))


def gluon_step(name, batch, hybridize, train, ctx=None):
    """A function running one training step (``train``) or one inference pass of ``name`` at
    ``batch`` on ``ctx`` (None: the current context); the same source runs under MXNet
    1.9.1."""
    from mxnet_like import autograd, gluon, init, nd  # replaced by the caller's module
    size, _, lr = NETWORKS[name]
    net = d2l_net(name)
    net.initialize(init=init.Xavier(), ctx=ctx)
    if hybridize:
        net.hybridize()
    X = nd.random.uniform(shape=(batch, 1, size, size), ctx=ctx)
    y = nd.random.randint(0, 10, shape=(batch,), ctx=ctx).astype('float32')
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    net(X)                  # deferred initialisation before the Trainer sees the parameters
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': lr})
    nd.waitall()

    def step():
        with autograd.record():
            l = loss(net(X), y)
        l.backward()
        trainer.step(batch)
        nd.waitall()

    def infer():
        net(X)
        nd.waitall()
    return step if train else infer


def _gluon_source(module):
    src = ''.join(inspect.getsource(f) for f in (d2l_net, gluon_step))
    src = src.replace("from mxnet_like import", "from %s import" % module)
    return src.replace("  # replaced by the caller's module", '')


def neomx_variant(name, batch, hybridize, train, ctx=None):
    namespace = {'NETWORKS': NETWORKS}
    exec(compile(_gluon_source('neomx'), __file__, 'exec'), namespace)
    return namespace['gluon_step'](name, batch, hybridize, train, ctx)


# -- the same networks in PyTorch --------------------------------------------------------------

def torch_net(name):
    """``name`` in torch.nn, layer for layer as ``d2l_net`` (a Dense flattens its input first,
    as Gluon's does)."""
    tnn = torch.nn

    def conv(cin, cout, k, s=1, p=0, relu=True):
        layers = [tnn.Conv2d(cin, cout, k, s, p)]
        return layers + [tnn.ReLU()] if relu else layers

    def dense_head(n_in):
        return [tnn.Flatten(), tnn.Linear(n_in, 4096), tnn.ReLU(), tnn.Dropout(0.5),
                tnn.Linear(4096, 4096), tnn.ReLU(), tnn.Dropout(0.5), tnn.Linear(4096, 10)]

    if name == 'alexnet':
        return tnn.Sequential(*conv(1, 96, 11, 4), tnn.MaxPool2d(3, 2),
                              *conv(96, 256, 5, p=2), tnn.MaxPool2d(3, 2),
                              *conv(256, 384, 3, p=1), *conv(384, 384, 3, p=1),
                              *conv(384, 256, 3, p=1), tnn.MaxPool2d(3, 2),
                              *dense_head(256 * 5 * 5))
    if name == 'vgg':
        layers, cin = [], 1
        for n, c in ((1, 64), (1, 128), (2, 256), (2, 512), (2, 512)):
            for _ in range(n):
                layers += conv(cin, c // 4, 3, p=1)
                cin = c // 4
            layers.append(tnn.MaxPool2d(2, 2))
        return tnn.Sequential(*layers, *dense_head(cin * 7 * 7))
    if name == 'nin':
        def nin_block(cin, c, k, s, p):
            return conv(cin, c, k, s, p) + conv(c, c, 1) + conv(c, c, 1)
        return tnn.Sequential(*nin_block(1, 96, 11, 4, 0), tnn.MaxPool2d(3, 2),
                              *nin_block(96, 256, 5, 1, 2), tnn.MaxPool2d(3, 2),
                              *nin_block(256, 384, 3, 1, 1), tnn.MaxPool2d(3, 2),
                              tnn.Dropout(0.5), *nin_block(384, 10, 3, 1, 1),
                              tnn.AdaptiveAvgPool2d(1), tnn.Flatten())
    if name == 'googlenet':
        class Inception(tnn.Module):
            def __init__(self, cin, c1, c2, c3, c4):
                super().__init__()
                self.p1 = tnn.Sequential(*conv(cin, c1, 1))
                self.p2 = tnn.Sequential(*conv(cin, c2[0], 1), *conv(c2[0], c2[1], 3, p=1))
                self.p3 = tnn.Sequential(*conv(cin, c3[0], 1), *conv(c3[0], c3[1], 5, p=2))
                self.p4 = tnn.Sequential(tnn.MaxPool2d(3, 1, 1), *conv(cin, c4, 1))
                self.cout = c1 + c2[1] + c3[1] + c4

            def forward(self, x):
                return torch.cat((self.p1(x), self.p2(x), self.p3(x), self.p4(x)), dim=1)

        blocks, cin = [], 192
        for spec in ((64, (96, 128), (16, 32), 32), (128, (128, 192), (32, 96), 64), 'pool',
                     (192, (96, 208), (16, 48), 64), (160, (112, 224), (24, 64), 64),
                     (128, (128, 256), (24, 64), 64), (112, (144, 288), (32, 64), 64),
                     (256, (160, 320), (32, 128), 128), 'pool',
                     (256, (160, 320), (32, 128), 128), (384, (192, 384), (48, 128), 128)):
            if spec == 'pool':
                blocks.append(tnn.MaxPool2d(3, 2, 1))
                continue
            blocks.append(Inception(cin, *spec))
            cin = blocks[-1].cout
        return tnn.Sequential(*conv(1, 64, 7, 2, 3), tnn.MaxPool2d(3, 2, 1),
                              *conv(64, 64, 1), *conv(64, 192, 3, p=1), tnn.MaxPool2d(3, 2, 1),
                              *blocks, tnn.AdaptiveAvgPool2d(1), tnn.Flatten(),
                              tnn.Linear(cin, 10))
    if name == 'resnet':
        class Residual(tnn.Module):
            def __init__(self, cin, c, use_1x1conv=False, strides=1):
                super().__init__()
                self.conv1 = tnn.Conv2d(cin, c, 3, strides, 1)
                self.conv2 = tnn.Conv2d(c, c, 3, 1, 1)
                self.conv3 = tnn.Conv2d(cin, c, 1, strides) if use_1x1conv else None
                self.bn1 = tnn.BatchNorm2d(c)
                self.bn2 = tnn.BatchNorm2d(c)

            def forward(self, X):
                Y = torch.relu(self.bn1(self.conv1(X)))
                Y = self.bn2(self.conv2(Y))
                if self.conv3 is not None:
                    X = self.conv3(X)
                return torch.relu(Y + X)

        layers, cin = [], 64
        for c, first in ((64, True), (128, False), (256, False), (512, False)):
            for i in range(2):
                layers.append(Residual(cin, c, use_1x1conv=i == 0 and not first,
                                       strides=2 if i == 0 and not first else 1))
                cin = c
        return tnn.Sequential(tnn.Conv2d(1, 64, 7, 2, 3), tnn.BatchNorm2d(64), tnn.ReLU(),
                              tnn.MaxPool2d(3, 2, 1), *layers, tnn.AdaptiveAvgPool2d(1),
                              tnn.Flatten(), tnn.Linear(512, 10))
    if name == 'densenet':
        def conv_block(cin, c):
            return tnn.Sequential(tnn.BatchNorm2d(cin), tnn.ReLU(), tnn.Conv2d(cin, c, 3, 1, 1))

        class DenseBlock(tnn.Module):
            def __init__(self, num_convs, cin, c):
                super().__init__()
                self.net = tnn.ModuleList(conv_block(cin + i * c, c) for i in range(num_convs))

            def forward(self, X):
                for blk in self.net:
                    X = torch.cat((X, blk(X)), dim=1)
                return X

        layers = [tnn.Conv2d(1, 64, 7, 2, 3), tnn.BatchNorm2d(64), tnn.ReLU(),
                  tnn.MaxPool2d(3, 2, 1)]
        num_channels, growth_rate = 64, 32
        for i, num_convs in enumerate([4, 4, 4, 4]):
            layers.append(DenseBlock(num_convs, num_channels, growth_rate))
            num_channels += num_convs * growth_rate
            if i != 3:
                layers += [tnn.BatchNorm2d(num_channels), tnn.ReLU(),
                           tnn.Conv2d(num_channels, num_channels // 2, 1), tnn.AvgPool2d(2, 2)]
                num_channels //= 2
        return tnn.Sequential(*layers, tnn.BatchNorm2d(num_channels), tnn.ReLU(),
                              tnn.AdaptiveAvgPool2d(1), tnn.Flatten(),
                              tnn.Linear(num_channels, 10))
    raise ValueError('unknown network %r' % (name,))


def torch_variant(name, batch, train, threads, channels_last=False, device='cpu',
                  compiled=None):
    """A training step or inference pass of ``name`` in PyTorch on ``device``, with
    ``threads`` intra-op threads; ``compiled``: a torch.compile backend to compile the model
    with (its first calls compile). On a GPU each call ends synchronised, as neomx's
    ``nd.waitall()`` does."""
    size, _, lr = NETWORKS[name]
    net = torch_net(name).to(device)
    X = torch.rand(batch, 1, size, size, device=device)
    y = torch.randint(0, 10, (batch,), device=device)
    if channels_last:
        net = net.to(memory_format=torch.channels_last)
        X = X.contiguous(memory_format=torch.channels_last)
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    lossf = torch.nn.CrossEntropyLoss()
    model = net if compiled is None else torch.compile(net, backend=compiled)
    sync = torch.cuda.synchronize if torch.device(device).type == 'cuda' else (lambda: None)

    def step():
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            opt.zero_grad()
            lossf(model(X), y).backward()
            opt.step()
            sync()
        finally:
            torch.set_num_threads(before)

    def infer():
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            with torch.no_grad():
                model(X)
            sync()
        finally:
            torch.set_num_threads(before)
    if train:
        net.train()
        return step
    net.eval()
    return infer


# -- MXNet 1.9.1 in a process of its own, taking its turn in each round ------------------------

SERVER = '''
import gc, json, sys, time
import mxnet
sources = {}
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd[0] == 'make':
        key, name, batch, hybridize, train = cmd[1:]
        sources[key] = gluon_step(name, batch, hybridize, train)
        out = None
    elif cmd[0] == 'run':
        fn = sources[cmd[1]]
        clock = time.process_time if cmd[2] else time.perf_counter
        t = clock()
        fn()
        out = clock() - t
    elif cmd[0] == 'drop':
        sources.clear()
        gc.collect()
        out = None
    print(json.dumps(out), flush=True)
'''


class MXNetProcess:
    """Real MXNet 1.9.1 running ``gluon_step`` in its own process, one step per request, so
    that its steps alternate with the others' (the figure is its own timing of the step)."""

    def __init__(self, cpu_time=False, threads=None):
        code = 'NETWORKS = %r\n' % (NETWORKS,) + _gluon_source('mxnet') + SERVER
        self.cpu_time = cpu_time
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(('NEOMX_', 'MXNET_', 'OMP_')) and k != 'PYTHONPATH'}
        if threads:
            env['OMP_NUM_THREADS'] = str(threads)
        self.proc = subprocess.Popen([MXNET_REF, '-c', code], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=env, cwd=ROOT)

    def ask(self, *cmd, timeout=1800):
        self.proc.stdin.write(json.dumps(cmd) + '\n')
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ''
        if not line:
            self.close()
            raise RuntimeError('MXNet 1.9.1 failed on %s:\n%s' % (cmd, self.proc.stderr.read()[-3000:]))
        return json.loads(line)

    def variant(self, key, name, batch, hybridize, train):
        self.ask('make', key, name, batch, hybridize, train)
        return lambda: self.ask('run', key, self.cpu_time)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()


# -- measuring -----------------------------------------------------------------------------

PAUSE = 0.05   # seconds between variants: the previous one's thread pools go quiet


def measure(variants, repeat, warmup=1, clock=time.perf_counter):
    """Median seconds of each of ``variants`` ({label: fn}) over ``repeat`` rounds that run
    every variant once, each round in another (seeded random) order. A variant may return its
    own timing (MXNet's process).
    ``clock``: time.perf_counter (wall clock) or time.process_time (CPU time of every thread
    of this process)."""
    def once(fn):
        own_threads()
        t = clock()
        own = fn()
        took = clock() - t
        time.sleep(PAUSE)
        return own if own is not None else took
    for fn in variants.values():
        for _ in range(warmup):
            once(fn)
    samples = {label: [] for label in variants}
    order = list(variants)
    shuffle = random.Random(len(order) * 1000 + repeat).shuffle
    for _ in range(repeat):
        # each round in its own order, so that no variant runs right after the same one in
        # most rounds: a step right after MXNet's process took its turn ran up to 20 ms
        # slower, and starting each round one variant later had kept the circular order (so
        # neomx's hybridized step followed MXNet's imperative one in four rounds of five)
        shuffle(order)
        for label in order:
            samples[label].append(once(variants[label]))
    return {label: statistics.median(s) for label, s in samples.items()}


def torch_threads(name, batch, budget):
    """The faster intra-op thread count for PyTorch on this network: 1 or one per core,
    after a warm-up step each, over two alternating rounds."""
    if budget == 1:
        return 1
    counts = (1, budget)
    times = measure({n: torch_variant(name, batch, True, n) for n in counts}, 2)
    return min(counts, key=times.get)


LABELS = ['neomx hybridized', 'neomx imperative', 'PyTorch', 'PyTorch channels_last',
          'MXNet hybridized', 'MXNet imperative']
REFERENCES = LABELS[2:]


def run_network(name, batch, train, repeat, threads, mxnet, clock=time.perf_counter):
    variants = {'neomx hybridized': neomx_variant(name, batch, True, train),
                'neomx imperative': neomx_variant(name, batch, False, train),
                'PyTorch': torch_variant(name, batch, train, threads),
                'PyTorch channels_last': torch_variant(name, batch, train, threads, True)}
    if mxnet is not None:
        variants['MXNet hybridized'] = mxnet.variant('h', name, batch, True, train)
        variants['MXNet imperative'] = mxnet.variant('i', name, batch, False, train)
    try:
        return measure(variants, repeat, clock=clock)
    finally:
        variants.clear()
        if mxnet is not None:
            mxnet.ask('drop')
        mx.nd.waitall()
        import gc
        gc.collect()


def row(name, what, batch, times, labels=LABELS, references=REFERENCES):
    size = NETWORKS[name][0]
    refs = [times[k] for k in references if times.get(k) is not None]
    best = min(refs) if refs else None
    ms = [None if times.get(k) is None else times[k] * 1e3 for k in labels]
    return ['%s %dx%d' % (TITLES[name], size, size), what, batch] + ms + [
        ratio(times['neomx hybridized'], best), ratio(times['neomx imperative'], best)]


HEADERS = ['network, input', 'pass', 'batch', 'neomx hybridized', 'neomx imperative', 'PyTorch',
           'PyTorch channels_last', 'MXNet 1.9.1 hybridized', 'MXNet 1.9.1 imperative',
           'hybridized x best', 'imperative x best']


# -- on a GPU ----------------------------------------------------------------------------------

GPU_NETS = 'resnet,vgg'
GPU_BATCH = 128
GPU_LABELS = ['neomx hybridized', 'neomx imperative', 'PyTorch', 'PyTorch channels_last',
              'PyTorch torch.compile']


def device_variants(name, batch, train, device, compiled='inductor'):
    """The variants of a run on ``device`` (a torch device; neomx runs on the same device):
    neomx hybridized and imperative, PyTorch eager in both memory formats and compiled with
    torch.compile's ``compiled`` backend."""
    dev = torch.device(device)
    ctx = mx.gpu(dev.index or 0) if dev.type == 'cuda' else mx.cpu()
    threads = torch.get_num_threads()
    return {'neomx hybridized': neomx_variant(name, batch, True, train, ctx),
            'neomx imperative': neomx_variant(name, batch, False, train, ctx),
            'PyTorch': torch_variant(name, batch, train, threads, device=dev),
            'PyTorch channels_last': torch_variant(name, batch, train, threads, True, dev),
            'PyTorch torch.compile': torch_variant(name, batch, train, threads, device=dev,
                                                   compiled=compiled)}


def gpu_main(args, names, repeat):
    """``--gpu``: the networks on the first GPU against PyTorch eager and torch.compile."""
    if not torch.cuda.is_available() or mx.context.num_gpus() == 0:
        sys.exit('bench_cnn.py --gpu: no CUDA device (torch.cuda.is_available() is False)')
    rows = []
    for name in names:
        batch = args.batch or GPU_BATCH
        for train in (True, False)[:1 if args.no_inference else 2]:
            print('%s, batch %d, %s on %s ...' % (TITLES[name], batch,
                                                   'training' if train else 'inference',
                                                   torch.cuda.get_device_name(0)),
                  file=sys.stderr, flush=True)
            variants = device_variants(name, batch, train, 'cuda:0')
            try:
                # two warm-up calls: torch.compile compiles on the first (and may again on the
                # second, for the backward pass)
                times = measure(variants, repeat, warmup=2)
            finally:
                variants.clear()
                mx.nd.waitall()
            rows.append(row(name, 'training' if train else 'inference', batch, times,
                            GPU_LABELS, GPU_LABELS[2:]))
    notes = [
        '"x best" divides by the fastest PyTorch column of the row (eager in either memory '
        'format, or compiled with torch.compile, default mode).',
        'Median of %d rounds; each round runs every variant once (seeded shuffled order), '
        'after two warm-up calls each; every call ends synchronised with the GPU.' % repeat,
        'Device: %s; torch %s.' % (torch.cuda.get_device_name(0), torch.__version__),
    ]
    finish({'title': 'Convolutional networks on a GPU: d2l chapter 5 (one-channel images, SGD)',
            'about': 'Milliseconds per training step (forward, loss, backward, update) and per '
                     'inference pass on one GPU; the last two columns are ratios to the '
                     'fastest PyTorch variant of the row (lower is better).',
            'headers': HEADERS[:3] + GPU_LABELS + HEADERS[-2:], 'rows': rows, 'notes': notes},
           args)


def main():
    p = parser(__doc__)
    p.add_argument('--nets', help='comma-separated subset of %s (default: all; with --gpu %s)'
                   % (','.join(NETWORKS), GPU_NETS))
    p.add_argument('--batch', type=int, help='batch size of every network (default %d; with '
                   '--gpu %d)' % (DEFAULT_BATCH, GPU_BATCH))
    p.add_argument('--gpu', action='store_true',
                   help='on the first GPU, against PyTorch eager and torch.compile')
    p.add_argument('--book-batch', action='store_true',
                   help="the book's batch sizes (128; 256 for ResNet and DenseNet)")
    p.add_argument('--quick', action='store_true',
                   help='a short run: batch %d, 3 rounds' % QUICK_BATCH)
    p.add_argument('--no-inference', action='store_true', help='training steps only')
    p.add_argument('--cpu-time', action='store_true',
                   help='CPU time per step instead of wall-clock time (see above)')
    p.add_argument('--threads', type=int,
                   help='intra-op threads of every framework (default: with --cpu-time 1, '
                        'else neomx and MXNet their defaults, PyTorch the faster of 1 and '
                        'one per core)')
    args = p.parse_args()
    if args.cpu_time and not args.threads:
        args.threads = 1
    if args.threads:
        # before neomx's first CPU device sets its thread count
        os.environ['NEOMX_CPU_THREADS'] = str(args.threads)
    names = (args.nets or (GPU_NETS if args.gpu else ','.join(NETWORKS))).split(',')
    unknown = set(names) - set(NETWORKS)
    if unknown:
        p.error('unknown network(s) %s; expected some of %s'
                % (', '.join(sorted(unknown)), ', '.join(NETWORKS)))
    repeat = args.repeat or (3 if args.quick else 5)
    if args.gpu:
        return gpu_main(args, names, repeat)
    load_before = '%.2f %.2f %.2f' % os.getloadavg()
    mxnet = (None if args.no_mxnet or not has_mxnet() else
             MXNetProcess(args.cpu_time, args.threads))
    clock = time.process_time if args.cpu_time else time.perf_counter
    budget = mx.engine.cpu_budget()
    rows, train_rows, chosen = [], [], []
    try:
        for name in names:
            batch = (args.batch or (QUICK_BATCH if args.quick else None) or
                     (NETWORKS[name][1] if args.book_batch else DEFAULT_BATCH))
            threads = args.threads or torch_threads(name, batch, budget)
            chosen.append('%s %d' % (TITLES[name], threads))
            print('%s, batch %d (PyTorch: %d thread(s)) ...' % (TITLES[name], batch, threads),
                  file=sys.stderr, flush=True)
            train_rows.append(row(name, 'training', batch,
                                  run_network(name, batch, True, repeat, threads, mxnet,
                                              clock)))
            rows.append(train_rows[-1])
            if not args.no_inference:
                rows.append(row(name, 'inference', batch,
                                run_network(name, batch, False, repeat, threads, mxnet,
                                            clock)))
    finally:
        if mxnet is not None:
            mxnet.close()
    load_after = '%.2f %.2f %.2f' % os.getloadavg()
    hyb = [r[-2] for r in train_rows]
    imp = [r[-1] for r in train_rows]
    notes = [
        '"x best" divides by the fastest of the four reference columns of the row (PyTorch '
        'eager in either memory format, MXNet 1.9.1 in either mode).',
        'Training targets: hybridized <= 1.0x best: %s; imperative <= 1.1x best: %s.'
        % ('met' if all(h is not None and h <= 1.0 for h in hyb) else
           'MISSED (worst %s)' % fmt(max(h for h in hyb if h is not None)) if any(
               h is not None for h in hyb) else '-',
           'met' if all(i is not None and i <= 1.1 for i in imp) else
           'MISSED (worst %s)' % fmt(max(i for i in imp if i is not None)) if any(
               i is not None for i in imp) else '-'),
        'Median of %d rounds; each round runs every variant once, in turn (MXNet in its own '
        'process, told over a pipe when to take its turn), each round in another order (seeded '
        'shuffle), after one warm-up step each.'
        % repeat,
        ('Every framework on %d intra-op thread(s) (NEOMX_CPU_THREADS, OMP_NUM_THREADS for '
         'MXNet 1.9.1).' % args.threads) if args.threads else
        ('neomx: %d intra-op thread(s) on its one CPU device; PyTorch: the faster of 1 and %d '
         'thread(s), probed per network (%s); MXNet 1.9.1: its defaults.'
         % (mx.engine.current().intra_op_threads, budget, ', '.join(chosen))),
        'Load average before: %s; after: %s.' % (load_before, load_after),
    ]
    what = 'CPU milliseconds (every thread of the process)' if args.cpu_time else 'Milliseconds'
    finish({'title': "Convolutional networks: d2l chapter 5 (one-channel images, SGD)%s"
                     % (', CPU time' if args.cpu_time else ''),
            'about': '%s per training step (forward, loss, backward, update) and per '
                     'inference pass (predict mode); the last two columns are ratios to the '
                     'fastest reference of the row (lower is better).' % what,
            'headers': HEADERS, 'rows': rows, 'notes': notes}, args)


if __name__ == '__main__':
    main()
