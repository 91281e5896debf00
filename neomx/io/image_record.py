"""``ImageRecordIter``: batches of images from a RecordIO file (``.rec``, as MXNet's ``im2rec``
writes it), read with ``mx.recordio`` and decoded with ``mx.image``.

Each image goes through MXNet's default augmenter, in MXNet's order:

1. resize so the shorter edge is ``resize`` (when given);
2. scale up an image smaller than ``data_shape``, keeping its aspect ratio;
3. crop ``data_shape``: in the centre, or at a random place with ``rand_crop``;
4. mirror: always with ``mirror``, half of the time with ``rand_mirror``;
5. normalise: ``(x - mean) / std * scale``, where ``mean`` is ``mean_img`` (a file: loaded, or
   computed over the data and saved when it does not exist) or ``mean_r/g/b``.

The images come out RGB, channels first, float32 (``ImageRecordUInt8Iter``: raw uint8 pixels).
Batching is MXNet's batch loader's (``round_batch``, ``pad``; see ``native.py``); ``shuffle``
permutes the records each epoch from ``seed``.

>>> import os, tempfile, numpy as np, neomx as mx
>>> d = tempfile.mkdtemp()
>>> w = mx.recordio.MXRecordIO(os.path.join(d, 'a.rec'), 'w')
>>> for i in range(4):
...     img = np.full((10, 12, 3), 40 * i, np.uint8)
...     w.write(mx.recordio.pack_img((0, float(i), i, 0), img, quality=3, img_fmt='.png'))
>>> w.close()
>>> it = mx.io.ImageRecordIter(path_imgrec=os.path.join(d, 'a.rec'), data_shape=(3, 8, 8),
...                            batch_size=2)
>>> [(b.data[0].shape, b.label[0].asnumpy().tolist()) for b in it]
[((2, 3, 8, 8), [0.0, 1.0]), ((2, 3, 8, 8), [2.0, 3.0])]
"""
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..base import MXNetError
from .native import MXDataIter, _flag, _shape

__all__ = ['ImageRecordIter', 'ImageRecordUInt8Iter', 'ImageRecordInt8Iter',
           'ImageRecordIter_v1', 'ImageRecordUInt8Iter_v1']

# Augmentations of MXNet's default augmenter that this iterator does not implement, with the
# value that leaves them off: a different value is an error rather than silently ignored.
_UNSUPPORTED = {'max_rotate_angle': 0, 'rotate': -1, 'max_aspect_ratio': 0,
                'min_aspect_ratio': None, 'max_shear_ratio': 0, 'max_crop_size': -1,
                'min_crop_size': -1, 'max_random_scale': 1, 'min_random_scale': 1,
                'max_random_area': 1, 'min_random_area': 1, 'max_img_size': 1e10,
                'min_img_size': 0, 'random_h': 0, 'random_s': 0, 'random_l': 0,
                'brightness': 0, 'contrast': 0, 'saturation': 0, 'pca_noise': 0,
                'max_random_contrast': 0, 'max_random_illumination': 0,
                'random_resized_crop': False, 'pad': 0}


def _record_offsets(path):
    """The byte offset of every record of a RecordIO file, in order."""
    from ..recordio import read_record
    offsets = []
    with open(path, 'rb') as f:
        while True:
            pos = f.tell()
            if read_record(f, path) is None:
                return offsets
            offsets.append(pos)


def _index_offsets(path):
    offsets = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            try:
                offsets.append(int(fields[1]))
            except (IndexError, ValueError):
                raise MXNetError("ImageRecordIter: line %d of %s is %r, expected "
                                 "'key<TAB>offset'" % (n, path, line)) from None
    return offsets


def _image_list(path, label_width):
    """``{image id: labels}`` from an .lst file (``index<TAB>label...<TAB>path``)."""
    labels = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.strip().split('\t')
            if fields == ['']:
                continue
            if len(fields) < label_width + 2:
                raise MXNetError("ImageRecordIter: line %d of %s has %d fields; with "
                                 "label_width=%d it needs %d" % (n, path, len(fields),
                                                                 label_width, label_width + 2))
            labels[int(float(fields[0]))] = np.asarray(fields[1:1 + label_width], np.float32)
    return labels


class _Records:
    """``len``/``shape``/``dtype`` of the examples, for the batch loader's buffers."""

    def __init__(self, n, shape, dtype):
        self._n, self.shape, self.dtype = n, (n,) + tuple(shape), dtype

    def __len__(self):
        return self._n


class ImageRecordIter(MXDataIter):
    """See the module docstring. Parameters are MXNet's; ``preprocess_threads`` decode in
    parallel; ``prefetch_buffer`` and ``verbose`` are accepted and unused."""

    def __init__(self, path_imgrec, data_shape, batch_size, path_imgidx='', path_imglist='',
                 label_width=1, shuffle=False, seed=0, round_batch=True, num_parts=1,
                 part_index=0, resize=-1, rand_crop=False, rand_mirror=False, mirror=False,
                 mean_img='', mean_r=0.0, mean_g=0.0, mean_b=0.0, mean_a=0.0, std_r=1.0,
                 std_g=1.0, std_b=1.0, std_a=1.0, scale=1.0, inter_method=1, dtype='float32',
                 data_name='data', label_name='softmax_label', preprocess_threads=4,
                 prefetch_buffer=4, verbose=True, seed_aug=None, fill_value=255, ctx=None,
                 **kwargs):
        where = type(self).__name__
        for key, value in kwargs.items():
            if key in _UNSUPPORTED:
                if value != _UNSUPPORTED[key] and value is not None:
                    raise MXNetError("%s: the augmentation %s=%r is not implemented in neomx "
                                     "(supported: resize, rand_crop, rand_mirror, mirror, "
                                     "mean/std/scale normalisation)" % (where, key, value))
            elif key not in ('aug_seq', 'shuffle_chunk_size', 'shuffle_chunk_seed',
                             'device_id'):
                raise TypeError("%s got an unexpected keyword argument %r" % (where, key))
        shape = _shape(data_shape, 'data_shape', where)
        if len(shape) != 3 or shape[0] not in (1, 3):
            raise MXNetError("%s: data_shape must be (channels, height, width) with 1 or 3 "
                             "channels, got %s" % (where, shape))
        if not os.path.isfile(path_imgrec):
            raise MXNetError("%s: cannot open %r: no such file" % (where, path_imgrec))
        self._path = path_imgrec
        self._offsets = _index_offsets(path_imgidx) if path_imgidx else \
            _record_offsets(path_imgrec)
        if num_parts > 1:
            self._offsets = np.array_split(np.asarray(self._offsets), num_parts)[part_index]
            self._offsets = [int(o) for o in self._offsets]
        if not self._offsets:
            raise MXNetError("%s: %s holds no records" % (where, path_imgrec))
        self._shape = shape
        self._label_width = int(label_width)
        self._list = _image_list(path_imglist, self._label_width) if path_imglist else None
        self._resize = int(resize)
        self._rand_crop, self._rand_mirror = _flag(rand_crop), _flag(rand_mirror)
        self._mirror = _flag(mirror)
        self._interp = int(inter_method)
        self._raw = str(dtype) in ('uint8', 'int8')
        self._out_dtype = {'float32': np.float32, 'uint8': np.uint8, 'int8': np.int8}.get(
            str(dtype))
        if self._out_dtype is None:
            raise MXNetError("%s: dtype must be float32, uint8 or int8, got %r" % (where, dtype))
        self._shuffle = _flag(shuffle)
        self._rng = np.random.RandomState(int(seed))
        self._aug_rng = np.random.RandomState(int(seed if seed_aug is None else seed_aug))
        self._threads = max(1, int(preprocess_threads))
        self._pool = None
        channels = shape[0]
        self._std = np.array([std_r, std_g, std_b][:channels] if channels == 3 else [std_r],
                             np.float32).reshape(channels, 1, 1)
        self._scale = float(scale)
        self._mean = np.array([mean_r, mean_g, mean_b][:channels] if channels == 3
                              else [mean_r], np.float32).reshape(channels, 1, 1)
        label_shape = (self._label_width,) if self._label_width > 1 else ()
        n = len(self._offsets)
        if mean_img and not self._raw:
            self._mean = self._mean_image(mean_img)
        super().__init__(_Records(n, shape, self._out_dtype),
                         _Records(n, label_shape, np.float32), int(batch_size),
                         _flag(round_batch), data_name, label_name, where, ctx=ctx)

    # -- loading -------------------------------------------------------------------------
    def _order(self):
        rows = np.arange(len(self._offsets))
        if self._shuffle:
            self._rng.shuffle(rows)
        return rows

    def _read(self, row):
        from ..recordio import read_record, unpack_img
        with open(self._path, 'rb') as f:
            f.seek(self._offsets[row])
            buf = read_record(f, self._path)
        if buf is None:
            raise MXNetError("%s: no record at offset %d of %s"
                             % (type(self).__name__, self._offsets[row], self._path))
        header, img = unpack_img(buf, 1 if self._shape[0] == 3 else 0)
        if img.ndim == 2:
            img = img[:, :, None]
        else:
            img = img[:, :, ::-1]                   # OpenCV's BGR to RGB
        if self._list is not None:
            label = self._list.get(int(header.id))
            if label is None:
                raise MXNetError("%s: image id %d is not in the image list"
                                 % (type(self).__name__, header.id))
        else:
            label = np.asarray(header.label, np.float32).reshape(-1)
        if label.size < self._label_width:
            raise MXNetError("%s: record %d has %d labels, label_width is %d"
                             % (type(self).__name__, row, label.size, self._label_width))
        label = label[:self._label_width]
        return img, (label if self._label_width > 1 else label[0])

    def _resized(self, img, w, h):
        from ..image import imresize
        from ..ndarray import array
        return imresize(array(img, dtype='uint8'), w, h, interp=self._interp).asnumpy()

    def _augment(self, img, rng, randomize=True):
        """One image through resize, crop and mirror (``_shape`` HWC uint8 out)."""
        c, h, w = self._shape
        if self._resize > 0:
            H, W = img.shape[:2]
            if H < W:
                img = self._resized(img, int(W * self._resize / H), self._resize)
            else:
                img = self._resized(img, self._resize, int(H * self._resize / W))
        H, W = img.shape[:2]
        if H < h or W < w:                      # too small to crop: scale up, same aspect
            f = max(h / H, w / W)
            img = self._resized(img, max(w, int(round(W * f))), max(h, int(round(H * f))))
            H, W = img.shape[:2]
        if randomize and self._rand_crop:
            y, x = rng.randint(0, H - h + 1), rng.randint(0, W - w + 1)
        else:
            y, x = (H - h) // 2, (W - w) // 2
        img = img[y:y + h, x:x + w]
        if self._mirror or (randomize and self._rand_mirror and rng.rand() < 0.5):
            img = img[:, ::-1]
        if img.ndim == 2:
            img = img[:, :, None]
        return img

    def _example(self, row, rng):
        img, label = self._read(row)
        chw = self._augment(img, rng).transpose(2, 0, 1)
        if self._raw:
            return chw.astype(self._out_dtype), label
        return ((chw.astype(np.float32) - self._mean) / self._std * self._scale), label

    def _fetch(self, rows):
        # one draw per image, taken here in order, so the threads do not change the result
        seeds = self._aug_rng.randint(0, 2 ** 31, size=len(rows))
        work = [(int(r), np.random.RandomState(s)) for r, s in zip(rows, seeds)]
        if self._threads > 1 and len(work) > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads)
            done = list(self._pool.map(lambda a: self._example(*a), work))
        else:
            done = [self._example(*a) for a in work]
        return np.stack([d for d, _ in done]), np.asarray([lb for _, lb in done], np.float32)

    def _mean_image(self, path):
        """The mean image of ``path`` (an .nd file), computed over the data and saved there
        when the file does not exist, as MXNet does."""
        from .. import ndarray as nd
        if os.path.isfile(path):
            saved = nd.load(path)
            value = saved.get('mean_img', next(iter(saved.values()))) \
                if isinstance(saved, dict) else saved[0]
            mean = value.asnumpy().astype(np.float32)
            if mean.shape != tuple(self._shape):
                raise MXNetError("%s: the mean image in %s has shape %s, data_shape is %s"
                                 % (type(self).__name__, path, mean.shape, self._shape))
            return mean
        total = np.zeros(self._shape, np.float64)
        for row in range(len(self._offsets)):
            img, _ = self._read(row)
            total += self._augment(img, None, randomize=False).transpose(2, 0, 1)
        mean = (total / len(self._offsets)).astype(np.float32)
        nd.save(path, {'mean_img': nd.array(mean)})
        return mean

    def __del__(self):
        if getattr(self, '_pool', None) is not None:
            self._pool.shutdown(wait=False)


def ImageRecordUInt8Iter(**kwargs):
    """``ImageRecordIter`` giving the raw uint8 pixels (no normalisation)."""
    return ImageRecordIter(dtype='uint8', **kwargs)


def ImageRecordInt8Iter(**kwargs):
    """``ImageRecordIter`` giving int8 pixels (no normalisation)."""
    return ImageRecordIter(dtype='int8', **kwargs)


ImageRecordIter_v1 = ImageRecordIter
ImageRecordUInt8Iter_v1 = ImageRecordUInt8Iter
