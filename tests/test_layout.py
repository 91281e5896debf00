"""Layouts: torch's layout-sensitive kernels get row-major channels-first tensors whatever
strides a transform or user code produced, except that on a CPU 4-d float32 convolutions, batch
normalisation and pooling hand each other channels-last tensors, imperatively and in compiled
graphs (torch 2.13's CPU convolution computes wrong gradients and hangs on channels-last input
in one narrow case, which neomx avoids; see neomx.ops.layout). An array holding such a result
keeps it channels-last until a view is made of it, code outside the engine reads it or it is
marked for autograd; then its storage goes row-major."""
import contextlib
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import neomx as mx
from neomx import autograd, gluon, nd
from neomx.gluon import nn
from neomx.gluon.data.vision import transforms
from neomx.ops import registry
from neomx.ops.layout import dense, is_channels_last, is_dense, row_major

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _stored(a):
    """The tensor ``a``'s storage holds, as the engine left it (``_data()`` would lay it out
    row-major)."""
    a.wait_to_read()
    return a._var.tensor if a._view is None else a._tensor()


def _channels_last_batch(n=4, size=6):
    """A (n, 1, size, size) tensor in row-major order with channels-last strides, as
    permuting (n, size, size, 1) images gives."""
    t = torch.rand(n, size, size, 1).permute(0, 3, 1, 2)
    assert t.is_contiguous() and t.stride() == (size * size, 1, size, 1)
    return t


def test_dense():
    t = _channels_last_batch()
    d = dense(t)
    assert d.stride() == row_major((4, 1, 6, 6)) == (36, 36, 6, 1)
    assert d.data_ptr() == t.data_ptr()                    # same elements: no copy
    m = torch.rand(3, 4).t()
    assert dense(m).stride() == (3, 1) and torch.equal(dense(m), m)
    plain = torch.rand(2, 3)
    assert dense(plain) is plain
    assert is_dense(torch.rand(0, 3, 1).permute(2, 0, 1))   # nothing to lay out
    assert not is_dense(t) and is_dense(d)


def test_to_tensor_gives_row_major_batches():
    for shape in [(5, 28, 28, 1), (28, 28, 1), (5, 8, 8, 3), (1, 4, 4, 1)]:
        x = nd.array(np.random.randint(0, 256, shape), dtype='uint8')
        y = transforms.ToTensor()(x)
        t = _stored(y)
        assert is_dense(t), (shape, t.stride())
        np.testing.assert_allclose(y.asnumpy(), np.moveaxis(x.asnumpy(), -1, -3) / 255.0,
                                   rtol=1e-6)


def test_arrays_from_odd_strides_are_row_major():
    images = np.random.randint(0, 256, (4, 6, 6, 1)).astype('uint8')
    nchw = images.transpose(0, 3, 1, 2)        # NumPy calls it C-contiguous
    assert nchw.flags['C_CONTIGUOUS'] and nchw.strides != (36, 36, 6, 1)
    for a in (nd.array(nchw, dtype='uint8'), nd.array(nchw), mx.nd.from_numpy(nchw),
              mx.nd.from_dlpack(torch.from_numpy(nchw)), nd.array(nchw).copy()):
        assert is_dense(_stored(a)), _stored(a).stride()
        np.testing.assert_array_equal(a.asnumpy(), nchw)


class _LayoutSpy(TorchDispatchMode):
    """Records the tensor arguments of torch's layout-sensitive operators (convolution,
    pooling, normalisation, resampling) that are not row-major."""
    SENSITIVE = ('convolution', 'pool', 'batch_norm', 'upsample', 'group_norm', 'grid_sampler',
                 'im2col')

    def __init__(self):
        super().__init__()
        self.calls = 0
        self.bad = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.__name__
        if any(s in name for s in self.SENSITIVE):
            self.calls += 1
            for a in list(args) + list((kwargs or {}).values()):
                if isinstance(a, torch.Tensor) and a.dim() >= 3 and not is_dense(a):
                    self.bad.append((name, tuple(a.shape), a.stride()))
        return func(*args, **(kwargs or {}))


def _conv_net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'),
            nn.Conv2D(8, 1, strides=2), nn.AvgPool2D(2), nn.Dense(3))
    return net


@pytest.mark.parametrize('hybridize', [False, True])
def test_training_hands_torch_row_major_inputs(hybridize, monkeypatch):
    """A step from ToTensor-transformed one-channel uint8 images and from arrays with
    channels-last strides: no layout-sensitive torch operator sees other strides (compiled
    graphs kept row-major by NEOMX_CHANNELS_LAST=0)."""
    monkeypatch.setenv('NEOMX_CHANNELS_LAST', '0')
    mx.random.seed(0)
    net = _conv_net()
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    images = nd.array(np.random.randint(0, 256, (4, 8, 8, 1)), dtype='uint8')
    label = nd.array([0, 1, 2, 1])
    with mx.engine.engine_scope('NaiveEngine'):      # kernels run in this thread
        spy = _LayoutSpy()
        with spy:
            for x in (transforms.ToTensor()(images),
                      nd.array(images.asnumpy().transpose(0, 3, 1, 2) / 255.0)):
                with autograd.record():
                    loss = loss_fn(net(x), label)
                loss.backward()
                trainer.step(4)
            nd.waitall()
    assert spy.calls >= 8 and not spy.bad, spy.bad


def test_max_pooling_copy_is_the_only_other_layout(monkeypatch):
    """Max pooling of 4 channels or more hands torch's (ATen's own, not oneDNN's) pooling
    kernel a channels-last copy of its input; nothing else in a training step sees other
    strides, and the convolutions around it get row-major tensors (compiled graphs kept
    row-major by NEOMX_CHANNELS_LAST=0)."""
    monkeypatch.setenv('NEOMX_CHANNELS_LAST', '0')
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, 3, padding=1), nn.MaxPool2D(3, 2, 1), nn.Conv2D(4, 1, strides=2),
            nn.Dense(3))
    net.initialize(mx.init.Xavier())
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    x, label = nd.random.uniform(shape=(4, 1, 8, 8)), nd.array([0, 1, 2, 1])
    with mx.engine.engine_scope('NaiveEngine'):
        for hybridize in (False, True):
            net.hybridize(hybridize)
            spy = _LayoutSpy()
            with spy:
                with autograd.record():
                    loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(x), label)
                loss.backward()
                trainer.step(4)
                nd.waitall()
            assert spy.calls >= 4
            for name, shape, strides in spy.bad:
                assert name.startswith('max_pool2d_with_indices.'), (name, shape, strides)
                assert strides == (16 * 8 * 8, 1, 8 * 16, 16), strides     # channels-last
            assert len(spy.bad) == 1, spy.bad


class _ConvSpy(TorchDispatchMode):
    """Records each convolution's (input strides channels-last?, kernel size, stride) and the
    strides of the tensors every layout-sensitive operator sees."""

    def __init__(self):
        super().__init__()
        self.convs = []
        self.strides = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.__name__
        if name.startswith('convolution.'):
            x, w = args[0], args[1]
            self.convs.append((is_channels_last(x), tuple(w.shape[2:]), tuple(args[3])))
        if any(s in name for s in _LayoutSpy.SENSITIVE):
            for a in args:
                if isinstance(a, torch.Tensor) and a.dim() == 4:
                    self.strides.append((name, is_dense(a) or is_channels_last(a)))
        return func(*args, **(kwargs or {}))


def _cl_net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'),
            nn.MaxPool2D(3, 2, 1), nn.Conv2D(4, 3, padding=1), nn.BatchNorm(),
            nn.Activation('relu'), nn.Conv2D(8, 1, strides=2), nn.AvgPool2D(2),
            nn.GlobalAvgPool2D(), nn.Dense(3))
    return net


@pytest.mark.parametrize('engine_type', ['NaiveEngine', 'ThreadedEngine'])
def test_compiled_graphs_run_channels_last(engine_type):
    """A conv net, imperative and hybridized, convolves channels-last activations (row-major
    ones for its convolution of 4 output channels), runs its strided 1x1 convolution (of 4
    input channels: the case oneDNN's AVX2 kernel gets wrong) as a stride-1 one, gives
    row-major outputs and gradients (channels-last ones for the weights of its 3x3
    convolutions of 8 or more channels, which it stores so), and both steps agree."""
    x, label = nd.random.uniform(shape=(4, 3, 14, 14)), nd.array([0, 1, 2, 1])
    results = []
    for hybridize in (False, True):
        mx.random.seed(3)
        net = _cl_net()
        net.initialize(mx.init.Xavier())
        net.hybridize(hybridize)
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
        with mx.engine.engine_scope(engine_type):
            spy = _ConvSpy()
            with spy:
                for _ in range(2):
                    with autograd.record():
                        out = net(x)
                        loss = gluon.loss.SoftmaxCrossEntropyLoss()(out, label)
                    loss.backward()
                    trainer.step(4)
                nd.waitall()
        params = [p for p in net.collect_params().values()]
        assert is_dense(_stored(out))
        for p in params:
            cl = p.shape[2:] == (3, 3) and p.shape[0] >= 8
            layout = is_channels_last if cl else is_dense
            assert layout(_stored(p.data())), p.name
            assert p.grad_req == 'null' or layout(_stored(p.grad())), p.name
        assert all(ok for _, ok in spy.strides), spy.strides
        if engine_type == 'NaiveEngine':      # the kernels ran in this thread: the spy saw them
            convs = spy.convs[:3]
            assert [c[0] for c in spy.convs] == [True, False, True] * 2, spy.convs
            assert convs[2][1:] == ((1, 1), (1, 1)), convs              # 1x1, stride 1
        results.append([out.asnumpy()] + [p.data().asnumpy() for p in params])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


class _FirstArgSpy(TorchDispatchMode):
    """Records whether the first argument of each call of the torch operator ``name`` (a batch
    normalisation's input, the gradient a relu's backward pass receives) is channels-last."""

    def __init__(self, name):
        super().__init__()
        self.prefix = name + '.'
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.__name__.startswith(self.prefix):
            self.seen.append(is_channels_last(args[0]))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize('hybridize', [False, True])
def test_strided_1x1_convolutions_of_many_channels_run_as_they_are(hybridize):
    """A strided 1x1 convolution of 16 channels (ResNet's downsampling shortcut) runs with its
    stride, so its input's gradient comes back channels-last like every other: subsampling it
    first (as for fewer channels) gave the relu before it a row-major gradient of a
    channels-last result, a slow mixed-layout kernel. Its results match the subsampled form."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, 3, padding=1, use_bias=False), nn.Activation('relu'),
            nn.Conv2D(8, 1, strides=2, use_bias=False))
    net.initialize(mx.init.Xavier())
    net.hybridize(hybridize)
    x = nd.random.uniform(shape=(2, 3, 10, 10))
    head = nd.random.uniform(shape=(2, 8, 5, 5))
    with mx.engine.engine_scope('NaiveEngine'):
        convs, relus = _ConvSpy(), _FirstArgSpy('threshold_backward')
        with convs, relus:
            with autograd.record():
                loss = (net(x) * head).sum()
            loss.backward()
            nd.waitall()
    assert convs.convs[1][1:] == ((1, 1), (2, 2)), convs.convs     # 1x1 with its stride
    assert relus.seen == [True], relus.seen
    w1, w2 = (torch.tensor(p.data().asnumpy(), requires_grad=True)
              for p in (net[0].weight, net[2].weight))
    h = torch.relu(torch.nn.functional.conv2d(torch.tensor(x.asnumpy()), w1, padding=1))
    ref = (torch.nn.functional.conv2d(h[:, :, ::2, ::2], w2) * torch.tensor(head.asnumpy())).sum()
    ref.backward()
    np.testing.assert_allclose(loss.asscalar(), ref.item(), rtol=1e-5)
    for p, w in ((net[0].weight, w1), (net[2].weight, w2)):
        np.testing.assert_allclose(p.grad().asnumpy(), w.grad.numpy(), rtol=1e-4, atol=1e-5)


class _WeightCopySpy(TorchDispatchMode):
    """Counts copies of tensors shaped like ``shape`` (a convolution's weight)."""

    def __init__(self, shape):
        super().__init__()
        self.shape, self.copies = shape, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.__name__.split('.')[0] in ('clone', 'copy_', '_to_copy', 'contiguous') and \
                tuple(args[0].shape) == self.shape:
            self.copies += 1
        return func(*args, **(kwargs or {}))


def _conv_reference(x, w, b):
    return torch.nn.functional.conv2d(torch.tensor(x.asnumpy()), torch.tensor(w.asnumpy()),
                                      torch.tensor(b.asnumpy()), padding=1).numpy()


@pytest.mark.parametrize('hybridize', [False, True])
def test_inference_keeps_channels_last_weights_until_they_change(hybridize):
    """In inference a Parameter's channels-last copy of its weight is made once and kept: a
    second call copies no weight. Every way of changing the weight (a Trainer step, set_data,
    writing into its array, an in-place operator) is seen by the next call. A Trainer step
    lays the weight out channels-last for good: no copy at all from then on."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, in_channels=4), nn.Activation('relu'))
    net.initialize(mx.init.Xavier())
    net.hybridize(hybridize)
    conv = net[0]
    x = nd.random.uniform(shape=(2, 4, 9, 9))
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})

    def check(copies=1):
        expected = np.maximum(_conv_reference(x, conv.weight.data(), conv.bias.data()), 0)
        with mx.engine.engine_scope('NaiveEngine'):
            spy = _WeightCopySpy((8, 4, 3, 3))
            with spy:
                first = net(x)
                nd.waitall()
            made = spy.copies
            spy = _WeightCopySpy((8, 4, 3, 3))
            with spy:
                second = net(x)
                nd.waitall()
        assert made == copies and spy.copies == 0, (made, spy.copies)
        assert is_channels_last(_stored(conv.weight.data())) == (copies == 0)
        for out in (first, second):
            np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5, atol=1e-6)

    check()
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(1)
    check(0)
    conv.weight.set_data(nd.random.uniform(shape=(8, 4, 3, 3)))
    check(0)
    conv.weight.data()[:] = nd.random.uniform(shape=(8, 4, 3, 3))
    check(0)
    w = conv.weight.data()
    w *= -1
    check(0)


def test_one_channel_input_gives_channels_last_activations():
    """A compiled graph whose first convolution reads one-channel images (row-major and
    channels-last at once) hands channels-last activations on from it, as from any other
    convolution, keeps its channels-last result, and matches the imperative result."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'),
            nn.Conv2D(12, 3), nn.BatchNorm())
    net.initialize(mx.init.Xavier())
    x = nd.random.uniform(shape=(2, 1, 10, 10))
    with autograd.train_mode():
        expected = net(x).asnumpy()
    net.hybridize()
    with mx.engine.engine_scope('NaiveEngine'):
        spy = _FirstArgSpy('native_batch_norm')
        with spy, autograd.train_mode():
            out = net(x)
            nd.waitall()
    assert spy.seen == [True, True]
    assert is_channels_last(_stored(out))       # the graph's result is kept as computed
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-4, atol=1e-5)


def test_weight_heavy_convolutions_stay_row_major():
    """In training, a convolution whose weight outweighs its data four times (a deep stage on a few
    pixels) runs row-major in a compiled graph: the weight's channels-last copies would cost
    more than they save; the light one before it runs channels-last. In inference, where the
    copy is kept with the weight, both run channels-last."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, 1), nn.Conv2D(128, 3))   # weights of 256 and 18,432 elements
    net.initialize()
    net.hybridize()
    x = nd.random.uniform(shape=(2, 16, 8, 8))     # 2,048 elements
    for training, layouts in ((True, [True, False]), (False, [True, True])):
        with mx.engine.engine_scope('NaiveEngine'):
            spy = _ConvSpy()
            with spy, (autograd.record() if training else contextlib.nullcontext()):
                out = net(x)
                nd.waitall()
        assert [c[0] for c in spy.convs] == layouts, (training, spy.convs)
        assert is_channels_last(_stored(out)) == layouts[-1]     # kept as computed


@pytest.mark.parametrize('hybridize', [False, True])
def test_channels_last_can_be_switched_off(hybridize, monkeypatch):
    net = _cl_net()
    net.initialize()
    net.hybridize(hybridize)
    x = nd.random.uniform(shape=(2, 3, 8, 8))
    for setting, expected in (('1', True), ('0', False)):
        monkeypatch.setenv('NEOMX_CHANNELS_LAST', setting)
        net.hybridize(hybridize)            # a new graph for the new setting
        with mx.engine.engine_scope('NaiveEngine'):
            spy = _ConvSpy()
            with spy:
                net(x)
                nd.waitall()
        # (the convolution of 4 output channels runs row-major either way)
        assert [c[0] for c in spy.convs] == [expected, False, expected], (setting, spy.convs)


def test_channels_last_storage_goes_row_major_when_needed():
    """An imperative convolution's channels-last result reads, reshapes, slices, takes writes,
    saves and differentiates as the row-major array it stands for."""
    x = nd.random.uniform(shape=(2, 3, 6, 6))
    w = nd.random.uniform(shape=(8, 3, 3, 3))
    ref = torch.nn.functional.conv2d(torch.from_numpy(x.asnumpy()),
                                     torch.from_numpy(w.asnumpy()), padding=1).numpy()

    def conv():
        return nd.Convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)

    y = conv()
    y.wait_to_read()
    assert is_channels_last(y._var.tensor)           # kept as the kernel gave it
    np.testing.assert_allclose(y.reshape((2, -1)).asnumpy(), ref.reshape(2, -1), rtol=1e-5)
    assert is_dense(y._var.tensor)                   # the view made the storage row-major
    y = conv()
    np.testing.assert_allclose(y[1].asnumpy(), ref[1], rtol=1e-5)
    np.testing.assert_allclose(y[:, 2:4].asnumpy(), ref[:, 2:4], rtol=1e-5)
    y = conv()
    y[0, 1] = 7.0                                    # a write into channels-last storage
    y += 1
    expected = ref.copy()
    expected[0, 1] = 7.0
    np.testing.assert_allclose(y.asnumpy(), expected + 1, rtol=1e-5)
    y = conv()
    assert is_dense(y._data()) and is_dense(_stored(y))   # reading laid the storage out
    y = conv()
    y.attach_grad()
    with autograd.record():
        z = (y * y).sum()
    z.backward()
    np.testing.assert_allclose(y.grad.asnumpy(), 2 * ref, rtol=1e-5)
    y = conv()
    flat = nd.Flatten(y)
    np.testing.assert_allclose(flat.asnumpy(), ref.reshape(2, -1), rtol=1e-5)
    x.attach_grad()
    with autograd.record():
        y = conv()
        loss = (nd.relu(y) * nd.arange(8).reshape((1, 8, 1, 1))).sum()
    loss.backward()
    tx = torch.from_numpy(x.asnumpy()).requires_grad_()
    tl = (torch.nn.functional.conv2d(tx, torch.from_numpy(w.asnumpy()), padding=1).relu()
          * torch.arange(8.).reshape(1, 8, 1, 1)).sum()
    tl.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('name', ['Convolution', 'Deconvolution'])
def test_conv_kernels_take_any_strides(name, monkeypatch):
    """With channels-last switched off, the kernels themselves make odd strides row-major
    (hybridized graphs hand them tensors that never were arrays)."""
    monkeypatch.setenv('NEOMX_CHANNELS_LAST', '0')
    op = registry.get(name)
    data = _channels_last_batch(4, 6).expand(4, 2, 6, 6).contiguous(
        memory_format=torch.channels_last)
    weight = torch.rand(2, 2, 1, 1).contiguous(memory_format=torch.channels_last)
    attrs = op.parse_attrs({'kernel': (1, 1), 'stride': (2, 2), 'num_filter': 2,
                            'no_bias': True})
    spy = _LayoutSpy()
    with spy:
        got = op.kernel(data, weight, None, **attrs)
    assert spy.calls == 1 and not spy.bad, spy.bad
    ref = op.kernel(data.contiguous(), weight.contiguous(), None, **attrs)
    assert torch.equal(got, ref)


@pytest.mark.parametrize('name, extra, attrs', [
    ('_contrib_AdaptiveAvgPooling2D', (), {'output_size': (3, 3)}),
    ('_contrib_BilinearResize2D', (), {'height': 5, 'width': 5}),
    ('BilinearSampler', (torch.rand(2, 2, 5, 5) * 2 - 1,), {}),
    ('im2col', (), {'kernel': (3, 3)}),
    ('Correlation', (torch.rand(2, 3, 8, 8),), {'kernel_size': 3, 'max_displacement': 2}),
])
def test_resampling_kernels_take_any_strides(name, extra, attrs):
    """Pooling, resampling and patch kernels outside ops.nn hand torch row-major tensors too."""
    op = registry.get(name)
    data = torch.rand(2, 3, 8, 8).contiguous(memory_format=torch.channels_last)
    extra = tuple(t.contiguous(memory_format=torch.channels_last) for t in extra)
    attrs = op.parse_attrs(attrs)
    spy = _LayoutSpy()
    with spy:
        got = op.kernel(data, *extra, **attrs)
    assert spy.calls >= 1 and not spy.bad, spy.bad
    ref = op.kernel(data.contiguous(), *[t.contiguous() for t in extra], **attrs)
    assert is_dense(got) and torch.equal(got, ref)


def test_channels_last_layout_attribute():
    """``layout='NHWC'`` is computed channels-first and given back row-major."""
    x = np.random.rand(2, 5, 5, 3).astype('float32')
    w = np.random.rand(4, 1, 1, 3).astype('float32')
    spy = _LayoutSpy()
    with mx.engine.engine_scope('NaiveEngine'), spy:
        y = nd.Convolution(nd.array(x), nd.array(w), kernel=(1, 1), stride=(2, 2), num_filter=4,
                           no_bias=True, layout='NHWC')
        p = nd.Pooling(nd.array(x), kernel=(2, 2), stride=(2, 2), layout='NHWC')
        b = nd.BatchNorm(nd.array(x), nd.ones(3), nd.zeros(3), nd.zeros(3), nd.ones(3), axis=3)
        nd.waitall()
    assert not spy.bad, spy.bad
    for a in (y, p, b):
        assert is_dense(_stored(a))
    ref = np.einsum('nhwc,fc->nhwf', x[:, ::2, ::2], w[:, 0, 0])
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-5)


# In a fresh process with oneDNN held to its AVX2 kernels (those of a CPU without AVX-512;
# on this one too), a 1x1 convolution with stride 2 on channels-last input computes a wrong
# weight gradient every time (relative error about 0.2) and corrupts memory in a longer run.
_AVX2_CHECK = r'''
import numpy as np, torch
import neomx as mx
from neomx import autograd, nd
from neomx.gluon.data.vision import transforms

rs = np.random.RandomState(0)
images = rs.randint(0, 256, (8, 14, 14, 1)).astype('uint8')
w1 = rs.randn(4, 1, 3, 3).astype('float32')
w2 = rs.randn(8, 4, 1, 1).astype('float32')
head = rs.randn(8, 8, 7, 7).astype('float32')
x = transforms.ToTensor()(nd.array(images, dtype='uint8'))
a1, a2 = nd.array(w1), nd.array(w2)
for a in (a1, a2):
    a.attach_grad()
with autograd.record():
    h = nd.Convolution(x, a1, kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True)
    y = nd.Convolution(h, a2, kernel=(1, 1), stride=(2, 2), num_filter=8, no_bias=True)
    loss = (y * nd.array(head)).sum()
loss.backward()
t = torch.tensor(images, dtype=torch.float64).permute(0, 3, 1, 2).contiguous() / 255
r1 = torch.tensor(w1, dtype=torch.float64, requires_grad=True)
r2 = torch.tensor(w2, dtype=torch.float64, requires_grad=True)
ry = torch.nn.functional.conv2d(torch.nn.functional.conv2d(t, r1, padding=1), r2, stride=2)
(ry * torch.tensor(head, dtype=torch.float64)).sum().backward()
for got, ref in ((y.asnumpy(), ry.detach().numpy()), (a1.grad.asnumpy(), r1.grad.numpy()),
                 (a2.grad.asnumpy(), r2.grad.numpy())):
    print('%.3g' % (np.abs(got - ref).max() / np.abs(ref).max()))

# the same two convolutions hybridized (channels-last inside the graph), several steps: the
# strided 1x1 convolution of 4 channels-last channels is oneDNN's wrong case, and it hangs
# after a few calls when it is run as such
from neomx.gluon import nn
net = nn.HybridSequential()
net.add(nn.Conv2D(4, 3, padding=1, use_bias=False), nn.Conv2D(8, 1, strides=2, use_bias=False))
net.initialize()
net[0].weight.set_data(nd.array(w1))
net[1].weight.set_data(nd.array(w2))
net.hybridize()
for _ in range(6):
    with autograd.record():
        loss = (net(x) * nd.array(head)).sum()
    loss.backward()
for got, ref in ((net[0].weight.grad().asnumpy(), r1.grad.numpy()),
                 (net[1].weight.grad().asnumpy(), r2.grad.numpy())):
    print('%.3g' % (np.abs(got - ref).max() / np.abs(ref).max()))
'''


def test_convolution_gradients_on_avx2_kernels():
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA='AVX2', PYTHONFAULTHANDLER='1')
    r = subprocess.run([sys.executable, '-c', _AVX2_CHECK], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    errors = [float(v) for v in r.stdout.split()]
    assert len(errors) == 5 and max(errors) < 1e-5, errors


def test_to_tensor_of_float_images_and_normalize_constants():
    # float input keeps its values (no in-place division of the caller's array), and the
    # per-channel constants Normalize keeps from call to call follow mean, std and dtype
    x = nd.array(np.random.rand(6, 5, 1) * 255)
    before = x.asnumpy().copy()
    y = transforms.ToTensor()(x)
    assert (x.asnumpy() == before).all() and is_dense(_stored(y))
    np.testing.assert_allclose(y.asnumpy(), np.moveaxis(before, -1, 0) / 255, rtol=1e-6)
    img = np.random.rand(3, 4, 4)
    for mean, std, dtype in [((0.5, 0.25, 0.0), (2.0, 1.0, 4.0), 'float32'),
                             ((0.1, 0.2, 0.3), (0.5, 0.5, 0.5), 'float32'),
                             ((0.1, 0.2, 0.3), (0.5, 0.5, 0.5), 'float64')]:
        out = transforms.Normalize(mean, std)(nd.array(img, dtype=dtype))
        assert out.dtype == np.dtype(dtype)
        np.testing.assert_allclose(out.asnumpy(), (img - np.reshape(mean, (3, 1, 1))) /
                                   np.reshape(std, (3, 1, 1)), rtol=1e-5, atol=1e-6)


def test_imperative_and_hybridized_gradients_agree_closely():
    """Imperative code runs channels-last as compiled graphs do, so the two sum in the same
    order: a 1x1 convolution and batch normalisation give the same input gradient to float32
    rounding (rtol 1e-5), as MXNet's slice/BatchNorm tests require."""
    mx.random.seed(5)
    x = nd.random.normal(shape=(4, 128, 8, 8))
    grads = []
    for hybridize in (False, True):
        mx.random.seed(7)
        net = nn.HybridSequential()
        net.add(nn.Conv2D(128, 1), nn.BatchNorm())
        net.initialize(mx.init.Xavier())
        net.hybridize(hybridize)
        xi = x.copy()
        xi.attach_grad()
        with autograd.record():
            y = net(xi)
        y.backward(nd.ones_like(y) * nd.arange(128).reshape((1, 128, 1, 1)))
        grads.append(xi.grad.asnumpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)


class _ConvWeightSpy(TorchDispatchMode):
    """Records the weights torch's convolutions get."""

    def __init__(self):
        super().__init__()
        self.weights = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.__name__.startswith('convolution.'):
            self.weights.append(args[1])
        return func(*args, **(kwargs or {}))


def _two_convs():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, in_channels=4), nn.Activation('relu'),
            nn.Conv2D(6, 3, in_channels=8), nn.GlobalAvgPool2D(), nn.Dense(3, in_units=6))
    net.initialize(mx.init.Xavier())
    return net


def _torch_twin(net):
    """The same network in torch, with ``net``'s weights."""
    t = torch.nn.Sequential(torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.ReLU(),
                            torch.nn.Conv2d(8, 6, 3), torch.nn.AdaptiveAvgPool2d(1),
                            torch.nn.Flatten(), torch.nn.Linear(6, 3))
    ours = [net[0].weight, net[0].bias, net[2].weight, net[2].bias, net[4].weight, net[4].bias]
    with torch.no_grad():
        for p, q in zip(t.parameters(), ours):
            p.copy_(torch.tensor(q.data().asnumpy()))
    return t


@pytest.mark.parametrize('hybridize', [False, True])
def test_trained_convolution_weights_are_stored_channels_last(hybridize):
    """A convolution weight that channels-last convolutions read is laid out channels-last at
    its first update, with its gradient and momentum, and stays autograd's leaf: later steps
    hand oneDNN the stored weight itself (no copy). Training gives torch's weights."""
    net = _two_convs()
    net.hybridize(hybridize)
    twin = _torch_twin(net)
    x = nd.random.uniform(shape=(2, 4, 9, 9))
    y = nd.array([0, 2])
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1, 'momentum': 0.9})
    opt = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    xt, yt = torch.tensor(x.asnumpy()), torch.tensor([0, 2])
    conv = net[0]
    leaves = []
    for step in range(3):
        with mx.engine.engine_scope('NaiveEngine'):
            spy = _ConvWeightSpy()
            with spy, autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(2)
            nd.waitall()
        stored = _stored(conv.weight.data())
        leaves.append(stored)
        assert stored.is_leaf and stored.requires_grad
        assert is_channels_last(stored)
        if step:    # (the first gradient came back to a row-major weight)
            assert is_channels_last(_stored(conv.weight.grad()))
            # the stored weight itself, the same leaf from step to step
            assert spy.weights[0].data_ptr() == stored.data_ptr(), step
            assert leaves[-1] is leaves[-2]
        opt.zero_grad()
        torch.nn.functional.cross_entropy(twin(xt), yt).backward()     # step(2): the mean
        opt.step()
    momentum = trainer._updaters[0].states[trainer._param2idx[conv.weight.name]]
    assert is_channels_last(_stored(momentum[0] if isinstance(momentum, tuple) else momentum))
    ours = [net[0].weight, net[2].weight, net[4].weight]
    for p, q in zip([twin[0].weight, twin[2].weight, twin[5].weight], ours):
        np.testing.assert_allclose(q.data().asnumpy(), p.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_channels_last_weights_read_and_write_as_row_major_arrays(tmp_path):
    """A weight stored channels-last reads (asnumpy, a reshaped view, DLPack, a file) as the
    row-major array it stands for, without moving; a write through a view of it lands; and
    reading it between the forward and backward passes leaves its gradient whole."""
    net = _two_convs()
    x = nd.random.uniform(shape=(2, 4, 9, 9))
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})

    def step():
        with autograd.record():
            loss = net(x).sum()
        loss.backward()
        trainer.step(1)

    step()
    w = net[0].weight.data()
    leaf = _stored(w)
    assert is_channels_last(leaf)
    expected = leaf.detach().contiguous().numpy().copy()
    np.testing.assert_array_equal(w.asnumpy(), expected)
    np.testing.assert_array_equal(w.reshape((8, -1)).asnumpy(), expected.reshape(8, -1))
    np.testing.assert_array_equal(w[1].asnumpy(), expected[1])
    np.testing.assert_array_equal(torch.utils.dlpack.from_dlpack(w.to_dlpack_for_read()), expected)
    assert _stored(w) is leaf and is_channels_last(leaf)      # read through copies
    net.save_parameters(str(tmp_path / 'net.params'))
    other = _two_convs()
    other.load_parameters(str(tmp_path / 'net.params'))
    np.testing.assert_array_equal(other[0].weight.data().asnumpy(), expected)

    w[1][:] = 0                   # a write through a view
    w.reshape((-1,))[:5] = 7
    expected[1] = 0
    expected.reshape(-1)[:5] = 7
    np.testing.assert_array_equal(w.asnumpy(), expected)
    assert _stored(w) is leaf     # the same leaf, row-major now
    step()                        # and channels-last again after the next update
    assert _stored(w) is leaf and is_channels_last(leaf)

    grads = []
    for read in (False, True):
        with autograd.record():
            loss = net(x).sum()
        if read:
            net[0].weight.data().asnumpy()
        loss.backward()
        grads.append(net[0].weight.grad().asnumpy())
    assert np.abs(grads[0]).max() > 0
    np.testing.assert_array_equal(grads[1], grads[0])


def test_convolutions_of_few_output_channels_stay_row_major():
    """A convolution of fewer than 8 output channels (the book's LeNet: 6) runs row-major and
    hands row-major activations on, in training too; one of 8 runs channels-last. Both agree
    with torch's convolution."""
    x = nd.random.uniform(shape=(2, 3, 10, 10))
    xt = torch.from_numpy(x.asnumpy())
    for channels, channels_last in ((6, False), (8, True)):
        w = nd.random.uniform(shape=(channels, 3, 5, 5))
        w.attach_grad()
        with mx.engine.engine_scope('NaiveEngine'):
            spy = _ConvSpy()
            with spy, autograd.record():
                y = nd.Convolution(x, w, kernel=(5, 5), num_filter=channels, no_bias=True)
                nd.waitall()
        assert [c[0] for c in spy.convs] == [channels_last], (channels, spy.convs)
        assert (is_channels_last if channels_last else is_dense)(_stored(y)), channels
        y.backward()
        wt = torch.from_numpy(w.asnumpy()).requires_grad_()
        ref = torch.nn.functional.conv2d(xt, wt)
        ref.sum().backward()
        np.testing.assert_allclose(y.asnumpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(w.grad.asnumpy(), wt.grad.numpy(), rtol=1e-4, atol=1e-3)
