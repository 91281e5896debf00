"""Training across processes: the ``dist_sync`` and ``dist_device_sync`` KVStores on
torch.distributed (gloo for host memory, NCCL for CUDA devices).

MXNet 1.x reduces through parameter servers; neomx reduces with collectives, the way
Horovod and PyTorch's DistributedDataParallel do: a push sums each key's values over the
devices of this process, then over all processes (an allreduce), so every process holds the
same sum and, with an optimizer set on the store, applies the same update to the same
weights. ``kv.init`` gives every process rank 0's value. Scripts are unchanged::

    kv = mx.kv.create('dist_sync')          # joins the job started by `neomx launch` / torchrun
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {...}, kvstore='dist_sync')

Gradients are reduced in buckets that start while the backward pass is still running: once
the Trainer has pushed each parameter's gradients once (which tells the store which gradient
arrays belong to which key), a hook on each parameter's leaf tensor reports its gradient as
soon as torch has accumulated it; a bucket of keys (``NEOMX_DIST_BUCKET_MB``, 4 MB by
default) whose gradients are all ready on all devices is summed and handed to an
asynchronous allreduce at once, in bucket order, while backward goes on with earlier layers.
The push then only waits for the bucket. A bucket whose gradients changed after it started
(a second backward, ``grad_req='add'``, an in-place edit such as clipping before the step) is
not used: that push reduces the current gradients itself, so the result is always the sum of
what was pushed.

Environment: ``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT`` (set by the launcher;
without them the store is a job of one process), ``NEOMX_DIST_TIMEOUT`` (seconds a collective
or the rendezvous may wait for the other processes before failing, default 300),
``NEOMX_DIST_BUCKET_MB`` (0 turns the overlapping reduction off), ``NEOMX_DIST_BACKEND``
(torch.distributed backend string, default gloo, plus NCCL for CUDA tensors when available).

>>> import neomx as mx
>>> kv = mx.kv.create('dist_sync')       # not launched: a job of one process
>>> kv.type, kv.rank, kv.num_workers
('dist_sync', 0, 1)
>>> kv.init('w', mx.nd.ones((3,)))
>>> kv.pushpull('w', [mx.nd.ones((3,), ctx=mx.cpu(0)), mx.nd.ones((3,), ctx=mx.cpu(1))])
>>> out = mx.nd.zeros((3,))
>>> kv.pull('w', out=out)
>>> out.asnumpy().tolist()
[2.0, 2.0, 2.0]
"""
import atexit
import datetime
import os
import threading
import time
import weakref

import torch
import torch.distributed as dist

from .. import autograd as _autograd
from .. import engine as _engine
from .. import profiler as _profiler
from ..base import MXNetError, env_int, env_str
from ..context import cpu
from ..engine import Var
from . import DIST_KINDS
from . import progress as _progress
from .local import LocalKVStore, _out_tensor

__all__ = ['DistKVStore', 'init_process_group', 'timeout_seconds']


def timeout_seconds():
    return env_int('NEOMX_DIST_TIMEOUT', default=300)


def _timeout():
    """NEOMX_DIST_TIMEOUT as the timedelta torch.distributed takes: every process group and
    every wait on a collective is given it (a group made without one waits 30 minutes)."""
    return datetime.timedelta(seconds=timeout_seconds())


def _backend():
    chosen = env_str('NEOMX_DIST_BACKEND')
    if chosen:
        return chosen
    if torch.cuda.is_available() and dist.is_nccl_available():
        return 'cpu:gloo,cuda:nccl'   # each collective goes to the backend of its tensors
    return 'gloo'


def init_process_group():
    """Joins the process group of this job (once): from the launcher's environment variables,
    or, without them, a group of this process alone. Collectives and the rendezvous store
    wait at most ``NEOMX_DIST_TIMEOUT`` seconds for the other processes, so a worker that
    died or hangs makes the others fail instead of waiting forever."""
    if dist.is_initialized():
        return
    atexit.register(_leave_process_group)
    timeout = _timeout()
    env = os.environ
    try:
        if 'RANK' in env and 'WORLD_SIZE' in env:
            missing = [v for v in ('MASTER_ADDR', 'MASTER_PORT') if v not in env]
            if missing:
                raise MXNetError("dist KVStore: RANK and WORLD_SIZE are set but not %s; start "
                                 "the processes with `neomx launch` or torchrun, which set them"
                                 % ' and '.join(missing))
            dist.init_process_group(_backend(), init_method='env://', timeout=timeout)
            _progress.join(dist.get_rank())
        else:
            dist.init_process_group('gloo', store=dist.HashStore(), rank=0, world_size=1,
                                    timeout=timeout)
    except MXNetError:
        raise
    except Exception as exc:
        raise MXNetError("dist KVStore: could not join the process group (rank %s of %s, master "
                         "%s:%s) within %d s: %s" % (env.get('RANK'), env.get('WORLD_SIZE'),
                                                     env.get('MASTER_ADDR'), env.get('MASTER_PORT'),
                                                     timeout_seconds(), exc)) from exc


def _leave_process_group():
    """At exit, for a group neomx joined: finishes the engine's queued work (it may hold
    collectives), then leaves the group, so that torch's communication threads and store end
    while the interpreter still runs instead of in its teardown, where a process aborted now
    and then ("terminate called without an active exception") after its last line ran."""
    if not dist.is_initialized():
        return
    try:
        _engine.waitall()
    except Exception:   # errors nobody waited for are not reported at exit, as in MXNet
        pass
    try:
        dist.destroy_process_group()
    except Exception:
        pass


def _comm_error(what, exc):
    rank, world = dist.get_rank(), dist.get_world_size()
    return MXNetError(
        "dist KVStore: %s failed on worker %d of %d: %s: %s. Another worker has probably died or "
        "stopped calling the KVStore (a collective waits at most NEOMX_DIST_TIMEOUT=%d s).%s"
        % (what, rank, world, type(exc).__name__, str(exc).strip().splitlines()[0][:300]
           if str(exc).strip() else '', timeout_seconds(),
           _progress.explain(rank, _progress.local_ranks())))


def _all_reduce(tensors, what):
    """Sums each tensor across the processes, in place, with one collective per dtype and
    device (the tensors are flattened into one buffer)."""
    groups = {}
    for t in tensors:
        groups.setdefault((t.dtype, t.device), []).append(t)
    try:
        for ts in groups.values():
            _progress.started()
            if len(ts) == 1:
                dist.all_reduce(ts[0])
                continue
            flat = torch.cat([t.reshape(-1) for t in ts])
            dist.all_reduce(flat)
            off = 0
            for t in ts:
                n = t.numel()
                t.copy_(flat[off:off + n].view(t.shape))
                off += n
    except Exception as exc:
        raise _comm_error(what, exc) from exc


def _broadcast(tensors, what):
    try:
        for t in tensors:
            _progress.started()
            dist.broadcast(t, src=0)
    except Exception as exc:
        raise _comm_error(what, exc) from exc


class _Bucket:
    __slots__ = ('keys', 'expected', 'ready', 'launched', 'snapshot', 'comm', 'work', 'error',
                 'nbytes')

    def __init__(self):
        self.keys = []           # (key, offset, numel) in the flat buffer
        self.expected = 0        # gradients to wait for: one per key and device
        self.nbytes = 0
        self.clear()

    def clear(self):
        self.ready = {}          # (key, device slot) -> (grad tensor, its version)
        self.launched = False
        self.snapshot = None     # ready, as it was when the bucket started
        self.comm = None         # the flat buffer being (or having been) reduced
        self.work = None
        self.error = None


class _Bucketer:
    """Starts the reduction of gradient buckets from inside backward (see the module
    docstring). Hooks run on the engine workers running backward; everything here is under
    ``lock``. A round is the time between two pushes: the first hook after a push clears the
    buckets (and lays them out again when new keys were pushed)."""

    def __init__(self, cap_bytes, world, group):
        self.cap = cap_bytes
        self.world = world
        self.group = group        # the buckets' own process group (see DistKVStore)
        self.lock = threading.Lock()
        self.slots = weakref.WeakKeyDictionary()    # gradient Storage -> (key, device slot)
        self.info = {}            # key -> (number of devices, numel, dtype, device)
        self.order = []           # keys in the order first pushed
        self.layout_of = None     # the keys (and their info) the buckets were laid out for
        self.buckets = []
        self.where = {}           # key -> (bucket, offset, numel)
        self.next = 0             # buckets start in order: the next one to start
        self.stale = True         # a push consumed this round: the next hook starts a new one
        self.dirty = False        # a gradient arrived twice this round: start nothing more
        self.hooked = weakref.WeakKeyDictionary()   # weight Storage -> its hooked leaf tensor
        self.served = 0           # keys whose push found their bucket reduced (for tests)
        ref = weakref.ref(self)

        def on_backward(targets, inputs):
            b = ref()
            if b is None:
                _autograd.backward_callbacks.remove(on_backward)
            else:
                b.register(targets, inputs)
        self._callback = on_backward
        _autograd.backward_callbacks.append(on_backward)

    def close(self):
        if self._callback in _autograd.backward_callbacks:
            _autograd.backward_callbacks.remove(self._callback)

    # -- in the push operation: what each key's gradient arrays are ---------------------------
    def learn(self, keys, lists):
        """Records the gradient arrays of each key. Called from the push operation, which runs
        after the backward that wrote them and before the next one that writes them again, so
        every process starts hooking and bucketing at the same step."""
        with self.lock:
            for k, vals in zip(keys, lists):
                if k not in self.info:
                    self.order.append(k)
                v0 = vals[0]
                self.info[k] = (len(vals), v0.size, v0._dtype, v0.context.torch_device)
                for d, v in enumerate(vals):
                    self.slots[v._var] = (k, d)

    def _layout(self):
        """Buckets of about ``cap`` bytes over the keys in reverse push order (backward
        produces the last layers' gradients first), each of one dtype and device. The same on
        every process, since every process pushes the same keys in the same order."""
        self.buckets, self.where = [], {}
        cur = None
        for k in reversed(self.order):
            ndev, numel, dtype, device = self.info[k]
            nbytes = numel * torch.empty((), dtype=_dtype(dtype)).element_size()
            if cur is None or cur.nbytes + nbytes > self.cap and cur.keys or \
                    self.info[cur.keys[0][0]][2:] != (dtype, device):
                cur = _Bucket()
                self.buckets.append(cur)
            off = sum(n for _, _, n in cur.keys)
            cur.keys.append((k, off, numel))
            cur.expected += ndev
            cur.nbytes += nbytes
            self.where[k] = (cur, off, numel)
        self.layout_of = (list(self.order), dict(self.info))

    def _new_round(self):
        if self.layout_of != (self.order, self.info):
            self._layout()
        for b in self.buckets:
            b.clear()
        self.next = 0
        self.stale = self.dirty = False

    # -- in backward, on the engine workers ---------------------------------------------------
    def register(self, targets, inputs):
        """Hooks the leaf tensors of the weights whose gradients are pushed to this store."""
        hooked = self.hooked
        slots = self.slots
        ref = weakref.ref(self)
        for lv, t in zip(targets, inputs):
            g = lv.grad
            if g is None or g._var not in slots or hooked.get(lv) is t:
                continue
            hooked[lv] = t
            wlv = weakref.ref(lv)

            def hook(tensor, wlv=wlv):
                b, weight = ref(), wlv()
                if b is not None and weight is not None:
                    b.ready(weight, tensor)
            t.register_post_accumulate_grad_hook(hook)

    def ready(self, weight, tensor):
        """A hook: ``tensor``'s gradient is accumulated."""
        if weight.grad_req != 'write' or weight.grad is None:
            return
        slot = self.slots.get(weight.grad._var)
        g = tensor.grad
        if slot is None or g is None:
            return
        with self.lock:
            if self.stale:
                self._new_round()
            if self.dirty:
                return
            where = self.where.get(slot[0])
            if where is None:
                return
            bucket = where[0]
            if slot in bucket.ready:       # a second backward before the push
                self.dirty = True
                return
            bucket.ready[slot] = (g, g._version)
            if len(bucket.ready) == bucket.expected:
                self._start_ready_buckets()

    def _start_ready_buckets(self):
        buckets = self.buckets
        while self.next < len(buckets):
            b = buckets[self.next]
            if len(b.ready) != b.expected:
                return
            self._start(b)
            self.next += 1

    def _start(self, b):
        """Sums the bucket's gradients over the devices into one flat buffer and starts its
        allreduce (asynchronous: it runs on the backend's threads while backward goes on)."""
        try:
            k0 = b.keys[0][0]
            _, _, _, device = self.info[k0]
            total = sum(n for _, _, n in b.keys)
            first = b.ready[(k0, 0)][0]
            comm = torch.empty(total, dtype=first.dtype, device=device)
            for k, off, n in b.keys:
                dst = comm[off:off + n]
                ndev = self.info[k][0]
                dst.copy_(b.ready[(k, 0)][0].reshape(-1))
                for d in range(1, ndev):
                    dst.add_(b.ready[(k, d)][0].reshape(-1).to(device))
            b.comm = comm
            b.snapshot = dict(b.ready)
            if self.world > 1:
                _progress.started()
                b.work = dist.all_reduce(comm, group=self.group, async_op=True)
                if _profiler._recording():
                    _trace_bucket(b.work, self.buckets.index(b), len(b.keys), b.nbytes)
        except Exception as exc:
            b.error = exc
        b.launched = True

    # -- in the push operation ------------------------------------------------------------
    def take(self, keys, lists):
        """The reduced gradient of each key (a flat tensor) when its bucket started from
        exactly the arrays pushed, unchanged since; None where the push must reduce."""
        found = []
        with self.lock:
            self.stale = True
            for k, vals in zip(keys, lists):
                where = self.where.get(k)
                r = None
                if where is not None:
                    b, off, n = where
                    snap = b.snapshot
                    if b.launched and snap is not None and len(vals) == self.info[k][0]:
                        ok = True
                        for d, v in enumerate(vals):
                            s = snap.get((k, d))
                            t = v._var.tensor
                            if s is None or s[0] is not t or t._version != s[1]:
                                ok = False
                                break
                        if ok:
                            r = (b, off, n)
                found.append(r)
        out = []
        for r in found:
            if r is None:
                out.append(None)
                continue
            b, off, n = r
            if b.error is None and b.work is not None:
                try:
                    b.work.wait(_timeout())
                except Exception as exc:
                    b.error = exc
                b.work = None
            if b.error is not None:
                raise _comm_error('the allreduce of a gradient bucket', b.error) from b.error
            out.append(b.comm[off:off + n])
            self.served += 1
        return out


def _trace_bucket(work, index, nkeys, nbytes):
    """Puts the allreduce of a bucket, from its start in backward to its end, on the
    profiler's 'dist:allreduce' track."""
    t0 = time.perf_counter_ns()
    name = 'bucket %d (%d keys, %d KB)' % (index, nkeys, nbytes >> 10)

    def done(_):
        _profiler.record_interval('dist:allreduce', name, t0, time.perf_counter_ns(), 'comm')
    work.get_future().add_done_callback(done)


def _dtype(name):
    from ..base import dtype_torch
    return dtype_torch(name)


class DistKVStore(LocalKVStore):
    """``dist_sync`` (values summed in host memory, as 'local', then across processes) and
    ``dist_device_sync`` (summed on the devices, as 'device', then across processes).

    Every collective of a process is issued in the order the calls were made, from one engine
    worker (the store's home device), or from backward in bucket order; every process makes the
    same calls in the same order, so the collectives match.
    """

    def __init__(self, name='dist_sync'):
        local_kind = 'device' if 'device' in name else 'local'
        super().__init__(local_kind, name)
        init_process_group()
        self._world = dist.get_world_size()
        self._rank_id = dist.get_rank()
        self._home = None
        cap = env_str('NEOMX_DIST_BUCKET_MB', default='4')
        try:
            cap_bytes = int(float(cap) * (1 << 20))
        except ValueError:
            raise MXNetError("NEOMX_DIST_BUCKET_MB=%r: expected a number of megabytes (0 turns "
                             "overlapping reduction off)" % cap) from None
        self._bucketer = None
        if cap_bytes > 0:
            # The buckets' allreduces are issued from backward, on the workers running it; the
            # store's other collectives from its home worker. Each stream of collectives is in
            # the same order on every process, but the two are not ordered with each other, so
            # each gets its own process group.
            group = (dist.new_group(backend=_backend(), timeout=_timeout())
                     if self._world > 1 else None)
            self._bucketer = _Bucketer(cap_bytes, self._world, group)

    def __del__(self):
        b = getattr(self, '_bucketer', None)
        if b is not None:
            b.close()

    @property
    def rank(self):
        return self._rank_id

    @property
    def num_workers(self):
        return self._world

    def _home_ctx(self, ctx=None):
        """The device whose worker issues this store's collectives (fixed at first use)."""
        if self._home is None:
            self._home = ctx if ctx is not None and self._kind == 'device' else cpu(0)
        return self._home

    def _push_comm(self, fn, reads, writes, name):
        _engine.push(fn, reads, writes, self._home_ctx(), name)

    # -- the store's methods ---------------------------------------------------------------
    def _init(self, keys, values):
        super()._init(keys, values)
        self._home_ctx(values[0].context)
        if self._world == 1:
            return
        stored = self._stored(keys)

        def fn():
            _broadcast([_out_tensor(s) for s in stored], 'init (broadcast from rank 0) of keys %s'
                       % (keys[:8],))
        self._push_comm(fn, [s._var for s in stored], [s._var for s in stored],
                        '_kvstore_dist_init')

    def _reduce(self, keys, lists):
        b = self._bucketer
        if b is None or (self._world == 1 and all(len(v) == 1 for v in lists)):
            return super()._reduce(keys, lists)     # local sums, then _reduce_workers
        self._home_ctx(lists[0][0].context)
        self._assign_merge_contexts(keys, lists)
        merged = [self._target(k, vals[0], self._merge[k]) for k, vals in zip(keys, lists)]
        world = self._world

        def fn():
            reduced = b.take(keys, lists)
            todo = []
            for t, r, vals in zip(merged, reduced, lists):
                out = _out_tensor(t)
                if r is not None:
                    out.copy_(r.view(out.shape))
                    continue
                out.copy_(vals[0]._tensor())
                for v in vals[1:]:
                    out.add_(v._tensor().to(out.device))
                todo.append(out)
            if todo and world > 1:
                _all_reduce(todo, 'the allreduce of keys %s' % (keys[:8],))
            b.learn(keys, lists)
        reads = [v._var for vals in lists for v in vals]
        self._push_comm(fn, reads, [t._var for t in merged], '_kvstore_dist_reduce')
        if self._updater is not None:
            for k, t in zip(keys, merged):
                if self._store[k].context != t.context:
                    self._store[k] = self._store[k].copyto(t.context)
        return merged

    def _reduce_workers(self, keys, merged):
        if self._world == 1:
            return

        def fn():
            _all_reduce([_out_tensor(t) for t in merged], 'the allreduce of keys %s' % (keys[:8],))
        self._push_comm(fn, [t._var for t in merged], [t._var for t in merged],
                        '_kvstore_dist_reduce')

    def _barrier(self):
        """Waits until every process has reached this call (after the collectives this
        process has queued)."""
        done = Var()

        def fn():
            try:
                _progress.started()
                dist.barrier()
            except Exception as exc:
                raise _comm_error('barrier', exc) from exc
        self._push_comm(fn, [], [done], '_kvstore_dist_barrier')
        _engine.wait_for_var(done)

    barrier = _barrier


def _async_unavailable(name):
    raise MXNetError(
        "KVStore %r: asynchronous training (each worker updating the servers' weights on its "
        "own, without waiting for the others) needs MXNet's parameter servers; neomx trains "
        "across processes with torch.distributed collectives, where every step reduces the "
        "gradients of all workers together. Use 'dist_sync' (or 'dist_device_sync' to sum on "
        "the devices)" % name)


for _name in ('dist_sync', 'dist_device_sync', 'dist_sync_device'):
    DIST_KINDS[_name] = DistKVStore
for _name in ('dist_async', 'dist_device_async', 'dist'):
    DIST_KINDS[_name] = _async_unavailable
