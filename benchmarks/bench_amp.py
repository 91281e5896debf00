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
    python benchmarks/bench_amp.py --train --steps 300 --seeds 8   # accuracy, batch 32, 32x32

``--gpu`` runs float16 AMP with loss scaling on the first GPU (batch 128, 96x96 suggested)
against float32 and PyTorch's autocast with a GradScaler, then trains ``--steps`` steps in
both. ``--train`` trains ResNet-18 four times from the same initial weights on the same batches
of synthetic images, neomx in float32 and in bfloat16 AMP, PyTorch in float32 and under
autocast, and reports the held-out accuracies, the low-precision networks evaluated in their
precision and in float32.
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
    update = torch_update(net, torch.optim.SGD(net.parameters(), lr=LR), autocast, device,
                          dtype)
    sync = torch.cuda.synchronize if torch.device(device).type == 'cuda' else (lambda: None)

    def step():
        update(X, y)
        sync()
    return step


def torch_update(net, opt, autocast, device, dtype):
    """``update(X, y) -> loss``: one optimizer step of ``net`` on a batch, the forward pass
    under ``torch.autocast(dtype)`` when ``autocast`` (on a GPU with float16: with a
    GradScaler), the loss in float32."""
    dev = torch.device(device).type
    lossf = torch.nn.CrossEntropyLoss()
    scaler = torch.amp.GradScaler('cuda') if dev == 'cuda' and autocast and \
        dtype == torch.float16 else None

    def update(X, y):
        opt.zero_grad()
        with torch.autocast(dev, dtype=dtype, enabled=autocast):
            out = net(X)
        l = lossf(out.float(), y)
        if scaler is None:
            l.backward()
            opt.step()
        else:
            scaler.scale(l).backward()
            scaler.step(opt)
            scaler.update()
        return l
    return update


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


def initial_weights(batch, size, seed, ctx=None):
    """ResNet-18's initial parameters for ``seed`` (Xavier), as NumPy arrays in the order of
    ``collect_params`` (which is ``torch_net``'s order of parameters and statistics)."""
    mx.random.seed(seed)
    with amp_in_force(None):
        net = d2l_resnet()
        net.initialize(init=init.Xavier(), ctx=ctx)
        net(nd.zeros((batch, 1, size, size), ctx=ctx))
        return [p.data().asnumpy() for p in net.collect_params().values()]


def gluon_net(weights, table, ctx=None):
    """A hybridized ResNet-18 holding ``weights``, compiled with ``table`` in force."""
    with amp_in_force(table):
        net = d2l_resnet()
        net.initialize(init=init.Xavier(), ctx=ctx)
        net.hybridize()
        net(nd.zeros((1, 1, 32, 32), ctx=ctx))
        for p, w in zip(net.collect_params().values(), weights):
            p.set_data(nd.array(w, ctx=ctx))
    return net


def gluon_accuracy(net, table, test_x, test_y, ctx=None):
    with amp_in_force(table):
        correct = 0
        for i in range(0, len(test_x), 100):
            out = net(nd.array(test_x[i:i + 100], ctx=ctx)).astype('float32')
            correct += int((out.argmax(axis=1).asnumpy() == test_y[i:i + 100]).sum())
    return correct / len(test_x)


def train_accuracy(table, steps, batch, size, seed=0, ctx=None, loss_scale=False, evals=None):
    """ResNet-18 trained ``steps`` SGD steps on ``synthetic_images`` with ``table`` in force
    (None: float32), hybridized, from ``initial_weights(seed)``: (its accuracies on 1000
    held-out images, one per table of ``evals`` (default: ``table``) it is evaluated with,
    the last 20 steps' mean loss). The same initial weights and batches for every
    ``table``."""
    import numpy as np
    train_x, train_y = synthetic_images(steps * batch, size, seed + 1)
    test_x, test_y = synthetic_images(1000, size, seed + 2)
    net = gluon_net(initial_weights(batch, size, seed, ctx), table, ctx)
    mx.random.seed(seed)
    with amp_in_force(table):
        loss = gluon.loss.SoftmaxCrossEntropyLoss()
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
    trained = [p.data().asnumpy() for p in net.collect_params().values()]
    accs = []
    for ev in (table,) if evals is None else evals:
        # a net compiled for the evaluation's table, holding the trained parameters
        accs.append(gluon_accuracy(net if ev is table else gluon_net(trained, ev, ctx), ev,
                                   test_x, test_y, ctx))
    return accs, float(np.mean(losses))


def torch_train_accuracy(autocast, steps, batch, size, seed=0, device='cpu',
                         dtype=torch.bfloat16, evals=(False, True)):
    """``train_accuracy`` in PyTorch eager (``torch_net``), from the same initial weights on
    the same batches, under ``torch.autocast(dtype)`` when ``autocast`` (on a GPU with float16:
    with a GradScaler); evaluated without and with autocast (``evals``)."""
    import numpy as np
    train_x, train_y = synthetic_images(steps * batch, size, seed + 1)
    test_x, test_y = synthetic_images(1000, size, seed + 2)
    net = bench_cnn.torch_net('resnet')
    state = [(k, v) for k, v in net.state_dict().items() if not k.endswith('num_batches_tracked')]
    weights = initial_weights(batch, size, seed)
    assert [tuple(v.shape) for _, v in state] == [w.shape for w in weights]
    net.load_state_dict({k: torch.from_numpy(w) for (k, _), w in zip(state, weights)},
                        strict=False)
    net = net.to(device)
    update = torch_update(net, torch.optim.SGD(net.parameters(), lr=TRAIN_LR, momentum=0.9),
                          autocast, device, dtype)
    losses = []
    net.train()
    for i in range(steps):
        X = torch.from_numpy(train_x[i * batch:(i + 1) * batch]).to(device)
        y = torch.from_numpy(train_y[i * batch:(i + 1) * batch]).long().to(device)
        l = update(X, y)
        if i >= steps - 20:
            losses.append(float(l.detach()))
    net.eval()
    accs = []
    for ev in evals:
        correct = 0
        with torch.no_grad(), torch.autocast(torch.device(device).type, dtype=dtype,
                                                enabled=ev):
            for i in range(0, len(test_x), 100):
                out = net(torch.from_numpy(test_x[i:i + 100]).to(device)).float()
                correct += int((out.argmax(1).cpu().numpy() == test_y[i:i + 100]).sum())
        accs.append(correct / len(test_x))
    return accs, float(np.mean(losses))


def train_variants(low, table, args, ctx=None, device='cpu', dtype=torch.bfloat16):
    """The four trainings ``--train`` compares: (name, run(seed) -> (accuracies evaluated in
    the training precision and in float32, final loss)); ``low`` names the low precision,
    ``table`` is neomx's AMP table for it, ``dtype`` PyTorch's (float16: with loss scaling on
    both sides)."""
    steps, batch, size = args.steps, args.train_batch, args.train_size
    scaled = dtype == torch.float16
    return [
        ('neomx float32', lambda seed: train_accuracy(None, steps, batch, size, seed, ctx)),
        ('neomx %s AMP' % low, lambda seed: train_accuracy(
            table, steps, batch, size, seed, ctx, scaled, evals=(table, None))),
        ('PyTorch float32', lambda seed: torch_train_accuracy(
            False, steps, batch, size, seed, device, dtype, evals=(False,))),
        ('PyTorch autocast %s' % low, lambda seed: torch_train_accuracy(
            True, steps, batch, size, seed, device, dtype, evals=(True, False))),
    ]


def train_runs(variants, args):
    """Runs each of ``variants`` (``train_variants``) at each of ``--seeds`` seeds (from
    ``--first-seed``): rows of the name, the accuracy per seed, their mean and standard
    deviation, the mean accuracy evaluated in float32 and the mean final loss."""
    import numpy as np
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    results = {name: [] for name, _ in variants}
    for seed in seeds:              # seed by seed, so that a shorter run still pairs them
        for name, run in variants:
            results[name].append(run(seed))
    rows = []
    for name, _ in variants:
        runs = results[name]
        accs = np.array([a[0] for a, _ in runs])
        rows.append([name, ' '.join('%.3f' % a for a in accs), accs.mean(), accs.std(),
                     np.mean([a[-1] for a, _ in runs]), np.mean([l for _, l in runs])])
    return rows


TRAIN_HEADERS = ['training', 'accuracy per seed', 'mean', 'std', 'mean, evaluated in float32',
                 'final loss']


def train_title(where, low, args):
    return ('Mixed precision%s: ResNet-18 trained in float32 and in %s (%d steps, batch %d, '
            '%dx%d synthetic images, %d seeds)' % (where, low, args.steps, args.train_batch,
                                                   args.train_size, args.train_size,
                                                   args.seeds))


TRAIN_ABOUT = ('Held-out accuracy (1000 images) per seed, their mean and standard deviation, '
               'the mean accuracy of the same trained networks evaluated in float32, and the '
               'mean training loss of the last 20 steps; neomx hybridized, PyTorch eager, SGD '
               'with momentum, the same initial weights and batches for all four at each seed; '
               'ten classes of smooth random patterns under Gaussian noise (matching the known '
               'patterns themselves scores 0.968).')


def train_main(args, bf16):
    rows = train_runs(train_variants('bfloat16', bf16, args), args)
    m = machine()
    finish({
        'title': train_title('', 'bfloat16 AMP', args),
        'about': TRAIN_ABOUT,
        'headers': TRAIN_HEADERS,
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
        rows = train_runs(train_variants('float16', fp16, args, ctx, 'cuda', torch.float16),
                          args)
        args.json = args.json and args.json.replace('.json', '_train.json')
        finish({
            'title': train_title(' on a GPU', 'float16 AMP with loss scaling', args),
            'about': TRAIN_ABOUT + ' On %s.' % device,
            'headers': TRAIN_HEADERS,
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
    p.add_argument('--first-seed', type=int, default=0, help='the first seed of --seeds')
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
