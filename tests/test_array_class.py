"""Arrays that neomx makes for its caller out of files, NumPy data or numbers have the caller's
class: ``mx.np.ndarray`` under NumPy semantics (``npx.set_np()``), else ``NDArray``, as in MXNet
1.9.1 (datasets, ``image``, initializers, DataLoader batches in and out of worker processes,
RNN begin states, custom operators), and ``ndarray.array_class()`` is the one question they ask."""
import contextlib
import gzip
import io
import struct

import numpy as onp
import pytest

import neomx as mx
from neomx import autograd, gluon, init, np, npx
from neomx.gluon.data import DataLoader, SimpleDataset, vision
from neomx.gluon.data.vision import transforms
from neomx.ndarray.ndarray import NDArray, array_class, in_array_class, new_array


@pytest.fixture
def np_mode():
    npx.set_np()
    yield
    npx.reset_np()


def kind(x):
    """'np', 'nd' or the type's name, through lists and tuples."""
    if isinstance(x, (list, tuple)):
        return [kind(v) for v in x]
    if isinstance(x, np.ndarray):
        return 'np'
    if isinstance(x, NDArray):
        return 'nd'
    return type(x).__name__


def _write_idx(path, array):
    with gzip.open(path, 'wb') as f:
        f.write(struct.pack('>HBB', 0, 8, array.ndim) +
                struct.pack('>%dI' % array.ndim, *array.shape) + array.astype(onp.uint8).tobytes())


def _fashion_mnist_files(folder, n=10):
    rng = onp.random.RandomState(0)
    for part in ('train', 't10k'):
        _write_idx(str(folder / ('%s-images-idx3-ubyte.gz' % part)), rng.randint(0, 256, (n, 28, 28)))
        _write_idx(str(folder / ('%s-labels-idx1-ubyte.gz' % part)), onp.arange(n) % 10)


def _cifar10_files(folder, n=4):
    rng = onp.random.RandomState(1)
    for name in ['data_batch_%d.bin' % i for i in range(1, 6)] + ['test_batch.bin']:
        rows = onp.concatenate([rng.randint(0, 10, (n, 1)), rng.randint(0, 256, (n, 3072))], 1)
        rows.astype(onp.uint8).tofile(str(folder / name))


@pytest.fixture
def no_download(monkeypatch):
    monkeypatch.setenv('MXNET_GLUON_REPO', 'http://127.0.0.1:9/')


def test_the_one_question():
    assert array_class() is NDArray
    assert kind(new_array(onp.arange(3))) == 'nd' and new_array(onp.arange(3)).dtype == onp.float32
    with mx.util.np_array(True):
        assert array_class() is np.ndarray
        a = new_array(onp.arange(3))
        assert kind(a) == 'np' and a.dtype == onp.int64      # mx.np.array keeps NumPy's dtype
        legacy = mx.nd.ones((2,))
        got = in_array_class({'a': [legacy, (legacy, 3)]})
        assert kind(got['a']) == ['np', ['np', 'int']]
        assert got['a'][0]._var is legacy._var               # the same storage
        assert kind(mx.nd.zeros((2,))) == 'nd'               # nd.* by name stays legacy
    sparse = mx.nd.zeros((2, 2), stype='csr')
    assert in_array_class(sparse, np.ndarray) is sparse


def test_vision_datasets(tmp_path, no_download, np_mode):
    _fashion_mnist_files(tmp_path)
    _cifar10_files(tmp_path)
    for ds in (vision.FashionMNIST(root=str(tmp_path)), vision.MNIST(root=str(tmp_path), train=False),
               vision.CIFAR10(root=str(tmp_path))):
        x, y = ds[1]
        assert kind((x, y)) == ['np', 'np'] and y.shape == () and y.dtype == onp.int32
        assert x.dtype == onp.uint8
    npx.reset_np()
    x, y = vision.FashionMNIST(root=str(tmp_path))[1]
    assert kind(x) == 'nd' and isinstance(y, onp.int32)


def test_dataloader_batches(tmp_path, no_download, np_mode):
    _fashion_mnist_files(tmp_path, n=8)
    ds = vision.FashionMNIST(root=str(tmp_path)).transform_first(transforms.ToTensor())
    want = None
    for kw in ({'num_workers': 0}, {'num_workers': 2}, {'num_workers': 2, 'thread_pool': True}):
        batches = list(DataLoader(ds, batch_size=4, **kw))
        assert [kind(b) for b in batches] == [['np', 'np']] * 2, kw
        x, y = batches[1]
        assert x.shape == (4, 1, 28, 28) and y.shape == (4,) and y.dtype == onp.int32
        values = [b[0].asnumpy() for b in batches]
        if want is None:
            want = values
        onp.testing.assert_array_equal(values, want)
    # the default batchify of NumPy data, numbers and tuples of them
    for kw in ({'num_workers': 0}, {'num_workers': 2}):
        b = next(iter(DataLoader([1.5, 2.5, 3.5], batch_size=2, **kw)))
        assert kind(b) == 'np' and b.dtype == onp.float64
        b = next(iter(DataLoader(SimpleDataset([(onp.ones(2), 1), (onp.zeros(2), 2)]),
                                 batch_size=2, **kw)))
        assert kind(b) == ['np', 'np'] and b[1].dtype == onp.int64
        b = next(iter(DataLoader(SimpleDataset([mx.nd.ones(2), mx.nd.ones(2)]), batch_size=2, **kw)))
        assert kind(b) == 'np'


def test_dataloader_workers_keep_the_creators_semantics(tmp_path, no_download):
    # The workers make batches in the semantics in force where the loader was created: a
    # worker thread or process does not inherit this thread's state by itself.
    with mx.util.np_array(True), mx.util.np_shape(True):
        loaders = [DataLoader([1, 2, 3, 4], batch_size=2, num_workers=2, thread_pool=t)
                   for t in (False, True)]
    for loader in loaders:
        assert [kind(b) for b in loader] == ['np', 'np']
    legacy = DataLoader([1, 2, 3, 4], batch_size=2, num_workers=2)
    with mx.util.np_array(True), mx.util.np_shape(True):
        assert [kind(b) for b in legacy] == ['nd', 'nd']


def test_image_functions(tmp_path, np_mode):
    pytest.importorskip('PIL')
    from PIL import Image
    pixels = onp.random.RandomState(0).randint(0, 256, (6, 5, 3)).astype(onp.uint8)
    Image.fromarray(pixels).save(str(tmp_path / 'a.png'))
    img = mx.image.imread(str(tmp_path / 'a.png'))
    assert kind(img) == 'np' and img.dtype == onp.uint8
    onp.testing.assert_array_equal(img.asnumpy(), pixels)
    assert kind(mx.image.imdecode(open(str(tmp_path / 'a.png'), 'rb').read())) == 'np'
    assert kind(mx.image.imresize(img, 3, 4)) == 'np'
    assert kind(mx.image.center_crop(img, (2, 2))[0]) == 'np'
    assert kind(mx.image.imrotate(img.astype('float32'), 10.0)) == 'np'
    augs = mx.image.CreateAugmenter((3, 4, 4), mean=True, std=True)
    out = img.astype('float32')
    for aug in augs:
        out = aug(out)
    assert kind(out) == 'np'
    # the transpose the book applies to an image: NumPy's, with the axes as arguments
    assert img.transpose(2, 0, 1).shape == (3, 6, 5)


def test_initializer_and_parameters(np_mode):
    seen = []

    class Ones(init.Initializer):
        def _init_weight(self, name, arr):
            seen.append(kind(arr))
            arr[:] = 1

    net = gluon.nn.Dense(2)
    net.initialize(Ones())
    net(np.ones((1, 3)))                    # deferred initialisation
    dense = gluon.nn.Dense(2, in_units=3)
    dense.initialize(Ones())
    assert seen == ['np', 'np']
    assert kind([net.weight.data(), net.weight.grad(), dense.weight.data()]) == ['np'] * 3
    c = gluon.Constant('c', onp.arange(3.0))
    c.initialize()
    assert kind(c.data()) == 'np' and c.data().dtype == onp.float64
    xs = gluon.utils.split_and_load(onp.ones((4, 2)), [mx.cpu(0), mx.cpu(1)])
    assert kind(xs) == ['np', 'np'] and xs[0].dtype == onp.float64


def test_rnn_begin_states(np_mode):
    layer = gluon.rnn.LSTM(4)
    layer.initialize()
    states = layer.begin_state(batch_size=2)
    assert kind(states) == ['np', 'np'] and states[0].shape == (1, 2, 4)
    out, new = layer(np.ones((3, 2, 5)), states)
    assert kind([out, new]) == ['np', ['np', 'np']]
    cell = gluon.rnn.GRUCell(4)
    cell.initialize()
    assert kind(cell.begin_state(batch_size=2)) == ['np']
    outs, _ = cell.unroll(3, np.ones((2, 3, 5)), merge_outputs=True)
    assert kind(outs) == 'np' and outs.shape == (2, 3, 4)


def test_custom_operator_arrays(np_mode):
    seen = []

    class Square(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            seen.append(kind(in_data + out_data))
            self.assign(out_data[0], req[0], in_data[0] * in_data[0])

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            seen.append(kind(out_grad + in_grad))
            self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])

    @mx.operator.register('array_class_square')
    class SquareProp(mx.operator.CustomOpProp):
        def list_arguments(self):
            return ['data']

        def list_outputs(self):
            return ['output']

        def infer_shape(self, in_shape):
            return in_shape, [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return Square()

    x = np.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x.as_nd_ndarray(), op_type='array_class_square')
    y.backward()
    assert x.grad.asnumpy().tolist() == [2, 4]
    assert seen == [['np', 'np'], ['np', 'np']]


def test_gradients_and_functions_keep_the_variables_class(engine):
    class Double(autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            seen.append(kind(dy))
            return dy * 2

    seen = []
    x = np.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = Double()(x)
        z = (x * 3).sum()
    assert kind(y) == 'np'
    assert kind(autograd.grad(z, [x])) == ['np']
    y.backward()
    assert x.grad.asnumpy().tolist() == [2, 2] and seen == ['np']
    legacy = mx.nd.array([1.0])
    legacy.attach_grad()
    with autograd.record():
        w = legacy * 3
    assert kind(autograd.grad(w, [legacy])) == ['nd']


_MXNET_CLASSES = '''
import numpy as onp
import mxnet as mx
import mxnet.gluon.utils as u
import mxnet.gluon.data.vision.datasets as d
u.check_sha1 = d.check_sha1 = lambda *a, **k: True     # the files are fixtures
from mxnet import np, npx, gluon, init
from mxnet.gluon.data.vision import FashionMNIST, CIFAR10, transforms
root = %r
def kind(x):
    if isinstance(x, (list, tuple)):
        return [kind(v) for v in x]
    if isinstance(x, mx.np.ndarray):
        return 'np'
    if isinstance(x, mx.nd.NDArray):
        return 'nd'
    return type(x).__name__
for semantics in ('legacy', 'numpy'):
    if semantics == 'numpy':
        npx.set_np()
    ds = FashionMNIST(root=root)
    print(kind(ds[0]), kind(CIFAR10(root=root)[0]))
    print(kind(next(iter(gluon.data.DataLoader(ds.transform_first(transforms.ToTensor()),
                                               batch_size=2)))))
    print(kind(next(iter(gluon.data.DataLoader([1.0, 2.0], batch_size=2)))))
    print(kind(mx.image.imdecode(open(root + '/a.png', 'rb').read())))
    seen = []
    class Record(init.Initializer):
        def _init_weight(self, name, arr):
            seen.append(kind(arr))
            arr[:] = 1
    net = gluon.nn.Dense(2)
    net.initialize(Record())
    net(np.ones((1, 3)) if semantics == 'numpy' else mx.nd.ones((1, 3)))
    print(seen, kind(gluon.rnn.RNN(3).begin_state(batch_size=2)))
'''


def test_classes_match_mxnet(tmp_path, no_download, mxnet_ref):
    pytest.importorskip('PIL')
    from PIL import Image
    _fashion_mnist_files(tmp_path)
    _cifar10_files(tmp_path)
    Image.fromarray(onp.zeros((4, 4, 3), onp.uint8)).save(str(tmp_path / 'a.png'))
    want = mxnet_ref(_MXNET_CLASSES % str(tmp_path))
    ours = (_MXNET_CLASSES.replace('import mxnet.gluon.utils as u\n', '')
            .replace('import mxnet.gluon.data.vision.datasets as d\n', '')
            .replace('u.check_sha1 = d.check_sha1', '_').replace('mxnet', 'neomx'))
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(ours % str(tmp_path), {})
    finally:
        npx.reset_np()
    assert out.getvalue() == want
    assert "'np'" in want and "'nd'" in want
