"""``mx.io``: DataDesc, DataBatch, NDArrayIter's last-batch modes and shuffling, CSVIter's
round batches, MNISTIter, ResizeIter, PrefetchingIter, test_utils.DummyIter; and the same
batches as MXNet 1.9.1."""
import json
import struct
import textwrap

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError


def _rows(n=10, width=2):
    return np.arange(n * width, dtype=np.float32).reshape(n, width)


def test_data_desc_is_a_name_shape_tuple_with_dtype_and_layout():
    d = mx.io.DataDesc('data', (4, 3), np.float16, layout='TNC')
    name, shape = d
    assert (name, shape, d.dtype, d.layout) == ('data', (4, 3), np.float16, 'TNC')
    assert repr(d) == "DataDesc[data,(4, 3),<class 'numpy.float16'>,TNC]"
    assert mx.io.DataDesc.get_batch_axis('TNC') == 1
    assert mx.io.DataDesc.get_batch_axis(None) == 0
    descs = mx.io.DataDesc.get_list([('a', (1,)), ('b', (2,))], [('a', 'int32'), ('b', 'f')])
    assert [(x.name, x.dtype) for x in descs] == [('a', 'int32'), ('b', 'f')]


def test_data_batch_str_and_type_checks():
    b = mx.io.DataBatch(data=[mx.nd.ones((2, 3))])
    assert str(b) == 'DataBatch: data shapes: [(2, 3)] label shapes: None'
    b = mx.io.DataBatch([mx.nd.ones((2, 3)), mx.nd.ones((7, 8))], [mx.nd.ones((4, 5))])
    assert str(b) == 'DataBatch: data shapes: [(2, 3), (7, 8)] label shapes: [(4, 5)]'
    with pytest.raises(TypeError, match='list of NDArrays'):
        mx.io.DataBatch(mx.nd.ones((2,)))


@pytest.mark.parametrize('mode,batches,pads', [('pad', 4, [0, 0, 0, 2]),
                                               ('discard', 3, [0, 0, 0]),
                                               ('roll_over', 3, [0, 0, 0])])
def test_ndarray_iter_last_batch_modes(mode, batches, pads):
    data = _rows()
    it = mx.io.NDArrayIter(data, np.arange(10), batch_size=3, last_batch_handle=mode)
    got = list(it)
    assert len(got) == batches and [b.pad for b in got] == pads
    for b in got:           # labels stay with their rows
        np.testing.assert_array_equal(b.data[0].asnumpy()[:, 0] / 2, b.label[0].asnumpy())
    if mode == 'pad':       # the last batch wraps around to the first rows
        np.testing.assert_array_equal(got[-1].data[0].asnumpy(), data[[9, 0, 1]])


def test_ndarray_iter_roll_over_carries_the_tail_into_the_next_epoch():
    it = mx.io.NDArrayIter(_rows(), batch_size=4, last_batch_handle='roll_over')
    assert len(list(it)) == 2
    it.reset()
    first = it.next()
    np.testing.assert_array_equal(first.data[0].asnumpy(), _rows()[[8, 9, 0, 1]])
    assert first.pad == 2
    it.hard_reset()
    np.testing.assert_array_equal(it.next().data[0].asnumpy(), _rows()[:4])


def test_ndarray_iter_pad_wraps_more_than_once():
    it = mx.io.NDArrayIter(np.arange(10), batch_size=25, last_batch_handle='pad')
    b = it.next()
    np.testing.assert_array_equal(b.data[0].asnumpy(), np.concatenate([np.arange(10)] * 2 +
                                                                      [np.arange(5)]))
    assert b.pad == 15


def test_ndarray_iter_names_and_provide():
    it = mx.io.NDArrayIter({'b': _rows(), 'a': _rows()}, {'lab': np.ones(10)}, batch_size=5)
    assert [d.name for d in it.provide_data] == ['a', 'b']        # sorted by name
    assert it.provide_label[0] == ('lab', (5,))
    it = mx.io.NDArrayIter([_rows(), _rows()], batch_size=5)
    assert [d.name for d in it.provide_data] == ['_0_data', '_1_data']
    assert it.provide_label == [] and it.next().label == []
    it = mx.io.NDArrayIter(_rows(), batch_size=5, data_name='x', label_name='y',
                           label=np.zeros((10, 3), np.int32))
    assert it.provide_data[0][0] == 'x' and it.provide_label[0][0] == 'y'
    assert it.provide_label[0].dtype == np.float32      # numpy inputs become float32


def test_ndarray_iter_shuffle_follows_idx():
    plain = [b.data[0].asnumpy() for b in mx.io.NDArrayIter(_rows(), np.arange(10), 1)]
    it = mx.io.NDArrayIter(_rows(), np.arange(10), 1, shuffle=True)
    for i, b in enumerate(it):
        np.testing.assert_array_equal(b.data[0].asnumpy(), plain[it.idx[i]])
        assert b.label[0].asscalar() == it.idx[i]


def test_ndarray_iter_errors():
    with pytest.raises(MXNetError, match='last_batch_handle'):
        mx.io.NDArrayIter(_rows(), last_batch_handle='wrap')
    with pytest.raises(MXNetError, match='examples'):
        mx.io.NDArrayIter(_rows(10), np.ones(9))
    it = mx.io.NDArrayIter(_rows(4), np.arange(10), batch_size=4)    # extra label rows: unread
    assert len(list(it)) == 1 and it.provide_label[0].shape == (4,)
    with pytest.raises(TypeError, match='NDArrayIter'):
        mx.io.NDArrayIter({'data': object()})
    scipy_sparse = pytest.importorskip('scipy.sparse')
    with pytest.raises(NotImplementedError, match='discard'):
        mx.io.NDArrayIter({'data': scipy_sparse.csr_matrix(_rows())}, batch_size=3)
    it = mx.io.NDArrayIter({'data': scipy_sparse.csr_matrix(_rows())}, batch_size=3,
                           last_batch_handle='discard')
    np.testing.assert_array_equal(it.next().data[0].asnumpy(), _rows()[:3])


def test_resize_prefetching_and_dummy_iters():
    inner = mx.io.NDArrayIter(mx.nd.ones((100, 10)), batch_size=25)
    assert len(list(mx.io.ResizeIter(inner, 7))) == 7
    a = mx.io.NDArrayIter({'data': _rows()}, np.arange(10), batch_size=5)
    b = mx.io.NDArrayIter({'data': _rows()}, np.arange(10), batch_size=5)
    it = mx.io.PrefetchingIter([a, b], rename_data=[{'data': 'x'}, {'data': 'y'}])
    assert [d.name for d in it.provide_data] == ['x', 'y'] and it.batch_size == 5
    for _ in range(2):
        got = list(it)
        assert len(got) == 2 and len(got[0].data) == 2 and len(got[0].label) == 2
        it.reset()
    dummy = mx.test_utils.DummyIter(mx.io.NDArrayIter(_rows(), batch_size=2))
    assert isinstance(dummy, mx.io.DataIter) and next(dummy) is next(dummy)


def test_prefetching_iter_passes_errors_on():
    class Broken(mx.io.DataIter):
        provide_data = [mx.io.DataDesc('data', (2, 2))]
        provide_label = []

        def next(self):
            raise ValueError('disk on fire')
    it = mx.io.PrefetchingIter(Broken())
    with pytest.raises(ValueError, match='disk on fire'):
        it.next()


def _csv(tmp_path, rows, name='d.csv'):
    path = tmp_path / name
    path.write_text(''.join(','.join(str(v) for v in r) + '\n' for r in rows))
    return str(path)


def test_csv_iter_round_batch_and_dtypes(tmp_path):
    data = _csv(tmp_path, [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]])
    label = _csv(tmp_path, [[0], [1], [2], [3], [4]], 'l.csv')
    it = mx.io.CSVIter(data_csv=data, data_shape=(2,), label_csv=label, batch_size=2)
    epochs = []
    for _ in range(3):
        epochs.append([(b.label[0].asnumpy().tolist(), b.pad) for b in it])
        it.reset()
    # the round batch takes row 0 from the next epoch, which then starts at row 1
    assert epochs == [[([0, 1], 0), ([2, 3], 0), ([4, 0], 1)],
                      [([1, 2], 0), ([3, 4], 0)],
                      [([0, 1], 0), ([2, 3], 0), ([4, 0], 1)]]
    it = mx.io.CSVIter(data_csv=data, data_shape=(2,), label_csv=label, batch_size=2,
                       round_batch=False)
    last = list(it)[-1]     # the unfilled row keeps the previous batch's example
    assert last.label[0].asnumpy().tolist() == [4, 3] and last.pad == 1
    big = _csv(tmp_path, [[2147483648] * 4] * 3, 'big.csv')
    it = mx.io.CSVIter(data_csv=big, data_shape=(2, 2), batch_size=3, dtype='int64')
    batch = it.next()
    assert it.getdata().dtype == np.int64 and batch.data[0].asnumpy().max() == 2147483648
    assert it.getlabel().shape == (3,)


def test_csv_iter_errors_name_the_file(tmp_path):
    data = _csv(tmp_path, [[1, 2, 3]])
    with pytest.raises(MXNetError, match=r'd.csv has 3 values a row.*needs 2'):
        mx.io.CSVIter(data_csv=data, data_shape=(2,), batch_size=1)
    with pytest.raises(MXNetError, match='no such file'):
        mx.io.CSVIter(data_csv=str(tmp_path / 'none.csv'), data_shape=(2,))
    with pytest.raises(MXNetError, match='dtype'):
        mx.io.CSVIter(data_csv=data, data_shape=(3,), dtype='float16')


def test_libsvm_iter_dense_rows(tmp_path):
    path = tmp_path / 'data.t'
    path.write_text('1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n')
    it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,), batch_size=3)
    first = it.next()
    np.testing.assert_allclose(first.data[0].asnumpy(), [[0.5, 0, 1.2], [0, 0, 0],
                                                         [0.6, 2.4, 1.2]])
    assert first.label[0].asnumpy().tolist() == [1, -2, -3]
    path.write_text('1.0 -1:0.5\n')
    with pytest.raises(MXNetError, match='feature index -1'):
        mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(3,))


def test_mnist_iter_reads_idx_files(tmp_path):
    n = 7
    images = (np.arange(n * 28 * 28) % 256).astype(np.uint8)
    (tmp_path / 'img').write_bytes(struct.pack('>iiii', 2051, n, 28, 28) + images.tobytes())
    (tmp_path / 'lab').write_bytes(struct.pack('>ii', 2049, n) + bytes(range(n)))
    it = mx.io.MNISTIter(image=str(tmp_path / 'img'), label=str(tmp_path / 'lab'),
                         batch_size=3, shuffle=False)
    batches = list(it)
    assert len(batches) == 2                            # the incomplete batch is dropped
    assert batches[0].data[0].shape == (3, 1, 28, 28)
    assert batches[0].data[0].asnumpy().ravel()[1] == 1 / 256
    assert batches[1].label[0].asnumpy().tolist() == [3, 4, 5]
    it = mx.io.MNISTIter(image=str(tmp_path / 'img'), label=str(tmp_path / 'lab'),
                         batch_size=3, flat=True, seed=1)
    order = [b.label[0].asnumpy().tolist() for b in it]
    it.reset()
    assert [b.label[0].asnumpy().tolist() for b in it] == order    # shuffled once
    assert it.provide_data[0].shape == (3, 784)
    (tmp_path / 'bad').write_bytes(b'\x00\x00\x0d\x01' + struct.pack('>i', 1) + b'\0' * 4)
    with pytest.raises(MXNetError, match='not an IDX file'):
        mx.io.MNISTIter(image=str(tmp_path / 'bad'), label=str(tmp_path / 'lab'))


def test_same_batches_as_mxnet(tmp_path, mxnet_ref):
    data = _csv(tmp_path, [[i, i + 1] for i in range(7)])
    code = textwrap.dedent('''
        import json, numpy as np, mxnet as mx
        out = {}
        for mode in ('pad', 'discard', 'roll_over'):
            it = mx.io.NDArrayIter(np.arange(14).reshape(7, 2), np.arange(7), 3,
                                   last_batch_handle=mode)
            eps = []
            for _ in range(2):
                eps.append([(b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(),
                             b.pad) for b in it])
                it.reset()
            out[mode] = eps
        for rb in (True, False):
            it = mx.io.CSVIter(data_csv=%r, data_shape=(2,), batch_size=3, round_batch=rb)
            eps = []
            for _ in range(3):
                eps.append([(b.data[0].asnumpy().tolist(), b.pad) for b in it])
                it.reset()
            out['csv%%s' %% rb] = eps
        print(json.dumps(out))
    ''' % data)
    want = json.loads(mxnet_ref(code).strip().splitlines()[-1])
    for mode in ('pad', 'discard', 'roll_over'):
        it = mx.io.NDArrayIter(np.arange(14).reshape(7, 2), np.arange(7), 3,
                               last_batch_handle=mode)
        eps = []
        for _ in range(2):
            eps.append([[b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad]
                        for b in it])
            it.reset()
        assert eps == want[mode], mode
    for rb in (True, False):
        it = mx.io.CSVIter(data_csv=data, data_shape=(2,), batch_size=3, round_batch=rb)
        eps = []
        for _ in range(3):
            eps.append([[b.data[0].asnumpy().tolist(), b.pad] for b in it])
            it.reset()
        assert eps == want['csv%s' % rb], rb


def _image_rec(tmp_path, n=7):
    """A .rec of n PNG images (36x30 and 32x40), labels i % 3."""
    pytest.importorskip('PIL')
    rng = np.random.RandomState(0)
    path = str(tmp_path / 'img.rec')
    w = mx.recordio.MXIndexedRecordIO(str(tmp_path / 'img.idx'), path, 'w')
    for i in range(n):
        img = rng.randint(0, 256, size=(32, 40, 3) if i % 2 else (36, 30, 3)).astype(np.uint8)
        w.write_idx(i, mx.recordio.pack_img(mx.recordio.IRHeader(0, float(i % 3), i, 0), img,
                                            quality=3, img_fmt='.png'))
    w.close()
    return path


def test_image_record_iter_crops_normalises_and_batches(tmp_path):
    path = _image_rec(tmp_path)
    it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 28, 28), batch_size=3,
                               mean_r=10, std_r=2, scale=0.5, preprocess_threads=2)
    assert it.provide_data[0].shape == (3, 3, 28, 28)
    epochs = []
    for _ in range(2):
        epochs.append([(b.label[0].asnumpy().tolist(), b.pad) for b in it])
        it.reset()
    assert epochs == [[([0, 1, 2], 0), ([0, 1, 2], 0), ([0, 0, 1], 2)],
                      [([2, 0, 1], 0), ([2, 0, 0], 1)]]        # MXNet's round batches
    r = mx.recordio.MXIndexedRecordIO(str(tmp_path / 'img.idx'), path, 'r')
    first = mx.recordio.unpack_img(r.read_idx(0))[1][:, :, ::-1]        # RGB
    it.reset()
    got = it.next().data[0].asnumpy()[0]
    want = first[4:32, 1:29].transpose(2, 0, 1).astype(np.float32)       # the centre crop
    want[0] = (want[0] - 10) / 2
    np.testing.assert_allclose(got, want * 0.5, rtol=1e-6)
    raw = mx.io.ImageRecordUInt8Iter(path_imgrec=path, data_shape=(3, 28, 28), batch_size=2,
                                     path_imgidx=str(tmp_path / 'img.idx'), mirror=True)
    b = raw.next().data[0]
    assert b.dtype == np.uint8
    np.testing.assert_array_equal(b.asnumpy()[0], first[4:32, 1:29][:, ::-1].transpose(2, 0, 1))


def test_image_record_iter_mean_image_and_errors(tmp_path):
    path = _image_rec(tmp_path)
    mean_file = str(tmp_path / 'mean.bin')
    it = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 16, 16), batch_size=7,
                               mean_img=mean_file, rand_crop=True, rand_mirror=True, seed_aug=1)
    saved = mx.nd.load(mean_file)['mean_img']            # computed over the data, then saved
    assert saved.shape == (3, 16, 16) and 0 < saved.asnumpy().mean() < 255
    one = it.next().data[0].asnumpy()
    again = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 16, 16), batch_size=7,
                                  mean_img=mean_file, rand_crop=True, rand_mirror=True,
                                  seed_aug=1).next().data[0].asnumpy()
    np.testing.assert_array_equal(one, again)            # seed_aug fixes the augmentation
    with pytest.raises(MXNetError, match='max_rotate_angle=10 is not implemented'):
        mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 16, 16), batch_size=2,
                              max_rotate_angle=10)
    with pytest.raises(MXNetError, match='1 or 3 channels'):
        mx.io.ImageRecordIter(path_imgrec=path, data_shape=(5, 16, 16), batch_size=2)
    with pytest.raises(MXNetError, match='no such file'):
        mx.io.ImageRecordIter(path_imgrec=str(tmp_path / 'none.rec'), data_shape=(3, 8, 8),
                              batch_size=2)


def test_image_record_iter_matches_mxnet(tmp_path, mxnet_ref):
    path = _image_rec(tmp_path)
    configs = {'crop': dict(data_shape=(3, 28, 28)),
               'resize': dict(data_shape=(3, 16, 16), resize=20),
               'upscale': dict(data_shape=(3, 36, 36)),
               'gray': dict(data_shape=(1, 28, 28)),
               'norm': dict(data_shape=(3, 28, 28), mean_r=10, mean_g=20, mean_b=30, std_r=2,
                            std_g=3, std_b=4, scale=0.5),
               'mean_img': dict(data_shape=(3, 28, 28), mean_img=str(tmp_path / 'mean.bin'))}
    code = textwrap.dedent('''
        import numpy as np, mxnet as mx
        for name, kw in %r.items():
            it = mx.io.ImageRecordIter(path_imgrec=%r, batch_size=3, **kw)
            np.save(name + '.npy', np.array([b.data[0].asnumpy() for b in it]))
    ''' % (configs, path))
    mxnet_ref(code, cwd=str(tmp_path))
    for name, kw in configs.items():
        if name == 'mean_img':          # MXNet computed and saved it: use the same file
            assert (tmp_path / 'mean.bin').exists()
        it = mx.io.ImageRecordIter(path_imgrec=path, batch_size=3, **kw)
        mine = np.array([b.data[0].asnumpy() for b in it])
        theirs = np.load(tmp_path / (name + '.npy'))
        assert mine.shape == theirs.shape, name
        # resizing and grey conversion round like OpenCV to within one grey level
        np.testing.assert_allclose(mine, theirs, atol=1.0 if name in ('resize', 'upscale',
                                                                     'gray') else 1e-4,
                                   err_msg=name)
