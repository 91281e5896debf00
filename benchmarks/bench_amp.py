"""Mixed precision on CPU: a ResNet-18 training step in float32 and in bfloat16 AMP, neomx
(``amp.init('bfloat16')``) against PyTorch (``torch.autocast('cpu', torch.bfloat16)``).

The network is the main job's ResNet-18 (d2l's, one-channel images; ``bench_cnn.d2l_net``
and ``bench_cnn.torch_net``), a training step is ``bench_cnn``'s: record, the network,
softmax cross-entropy, backward, an SGD step, then a wait for the step's end. Variants, in one
process, alternating (each round runs every variant once; each figure is the median over
rounds):

- neomx hybridized, float32, and with AMP in force (the graph compiled with MXNet's casts:
  Convolution and FullyConnected read bfloat16, the float32 list's operators float32; the
  parameters and the SGD update stay float32). AMP is one switch for the whole process, as in
  MXNet; the benchmark turns it on for the AMP variant's steps only (its graph is compiled
  once, with the casts, and the loss and optimizer operators read the table at each call);
- PyTorch eager, float32 and under ``torch.autocast('cpu', dtype=torch.bfloat16)`` (its own
  list: convolutions and linear layers in bfloat16), same layers and shapes.

No loss scaling for bfloat16 on either side: it has float32's exponent range (MXNet's and
PyTorch's bfloat16 recipes leave it out). MXNet 1.9.1's CPU build runs bfloat16 AMP too, but
through oneDNN 2.x without this machine's AMX kernels; it is left out here (``bench_cnn``
compares it in float32).

    python benchmarks/bench_amp.py                  # batch 16, 64x64 images, 7 rounds
    python benchmarks/bench_amp.py --batch 32 --size 96 --repeat 9
    python benchmarks/bench_amp.py --train --steps 300 --seeds 2   # accuracy, batch 32, 32x32

``--gpu`` runs float16 AMP with loss scaling on the first GPU (batch 128, 96x96 suggested)
against float32 and PyTorch's autocast with a GradScaler, then trains ``--steps`` steps in
both. ``--train`` trains ResNet-18 in float32 and in bfloat16 AMP from the same initial weights on
the same batches of synthetic images and reports both held-out accuracies.
"""
import os
import sys

import common  # noqa: F401  (puts the checkout on sys.path)
from common import finish, interleaved, interleaved_cpu, machine, parser, ratio

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cnn  # noqa: E402

import neomx as mx  # noqa: E402
from neomx import autograd, gluon, init, nd  # noqa: E402
from neomx.contrib import amp  # noqa: E402
from neomx.contrib.amp import amp as amp_module  # noqa: E402
from neomx.ops import amp as amp_table  # noqa: E402

LR = 0.05
TRAIN_LR = 0.01     # with momentum 0.9


class amp_in_force:
    """``with amp_in_force(table):`` runs a block with AMP's table ``table`` in force (None:
    float32), then puts back the one before."""

    def __init__(self, table):
        self.table = table

    def __enter__(self):
        self.prev = amp_table.table
        amp_module._activate(self.table)

    def __exit__(self, *exc):
        amp_module._activate(self.prev)


def d2l_resnet():
    """bench_cnn's Gluon ResNet-18 (its source is shared with MXNet: imported here under
    neomx)."""
    namespace = {'NETWORKS': bench_cnn.NETWORKS}
    exec(compile(bench_cnn._gluon_source('neomx'), bench_cnn.__file__, 'exec'), namespace)
    return namespace['d2l_net']('resnet')


def neomx_step(batch, size, table, ctx=None, loss_scale=False):
    """A hybridized ResNet-18 training step on ``ctx``, compiled and run with ``table`` in
    force; ``loss_scale``: through amp's dynamic loss scale (``init_trainer``,
    ``scale_loss``), as float16 training needs."""
    with amp_in_force(table):
        net = d2l_resnet()
        net.initialize(init=init.Xavier(), ctx=ctx)
        net.hybridize()
        X = nd.random.uniform(shape=(batch, 1, size, size), ctx=ctx)
        y = nd.random.randint(0, 10, shape=(batch,), ctx=ctx).astype('float32')
        loss = gluon.loss.SoftmaxCrossEntropyLoss()
        net(X)
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': LR})
        if loss_scale:
            amp.init_trainer(trainer)
        nd.waitall()

    def step():
        with amp_in_force(table):
            with autograd.record():
                l = loss(net(X), y)
                if loss_scale:
                    with amp.scale_loss(l, trainer) as scaled:
                        autograd.backward(scaled)
            if not loss_scale:
                l.backward()
            trainer.step(batch)
            nd.waitall()
    return step


def torch_step(batch, size, autocast, device='cpu', dtype=torch.bfloat16):
    """The same step in PyTorch eager, under ``torch.autocast(dtype)`` when ``autocast`` (on
    a GPU with float16: with a GradScaler)."""
    net = bench_cnn.torch_net('resnet').to(device)
    net.train()
    X = torch.rand(batch, 1, size, size, device=device)
    y = torch.randint(0, 10, (batch,), device=device)
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    lossf = torch.nn.CrossEntropyLoss()
    gpu = torch.device(device).type == 'cuda'
    scaler = torch.amp.GradScaler('cuda') if gpu and autocast and dtype == torch.float16 \
        else None
    sync = torch.cuda.synchronize if gpu else (lambda: None)

    def step():
        opt.zero_grad()
        with torch.autocast(torch.device(device).type, dtype=dtype, enabled=autocast):
            out = net(X)
        l = lossf(out.float(), y)
        if scaler is None:
            l.backward()
            opt.step()
        else:
            scaler.scale(l).backward()
            scaler.step(opt)
            scaler.update()
        sync()
    return step


# -- does bfloat16 AMP train as well? ---------------------------------------------------------

def synthetic_images(n, size, seed, noise=8.0):
    """``n`` one-channel images of ``size``x``size`` in 10 classes: a smooth random pattern
    per class (the same for every seed) under Gaussian noise, and their labels."""
    import numpy as np
    patterns = np.random.RandomState(1234).randn(10, 1, 8, 8)
    patterns = np.kron(patterns, np.ones((1, 1, size // 8, size // 8)))
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, n)
    images = patterns[labels] + noise * rng.randn(n, 1, size, size)
    return images.astype('float32'), labels.astype('float32')


def train_accuracy(table, steps, batch, size, seed=0, ctx=None, loss_scale=False):
    """ResNet-18 trained ``steps`` SGD steps on ``synthetic_images`` with ``table`` in force
    (None: float32), hybridized: (its accuracy on 1000 held-out images, the last 20 steps'
    mean loss). The same initial weights and batches for every ``table``."""
    import numpy as np
    train_x, train_y = synthetic_images(steps * batch, size, seed + 1)
    test_x, test_y = synthetic_images(1000, size, seed + 2)
    mx.random.seed(seed)
    with amp_in_force(table):
        net = d2l_resnet()
        net.initialize(init=init.Xavier(), ctx=ctx)
        net.hybridize()
        loss = gluon.loss.SoftmaxCrossEntropyLoss()
        net(nd.array(train_x[:batch], ctx=ctx))
        trainer = gluon.Trainer(net.collect_params(), 'sgd',
                                {'learning_rate': TRAIN_LR, 'momentum': 0.9})
        if loss_scale:
            amp.init_trainer(trainer)
        losses = []
        for i in range(steps):
            X = nd.array(train_x[i * batch:(i + 1) * batch], ctx=ctx)
            y = nd.array(train_y[i * batch:(i + 1) * batch], ctx=ctx)
            with autograd.record():
                l = loss(net(X), y)
                if loss_scale:
                    with amp.scale_loss(l, trainer) as scaled:
                        autograd.backward(scaled)
            if not loss_scale:
                l.backward()
            trainer.step(batch)
            if i >= steps - 20:
                losses.append(float(l.mean().asscalar()))
        correct = 0
        for i in range(0, len(test_x), 100):
            out = net(nd.array(test_x[i:i + 100], ctx=ctx)).astype('float32')
            correct += int((out.argmax(axis=1).asnumpy() == test_y[i:i + 100]).sum())
    return correct / len(test_x), float(np.mean(losses))


def train_runs(precisions, args, ctx=None):
    """``train_accuracy`` for each of ``precisions`` ((name, table, loss scale)) and each of
    ``--seeds`` seeds: rows of the name, the accuracy per seed, their mean and the mean final
    loss."""
    rows = []
    for name, table, scaled in precisions:
        runs = [train_accuracy(table, args.steps, args.train_batch, args.train_size, seed,
                               ctx=ctx, loss_scale=scaled) for seed in range(args.seeds)]
        accs = [a for a, _ in runs]
        rows.append([name, ' '.join('%.3f' % a for a in accs), sum(accs) / len(accs),
                     sum(l for _, l in runs) / len(runs)])
    return rows


def train_title(where, low, args):
    return ('Mixed precision%s: ResNet-18 trained in float32 and in %s (%d steps, batch %d, '
            '%dx%d synthetic images, %d seeds)' % (where, low, args.steps, args.train_batch,
                                                   args.train_size, args.train_size,
                                                   args.seeds))


TRAIN_ABOUT = ('Held-out accuracy (1000 images) per seed and their mean, and the mean training '
               'loss of the last 20 steps; neomx hybridized, SGD with momentum, the same '
               'initial weights and batches for both precisions at each seed; ten classes of '
               'smooth random patterns under Gaussian noise (matching the known patterns '
               'themselves scores 0.968).')


def train_main(args, bf16):
    rows = train_runs((('float32', None, False), ('bfloat16 AMP', bf16, False)), args)
    m = machine()
    finish({
        'title': train_title('', 'bfloat16 AMP', args),
        'about': TRAIN_ABOUT,
        'headers': ['precision', 'accuracy per seed', 'mean accuracy', 'final loss'],
        'rows': rows,
        'notes': ['machine: %s, torch %s, %s' % (m['cpu'], m['torch'], m['date'])],
    }, args)


def gpu_main(args):
    """float16 AMP with loss scaling on the first GPU: step times against float32 and PyTorch's
    autocast with a GradScaler, then the accuracies of ``--train``'s run in float32 and
    float16."""
    amp.init('float16')
    fp16 = amp_table.table
    amp_module._activate(None)
    ctx = mx.gpu(0)
    batch, size, repeat = args.batch, args.size, args.repeat or 10
    variants = {
        'neomx float32': neomx_step(batch, size, None, ctx),
        'neomx float16 AMP': neomx_step(batch, size, fp16, ctx, loss_scale=True),
        'PyTorch float32': torch_step(batch, size, False, 'cuda'),
        'PyTorch autocast float16': torch_step(batch, size, True, 'cuda', torch.float16),
    }
    ms = {k: v * 1e3 for k, v in interleaved(variants, repeat, warmup=3).items()}
    device = torch.cuda.get_device_name(0)
    finish({
        'title': 'Mixed precision on a GPU: ResNet-18 training step, float32 and float16 AMP '
                 '(batch %d, %dx%d, SGD)' % (batch, size, size),
        'about': 'Milliseconds per training step on %s, median of %d interleaved rounds; '
                 'neomx hybridized with amp.init(\'float16\') and its loss scale against '
                 'PyTorch eager under torch.autocast(\'cuda\', torch.float16) with a '
                 'GradScaler.' % (device, repeat),
        'headers': ['precision', 'neomx ms', 'PyTorch ms', 'neomx / PyTorch'],
        'rows': [['float32', ms['neomx float32'], ms['PyTorch float32'],
                  ratio(ms['neomx float32'], ms['PyTorch float32'])],
                 ['float16 AMP', ms['neomx float16 AMP'], ms['PyTorch autocast float16'],
                  ratio(ms['neomx float16 AMP'], ms['PyTorch autocast float16'])],
                 ['float16 / float32', ratio(ms['neomx float16 AMP'], ms['neomx float32']),
                  ratio(ms['PyTorch autocast float16'], ms['PyTorch float32']), None]],
        'notes': ['torch %s' % torch.__version__],
    }, args)
    if args.steps:
        rows = train_runs((('float32', None, False), ('float16 AMP', fp16, True)), args, ctx)
        args.json = args.json and args.json.replace('.json', '_train.json')
        finish({
            'title': train_title(' on a GPU', 'float16 AMP with loss scaling', args),
            'about': TRAIN_ABOUT + ' On %s.' % device,
            'headers': ['precision', 'accuracy per seed', 'mean accuracy', 'final loss'],
            'rows': rows,
        }, args)


def main():
    p = parser(__doc__)
    p.add_argument('--batch', type=int, default=16)
    p.add_argument('--size', type=int, default=64, help='image side (the book: 96)')
    p.add_argument('--train', action='store_true',
                   help='train in float32 and bfloat16 AMP and compare the accuracies')
    p.add_argument('--steps', type=int, default=300, help='training steps (--train, --gpu)')
    p.add_argument('--seeds', type=int, default=1, help='training runs per precision')
    p.add_argument('--train-batch', type=int, default=32)
    p.add_argument('--train-size', type=int, default=32)
    p.add_argument('--gpu', action='store_true',
                   help='float16 AMP with loss scaling on the first GPU (then --steps of '
                        'training in float32 and float16)')
    args = p.parse_args()
    if args.gpu:
        return gpu_main(args)
    repeat = args.repeat or 7
    amp.init('bfloat16')
    bf16 = amp_table.table
    amp_module._activate(None)
    if args.train:
        return train_main(args, bf16)
    variants = {
        'neomx float32': neomx_step(args.batch, args.size, None),
        'neomx bfloat16 AMP': neomx_step(args.batch, args.size, bf16),
        'PyTorch float32': torch_step(args.batch, args.size, False),
        'PyTorch autocast bfloat16': torch_step(args.batch, args.size, True),
    }
    wall, cpu = interleaved_cpu(variants, repeat, warmup=2)

    def figures(clock):
        ms = {k: v * 1e3 for k, v in clock.items()}
        return [
            ['float32', ms['neomx float32'], ms['PyTorch float32'],
             ratio(ms['neomx float32'], ms['PyTorch float32'])],
            ['bfloat16 AMP', ms['neomx bfloat16 AMP'], ms['PyTorch autocast bfloat16'],
             ratio(ms['neomx bfloat16 AMP'], ms['PyTorch autocast bfloat16'])],
            ['bfloat16 / float32', ratio(ms['neomx bfloat16 AMP'], ms['neomx float32']),
             ratio(ms['PyTorch autocast bfloat16'], ms['PyTorch float32']), None]]
    rows = [[clock + ': ' + r[0]] + r[1:] for clock, fig in (('wall', figures(wall)),
                                                             ('CPU', figures(cpu)))
            for r in fig]
    m = machine()
    result = {
        'title': 'Mixed precision: ResNet-18 training step, float32 and bfloat16 AMP '
                 '(batch %d, %dx%d, SGD)' % (args.batch, args.size, args.size),
        'about': 'Milliseconds per training step, wall clock and CPU time of the process '
                 '(every thread), medians of %d interleaved rounds in one process; neomx '
                 'hybridized with amp.init(\'bfloat16\') against PyTorch eager under '
                 'torch.autocast(\'cpu\', torch.bfloat16).' % repeat,
        'headers': ['precision', 'neomx ms', 'PyTorch ms', 'neomx / PyTorch'],
        'rows': rows,
        'notes': ['machine: %s, %s cores (%s usable), torch %s, load average %s, %s'
                  % (m['cpu'], m['cores'], m['usable cores'], m['torch'], m['load average'],
                     m['date'])],
    }
    finish(result, args)


if __name__ == '__main__':
    main()
