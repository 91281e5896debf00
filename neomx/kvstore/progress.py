"""How far each worker of a job has got with the KVStore, for saying which one stopped.

``neomx launch`` gives its workers a folder (``NEOMX_LAUNCH_DIR``); each dist KVStore worker
keeps there, in a file of 16 bytes named after its rank, how many collectives it has started
and when it started the last. Every worker starts the same collectives in the same order, so
when one times out waiting in collective ``n``, a worker of the machine whose count is below
``n`` never started it: that one stopped calling the KVStore (it hangs, or computes for
longer than ``NEOMX_DIST_TIMEOUT``). The worker that timed out names it in its error, and the
launcher names it as the root cause (torch's report names the first worker to fail, which is
the one that gave up waiting).

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> mine = Progress(folder, 1)
>>> mine.started(); mine.started()
>>> read(folder, 1)[0], read(folder, 0)
(2, None)
"""
import mmap
import os
import struct
import time

__all__ = ['Progress', 'read', 'stopped', 'started', 'join', 'explain', 'local_ranks']

_FORMAT = '<Qd'         # collectives started, time.time() of the last start
_SIZE = struct.calcsize(_FORMAT)


def _path(folder, rank):
    return os.path.join(folder, 'kvstore-rank%d' % rank)


class Progress:
    """This worker's count, written to its file on each start (a store into shared memory:
    no system call)."""

    def __init__(self, folder, rank):
        self.count = 0
        fd = os.open(_path(folder, rank), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            os.ftruncate(fd, _SIZE)
            self.view = mmap.mmap(fd, _SIZE)
        finally:
            os.close(fd)
        struct.pack_into(_FORMAT, self.view, 0, 0, time.time())

    def started(self):
        self.count += 1
        struct.pack_into(_FORMAT, self.view, 0, self.count, time.time())


_MINE = None


def join(rank):
    """Keeps this process's count in the launcher's folder, if it gave one."""
    global _MINE
    folder = os.environ.get('NEOMX_LAUNCH_DIR')
    if folder and _MINE is None:
        try:
            _MINE = Progress(folder, rank)
        except (OSError, ValueError):
            _MINE = None        # no folder to write to: nothing to say later, nothing breaks


def started():
    """Counts one more collective started by this process."""
    if _MINE is not None:
        _MINE.started()


def read(folder, rank):
    """``(count, time of the last start)`` of worker ``rank``, or None when it kept none."""
    try:
        with open(_path(folder, rank), 'rb') as f:
            raw = f.read(_SIZE)
    except OSError:
        return None
    if len(raw) != _SIZE:
        return None
    return struct.unpack(_FORMAT, raw)


def stopped(folder, ranks):
    """``(behind, furthest)``: the workers among ``ranks`` that started fewer collectives than
    the furthest one, as ``[(rank, count, time)]`` from the least advanced, and the furthest
    ``(rank, count, time)``; ``([], None)`` when none is behind or nothing was kept."""
    seen = []
    for r in ranks:
        p = read(folder, r)
        if p is not None:
            seen.append((r, p[0], p[1]))
    if len(seen) < 2:
        return [], None
    furthest = max(seen, key=lambda s: (s[1], -s[2]))
    behind = sorted((s for s in seen if s[1] < furthest[1]), key=lambda s: (s[1], s[2]))
    return behind, (furthest if behind else None)


def local_ranks():
    """The ranks of the workers of this machine (from the launcher's environment)."""
    env = os.environ
    try:
        rank, local = int(env['RANK']), int(env['LOCAL_RANK'])
        return list(range(rank - local, rank - local + int(env['LOCAL_WORLD_SIZE'])))
    except (KeyError, ValueError):
        return []


def explain(rank, ranks):
    """What this worker (``rank``), whose collective failed, can tell of the workers of its
    machine (``ranks``) that stopped calling the KVStore: a sentence, or ''."""
    folder = os.environ.get('NEOMX_LAUNCH_DIR')
    if not folder or _MINE is None:
        return ''
    behind = [(r, n, t) for r, n, t in stopped(folder, ranks)[0] if r != rank]
    if not behind:
        return ''
    now = time.time()
    return ' %s: %s stopped calling the KVStore.' % (
        '; '.join('Worker %d started %d collective(s), the last %.0f s ago, to this worker\'s '
                  '%d' % (r, n, now - t, _MINE.count) for r, n, t in behind),
        'it' if len(behind) == 1 else 'they')
