"""``gluon.data.vision``: the image datasets over RecordIO files and folders, read by the
DataLoader (worker processes too), and the transforms built on ``mx.image``."""
import random
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx import gluon, nd
from neomx.base import MXNetError
from neomx.gluon.data.vision import transforms

pytest.importorskip('PIL')


def _png(seed, h=9, w=11):
    from neomx.image import _codec
    img = np.random.RandomState(seed).randint(0, 256, (h, w, 3)).astype(np.uint8)
    return img, _codec.encode(img, '.png')


def _record_file(tmp_path, n=6):
    idx, rec = str(tmp_path / 'data.idx'), str(tmp_path / 'data.rec')
    w = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    images = []
    for i in range(n):
        img, png = _png(i)
        images.append(img)
        w.write_idx(i, mx.recordio.pack((0, float(i), i, 0), png))
    w.close()
    return rec, images


def _identity(x, y):
    return x, y


def test_image_record_dataset(tmp_path):
    rec, images = _record_file(tmp_path)
    ds = gluon.data.vision.ImageRecordDataset(rec)
    assert len(ds) == 6
    img, label = ds[4]
    assert (img.asnumpy() == images[4]).all() and label == 4.0
    assert ds.transform_first(lambda x: x.astype('float32') / 255)[1][0].dtype == np.float32
    gray = gluon.data.vision.ImageRecordDataset(rec, flag=0)[0][0]
    assert gray.shape == (9, 11, 1)
    for workers in (0, 2):
        loader = gluon.data.DataLoader(ds.transform(_identity), batch_size=1,
                                       num_workers=workers)
        for i, (x, y) in enumerate(loader):
            assert x.shape == (1, 9, 11, 3) and y.asscalar() == i


def test_record_file_dataset_reads_split_records(tmp_path):
    """A record holding the magic number at an aligned offset is written in parts."""
    import struct
    magic = struct.pack('<I', 0xced7230a)
    payloads = [b'abcd' + magic + b'xy', magic * 2, b'plain']
    w = mx.recordio.MXIndexedRecordIO(str(tmp_path / 'a.idx'), str(tmp_path / 'a.rec'), 'w')
    for i, p in enumerate(payloads):
        w.write_idx(i, p)
    w.close()
    ds = gluon.data.RecordFileDataset(str(tmp_path / 'a.rec'))
    assert [ds[i] for i in range(3)] == payloads
    with pytest.raises(MXNetError, match='does not exist'):
        gluon.data.RecordFileDataset(str(tmp_path / 'missing.rec'))


def test_image_folder_dataset(tmp_path):
    for cls, n in (('cat', 2), ('dog', 3)):
        (tmp_path / cls).mkdir()
        for i in range(n):
            (tmp_path / cls / ('%d.png' % i)).write_bytes(_png(i)[1])
    (tmp_path / 'dog' / 'notes.txt').write_text('not an image')
    (tmp_path / 'README').write_text('not a folder')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        ds = gluon.data.vision.ImageFolderDataset(str(tmp_path))
    assert len(caught) == 2
    assert ds.synsets == ['cat', 'dog'] and len(ds) == 5
    assert [label for _, label in ds.items] == [0, 0, 1, 1, 1]
    img, label = ds[3]
    assert img.shape == (9, 11, 3) and label == 1 and (img.asnumpy() == _png(1)[0]).all()
    with pytest.raises(MXNetError, match='not a folder'):
        gluon.data.vision.ImageFolderDataset(str(tmp_path / 'nowhere'))


def test_color_transforms_keep_shape_and_dtype():
    mx.random.seed(0)
    x = nd.array(np.random.randint(0, 256, (8, 10, 3)), dtype='uint8')
    for t in (transforms.RandomBrightness(0.3), transforms.RandomContrast(0.3),
              transforms.RandomSaturation(0.3), transforms.RandomHue(0.1),
              transforms.RandomColorJitter(0.1, 0.1, 0.1, 0.1), transforms.RandomLighting(0.1)):
        out = t(x.astype('float32') if isinstance(t, transforms.RandomLighting) else x)
        assert out.shape == (8, 10, 3)
    # brightness 0: the factor is exactly 1
    assert (transforms.RandomBrightness(0)(x).asnumpy() == x.asnumpy()).all()
    # hue jitter of 0 turns leaves the image as it is (to float rounding)
    f = x.astype('float32')
    np.testing.assert_allclose(transforms.RandomHue(0)(f).asnumpy(), f.asnumpy(), atol=1e-3)


def test_transform_pipeline_hybridizes():
    random.seed(0)
    t = transforms.Compose([transforms.Resize(40), transforms.CenterCrop(32),
                            transforms.RandomResizedCrop(24), transforms.RandomFlipLeftRight(),
                            transforms.RandomColorJitter(0.1, 0.1, 0.1, 0.1),
                            transforms.RandomLighting(0.1), transforms.ToTensor(),
                            transforms.RandomRotation([-10., 10.]),
                            transforms.Normalize([0, 0, 0], [1, 1, 1])])
    out = t(nd.ones((45, 60, 3), dtype='uint8'))
    assert out.shape == (3, 24, 24) and out.dtype == np.float32


def test_rotate_transforms():
    x = nd.array([[[0., 0, 0], [0, 0, 1], [0, 0, 0]]])
    assert transforms.Rotate(90)(x).asnumpy().round(5).tolist() == [[[0, 1, 0], [0, 0, 0],
                                                                     [0, 0, 0]]]
    assert transforms.Rotate(10.)(nd.ones((3, 3, 30, 60))).shape == (3, 3, 30, 60)
    with pytest.raises(TypeError, match='float32'):
        transforms.Rotate(10.)(nd.ones((3, 30, 60), dtype='uint8'))
    with pytest.raises(ValueError):
        transforms.RandomRotation([10, -10])
    with pytest.raises(ValueError):
        transforms.RandomRotation([-10, 10], rotate_with_proba=1.1)
    data = nd.random.normal(shape=(3, 8, 9))
    same = transforms.RandomRotation([-100., 100.], rotate_with_proba=0.0)(data)
    assert (same.asnumpy() == data.asnumpy()).all()


def test_crop_transforms_follow_image_functions():
    random.seed(1)
    x = nd.array(np.random.randint(0, 256, (20, 30, 3)), dtype='uint8')
    expected = mx.image.center_crop(x, (12, 8), 1)[0].asnumpy()
    assert (transforms.CenterCrop((12, 8))(x).asnumpy() == expected).all()
    for _ in range(10):
        assert transforms.RandomResizedCrop(7)(x).shape == (7, 7, 3)
