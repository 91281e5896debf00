"""Samplers of ``gluon.contrib.data``."""
from ...data import sampler

__all__ = ['IntervalSampler']


class IntervalSampler(sampler.Sampler):
    """The indices [0, length) taken every ``interval``: 0, interval, 2 * interval, ..., then
    (with ``rollover``) 1, 1 + interval, ... until every index was given once.

    >>> list(IntervalSampler(13, interval=3))
    [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    >>> list(IntervalSampler(13, interval=3, rollover=False))
    [0, 3, 6, 9, 12]
    """

    def __init__(self, length, interval, rollover=True):
        if interval > length:
            raise ValueError("Interval {} must be smaller than or equal to length {}"
                             .format(interval, length))
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self):
        for start in range(self._interval if self._rollover else 1):
            yield from range(start, self._length, self._interval)

    def __len__(self):
        return self._length
