"""Datasets: indexable collections of samples.

A dataset has ``__getitem__`` and ``__len__``; NDArrays, NumPy arrays and lists can be used as
datasets directly. The methods of ``Dataset`` return new datasets that transform, filter or
select samples lazily.

>>> from neomx.gluon.data import SimpleDataset
>>> ds = SimpleDataset([(1, 'a'), (2, 'b'), (3, 'c')]).transform_first(lambda x: x * 10)
>>> ds[2]
(30, 'c')
>>> list(ds.take(2))
[(10, 'a'), (20, 'b')]
"""
import os

from ... import recordio
from ...base import MXNetError
from ...ndarray import NDArray
from ...ndarray.ndarray import array_class, new_array

__all__ = ['Dataset', 'SimpleDataset', 'ArrayDataset', 'RecordFileDataset']


class Dataset:
    """Base class of datasets: subclasses define ``__getitem__(idx)`` (the idx-th sample) and
    ``__len__``."""

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """The dataset of the samples for which ``fn(sample)`` is true (``fn`` sees each
        sample once, now; a lazily transformed sample is transformed again when read)."""
        from .sampler import FilterSampler
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Part ``index`` of ``num_shards`` contiguous parts of nearly equal length (the first
        ``len % num_shards`` parts have one sample more). Shard before shuffling, so that the
        parts do not overlap."""
        if num_shards <= 0:
            raise ValueError("shard: num_shards must be positive, got %r" % (num_shards,))
        if not 0 <= index < num_shards:
            raise ValueError("shard: index %r is out of range for %d shards" % (index, num_shards))
        length = len(self)
        shard_len, rest = divmod(length, num_shards)
        start = shard_len * index + min(index, rest)
        end = start + shard_len + (index < rest)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(end - start, start))

    def take(self, count):
        """The first ``count`` samples (all of them when ``count`` is None or too large)."""
        if count is None or count > len(self):
            count = len(self)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices ``sampler`` yields."""
        from .sampler import Sampler
        if not isinstance(sampler, Sampler):
            raise TypeError('Invalid sampler type: %s. Expected gluon.data.Sampler instead.'
                            % type(sampler))
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """The dataset of ``fn(*sample)`` (``fn(sample)`` when a sample is not a tuple).

        With ``lazy=False`` every sample is transformed now, once; keep ``lazy=True`` for a
        random transform, which must draw anew at every epoch."""
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn, lazy=True):
        """As ``transform``, applying ``fn`` to the first element of each sample only (the
        data, leaving the label)."""
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over any object with ``len()`` and ``[]`` (a list, an array).

    >>> SimpleDataset([4, 5, 6])[1]
    5
    """

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self.apply(self._data[idx])

    def apply(self, item):
        """The transform of the underlying dataset's sample ``item``."""
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """A class rather than a closure, so that it pickles (worker processes may need to)."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """The i-th sample is ``(a[i], b[i], ...)`` for the arrays, lists or datasets given (just
    ``a[i]`` for one). A 1-d NDArray is kept as a NumPy array, so that its samples are scalars.

    >>> import numpy as np, neomx as mx
    >>> ds = ArrayDataset(mx.nd.zeros((3, 2)), np.array([7, 8, 9]))
    >>> x, y = ds[1]
    >>> x.shape, int(y)
    ((2,), 8)
    """

    def __init__(self, *args):
        if not args:
            raise ValueError("ArrayDataset needs at least 1 array")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise ValueError("All arrays must have the same length; array[0] has length %d "
                                 "while array[%d] has %d." % (self._length, i, len(data)))
            if isinstance(data, NDArray) and len(data.shape) == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class RecordFileDataset(Dataset):
    """The records of a RecordIO file (``.rec``, with its index ``.idx`` beside it), each a
    ``bytes`` object, in the order of the index.

    Records are read with ``os.pread``, so worker processes sharing the file never disturb each
    other's position.
    """

    def __init__(self, filename):
        self.idx_file = os.path.splitext(filename)[0] + '.idx'
        self.filename = filename
        for path in (filename, self.idx_file):
            if not os.path.isfile(path):
                raise MXNetError("RecordFileDataset: %s does not exist (expected a .rec file and "
                                 "its .idx index beside it)" % path)
        self._offsets = []
        with open(self.idx_file) as f:
            for n, line in enumerate(f, 1):
                parts = line.split()
                if not parts:
                    continue
                if len(parts) != 2:
                    raise MXNetError("RecordFileDataset: %s line %d: expected 'key<TAB>offset', "
                                     "got %r" % (self.idx_file, n, line.rstrip('\n')))
                self._offsets.append(int(parts[1]))
        self._fd = None
        self._pid = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state['_fd'] = state['_pid'] = None
        return state

    def _pread(self, n, offset):
        if self._pid != os.getpid():   # a file descriptor is not carried across processes
            self._fd = os.open(self.filename, os.O_RDONLY)
            self._pid = os.getpid()
        return os.pread(self._fd, n, offset)

    def __getitem__(self, idx):
        return recordio.read_record_at(self._pread, self._offsets[idx], self.filename)

    def __len__(self):
        return len(self._offsets)

    def __del__(self):
        if getattr(self, '_fd', None) is not None and self._pid == os.getpid():
            os.close(self._fd)



class _DownloadedDataset(Dataset):
    """A dataset of arrays read from files under ``root``: ``_get_data`` sets ``_data`` and
    ``_label``; a sample is ``transform(data[i], label[i])`` or ``(data[i], label[i])``."""

    def __init__(self, root, transform):
        self._transform = transform
        self._data = None
        self._label = None
        self._root = os.path.expanduser(root)
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError

    def _keep(self, data, label):
        """Keeps the samples read (NumPy arrays) as MXNet's datasets do, in the class of the
        code creating the dataset: the images an NDArray and the labels a NumPy array, or both
        ``mx.np.ndarray`` under NumPy semantics."""
        self._data = new_array(data, dtype=data.dtype)
        self._label = label if array_class() is NDArray else new_array(label, dtype=label.dtype)


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from ... import ndarray  # noqa: E402,F401
