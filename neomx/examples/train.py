"""Trains LeNet and ResNet-18 on every device at once, as d2l's "Multi-GPU Computation" chapter
does: one copy of the network per device, each batch split across the devices
(``gluon.utils.split_and_load``), one loss per device, and ``Trainer.step`` summing the
gradients of all copies before updating them.

    python -m neomx.examples.train                       # both models, all devices
    python -m neomx.examples.train --model lenet --epochs 5 --devices 1
    python -m neomx.examples.train --model resnet18 --amp bfloat16
    python -m neomx.examples.train --help

Devices: all GPUs when there are any, else two CPU devices ``cpu(0)`` and ``cpu(1)`` (each
with its own engine worker, so they compute at the same time, as two GPUs would).

Data: Fashion-MNIST when its files are in ``--data-root`` (default
``~/.mxnet/datasets/fashion-mnist``), else scikit-learn's handwritten digits upscaled to
28 x 28 (see ``neomx.examples.datasets``); nothing is downloaded.

Models (both for 28 x 28 single-channel images, 10 classes):

- ``lenet``: the LeNet of d2l's multi-GPU chapter (3x3 convolution with 20 channels, 2x2
  average pooling, 5x5 convolution with 50 channels, pooling, dense 128, dense 10; ReLU),
  written with Gluon layers;
- ``resnet18``: d2l's ResNet-18 for 28 x 28 inputs (a 3x3 stem without max pooling, four
  stages of two residual blocks with 64, 128, 256, 512 channels, global average pooling);
  ``--resnet-width`` scales the channels down for a quicker run.

``--amp bfloat16`` (or ``float16``) trains in mixed precision, as MXNet 1.9's
``mx.contrib.amp``: ``amp.init`` before the networks are built, so that convolutions and
dense layers read their inputs and weights in that type while the parameters, BatchNorm's
statistics, the loss and the SGD update stay float32; float16 adds the dynamic loss scale
(``amp.init_trainer``, ``amp.scale_loss``).

Each epoch prints one row: the mean training loss, training and test accuracy, training
throughput (samples/s) and the training time of the epoch.
"""
import argparse
import itertools
import sys
import time

import numpy as np

import neomx as mx
from neomx import autograd, gluon, nd
from neomx.contrib import amp
from neomx.gluon import loss as gloss, nn, utils as gutils
from neomx.gluon.data.vision import transforms

from .datasets import load_data

__all__ = ['lenet', 'Residual', 'resnet18', 'evaluate_accuracy', 'train', 'get_devices', 'main']


def lenet():
    """The LeNet of d2l's multi-GPU chapter, with Gluon layers."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(20, kernel_size=3, activation='relu'),
            nn.AvgPool2D(pool_size=2, strides=2),
            nn.Conv2D(50, kernel_size=5, activation='relu'),
            nn.AvgPool2D(pool_size=2, strides=2),
            nn.Dense(128, activation='relu'),
            nn.Dense(10))
    return net


class Residual(nn.HybridBlock):
    """d2l's residual block: two 3x3 convolutions with batch norm, and a 1x1 convolution on the
    shortcut when the shape changes."""

    def __init__(self, num_channels, use_1x1conv=False, strides=1, **kwargs):
        super().__init__(**kwargs)
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


def resnet18(num_classes=10, width=64):
    """d2l's ResNet-18 for small images: a 3x3 stem with stride 1 and no max pooling."""
    def resnet_block(num_channels, num_residuals, first_block=False):
        blk = nn.HybridSequential()
        for i in range(num_residuals):
            if i == 0 and not first_block:
                blk.add(Residual(num_channels, use_1x1conv=True, strides=2))
            else:
                blk.add(Residual(num_channels))
        return blk

    net = nn.HybridSequential()
    net.add(nn.Conv2D(width, kernel_size=3, strides=1, padding=1),
            nn.BatchNorm(), nn.Activation('relu'))
    net.add(resnet_block(width, 2, first_block=True),
            resnet_block(2 * width, 2),
            resnet_block(4 * width, 2),
            resnet_block(8 * width, 2))
    net.add(nn.GlobalAvgPool2D(), nn.Dense(num_classes))
    return net


_to_tensor = transforms.ToTensor()


def _load(batch, ctx):
    """Splits a batch of uint8 HWC images and labels across ``ctx``; each device turns its
    part into float CHW (on the device: uint8 is a quarter of the bytes to copy)."""
    X, y = batch
    ctx = ctx[:X.shape[0]]     # a last batch smaller than the number of devices
    Xs = [_to_tensor(x) for x in gutils.split_and_load(X, ctx, even_split=False)]
    ys = [t.astype('float32') for t in gutils.split_and_load(y, ctx, even_split=False)]
    return Xs, ys


def evaluate_accuracy(data_iter, net, ctx):
    """The fraction of correct predictions of ``net`` over ``data_iter``, the batches split
    across the devices ``ctx``."""
    correct = [nd.zeros((1,), ctx=c) for c in ctx]
    n = 0
    for batch in data_iter:
        Xs, ys = _load(batch, ctx)
        for i, (X, y) in enumerate(zip(Xs, ys)):
            correct[i] += (net(X).argmax(axis=1) == y).sum()
        n += batch[1].shape[0]
    return sum(c.asscalar() for c in correct) / max(n, 1)


def _progress(iterable, total, desc, enabled):
    if not enabled:
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:   # tqdm is an optional extra: run without a progress bar
        return iterable
    return tqdm(iterable, total=total, desc=desc, leave=False, unit='batch', file=sys.stderr)


def train(net, name, train_iter, test_iter, ctx, epochs, lr, progress=True, max_batches=None,
          schedule='cosine', log=print, loss_scale=False):
    """Trains ``net`` on the devices ``ctx`` with SGD; returns one dict per epoch (epoch, loss,
    train_acc, test_acc, samples_per_sec, seconds). ``schedule='cosine'`` lowers the learning
    rate along a half cosine to 1% of ``lr`` at the last step, so that the last epochs settle
    instead of jumping around the minimum as a constant rate on a small data set does.
    ``loss_scale``: backward through AMP's dynamic loss scale (float16 AMP)."""
    steps = len(train_iter) if max_batches is None else min(len(train_iter), max_batches)
    opt_params = {'learning_rate': lr}
    if schedule == 'cosine':
        opt_params['lr_scheduler'] = mx.lr_scheduler.CosineScheduler(
            max_update=max(1, epochs * steps), base_lr=lr, final_lr=lr * 0.01)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', opt_params)
    if loss_scale:
        amp.init_trainer(trainer)
    loss = gloss.SoftmaxCrossEntropyLoss()
    log('%-5s %8s %9s %9s %10s %7s' % ('epoch', 'loss', 'train acc', 'test acc', 'samples/s',
                                       'sec'))
    rows = []
    for epoch in range(1, epochs + 1):
        # Sums stay on their devices until the epoch ends: reading them per batch would make
        # the front end wait for every batch instead of queueing the next one.
        loss_sum = [nd.zeros((1,), ctx=c) for c in ctx]
        correct = [nd.zeros((1,), ctx=c) for c in ctx]
        n = 0
        start = time.time()
        batches = itertools.islice(train_iter, steps)
        for batch in _progress(batches, steps, '%s epoch %d' % (name, epoch), progress):
            batch_size = batch[1].shape[0]
            Xs, ys = _load(batch, ctx)
            with autograd.record():
                y_hats = [net(X) for X in Xs]
                ls = [loss(y_hat, y) for y_hat, y in zip(y_hats, ys)]
            if loss_scale:
                with amp.scale_loss(ls, trainer) as scaled:
                    autograd.backward(scaled)
            else:
                for l in ls:
                    l.backward()
            trainer.step(batch_size)
            for k, (l, y_hat, y) in enumerate(zip(ls, y_hats, ys)):
                loss_sum[k] += l.sum()
                correct[k] += (y_hat.argmax(axis=1) == y).sum()
            n += batch_size
        nd.waitall()
        seconds = time.time() - start
        test_acc = evaluate_accuracy(test_iter, net, ctx)
        row = dict(epoch=epoch, loss=sum(s.asscalar() for s in loss_sum) / max(n, 1),
                   train_acc=sum(c.asscalar() for c in correct) / max(n, 1), test_acc=test_acc,
                   samples_per_sec=n / seconds, seconds=seconds)
        rows.append(row)
        log('%5d %8.4f %9.3f %9.3f %10.1f %7.1f' % (epoch, row['loss'], row['train_acc'],
                                                     row['test_acc'], row['samples_per_sec'],
                                                     row['seconds']))
    return rows


def get_devices(num=None, cpu=False):
    """``num`` devices (default: every GPU, else 2): GPUs when there are any and ``cpu`` is
    false, else CPU devices ``cpu(0)``, ``cpu(1)``, ... Raises ValueError naming the devices
    there are when more GPUs are asked for."""
    if num is not None and num < 1:
        raise ValueError("--devices must be at least 1, got %d" % num)
    gpus = 0 if cpu else mx.num_gpus()
    if gpus:
        if num is not None and num > gpus:
            raise ValueError("--devices %d asks for %d GPUs but this machine has %d (%s); use "
                             "--devices %d or fewer, or --cpu for CPU devices"
                             % (num, num, gpus, ', '.join('gpu(%d)' % i for i in range(gpus)),
                                gpus))
        return [mx.gpu(i) for i in range(num or gpus)]
    return [mx.cpu(i) for i in range(num or 2)]


# Per model: initializer, default learning rate, default epochs. LeNet's ReLU layers start
# better from Xavier than from d2l's N(0, 0.01), which leaves them at chance for hundreds of
# steps; batch norm makes ResNet indifferent, and it keeps d2l's choice.
_MODELS = {
    'lenet': (lambda args: lenet(), lambda: mx.init.Xavier(), 0.2, 10),
    'resnet18': (lambda args: resnet18(10, args.resnet_width),
                 lambda: mx.init.Normal(sigma=0.01), 0.05, 4),
}


def _parser():
    p = argparse.ArgumentParser(prog='python -m neomx.examples.train',
                                description='Train LeNet and ResNet-18 on every device at once '
                                            '(data parallel, as d2l chapter 8.4/8.5).')
    p.add_argument('--model', choices=['lenet', 'resnet18', 'both'], default='both')
    p.add_argument('--epochs', type=int, default=None,
                   help='epochs per model (default: 10 for LeNet, 4 for ResNet-18)')
    p.add_argument('--batch-size', type=int, default=64,
                   help='total batch size, split across the devices (default 64)')
    p.add_argument('--lr', type=float, default=None,
                   help='SGD learning rate (default: 0.2 for LeNet, 0.05 for ResNet-18)')
    p.add_argument('--schedule', choices=['cosine', 'constant'], default='cosine',
                   help='learning rate schedule (default: cosine decay to 1%% of --lr)')
    p.add_argument('--devices', type=int, default=None,
                   help='number of devices (default: all GPUs, else 2 CPU devices)')
    p.add_argument('--cpu', action='store_true', help='use CPU devices even when there are GPUs')
    p.add_argument('--hybridize', action='store_true', help='hybridize the networks')
    p.add_argument('--data', choices=['auto', 'fashion-mnist', 'digits'], default='auto',
                   help='data set (default: Fashion-MNIST when its files are present, '
                        'else the digits)')
    p.add_argument('--data-root', default=None,
                   help='folder of the Fashion-MNIST files (default ~/.mxnet/datasets/'
                        'fashion-mnist)')
    p.add_argument('--num-workers', type=int, default=0,
                   help='DataLoader worker processes (default 0)')
    p.add_argument('--train-size', type=int, default=None,
                   help='use only the first N training images')
    p.add_argument('--test-size', type=int, default=None,
                   help='use only the first N test images')
    p.add_argument('--max-batches', type=int, default=None,
                   help='stop each epoch after N batches')
    p.add_argument('--resnet-width', type=int, default=64,
                   help='channels of ResNet-18\'s first stage (default 64, as d2l)')
    p.add_argument('--amp', choices=['bfloat16', 'float16'], default=None,
                   help='mixed precision (mx.contrib.amp): convolutions and dense layers in '
                        'this type, float32 parameters and updates; float16 with a dynamic '
                        'loss scale')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--no-progress', action='store_true', help='no progress bar')
    return p


def main(argv=None):
    """Runs the job; returns ``{model: [per-epoch rows]}``."""
    parser = _parser()
    args = parser.parse_args(argv)
    for name in ('epochs', 'batch_size', 'train_size', 'test_size', 'max_batches',
                 'resnet_width'):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error('--%s must be at least 1, got %d' % (name.replace('_', '-'), value))
    try:
        ctx = get_devices(args.devices, args.cpu)
    except ValueError as e:
        parser.error(str(e))
    if args.batch_size < len(ctx):
        parser.error('--batch-size %d is smaller than the number of devices (%d)'
                     % (args.batch_size, len(ctx)))
    np.random.seed(args.seed)
    mx.random.seed(args.seed)
    if args.amp:
        amp.init(args.amp)      # before the networks are built, as MXNet asks

    train_data, test_data, info = load_data(args.data, args.data_root)
    train_data = train_data.take(args.train_size)
    test_data = test_data.take(args.test_size)
    # Full batches only in training ('rollover' carries the rest into the next epoch), so
    # every step splits evenly across the devices.
    train_iter = gluon.data.DataLoader(train_data, args.batch_size, shuffle=True,
                                       last_batch='rollover', num_workers=args.num_workers)
    test_iter = gluon.data.DataLoader(test_data, args.batch_size, shuffle=False,
                                      num_workers=args.num_workers)
    print('data: %s; %d training and %d test images' % (info, len(train_data), len(test_data)))
    print('devices: %s' % ctx)

    results = {}
    for name in (['lenet', 'resnet18'] if args.model == 'both' else [args.model]):
        build, initializer, lr, epochs = _MODELS[name]
        lr = args.lr if args.lr is not None else lr
        epochs = args.epochs if args.epochs is not None else epochs
        net = build(args)
        net.initialize(init=initializer(), ctx=ctx)
        if args.hybridize:
            net.hybridize()
        print('\n%s: %d epochs, batch size %d, learning rate %g (%s)%s%s'
              % (name, epochs, args.batch_size, lr, args.schedule,
                 ', hybridized' if args.hybridize else '',
                 ', %s AMP' % args.amp if args.amp else ''))
        results[name] = train(net, name, train_iter, test_iter, ctx, epochs, lr,
                              progress=not args.no_progress, max_batches=args.max_batches,
                              schedule=args.schedule, loss_scale=args.amp == 'float16')
    return results


if __name__ == '__main__':
    main()
