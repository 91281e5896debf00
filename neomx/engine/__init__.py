"""The dependency engine: ``push(fn, reads, writes, ctx, name)`` is the whole interface, with
two hints for the scheduling policy (``work=``, ``copy=``); ``wait_for_var`` and ``waitall``
synchronise. Beside it, for the kernel path only: ``run_now`` (a tiny operation at once, without
a closure) and ``stream_of`` (the CUDA stream a device's operations run on).

The policy is chosen by ``NEOMX_ENGINE_TYPE`` (or ``MXNET_ENGINE_TYPE``): ``ThreadedEngine``
(default) or ``NaiveEngine``; ``set_engine_type`` switches it at run time.

>>> import neomx as mx
>>> mx.engine.engine_type()
'ThreadedEngine'
"""
import atexit
import contextlib
import os

from ..base import MXNetError, env_str
from .engine import NOT_NOW, EngineError, NaiveEngine, ThreadedEngine
from .memory import keep_freed_memory
from .threads import LIGHT_WORK, PARALLEL_WORK, cpu_budget, end_idle_helpers
from .var import Var, track

__all__ = ['Var', 'EngineError', 'ThreadedEngine', 'NaiveEngine', 'current', 'push',
           'run_now', 'NOT_NOW', 'stream_of', 'wait_for_var', 'waitall', 'engine_type',
           'set_engine_type', 'engine_scope', 'set_bulk_size', 'bulk', 'cpu_budget', 'track',
           'end_helper_threads']

_TYPES = {'ThreadedEngine': ThreadedEngine, 'ThreadedEnginePerDevice': ThreadedEngine,
          'ThreadedEnginePooled': ThreadedEngine, 'NaiveEngine': NaiveEngine}


def _make(kind):
    cls = _TYPES.get(kind)
    if cls is None:
        raise MXNetError("unknown engine type %r: expected one of %s" % (kind, ', '.join(_TYPES)))
    return cls()


keep_freed_memory()     # before the engine's threads make their own heaps
_engine = _make(env_str('NEOMX_ENGINE_TYPE', 'MXNET_ENGINE_TYPE', default='ThreadedEngine'))


def _wait_at_exit():
    # A worker thread still inside a torch call when the interpreter shuts down is ended by a
    # forced unwind through C++ frames, which aborts the process ("terminate called without
    # an active exception"): finish what is queued first, as MXNet does at shutdown.
    try:
        _engine.waitall()
    except Exception:   # errors nobody waited for are not reported at exit, as in MXNet
        pass


atexit.register(_wait_at_exit)


def _drain_before_fork():
    # A forked child has none of the parent's worker threads: whatever is still queued would
    # never run there, and a lock a worker held at the fork would stay held. Finish first.
    if isinstance(_engine, ThreadedEngine) and not _in_worker():
        for w in _engine.workers():
            w.wait(w.pushed)


def _fresh_engine_in_child():
    # The parent's engine object (its workers, queues and locks) is unusable in the child:
    # replace it without touching it.
    global _engine
    _engine = type(_engine)()


def _in_worker():
    from .engine import _local
    return _local.in_worker


if hasattr(os, 'register_at_fork'):
    os.register_at_fork(before=_drain_before_fork, after_in_child=_fresh_engine_in_child)


def current():
    """The engine object in use (the profiler sets its ``trace``; tests look at its state).
    Pushing goes through ``push``/``run_now``, which look the engine up at each call."""
    return _engine


def end_helper_threads():
    """Waits for every operation, then ends the idle OpenMP helper threads of the calling
    thread and of each CPU worker (``threads.end_idle_helpers``): torch code run next in this
    thread (after ``torch.set_num_threads``: a thread that pushes to a CPU worker is left with
    one intra-op thread, ``threads.front_end_thread``) gets the cores as in a process without
    neomx, and the workers start their helpers again at their next parallel kernel. For
    benchmarks that time PyTorch beside neomx."""
    waitall()
    end_idle_helpers()
    if isinstance(_engine, ThreadedEngine):
        for w in list(_engine._compute.values()):
            if w.stream is None:
                _engine.push(end_idle_helpers, [], [], w.ctx, 'end_helper_threads')
        waitall()


def engine_type():
    return _engine.name


def set_engine_type(kind):
    """Switches to a new engine of ``kind`` after finishing everything pushed to the old one
    (whose threads then end); returns the previous type's name. An error of the old engine's
    operations is raised after the switch."""
    global _engine
    old = _engine
    new = _make(kind) if isinstance(kind, str) else kind
    try:
        old.waitall()
    finally:
        _engine = new
        old.shutdown()
    return old.name


@contextlib.contextmanager
def engine_scope(kind):
    """Runs a block under an engine of ``kind`` (tests use it to compare the policies)."""
    old = set_engine_type(kind)
    try:
        yield _engine
    except BaseException:
        try:
            set_engine_type(old)
        except MXNetError:
            pass            # the block's own exception is the one to report
        raise
    set_engine_type(old)


def push(fn, reads, writes, ctx, name, *, work=None, copy=False, skip=0):
    """Queues ``fn`` on ``ctx`` after the earlier operations on ``reads`` and ``writes``
    (DESIGN.md's interface). Two hints for the scheduling policy, which tracking ignores:
    ``work`` estimates the operation's size (multiply-adds or elements; None: large), which
    decides whether it runs at once, wakes a worker and how many threads its kernel gets;
    ``copy`` runs it on ``ctx``'s copy worker (a copy into ``ctx``, overlapping computation).
    An error of ``fn`` names ``name`` and the caller's line outside neomx; ``skip``: how many
    frames, from the caller's, are known to be neomx's own (the line is looked for above
    them: each frame looked at costs a frame object)."""
    return _engine.push(fn, reads, writes, ctx, name, work=work, copy=copy, skip=skip + 1)


def run_now(fn, x, y, xv, yv, out, ctx, name, work):
    """``fn(x)`` (``fn(x, y)`` unless ``y`` is None) now, in this thread, if ``push`` would run
    the operation at once (tiny ``work`` on a CPU, nothing pending on the Vars ``xv``/``yv`` it
    reads); else ``NOT_NOW``, and the caller pushes it. ``out`` is the new Var it writes (its
    error is stored there). The hot path of tiny operations (``Engine.run_now``)."""
    return _engine.run_now(fn, x, y, xv, yv, out, ctx, name, work)


def stream_of(ctx):
    """The CUDA stream ``ctx``'s operations run on, or None (a CPU, or NaiveEngine, which runs
    them on the current stream): a copy made on a copy worker's stream is recorded on it for
    the allocator (``ndarray.copy_into``)."""
    return _engine.stream_of(ctx)


def wait_for_var(var, for_write=False):
    return _engine.wait_for_var(var, for_write)


def waitall():
    return _engine.waitall()


_bulk_size = 0


def set_bulk_size(size):
    """MXNet's knob for grouping operations into bulks. neomx pushes each operation on its
    own (hybridized blocks already run as one operation), so the value is only recorded;
    returns the previous value."""
    global _bulk_size
    prev, _bulk_size = _bulk_size, int(size)
    return prev


@contextlib.contextmanager
def bulk(size):
    prev = set_bulk_size(size)
    try:
        yield
    finally:
        set_bulk_size(prev)
