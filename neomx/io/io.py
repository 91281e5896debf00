"""Data iterators of MXNet 1.x's symbolic API: ``DataDesc``, ``DataBatch``, ``DataIter`` and the
iterators written in Python (``NDArrayIter``, ``ResizeIter``, ``PrefetchingIter``).

An iterator yields ``DataBatch`` objects (lists of arrays ``data`` and ``label``, the number of
padding examples ``pad``) and says what it yields with ``provide_data`` / ``provide_label``,
lists of ``DataDesc`` (name, shape, dtype, layout), which ``Module.bind`` takes.

>>> import numpy as np, neomx as mx
>>> it = mx.io.NDArrayIter(np.arange(10).reshape(5, 2), np.arange(5), batch_size=2)
>>> it.provide_data
[DataDesc[data,(2, 2),<class 'numpy.float32'>,NCHW]]
>>> [(b.data[0].shape, b.pad) for b in it]
[((2, 2), 0), ((2, 2), 0), ((2, 2), 1)]
"""
import threading
from collections import OrderedDict, namedtuple

import numpy as np

from ..base import MXNetError, mx_real_t
from ..ndarray import NDArray, array, concat
from ..ndarray import take as _take

__all__ = ['DataDesc', 'DataBatch', 'DataIter', 'ResizeIter', 'PrefetchingIter', 'NDArrayIter']


class DataDesc(namedtuple('DataDesc', ['name', 'shape'])):
    """Name and shape of one input (a ``(name, shape)`` tuple, so code that unpacks it keeps
    working), with its ``dtype`` and ``layout`` as attributes. The layout's ``N`` marks the
    batch axis, along which data-parallel training splits the array."""

    def __new__(cls, name, shape, dtype=mx_real_t, layout='NCHW'):
        desc = super().__new__(cls, name, shape)
        desc.dtype = dtype
        desc.layout = layout
        return desc

    def __getnewargs__(self):
        return (self.name, self.shape, self.dtype, self.layout)

    def __repr__(self):
        return 'DataDesc[%s,%s,%s,%s]' % (self.name, self.shape, self.dtype, self.layout)

    @staticmethod
    def get_batch_axis(layout):
        """The batch axis of ``layout`` (0 for None; -1 when it has no ``N``: not split)."""
        return 0 if layout is None else layout.find('N')

    @staticmethod
    def get_list(shapes, types):
        """``DataDesc`` objects from ``(name, shape)`` pairs and optional ``(name, dtype)``."""
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        dtypes = dict(types)
        return [DataDesc(name, shape, dtypes[name]) for name, shape in shapes]


class DataBatch:
    """One batch: ``data`` and ``label`` (lists of arrays), ``pad`` (examples at the end that
    only fill the batch up), ``index``, ``bucket_key`` and, for iterators whose shapes change
    from batch to batch, ``provide_data`` / ``provide_label``."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError("DataBatch: data must be a list of NDArrays, got %s"
                            % type(data).__name__)
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError("DataBatch: label must be a list of NDArrays, got %s"
                            % type(label).__name__)
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [lb.shape for lb in self.label] if self.label else None
        return '%s: data shapes: %s label shapes: %s' % (type(self).__name__, data_shapes,
                                                         label_shapes)


class DataIter:
    """The base of every iterator: subclasses give ``iter_next``, ``getdata``, ``getlabel``,
    ``getpad`` (and ``reset``), or override ``next`` itself."""

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Goes back to the first batch."""

    def next(self):
        """The next ``DataBatch``; StopIteration at the end of the data."""
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                         index=self.getindex())

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Moves to the next batch; False at the end."""

    def getdata(self):
        """The data arrays of the current batch."""

    def getlabel(self):
        """The label arrays of the current batch."""

    def getindex(self):
        """The indices of the current batch's examples (None when not known)."""
        return None

    def getpad(self):
        """How many examples at the end of the current batch are padding."""


class ResizeIter(DataIter):
    """``data_iter`` cut or stretched to ``size`` batches an epoch: it starts the inner
    iterator over when that ends early, and resets it on ``reset`` if ``reset_internal``.

    >>> import neomx as mx
    >>> it = mx.io.ResizeIter(mx.io.NDArrayIter(mx.nd.ones((100, 10)), batch_size=25), 6)
    >>> len(list(it))
    6
    """

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__()
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, 'default_bucket_key'):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class _Prefetcher:
    """One background thread reading batches of one iterator, a batch ahead of the reader.
    An exception raised by the iterator is handed to the reader instead of ending the thread
    silently."""

    def __init__(self, it):
        self.it = it
        self.wanted = threading.Event()
        self.ready = threading.Event()
        self.batch = None
        self.error = None
        self.running = True
        self.wanted.set()
        self.thread = threading.Thread(target=self._loop, daemon=True,
                                       name='PrefetchingIter')
        self.thread.start()

    def _loop(self):
        while True:
            self.wanted.wait()
            self.wanted.clear()
            if not self.running:
                return
            try:
                self.batch, self.error = self.it.next(), None
            except StopIteration:
                self.batch, self.error = None, None
            except Exception as exc:        # handed to the reader in take()
                self.batch, self.error = None, exc
            self.ready.set()

    def take(self):
        """The prefetched batch (None at the end); the next one starts being read."""
        self.ready.wait()
        batch, error = self.batch, self.error
        if error is not None:
            raise error
        if batch is not None:
            self.ready.clear()
            self.wanted.set()
        return batch

    def reset(self):
        self.ready.wait()
        self.it.reset()
        self.ready.clear()
        self.wanted.set()

    def stop(self):
        self.running = False
        self.wanted.set()


class PrefetchingIter(DataIter):
    """Reads ``iters`` (one iterator or a list, whose batches are joined) in background
    threads, one batch ahead. ``rename_data`` / ``rename_label``: a dict per iterator
    renaming its inputs.

    >>> import neomx as mx
    >>> a = mx.io.NDArrayIter({'data': mx.nd.ones((100, 10))}, batch_size=25)
    >>> b = mx.io.NDArrayIter({'data': mx.nd.ones((100, 10))}, batch_size=25)
    >>> it = mx.io.PrefetchingIter([a, b], rename_data=[{'data': 'x'}, {'data': 'y'}])
    >>> [d.name for d in it.provide_data], len(list(it))
    (['x', 'y'], 4)
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        if not isinstance(iters, list):
            iters = [iters]
        if not iters:
            raise MXNetError("PrefetchingIter: needs at least one iterator")
        self.iters = iters
        self.n_iter = len(iters)
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.current_batch = None
        self._workers = [_Prefetcher(it) for it in iters]

    def __del__(self):
        for w in getattr(self, '_workers', ()):
            w.stop()

    @staticmethod
    def _renamed(descs, renames):
        if renames is None:
            return sum(descs, [])
        out = []
        for ds, names in zip(descs, renames):
            for d in ds:
                d = d if isinstance(d, DataDesc) else DataDesc(*d)
                out.append(DataDesc(names[d.name], d.shape, d.dtype))
        return out

    @property
    def provide_data(self):
        return self._renamed([it.provide_data for it in self.iters], self.rename_data)

    @property
    def provide_label(self):
        return self._renamed([it.provide_label for it in self.iters], self.rename_label)

    def reset(self):
        for w in self._workers:
            w.reset()

    def iter_next(self):
        batches = [w.take() for w in self._workers]
        if batches[0] is None:
            if any(b is not None for b in batches):
                raise MXNetError("PrefetchingIter: the iterators hold different numbers of "
                                 "batches")
            return False
        if any(b is None or b.pad != batches[0].pad for b in batches):
            raise MXNetError("PrefetchingIter: the iterators hold different numbers of "
                             "examples")
        self.current_batch = DataBatch(sum([list(b.data) for b in batches], []),
                                       sum([list(b.label or []) for b in batches], []),
                                       batches[0].pad, batches[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        return True

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return self.current_batch

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


def _is_h5(value):
    try:
        import h5py
    except ImportError:
        return False
    return isinstance(value, h5py.Dataset)


def _is_scipy_csr(value):
    try:
        import scipy.sparse as sp
    except ImportError:
        return False
    return sp.issparse(value)


def _is_csr(value):
    return _is_scipy_csr(value) or getattr(value, 'stype', 'default') == 'csr'


def _named_sources(data, allow_empty, default_name):
    """``data`` (an array, a list or a dict of them) as ``[(name, array), ...]`` sorted by
    name, as MXNet orders them; lists name their arrays ``_0_<name>``, ``_1_<name>``...
    A SciPy sparse matrix is stored densely (neomx arrays are dense)."""
    if data is None:
        data = []
    if isinstance(data, (np.ndarray, NDArray)) or _is_h5(data) or _is_scipy_csr(data):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not data and not allow_empty:
            raise MXNetError("NDArrayIter: data must not be empty")
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict(('_%d_%s' % (i, default_name), d) for i, d in enumerate(data))
    if not isinstance(data, dict):
        raise TypeError("NDArrayIter: input must be an NDArray, numpy.ndarray, h5py.Dataset, a "
                        "list of them or a dict with them as values; got %s"
                        % type(data).__name__)
    out = []
    for name, value in data.items():
        if _is_scipy_csr(value):
            value = array(value.toarray(), dtype=value.dtype)
        elif not isinstance(value, NDArray) and not _is_h5(value):
            try:
                value = array(value)
            except Exception as exc:
                raise TypeError("NDArrayIter: invalid type %s for %s: expected an NDArray, "
                                "numpy.ndarray or h5py.Dataset (%s)"
                                % (type(value).__name__, name, exc)) from None
        out.append((name, value))
    return sorted(out, key=lambda kv: kv[0])


class NDArrayIter(DataIter):
    """Batches of in-memory arrays (NDArray, numpy array, h5py dataset; a list or a dict of
    them for several inputs). ``last_batch_handle`` decides the last, incomplete batch:
    ``'pad'`` fills it up with examples from the start (``pad`` says how many), ``'discard'``
    drops it, ``'roll_over'`` carries its examples over to the first batch of the next epoch.
    ``shuffle`` permutes the examples at every ``reset`` (``idx`` holds the order).

    >>> import numpy as np, neomx as mx
    >>> it = mx.io.NDArrayIter(np.arange(5), batch_size=2, last_batch_handle='roll_over')
    >>> [b.data[0].asnumpy().tolist() for b in it]
    [[0.0, 1.0], [2.0, 3.0]]
    >>> it.reset()
    >>> it.next().data[0].asnumpy().tolist()
    [4.0, 0.0]
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle='pad',
                 data_name='data', label_name='softmax_label', layout='NCHW'):
        super().__init__(batch_size)
        if last_batch_handle not in ('pad', 'discard', 'roll_over'):
            raise MXNetError("NDArrayIter: last_batch_handle must be 'pad', 'discard' or "
                             "'roll_over', got %r" % (last_batch_handle,))
        for given in (data, label):
            values = given.values() if isinstance(given, dict) else \
                given if isinstance(given, (list, tuple)) else [given]
            if last_batch_handle != 'discard' and any(_is_csr(v) for v in values):
                raise NotImplementedError("NDArrayIter: CSR inputs are only supported with "
                                          "last_batch_handle='discard', got %r"
                                          % (last_batch_handle,))
        self.data = _named_sources(data, False, data_name)
        self.label = _named_sources(label, True, label_name)
        self._sources = {'data': self.data, 'label': self.label}
        self._original = {'data': list(self.data), 'label': list(self.label)}
        self.layout = layout
        self.num_data = self.data[0][1].shape[0]
        for nm, v in self.data + self.label:
            # more rows than the first input is allowed (MXNet reads the first num_data)
            if v.shape[0] < self.num_data:
                raise MXNetError("NDArrayIter: %s has %d examples but %s only %d"
                                 % (self.data[0][0], self.num_data, nm, v.shape[0]))
        self.idx = np.arange(self.num_data)
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = batch_size
        self.cursor = -batch_size
        self._cache = {'data': None, 'label': None}
        self.reset()
        self.data_list = [v for _, v in self.data] + [v for _, v in self.label]
        self.num_source = len(self.data_list)

    def _descs(self, sources):
        axis = self.layout.find('N')
        return [DataDesc(k, tuple(v.shape[:axis]) + (self.batch_size,) + tuple(v.shape[axis + 1:]),
                         v.dtype, layout=self.layout) for k, v in sources]

    @property
    def provide_data(self):
        return self._descs(self.data)

    @property
    def provide_label(self):
        return self._descs(self.label)

    def hard_reset(self):
        """Back to the start, forgetting examples rolled over from the last epoch."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache = {'data': None, 'label': None}

    def reset(self):
        if self.shuffle:
            self._shuffle_data()
        if (self.last_batch_handle == 'roll_over' and
                self.num_data - self.batch_size < self.cursor < self.num_data):
            # the examples of the incomplete last batch open the next epoch's first batch
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        if data[0].shape[self.layout.find('N')] != self.batch_size:
            # an incomplete last batch ('discard', 'roll_over'): kept for the next epoch
            self._cache = {'data': data, 'label': label}
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _slice(self, source, start, end):
        axis = self.layout.find('N')
        out = []
        for _, v in source:
            if isinstance(v, NDArray):
                out.append(v.slice_axis(axis=axis, begin=start, end=end))
            else:                       # h5py reads indices in increasing order only
                rows = self.idx[start:end]
                order = np.argsort(rows)
                picked = np.asarray(v[rows[order].tolist()])
                out.append(array(picked[np.argsort(order)], dtype=picked.dtype))
        return out

    def _join(self, first, second):
        if not first or not second:
            return first or second
        axis = self.layout.find('N')
        return [concat(a, b, dim=axis) for a, b in zip(first, second)]

    def _batchify(self, which):
        if self.cursor >= self.num_data:
            raise MXNetError("NDArrayIter: the iterator is at its end; call reset()")
        source = self._sources[which]
        bs, n, cur = self.batch_size, self.num_data, self.cursor
        if self.last_batch_handle == 'roll_over' and -bs < cur < 0:
            cached = self._cache[which]
            self._cache[which] = None
            return self._join(cached, self._slice(source, 0, cur + bs))
        if self.last_batch_handle == 'pad' and cur + bs > n:
            out = self._slice(source, cur, n)
            missing = cur + bs - n
            while missing > 0:          # wraps around as often as the batch needs
                take = min(missing, n)
                out = self._join(out, self._slice(source, 0, take))
                missing -= take
            return out
        return self._slice(source, cur, min(cur + bs, n))

    def getdata(self):
        return self._batchify('data')

    def getlabel(self):
        return self._batchify('label')

    def getpad(self):
        if self.last_batch_handle == 'pad' and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == 'roll_over' and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        np.random.shuffle(self.idx)
        for which in ('data', 'label'):
            shuffled = []
            for name, v in self._original[which]:
                if isinstance(v, NDArray):
                    v = _reorder(v, self.idx)
                shuffled.append((name, v))
            self._sources[which][:] = shuffled


def _reorder(arr, idx):
    """``arr``'s rows in the order ``idx`` (on ``arr``'s device)."""
    return _take(arr, array(idx, ctx=arr.context, dtype='int64'))
