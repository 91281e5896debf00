"""Symbolic training: ``Module.fit`` on LeNet against the hybridized Gluon loop and PyTorch.

The same LeNet (d2l's: sigmoid convolutions, max pooling, three dense layers), batch 256 of
1x28x28 inputs, SGD (learning rate 0.5), over the same epoch of 8 batches from one
``mx.io.NDArrayIter``:

- ``Module.fit``: the symbol (ending in ``SoftmaxOutput``) trained by ``mod.fit(it,
  num_epoch=1)`` with its default metric (accuracy) on a module bound and initialised
  beforehand, so a sample is the loop itself: load the batch into the executor, forward,
  backward, update, metric;
- ``Module step``: the same without ``fit`` and its metric (``forward_backward``, ``update``);
- ``Gluon hybridized``: the HybridSequential LeNet, hybridized, with
  ``SoftmaxCrossEntropyLoss``: ``record``, ``backward``, ``trainer.step``, and the same
  accuracy metric updated each batch (the work ``fit`` does);
- ``Gluon hybridized step``: the same without the metric;
- PyTorch: the same model and loop (with the metric's ``.item()`` each batch), one intra-op
  thread per core neomx uses.

All variants run in one process in interleaved rounds (each round runs every variant once), so
a change in the load of a shared machine falls on all of them alike; each figure is the median
over rounds of milliseconds per batch, the epoch ending with ``nd.waitall()``.

Target: ``Module.fit`` within 10% of the hybridized Gluon loop doing the same work.

    python benchmarks/bench_module.py [--repeat 7] [--no-mxnet] [--json PATH]
"""
import logging
import os
import warnings

import common  # noqa: F401  (puts the checkout on sys.path)
from common import finish, fmt, interleaved_cpu, parser, ratio, run_mxnet

import numpy as np
import torch

import neomx as mx

BATCH = 256
BATCHES = 8
TARGET = 1.10


def lenet_symbol(sym):
    """LeNet as a symbol (the same source builds it under MXNet 1.9.1)."""
    x = sym.var('data')
    x = sym.Activation(sym.Convolution(x, kernel=(5, 5), num_filter=6), act_type='sigmoid')
    x = sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type='max')
    x = sym.Activation(sym.Convolution(x, kernel=(5, 5), num_filter=16), act_type='sigmoid')
    x = sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type='max')
    x = sym.Activation(sym.FullyConnected(sym.flatten(x), num_hidden=120), act_type='sigmoid')
    x = sym.Activation(sym.FullyConnected(x, num_hidden=84), act_type='sigmoid')
    return sym.SoftmaxOutput(sym.FullyConnected(x, num_hidden=10), name='softmax')


def data():
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(BATCH * BATCHES, 1, 28, 28)).astype(np.float32)
    y = rng.randint(0, 10, size=(BATCH * BATCHES,)).astype(np.float32)
    return X, y


def module_variants(X, y):
    it = mx.io.NDArrayIter(X, y, batch_size=BATCH)
    mod = mx.mod.Module(lenet_symbol(mx.sym), context=mx.cpu())
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={'learning_rate': 0.5})
    logging.getLogger().setLevel(logging.ERROR)    # fit's "already bound" notices
    warnings.simplefilter('ignore')                 # and "already initialized" warnings

    def fit():
        it.reset()          # fit resets its data at the end of an epoch; step() does not
        mod.fit(it, num_epoch=1, optimizer_params={'learning_rate': 0.5})
        mx.nd.waitall()

    def step():
        it.reset()
        for batch in it:
            mod.forward_backward(batch)
            mod.update()
        mx.nd.waitall()
    return fit, step


def gluon_variants(X, y):
    from neomx import autograd, gluon
    nn = gluon.nn
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, kernel_size=5, activation='sigmoid'),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Conv2D(16, kernel_size=5, activation='sigmoid'),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Dense(120, activation='sigmoid'), nn.Dense(84, activation='sigmoid'),
            nn.Dense(10))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    it = mx.io.NDArrayIter(X, y, batch_size=BATCH)
    metric = mx.metric.Accuracy()

    def loop(with_metric):
        it.reset()
        metric.reset()
        for batch in it:
            x, label = batch.data[0], batch.label[0]
            with autograd.record():
                out = net(x)
                loss = loss_fn(out, label)
            loss.backward()
            trainer.step(BATCH)
            if with_metric:
                metric.update([label], [out])
        mx.nd.waitall()
    return (lambda: loop(True)), (lambda: loop(False))


def torch_variant(X, y):
    tnn = torch.nn
    net = tnn.Sequential(tnn.Conv2d(1, 6, 5), tnn.Sigmoid(), tnn.MaxPool2d(2, 2),
                         tnn.Conv2d(6, 16, 5), tnn.Sigmoid(), tnn.MaxPool2d(2, 2), tnn.Flatten(),
                         tnn.Linear(256, 120), tnn.Sigmoid(), tnn.Linear(120, 84), tnn.Sigmoid(),
                         tnn.Linear(84, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    lossf = tnn.CrossEntropyLoss()
    Xs = torch.from_numpy(X).split(BATCH)
    ys = torch.from_numpy(y).long().split(BATCH)
    threads = mx.engine.cpu_budget()

    def run():
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            correct = 0
            for x, label in zip(Xs, ys):
                opt.zero_grad()
                out = net(x)
                lossf(out, label).backward()
                opt.step()
                correct += int((out.argmax(1) == label).sum().item())
        finally:
            torch.set_num_threads(before)
    return run


MXNET_CODE = '''
import json, logging, numpy as np, mxnet as mx
%s
rng = np.random.RandomState(0)
X = rng.uniform(size=(%d, 1, 28, 28)).astype(np.float32)
y = rng.randint(0, 10, size=(%d,)).astype(np.float32)
it = mx.io.NDArrayIter(X, y, batch_size=%d)
mod = mx.mod.Module(lenet_symbol(mx.sym), context=mx.cpu())
mod.bind(it.provide_data, it.provide_label)
mod.init_params(mx.init.Xavier())
mod.init_optimizer(optimizer_params={'learning_rate': 0.5})
logging.getLogger().setLevel(logging.ERROR)
def fit():
    mod.fit(it, num_epoch=1, optimizer_params={'learning_rate': 0.5})
    mx.nd.waitall()
print(json.dumps(median_time(fit, %d, warmup=2)))
'''


def main():
    p = parser(__doc__)
    args = p.parse_args()
    repeat = args.repeat or 7
    X, y = data()
    fit, step = module_variants(X, y)
    gluon_metric, gluon_step = gluon_variants(X, y)
    variants = {'neomx Module.fit': fit, 'neomx Gluon hybridized (with metric)': gluon_metric,
                'neomx Module step (forward_backward, update)': step,
                'neomx Gluon hybridized step': gluon_step,
                'PyTorch (with metric)': torch_variant(X, y)}
    t, cpu = interleaved_cpu(variants, repeat, warmup=2)    # per epoch: per batch below
    t = {n: v / BATCHES for n, v in t.items()}
    cpu = {n: v / BATCHES for n, v in cpu.items()}
    ref = None
    if not args.no_mxnet:
        import inspect
        src = inspect.getsource(lenet_symbol)
        v = run_mxnet(MXNET_CODE % (src, BATCH * BATCHES, BATCH * BATCHES, BATCH, repeat))
        ref = None if v is None else v / BATCHES
    pytorch, pytorch_cpu = t['PyTorch (with metric)'], cpu['PyTorch (with metric)']
    rows = [[name, sec * 1e3, BATCH / sec, ratio(sec, pytorch), cpu[name] * 1e3,
             ratio(cpu[name], pytorch_cpu)] for name, sec in t.items()]
    if ref is not None:
        rows.append(['MXNet 1.9.1 Module.fit (own process)', ref * 1e3, BATCH / ref,
                     ratio(ref, pytorch), None, None])

    def vs(a, b, table):
        return table[a] / table[b]
    fit, gluon = 'neomx Module.fit', 'neomx Gluon hybridized (with metric)'
    step, gstep = 'neomx Module step (forward_backward, update)', 'neomx Gluon hybridized step'
    fit_wall, fit_cpu = vs(fit, gluon, t), vs(fit, gluon, cpu)
    try:
        load = '%.1f' % os.getloadavg()[0]
    except OSError:
        load = '?'
    notes = ['target: Module.fit <= %g x the hybridized Gluon loop with the same metric: %s '
             'by wall time, %s by CPU time (%s)'
             % (TARGET, fmt(fit_wall), fmt(fit_cpu),
                'met' if min(fit_wall, fit_cpu) <= TARGET else 'MISSED'),
             'without the metric: Module step %s x the hybridized Gluon step by wall time, %s '
             'by CPU time' % (fmt(vs(step, gstep, t)), fmt(vs(step, gstep, cpu))),
             'one process, %d interleaved rounds of every variant (median); %d batches of %d '
             'an epoch; PyTorch with %d intra-op threads; load average %s when done'
             % (repeat, BATCHES, BATCH, mx.engine.cpu_budget(), load)]
    finish({'title': 'Module.fit on LeNet (batch %d, 28x28, SGD)' % BATCH,
            'about': 'Milliseconds per batch of an epoch (load, forward, backward, update, '
                     'metric), wall time and the process\'s CPU time (all its threads); '
                     'ratios against PyTorch running the same loop in the same rounds.',
            'headers': ['implementation', 'ms/batch', 'samples/s', 'vs PyTorch',
                        'CPU ms/batch', 'CPU vs PyTorch'],
            'rows': rows, 'notes': notes}, args)


if __name__ == '__main__':
    main()
