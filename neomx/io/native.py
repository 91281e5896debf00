"""The iterators MXNet implements in C++ (``CSVIter``, ``LibSVMIter``, ``MNISTIter``), here in
Python over NumPy, with the same parameters and the same batches.

They share MXNet's batch loader: examples are read in order into a batch buffer; at the end of
the data, ``round_batch=True`` fills the last batch from the start and the next epoch begins
where that left off, ``round_batch=False`` leaves the previous batch's examples in the unfilled
rows. ``pad`` says how many rows are filling either way. ``getdata()``/``getlabel()`` give the
current batch's array (one array, not a list, as MXNet's C++ iterators do).

>>> import os, tempfile, neomx as mx
>>> path = os.path.join(tempfile.mkdtemp(), 'd.csv')
>>> _ = open(path, 'w').write('1,2\\n3,4\\n5,6\\n')
>>> it = mx.io.CSVIter(data_csv=path, data_shape=(2,), batch_size=2)
>>> [(b.data[0].asnumpy().tolist(), b.pad) for b in it]
[([[1.0, 2.0], [3.0, 4.0]], 0), ([[5.0, 6.0], [1.0, 2.0]], 1)]
"""
import gzip
import os
import struct

import numpy as np

from ..base import MXNetError, dtype_name
from ..context import cpu
from ..ndarray import array
from .io import DataBatch, DataDesc, DataIter

__all__ = ['MXDataIter', 'CSVIter', 'LibSVMIter', 'MNISTIter']


def _shape(value, what, where):
    if isinstance(value, str):
        value = value.strip('()[] ').split(',')
        value = [v for v in value if v.strip()]
    try:
        return tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise MXNetError("%s: %s must be a shape such as (3, 28, 28), got %r"
                         % (where, what, value)) from None


def _flag(value):
    if isinstance(value, str):
        return value.strip().lower() in ('1', 'true')
    return bool(value)


class MXDataIter(DataIter):
    """The base of the iterators MXNet writes in C++: examples ``data`` / ``label`` (NumPy
    arrays, one row per example) batched by MXNet's batch loader (see the module docstring).
    Subclasses load the examples; ``_order()`` may permute them each epoch."""

    def __init__(self, data, label, batch_size, round_batch=True, data_name='data',
                 label_name='softmax_label', name='MXDataIter', discard_last=False, ctx=None):
        """``data``/``label``: arrays of examples, or (for a subclass whose ``_fetch`` loads
        them) anything with ``len``, ``shape`` and ``dtype``."""
        super().__init__(batch_size)
        if batch_size <= 0:
            raise MXNetError("%s: batch_size must be positive, got %d" % (name, batch_size))
        if len(data) == 0:
            raise MXNetError("%s: the data holds no examples" % name)
        self._name = name
        self._data = data
        self._label = label
        self._round = round_batch
        self._discard = discard_last
        self._ctx = ctx or cpu()
        self._rows = self._order()
        self._pos = 0               # next example to read (an index into _rows)
        self._overflow = 0          # examples the last round batch took from the next epoch
        self._buf = np.zeros((batch_size,) + data.shape[1:], data.dtype)
        self._lbuf = np.zeros((batch_size,) + label.shape[1:], label.dtype)
        self._ibuf = np.zeros((batch_size,), np.uint64)
        self._batch = None
        self.provide_data = [DataDesc(data_name, self._buf.shape, np.dtype(data.dtype).type)]
        self.provide_label = [DataDesc(label_name, self._lbuf.shape,
                                       np.dtype(label.dtype).type)]

    def _order(self):
        return np.arange(len(self._data))

    def reset(self):
        if self._round and self._overflow:
            self._overflow = 0              # carry on where the last round batch stopped
        else:
            self._rows = self._order()
            self._pos = 0
        self._batch = None

    def _fetch(self, rows):
        """The examples ``rows`` as (data, label) arrays (subclasses may load them here)."""
        return self._data[rows], self._label[rows]

    def _fill(self, top):
        n = min(self.batch_size - top, len(self._rows) - self._pos)
        if n <= 0:
            return top
        rows = self._rows[self._pos:self._pos + n]
        self._buf[top:top + n], self._lbuf[top:top + n] = self._fetch(rows)
        self._ibuf[top:top + n] = rows
        self._pos += n
        return top + n

    def iter_next(self):
        if self._overflow:          # the epoch ended with a round batch: wait for reset()
            self._batch = None
            return False
        top = self._fill(0)
        if top == 0:
            self._batch = None
            return False
        pad = 0
        if top < self.batch_size:
            if self._discard:
                self._batch = None
                return False
            if self._round:
                self._rows = self._order()
                self._pos = 0
                while top < self.batch_size:
                    top = self._fill(top)
                pad = self._overflow = self._pos
            else:
                pad = self.batch_size - top
        self._batch = DataBatch([array(self._buf, self._ctx, dtype_name(self._buf.dtype))],
                                [array(self._lbuf, self._ctx, dtype_name(self._lbuf.dtype))],
                                pad=pad, index=self._ibuf.copy())
        return True

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return self._batch

    def _current(self):
        if self._batch is None:
            raise MXNetError("%s: no current batch (call iter_next() or next() first)"
                             % self._name)
        return self._batch

    def getdata(self):
        return self._current().data[0]

    def getlabel(self):
        return self._current().label[0]

    def getindex(self):
        return self._current().index

    def getpad(self):
        return self._current().pad


_CSV_DTYPES = {'float32': np.float32, 'int32': np.int32, 'int64': np.int64}


def _read_csv(path, shape, dtype, where):
    if not os.path.isfile(path):
        raise MXNetError("%s: cannot open %r: no such file" % (where, path))
    try:
        rows = np.loadtxt(path, delimiter=',', dtype=dtype, ndmin=2)
    except ValueError as exc:
        raise MXNetError("%s: %s is not a CSV file of %s numbers: %s"
                         % (where, path, np.dtype(dtype).name, exc)) from None
    width = int(np.prod(shape))
    if rows.shape[1] != width:
        raise MXNetError("%s: %s has %d values a row, but the shape %s needs %d"
                         % (where, path, rows.shape[1], shape, width))
    return rows.reshape((len(rows),) + shape)


class CSVIter(MXDataIter):
    """Batches of the rows of a CSV file (``data_csv``, each row reshaped to ``data_shape``)
    with labels from ``label_csv`` (zeros when absent). ``dtype``: 'float32', 'int32' or
    'int64', for data and label alike."""

    def __init__(self, data_csv, data_shape, label_csv=None, label_shape=(1,), batch_size=1,
                 round_batch=True, dtype='float32', data_name='data',
                 label_name='softmax_label', ctx=None, prefetch_buffer=4, **_):
        where = 'CSVIter'
        name = dtype_name(dtype) if not isinstance(dtype, str) else dtype
        if name not in _CSV_DTYPES:
            raise MXNetError("%s: dtype must be one of float32, int32, int64, got %r"
                             % (where, dtype))
        dt = _CSV_DTYPES[name]
        data_shape = _shape(data_shape, 'data_shape', where)
        label_shape = _shape(label_shape, 'label_shape', where)
        data = _read_csv(data_csv, data_shape, dt, where)
        if label_csv is None or label_csv == 'NULL':
            label = np.zeros((len(data),) + label_shape, dt)
        else:
            label = _read_csv(label_csv, label_shape, dt, where)
            if len(label) != len(data):
                raise MXNetError("%s: %s has %d rows but %s has %d"
                                 % (where, data_csv, len(data), label_csv, len(label)))
        if label_shape == (1,):
            label = label.reshape(len(label))
        super().__init__(data, label, int(batch_size), _flag(round_batch), data_name,
                         label_name, where, ctx=ctx)


def _read_libsvm(path, width, where):
    """Rows of a LibSVM file as (labels, dense features of ``width`` columns)."""
    if not os.path.isfile(path):
        raise MXNetError("%s: cannot open %r: no such file" % (where, path))
    labels, rows = [], []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            labels.append(float(parts[0]))
            row = np.zeros(width, np.float32)
            for item in parts[1:]:
                try:
                    k, v = item.split(':')
                    k = int(k)
                    v = float(v)
                except ValueError:
                    raise MXNetError("%s: %s line %d: %r is not index:value"
                                     % (where, path, lineno, item)) from None
                if not 0 <= k < width:
                    raise MXNetError("%s: %s line %d: feature index %d outside [0, %d)"
                                     % (where, path, lineno, k, width))
                row[k] = v
            rows.append(row)
    return np.asarray(labels, np.float32), np.asarray(rows, np.float32).reshape(-1, width)


class LibSVMIter(MXDataIter):
    """Batches of a LibSVM file (``label index:value ...``): the features as a dense
    ``(batch_size,) + data_shape`` array (neomx arrays are dense; MXNet gives a CSRNDArray),
    the labels from the file or, with ``label_libsvm``, that file's features."""

    def __init__(self, data_libsvm, data_shape, label_libsvm=None, label_shape=(1,),
                 batch_size=1, round_batch=True, data_name='data', label_name='softmax_label',
                 num_parts=1, part_index=0, ctx=None, **_):
        where = 'LibSVMIter'
        data_shape = _shape(data_shape, 'data_shape', where)
        label_shape = _shape(label_shape, 'label_shape', where)
        if len(data_shape) != 1:
            raise MXNetError("%s: data_shape must have one dimension, got %s"
                             % (where, data_shape))
        labels, data = _read_libsvm(data_libsvm, data_shape[0], where)
        if label_libsvm is not None and label_libsvm != 'NULL':
            _, labels = _read_libsvm(label_libsvm, int(np.prod(label_shape)), where)
            if len(labels) != len(data):
                raise MXNetError("%s: %s has %d rows but %s has %d"
                                 % (where, data_libsvm, len(data), label_libsvm, len(labels)))
            labels = labels.reshape((len(labels),) + label_shape)
        if num_parts > 1:
            data = np.array_split(data, num_parts)[part_index]
            labels = np.array_split(labels, num_parts)[part_index]
        super().__init__(data, labels, int(batch_size), _flag(round_batch), data_name,
                         label_name, where, ctx=ctx)


def _read_idx(path, where):
    """An array from an IDX file (MNIST's format; gzip-compressed too)."""
    if not os.path.isfile(path):
        raise MXNetError("%s: cannot open %r: no such file" % (where, path))
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rb') as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise MXNetError("%s: %s is not an IDX file of unsigned bytes" % (where, path))
    ndim = raw[3]
    dims = struct.unpack('>' + 'i' * ndim, raw[4:4 + 4 * ndim])
    body = np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise MXNetError("%s: %s holds %d bytes of data, its header says %s"
                         % (where, path, body.size, dims))
    return body.reshape(dims)


class MNISTIter(MXDataIter):
    """Batches of MNIST from its IDX files (``image``, ``label``): pixels scaled by 1/256 as
    MXNet does, ``(batch, 1, 28, 28)`` or with ``flat`` ``(batch, 784)``; shuffled (by default)
    once, from ``seed``, so every epoch has the same order; an incomplete last batch is
    dropped."""

    def __init__(self, image='./train-images-idx3-ubyte', label='./train-labels-idx1-ubyte',
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False, num_parts=1,
                 part_index=0, data_shape=None, input_shape=None, data_name='data',
                 label_name='softmax_label', ctx=None, **_):
        where = 'MNISTIter'
        images = _read_idx(image, where)
        labels = _read_idx(label, where)
        if len(images) != len(labels):
            raise MXNetError("%s: %s holds %d images but %s %d labels"
                             % (where, image, len(images), label, len(labels)))
        n = len(images)
        images = images.reshape(n, -1) if _flag(flat) else images.reshape(n, 1, *images.shape[1:])
        if num_parts > 1:
            keep = np.array_split(np.arange(n), num_parts)[part_index]
            images, labels = images[keep], labels[keep]
        self._perm = np.arange(len(images))
        if _flag(shuffle):
            np.random.RandomState(int(seed)).shuffle(self._perm)
        super().__init__((images.astype(np.float32) / 256).astype(np.float32),
                         labels.astype(np.float32), int(batch_size), False, data_name,
                         label_name, where, discard_last=True, ctx=ctx)

    def _order(self):
        return self._perm
