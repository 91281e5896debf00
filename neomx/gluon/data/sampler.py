"""Samplers: iterables of dataset indices (or of lists of indices, for ``BatchSampler``).

A ``DataLoader`` draws its indices from a sampler, so a sampler that yields only one process's
share of the indices (``IntervalSampler`` here, or a distributed sampler) is all a data
parallel job needs to give each process its own shard.

>>> from neomx.gluon.data import BatchSampler, SequentialSampler
>>> list(BatchSampler(SequentialSampler(10), 3, 'keep'))
[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
"""
import numpy as np

__all__ = ['Sampler', 'SequentialSampler', 'RandomSampler', 'FilterSampler', 'BatchSampler',
           'IntervalSampler']

_LAST_BATCH = ('keep', 'discard', 'rollover')


class Sampler:
    """Base class of samplers: subclasses define ``__iter__`` and ``__len__``."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """The indices ``start, start + 1, ..., start + length - 1`` in order.

    >>> list(SequentialSampler(3, start=2))
    [2, 3, 4]
    """

    def __init__(self, length, start=0):
        self._length = length
        self._start = start

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """The indices ``0 .. length - 1`` in a random order, drawn anew for every pass.

    The order comes from NumPy's global generator, as in MXNet, so ``numpy.random.seed``
    makes it reproducible.

    >>> sorted(RandomSampler(4))
    [0, 1, 2, 3]
    """

    def __init__(self, length):
        self._length = length

    def __iter__(self):
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices.tolist())

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of ``dataset`` for which ``fn(sample)`` is true.

    >>> list(FilterSampler(lambda x: x % 2 == 0, [5, 6, 7, 8]))
    [1, 3]
    """

    def __init__(self, fn, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


class IntervalSampler(Sampler):
    """Every ``interval``-th index of ``[0, length)``: ``0, interval, 2 * interval, ...``; with
    ``rollover`` the pass then continues from 1, 2, ... until every index is visited.

    >>> list(IntervalSampler(7, interval=3))
    [0, 3, 6, 1, 4, 2, 5]
    >>> list(IntervalSampler(7, interval=3, rollover=False))
    [0, 3, 6]
    """

    def __init__(self, length, interval, rollover=True):
        if not 0 < interval <= length:
            raise ValueError("IntervalSampler: interval %r must be in [1, length=%d]"
                             % (interval, length))
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self):
        for i in range(self._interval if self._rollover else 1):
            yield from range(i, self._length, self._interval)

    def __len__(self):
        if self._rollover:
            return self._length
        return (self._length + self._interval - 1) // self._interval


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    ``last_batch`` says what happens to a last, incomplete batch: ``'keep'`` yields it,
    ``'discard'`` drops it, ``'rollover'`` carries its indices over to the start of the next
    pass.

    >>> s = BatchSampler(SequentialSampler(5), 2, 'rollover')
    >>> list(s), list(s)
    ([[0, 1], [2, 3]], [[4, 0], [1, 2], [3, 4]])
    """

    def __init__(self, sampler, batch_size, last_batch='keep'):
        if last_batch not in _LAST_BATCH:
            raise ValueError("last_batch must be one of 'keep', 'discard', or 'rollover', "
                             "but got %s" % (last_batch,))
        if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError("batch_size must be a positive integer, but got %r" % (batch_size,))
        self._sampler = sampler
        self._batch_size = int(batch_size)
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        size = self._batch_size
        for i in self._sampler:
            batch.append(i)
            if len(batch) == size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == 'keep':
                yield batch
            elif self._last_batch == 'rollover':
                self._prev = batch

    def __len__(self):
        if self._last_batch == 'keep':
            return (len(self._sampler) + self._batch_size - 1) // self._batch_size
        if self._last_batch == 'discard':
            return len(self._sampler) // self._batch_size
        return (len(self._prev) + len(self._sampler)) // self._batch_size
