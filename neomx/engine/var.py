"""Vars and dependency tracking.

A ``Var`` stands for one piece of mutable state (an array's storage, shared by its views; the
random generator of a device; a KVStore buffer). The tracker records, for each Var, the last
operation pushed that writes it and the latest operation of each worker that reads it since
that write. From these it answers, for a new operation, which earlier operations on *other*
workers it must wait for: operations on one worker run in push order, so dependencies within
a worker are satisfied by the order alone (as kernels on one CUDA stream are).

Operations are named by ``(worker, seq)``: ``seq`` counts the operations pushed to that worker,
and the worker's ``done`` counter tells which have completed.
"""

__all__ = ['Var', 'track', 'pending']


class Var:
    """Engine handle of a piece of mutable state. Subclasses add the state itself
    (an NDArray's storage adds the tensor)."""
    __slots__ = ('writer', 'wseq', 'readers', 'error', '__weakref__')

    # Whether an operation that fails while writing this Var leaves it failed: true for data,
    # which the operation may have left unset or half-written; false for state that stays
    # valid whatever an operation did with it (a device's random generator).
    fails_with_writer = True

    def __init__(self):
        self.writer = None     # worker of the last write pushed, or None
        self.wseq = 0          # its sequence number on that worker
        self.readers = None    # {worker: seq} of reads pushed since that write
        self.error = None      # exception of the failed op that last wrote it, if it failed


def track(worker, seq, reads, writes):
    """Registers operation ``(worker, seq)`` reading ``reads`` and writing ``writes``; returns
    the ``(other_worker, seq)`` pairs it must wait for, or None. Called with the engine's push
    lock held, so that sequence numbers and queue order agree."""
    deps = None
    for v in reads:
        w = v.writer
        if w is not None and w is not worker and w.done < v.wseq:
            deps = _add(deps, w, v.wseq)
        r = v.readers
        if r is None:
            v.readers = {worker: seq}
        else:
            r[worker] = seq
    for v in writes:
        w = v.writer
        if w is not None and w is not worker and w.done < v.wseq:
            deps = _add(deps, w, v.wseq)
        r = v.readers
        if r is not None:
            for w, s in r.items():
                if w is not worker and w.done < s:
                    deps = _add(deps, w, s)
            v.readers = None
        v.writer = worker
        v.wseq = seq
    return deps


def _add(deps, worker, seq):
    # Dependencies on other workers are rare: the list is made only when there is one.
    if deps is None:
        return [(worker, seq)]
    deps.append((worker, seq))
    return deps


def pending(var, for_write=False):
    """The ``(worker, seq)`` operations a reader (or, with ``for_write``, a writer) of ``var``
    must see completed; empty (and false) when there are none. The one test of readiness:
    waits and the engine's decisions to run an operation at once both use it."""
    w = var.writer
    if not for_write:
        if w is None or w.done >= var.wseq:
            return ()
        return [(w, var.wseq)]
    out = [] if w is None or w.done >= var.wseq else [(w, var.wseq)]
    r = var.readers
    if r:
        out.extend((w, s) for w, s in list(r.items()) if w.done < s)
    return out or ()
