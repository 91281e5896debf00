"""``mx.image.ImageIter``: batches of augmented images from a RecordIO file, an image list file
or a Python list, as an ``mx.io.DataIter``."""
import logging
import os
import random

from .. import ndarray as nd
from .. import recordio
from ..base import numeric_types
from ..io import DataBatch, DataDesc, DataIter
from ..ndarray.ndarray import in_array_class, new_array
from .image import CreateAugmenter, imdecode

__all__ = ['ImageIter']


class ImageIter(DataIter):
    """Image data iterator with many augmentation choices, reading a ``.rec`` file
    (``path_imgrec``, with ``path_imgidx`` for shuffling and partitions), an image list file
    (``path_imglist``: lines ``index<TAB>label(s)<TAB>path``) or ``imglist`` (items
    ``[label or labels..., path]``), images under ``path_root``.

    Parameters
    ----------
    batch_size : int
    data_shape : tuple
        (3, height, width) of the batches' images.
    label_width : int, default 1
        Labels per example.
    path_imgrec, path_imglist, path_root, path_imgidx : str
    shuffle : bool, default False
        Shuffles the examples at every reset (needs an index for a ``.rec`` file).
    part_index, num_parts : int
        This iterator's share of the examples: the ``part_index``-th of ``num_parts`` slices.
    aug_list : list of Augmenter, optional
        Default: ``CreateAugmenter(data_shape, **kwargs)``.
    imglist : list, optional
    data_name, label_name : str
    dtype : str, default 'float32'
        The labels' dtype: int32, float32, int64 or float64.
    last_batch_handle : str, default 'pad'
        'pad' fills the last batch up with examples from the start, 'discard' drops it,
        'roll_over' carries its examples over to the first batch of the next epoch.
    kwargs
        Passed to ``CreateAugmenter``.
    """

    def __init__(self, batch_size, data_shape, label_width=1,
                 path_imgrec=None, path_imglist=None, path_root=None, path_imgidx=None,
                 shuffle=False, part_index=0, num_parts=1, aug_list=None, imglist=None,
                 data_name='data', label_name='softmax_label', dtype='float32',
                 last_batch_handle='pad', **kwargs):
        super().__init__(batch_size)
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise ValueError("ImageIter: give path_imgrec, path_imglist or imglist (a list)")
        if dtype not in ('int32', 'float32', 'int64', 'float64'):
            raise ValueError("ImageIter: %s label not supported (int32, float32, int64 or "
                             "float64)" % dtype)
        if last_batch_handle not in ('pad', 'discard', 'roll_over'):
            raise ValueError("ImageIter: last_batch_handle must be 'pad', 'discard' or "
                             "'roll_over', got %r" % (last_batch_handle,))
        self.imgrec, self.imgidx = None, None
        if path_imgrec:
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, 'r')
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, 'r')
        keys = None
        if path_imglist:
            self.imglist, keys = {}, []
            with open(path_imglist) as f:
                for line in f:
                    fields = line.strip().split('\t')
                    if fields == ['']:
                        continue
                    key = int(fields[0])
                    self.imglist[key] = (new_array(fields[1:-1], dtype=dtype), fields[-1])
                    keys.append(key)
        elif isinstance(imglist, list):
            self.imglist, keys = {}, []
            for n, item in enumerate(imglist, 1):
                if len(item) > 2:
                    label = new_array(item[:-1], dtype=dtype)
                elif isinstance(item[0], numeric_types):
                    label = new_array([item[0]], dtype=dtype)
                else:
                    label = new_array(item[0], dtype=dtype)
                self.imglist[str(n)] = (label, item[-1])
                keys.append(str(n))
        else:
            self.imglist = None
        self.path_root = path_root
        self.check_data_shape(data_shape)
        self.provide_data = [DataDesc(data_name, (batch_size,) + tuple(data_shape))]
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_label = [DataDesc(label_name, label_shape)]
        self.data_shape = tuple(data_shape)
        self.label_width = label_width
        self.shuffle = shuffle
        # the order of the examples: keys, or None to read a .rec file front to back
        if self.imgrec is None:
            self.seq = keys
        elif shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise ValueError("ImageIter: shuffling or partitioning a .rec file needs its "
                                 "index (path_imgidx)")
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise ValueError("ImageIter: part_index %d is not in [0, %d)"
                                 % (part_index, num_parts))
            share = len(self.seq) // num_parts
            self.seq = self.seq[part_index * share:(part_index + 1) * share]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data = self._cache_label = self._cache_idx = None
        self.reset()

    def reset(self):
        """Back to the first example (with 'roll_over', after the carried-over ones)."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != 'roll_over' or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        """Back to the first example, dropping carried-over ones."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache_data = self._cache_label = self._cache_idx = None

    def next_sample(self):
        """``(label, encoded image)`` of the next example; StopIteration at the end (after
        which, unless discarding, reading starts over from the first example)."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is None:
            s = self.imgrec.read()
            if s is None:
                if self.last_batch_handle != 'discard':
                    self.imgrec.reset()
                raise StopIteration
            header, img = recordio.unpack(s)
            return header.label, img
        if self.cur >= self.num_image:
            if self.last_batch_handle != 'discard':
                self.cur = 0
            raise StopIteration
        idx = self.seq[self.cur]
        self.cur += 1
        if self.imgrec is not None:
            header, img = recordio.unpack(self.imgrec.read_idx(idx))
            return (header.label if self.imglist is None else self.imglist[idx][0]), img
        label, fname = self.imglist[idx]
        return label, self.read_image(fname)

    def _batchify(self, batch_data, batch_label, start=0):
        """Fills the batch from example ``start`` on; returns how many it holds."""
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                except RuntimeError as e:
                    logging.debug('Invalid image, skipping: %s', e)
                    continue
                batch_data[i] = self.postprocess_data(self.augmentation_transform(data))
                batch_label[i] = label
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self):
        """The next ``DataBatch``."""
        if self._cache_data is not None:   # the examples carried over by 'roll_over'
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data = in_array_class(nd.zeros((self.batch_size,) + self.data_shape))
            batch_label = self._new_label()
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad:
            if self.last_batch_handle == 'discard':
                raise StopIteration
            if self.last_batch_handle == 'roll_over' and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = \
                    batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == 'pad':
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return DataBatch([batch_data], [batch_label], pad=pad)

    def _new_label(self):
        """The label array of a new batch (its contents are written by ``_batchify``)."""
        return in_array_class(nd.empty(self.provide_label[0][1]))

    def check_data_shape(self, data_shape):
        """Checks that ``data_shape`` is (3, height, width)."""
        if len(data_shape) != 3:
            raise ValueError('data_shape should have length 3, with dimensions CxHxW')
        if data_shape[0] != 3:
            raise ValueError('This iterator expects inputs to have 3 channels.')

    def check_valid_image(self, data):
        """Raises RuntimeError for an image with no pixels."""
        if len(data[0].shape) == 0:
            raise RuntimeError('Data shape is wrong')

    def imdecode(self, s):
        """Decodes an encoded image; the error names the file or record that failed."""
        try:
            return imdecode(s)
        except Exception as e:
            n = self.num_image or 1
            idx = self.seq[(self.cur % n) - 1] if self.seq is not None else (self.cur % n) - 1
            where = "filename: %s" % self.imglist[idx][1] if self.imglist is not None \
                else "index: %s" % idx
            raise RuntimeError("Broken image %s, %s" % (where, e)) from None

    def read_image(self, fname):
        """The bytes of the image file ``fname`` under ``path_root``."""
        with open(os.path.join(self.path_root or '', fname), 'rb') as f:
            return f.read()

    def augmentation_transform(self, data):
        """Applies the augmenters in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        """HWC to CHW, for the batch."""
        return nd.transpose(datum, axes=(2, 0, 1))
