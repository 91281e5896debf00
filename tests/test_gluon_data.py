"""gluon.data: samplers, datasets, the DataLoader (in-process, worker processes, threads),
the vision datasets read from files in their standard formats, and the image operators."""
import gzip
import os
import pickle
import struct
import textwrap

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx.base import MXNetError
from neomx.gluon import data as gdata
from neomx.gluon.data import vision


# -- samplers -------------------------------------------------------------------------------

def test_sequential_and_random_sampler():
    assert list(gdata.SequentialSampler(4, start=3)) == [3, 4, 5, 6]
    assert len(gdata.SequentialSampler(4)) == 4
    np.random.seed(0)
    a = list(gdata.RandomSampler(50))
    np.random.seed(0)
    b = list(gdata.RandomSampler(50))
    assert a == b and sorted(a) == list(range(50)) and a != list(range(50))


@pytest.mark.parametrize('last_batch,expected,length', [
    ('keep', [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]], 4),
    ('discard', [[0, 1, 2], [3, 4, 5], [6, 7, 8]], 3),
])
def test_batch_sampler(last_batch, expected, length):
    s = gdata.BatchSampler(gdata.SequentialSampler(10), 3, last_batch)
    assert list(s) == expected and len(s) == length


def test_batch_sampler_rollover():
    s = gdata.BatchSampler(gdata.SequentialSampler(10), 3, 'rollover')
    assert list(s) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(s) == 3  # 1 left over + 10
    assert list(s) == [[9, 0, 1], [2, 3, 4], [5, 6, 7]]
    with pytest.raises(ValueError, match="last_batch must be one of"):
        gdata.BatchSampler(gdata.SequentialSampler(10), 3, 'foo')


def test_filter_and_interval_sampler():
    assert list(gdata.FilterSampler(lambda x: x > 2, [5, 1, 3, 0])) == [0, 2]
    assert list(gdata.IntervalSampler(13, 3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    s = gdata.IntervalSampler(13, 3, rollover=False)
    assert list(s) == [0, 3, 6, 9, 12] and len(s) == 5
    with pytest.raises(ValueError, match='interval'):
        gdata.IntervalSampler(3, 5)


# -- datasets -------------------------------------------------------------------------------

def test_dataset_methods():
    d = gdata.SimpleDataset(list(range(10)))
    assert [list(d.shard(3, i)) for i in range(3)] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert list(d.take(3)) == [0, 1, 2] and len(d.take(None)) == 10
    odd = d.filter(lambda x: x % 2)
    assert list(odd) == [1, 3, 5, 7, 9] and len(odd) == 5
    assert list(d.sample(gdata.IntervalSampler(10, 5, rollover=False))) == [0, 5]
    with pytest.raises(TypeError, match='Invalid sampler'):
        d.sample([1, 2])
    with pytest.raises(ValueError):
        d.shard(3, 3)
    pairs = gdata.SimpleDataset([(1, 2), (3, 4)])
    assert list(pairs.transform_first(lambda x: x * 10)) == [(10, 2), (30, 4)]
    assert list(pairs.transform(lambda x, y: x + y)) == [3, 7]
    calls = []
    eager = d.transform(lambda x: calls.append(x) or -x, lazy=False)
    assert isinstance(eager, gdata.SimpleDataset) and len(calls) == 10
    assert eager[4] == -4 and len(calls) == 10


def test_array_dataset():
    x = nd.arange(12).reshape(6, 2)
    y = nd.arange(6)
    ds = gdata.ArrayDataset(x, y, list('abcdef'))
    a, b, c = ds[2]
    assert isinstance(a, nd.NDArray) and a.asnumpy().tolist() == [4.0, 5.0]
    assert isinstance(b, np.float32) and b == 2 and c == 'c'
    assert len(gdata.ArrayDataset(x)) == 6 and gdata.ArrayDataset(x)[1].shape == (2,)
    with pytest.raises(ValueError, match='same length'):
        gdata.ArrayDataset(x, np.arange(5))


def _write_rec(path, records):
    """A RecordIO file (MXNet's format) and its index, writing ``records`` unsplit."""
    offsets = []
    with open(path, 'wb') as f:
        for r in records:
            offsets.append(f.tell())
            f.write(struct.pack('<II', 0xced7230a, len(r)) + r + b'\0' * (-len(r) % 4))
    with open(os.path.splitext(path)[0] + '.idx', 'w') as f:
        f.writelines('%d\t%d\n' % (i, o) for i, o in enumerate(offsets))


def test_record_file_dataset(tmp_path):
    path = str(tmp_path / 'x.rec')
    records = [b'hello', b'', b'abcdefgh', bytes(range(7))]
    _write_rec(path, records)
    ds = gdata.RecordFileDataset(path)
    assert len(ds) == 4 and [ds[i] for i in range(4)] == records
    with pytest.raises(MXNetError, match='does not exist'):
        gdata.RecordFileDataset(str(tmp_path / 'missing.rec'))


def test_record_file_dataset_reads_mxnet_files(tmp_path, mxnet_ref):
    # MXNet's writer splits a record wherever its data holds the magic number.
    magic = struct.pack('<I', 0xced7230a)
    records = [b'plain', b'ab' * 3 + magic + b'tail', magic + b'x' * 5 + magic]
    mxnet_ref(textwrap.dedent("""
        import mxnet as mx
        w = mx.recordio.MXIndexedRecordIO('data.idx', 'data.rec', 'w')
        for i, r in enumerate(%r):
            w.write_idx(i, bytes.fromhex(r))
        w.close()
    """ % ([r.hex() for r in records],)), cwd=str(tmp_path))
    ds = gdata.RecordFileDataset(str(tmp_path / 'data.rec'))
    assert [ds[i] for i in range(len(ds))] == records


# -- DataLoader -----------------------------------------------------------------------------

def _shapes(loader):
    return [[(b.shape, b.dtype) for b in batch] for batch in loader]


def test_dataloader_batches_like_mxnet():
    ds = gdata.ArrayDataset(nd.arange(20).reshape(10, 2), np.arange(10))
    batches = list(gdata.DataLoader(ds, batch_size=4))
    assert [b[0].shape for b in batches] == [(4, 2), (4, 2), (2, 2)]
    assert batches[0][0].dtype == np.float32 and batches[0][1].dtype == np.int64
    assert batches[2][1].asnumpy().tolist() == [8, 9]
    assert [b.shape for b in gdata.DataLoader(nd.arange(10), batch_size=4)] == [(4, 1), (4, 1), (2, 1)]
    tuples = list(gdata.DataLoader(gdata.SimpleDataset([(1, 2.0), (3, 4.0), (5, 6.0)]), 2))
    assert tuples[0][0].dtype == np.int64 and tuples[0][1].asnumpy().tolist() == [2.0, 4.0]
    loader = gdata.DataLoader(gdata.SimpleDataset([1, 2, 3]), batch_size=2, last_batch='rollover')
    assert len(loader) == 1 and [b.asnumpy().tolist() for b in loader] == [[1, 2]]
    assert len(loader) == 2 and [b.asnumpy().tolist() for b in loader] == [[3, 1], [2, 3]]
    assert len(gdata.DataLoader(np.arange(10), 4, last_batch='discard')) == 2


def test_dataloader_matches_mxnet(mxnet_ref):
    code = """
        import numpy as np
        from mxnet import gluon, nd
        ds = gluon.data.ArrayDataset(nd.arange(30).reshape(10, 3), np.arange(10, dtype='int32'),
                                     [float(i) for i in range(10)])
        for kw in (dict(batch_size=4), dict(batch_size=3, last_batch='discard')):
            for b in gluon.data.DataLoader(ds, **kw):
                print([(x.shape, np.dtype(x.dtype).name, x.asnumpy().sum().item()) for x in b])
    """
    ours = []
    ds = gdata.ArrayDataset(nd.arange(30).reshape(10, 3), np.arange(10, dtype='int32'),
                            [float(i) for i in range(10)])
    for kw in (dict(batch_size=4), dict(batch_size=3, last_batch='discard')):
        for b in gdata.DataLoader(ds, **kw):
            ours.append(str([(x.shape, np.dtype(x.dtype).name, x.asnumpy().sum().item()) for x in b]))
    assert mxnet_ref(textwrap.dedent(code)).split('\n')[:-1] == ours


def test_dataloader_arguments():
    ds = np.arange(10)
    with pytest.raises(ValueError, match='batch_size must be specified'):
        gdata.DataLoader(ds)
    with pytest.raises(ValueError, match='shuffle must not be specified'):
        gdata.DataLoader(ds, 2, shuffle=True, sampler=gdata.SequentialSampler(10))
    bs = gdata.BatchSampler(gdata.SequentialSampler(10), 5)
    with pytest.raises(ValueError, match='must not be specified if batch_sampler'):
        gdata.DataLoader(ds, 2, batch_sampler=bs)
    assert [b.asnumpy().tolist() for b in gdata.DataLoader(ds, batch_sampler=bs)] == \
        [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    got = np.concatenate([b.asnumpy() for b in gdata.DataLoader(ds, 3, shuffle=True)])
    assert sorted(got.tolist()) == list(range(10))
    # A sampler yielding one process's share of the indices shards the data.
    shard = gdata.DataLoader(ds, 2, sampler=gdata.IntervalSampler(10, 2, rollover=False))
    assert np.concatenate([b.asnumpy() for b in shard]).tolist() == [0, 2, 4, 6, 8]
    custom = gdata.DataLoader(ds, 4, batchify_fn=lambda items: sum(items))
    assert list(custom) == [6, 22, 17]


class _Squares(gdata.Dataset):
    """Samples computed with NDArray operations (run inside the workers)."""

    def __len__(self):
        return 23

    def __getitem__(self, i):
        x = nd.full((2, 3), i) * nd.full((2, 3), i)
        return x, i


class _Failing(gdata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise KeyError('sample %d is broken' % i)
        return np.float32(i)


def test_dataloader_workers_match_single_process():
    expected = [(x.asnumpy(), y.asnumpy()) for x, y in gdata.DataLoader(_Squares(), 5)]
    for kw in (dict(num_workers=2), dict(num_workers=2, thread_pool=True),
               dict(num_workers=1, prefetch=0)):
        loader = gdata.DataLoader(_Squares(), 5, **kw)
        for _ in range(2):   # the pool serves several passes
            got = [(x, y) for x, y in loader]
            assert len(got) == len(expected) == 5
            for (x, y), (ex, ey) in zip(got, expected):
                assert isinstance(x, nd.NDArray) and x.context == mx.cpu(0)
                assert x.dtype == np.float32 and y.dtype == np.int64
                np.testing.assert_array_equal(x.asnumpy(), ex)
                np.testing.assert_array_equal(y.asnumpy(), ey)
                assert ((x + 1).asnumpy() == ex + 1).all()   # usable by the parent's engine


def _mapped_batches():
    """How many of this process's memory mappings are a worker's shared batch."""
    with open('/proc/self/maps') as f:
        return sum('neomx-batch' in line for line in f)


@pytest.mark.skipif(not os.path.exists('/proc/self/maps') or not hasattr(os, 'memfd_create'),
                    reason='Linux only')
def test_worker_batches_come_back_in_shared_memory():
    images = np.random.RandomState(0).randint(0, 255, (64, 32, 32, 3)).astype(np.uint8)
    labels = np.arange(64, dtype=np.int32)
    ds = gdata.ArrayDataset(nd.array(images, dtype='uint8'), labels)
    fds = len(os.listdir('/proc/self/fd'))
    loader = gdata.DataLoader(ds.transform_first(vision.transforms.ToTensor()), 16,
                              num_workers=2)
    for _ in range(2):
        got = list(loader)
        # the images (16 x 3 x 32 x 32 float32: 192 kB a batch) are mapped, the labels sent
        assert _mapped_batches() == 4
        x = np.concatenate([b[0].asnumpy() for b in got])
        np.testing.assert_allclose(x, images.transpose(0, 3, 1, 2) / np.float32(255), rtol=1e-6)
        assert [b[1].dtype for b in got] == [np.int32] * 4
        np.testing.assert_array_equal(np.concatenate([b[1].asnumpy() for b in got]), labels)
        got[0][0][:] = 2                    # a batch is the parent's own, writable array
        assert float(got[0][0].mean().asscalar()) == 2
        del got, x
    assert _mapped_batches() == 0
    del loader
    assert len(os.listdir('/proc/self/fd')) == fds      # no descriptor left open


def test_dataloader_worker_errors_and_timeout():
    loader = gdata.DataLoader(_Failing(), 2, num_workers=2)
    with pytest.raises(KeyError, match='sample 5 is broken'):
        list(loader)

    class Slow(gdata.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            import time
            time.sleep(3)
            return np.float32(i)

    with pytest.raises(gdata.dataloader.DataLoaderTimeout, match='timeout=0.5'):
        list(gdata.DataLoader(Slow(), 1, num_workers=1, timeout=0.5))
    with pytest.raises(ValueError, match='timeout must be positive'):
        gdata.DataLoader(Slow(), 1, timeout=0)


class _Noise(gdata.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return np.float32(np.random.uniform()), nd.random.uniform(shape=(1,))


def test_dataloader_workers_draw_different_random_numbers():
    batches = list(gdata.DataLoader(_Noise(), 1, num_workers=2))
    np_draws = [float(b[0].asscalar()) for b in batches]
    nd_draws = [float(b[1].asscalar()) for b in batches]
    assert len(set(np_draws)) == 8 and len(set(nd_draws)) == 8


def test_dataloader_pin_memory_and_auto_reload():
    ds = gdata.ArrayDataset(np.ones((4, 2), dtype='float32'))
    for workers in (0, 1):
        (b,) = list(gdata.DataLoader(ds, 4, pin_memory=True, num_workers=workers))
        assert b.context == mx.cpu_pinned(0) and b.asnumpy().sum() == 8
    loader = gdata.DataLoader(ds, 2, num_workers=1, auto_reload=True)
    assert loader._iter is not None    # the first pass is being prefetched already
    assert len(list(loader)) == 2 and loader._iter is not None
    assert len(list(loader)) == 2



def _scaled_worker_fn(samples, scale, batchify_fn):
    from neomx.gluon.data import dataloader
    batch = batchify_fn([dataloader._worker_dataset[i] * scale for i in samples])
    return pickle.dumps(batch)


def test_multi_worker_iter_takes_mxnets_arguments():
    # code built on MXNet subclasses the loader's private _MultiWorkerIter with a process pool
    # of its own (MXNet's arguments and members), and reads the loader's _pin_memory
    import multiprocessing
    from neomx.gluon.data import dataloader

    class Scaled(dataloader._MultiWorkerIter):
        def _push_next(self):
            r = next(self._iter, None)
            if r is not None:
                self._data_buffer[self._sent_idx] = self._worker_pool.apply_async(
                    self._worker_fn, (r, 10, self._batchify_fn))
                self._sent_idx += 1

    ds = gdata.SimpleDataset([nd.ones((2,)) * i for i in range(7)])
    loader = gdata.DataLoader(ds, batch_size=3, pin_memory=True, pin_device_id=0)
    assert loader._pin_memory is True and loader._pin_device_id == 0
    pool = multiprocessing.get_context('fork').Pool(
        2, initializer=dataloader._worker_initializer, initargs=[ds])
    try:
        it = dataloader._MultiWorkerIter(pool, loader._batchify_fn, loader._batch_sampler,
                                         pin_memory=loader._pin_memory, prefetch=2)
        batches = list(it)
        assert [b.shape for b in batches] == [(3, 2), (3, 2), (1, 2)]
        assert batches[0].context == mx.cpu_pinned(0)
        assert np.concatenate([b.asnumpy() for b in batches])[:, 0].tolist() == list(range(7))
        it = Scaled(pool, loader._batchify_fn, loader._batch_sampler,
                    worker_fn=_scaled_worker_fn)
        assert len(it) == 3
        assert [b.asnumpy()[:, 1].tolist() for b in it] == [[0, 10, 20], [30, 40, 50], [60]]
    finally:
        pool.terminate()


# -- vision datasets ------------------------------------------------------------------------

def _write_idx(path, array, compress=True):
    header = struct.pack('>HBB', 0, 0x08, array.ndim) + struct.pack('>%dI' % array.ndim, *array.shape)
    opener = gzip.open if compress else open
    with opener(path, 'wb') as f:
        f.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture
def no_download(monkeypatch):
    """Downloads fail at once (a closed local port), online or not."""
    monkeypatch.setenv('MXNET_GLUON_REPO', 'http://127.0.0.1:9/')


@pytest.mark.parametrize('cls', [vision.MNIST, vision.FashionMNIST])
def test_mnist_files(tmp_path, cls, no_download):
    rng = np.random.RandomState(0)
    images = rng.randint(0, 256, (7, 28, 28))
    labels = rng.randint(0, 10, 7)
    _write_idx(str(tmp_path / 't10k-images-idx3-ubyte.gz'), images)
    _write_idx(str(tmp_path / 't10k-labels-idx1-ubyte'), labels, compress=False)  # un-gzipped
    ds = cls(root=str(tmp_path), train=False)
    assert len(ds) == 7
    x, y = ds[3]
    assert x.shape == (28, 28, 1) and x.dtype == np.uint8 and isinstance(y, np.int32)
    np.testing.assert_array_equal(x.asnumpy()[:, :, 0], images[3])
    assert y == labels[3]
    scaled = cls(root=str(tmp_path), train=False,
                 transform=lambda d, l: (d.astype('float32') / 255, l + 100))
    assert scaled[3][1] == labels[3] + 100 and scaled[3][0].dtype == np.float32
    with pytest.raises(MXNetError) as e:
        cls(root=str(tmp_path), train=True)
    msg = str(e.value)
    assert str(tmp_path) in msg and 'train-images-idx3-ubyte.gz' in msg
    assert 'train-labels-idx1-ubyte.gz' in msg and 'root=' in msg


def test_mnist_bad_files(tmp_path, no_download):
    _write_idx(str(tmp_path / 't10k-images-idx3-ubyte.gz'), np.zeros((3, 28, 28)))
    _write_idx(str(tmp_path / 't10k-labels-idx1-ubyte.gz'), np.zeros(4))
    with pytest.raises(MXNetError, match='holds 3 images but .* holds 4 labels'):
        vision.MNIST(root=str(tmp_path), train=False)
    with open(str(tmp_path / 't10k-labels-idx1-ubyte.gz'), 'wb') as f:
        f.write(b'not gzip at all')
    with pytest.raises(MXNetError, match='t10k-labels-idx1-ubyte.gz'):
        vision.MNIST(root=str(tmp_path), train=False)


def test_mnist_default_root(tmp_path, monkeypatch, no_download):
    monkeypatch.setenv('MXNET_HOME', str(tmp_path))
    folder = tmp_path / 'datasets' / 'fashion-mnist'
    folder.mkdir(parents=True)
    _write_idx(str(folder / 't10k-images-idx3-ubyte.gz'), np.zeros((2, 28, 28)))
    _write_idx(str(folder / 't10k-labels-idx1-ubyte.gz'), np.array([3, 4]))
    assert vision.FashionMNIST(train=False)[1][1] == 4


def _cifar_rows(n, label_bytes, seed):
    rng = np.random.RandomState(seed)
    images = rng.randint(0, 256, (n, 32, 32, 3)).astype(np.uint8)
    labels = rng.randint(0, 10, (n, label_bytes)).astype(np.uint8)
    rows = np.concatenate([labels, images.transpose(0, 3, 1, 2).reshape(n, -1)], axis=1)
    return images, labels, rows


def test_cifar10_binary_and_pickle(tmp_path, no_download):
    images, labels, rows = _cifar_rows(5, 1, 0)
    binary = tmp_path / 'bin' / 'cifar-10-batches-bin'
    binary.mkdir(parents=True)
    rows.tofile(str(binary / 'test_batch.bin'))
    ds = vision.CIFAR10(root=str(tmp_path / 'bin'), train=False)
    x, y = ds[4]
    assert len(ds) == 5 and x.shape == (32, 32, 3) and x.dtype == np.uint8
    np.testing.assert_array_equal(x.asnumpy(), images[4])
    assert y == labels[4, 0] and isinstance(y, np.int32)

    py = tmp_path / 'py' / 'cifar-10-batches-py'
    py.mkdir(parents=True)
    parts = [_cifar_rows(3, 1, s) for s in range(5)]
    for i, (_, lab, r) in enumerate(parts):
        with open(str(py / ('data_batch_%d' % (i + 1))), 'wb') as f:
            pickle.dump({b'data': r[:, 1:], b'labels': lab[:, 0].tolist()}, f)
    train = vision.CIFAR10(root=str(tmp_path / 'py'), train=True)
    assert len(train) == 15
    np.testing.assert_array_equal(train[7][0].asnumpy(), parts[2][0][1])
    assert train[7][1] == parts[2][1][1, 0]
    with pytest.raises(MXNetError, match=r'data_batch_1\.bin.*not found in .*empty'):
        vision.CIFAR10(root=str(tmp_path / 'empty'), train=True)


def test_cifar100_labels(tmp_path, no_download):
    images, labels, rows = _cifar_rows(4, 2, 1)
    rows.tofile(str(tmp_path / 'test.bin'))
    coarse = vision.CIFAR100(root=str(tmp_path), train=False)
    fine = vision.CIFAR100(root=str(tmp_path), fine_label=True, train=False)
    assert coarse[2][1] == labels[2, 0] and fine[2][1] == labels[2, 1]
    np.testing.assert_array_equal(fine[2][0].asnumpy(), images[2])


# -- image operators ------------------------------------------------------------------------

def test_image_operators_match_mxnet(tmp_path, mxnet_ref):
    img = np.random.RandomState(0).randint(0, 256, (6, 8, 3)).astype(np.uint8)
    np.save(str(tmp_path / 'img.npy'), img)
    cases = [('to_tensor', {}), ('resize', dict(size=(5, 3))), ('resize', dict(size=(12, 9))),
             ('resize', dict(size=4, keep_ratio=True)), ('resize', dict(size=(5, 3), interp=0)),
             ('resize', dict(size=(5, 3), interp=2)), ('resize', dict(size=(5, 3), interp=3)),
             ('crop', dict(x=1, y=2, width=3, height=4)), ('flip_left_right', {}),
             ('flip_top_bottom', {})]
    mxnet_ref(textwrap.dedent("""
        import numpy as np, mxnet as mx
        img = mx.nd.array(np.load('img.npy'), dtype='uint8')
        for i, (name, kw) in enumerate(%r):
            f = getattr(mx.nd.image, name)
            np.save('out%%d.npy' %% i, f(img, **kw).asnumpy())
            if not name.startswith('flip'):   # flips take single images only
                np.save('bout%%d.npy' %% i, f(mx.nd.stack(img, img), **kw).asnumpy())
        t = mx.nd.image.to_tensor(img)
        np.save('norm.npy', mx.nd.image.normalize(t, mean=(0.1, 0.2, 0.3), std=(1, 2, 3)).asnumpy())
    """ % (cases,)), cwd=str(tmp_path))
    x = nd.array(img, dtype='uint8')
    for i, (name, kw) in enumerate(cases):
        f = getattr(nd.image, name)
        for prefix, arg in (('out', x), ('bout', nd.stack(x, x))):
            if not (tmp_path / ('%s%d.npy' % (prefix, i))).exists():
                with pytest.raises(MXNetError, match='must have shape'):
                    f(arg, **kw)
                continue
            ref = np.load(str(tmp_path / ('%s%d.npy' % (prefix, i))))
            out = f(arg, **kw).asnumpy()
            assert out.shape == ref.shape and out.dtype == ref.dtype, (name, kw)
            # OpenCV resizes uint8 images in fixed point: one step of rounding apart
            assert np.abs(out.astype(float) - ref.astype(float)).max() <= 1.0001, (name, kw)
    norm = nd.image.normalize(nd.image.to_tensor(x), mean=(0.1, 0.2, 0.3), std=(1, 2, 3))
    np.testing.assert_allclose(norm.asnumpy(), np.load(str(tmp_path / 'norm.npy')), rtol=1e-6)


def test_image_operator_errors():
    with pytest.raises(MXNetError, match=r'to_tensor.*\(height, width, channels\).*\(4,\)'):
        nd.image.to_tensor(nd.ones((4,)))
    with pytest.raises(MXNetError, match='mean must have 1 or 3 elements'):
        nd.image.normalize(nd.ones((3, 2, 2)), mean=(0.1, 0.2), std=1)
    with pytest.raises(MXNetError, match='1 or 3 elements'):
        nd.image.normalize(nd.ones((4, 2, 2)), mean=0, std=1)
    with pytest.raises(MXNetError, match='does not fit an image of height 6 and width 8'):
        nd.image.crop(nd.ones((6, 8, 3)), x=6, y=2, width=3, height=4)
    # 0-4 are OpenCV's nearest, bilinear, bicubic, area and Lanczos
    assert nd.image.resize(nd.ones((6, 8, 3)), size=4, interp=4).shape == (4, 4, 3)
    with pytest.raises(MXNetError, match='interp=7 is not supported'):
        nd.image.resize(nd.ones((6, 8, 3)), size=4, interp=7)
    with pytest.raises(MXNetError, match=r'random_flip_left_right.*\(2, 6, 8, 3\)'):
        nd.image.random_flip_left_right(nd.ones((2, 6, 8, 3)))


def test_random_flip_draws_both_ways():
    img = nd.array(np.arange(24).reshape(2, 4, 3))
    flipped = img.asnumpy()[:, ::-1]
    mx.random.seed(3)
    outs = [nd.image.random_flip_left_right(img).asnumpy() for _ in range(40)]
    same = sum((o == img.asnumpy()).all() for o in outs)
    flip = sum((o == flipped).all() for o in outs)
    assert same + flip == 40 and 5 < flip < 35


# -- transforms -----------------------------------------------------------------------------

def test_transforms_match_mxnet(tmp_path, mxnet_ref):
    from neomx.gluon.data.vision import transforms as T
    img = np.random.RandomState(1).randint(0, 256, (6, 8, 3)).astype(np.uint8)
    np.save(str(tmp_path / 'img.npy'), img)
    cases = ["T.CenterCrop((4, 2))", "T.CenterCrop(5)", "T.CenterCrop((10, 10))",
             "T.Resize(4, keep_ratio=True)", "T.Resize((5, 3), interpolation=2)",
             "T.CropResize(1, 2, 3, 4)", "T.CropResize(1, 2, 3, 4, size=(6, 5), interpolation=1)",
             "T.Compose([T.Resize(4), T.ToTensor(), T.Normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.4))])",
             "T.Compose([T.Cast('float16'), T.ToTensor()])"]
    mxnet_ref(textwrap.dedent("""
        import numpy as np, mxnet as mx
        from mxnet.gluon.data.vision import transforms as T
        img = mx.nd.array(np.load('img.npy'), dtype='uint8')
        for i, case in enumerate(%r):
            np.save('t%%d.npy' %% i, eval(case)(img).asnumpy())
    """ % (cases,)), cwd=str(tmp_path))
    x = nd.array(img, dtype='uint8')
    for i, case in enumerate(cases):
        ref = np.load(str(tmp_path / ('t%d.npy' % i)))
        out = eval(case)(x).asnumpy()
        assert out.shape == ref.shape and out.dtype == ref.dtype, case
        tol = 1.0001 if out.dtype == np.uint8 else 0.02   # OpenCV's fixed-point rounding
        assert np.abs(out.astype(float) - ref.astype(float)).max() <= tol, case


def test_transforms_batches_and_hybridize():
    from neomx.gluon.data.vision import transforms as T
    batch = nd.array(np.random.RandomState(2).randint(0, 256, (3, 8, 6, 1)), dtype='uint8')
    t = T.Compose([T.Resize((4, 5)), T.ToTensor(), T.Normalize(0.5, 0.25)])
    out = t(batch)
    assert out.shape == (3, 1, 5, 4) and out.dtype == np.float32
    one = t(batch[1]).asnumpy()
    np.testing.assert_allclose(out.asnumpy()[1], one, rtol=1e-6)
    # Compose hybridized the run of HybridBlocks; HybridCompose is one hybridizable block
    h = T.HybridCompose([T.Resize((4, 5)), T.ToTensor(), T.Normalize(0.5, 0.25)])
    h.hybridize()
    np.testing.assert_allclose(h(batch).asnumpy(), out.asnumpy(), rtol=1e-6)
    with pytest.raises(TypeError, match='HybridCompose takes HybridBlocks only'):
        T.HybridCompose([T.CenterCrop(3)])
    assert T.Cast('float64')(batch).dtype == np.float64


def test_random_transforms():
    import random
    from neomx.gluon.data.vision import transforms as T
    img = nd.array(np.arange(6 * 8 * 3).reshape(6, 8, 3) % 251, dtype='uint8')
    random.seed(0)
    for _ in range(10):
        out = T.RandomResizedCrop((5, 4), scale=(0.3, 1.0))(img)
        assert out.shape == (4, 5, 3) and out.dtype == np.uint8
    # a window of the whole image, kept at its size, is the image itself
    same = T.RandomResizedCrop((8, 6), scale=(1.0, 1.0), ratio=(8 / 6, 8 / 6))(img)
    np.testing.assert_array_equal(same.asnumpy(), img.asnumpy())
    mx.random.seed(5)
    flips = [T.RandomFlipTopBottom()(img).asnumpy() for _ in range(20)]
    n = sum((f == img.asnumpy()[::-1]).all() for f in flips)
    assert 2 < n < 18 and all((f == img.asnumpy()).all() or (f == img.asnumpy()[::-1]).all()
                              for f in flips)
    random.seed(1)
    applied = [T.RandomApply(T.Cast('float16'), p=0.5)(img).dtype for _ in range(20)]
    assert 2 < applied.count(np.float16) < 18


def test_dataloader_with_transforms_in_workers(tmp_path, no_download):
    from neomx.gluon.data.vision import transforms as T
    images = np.random.RandomState(3).randint(0, 256, (10, 28, 28))
    _write_idx(str(tmp_path / 't10k-images-idx3-ubyte.gz'), images)
    _write_idx(str(tmp_path / 't10k-labels-idx1-ubyte.gz'), np.arange(10))
    ds = vision.FashionMNIST(root=str(tmp_path), train=False).transform_first(T.ToTensor())
    for workers in (0, 2):
        batches = list(gdata.DataLoader(ds, batch_size=4, num_workers=workers))
        x, y = batches[0]
        assert x.shape == (4, 1, 28, 28) and x.dtype == np.float32 and y.dtype == np.int32
        np.testing.assert_allclose(x.asnumpy()[2, 0], images[2] / 255.0, rtol=1e-6)
        assert np.concatenate([b[1].asnumpy() for b in batches]).tolist() == list(range(10))


def _images(n, seed, shape=(12, 10, 1)):
    rs = np.random.RandomState(seed)
    return gdata.ArrayDataset(nd.array(rs.randint(0, 256, (n,) + shape), dtype='uint8'),
                              np.arange(n, dtype='int32'))


def _count_calls(monkeypatch, cls):
    """The shapes of the inputs each call of the (not hybridized) transform ``cls`` gets."""
    calls = []
    forward = cls.hybrid_forward
    monkeypatch.setattr(cls, 'hybrid_forward',
                        lambda self, F, x, *a: calls.append(x.shape) or forward(self, F, x, *a))
    return calls


def test_sample_wise_transforms_run_once_per_batch(monkeypatch):
    # A DataLoader transforms a batch of samples of one shape once, on their stack, when the
    # transform computes a batch as each sample (ToTensor, Normalize, Resize, Cast): the
    # batches are those of a transform per sample.
    from neomx.gluon.data.vision import transforms as T
    raw = _images(10, 0)
    for tf in (T.ToTensor(), T.Compose([T.Resize((5, 7)), T.ToTensor(), T.Normalize(0.5, 0.25),
                                        T.Cast('float64')])):
        ds = raw.transform_first(tf)
        want = [tf(raw[i][0]).asnumpy() for i in range(10)]
        for workers in (0, 2):
            batches = list(gdata.DataLoader(ds, batch_size=4, num_workers=workers))
            x = np.concatenate([b[0].asnumpy() for b in batches])
            np.testing.assert_array_equal(x, np.stack(want))
            assert x.dtype == want[0].dtype
            assert np.concatenate([b[1].asnumpy() for b in batches]).tolist() == list(range(10))
    calls = _count_calls(monkeypatch, T.ToTensor)
    list(gdata.DataLoader(raw.transform_first(T.ToTensor()), batch_size=4))
    assert calls == [(4, 12, 10, 1), (4, 12, 10, 1), (2, 12, 10, 1)]
    # samples that are single arrays, through transform
    del calls[:]
    ds = gdata.SimpleDataset([raw[i][0] for i in range(10)]).transform(T.ToTensor())
    (x,) = list(gdata.DataLoader(ds, batch_size=10))
    assert x.shape == (10, 1, 12, 10) and calls == [(10, 12, 10, 1)]


def test_other_transforms_run_per_sample(monkeypatch):
    from neomx.gluon.data.vision import transforms as T

    class Mine(T.ToTensor):         # a subclass may compute otherwise on a batch
        pass

    flip = T.RandomFlipLeftRight()
    assert T.sample_ndim(T.Compose([T.ToTensor(), T.Normalize(0.5, 0.5)])) == 3
    assert T.sample_ndim(T.Cast('float16')) == 0
    assert T.sample_ndim(Mine()) is None and T.sample_ndim(flip) is None
    assert T.sample_ndim(T.Compose([T.ToTensor(), flip])) is None
    assert T.sample_ndim(lambda x: x) is None
    hooked = T.ToTensor()
    hooked.register_forward_hook(lambda block, args, out: None)
    assert T.sample_ndim(hooked) is None
    # a random transform draws for each sample
    mx.random.seed(3)
    raw = _images(16, 1)
    (x, _), = list(gdata.DataLoader(raw.transform_first(T.Compose([flip, T.ToTensor()])),
                                    batch_size=16))
    image = [raw[i][0].asnumpy()[:, :, 0] / np.float32(255) for i in range(16)]
    flipped = [np.array_equal(x.asnumpy()[i, 0], image[i][:, ::-1]) for i in range(16)]
    kept = [np.array_equal(x.asnumpy()[i, 0], image[i]) for i in range(16)]
    assert 0 < sum(flipped) < 16 and sum(flipped) + sum(kept) == 16
    # samples of different shapes, made alike by the transform
    calls = _count_calls(monkeypatch, T.Resize)
    sizes = gdata.SimpleDataset([(nd.zeros((4 + i, 6, 1), dtype='uint8'), i) for i in range(3)])
    (x, y), = list(gdata.DataLoader(sizes.transform_first(T.Resize((3, 3))), batch_size=3))
    assert x.shape == (3, 3, 3, 1) and calls == [(4, 6, 1), (5, 6, 1), (6, 6, 1)]
    # a batchify function of the user's
    calls = _count_calls(monkeypatch, T.ToTensor)
    list(gdata.DataLoader(_images(4, 2).transform_first(T.ToTensor()), batch_size=4,
                          batchify_fn=lambda s: nd.stack(*[a for a, _ in s])))
    assert len(calls) == 4
    # 2-d samples, which ToTensor does not take (a stack of them would pass for one image)
    flat = gdata.SimpleDataset([(nd.zeros((5, 6), dtype='uint8'), 0)] * 2)
    with pytest.raises(MXNetError, match='to_tensor'):
        list(gdata.DataLoader(flat.transform_first(T.ToTensor()), batch_size=2))


@pytest.mark.gpu
def test_image_operators_on_gpu():
    img = np.random.RandomState(4).randint(0, 256, (2, 6, 8, 3)).astype(np.uint8)
    cpu, gpu = nd.array(img, dtype='uint8'), nd.array(img, dtype='uint8', ctx=mx.gpu(0))
    for f in (lambda x: nd.image.to_tensor(x), lambda x: nd.image.resize(x, size=(5, 3)),
              lambda x: nd.image.resize(x, size=(5, 3), interp=3),
              lambda x: nd.image.crop(x, 1, 2, 3, 4), lambda x: nd.image.flip_left_right(x[0]),
              lambda x: nd.image.normalize(nd.image.to_tensor(x), mean=0.5, std=0.2)):
        out = f(gpu)
        assert out.context == mx.gpu(0)
        np.testing.assert_allclose(out.asnumpy().astype(float), f(cpu).asnumpy().astype(float),
                                   rtol=1e-5, atol=1.0001 if out.dtype == np.uint8 else 1e-5)
    flipped = nd.image.random_flip_left_right(gpu[0])
    assert flipped.context == mx.gpu(0) and flipped.shape == (6, 8, 3)


@pytest.mark.gpu
def test_dataloader_pinned_batches_to_gpu():
    ds = gdata.ArrayDataset(np.arange(24, dtype='float32').reshape(6, 4))
    for workers in (0, 2):
        batches = list(gdata.DataLoader(ds, 3, pin_memory=True, num_workers=workers))
        assert all(b.context == mx.cpu_pinned(0) for b in batches)
        on_gpu = [b.as_in_context(mx.gpu(0)) for b in batches]
        np.testing.assert_array_equal(np.concatenate([b.asnumpy() for b in on_gpu]),
                                      np.arange(24).reshape(6, 4))
