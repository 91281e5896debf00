"""Execution policies: ``ThreadedEngine`` (per-device workers) and ``NaiveEngine`` (inline).

Both take the same calls::

    engine.push(fn, reads, writes, ctx, name)   # returns at once (threaded) or after fn (naive)
    engine.wait_for_var(var)                    # blocks until var's pending writes are done
    engine.waitall()                            # blocks until everything pushed is done

and share one error rule: an operation that raises marks the Vars it writes as failed; an
operation reading a failed Var fails with the same error without running; the error is
raised by every synchronisation that waits on a failed Var, naming the operator and the line
that pushed it, until an operation writes the Var again; ``waitall`` raises the first error of
the operations that failed since the previous ``waitall`` whose results can still be read. The
engine itself keeps working.

Dependency tracking is in ``var.py``; how many threads a kernel uses, and which cores the
process keeps to, in ``threads.py``.
"""
import threading
import time
import traceback
import weakref
from collections import deque

import torch

from ..base import MXNetError, env_int, site_line, user_line, user_site
from .threads import (INLINE_WORK, LIGHT_WORK, PARALLEL_WORK, ThreadBudget, end_idle_helpers,
                      float_controls, front_end_thread, set_float_controls, settle_intra_op_threads,
                      share_the_gil)
from .var import pending, track

__all__ = ['EngineError', 'ThreadedEngine', 'NaiveEngine', 'NOT_NOW']


class EngineError(MXNetError):
    """An operator failed while the engine ran it."""

    def __init__(self, name, where, exc):
        self.op_name = name
        self.where = where
        self.original = exc
        self.failed = weakref.WeakSet()     # the Vars it failed, while they live
        self.on_data = False                # whether it failed any (see Engine._mark)
        msg = 'operator %s failed: %s: %s' % (name, type(exc).__name__, exc)
        if where is not None:
            msg += '\n  (pushed at %s, line %d)' % where
        super().__init__(msg)

    def again(self):
        """A new exception saying the same, for one more synchronisation to raise: its
        traceback is that synchronisation's, and it is not kept by the failed Vars (raising the
        kept one would tie the caller's frames, and their arrays, to those Vars in a cycle)."""
        err = type(self)(self.op_name, self.where, self.original)
        err.__cause__ = self.__cause__
        return err

    @property
    def readable(self):
        """Whether a result of the failed operation can still be read (some Var it failed is
        alive), or it failed only state that outlives arrays (a device's random generator)."""
        return not self.on_data or len(self.failed) > 0


_TYPED = {}


def engine_error(name, where, exc):
    """The EngineError for ``exc``; for a ValueError, TypeError, IndexError, KeyError or
    NotImplementedError, of a class deriving from that type too, so ``except ValueError``
    catches it at the synchronisation that raises it (as MXNet maps its errors' types)."""
    for kind in (ValueError, TypeError, IndexError, KeyError, NotImplementedError):
        if isinstance(exc, kind) and not isinstance(exc, MXNetError):
            cls = _TYPED.get(kind)
            if cls is None:
                cls = _TYPED[kind] = type('EngineError', (EngineError, kind), {})
            return cls(name, where, exc)
    return EngineError(name, where, exc)


def _frames_as_text(err):
    """Replaces the tracebacks of ``err`` and of the exceptions it chains with their text (a
    note on each). A traceback holds its frames, and they the failed operation (its closure,
    the Vars it writes, which hold ``err``) and every caller's locals: kept, they would keep
    failed arrays alive after the program has dropped them. The frame that caught the
    exception (the engine's) is left out of the text."""
    seen = set()
    exc = err
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        tb = exc.__traceback__
        if tb is not None:
            if tb.tb_next is not None:
                tb = tb.tb_next
            exc.__traceback__ = None
            exc.add_note('Traceback of the operation (most recent call last):\n'
                         + ''.join(traceback.format_tb(tb)).rstrip())
        exc = exc.__cause__ or exc.__context__


NOT_NOW = object()   # what Engine.run_now returns when the operation must be pushed
# The ``where`` of an operation run inside ``push``: its error is stored while the pushing call
# is on the stack, so the user's line is found then (``_store``), not at every push. Walking
# the stack costs about a microsecond under a Gluon layer; most operations never fail.
HERE = object()


class Engine:
    """What both policies share: error bookkeeping, the torch thread budget, the profiler hook."""
    name = 'Engine'

    def __init__(self):
        self.errors = []           # failures since the last waitall (the first 64)
        self.tainted = False       # a failure happened: ops must check their inputs
        self.trace = None          # list of (track, op name, t0 ns, t1 ns) while profiling
        self.budget = ThreadBudget()    # torch's intra-op threads per CPU device in use
        self._lock = threading.Lock()   # the push lock (ThreadedEngine); run_now takes it

    @property
    def intra_op_threads(self):
        return self.budget.intra_op_threads

    @property
    def pinned(self):
        """The cores this process was pinned to (``threads.bind_to_local_share``), or None."""
        return self.budget.pinned

    # -- running one operation ----------------------------------------------------------
    def execute(self, fn, reads, writes, name, where):
        """Runs ``fn`` with the error rule of the engine."""
        if self.tainted:
            for v in reads:
                err = v.error
                if err is not None:
                    self._mark(writes, err)
                    return
            try:
                fn()
            except BaseException as exc:
                self._fail(writes, name, where, exc)
                return
            for w in writes:
                w.error = None
            return
        try:
            fn()
        except BaseException as exc:
            self._fail(writes, name, where, exc)

    # -- tiny operations at once ------------------------------------------------------------
    def run_now(self, fn, x, y, xv, yv, out, ctx, name, work):
        """Runs ``fn(x)``, or ``fn(x, y)`` when ``y`` is not None, at once in this thread if
        that is what ``push`` would do with the operation reading the Var ``xv`` (and ``yv``
        unless None) and writing the new Var ``out`` (nothing pushed on it yet) on ``ctx``: a
        tiny one (``work`` below ``inline_work``) on a CPU, not profiling, nothing pending on
        its inputs and no failed input. Returns what ``fn`` returns, or ``NOT_NOW`` when it
        did not run (then push the operation). An error is stored on ``out`` (the result is
        then None) and raised at the next synchronisation, as push's. Without a closure or a
        queue entry, and with the arguments spelled out rather than in tuples: the hot path of
        tiny operations (``ndarray.run.plain``), whose caller has checked that the operation
        needs no autograd."""
        if work >= self.inline_work or ctx.device_typeid == 2 or self.trace is not None:
            return NOT_NOW
        # Under the push lock: no operation on the Vars can be pushed, and so start, between
        # the check that nothing is pending and fn.
        lock = self._lock
        lock.acquire()      # cheaper than ``with`` on this path
        try:
            # as _ready does for the inputs (``out`` is new): var.pending(v) of a reader,
            # inlined on this path
            w = xv.writer
            if xv.error is not None or (w is not None and w.done < xv.wseq):
                return NOT_NOW
            if yv is not None:
                w = yv.writer
                if yv.error is not None or (w is not None and w.done < yv.wseq):
                    return NOT_NOW
            return fn(x) if y is None else fn(x, y)
        except BaseException as exc:
            self._fail((out,), name, user_site(), exc)
            return None
        finally:
            lock.release()

    def _fail(self, writes, name, where, exc):
        """Fails the operation (``_store``); an interruption (``interrupts``) is raised again
        at once."""
        self._store(writes, name, where, exc)
        if interrupts(exc):
            raise exc

    def _store(self, writes, name, where, exc):
        """Stores ``exc`` on the Vars the failed operation writes, to be raised at the next
        synchronisation. An interruption (``interrupts``: Ctrl-C's KeyboardInterrupt, a
        signal handler's exception; only the main thread gets them, while it runs an operation
        itself) is raised to the caller at once instead (``_fail``), as the user asked, so
        waitall does not raise it again."""
        # ``where``: HERE, or the ``base.user_site`` of the push (a queued operation)
        where = user_line() if where is HERE else site_line(where)
        err = exc if isinstance(exc, EngineError) else engine_error(name, where, exc)
        err.__cause__ = exc if err is not exc else exc.__cause__
        _frames_as_text(err)
        self.tainted = True
        self._mark(writes, err)

    def _mark(self, writes, err):
        """Marks the Vars a failed operation writes (those that ``fails_with_writer``) as
        failed by ``err``, and counts the failure for the next waitall unless it interrupted,
        which its caller got at once. Unlike MXNet 1.9.1, which clears an error from every
        array once it has been raised (they then read as unset memory), a failed Var stays
        failed until an operation writes it again: reading it, or anything computed from it,
        raises every time."""
        for w in writes:
            if w.fails_with_writer:
                w.error = err
                err.failed.add(w)
                err.on_data = True
        if interrupts(err.__cause__):
            return
        errors = self.errors
        if len(errors) >= 64:       # the first are the ones waitall reports
            errors[:] = [e for e in errors if e.readable]
        if len(errors) < 64 and not any(e is err for e in errors):
            errors.append(err)

    @staticmethod
    def _raise_for(var):
        err = var.error
        if err is not None:
            raise err.again()

    def _raise_pending(self):
        """Raises the first error of the operations that failed since the last waitall and
        whose results can still be read, whether or not reading them raised it already: each
        failure is reported once by waitall (a second waitall passes, as in MXNet), and stays
        on its arrays. A failure whose arrays have all been freed can give no wrong value and
        is not reported (MXNet 1.9.1 reports it, unless the same error was raised already)."""
        errors, self.errors = self.errors, []
        for err in errors:
            if err.readable:
                raise err.again()


_NEVER = float('inf')


def interrupts(exc):
    """Whether ``exc`` interrupts the thread that runs the operation rather than being the
    operation's failure: a BaseException that is not an Exception (Ctrl-C's KeyboardInterrupt,
    SystemExit, what a signal handler or a test's time limit raises). Kept as the operation's
    error, it would be swallowed, and the interrupted program would run on."""
    return not isinstance(exc, Exception)

class _Local(threading.local):
    in_worker = False


_local = _Local()


class Worker:
    """One thread running the operations of one device (or the copies into one device) in the
    order they were pushed.

    A thread that waits for a CPU worker's operation and finds the worker idle runs the queued
    operations itself, in order, instead of handing them over: waking a thread and waiting to
    be woken costs more than a small operation does.
    """

    def __init__(self, engine, name, ctx):
        self.engine = engine
        self.name = name
        self.ctx = ctx
        self.queue = deque()
        self.pushed = 0
        self.done = 0
        self.sleeping = False
        self.stopping = False
        self.wake_at = _NEVER
        self._targets = []
        self._wake = threading.Condition(threading.Lock())
        self._done = threading.Condition(threading.Lock())
        self.exec_lock = threading.Lock()   # held by whoever runs this worker's operations
        self.stream = None
        self.threads = 0        # the intra-op threads this worker's thread is set to
        # The floating-point controls (flush-to-zero, rounding) its thread runs with: those of
        # the thread that starts it, then those of the threads that wake it or wait for it.
        self.float_env = float_controls()
        if ctx.device_typeid == 2:
            self.stream = torch.cuda.Stream(device=ctx.torch_device)
        self.thread = threading.Thread(target=self._loop, name='neomx-' + name, daemon=True)
        self.thread.start()

    def __repr__(self):
        return '<Worker %s>' % self.name

    def wake(self):
        self.float_env = float_controls()
        # Clearing the flag here, not in the worker, makes later pushes see the worker as
        # awake at once: one notification per sleep, however many pushes follow.
        with self._wake:
            self.sleeping = False
            self._wake.notify()

    def stop(self):
        """Ends the thread once everything queued has run (an engine being replaced)."""
        self.stopping = True
        self.wake()

    def wait(self, seq):
        """Blocks until operation ``seq`` of this worker is complete."""
        if self.done < seq:
            self.float_env = float_controls()
            if self.stream is None and self.exec_lock.acquire(False):
                self._help(seq)
            if self.done < seq:
                if self.sleeping:
                    self.wake()
                self._wait_done(seq)
        if self.stream is not None:
            self.stream.synchronize()   # done means launched on a GPU worker

    def _help(self, seq):
        """Runs queued operations up to ``seq`` in the calling thread (exec_lock held), up to
        the first one whose kernel runs on several intra-op threads: that one and the rest
        are the worker's. A thread running torch's kernels on several threads keeps OpenMP
        helper threads, and libgomp makes every helper stop spin-waiting between parallel
        regions once it has more of them than there are cores (its throttled spin count): with
        the waiting thread's helpers beside the worker's, each region would wait for its
        helpers to wake (docs/benchmarks.md, "Figures behind rules in the code")."""
        grad = torch.is_grad_enabled()
        nested = _local.in_worker
        threads = self.threads
        mine = torch.get_num_threads()
        torch._C._set_grad_enabled(False)
        _local.in_worker = True
        self.threads = mine          # _run compares with this thread's setting, not the worker's
        try:
            queue = self.queue
            budget = self.engine.budget
            while self.done < seq and queue and budget.for_work(queue[0][7]) <= 1:
                self._run(queue.popleft())
        finally:
            _local.in_worker = nested
            torch._C._set_grad_enabled(grad)
            if self.threads != mine:
                torch.set_num_threads(mine)
            self.threads = threads
            self.exec_lock.release()

    def _wait_done(self, seq):
        # The worker wakes waiters only when it reaches the lowest sequence number waited
        # for, not after every operation: a waiting thread must not take the GIL per op.
        with self._done:
            self._targets.append(seq)
            self.wake_at = min(self._targets)
            try:
                while self.done < seq:
                    self._done.wait()
            finally:
                self._targets.remove(seq)
                self.wake_at = min(self._targets) if self._targets else _NEVER

    def order_after(self, dep, seq):
        """Makes this worker's later operations see operation ``seq`` of worker ``dep``."""
        if dep.stream is not None and self.stream is not None:
            if dep.done < seq:
                dep._wait_done(seq)
            self.stream.wait_stream(dep.stream)
        else:
            dep.wait(seq)

    def _run(self, op):
        fn, reads, writes, deps, seq, name, where, work = op
        engine = self.engine
        # Whatever fails here fails this operation, which still completes: an exception
        # escaping would end the worker's thread, or leave the operation never done and its
        # waiters blocked for ever.
        interrupted = None
        try:
            # 0 while no compute worker has set the budget (copies into a device nothing has
            # computed on yet): leave torch's setting alone.
            if work is None or work >= PARALLEL_WORK or self.threads != 1:
                # (a small kernel runs on one thread, ThreadBudget.for_work: already set)
                self.threads = engine.budget.set_for(work, self.threads)
            if deps is not None:
                for dep, s in deps:
                    self.order_after(dep, s)
            if engine.trace is not None:
                self._run_traced(fn, reads, writes, name, where)
            elif engine.tainted:
                engine.execute(fn, reads, writes, name, where)
            else:
                fn()
        except BaseException as exc:
            engine._store(writes, name, where, exc)
            # Ctrl-C (or another signal's exception) in a waiting main thread that ran the
            # operation: raised once it is done (the worker's own thread never stops for one)
            if interrupts(exc) and threading.current_thread() is not self.thread:
                interrupted = exc
        # Drop the operation (its closure holds tensors) before it counts as done: a waiter
        # that returns may be the main thread ending the interpreter, and tensors freed by
        # this thread during shutdown abort the process.
        op = fn = reads = writes = deps = None
        self.done = seq
        if seq >= self.wake_at:
            with self._done:
                self._done.notify_all()
        if interrupted is not None:
            raise interrupted

    def _run_traced(self, fn, reads, writes, name, where):
        t0 = time.perf_counter_ns()
        self.engine.execute(fn, reads, writes, name, where)
        if self.stream is not None:
            self.stream.synchronize()
        trace = self.engine.trace
        if trace is not None:
            trace.append((self.name, name, t0, time.perf_counter_ns()))

    def _loop(self):
        queue = self.queue
        torch.set_grad_enabled(False)
        _local.in_worker = True
        # What the thread needs of its starter's settings: the floating-point controls (the
        # OS copies them into a new thread, but the engine may be started by another thread
        # than the one that pushes); grad mode off; its device and stream; intra-op threads
        # are set per operation (_run), once torch has given the thread its own count.
        controls = self.float_env
        set_float_controls(controls)
        settle_intra_op_threads()
        probe = None
        if self.stream is not None:
            torch.cuda.set_device(self.ctx.device_id)
            torch.cuda.set_stream(self.stream)
        elif not self.name.startswith('copy:'):
            probe = self.engine.budget.probe()     # keeps budget.contended (threads.LoadProbe)
        monotonic = time.monotonic
        while not self.stopping or queue:
            with self._wake:
                # The flag is set before the queue is looked at, and a pusher appends before it
                # reads the flag: one of the two sees the other, so no wake-up is lost. Light
                # operations queued while asleep wait for a wake-up or for a waiter to run them.
                self.sleeping = True
                if not queue:
                    while self.sleeping:
                        self._wake.wait()
                self.sleeping = False
            if self.float_env != controls:
                # The thread that woke it or waits for it changed them (torch.set_flush_denormal):
                # follow, and end the OpenMP helpers, which start again with this thread's.
                controls = self.float_env
                set_float_controls(controls)
                end_idle_helpers()
            with self.exec_lock:
                if probe is not None and monotonic() >= probe.next:
                    probe.sample()      # also when waiters ran everything queued
                while queue:
                    if probe is not None and monotonic() >= probe.next:
                        probe.sample()
                    self._run(queue.popleft())


class ThreadedEngine(Engine):
    """Runs each device's operations on its own worker thread, and copies into a device on a
    copy worker of their own, so that devices compute at the same time and copies overlap
    computation. At most ``max_inflight`` operations per worker wait to run: beyond that a
    push blocks (back-pressure), so a loop that never synchronises runs in bounded memory."""
    name = 'ThreadedEngine'

    def __init__(self, max_inflight=None, inline_work=None):
        super().__init__()
        if max_inflight is None:
            # 512: a batch of the book's RNN from scratch (some 330 operations pushed before
            # its first synchronisation) never blocks; at 256 it blocked once a batch, and the
            # loop took 1.12-1.16x the time (docs/benchmarks.md, "Figures behind rules")
            max_inflight = env_int('NEOMX_ENGINE_MAX_INFLIGHT', default=512)
        self.max_inflight = max_inflight
        self.lazy_batch = env_int('NEOMX_ENGINE_LAZY_BATCH', default=64)
        self.inline_work = INLINE_WORK if inline_work is None else inline_work
        self._compute = {}     # context key -> worker
        self._copy = {}        # context key -> copy worker

    def worker(self, ctx, copy=False):
        table = self._copy if copy else self._compute
        w = table.get(ctx.key)
        if w is None:
            with self._lock:
                w = table.get(ctx.key)
                if w is None:
                    ctx.torch_device  # raises for a GPU this machine lacks
                    if not copy:
                        self.budget.use_device(ctx)
                        if ctx.device_typeid != 2 and not _local.in_worker:
                            front_end_thread()
                    share_the_gil()
                    w = Worker(self, ('copy:' if copy else '') + str(ctx), ctx)
                    table[ctx.key] = w
        return w

    def workers(self):
        return list(self._compute.values()) + list(self._copy.values())

    def shutdown(self):
        """Stops the worker threads after their queues drain (when the engine is replaced)."""
        for w in self.workers():
            w.stop()
        for w in self.workers():
            if w.thread is not threading.current_thread():
                w.thread.join(timeout=10)
        self._compute.clear()
        self._copy.clear()

    def stream_of(self, ctx):
        """The CUDA stream of ``ctx``'s compute worker (None on CPU)."""
        return self.worker(ctx).stream

    def push(self, fn, reads, writes, ctx, name, *, work=None, copy=False, skip=0):
        """Queues ``fn`` to run on ``ctx``'s worker (its copy worker with ``copy``) once the
        earlier operations on ``reads`` and ``writes`` are complete; returns at once. An error
        of ``fn`` names ``name`` and the caller's line outside neomx (``base.user_line``), the
        user's line that pushed it. A tiny
        operation (below ``inline_work``) whose Vars have nothing pending, pushed while the
        device's worker is idle, is not queued: it runs now, in this thread, which costs less
        than the queue would (its errors still wait for the next synchronisation).

        ``work`` estimates the operation's size (multiply-adds or elements; None: large). A
        light operation (below ``LIGHT_WORK``: a few microseconds) does not wake an idle worker
        by itself: light operations gather until ``lazy_batch`` of them wait, a larger one
        arrives, or someone waits for one (and, finding the worker idle, runs them). Handing a
        tiny operation to another thread costs more than running it. Operations below
        ``PARALLEL_WORK`` run their kernel on one thread. ``skip``: how many frames above this
        call's are neomx's own (``neomx.engine.push``)."""
        where = HERE        # the user's line is found at push for a queued operation (below)
        if _local.in_worker:
            # Pushed by an operation while it runs (a custom Function's backward): the worker
            # is busy with that operation, so run this one now, in order.
            trace = self.trace
            if trace is None:
                return self.execute(fn, reads, writes, name, where)
            t0 = time.perf_counter_ns()
            try:
                return self.execute(fn, reads, writes, name, where)
            finally:
                trace.append((str(ctx), name, t0, time.perf_counter_ns()))
        small = (work is not None and work < self.inline_work and not copy and
                 self.trace is None and ctx.device_typeid != 2)
        w = (self._copy if copy else self._compute).get(ctx.key)
        if w is None:
            if small:
                with self._lock:
                    if self._compute.get(ctx.key) is None and _ready(reads, writes):
                        return self._run_now(fn, reads, writes, name, where)
            w = self.worker(ctx, copy)
        with self._lock:    # no operation can be pushed meanwhile
            # A tiny operation runs now only while the device's worker is idle (nothing
            # queued, its exec_lock free and held meanwhile): one thread at a time runs a
            # device's operations. Two threads running recorded kernels on one leaf tensor
            # deadlock in torch (its autograd-metadata mutex against the GIL). The queue is
            # looked at first: in a burst of pushes it is rarely empty.
            if small and not w.queue and _ready(reads, writes) and w.exec_lock.acquire(False):
                try:
                    return self._run_now(fn, reads, writes, name, where)
                finally:
                    w.exec_lock.release()
            where = user_site(2 + skip)
            seq = w.pushed + 1
            w.pushed = seq
            w.queue.append((fn, reads, writes, track(w, seq, reads, writes), seq, name, where,
                            work))
        if w.sleeping and (work is None or work >= LIGHT_WORK or len(w.queue) >= self.lazy_batch
                           or w.stream is not None):
            w.wake()
        if self.max_inflight and seq - w.done > self.max_inflight:
            # Wait until half the allowance has drained, not one operation: blocking once per
            # max_inflight/2 pushes instead of at every push.
            w.wait(seq - self.max_inflight // 2)

    def _run_now(self, fn, reads, writes, name, where):
        """Runs a tiny operation whose Vars have nothing pending in the pushing thread, with
        the push lock held (so no later operation on them can start first) and grad mode off,
        as on a worker. It never enters a queue: complete when push returns."""
        grad = torch.is_grad_enabled()
        if grad:
            torch._C._set_grad_enabled(False)
        _local.in_worker = True     # an operation pushing another runs it inline, unlocked
        try:
            self.execute(fn, reads, writes, name, where)
        finally:
            _local.in_worker = False
            if grad:
                torch._C._set_grad_enabled(True)

    def wait_for_var(self, var, for_write=False):
        for w, s in pending(var, for_write):
            w.wait(s)
        if var.error is not None:
            self._raise_for(var)

    def waitall(self):
        for w in self.workers():
            w.wait(w.pushed)
        self._raise_pending()


def _ready(reads, writes):
    """Whether nothing is pending on ``reads`` (for a reader) and ``writes`` (for a writer),
    and no input failed: an operation on them may run now."""
    for v in reads:
        if v.error is not None or pending(v):
            return False
    for v in writes:
        if pending(v, True):
            return False
    return True


class NaiveEngine(Engine):
    """Runs every operation inline, when it is pushed: the reference the threaded engine is
    tested against, and the mode for debugging."""
    name = 'NaiveEngine'

    inline_work = INLINE_WORK

    def __init__(self):
        super().__init__()
        self._seen = set()
        self._threads = 0

    def push(self, fn, reads, writes, ctx, name, *, work=None, copy=False, skip=0):
        where = HERE        # runs now: an error finds the user's line while it is on the stack
        if ctx not in self._seen:
            ctx.torch_device
            self._seen.add(ctx)
            if not copy:
                self.budget.use_device(ctx)
        if work is None or work >= PARALLEL_WORK or self._threads != 1:
            self._threads = self.budget.set_for(work, self._threads)
        # Operations run with grad mode off unless they record, as on a worker thread.
        grad_was = torch.is_grad_enabled()
        torch._C._set_grad_enabled(False)
        try:
            if self.trace is None:
                self.execute(fn, reads, writes, name, where)
            else:
                t0 = time.perf_counter_ns()
                self.execute(fn, reads, writes, name, where)
                if ctx.device_typeid == 2:
                    torch.cuda.synchronize(ctx.device_id)
                self.trace.append((('copy:' if copy else '') + str(ctx), name, t0,
                                   time.perf_counter_ns()))
        finally:
            torch._C._set_grad_enabled(grad_was)

    def stream_of(self, ctx):
        """None: operations run inline, on the current stream."""
        return None

    def wait_for_var(self, var, for_write=False):
        if var.error is not None:
            self._raise_for(var)

    def waitall(self):
        if self._seen and torch.cuda.is_available():
            torch.cuda.synchronize()
        self._raise_pending()

    def workers(self):
        return []

    def shutdown(self):
        pass
