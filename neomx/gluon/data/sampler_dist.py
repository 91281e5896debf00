"""Samplers giving each process of a data-parallel job its own share of a dataset.

``DistributedSampler`` deals the indices out in turn (process ``r`` of ``n`` gets positions
``r, r + n, r + 2n, ...`` of the epoch's order), so that the first ``b`` samples of each of
the ``n`` processes are together the first ``n * b`` samples of the epoch: the job trains on
the same global batches as one process with ``n`` times the batch size. ``SplitSampler`` is
the contiguous split used by MXNet's distributed examples.

>>> from neomx.gluon.data.sampler_dist import DistributedSampler
>>> list(DistributedSampler(10, num_replicas=2, rank=1, shuffle=False))
[1, 3, 5, 7, 9]
>>> list(DistributedSampler(5, num_replicas=2, rank=1, shuffle=False))   # padded: same length
[1, 3, 0]
"""
import os

import numpy as np

from ...base import MXNetError
from .sampler import Sampler

__all__ = ['DistributedSampler', 'SplitSampler', 'job_rank']


def job_rank():
    """(rank, number of processes) of this process in its job: from torch.distributed once a
    'dist' KVStore has joined the group, else from the launcher's RANK and WORLD_SIZE, else
    (0, 1)."""
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except ImportError:     # pragma: no cover - torch built without distributed
        pass
    try:
        return int(os.environ.get('RANK', 0)), int(os.environ.get('WORLD_SIZE', 1))
    except ValueError:
        raise MXNetError("RANK=%r, WORLD_SIZE=%r: expected integers"
                         % (os.environ.get('RANK'), os.environ.get('WORLD_SIZE'))) from None


def _check(length, num_replicas, rank):
    if num_replicas is None or rank is None:
        r, n = job_rank()
        rank = r if rank is None else rank
        num_replicas = n if num_replicas is None else num_replicas
    if not isinstance(length, (int, np.integer)) or length < 0:
        raise MXNetError("distributed sampler: length must be a non-negative integer, got %r"
                         % (length,))
    if num_replicas < 1 or not 0 <= rank < num_replicas:
        raise MXNetError("distributed sampler: expected 0 <= rank < num_replicas, got rank %r "
                         "and num_replicas %r" % (rank, num_replicas))
    return int(length), int(num_replicas), int(rank)


class DistributedSampler(Sampler):
    """The indices of this process's shard of ``range(length)``.

    Parameters
    ----------
    length : int
        Size of the dataset.
    num_replicas, rank : int, optional
        Number of processes and this one's rank (default: from the job, see ``job_rank``).
    shuffle : bool
        Shuffle every epoch, the same way in every process (a generator seeded with
        ``seed + epoch``; call ``set_epoch`` at the start of each epoch).
    drop_last : bool
        Drop the tail that does not divide evenly, instead of padding it with indices from
        the start, so that every process sees the same number of samples.
    """

    def __init__(self, length, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        self._length, self._n, self._rank = _check(length, num_replicas, rank)
        self._shuffle = shuffle
        self._seed = int(seed)
        self._epoch = 0
        n = self._n
        self._num = self._length // n if drop_last else -(-self._length // n)
        self._total = self._num * n

    def set_epoch(self, epoch):
        """Makes the next pass use the order of ``epoch`` (the same in every process)."""
        self._epoch = int(epoch)

    def __iter__(self):
        if self._shuffle:
            order = np.random.RandomState(self._seed + self._epoch).permutation(self._length)
        else:
            order = np.arange(self._length)
        if self._total > self._length:
            reps = -(-self._total // max(self._length, 1))
            order = np.tile(order, reps)
        order = order[:self._total]
        return iter(order[self._rank::self._n].tolist())

    def __len__(self):
        return self._num


class SplitSampler(Sampler):
    """Part ``part_index`` of ``num_parts`` contiguous parts of ``range(length)``, shuffled at
    every pass (the sampler of MXNet's distributed training examples).

    >>> sorted(SplitSampler(10, num_parts=3, part_index=2))
    [6, 7, 8]
    """

    def __init__(self, length, num_parts=None, part_index=None):
        self._length, n, r = _check(length, num_parts, part_index)
        self._part_len = self._length // n
        self._start = self._part_len * r

    def __iter__(self):
        idx = list(range(self._start, self._start + self._part_len))
        np.random.shuffle(idx)
        return iter(idx)

    def __len__(self):
        return self._part_len
