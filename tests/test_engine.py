"""The dependency engine: ordering of reads and writes under concurrency, the threaded engine
against the naive one on random programs, many pushing threads, errors, back-pressure, the
light-operation policy and the intra-op thread budget.

Concurrency is asserted with events and counters, never with timings."""
import functools
import json
import os
import random
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import numpy as np
import pytest
import torch

import neomx as mx
from neomx import nd
from neomx.base import MXNetError
from neomx.engine import EngineError, NaiveEngine, ThreadedEngine, Var
from neomx.engine import engine as engine_impl
from neomx.engine import threads as engine_threads
from neomx.ndarray.ndarray import invoke
from neomx.ops.registry import Op

# (context, copy worker?) targets of raw pushes: two compute workers and two copy workers.
TARGETS = [(mx.cpu(0), False), (mx.cpu(1), False), (mx.cpu(0), True), (mx.cpu(1), True)]


def _until(cond, timeout=20.0):
    """Waits for ``cond()`` to become true (for state another thread reaches)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def _run_child(code, env=None, timeout=240):
    """Runs ``code`` in a fresh Python with neomx; returns the JSON it prints last. The child
    ends in a normal interpreter shutdown, so a worker thread still busy then would show.
    ``env``: variables to set in the child's environment (None: to remove)."""
    full_env = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            full_env.pop(k, None)
        else:
            full_env[k] = v
    r = subprocess.run([sys.executable, '-c', textwrap.dedent(code)],
                       capture_output=True, text=True, timeout=timeout, env=full_env)
    assert r.returncode == 0, 'child failed (rc %d):\n%s\n%s' % (r.returncode, r.stdout[-3000:],
                                                                 r.stderr[-5000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def _line():
    """The caller's line number."""
    return sys._getframe(1).f_lineno


# -- ordering ---------------------------------------------------------------------------------

class _Recorder:
    """Operations that log what they see of shared state, to check RAW, WAR and WAW order.

    Each Var ``k`` has a history of the operations that wrote it. An operation records how many
    writes of each Var it reads it sees when it starts and when it ends (after a random sleep);
    both must equal the number of writes pushed before it. Writers also check that no other
    operation touches their Vars while they run."""

    def __init__(self, n_vars):
        self.vars = [Var() for _ in range(n_vars)]
        self.history = [[] for _ in range(n_vars)]       # writes, in the order they ran
        self.pushed_writes = [[] for _ in range(n_vars)]  # writes, in push order
        self.reads_pushed = [0] * n_vars
        self.reads_done = [0] * n_vars
        self.busy_writing = [0] * n_vars
        self.busy_reading = [0] * n_vars
        self.problems = []

    def op(self, ident, reads, writes, sleep):
        expect = {k: len(self.pushed_writes[k]) for k in reads}
        hist, problems = self.history, self.problems

        def fn():
            for k in writes:
                if self.busy_writing[k] or self.busy_reading[k]:
                    problems.append('op %d writes var %d while another op uses it' % (ident, k))
                self.busy_writing[k] += 1
            for k in reads:
                if k not in writes:
                    if self.busy_writing[k]:
                        problems.append('op %d reads var %d during a write' % (ident, k))
                    self.busy_reading[k] += 1
            seen0 = {k: len(hist[k]) for k in reads}
            if sleep:
                time.sleep(sleep)
            seen1 = {k: len(hist[k]) for k in reads}
            if not seen0 == seen1 == expect:
                problems.append('op %d expected to see %s writes, saw %s then %s'
                                % (ident, expect, seen0, seen1))
            for k in reads:
                if k not in writes:
                    self.busy_reading[k] -= 1
                    self.reads_done[k] += 1
            for k in writes:
                hist[k].append(ident)
                self.busy_writing[k] -= 1

        for k in writes:
            self.pushed_writes[k].append(ident)
        for k in reads:
            if k not in writes:
                self.reads_pushed[k] += 1
        return fn


def _random_raw_program(eng, seed, n_ops, n_vars=8, check_waits=True):
    rng = random.Random(seed)
    rec = _Recorder(n_vars)
    for ident in range(n_ops):
        chosen = rng.sample(range(n_vars), rng.randint(1, 3))
        split = rng.randint(0, len(chosen))
        reads, writes = chosen[:split], chosen[split:]
        if writes and rng.random() < 0.2:
            reads = reads + [writes[0]]              # read-modify-write of one Var
        sleep = rng.choice([0, 0, 0, 0.0002, 0.001])
        fn = rec.op(ident, reads, writes, sleep)
        ctx, copy = rng.choice(TARGETS)
        eng.push(fn, [rec.vars[k] for k in reads], [rec.vars[k] for k in writes], ctx,
                 'op%d' % ident, copy=copy, work=rng.random() < 0.5)
        if check_waits and rng.random() < 0.05:
            k = rng.randrange(n_vars)
            if rng.random() < 0.5:
                eng.wait_for_var(rec.vars[k])
                assert rec.history[k] == rec.pushed_writes[k]
            else:
                eng.wait_for_var(rec.vars[k], for_write=True)
                assert rec.history[k] == rec.pushed_writes[k]
                assert rec.reads_done[k] == rec.reads_pushed[k]
    eng.waitall()
    assert rec.problems == []
    assert rec.history == rec.pushed_writes            # WAW: writes ran in push order
    assert rec.reads_done == rec.reads_pushed
    return rec


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_read_write_order_across_workers(seed):
    _random_raw_program(ThreadedEngine(), seed, n_ops=700)


def test_read_write_order_naive_engine():
    rec = _random_raw_program(NaiveEngine(), 5, n_ops=300)
    assert sum(map(len, rec.history)) > 0


def test_write_waits_for_earlier_reads_on_another_worker():
    eng = ThreadedEngine()
    v = Var()
    gate, log = threading.Event(), []
    eng.push(lambda: (gate.wait(), log.append('read')), [v], [], mx.cpu(1), 'slow_read')
    eng.push(lambda: log.append('write'), [], [v], mx.cpu(0), 'write')
    done = threading.Event()
    t = threading.Thread(target=lambda: (eng.wait_for_var(v), done.set()), daemon=True)
    t.start()
    assert not done.wait(0.2)          # the write cannot have run: the read holds it back
    assert log == []
    gate.set()
    assert done.wait(20)
    eng.waitall()
    assert log == ['read', 'write']


def test_pushing_threads_and_waiters_share_workers():
    """Several threads push to shared Vars (under a lock, to know the push order) while others
    keep waiting on random Vars, so queued operations are run by many helping threads."""
    eng = ThreadedEngine()
    rec = _Recorder(6)
    order_lock = threading.Lock()
    stop = threading.Event()
    failures = []

    def pusher(seed):
        rng = random.Random(seed)
        try:
            for i in range(150):
                chosen = rng.sample(range(6), rng.randint(1, 3))
                split = rng.randint(0, len(chosen))
                ctx, copy = rng.choice(TARGETS)
                with order_lock:
                    ident = seed * 1000 + i
                    fn = rec.op(ident, chosen[:split], chosen[split:],
                                rng.choice([0, 0, 0.0005]))
                    eng.push(fn, [rec.vars[k] for k in chosen[:split]],
                             [rec.vars[k] for k in chosen[split:]], ctx, 'op', copy=copy,
                             work=rng.random() < 0.5)
        except BaseException as e:  # pragma: no cover - reported below
            failures.append(repr(e))

    def waiter(seed):
        rng = random.Random(seed)
        try:
            while not stop.is_set():
                eng.wait_for_var(rec.vars[rng.randrange(6)], rng.random() < 0.5)
        except BaseException as e:  # pragma: no cover - reported below
            failures.append(repr(e))

    pushers = [threading.Thread(target=pusher, args=(s,), daemon=True) for s in range(4)]
    waiters = [threading.Thread(target=waiter, args=(s,), daemon=True) for s in range(3)]
    for t in pushers + waiters:
        t.start()
    for t in pushers:
        t.join(60)
    stop.set()
    for t in waiters:
        t.join(60)
    assert not any(t.is_alive() for t in pushers + waiters), 'deadlock'
    eng.waitall()
    assert failures == []
    assert rec.problems == []
    assert rec.history == rec.pushed_writes


# -- threaded engine against naive engine on random NDArray programs ---------------------------

def _random_nd_program(seed, n_steps):
    """A random program of NDArray operations over arrays on cpu(0) and cpu(1); returns the
    final arrays and the values read in the middle."""
    rng = random.Random(seed)
    mx.random.seed(seed)
    init = np.random.RandomState(seed).uniform(-1, 1, (10, 16, 16)).astype(np.float32)
    ctxs = [mx.cpu(0), mx.cpu(1)]
    pool = [nd.array(init[i], ctx=ctxs[i % 2]) for i in range(10)]
    seen = []

    def on(x, ctx):
        return x if x.context == ctx else x.as_in_context(ctx)

    for _ in range(n_steps):
        i, j = rng.randrange(len(pool)), rng.randrange(len(pool))
        a = pool[i]
        b = on(pool[j], a.context)
        lo, k = rng.randrange(12), rng.randint(1, 4)
        kind = rng.randrange(16)
        if kind == 0:
            pool[i] = nd.tanh(a + b)
        elif kind == 1:
            pool[i] = nd.tanh(a * b - 0.25)
        elif kind == 2:
            pool[i] = nd.dot(a, b, transpose_b=rng.random() < 0.5) * 0.1
        elif kind == 3:
            view = a[lo:lo + k]                      # a view: writes go to a's storage
            view += b[lo + 1:lo + k + 1] if lo + k < 16 else b[0:k]
            view *= 0.5
        elif kind == 4:
            a += b
            a *= 0.5
        elif kind == 5:
            pool[i] = a.copyto(ctxs[rng.randrange(2)])
        elif kind == 6:
            a.copyto(pool[j])                        # in place, maybe across devices
        elif kind == 7:
            pool[i] = nd.random.uniform(-1, 1, shape=(16, 16), ctx=a.context)
        elif kind == 8:
            pool[i] = a + nd.random.normal(0, 0.1, shape=(16, 16), ctx=a.context)
        elif kind == 9:
            r = a.reshape((4, 64))                   # a reshaped view, written through
            r[rng.randrange(4)] = rng.random()
        elif kind == 10:
            a[lo] = b[k]                             # row assignment from another array
        elif kind == 11:
            pool[i] = a - a.mean(axis=1, keepdims=True)
        elif kind == 12:
            pool[j] = a[0:16]                        # pool entries alias one storage
        elif kind == 13:
            a[:, lo:lo + k] = nd.sigmoid(b[:, 0:k])  # a non-contiguous slice, assigned
        elif kind == 14:
            pool[i] = nd.concat(a[0:8], b[8:16], dim=0)
        elif kind == 15 and rng.random() < 0.1:
            seen.append(a.asnumpy())                 # synchronise in the middle now and then
    return [p.asnumpy() for p in pool], seen


@pytest.mark.parametrize('seed,lazy_batch', [(11, None), (12, None), (13, 1)])
def test_random_programs_agree_between_engines(seed, lazy_batch):
    """``lazy_batch=1`` hands every operation to a worker thread at once (no light operations
    left for the waiting thread), the most concurrent schedule."""
    threaded_engine = ThreadedEngine()
    if lazy_batch is not None:
        threaded_engine.lazy_batch = lazy_batch
    with mx.engine.engine_scope(threaded_engine):
        threaded, seen_t = _random_nd_program(seed, 1500)
    with mx.engine.engine_scope('NaiveEngine'):
        naive, seen_n = _random_nd_program(seed, 1500)
    assert len(seen_t) == len(seen_n) > 0
    for x, y in zip(seen_t + threaded, seen_n + naive):
        np.testing.assert_array_equal(x, y)
    assert all(np.isfinite(x).all() for x in threaded)


def test_engine_scope_restores_the_engine():
    before = mx.engine.engine_type()
    with mx.engine.engine_scope('NaiveEngine') as eng:
        assert mx.engine.engine_type() == 'NaiveEngine' and mx.engine.current() is eng
        x = nd.ones((2, 2)) * 3
    assert mx.engine.engine_type() == before
    assert x.asnumpy().sum() == 12
    with pytest.raises(MXNetError, match='unknown engine type'):
        mx.engine.set_engine_type('FastEngine')


def test_switching_engines_does_not_leak_worker_threads():
    with mx.engine.engine_scope('ThreadedEngine'):
        (nd.ones((2,)) + nd.ones((2,), ctx=mx.cpu(1)).as_in_context(mx.cpu(0))).asnumpy()
    before = threading.active_count()
    for _ in range(5):
        with mx.engine.engine_scope('ThreadedEngine'):
            (nd.ones((2,)) + nd.ones((2,), ctx=mx.cpu(1)).as_in_context(mx.cpu(0))).asnumpy()
    assert threading.active_count() <= before


def _restore_engine(kind):
    if mx.engine.engine_type() != kind:
        mx.engine.current().errors.clear()
        mx.engine.set_engine_type(kind)


def test_engine_scope_exit_with_pending_error_restores_engine():
    before = mx.engine.engine_type()
    try:
        with pytest.raises(EngineError):
            with mx.engine.engine_scope('NaiveEngine'):
                bad, _ = failing(nd.array([-1.0]))     # kept: its failure is reported
        assert mx.engine.engine_type() == before
    finally:
        _restore_engine(before)


def test_engine_scope_keeps_the_user_exception():
    before = mx.engine.engine_type()
    try:
        with pytest.raises(KeyError):
            with mx.engine.engine_scope('NaiveEngine'):
                failing(nd.array([-1.0]))
                raise KeyError('raised by the block')
    finally:
        _restore_engine(before)


# -- many Python threads pushing at once ------------------------------------------------------

THREADS_CHILD = '''
import faulthandler, json, sys, threading
import numpy as np
import neomx as mx
from neomx import nd

faulthandler.dump_traceback_later(150, exit=True)   # a deadlock prints every stack and fails
N_THREADS, ITERS = 8, 120
counter0 = nd.zeros((4, 4))
counter1 = nd.zeros((4, 4), ctx=mx.cpu(1))

def work(t, out, errors):
    try:
        rs = np.random.RandomState(t)
        a = nd.array(rs.uniform(-1, 1, (12, 12)), ctx=mx.cpu(t % 2))
        b = nd.array(rs.uniform(-1, 1, (12, 12)), ctx=mx.cpu((t + 1) % 2))
        for i in range(ITERS):
            c = nd.dot(a, b.as_in_context(a.context)) * 0.1
            a = nd.tanh(a + c)
            b[i % 12] = a[(i + t) % 12].as_in_context(b.context)
            counter0.__iadd__(1)
            counter1.__iadd__(1)
            if i % 10 == t % 10:
                a.wait_to_read()
            if i % 40 == 39:
                nd.waitall()
        out[t] = [a.asnumpy().tolist(), b.asnumpy().tolist()]
    except BaseException as e:
        errors.append(repr(e))

threaded, errors = {}, []
threads = [threading.Thread(target=work, args=(t, threaded, errors)) for t in range(N_THREADS)]
for th in threads:
    th.start()
for th in threads:
    th.join()
c0, c1 = counter0.asnumpy(), counter1.asnumpy()
naive = {}
with mx.engine.engine_scope('NaiveEngine'):
    for t in range(N_THREADS):
        work(t, naive, errors)
print(json.dumps({'errors': errors, 'c0': c0.tolist(), 'c1': c1.tolist(),
                  'same': all(threaded[t] == naive[t] for t in range(N_THREADS)),
                  'threads': len(threaded)}))
'''


def test_eight_threads_push_at_once():
    out = _run_child(THREADS_CHILD, timeout=240)
    assert out['errors'] == []
    assert out['threads'] == 8
    assert out['same'], 'results differ from the same work done under NaiveEngine'
    assert np.all(np.array(out['c0']) == 8 * 120)
    assert np.all(np.array(out['c1']) == 8 * 120)


# -- errors -----------------------------------------------------------------------------------

def _check_positive(data):
    if bool((data <= 0).any()):
        raise ValueError('found a value <= 0')
    return data * 1


# An operator that fails only when it runs, on values the front end has not seen; not
# registered, so it stays out of nd.* and of the operator tests.
CHECK_POSITIVE = Op('check_positive', _check_positive, infer=lambda a, s, d: ((s[0],), (d[0],)),
                    infer_attrs=())


def failing(a):
    """``check_positive(a)`` (failing when run if ``a`` has a value <= 0) and the line that
    pushed it."""
    bad = invoke(CHECK_POSITIVE, [a], {}); line = _line()  # noqa: E702 - the line to name
    return bad, line


def test_error_names_operator_and_line_and_propagates(engine):
    a = nd.array([-1, 2])
    bad, line = failing(a)                  # pushing does not raise
    dependent = (bad + 1) * 2
    copied = dependent.as_in_context(mx.cpu(1))
    independent = a + 10
    with pytest.raises(EngineError) as info:
        copied.asnumpy()
    err = info.value
    assert isinstance(err, MXNetError)
    assert err.op_name == 'check_positive'
    assert err.where == (__file__, line)
    assert 'operator check_positive failed: ValueError: found a value <= 0' in str(err)
    assert '%s, line %d' % (__file__, line) in str(err)
    assert isinstance(err.__cause__, ValueError)
    # The error stays: every read of a failed array, of a view of it or of anything computed
    # from it raises again, until the array is written (MXNet 1.9.1 clears it once raised, and
    # the arrays then read as unset memory).
    for _ in range(2):
        for x in (bad, dependent, copied, bad[0:1], dependent[1]):
            with pytest.raises(EngineError) as info:
                x.asnumpy()
            assert info.value.op_name == 'check_positive'
    later = bad * 2                         # pushed after the error was raised: fails too
    with pytest.raises(EngineError, match='check_positive'):
        later.wait_to_read()
    # Independent work ran, and the engine keeps working.
    assert independent.asnumpy().tolist() == [9, 12]
    assert ((a + 1) * 3).asnumpy().tolist() == [0, 9]
    ones = nd.ones((3, 3), ctx=mx.cpu(1))
    assert nd.dot(ones, ones).sum().asscalar() == 27
    # waitall reports the failure once, though reads raised it already; the arrays stay failed.
    with pytest.raises(EngineError, match='check_positive'):
        nd.waitall()
    nd.waitall()
    with pytest.raises(EngineError, match='check_positive'):
        dependent.asnumpy()


def test_waitall_raises_first_error_once(engine):
    a = nd.array([5, -6])
    first, line = failing(a)
    second, _ = failing(a + 1)
    fine = a * 2
    with pytest.raises(EngineError) as info:
        nd.waitall()
    assert info.value.where == (__file__, line)
    nd.waitall()                            # each failure is reported once by waitall
    assert fine.asnumpy().tolist() == [10, -12]
    # ... and its arrays still raise when read (MXNet 1.9.1 would read them as unset memory).
    for x in (first, second, first + 1):
        with pytest.raises(EngineError, match='check_positive'):
            x.wait_to_read()
    # Work computed from a failed array after that waitall is a failure since it: reported.
    with pytest.raises(EngineError, match='check_positive'):
        nd.waitall()
    nd.waitall()


def test_waitall_reports_failures_whose_results_can_still_be_read(engine):
    """A failure whose arrays have all been freed can give no wrong value: waitall leaves it
    out (so a test that caught an error and dropped its arrays leaves nothing behind for the
    next one). An error holds no frames, so a failed array is freed as soon as it is dropped,
    whether or not its error was raised."""
    failing(nd.array([-1.0]))                       # dropped at once
    bad, _ = failing(nd.array([-2.0]))
    with pytest.raises(EngineError):
        bad.asnumpy()
    gone = weakref.ref(bad._var)
    del bad
    assert gone() is None                           # no cycle through the error
    nd.waitall()
    kept, line = failing(nd.array([-3.0]))
    failing(nd.array([-4.0]))
    with pytest.raises(EngineError) as info:
        nd.waitall()
    assert info.value.where == (__file__, line)
    assert 'Traceback of the operation' in ''.join(getattr(info.value.__cause__, '__notes__', []))


class _State(Var):
    fails_with_writer = False       # state that stays valid, as a device's random generator


def test_a_failure_on_state_alone_is_reported_by_waitall():
    eng = ThreadedEngine()
    state = _State()
    try:
        eng.push(lambda: 1 / 0, [], [state], mx.cpu(0), 'bad_update')
        eng.wait_for_var(state)                     # the state is not failed ...
        with pytest.raises(EngineError, match='bad_update failed: ZeroDivisionError'):
            eng.waitall()                           # ... but the failure is reported
        eng.waitall()
    finally:
        eng.shutdown()


def test_a_failed_random_operation_leaves_the_generator_usable(engine):
    # Random operations read and write the device's generator. One that fails does not fail the
    # ones after it (in MXNet 1.9.1 they failed with its error until that had been raised).
    bad = nd.random.normal(0, -1, (2, 2))
    nxt = nd.random.normal(0, 1, (2, 2))
    assert nxt.asnumpy().shape == (2, 2)
    a, b = bad                              # two views of one failed array: both failed
    for x in (bad, a, b, bad):
        with pytest.raises(MXNetError, match='std'):
            x.asnumpy()
    with pytest.raises(MXNetError, match='std'):
        nd.waitall()
    assert nd.random.normal(0, 1, (2, 2)).asnumpy().shape == (2, 2)


def test_error_in_raw_push_and_errors_on_two_devices():
    eng = ThreadedEngine()
    v0, v1, v2 = Var(), Var(), Var()

    def boom():
        raise ValueError('boom in a kernel')
    line = sys._getframe().f_lineno + 1
    eng.push(boom, [], [v0], mx.cpu(0), 'first_op')     # the error names this line
    eng.push(lambda: None, [v0], [v1], mx.cpu(1), 'reader_on_cpu1')
    eng.push(lambda: None, [], [v2], mx.cpu(1), 'independent')
    with pytest.raises(EngineError) as info:
        eng.wait_for_var(v1)
    assert info.value.op_name == 'first_op'
    assert '(pushed at %s, line %d)' % (__file__, line) in str(info.value)
    assert isinstance(info.value.original, ValueError)
    eng.wait_for_var(v2)
    with pytest.raises(EngineError, match='first_op'):
        eng.wait_for_var(v1)                # again
    with pytest.raises(EngineError, match='first_op'):
        eng.waitall()                       # once
    eng.waitall()
    # The failed Var is repaired by a successful write.
    eng.push(lambda: None, [], [v0], mx.cpu(0), 'rewrite')
    eng.wait_for_var(v0)
    assert v0.error is None
    eng.shutdown()


def test_assignment_repairs_a_failed_array(engine):
    bad, _ = failing(nd.array([1, -2, 3]))
    with pytest.raises(EngineError):
        bad.wait_to_read()
    bad[0] = 7                              # a partial write: the rest is still unset
    bad[1:2] = nd.array([8])
    with pytest.raises(EngineError, match='check_positive'):
        bad.asnumpy()
    bad[:] = 7                              # MXNet 1.9.1 allows this: the buffer is overwritten
    assert bad.asnumpy().tolist() == [7, 7, 7]
    assert (bad + 1).asnumpy().tolist() == [8, 8, 8]
    with pytest.raises(EngineError, match='check_positive'):
        nd.waitall()


def test_operation_is_released_before_it_counts_as_done():
    """Everything an operation holds is freed before a waiter can see it done, so that nothing
    of it outlives ``waitall()`` in a worker thread."""
    eng = ThreadedEngine()
    w = eng.worker(mx.cpu(0))
    done_when_freed = []

    class Held:
        def __del__(self):
            done_when_freed.append(w.done)

    held = Held()
    eng.push(lambda held=held: None, [], [Var()], mx.cpu(0), 'holds', work=None)
    del held
    eng.waitall()
    assert _until(lambda: done_when_freed)
    assert done_when_freed == [0]


# -- back-pressure ----------------------------------------------------------------------------

def test_push_blocks_beyond_max_inflight():
    eng = ThreadedEngine(max_inflight=8, inline_work=0)    # every operation queued
    gate = threading.Event()
    v = Var()
    eng.push(gate.wait, [], [v], mx.cpu(0), 'gate')              # operation 1 blocks
    returned = []

    def pusher():
        for i in range(2, 41):
            eng.push(lambda: None, [v], [], mx.cpu(0), 'read', work=1)
            returned.append(i)
    t = threading.Thread(target=pusher, daemon=True)
    t.start()
    assert _until(lambda: len(returned) == 7)                    # pushes 2..8 return at once
    t.join(0.2)
    assert len(returned) == 7                                    # push 9 waits for operation 1
    w = eng.worker(mx.cpu(0))
    assert w.done == 0 and w.pushed == 9
    gate.set()
    t.join(20)
    assert returned == list(range(2, 41))
    eng.waitall()
    assert w.done == w.pushed == 40


def test_pending_operations_never_exceed_max_inflight():
    eng = ThreadedEngine(max_inflight=16, inline_work=0)
    x, y = Var(), Var()
    worst = 0
    gate = threading.Event()
    eng.push(gate.wait, [], [x], mx.cpu(0), 'gate')
    threading.Timer(0.05, gate.set).start()
    for i in range(3000):
        eng.push(lambda: None, [x], [y], mx.cpu(0), 'op', work=1 if i % 3 == 0 else None)
        w = eng.worker(mx.cpu(0))
        worst = max(worst, w.pushed - w.done)
    eng.waitall()
    assert 8 < worst <= 16


def test_unlimited_inflight_does_not_block():
    eng = ThreadedEngine(max_inflight=0, inline_work=0)
    gate = threading.Event()
    v = Var()
    eng.push(gate.wait, [], [v], mx.cpu(0), 'gate')
    for _ in range(2000):
        eng.push(lambda: None, [v], [], mx.cpu(0), 'read', work=1)
    w = eng.worker(mx.cpu(0))
    assert w.pushed - w.done == 2001          # all queued behind the gate, none refused
    gate.set()
    eng.waitall()


BACKPRESSURE_CHILD = '''
import json, threading, time
import numpy as np
import neomx as mx
from neomx import nd

PAGE = __import__('os').sysconf('SC_PAGE_SIZE')

def rss():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * PAGE

eng = mx.engine.current()
w = eng.worker(mx.cpu(0))
host = np.ones((256, 1024), np.float32)     # 1 MB

def loop(n, limit):
    """A loop that never synchronises; the first operation is held until the pusher has
    more than ``limit`` operations pending (or until the end with no limit)."""
    eng.max_inflight = limit
    gate = threading.Event()
    a = nd.zeros((1,))
    mx.engine.push(gate.wait, [], [a._var], mx.cpu(0), 'gate')
    gate_seq = w.pushed
    if limit:
        def release_when_blocked():
            # The pusher blocks once `limit` operations wait behind the gate.
            while w.pushed - gate_seq < limit:
                time.sleep(0.001)
            gate.set()
        threading.Thread(target=release_when_blocked, daemon=True).start()
    start = rss()
    peak = 0
    worst = 0
    for i in range(n):
        x = nd.array(host)                  # 1 MB allocated now, read by a queued operation
        y = x * 2 + a
        worst = max(worst, w.pushed - w.done)
        peak = max(peak, rss() - start)
    gate.set()
    nd.waitall()
    return worst, peak / 2**20

print(json.dumps({'configured': eng.max_inflight,
                  'bounded': loop(150, eng.max_inflight), 'unbounded': loop(150, 0)}))
'''


def test_backpressure_keeps_memory_flat():
    """NEOMX_ENGINE_MAX_INFLIGHT bounds the operations (and so the memory) a loop without any
    synchronisation can queue; with the limit off, the same loop queues everything."""
    out = _run_child(BACKPRESSURE_CHILD, env={'NEOMX_ENGINE_MAX_INFLIGHT': '16'})
    assert out['configured'] == 16
    worst, grown = out['bounded']
    assert worst <= 16
    assert grown < 48, 'RSS grew by %.0f MB with at most 16 operations pending' % grown
    worst, grown = out['unbounded']
    assert worst >= 300                     # 150 iterations x 2 operations, all queued
    assert grown > 100, 'the control run should hold ~150 MB of queued inputs'


# -- the light-operation policy ---------------------------------------------------------------

# Light, but above the size that runs inline when nothing is pending (tested further below).
LIGHT = 1 << 16


def _sleeping_worker(eng, ctx=mx.cpu(0)):
    w = eng.worker(ctx)
    assert _until(lambda: w.sleeping)
    return w


def test_waiter_runs_queued_light_ops_itself():
    eng = ThreadedEngine()
    w = _sleeping_worker(eng)
    v = Var()
    ran_on = []
    for _ in range(10):
        eng.push(lambda: ran_on.append(threading.current_thread()), [v], [v], mx.cpu(0),
                 'light', work=LIGHT)
    time.sleep(0.05)                        # room for a wrongly woken worker to take them
    assert w.sleeping and w.done == 0       # light operations alone do not wake the worker
    eng.wait_for_var(v)
    assert ran_on == [threading.current_thread()] * 10
    assert w.done == 10


def test_heavy_op_runs_on_worker_while_pusher_continues():
    eng = ThreadedEngine()
    w = _sleeping_worker(eng)
    started, proceed, finished = threading.Event(), threading.Event(), threading.Event()
    ran_on = []

    def heavy():
        ran_on.append(threading.current_thread())
        started.set()
        proceed.wait(30)
        finished.set()
    v = Var()
    eng.push(heavy, [], [v], mx.cpu(0), 'heavy', work=None)
    # The worker picks it up by itself: this thread never waits on the engine meanwhile.
    assert started.wait(30)
    assert ran_on == [w.thread]
    # The pusher keeps going while the heavy operation runs: it pushes to the other device and
    # waits there, which completes before the heavy operation does.
    u = Var()
    eng.push(lambda: None, [], [u], mx.cpu(1), 'other_device', work=LIGHT)
    eng.wait_for_var(u)
    assert not finished.is_set()
    proceed.set()
    eng.wait_for_var(v)
    assert finished.is_set()


def test_waiter_leaves_multithreaded_ops_to_the_worker(cores):
    """A waiting thread runs queued light operations itself up to the first one that runs on
    several intra-op threads: that one, and what follows it, run on the worker, so that only
    the worker's thread keeps OpenMP helper threads (see Worker._help)."""
    cores(2)
    eng = ThreadedEngine()
    w = _sleeping_worker(eng)
    assert eng.intra_op_threads == 2
    v = Var()
    ran = []

    def op(label):
        return lambda: ran.append((label, threading.current_thread(),
                                   torch.get_num_threads()))
    for work, label in ((LIGHT, 'light'), (LIGHT, 'light'), (None, 'heavy'),
                        (LIGHT, 'after')):
        w.queue.append((op(label), [v], [v], None, w.pushed + 1, label, None, work))
        w.pushed += 1
    w.wait(w.pushed)
    me = threading.current_thread()
    assert ran == [('light', me, 1), ('light', me, 1), ('heavy', w.thread, 2),
                   ('after', w.thread, 1)], ran


def test_light_ops_wake_the_worker_in_batches():
    eng = ThreadedEngine()
    w = _sleeping_worker(eng)
    v = Var()
    ran_on = []
    last = threading.Event()
    n = eng.lazy_batch
    for i in range(n):
        eng.push(lambda i=i: (ran_on.append(threading.current_thread()), i == n - 1 and last.set()),
                 [v], [v], mx.cpu(0), 'light', work=LIGHT)
    assert last.wait(30)                    # nobody waited: the batch woke the worker
    assert set(ran_on) == {w.thread}


def test_heavy_op_takes_queued_light_ops_along_in_order():
    eng = ThreadedEngine()
    w = _sleeping_worker(eng)
    v = Var()
    order = []
    done = threading.Event()
    for i in range(5):
        eng.push(lambda i=i: order.append(i), [v], [v], mx.cpu(0), 'light', work=LIGHT)
    eng.push(lambda: (order.append('heavy'), done.set()), [v], [v], mx.cpu(0), 'heavy')
    assert done.wait(30)
    assert order == [0, 1, 2, 3, 4, 'heavy']
    assert w.done == 6


def test_tiny_op_with_nothing_pending_runs_in_the_pushing_thread():
    eng = ThreadedEngine()
    w = _sleeping_worker(eng)
    v = Var()
    ran_on = []
    eng.push(lambda: ran_on.append(threading.current_thread()), [], [v], mx.cpu(0), 'tiny',
             work=1)
    assert ran_on == [threading.current_thread()]       # complete when push returns
    assert w.pushed == 0 and w.sleeping                 # never queued, nobody woken
    eng.push(lambda: ran_on.append(1), [], [v], mx.cpu(0), 'big', work=engine_impl.INLINE_WORK)
    eng.wait_for_var(v)
    assert w.pushed == 1                                # not tiny: queued


def test_copy_into_a_device_nothing_computed_on_runs():
    # Tiny operations run in the pushing thread and create no worker, so a copy worker can be
    # a process's first: it has no thread budget yet and must leave torch's setting alone.
    eng = ThreadedEngine()
    v = Var()
    ran = []
    eng.push(lambda: ran.append(torch.get_num_threads()), [], [v], mx.cpu(3), 'copy',
             copy=True)
    eng.wait_for_var(v)
    assert ran and ran[0] >= 1
    eng.shutdown()


def test_a_failure_around_the_kernel_fails_the_operation_not_the_worker():
    eng = ThreadedEngine()
    v, u = Var(), Var()
    eng.push(lambda: None, [], [v], mx.cpu(0), 'first')
    eng.wait_for_var(v)
    eng.budget.intra_op_threads = -1          # torch.set_num_threads(-1) raises before the kernel
    eng.push(lambda: None, [], [v], mx.cpu(0), 'bad_threads')
    with pytest.raises(EngineError, match='bad_threads'):
        eng.wait_for_var(v)
    eng.budget.intra_op_threads = 1
    eng.push(lambda: None, [], [u], mx.cpu(0), 'after')
    eng.wait_for_var(u)                # the worker still runs, and nothing hangs
    eng.shutdown()


def test_tiny_op_behind_a_pending_write_waits_its_turn():
    eng = ThreadedEngine()
    gate = threading.Event()
    v, u = Var(), Var()
    order = []
    eng.push(lambda: (gate.wait(), order.append('write')), [], [v], mx.cpu(0), 'gate')
    eng.push(lambda: order.append('read'), [v], [u], mx.cpu(0), 'tiny', work=1)
    # Independent of the pending write, but the device's worker is busy: queued as well (one
    # thread at a time runs a device's operations).
    eng.push(lambda: order.append('other'), [], [Var()], mx.cpu(0), 'tiny', work=1)
    assert order == []
    gate.set()
    eng.waitall()
    assert order == ['write', 'read', 'other']
    # A tiny op writing an array that a queued operation still reads waits for that read.
    gate.clear()
    eng.push(lambda: (gate.wait(), order.append('read v')), [v], [Var()], mx.cpu(0), 'gate')
    eng.push(lambda: order.append('write v'), [], [v], mx.cpu(0), 'tiny', work=1)
    assert order[-1] == 'other'
    gate.set()
    eng.wait_for_var(v, for_write=True)
    assert order[-2:] == ['read v', 'write v']


def test_tiny_op_error_is_raised_at_the_next_sync_with_the_users_line():
    eng = ThreadedEngine()
    v = Var()
    eng.push(lambda: 1 / 0, [], [v], mx.cpu(0), 'tiny_div', work=1)     # runs now, raises later
    with pytest.raises(EngineError, match='tiny_div failed: ZeroDivisionError'):
        eng.wait_for_var(v)
    eng.shutdown()
    bad = nd.ones((2,)).astype('int32')
    bad.wait_to_read()
    out = bad / 0                      # the scalar hot path: ATen raises inside the push
    with pytest.raises(EngineError) as info:
        out.wait_to_read()
    assert 'test_engine.py' in str(info.value)
    assert (nd.ones((2,)) + 1).asnumpy().tolist() == [2, 2]    # the engine keeps working
    # waitall reports the failure once more while its array lives (as MXNet does), and only
    # once: the next test's engine starts clean whenever the collector frees `out`
    with pytest.raises(EngineError, match='_div_scalar'):
        nd.waitall()
    nd.waitall()


def test_tiny_arithmetic_on_a_marked_variable_outside_record_builds_no_graph():
    x = nd.ones((3,))
    x.attach_grad()
    y = x * 2 + 1
    assert not y._data().requires_grad
    x.wait_to_read()
    y = x * 2 + 1                      # nothing pending now: the inline path
    assert not y._data().requires_grad
    with mx.autograd.record():
        z = (x * 2).sum()
    z.backward()
    assert x.grad.asnumpy().tolist() == [2, 2, 2]


def test_profiled_tiny_ops_are_queued_and_traced():
    eng = ThreadedEngine()
    eng.trace = []
    v = Var()
    eng.push(lambda: None, [], [v], mx.cpu(0), 'tiny', work=1)
    eng.wait_for_var(v)
    assert [t[1] for t in eng.trace] == ['tiny']
    eng.trace = None
    eng.shutdown()


class _TimeLimit(BaseException):
    """What a test runner's time limit raises from its SIGALRM handler (not an Exception)."""


def _interrupt(kind=KeyboardInterrupt):
    raise kind     # what a Ctrl-C's (or an alarm's) signal handler raises in the main thread


@pytest.mark.parametrize('kind', [KeyboardInterrupt, _TimeLimit])
@pytest.mark.parametrize('path', ['naive', 'inline', 'fast', 'waiter'])
def test_ctrl_c_in_an_operation_run_by_the_main_thread_reaches_the_caller(path, kind):
    """A KeyboardInterrupt (or another BaseException a signal handler raises: a test's time
    limit) raised while the calling thread runs an operation itself (the naive engine, a tiny
    operation run at once, queued light operations run by a waiter) is raised to the caller at
    once, not kept as the operation's error: a DataLoader loop interrupted by Ctrl-C while
    converting a batch had run on to its end, and a GluonCV test whose time limit struck while
    the main thread ran its network's forward ran on until killed. The operation still
    completes as failed, so nothing waits on it for ever, and waitall does not raise it a
    second time."""
    _interrupt = functools.partial(globals()['_interrupt'], kind)
    eng = NaiveEngine() if path == 'naive' else ThreadedEngine()
    v, later = Var(), Var()
    try:
        if path == 'waiter':
            eng.push(lambda: None, [], [later], mx.cpu(0), 'first')     # starts the worker
            eng.wait_for_var(later)
            # light operations do not wake the idle worker: the waiter runs them
            eng.push(_interrupt, [], [v], mx.cpu(0), 'interrupted',
                     work=engine_threads.LIGHT_WORK - 1)
            eng.push(lambda: None, [v], [later], mx.cpu(0), 'after',
                     work=engine_threads.LIGHT_WORK - 1)
            with pytest.raises(kind):
                eng.wait_for_var(later)
        elif path == 'fast':        # the tiny-operation hot path
            with pytest.raises(kind):
                eng.run_now(lambda x: _interrupt(), torch.zeros(1), None, later, None, v,
                            mx.cpu(0), 'interrupted', 1)
        else:
            with pytest.raises(kind):
                eng.push(_interrupt, [], [v], mx.cpu(0), 'interrupted', work=1)
        with pytest.raises(EngineError, match='interrupted failed: ' + kind.__name__):
            eng.wait_for_var(v)
        eng.waitall()
        eng.push(lambda: None, [], [v], mx.cpu(0), 'rewrite')
        eng.wait_for_var(v)
        assert v.error is None
    finally:
        eng.shutdown()


def test_a_keyboard_interrupt_raised_on_a_worker_fails_only_its_operation():
    eng = ThreadedEngine()
    v, w = Var(), Var()
    try:
        eng.push(_interrupt, [], [v], mx.cpu(0), 'interrupted')          # heavy: the worker's
        eng.push(lambda: None, [], [w], mx.cpu(0), 'after')
        eng.wait_for_var(w)                                              # the worker lives on
        with pytest.raises(EngineError, match='interrupted failed: KeyboardInterrupt'):
            eng.wait_for_var(v)
    finally:
        eng.shutdown()


_CTRL_C_LOOP = """
import signal, sys, time
# as in an interactive program: a process started in the background inherits SIGINT ignored
signal.signal(signal.SIGINT, signal.default_int_handler)
import neomx as mx
x = mx.nd.ones((4,))
x.wait_to_read()
print('ready', flush=True)
start = time.monotonic()
try:
    while time.monotonic() - start < 20:
        for _ in range(1000):
            y = x + 1           # tiny operations, run by this thread as they are pushed
    print('ran to the end', flush=True)
except KeyboardInterrupt:
    print('interrupted', flush=True)
"""


def test_ctrl_c_stops_a_loop_of_tiny_operations():
    """Ctrl-C during a loop of tiny operations stops it. The signal's KeyboardInterrupt is
    raised in whatever the main thread runs, which is mostly the operations themselves; it had
    been kept as the operation's error, and the loop ran on (half the time)."""
    import signal
    for _ in range(3):
        child = subprocess.Popen([sys.executable, '-c', _CTRL_C_LOOP], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            assert child.stdout.readline().startswith('ready')
            time.sleep(0.2)
            child.send_signal(signal.SIGINT)
            out, err = child.communicate(timeout=60)
        finally:
            child.kill()
        assert out.strip() == 'interrupted', (out, err[-3000:])


def test_naive_engine_runs_inline_and_defers_errors():
    eng = NaiveEngine()
    v = Var()
    ran = []
    eng.push(lambda: ran.append(threading.current_thread()), [], [v], mx.cpu(1), 'op')
    assert ran == [threading.current_thread()]
    eng.push(lambda: 1 / 0, [], [v], mx.cpu(0), 'div')       # stored, not raised here
    with pytest.raises(EngineError, match='ZeroDivisionError'):
        eng.wait_for_var(v)


# -- intra-op threads -------------------------------------------------------------------------

@pytest.fixture
def cores(monkeypatch):
    """``cores(n)`` makes the engine see ``n`` cores, with no thread count set in the
    environment and the cores never contended (this machine's load leaves the count alone);
    torch's thread count is restored afterwards."""
    monkeypatch.delenv('NEOMX_CPU_THREADS', raising=False)
    monkeypatch.delenv('OMP_NUM_THREADS', raising=False)
    monkeypatch.setattr(engine_threads, 'CONTENDED_WAIT', 0)
    before = torch.get_num_threads()
    yield lambda n: monkeypatch.setattr(engine_threads, 'cpu_budget', lambda: n)
    torch.set_num_threads(before)


def _probe_threads(eng, ctx):
    seen = []
    v = Var()
    eng.push(lambda: seen.append(torch.get_num_threads()), [], [v], ctx, 'probe')
    eng.wait_for_var(v)
    return seen[0]


def test_intra_op_threads_split_between_cpu_devices(cores):
    cores(9)
    eng = ThreadedEngine()
    # All cores go to the one CPU device (the pushing thread computes on one: front_end_thread)
    assert _probe_threads(eng, mx.cpu(0)) == 9
    assert torch.get_num_threads() == 1
    # ... and are shared once a second CPU device is in use, never oversubscribed.
    assert _probe_threads(eng, mx.cpu(1)) == 4
    assert _probe_threads(eng, mx.cpu(0)) == 4
    assert torch.get_num_threads() == 1
    naive = NaiveEngine()
    assert _probe_threads(naive, mx.cpu(0)) == 9


def test_intra_op_threads_leave_data_loading_processes_the_cores_they_take(cores):
    """While DataLoader worker processes make batches (threads.share_cores), the kernels leave
    them the cores they take, a core counted once they fill a quarter of it, up to half the
    cores."""
    def after(engine, change):
        engine_threads.share_cores(change)
        return _probe_threads(engine, mx.cpu(0))

    cores(9)
    eng = ThreadedEngine()
    saved = engine_threads._SHARED[0]      # a loader's pass another test left alive
    engine_threads._SHARED[0] = 0
    try:
        assert after(eng, 0) == 9
        assert after(eng, 3) == 6
        assert after(eng, 10) == 5
        assert after(eng, -13) == 9
        cores(2)
        two = ThreadedEngine()
        assert after(two, 4) == 1
        assert after(two, -4) == 2
        # a loader's processes that fill a fifth of a core leave both; 0.3 or 0.4, one: the
        # fill they get beside two-thread kernels is less than they want
        assert after(two, 0.2) == 2
        assert after(two, 0.1) == 1
        assert after(two, 0.1) == 1
        assert after(two, -0.4) == 2
        assert after(two, 0.6) == 1
        assert after(two, -0.6) == 2
    finally:
        engine_threads._SHARED[0] = saved


def test_intra_op_threads_follow_omp_num_threads(cores, monkeypatch):
    cores(9)
    monkeypatch.setenv('OMP_NUM_THREADS', '2')
    eng = ThreadedEngine()
    assert _probe_threads(eng, mx.cpu(0)) == 2
    assert _probe_threads(eng, mx.cpu(1)) == 2


def test_neomx_cpu_threads_override_in_fresh_process():
    out = _run_child('''
        import json, torch
        import neomx as mx
        from neomx.engine import Var
        def probe(ctx):
            seen, v = [], Var()
            mx.engine.push(lambda: seen.append(torch.get_num_threads()), [], [v], ctx, 'probe')
            mx.engine.wait_for_var(v)
            return seen[0]
        first = probe(mx.cpu(0))
        second = probe(mx.cpu(1))
        y = mx.nd.dot(mx.nd.ones((64, 64)), mx.nd.ones((64, 64))).sum().asscalar()
        print(json.dumps([first, second, torch.get_num_threads(), float(y)]))
    ''', env={'NEOMX_CPU_THREADS': '3', 'OMP_NUM_THREADS': '1'})
    assert out == [3, 3, 1, 64.0 ** 3]


class _FakeSchedstat:
    """Stands for ``threads.run_queue_wait``: each reading adds ``wakeups`` wake-ups that waited
    ``wait_us`` microseconds each."""

    def __init__(self, wait_us, wakeups=10):
        self.wait_us, self.wakeups = wait_us, wakeups
        self.total = [0, 0]

    def __call__(self):
        self.total[0] += int(self.wait_us * 1000) * self.wakeups
        self.total[1] += self.wakeups
        return tuple(self.total)


def test_load_probe_verdicts(monkeypatch):
    """The cores count as contended when a thread waits for one more than CONTENDED_WAIT
    microseconds per wake-up, as free below a quarter of it; in between, or over too few
    wake-ups, the verdict stays."""
    monkeypatch.setattr(engine_threads, 'CONTENDED_WAIT', 1000)
    fake = _FakeSchedstat(5000)
    monkeypatch.setattr(engine_threads, 'run_queue_wait', fake)
    budget = engine_threads.ThreadBudget()
    probe = engine_threads.LoadProbe(budget)
    probe.sample()
    assert budget.contended and probe.next > time.monotonic()
    fake.wait_us = 500                      # between a quarter and the whole: unchanged
    probe.sample()
    assert budget.contended
    fake.wait_us, fake.wakeups = 10, 2      # too few wake-ups to tell: unchanged
    probe.sample()
    assert budget.contended
    fake.wakeups = 10
    probe.sample()
    assert not budget.contended
    fake.wait_us = 500
    probe.sample()
    assert not budget.contended


def test_for_work_is_one_thread_while_contended(cores):
    cores(4)
    budget = engine_threads.ThreadBudget()
    assert budget.for_work(None) == 0           # no CPU device in use: torch's setting stays
    budget.use_device(mx.cpu(0))
    assert budget.for_work(None) == 4 and budget.for_work(engine_threads.PARALLEL_WORK) == 4
    assert budget.for_work(engine_threads.PARALLEL_WORK - 1) == 1
    budget.contended = True
    assert budget.for_work(None) == 1 and budget.for_work(1 << 30) == 1
    budget.fixed = True                         # NEOMX_CPU_THREADS: the count stays
    assert budget.for_work(None) == 4


def test_worker_runs_kernels_on_one_thread_while_the_cores_are_contended(cores, monkeypatch):
    """A CPU worker's thread measures how long it waits for a core (threads.LoadProbe); while
    that says the cores are contended, a large operation runs on one intra-op thread, and on
    all of them again once they are free."""
    cores(2)
    monkeypatch.setattr(engine_threads, 'CONTENDED_WAIT', 1000)
    fake = _FakeSchedstat(20000)                # 20 ms per wake-up: a machine with load 15
    monkeypatch.setattr(engine_threads, 'run_queue_wait', fake)
    eng = ThreadedEngine()
    assert _probe_threads(eng, mx.cpu(0)) == 1 and eng.budget.contended
    fake.wait_us = 10
    # The worker looks again at its next wake-up INTERVAL seconds on (a waiting thread may
    # run the operation that woke it, on one thread while the verdict stands).
    assert _until(lambda: _probe_threads(eng, mx.cpu(0)) and not eng.budget.contended)
    assert _probe_threads(eng, mx.cpu(0)) == 2


def test_run_queue_wait_reads_this_threads_schedstat():
    got = engine_threads.run_queue_wait()
    if got is None:
        pytest.skip('no /proc/thread-self/schedstat')
    wait, wakeups = got
    assert wait >= 0 and wakeups >= 1


# -- the floating-point environment of the engine's threads ------------------------------------

_FLUSH = '''
    import json, torch
    import neomx as mx
    x = mx.nd.ones((1 << 20,)) * 1e-38         # a parallel kernel: both intra-op threads
    def flushed():
        y = x * 1e-3                            # 1e-41: a denormal, or 0 flushed to zero
        return int((y == 0).sum().asscalar())
    out = [flushed()]
    torch.set_flush_denormal(True)              # in this thread, after the worker started
    out.append(flushed())
    torch.set_flush_denormal(False)
    out.append(flushed())
    print(json.dumps(out))
'''


@pytest.mark.skipif(engine_threads.float_controls() is None,
                    reason='floating-point controls are read on x86-64 with glibc only')
def test_worker_follows_the_flush_to_zero_setting_of_the_main_thread():
    """Flush-to-zero is a setting of each thread: set in the main thread after the engine's
    worker started, it reaches the worker and its OpenMP helpers (the worker takes the
    controls of the thread that wakes it or waits for it), so an operation's results do not
    depend on which thread ran it; turned off again, it is off there too."""
    before, on, off = _run_child(_FLUSH, env={'NEOMX_CPU_THREADS': '2', 'OMP_NUM_THREADS': '2'})
    assert (before, on, off) == (0, 1 << 20, 0)


def test_float_controls_round_trip_between_threads():
    controls = engine_threads.float_controls()
    if controls is None:
        pytest.skip('floating-point controls are read on x86-64 with glibc only')
    seen = []

    def other():
        engine_threads.set_float_controls(controls | 0x8040)      # flush-to-zero, DAZ
        seen.append((engine_threads.float_controls(),
                     float(np.float32(1e-38) * np.float32(1e-3))))
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [(controls | 0x8040, 0.0)]
    assert engine_threads.float_controls() == controls     # this thread's are its own


_REFAULTS = '''
    import json, resource, sys, threading, torch
    import neomx
    faults = {}
    def rounds(where):
        faults[where] = []
        for _ in range(6):
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            blocks = [torch.ones(1 << 20) for _ in range(16)]       # 16 x 4 MiB, then freed
            blocks.append(torch.ones(12 << 20))                     # one of 48 MiB
            blocks.append(torch.ones(24 << 20))                     # one of 96 MiB
            del blocks
            faults[where].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    rounds('main')
    worker = threading.Thread(target=rounds, args=('worker',))
    worker.start()
    worker.join()
    print(json.dumps(faults))
'''


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason="glibc's malloc settings")
def test_freed_memory_is_kept_for_the_next_step():
    """Memory a step frees is reused by later ones without faulting its pages in again (MXNet's
    storage pool does the same), in the main thread and in another thread (an engine worker):
    after the first rounds, allocating and filling 208 MiB again takes almost no page faults.
    (With NEOMX_KEEP_FREED_MEMORY=0, glibc maps the 48 and 96 MiB blocks afresh every round
    and mostly hands the rest back too, so each round faults up to all 53,248 pages in
    again.)"""
    kept = _run_child(_REFAULTS)
    for where, faults in kept.items():
        assert sum(faults[3:]) < 4096, (where, faults)


def test_freed_memory_settings_can_be_left_alone(monkeypatch):
    from neomx.engine import memory
    monkeypatch.setenv('NEOMX_KEEP_FREED_MEMORY', '0')
    assert memory.keep_freed_memory() == []
    monkeypatch.delenv('NEOMX_KEEP_FREED_MEMORY')
    monkeypatch.setenv('MALLOC_TOP_PAD_', str(64 << 20))      # the user's own setting stays
    made = memory.keep_freed_memory()
    if sys.platform.startswith('linux'):
        assert made == ['MALLOC_ARENA_MAX', 'MALLOC_MMAP_MAX_', 'MALLOC_TRIM_THRESHOLD_',
                        'MALLOC_MMAP_THRESHOLD_'], made


_HELPERS = '''
    import json, os, time, numpy as np, torch
    import neomx as mx
    from neomx.engine import threads
    def count():
        return len(os.listdir('/proc/self/task'))
    def settled(want):
        for _ in range(200):
            if want(count()):
                return count()
            time.sleep(0.01)
        return count()
    x = torch.rand(2000, 2000)
    a = mx.nd.array(x.numpy())
    b = a * 2
    b.wait_to_read()                 # a parallel kernel on the worker: its helper started
    torch.set_num_threads(2)         # and one in this thread, as a benchmark's PyTorch runs
    y = x * 2
    before = count()
    mx.engine.end_helper_threads()
    ended = settled(lambda n: n <= before - 2)
    y = x * 2                        # this thread's helper starts again ...
    again = count()
    ok = threads.end_idle_helpers()  # ... and ends again
    final = settled(lambda n: n == ended)
    same = bool(np.array_equal((a * 2).asnumpy(), y.numpy()) and
                np.array_equal(b.asnumpy(), y.numpy()))
    print(json.dumps([before, ended, again, final, ok, same]))
'''


@pytest.mark.skipif(not os.path.isdir('/proc/self/task') or (os.cpu_count() or 1) < 2,
                    reason='needs Linux and two cores')
def test_end_helper_threads_ends_the_idle_openmp_helpers():
    """end_helper_threads ends the OpenMP helper threads the calling thread and the engine's
    CPU worker keep after a parallel kernel (a benchmark times PyTorch beside neomx with them
    gone); the next parallel kernel starts them again and computes as before."""
    before, ended, again, final, ok, same = _run_child(_HELPERS, env={
        'NEOMX_CPU_THREADS': '2', 'OMP_NUM_THREADS': '2'})
    assert ended <= before - 2, (before, ended)
    assert again == ended + 1 and ok and final == ended, (ended, again, final)
    assert same


_FRONT_END = r'''
    import json, os, time, torch
    x = torch.rand(4000, 1000)
    y = x * 2            # a parallel kernel before neomx's first operation: this thread's helper
    def count():
        return len(os.listdir('/proc/self/task'))
    with_helper = count()
    import neomx as mx
    from neomx.engine import Var
    seen, v = [], Var()
    mx.engine.push(lambda: seen.append(torch.get_num_threads()), [], [v], mx.cpu(), 'probe')
    mx.engine.wait_for_var(v)
    mine = torch.get_num_threads()
    a = mx.nd.ones((32, 256))
    for _ in range(200):     # tiny operations, several run at once in this thread
        a = mx.nd.tanh(a * 0.5 + 0.1)
    a.wait_to_read()
    b = mx.nd.dot(mx.nd.ones((512, 512)), mx.nd.ones((512, 512)))
    b.wait_to_read()     # a parallel kernel on the worker: its helper started
    z = x * 2            # this thread's own torch kernel: on one thread, no helper started
    after = count()
    print(json.dumps([with_helper, seen[0], mine, after, bool(torch.equal(y, z))]))
'''


@pytest.mark.skipif(not os.path.isdir('/proc/self/task') or (os.cpu_count() or 1) < 2,
                    reason='needs Linux and two cores')
def test_the_pushing_thread_computes_on_one_intra_op_thread():
    """Once a CPU worker runs, the thread that pushes to it computes its own kernels (the tiny
    ones it runs at once, a waiter's) on one intra-op thread, and the OpenMP helper it kept from
    an earlier kernel is ended: a second OpenMP team would make libgomp stop every helper
    spin-waiting, the worker's too (threads.front_end_thread). The worker keeps the cores."""
    with_helper, worker, mine, after, same = _run_child(_FRONT_END, env={
        'NEOMX_CPU_THREADS': '2', 'OMP_NUM_THREADS': '2'})
    assert worker == 2 and mine == 1
    # the worker thread and its OpenMP helper came (with at most one more thread), this thread's
    # helper went
    assert after <= with_helper + 2, (with_helper, after)
    assert same


_LAZY_COUNT = r"""
    import json, threading, torch
    import neomx as mx
    from neomx.engine import Var
    # No torch kernel in this thread yet: torch gives a thread its intra-op count at its first
    # one, taking the count set last by any thread. The worker's first kernel, on two threads,
    # runs before this thread's first.
    x = mx.nd.random.normal(shape=(256, 256))
    ran, seen, v = threading.Event(), [], Var()
    mx.engine.push(lambda: (seen.append(torch.get_num_threads()), ran.set()), [x._var], [v],
                   mx.cpu(), 'probe')
    ran.wait()           # no kernel of its own meanwhile
    mine = torch.get_num_threads()
    a = mx.nd.ones((64, 64))
    for _ in range(20):  # tiny operations, which this thread runs itself
        a = mx.nd.tanh(a * 0.5 + 0.1)
    a.wait_to_read()
    print(json.dumps([seen[0], mine, torch.get_num_threads()]))
"""


def test_the_pushing_thread_keeps_one_intra_op_thread_set_before_its_first_kernel():
    """The pushing thread's one intra-op thread holds when the worker's first kernel runs
    before its own: torch sets a thread's count lazily, at its first kernel, to the count set
    last by any thread (the worker's two), unless the thread settled its own first
    (threads.settle_intra_op_threads); with two, its kernels would start a second OpenMP team."""
    worker, mine, later = _run_child(_LAZY_COUNT, env={
        'NEOMX_CPU_THREADS': '2', 'OMP_NUM_THREADS': '2'})
    assert worker == 2
    assert mine == 1 and later == 1, (mine, later)


_GIL = r"""
    import json, sys
    if OWN:
        sys.setswitchinterval(OWN)    # the program's own, before neomx
    import neomx as mx
    before = sys.getswitchinterval()
    x = mx.nd.ones((4,))
    x.attach_grad()      # the first push starts the worker
    mx.nd.waitall()
    print(json.dumps([before, sys.getswitchinterval()]))
"""


def _gil_child(interval='', own=None):
    """[the switch interval before the engine's first worker, after it] in a fresh process with
    NEOMX_ENGINE_GIL_INTERVAL=``interval`` ('': unset) and the program's own ``own``."""
    return _run_child(_GIL.replace('OWN', repr(own)),
                      env={'NEOMX_ENGINE_GIL_INTERVAL': interval})


def test_the_engine_shortens_the_gil_switch_interval_when_its_first_worker_starts():
    """A worker needs the GIL for microseconds between kernels, and CPython lets a front end
    running Python keep it for 5 ms: the first worker sets 1 ms (threads.share_the_gil), unless
    the program set an interval of its own or NEOMX_ENGINE_GIL_INTERVAL says otherwise (0:
    the interpreter's)."""
    assert _gil_child() == [0.005, 0.001]
    assert _gil_child('250') == [0.005, 0.00025]
    assert _gil_child('0') == [0.005, 0.005]
    assert _gil_child(own=0.002) == [0.002, 0.002]


def _spin_count_child(env, torch_first=False):
    """GOMP_SPINCOUNT in a fresh process, after it imported neomx (torch before it with
    ``torch_first``), whose environment had ``env``'s GOMP_SPINCOUNT and OMP_WAIT_POLICY."""
    code = 'import json, os\n%simport neomx\nprint(json.dumps(os.environ.get("GOMP_SPINCOUNT")))'
    return _run_child(code % ('import torch\n' if torch_first else ''),
                      env=dict({'GOMP_SPINCOUNT': None, 'OMP_WAIT_POLICY': None}, **env))


def test_openmp_helpers_spin_briefly_unless_the_program_chose_how_they_wait():
    """libgomp's helper threads spin 300,000 times between parallel regions, as if they owned
    the cores; neomx's front end and worker need one too. Importing neomx sets 30,000
    (base.OMP_SPIN_COUNT) before torch loads libgomp, unless the program set a spin count or a
    wait policy, or imported torch first (too late: libgomp has read its environment)."""
    from neomx.base import OMP_SPIN_COUNT
    assert _spin_count_child({}) == str(OMP_SPIN_COUNT) == '30000'
    assert _spin_count_child({'GOMP_SPINCOUNT': '1000'}) == '1000'
    assert _spin_count_child({'OMP_WAIT_POLICY': 'passive'}) is None
    assert _spin_count_child({}, torch_first=True) is None


def test_stream_of_is_none_where_operations_run_on_no_stream_of_their_own():
    """``engine.stream_of``: a CPU's operations have no CUDA stream, and the naive engine runs
    every operation on the current stream (a GPU's stream is checked by the gpu tests)."""
    assert mx.engine.stream_of(mx.cpu(0)) is None
    assert NaiveEngine().stream_of(mx.gpu(0)) is None
