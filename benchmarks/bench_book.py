"""The book's small-model chapters (d2l-zh, first edition) as a new user runs them: training loops
of small operators, on neomx, MXNet 1.9.1 and PyTorch written the same way.

Workloads (our own code of the book's patterns):

- ``rnn``: a character RNN from scratch (chapter 6): one-hot inputs, ``nd.dot`` per time step,
  ``SoftmaxCrossEntropyLoss``, gradient clipping with a norm synchronised per batch
  (``asscalar``), ``param[:] = param - lr * param.grad`` at lr 100; random sampling of 35-step
  sequences, batch 32, a 1027-character vocabulary and 256 hidden units;
- ``softmax``: softmax regression from scratch (chapter 3): ``nd.dot``, ``exp``/``sum``,
  ``pick(...).log()``, the book's ``sgd`` (``param[:] = param - lr * param.grad /
  batch_size``), two ``asscalar()`` per batch (loss and accuracy) and the test accuracy;
- ``mlp``: a multilayer perceptron from scratch (chapter 3: 784-256-10, ``nd.maximum``,
  Gluon's loss), the same loop;
- ``mlp_gluon``: the same network with ``nn.Sequential``, ``Dense`` and ``Trainer``;
- ``bn``: LeNet with batch normalisation from scratch (chapter 5: a Block computing the batch
  statistics with ``mean``, ``sqrt`` and broadcasting, moving averages), ``Trainer`` at lr 1.

The four Fashion-MNIST loops read through ``DataLoader(..., num_workers=4)`` with
``transform_first(ToTensor())``, batch 256, as the book's ``load_data_fashion_mnist`` does.
The images are Fashion-MNIST's files when they are in ``~/.mxnet/datasets/fashion-mnist``
(or ``--data``; the notes give the number of images they hold), else synthetic images of the
same shape and type (ten noisy class prototypes; ``--data none`` asks for them); the RNN's
corpus is generated (10,000 characters of a random sparse bigram chain over 1,027 characters
with Zipf frequencies). Nothing is downloaded.

Variants, each in a process of its own kept for the whole run and told over a pipe when to take
its turn (each round runs every variant once, in a new seeded random order; each figure is the
median over rounds):

- ``neomx``: this checkout;
- ``before``: another checkout of neomx (``--before PATH``, e.g. a ``git worktree`` of an
  older commit), for before/after figures in the same run;
- ``mxnet``: MXNet 1.9.1 (``.mxnet-ref/bin/python``), the very same source;
- ``torch``: PyTorch written the same way (``torch.utils.data.DataLoader`` with 4 workers, a
  per-sample ``ToTensor``, ``.item()`` per batch, the same updates), with its default threads.

Besides the wall time of a run, each process reports its CPU time (its own threads; the data
workers are processes of their own) and where the training loop's front end spent its time:
waiting for the next batch (``data``; the first batch of a pass, which waits for the workers to
start, apart), pushing the forward and backward pass (``compute``), the parameter update
(``update``) and the synchronising ``asscalar`` calls (``sync``), as medians over rounds.

Targets (issue 27): every workload <= 1.0x MXNet 1.9.1 and <= 1.2x PyTorch.

    python benchmarks/bench_book.py                          # every workload, 5 rounds
    python benchmarks/bench_book.py --quick                  # a short run
    python benchmarks/bench_book.py --workloads rnn --repeat 7
    python benchmarks/bench_book.py --before /work/old-checkout --json /tmp/book.json
"""
import gc
import gzip
import json
import os
import random
import select
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

WORKLOADS = ('rnn', 'softmax', 'mlp', 'mlp_gluon', 'bn')
TITLES = {'rnn': 'RNN from scratch (ch. 6)', 'softmax': 'softmax regression from scratch (ch. 3)',
          'mlp': 'MLP from scratch (ch. 3)', 'mlp_gluon': 'MLP with Gluon (ch. 3)',
          'bn': 'batch normalisation from scratch, LeNet (ch. 5)'}
PHASES = ('first batch', 'data', 'compute', 'update', 'sync')


# -- data --------------------------------------------------------------------------------------

def _read_idx(path):
    import numpy as np
    with gzip.open(path, 'rb') as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], 'big') for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def fashion_mnist(root, n_train, n_test, seed=0):
    """(train images N x 28 x 28 x 1 uint8, train labels int32, test images, test labels, source):
    Fashion-MNIST's files under ``root`` when present, else synthetic images of that shape."""
    import numpy as np
    names = ('train-images-idx3-ubyte.gz', 'train-labels-idx1-ubyte.gz',
             't10k-images-idx3-ubyte.gz', 't10k-labels-idx1-ubyte.gz')
    paths = [os.path.join(root, n) for n in names] if root else []
    if paths and all(os.path.exists(p) for p in paths):
        xtr, ytr, xte, yte = (_read_idx(p) for p in paths)
        return (xtr[:n_train, :, :, None], ytr[:n_train].astype(np.int32),
                xte[:n_test, :, :, None], yte[:n_test].astype(np.int32), 'Fashion-MNIST files')
    rng = np.random.RandomState(seed)
    protos = rng.uniform(0, 255, size=(10, 28, 28))

    def make(n):
        y = rng.randint(0, 10, size=n).astype(np.int32)
        x = protos[y] * 0.6 + rng.uniform(0, 102, size=(n, 28, 28))
        return x.astype(np.uint8)[:, :, :, None], y
    xtr, ytr = make(n_train)
    xte, yte = make(n_test)
    return xtr, ytr, xte, yte, 'synthetic'


def corpus(n=10000, vocab=1027, seed=0):
    """Character indices: a sparse random bigram chain over ``vocab`` characters with Zipf
    frequencies (each character is followed by one of 4 others 80% of the time)."""
    import numpy as np
    rng = np.random.RandomState(seed)
    p = 1.0 / np.arange(1, vocab + 1)
    p /= p.sum()
    follow = rng.choice(vocab, size=(vocab, 4), p=p)
    jumps = rng.choice(vocab, size=n, p=p)
    out = np.empty(n, dtype=np.int64)
    out[0] = 0
    for i in range(1, n):
        out[i] = follow[out[i - 1], rng.randint(4)] if rng.rand() < 0.8 else jumps[i]
    return out


# -- the workloads, as the book writes them (one source for neomx and MXNet 1.9.1) -------------

class Phases:
    """Seconds of the training loop's front end, by phase."""

    def __init__(self):
        self.t = dict.fromkeys(PHASES, 0.0)


def book_data(mx, data, batch_size):
    """The book's ``load_data_fashion_mnist``: ToTensor in 4 worker processes."""
    gdata = mx.gluon.data
    xtr, ytr, xte, yte = data
    mnist_train = gdata.ArrayDataset(mx.nd.array(xtr, dtype=xtr.dtype), ytr)
    mnist_test = gdata.ArrayDataset(mx.nd.array(xte, dtype=xte.dtype), yte)
    transformer = gdata.vision.transforms.ToTensor()
    train_iter = gdata.DataLoader(mnist_train.transform_first(transformer), batch_size,
                                  shuffle=True, num_workers=4)
    test_iter = gdata.DataLoader(mnist_test.transform_first(transformer), batch_size,
                                 shuffle=False, num_workers=4)
    return train_iter, test_iter


def sgd(params, lr, batch_size):
    for param in params:
        param[:] = param - lr * param.grad / batch_size


def evaluate_accuracy(data_iter, net, ctx):
    acc_sum, n = 0.0, 0
    for X, y in data_iter:
        X, y = X.as_in_context(ctx), y.as_in_context(ctx)
        y = y.astype('float32')
        acc_sum += (net(X).argmax(axis=1) == y).sum().asscalar()
        n += y.size
    return acc_sum / n


def train_book(mx, net, train_iter, test_iter, loss, num_epochs, batch_size, params=None,
               lr=None, trainer=None, ctx=None, P=None):
    """The book's ``train_ch3`` (and ``train_ch5`` with ``ctx``), with the phases timed."""
    autograd = mx.autograd
    ctx = ctx or mx.cpu()
    clock = time.perf_counter
    T = P.t
    for epoch in range(num_epochs):
        train_l_sum, train_acc_sum, n = 0.0, 0.0, 0
        t0 = clock()
        first = True
        for X, y in train_iter:
            t1 = clock()
            T['first batch' if first else 'data'] += t1 - t0
            first = False
            X, y = X.as_in_context(ctx), y.as_in_context(ctx)
            with autograd.record():
                y_hat = net(X)
                l = loss(y_hat, y).sum()
            l.backward()
            t2 = clock()
            if trainer is None:
                sgd(params, lr, batch_size)
            else:
                trainer.step(batch_size)
            t3 = clock()
            y = y.astype('float32')
            train_l_sum += l.asscalar()
            train_acc_sum += (y_hat.argmax(axis=1) == y).sum().asscalar()
            n += y.size
            t0 = clock()
            T['compute'] += t2 - t1
            T['update'] += t3 - t2
            T['sync'] += t0 - t3
        test_acc = evaluate_accuracy(test_iter, net, ctx)
    return train_l_sum / n, train_acc_sum / n, test_acc


def softmax_scratch(mx, data, epochs, P):
    nd = mx.nd
    batch_size, lr = 256, 0.1
    train_iter, test_iter = book_data(mx, data, batch_size)
    num_inputs, num_outputs = 784, 10
    W = nd.random.normal(scale=0.01, shape=(num_inputs, num_outputs))
    b = nd.zeros(num_outputs)
    W.attach_grad()
    b.attach_grad()

    def softmax(X):
        X_exp = X.exp()
        partition = X_exp.sum(axis=1, keepdims=True)
        return X_exp / partition

    def net(X):
        return softmax(nd.dot(X.reshape((-1, num_inputs)), W) + b)

    def cross_entropy(y_hat, y):
        return -nd.pick(y_hat, y).log()

    return train_book(mx, net, train_iter, test_iter, cross_entropy, epochs, batch_size,
                      [W, b], lr, P=P)


def mlp_scratch(mx, data, epochs, P):
    nd = mx.nd
    batch_size, lr = 256, 0.5
    train_iter, test_iter = book_data(mx, data, batch_size)
    num_inputs, num_outputs, num_hiddens = 784, 10, 256
    W1 = nd.random.normal(scale=0.01, shape=(num_inputs, num_hiddens))
    b1 = nd.zeros(num_hiddens)
    W2 = nd.random.normal(scale=0.01, shape=(num_hiddens, num_outputs))
    b2 = nd.zeros(num_outputs)
    params = [W1, b1, W2, b2]
    for param in params:
        param.attach_grad()

    def relu(X):
        return nd.maximum(X, 0)

    def net(X):
        X = X.reshape((-1, num_inputs))
        H = relu(nd.dot(X, W1) + b1)
        return nd.dot(H, W2) + b2

    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    return train_book(mx, net, train_iter, test_iter, loss, epochs, batch_size, params, lr, P=P)


def mlp_gluon(mx, data, epochs, P):
    gluon, nn = mx.gluon, mx.gluon.nn
    batch_size = 256
    train_iter, test_iter = book_data(mx, data, batch_size)
    net = nn.Sequential()
    net.add(nn.Dense(256, activation='relu'), nn.Dense(10))
    net.initialize(mx.init.Normal(sigma=0.01))
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
    return train_book(mx, net, train_iter, test_iter, loss, epochs, batch_size, trainer=trainer,
                      P=P)


def bn_scratch(mx, data, epochs, P):
    nd, autograd, gluon, nn = mx.nd, mx.autograd, mx.gluon, mx.gluon.nn

    def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
        if not autograd.is_training():
            X_hat = (X - moving_mean) / nd.sqrt(moving_var + eps)
        else:
            if len(X.shape) == 2:
                mean = X.mean(axis=0)
                var = ((X - mean) ** 2).mean(axis=0)
            else:
                mean = X.mean(axis=(0, 2, 3), keepdims=True)
                var = ((X - mean) ** 2).mean(axis=(0, 2, 3), keepdims=True)
            X_hat = (X - mean) / nd.sqrt(var + eps)
            moving_mean = momentum * moving_mean + (1.0 - momentum) * mean
            moving_var = momentum * moving_var + (1.0 - momentum) * var
        Y = gamma * X_hat + beta
        return Y, moving_mean, moving_var

    class BatchNorm(nn.Block):
        def __init__(self, num_features, num_dims, **kwargs):
            super(BatchNorm, self).__init__(**kwargs)
            shape = (1, num_features) if num_dims == 2 else (1, num_features, 1, 1)
            self.gamma = self.params.get('gamma', shape=shape, init=mx.init.One())
            self.beta = self.params.get('beta', shape=shape, init=mx.init.Zero())
            self.moving_mean = nd.zeros(shape)
            self.moving_var = nd.zeros(shape)

        def forward(self, X):
            if self.moving_mean.context != X.context:
                self.moving_mean = self.moving_mean.copyto(X.context)
                self.moving_var = self.moving_var.copyto(X.context)
            Y, self.moving_mean, self.moving_var = batch_norm(
                X, self.gamma.data(), self.beta.data(), self.moving_mean, self.moving_var,
                eps=1e-5, momentum=0.9)
            return Y

    net = nn.Sequential()
    net.add(nn.Conv2D(6, kernel_size=5), BatchNorm(6, num_dims=4), nn.Activation('sigmoid'),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Conv2D(16, kernel_size=5), BatchNorm(16, num_dims=4), nn.Activation('sigmoid'),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Dense(120), BatchNorm(120, num_dims=2), nn.Activation('sigmoid'),
            nn.Dense(84), BatchNorm(84, num_dims=2), nn.Activation('sigmoid'),
            nn.Dense(10))
    batch_size, lr, ctx = 256, 1.0, mx.cpu()
    train_iter, test_iter = book_data(mx, data, batch_size)
    net.initialize(ctx=ctx, init=mx.init.Xavier())
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': lr})
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    return train_book(mx, net, train_iter, test_iter, loss, epochs, batch_size, trainer=trainer,
                      ctx=ctx, P=P)


def rnn_scratch(mx, corpus_indices, epochs, P):
    nd, autograd = mx.nd, mx.autograd
    ctx = mx.cpu()
    vocab_size = 1027
    num_inputs, num_hiddens, num_outputs = vocab_size, 256, vocab_size
    num_steps, batch_size, lr, clipping_theta = 35, 32, 1e2, 1e-2

    def get_params():
        def _one(shape):
            return nd.random.normal(scale=0.01, shape=shape, ctx=ctx)
        W_xh = _one((num_inputs, num_hiddens))
        W_hh = _one((num_hiddens, num_hiddens))
        b_h = nd.zeros(num_hiddens, ctx=ctx)
        W_hq = _one((num_hiddens, num_outputs))
        b_q = nd.zeros(num_outputs, ctx=ctx)
        params = [W_xh, W_hh, b_h, W_hq, b_q]
        for param in params:
            param.attach_grad()
        return params

    def init_rnn_state(batch_size, num_hiddens, ctx):
        return (nd.zeros(shape=(batch_size, num_hiddens), ctx=ctx),)

    def rnn(inputs, state, params):
        W_xh, W_hh, b_h, W_hq, b_q = params
        H, = state
        outputs = []
        for X in inputs:
            H = nd.tanh(nd.dot(X, W_xh) + nd.dot(H, W_hh) + b_h)
            Y = nd.dot(H, W_hq) + b_q
            outputs.append(Y)
        return outputs, (H,)

    def to_onehot(X, size):
        return [nd.one_hot(x, size) for x in X.T]

    def data_iter_random(corpus_indices, batch_size, num_steps, ctx):
        num_examples = (len(corpus_indices) - 1) // num_steps
        epoch_size = num_examples // batch_size
        example_indices = list(range(num_examples))
        random.shuffle(example_indices)

        def _data(pos):
            return corpus_indices[pos: pos + num_steps]
        for i in range(epoch_size):
            i = i * batch_size
            batch_indices = example_indices[i: i + batch_size]
            X = [_data(j * num_steps) for j in batch_indices]
            Y = [_data(j * num_steps + 1) for j in batch_indices]
            yield nd.array(X, ctx), nd.array(Y, ctx)

    def grad_clipping(params, theta, ctx):
        norm = nd.array([0], ctx)
        for param in params:
            norm += (param.grad ** 2).sum()
        norm = norm.sqrt().asscalar()
        if norm > theta:
            for param in params:
                param.grad[:] *= theta / norm

    corpus_indices = [int(c) for c in corpus_indices]
    params = get_params()
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    clock = time.perf_counter
    T = P.t
    for epoch in range(epochs):
        l_sum, n = 0.0, 0
        t0 = clock()
        for X, Y in data_iter_random(corpus_indices, batch_size, num_steps, ctx):
            t1 = clock()
            T['data'] += t1 - t0
            state = init_rnn_state(batch_size, num_hiddens, ctx)
            with autograd.record():
                inputs = to_onehot(X, vocab_size)
                (outputs, state) = rnn(inputs, state, params)
                outputs = nd.concat(*outputs, dim=0)
                y = Y.T.reshape((-1,))
                l = loss(outputs, y).mean()
            l.backward()
            t2 = clock()
            grad_clipping(params, clipping_theta, ctx)
            t3 = clock()
            sgd(params, lr, 1)
            t4 = clock()
            l_sum += l.asscalar() * y.size
            n += y.size
            t0 = clock()
            T['compute'] += t2 - t1
            T['sync'] += (t3 - t2) + (t0 - t4)      # the clipping norm's asscalar, the loss's
            T['update'] += t4 - t3
    return l_sum / n


# -- the same in PyTorch -------------------------------------------------------------------------

def torch_book_data(data, batch_size):
    import torch

    class Images(torch.utils.data.Dataset):
        """A dataset of HWC uint8 images whose samples go through a ToTensor of their own."""

        def __init__(self, x, y):
            self.x, self.y = torch.from_numpy(x), torch.from_numpy(y.astype('int64'))

        def __len__(self):
            return len(self.y)

        def __getitem__(self, i):
            return self.x[i].permute(2, 0, 1).float().div(255), self.y[i]

    xtr, ytr, xte, yte = data
    train_iter = torch.utils.data.DataLoader(Images(xtr, ytr), batch_size, shuffle=True,
                                             num_workers=4)
    test_iter = torch.utils.data.DataLoader(Images(xte, yte), batch_size, shuffle=False,
                                            num_workers=4)
    return train_iter, test_iter


def torch_sgd(params, lr, batch_size):
    import torch
    with torch.no_grad():
        for param in params:
            param[:] = param - lr * param.grad / batch_size
            param.grad = None


def torch_evaluate_accuracy(data_iter, net):
    import torch
    acc_sum, n = 0.0, 0
    with torch.no_grad():
        for X, y in data_iter:
            acc_sum += (net(X).argmax(dim=1) == y).float().sum().item()
            n += y.numel()
    return acc_sum / n


def torch_train_book(net, train_iter, test_iter, loss, num_epochs, batch_size, params=None,
                     lr=None, optimizer=None, P=None, module=None):
    clock = time.perf_counter
    T = P.t
    for epoch in range(num_epochs):
        train_l_sum, train_acc_sum, n = 0.0, 0.0, 0
        if module is not None:
            module.train()
        t0 = clock()
        first = True
        for X, y in train_iter:
            t1 = clock()
            T['first batch' if first else 'data'] += t1 - t0
            first = False
            y_hat = net(X)
            l = loss(y_hat, y).sum()
            l.backward()
            t2 = clock()
            if optimizer is None:
                torch_sgd(params, lr, batch_size)
            else:
                optimizer.step()
                optimizer.zero_grad()
            t3 = clock()
            train_l_sum += l.item()
            train_acc_sum += (y_hat.argmax(dim=1) == y).float().sum().item()
            n += y.numel()
            t0 = clock()
            T['compute'] += t2 - t1
            T['update'] += t3 - t2
            T['sync'] += t0 - t3
        if module is not None:
            module.eval()
        test_acc = torch_evaluate_accuracy(test_iter, net)
    return train_l_sum / n, train_acc_sum / n, test_acc


def torch_softmax_scratch(data, epochs, P):
    import torch
    batch_size, lr = 256, 0.1
    train_iter, test_iter = torch_book_data(data, batch_size)
    W = (torch.randn(784, 10) * 0.01).requires_grad_()
    b = torch.zeros(10, requires_grad=True)

    def softmax(X):
        X_exp = X.exp()
        return X_exp / X_exp.sum(dim=1, keepdim=True)

    def net(X):
        return softmax(X.reshape(-1, 784) @ W + b)

    def cross_entropy(y_hat, y):
        return -y_hat.gather(1, y.view(-1, 1)).log()

    return torch_train_book(net, train_iter, test_iter, cross_entropy, epochs, batch_size,
                            [W, b], lr, P=P)


def torch_mlp_scratch(data, epochs, P):
    import torch
    batch_size, lr = 256, 0.5
    train_iter, test_iter = torch_book_data(data, batch_size)
    W1 = (torch.randn(784, 256) * 0.01).requires_grad_()
    b1 = torch.zeros(256, requires_grad=True)
    W2 = (torch.randn(256, 10) * 0.01).requires_grad_()
    b2 = torch.zeros(10, requires_grad=True)

    def net(X):
        X = X.reshape(-1, 784)
        H = torch.maximum(X @ W1 + b1, torch.tensor(0.0))
        return H @ W2 + b2

    loss = torch.nn.CrossEntropyLoss(reduction='none')
    return torch_train_book(net, train_iter, test_iter, loss, epochs, batch_size,
                            [W1, b1, W2, b2], lr, P=P)


def torch_mlp_gluon(data, epochs, P):
    import torch
    nn = torch.nn
    batch_size = 256
    train_iter, test_iter = torch_book_data(data, batch_size)
    net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    for m in net:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.01)
            nn.init.normal_(m.bias, std=0.01)
    loss = nn.CrossEntropyLoss(reduction='none')
    # Gluon's trainer.step(batch_size) divides the summed loss's gradient by the batch size
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5 / batch_size)
    return torch_train_book(net, train_iter, test_iter, loss, epochs, batch_size,
                            optimizer=optimizer, P=P)


def torch_bn_scratch(data, epochs, P):
    import torch
    nn = torch.nn

    def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum, training):
        if not training:
            X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
        else:
            if X.dim() == 2:
                mean = X.mean(dim=0)
                var = ((X - mean) ** 2).mean(dim=0)
            else:
                mean = X.mean(dim=(0, 2, 3), keepdim=True)
                var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
            X_hat = (X - mean) / torch.sqrt(var + eps)
            moving_mean = momentum * moving_mean + (1.0 - momentum) * mean.detach()
            moving_var = momentum * moving_var + (1.0 - momentum) * var.detach()
        Y = gamma * X_hat + beta
        return Y, moving_mean, moving_var

    class BatchNorm(nn.Module):
        def __init__(self, num_features, num_dims):
            super().__init__()
            shape = (1, num_features) if num_dims == 2 else (1, num_features, 1, 1)
            self.gamma = nn.Parameter(torch.ones(shape))
            self.beta = nn.Parameter(torch.zeros(shape))
            self.moving_mean = torch.zeros(shape)
            self.moving_var = torch.zeros(shape)

        def forward(self, X):
            Y, self.moving_mean, self.moving_var = batch_norm(
                X, self.gamma, self.beta, self.moving_mean, self.moving_var, eps=1e-5,
                momentum=0.9, training=self.training)
            return Y

    net = nn.Sequential(nn.Conv2d(1, 6, kernel_size=5), BatchNorm(6, 4), nn.Sigmoid(),
                        nn.MaxPool2d(2, 2),
                        nn.Conv2d(6, 16, kernel_size=5), BatchNorm(16, 4), nn.Sigmoid(),
                        nn.MaxPool2d(2, 2), nn.Flatten(),
                        nn.Linear(256, 120), BatchNorm(120, 2), nn.Sigmoid(),
                        nn.Linear(120, 84), BatchNorm(84, 2), nn.Sigmoid(),
                        nn.Linear(84, 10))
    for m in net:
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    batch_size = 256
    train_iter, test_iter = torch_book_data(data, batch_size)
    loss = nn.CrossEntropyLoss(reduction='none')
    optimizer = torch.optim.SGD(net.parameters(), lr=1.0 / batch_size)
    return torch_train_book(net, train_iter, test_iter, loss, epochs, batch_size,
                            optimizer=optimizer, P=P, module=net)


def torch_rnn_scratch(corpus_indices, epochs, P):
    import torch
    F = torch.nn.functional
    vocab_size, num_hiddens = 1027, 256
    num_steps, batch_size, lr, clipping_theta = 35, 32, 1e2, 1e-2

    def _one(shape):
        return (torch.randn(shape) * 0.01).requires_grad_()
    params = [_one((vocab_size, num_hiddens)), _one((num_hiddens, num_hiddens)),
              torch.zeros(num_hiddens, requires_grad=True), _one((num_hiddens, vocab_size)),
              torch.zeros(vocab_size, requires_grad=True)]

    def rnn(inputs, state, params):
        W_xh, W_hh, b_h, W_hq, b_q = params
        H, = state
        outputs = []
        for X in inputs:
            H = torch.tanh(X @ W_xh + H @ W_hh + b_h)
            outputs.append(H @ W_hq + b_q)
        return outputs, (H,)

    def data_iter_random(corpus_indices, batch_size, num_steps):
        num_examples = (len(corpus_indices) - 1) // num_steps
        epoch_size = num_examples // batch_size
        example_indices = list(range(num_examples))
        random.shuffle(example_indices)
        for i in range(epoch_size):
            batch_indices = example_indices[i * batch_size: (i + 1) * batch_size]
            X = [corpus_indices[j * num_steps: j * num_steps + num_steps] for j in batch_indices]
            Y = [corpus_indices[j * num_steps + 1: j * num_steps + 1 + num_steps]
                 for j in batch_indices]
            yield torch.tensor(X), torch.tensor(Y)

    def grad_clipping(params, theta):
        norm = torch.zeros(1)
        for param in params:
            norm += (param.grad ** 2).sum()
        norm = norm.sqrt().item()
        if norm > theta:
            for param in params:
                param.grad *= theta / norm

    corpus_indices = [int(c) for c in corpus_indices]
    clock = time.perf_counter
    T = P.t
    for epoch in range(epochs):
        l_sum, n = 0.0, 0
        t0 = clock()
        for X, Y in data_iter_random(corpus_indices, batch_size, num_steps):
            t1 = clock()
            T['data'] += t1 - t0
            state = (torch.zeros(batch_size, num_hiddens),)
            inputs = [F.one_hot(x, vocab_size).float() for x in X.T]
            outputs, state = rnn(inputs, state, params)
            outputs = torch.cat(outputs, dim=0)
            y = Y.T.reshape(-1)
            l = F.cross_entropy(outputs, y)
            l.backward()
            t2 = clock()
            grad_clipping(params, clipping_theta)
            t3 = clock()
            torch_sgd(params, lr, 1)
            t4 = clock()
            l_sum += l.item() * y.numel()
            n += y.numel()
            t0 = clock()
            T['compute'] += t2 - t1
            T['sync'] += (t3 - t2) + (t0 - t4)
            T['update'] += t4 - t3
    return l_sum / n


# -- a variant's process -------------------------------------------------------------------------

def serve(framework, path, data_file):
    """Runs workloads on request (one JSON line each on stdin), answering with one JSON line:
    wall and CPU seconds, the phases, the final loss or accuracies."""
    import numpy as np
    if framework in ('neomx', 'before'):
        sys.path.insert(0, path)
        import neomx as mx
        import neomx.engine
        if os.path.abspath(os.path.dirname(os.path.dirname(mx.__file__))) != \
                os.path.abspath(path):
            raise SystemExit('neomx imported from %s, not %s' % (mx.__file__, path))
        settle = mx.engine.waitall
    elif framework == 'mxnet':
        import mxnet as mx
        settle = mx.nd.waitall
    else:
        import torch  # noqa: F401
        mx = None

        def settle():
            pass
    npz = np.load(data_file)
    fashion = (npz['xtr'], npz['ytr'], npz['xte'], npz['yte'])
    text = npz['corpus']
    fns = {'rnn': rnn_scratch, 'softmax': softmax_scratch, 'mlp': mlp_scratch,
           'mlp_gluon': mlp_gluon, 'bn': bn_scratch}
    tfns = {'rnn': torch_rnn_scratch, 'softmax': torch_softmax_scratch, 'mlp': torch_mlp_scratch,
            'mlp_gluon': torch_mlp_gluon, 'bn': torch_bn_scratch}
    print(json.dumps({'ready': True}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        name, epochs, seed = cmd['workload'], cmd['epochs'], cmd['seed']
        random.seed(seed)
        np.random.seed(seed)
        if mx is not None:
            mx.random.seed(seed)
        else:
            import torch
            torch.manual_seed(seed)
        data = text if name == 'rnn' else fashion
        P = Phases()
        settle()
        gc.collect()
        h0 = _thread_cpu()
        k0 = _children_cpu()
        c0, t0 = time.process_time(), time.perf_counter()
        if mx is not None:
            result = fns[name](mx, data, epochs, P)
        else:
            result = tfns[name](data, epochs, P)
        settle()
        t1, c1 = time.perf_counter(), time.process_time()
        gc.collect()        # the loaders end their worker processes, which count once reaped
        h1 = _thread_cpu()
        busiest = sorted(((h1[t] - h0.get(t, 0.0), t) for t in h1), reverse=True)[:4]
        print(json.dumps({'wall': t1 - t0, 'cpu': c1 - c0, 'workers_cpu': _children_cpu() - k0,
                          'threads_cpu': [round(c, 2) for c, _ in busiest],
                          'phases': P.t, 'result': result}, default=float), flush=True)


def _thread_cpu():
    """CPU seconds of each of this process's threads (Linux; empty elsewhere): which threads
    a run's CPU went to (the front end, an engine worker, OpenMP helpers)."""
    out = {}
    try:
        tids = os.listdir('/proc/self/task')
    except OSError:
        return out
    tick = os.sysconf('SC_CLK_TCK')
    for tid in tids:
        try:
            with open('/proc/self/task/%s/stat' % tid) as f:
                fields = f.read().rsplit(')', 1)[1].split()
            out[tid] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError, IndexError):
            pass
    return out


def _children_cpu():
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class Variant:
    """A variant's process (``serve``), run on request."""

    def __init__(self, name, kind, python, path, data_file, env=None):
        self.name = name
        full_env = {k: v for k, v in os.environ.items()
                    if not k.startswith(('NEOMX_', 'MXNET_', 'OMP_')) and k != 'PYTHONPATH'}
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [python, os.path.abspath(__file__), '--serve', kind, '--path', path,
             '--data-file', data_file], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=full_env, cwd=path)
        self._read(600)

    def _read(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ''
        if not line:
            self.proc.kill()
            raise RuntimeError('%s failed:\n%s' % (self.name, self.proc.stderr.read()[-4000:]))
        return json.loads(line)

    def run(self, workload, epochs, seed, timeout=1800):
        self.proc.stdin.write(json.dumps({'workload': workload, 'epochs': epochs,
                                          'seed': seed}) + '\n')
        self.proc.stdin.flush()
        return self._read(timeout)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()


# -- the driver ----------------------------------------------------------------------------------

def main():
    import argparse
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument('--serve', help=argparse.SUPPRESS)
    p.add_argument('--path', default=ROOT, help=argparse.SUPPRESS)
    p.add_argument('--data-file', help=argparse.SUPPRESS)
    p.add_argument('--workloads', default=','.join(WORKLOADS),
                   help='comma-separated, of %s' % ', '.join(WORKLOADS))
    p.add_argument('--variants', default='neomx,mxnet,torch',
                   help='comma-separated, of neomx, before, mxnet, torch ("before" is added '
                        'by --before); LABEL=VARIANT+NAME=VALUE[+NAME=VALUE] runs VARIANT with '
                        'those environment variables, e.g. neomx1=neomx+NEOMX_CPU_THREADS=1')
    p.add_argument('--before', metavar='PATH', help='another neomx checkout, run as "before"')
    p.add_argument('--repeat', type=int, default=5, help='rounds (median)')
    p.add_argument('--epochs', type=int, default=1, help='epochs of each Fashion-MNIST run')
    p.add_argument('--rnn-epochs', type=int, default=2, help='epochs of each RNN run')
    p.add_argument('--train', type=int, default=60000, help='training images')
    p.add_argument('--test', type=int, default=10000, help='test images')
    p.add_argument('--bn-train', type=int, default=15000,
                   help='training images of the LeNet run (its step is 10x the MLP\'s)')
    p.add_argument('--data', default=os.path.expanduser('~/.mxnet/datasets/fashion-mnist'),
                   help='folder of Fashion-MNIST\'s .gz files (synthetic data when absent)')
    p.add_argument('--quick', action='store_true', help='a short run: 3 rounds, less data')
    p.add_argument('--json', metavar='PATH', help='also write the result as JSON to PATH')
    args = p.parse_args()
    if args.serve:
        return serve(args.serve, args.path, args.data_file)

    sys.path.insert(0, HERE)
    import tempfile

    import numpy as np
    from common import MXNET_REF, fmt, has_mxnet, machine, markdown_table, print_result, ratio

    if args.quick:
        args.repeat, args.train, args.test, args.bn_train = 3, 12000, 2000, 5000
    workloads = [w for w in args.workloads.split(',') if w]
    for w in workloads:
        if w not in WORKLOADS:
            raise SystemExit('unknown workload %r: expected one of %s' % (w, ', '.join(WORKLOADS)))
    names, kinds, envs = [], {}, {}
    for v in args.variants.split(','):
        label, _, spec = v.partition('=')
        kind, *settings = (spec or label).split('+')
        names.append(label)
        kinds[label] = kind
        envs[label] = dict(s.split('=', 1) for s in settings)
    if args.before and 'before' not in names:
        names.insert(1, 'before')
        kinds['before'], envs['before'] = 'before', {}
    for n in list(names):
        if kinds[n] not in ('neomx', 'before', 'mxnet', 'torch'):
            raise SystemExit('unknown variant %r' % kinds[n])
        if kinds[n] == 'mxnet' and not has_mxnet():
            print('MXNet 1.9.1 reference environment absent: skipped', file=sys.stderr)
            names.remove(n)

    tmp = tempfile.mkdtemp(prefix='bench_book_')
    xtr, ytr, xte, yte, source = fashion_mnist(args.data, args.train, args.test)
    data_file = os.path.join(tmp, 'data.npz')
    np.savez(data_file, xtr=xtr, ytr=ytr, xte=xte, yte=yte, corpus=corpus())
    bn_file = os.path.join(tmp, 'bn.npz')
    np.savez(bn_file, xtr=xtr[:args.bn_train], ytr=ytr[:args.bn_train], xte=xte, yte=yte,
             corpus=corpus())
    python = sys.executable
    specs = {'neomx': (python, ROOT), 'before': (python, args.before),
             'mxnet': (MXNET_REF, ROOT), 'torch': (python, ROOT)}
    info = machine()
    load_before = info['load average']
    results = {}        # (workload, variant) -> list of answers
    rng = random.Random(27)
    def report(workloads, final):
        """The tables of the workloads measured so far; written to --json after each
        workload (a run stopped early keeps them), printed at the end."""
        try:
            load_after = '%.2f %.2f %.2f' % os.getloadavg()
        except OSError:
            load_after = '?'

        def med(w, n, key):
            runs = results.get((w, n))
            return statistics.median(r[key] for r in runs) if runs else None

        headers = ['workload'] + ['%s (s)' % n for n in names]
        if 'neomx' in names:
            headers += ['neomx / %s' % n for n in names if n != 'neomx']
        rows = []
        for w in workloads:
            row = [TITLES[w]] + [med(w, n, 'wall') for n in names]
            if 'neomx' in names:
                row += [ratio(med(w, 'neomx', 'wall'), med(w, n, 'wall')) for n in names
                        if n != 'neomx']
            rows.append(row)
        cpu_rows = [[TITLES[w]] + [med(w, n, 'cpu') for n in names]
                    + [med(w, n, 'workers_cpu') for n in names] for w in workloads]
        phase_rows = []
        for w in workloads:
            for n in names:
                runs = results.get((w, n))
                if runs:
                    phase_rows.append([TITLES[w], n] + [
                        statistics.median(r['phases'][k] for r in runs) for k in PHASES])
        loads = [r['load'] for runs in results.values() for r in runs]
        notes = [
            'median of %d rounds, each running every variant once in a seeded random order, after '
            'a warm-up run each; every variant in its own process' % args.repeat,
            'Fashion-MNIST loops: %d epoch(s) of %d training images (LeNet: %d) and a pass over '
            '%d test images per run, batch 256, DataLoader with 4 workers (%s data); RNN: %d '
            'epochs of a 10,000-character generated corpus (8 batches of 32 x 35 steps per epoch)'
            % (args.epochs, len(xtr), min(args.bn_train, len(xtr)), len(xte), source,
               args.rnn_epochs),
            'load average (1 min) before %s, after %s; during the runs %.1f-%.1f (median %.1f)'
            % (load_before, load_after, min(loads), max(loads), statistics.median(loads)),
        ]
        targets = []
        if 'neomx' in names:
            for w in workloads:
                for n, limit in (('mxnet', 1.0), ('torch', 1.2)):
                    if n in names:
                        r = ratio(med(w, 'neomx', 'wall'), med(w, n, 'wall'))
                        targets.append('%s %s %s' % (w, fmt(r), 'met' if r <= limit else 'MISSED'))
            notes.append('targets (<= 1.0x MXNet 1.9.1, <= 1.2x PyTorch), in that order: '
                         + '; '.join(targets))
        result = {'title': 'The book\'s small-model loops (seconds per run)',
                  'about': 'Wall seconds of one run of each loop (training and the test accuracy); '
                           'ratios are neomx against each other variant (lower is better).',
                  'headers': headers, 'rows': rows, 'notes': notes, 'machine': info,
                  'cpu': {'headers': ['workload'] + ['%s (s)' % n for n in names]
                          + ['%s workers (s)' % n for n in names],
                          'rows': cpu_rows},
                  'phases': {'headers': ['workload', 'variant'] + ['%s (s)' % k for k in PHASES],
                             'rows': phase_rows},
                  'runs': {'%s/%s' % k: v for k, v in results.items()}}
        if args.json:
            with open(args.json, 'w') as f:
                json.dump(result, f, indent=1)
        if not final:
            return
        print_result(result)
        print('\nCPU seconds of each process (its own threads) and of its DataLoader worker '
              'processes:\n')
        print(markdown_table(result['cpu']['headers'], cpu_rows))
        print('\nWhere the front end spent its time (seconds per run, medians):\n')
        print(markdown_table(result['phases']['headers'], phase_rows))

    for w in workloads:
        f = bn_file if w == 'bn' else data_file
        variants = {n: Variant(n, kinds[n], specs[kinds[n]][0], specs[kinds[n]][1], f, envs[n])
                    for n in names}
        epochs = args.rnn_epochs if w == 'rnn' else args.epochs
        try:
            for v in variants.values():             # warm-up: imports, first-call costs
                v.run(w, 1, 0)
            for r in range(args.repeat):
                order = list(variants)
                rng.shuffle(order)
                for n in order:
                    out = variants[n].run(w, epochs, r + 1)
                    out['load'] = os.getloadavg()[0]
                    results.setdefault((w, n), []).append(out)
                    print('%s %s round %d: %.2f s (cpu %.2f + workers %.2f, load %.1f; busiest '
                          'threads %s)' % (w, n, r, out['wall'], out['cpu'], out['workers_cpu'],
                                           out['load'], out.get('threads_cpu')),
                          file=sys.stderr, flush=True)
        finally:
            for v in variants.values():
                v.close()
        report(workloads[:workloads.index(w) + 1], False)
    report(workloads, True)


if __name__ == '__main__':
    main()
