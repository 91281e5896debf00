"""``DataLoader``: mini-batches from a dataset, optionally prepared by worker processes.

With ``num_workers=0`` batches are made in the calling thread. With ``num_workers > 0`` worker
processes (forked, so datasets and transforms need not pickle) read the samples and batch
them; each worker runs operations inline (``NaiveEngine``) on one thread and returns its batch's
arrays in shared memory (small ones in the message), which the parent wraps into NDArrays
without copying. A worker that raises
passes its exception to the parent; one that dies (a signal, the system's out-of-memory
killer) gives a DataLoaderWorkerError at once; workers end with their loader, with the
interpreter, and on their own when the parent is gone. With ``thread_pool=True`` the workers
are threads of this process instead.

>>> import numpy as np
>>> from neomx.gluon.data import ArrayDataset, DataLoader
>>> ds = ArrayDataset(np.arange(10, dtype='float32').reshape(5, 2), np.arange(5))
>>> [(x.shape, y.shape) for x, y in DataLoader(ds, batch_size=2, last_batch='discard')]
[((2, 2), (2,)), ((2, 2), (2,))]
"""
import collections
import multiprocessing
import multiprocessing.connection
import multiprocessing.pool
import multiprocessing.reduction
import os
import pickle
import random
import signal
import socket
import threading
import time
import traceback
import weakref
from multiprocessing.reduction import ForkingPickler

import numpy as np
import torch

from ... import ndarray as nd
from ...base import MXNetError
from ...context import cpu, cpu_pinned, num_gpus
from ...engine.threads import share_cores
from ...ndarray import NDArray
from ...ndarray.ndarray import from_tensor, in_array_class, new_array
from ...util import is_np_array, is_np_shape, set_np
from .dataset import _LazyTransformDataset, _TransformFirstClosure
from . import sampler as _sampler

__all__ = ['DataLoader', 'default_batchify_fn', 'default_mp_batchify_fn']


def default_batchify_fn(data):
    """Merges a list of samples into a batch: NDArrays are stacked, tuples are batched
    element by element (giving a list), anything else goes through ``numpy.asarray`` into an
    NDArray of the same dtype. Batches are ``mx.np.ndarray`` under NumPy semantics.

    >>> import numpy as np
    >>> x, y = default_batchify_fn([(np.zeros(3), 1), (np.ones(3), 2)])
    >>> x.shape, y.dtype
    ((2, 3), <class 'numpy.int64'>)
    """
    first = data[0]
    if isinstance(first, NDArray):
        return in_array_class(nd.stack(*data))
    if isinstance(first, tuple):
        return [default_batchify_fn(list(field)) for field in zip(*data)]
    data = np.asarray(data)
    return new_array(data, dtype=data.dtype)


def _make_batch(dataset, samples, batchify_fn):
    """``batchify_fn`` of the samples of ``dataset`` at the indices ``samples``: how every
    loader, worker and pool here makes a batch.

    A dataset made by ``transform_first`` (or ``transform``, of samples that are single
    arrays) with a transform that computes a batch of samples as it computes each one
    (``vision.transforms.sample_ndim``: ``ToTensor``, ``Normalize``, ``Resize``, ``Cast`` and
    compositions of them), batched by the default function, is transformed once, on the
    stacked batch of its samples, when these are NDArrays of one shape and dtype: the same
    arrays, without a transform per sample (a batch of 256 Fashion-MNIST images through
    ``ToTensor``: 7 ms of a worker's CPU sample by sample)."""
    if batchify_fn is default_batchify_fn and type(dataset) is _LazyTransformDataset:
        fn = dataset._fn
        first = type(fn) is _TransformFirstClosure
        ndim = _sample_ndim(fn._fn if first else fn)
        if ndim is not None and samples:
            raw = [dataset._data[i] for i in samples]
            head = raw[0]
            if first and type(head) is tuple:
                arrays = [s[0] for s in raw]
            elif not first and isinstance(head, NDArray):
                arrays = raw
            else:
                arrays = None
            if arrays is not None and _alike(arrays, ndim):
                if arrays is raw:
                    return fn(default_batchify_fn(raw))
                batch = default_batchify_fn(raw)
                batch[0] = fn._fn(batch[0])
                return batch
            return batchify_fn([dataset.apply(s) for s in raw])
    return batchify_fn([dataset[i] for i in samples])


def _sample_ndim(fn):
    # imported here: the transforms are Blocks, and gluon's block module imports this one
    # (through gluon.utils and gluon.data) while it loads
    from .vision.transforms import sample_ndim
    return sample_ndim(fn)


def _alike(arrays, ndim):
    """Whether ``arrays`` are NDArrays of one class, shape and dtype, with ``ndim`` axes
    (unless 0), stored densely."""
    a = arrays[0]
    if not isinstance(a, NDArray) or a.stype != 'default' or (ndim and a.ndim != ndim):
        return False
    kind, shape, dtype = type(a), a.shape, a.dtype
    for b in arrays:
        if type(b) is not kind or b.shape != shape or b.dtype != dtype:
            return False
    return True


# The same function serves in worker processes: a worker sends the batch's arrays back in
# shared memory (see _to_host), as MXNet batches into shared memory in its workers.
default_mp_batchify_fn = default_batchify_fn


def _as_in_context(data, ctx):
    if isinstance(data, NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


# A worker's batch travels in shared memory (a memfd whose descriptor follows the message)
# unless it is this small. Through the connection itself a batch of Fashion-MNIST images
# (800 kB, four times the socket's buffer) blocked its worker until the parent read it, and
# the parent reads only when it asks for the next batch: the workers idled while it trained.
# bench_book's softmax regression at a load average of 15 on two cores waited 9.4 s for its
# batches that way, 4.3 s in shared memory (MXNet 1.9.1, which batches into shared memory
# too: 3.6 s).
_SHARED_BYTES = 1 << 14 if hasattr(os, 'memfd_create') else None


class _Host:
    """An NDArray sent from a worker process: its values (a NumPy array; between the two
    processes, the position of the shared memory file holding them among the descriptors sent
    with the message, its dtype and shape), and whether it was an ``mx.np.ndarray``."""
    __slots__ = ('array', 'np_array')

    def __init__(self, array, np_array=False):
        self.array = array
        self.np_array = np_array

    def __reduce__(self):
        return (_Host, (self.array, self.np_array))


def _to_host(batch, fds):
    """The batch with its NDArrays as _Host; the descriptors of the shared memory files it
    refers to are appended to ``fds``."""
    if isinstance(batch, NDArray):
        array = batch.asnumpy()
        np_array = batch.__class__ is not NDArray and isinstance(batch, _np_class())
        if _SHARED_BYTES is None or array.nbytes < _SHARED_BYTES:
            return _Host(array, np_array)
        fd = os.memfd_create('neomx-batch', os.MFD_CLOEXEC)
        fds.append(fd)
        view = memoryview(np.ascontiguousarray(array)).cast('B')
        while view:
            view = view[os.write(fd, view):]
        return _Host((len(fds) - 1, array.dtype.str, array.shape), np_array)
    if isinstance(batch, (list, tuple)):
        return type(batch)(_to_host(b, fds) for b in batch)
    if isinstance(batch, dict):
        return {k: _to_host(v, fds) for k, v in batch.items()}
    return batch


def _map_hosts(batch, fn):
    if isinstance(batch, _Host):
        return fn(batch)
    if isinstance(batch, (list, tuple)):
        return type(batch)(_map_hosts(b, fn) for b in batch)
    if isinstance(batch, dict):
        return {k: _map_hosts(v, fn) for k, v in batch.items()}
    return batch


def _map_shared(batch, fds):
    """The _Hosts of a received batch hold NumPy arrays over the shared memory files ``fds``
    (closed here: the mappings keep them)."""
    def attach(host):
        if isinstance(host.array, tuple):
            k, dtype, shape = host.array
            dtype = np.dtype(dtype)
            size = dtype.itemsize * int(np.prod(shape))
            raw = torch.from_file('/proc/self/fd/%d' % fds[k], shared=True, size=size,
                                  dtype=torch.uint8)
            host.array = raw.numpy().view(dtype).reshape(shape)
        return host
    try:
        return _map_hosts(batch, attach)
    finally:
        for fd in fds:
            os.close(fd)


def _from_host(batch, pin):
    """Wraps the NumPy arrays of a worker's batch into NDArrays, sharing their memory."""
    def wrap(host):
        t = torch.from_numpy(host.array)
        if pin is not None and num_gpus():
            t = t.pin_memory()
        out = from_tensor(t, cpu(0) if pin is None else pin)
        return in_array_class(out, _np_class()) if host.np_array else out
    return _map_hosts(batch, wrap)


# -- worker processes ----------------------------------------------------------------------
#
# Each worker process has a pipe of its own to the parent: no lock or queue is shared, so a
# worker killed in any state blocks neither the parent nor the other workers
# (multiprocessing.Pool.terminate can hang forever on a lock of its shared task queue), and
# the parent learns of a dead worker from its process sentinel at once.

def _np_class():
    from ...numpy import ndarray
    return ndarray


def _np_state():
    """The NumPy semantics in force, which a loader's workers take from the code creating
    it (thread-local state that neither threads nor spawned processes inherit)."""
    return is_np_shape(), is_np_array()


def _thread_worker_fn(samples, batchify_fn, dataset):
    """Makes one batch in a worker thread."""
    return _make_batch(dataset, samples, batchify_fn)


def _thread_setup(np_shape, np_array):
    set_np(shape=np_shape, array=np_array)


def _import_meta_kernels():
    """Runs one operation on 'meta' tensors. The first such operation of a process imports
    torch's reference kernels (hundreds of modules, seconds) and operators infer shapes that
    way: done once before forking, the workers inherit them instead of each importing them on
    its first sample."""
    torch.empty(1, device='meta') / 2.0


class DataLoaderTimeout(MXNetError, multiprocessing.TimeoutError):
    """A worker took longer than ``timeout`` seconds to make a batch."""


class DataLoaderWorkerError(MXNetError):
    """A worker process ended (killed by a signal, or exited) before returning a batch."""


class _WorkerTraceback(Exception):
    """The traceback of an exception raised in a worker process (its ``__cause__``)."""

    def __str__(self):
        return '\n\n"""\n%s"""' % self.args[0]


def _worker_setup(seed, np_state):
    """Runs first in each worker process."""
    set_np(*np_state)
    # The parent's engine threads do not exist in a forked child: run operations inline, on
    # one thread, since the workers already use the cores between them.
    os.environ['NEOMX_CPU_THREADS'] = '1'
    torch.set_num_threads(1)
    from ... import engine
    engine.set_engine_type('NaiveEngine')
    # Every child starts from the parent's generator states: reseed them per worker, or all
    # workers would draw the same random augmentations.
    np.random.seed(seed)
    random.seed(seed)
    torch.manual_seed(seed)
    from ... import random as mx_random
    mx_random.seed(seed)


def _portable(exc):
    """(exception, traceback text) for the parent; an exception that does not pickle is
    replaced by an MXNetError naming it."""
    text = ''.join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        exc = MXNetError('%s: %s' % (type(exc).__name__, exc))
    return exc, text


def _worker_loop(conn, others, dataset, batchify_fn, seed, parent, np_state):
    """A worker process: makes the batches asked for on ``conn`` until told to stop, the
    parent closes its end, or the parent is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the parent's to handle
    for c in others:        # the parent's ends of other pipes, inherited by the fork
        c.close()
    _worker_setup(seed, np_state)
    while True:
        try:
            # A timeout, so that a worker whose parent died exits even while another process
            # still holds the parent's end of this pipe.
            if not conn.poll(1.0):
                if os.getppid() != parent:
                    return
                continue
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        tag, samples = msg
        fds = []
        cpu = time.process_time()
        try:
            out = (True, _to_host(_make_batch(dataset, samples, batchify_fn), fds))
        except BaseException as e:  # noqa: B902 (the parent raises it)
            out = (False, _portable(e))
        cpu = time.process_time() - cpu     # the parent counts the cores its workers take
        try:
            try:
                conn.send((tag, out, len(fds), cpu))
            except (pickle.PicklingError, TypeError, AttributeError) as e:   # the batch
                fds = _close(fds)
                conn.send((tag, (False, _portable(e)), 0, cpu))
            if fds:
                with socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    multiprocessing.reduction.sendfds(sock, fds)
        except OSError:     # the parent is gone
            return
        finally:
            _close(fds)


def _close(fds):
    for fd in fds:
        os.close(fd)
    return []


def _stop_workers(procs, conns):
    """Ends the worker processes: closing the pipes stops idle workers, SIGTERM busy ones,
    SIGKILL any left after a second; waits for them (no orphans, no zombies)."""
    for c in conns:
        try:
            c.close()
        except OSError:
            pass
    for p in procs:
        if p.exitcode is None:
            try:
                p.terminate()
            except OSError:
                pass
    deadline = time.monotonic() + 1.0
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.exitcode is None:
            try:
                p.kill()
            except OSError:
                pass
            p.join(5.0)


def _describe_exit(proc):
    code = proc.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = 'signal %d' % -code
        hint = (' (the system kills a process that runs out of memory with SIGKILL)'
                if -code == signal.SIGKILL else '')
        return 'was killed by %s%s' % (name, hint)
    return 'exited with code %s' % code


class _WorkerPool:
    """The worker processes of one DataLoader. ``submit`` hands a batch's sample indices to
    the least busy worker, ``get`` waits for that batch; results of passes that were dropped
    are discarded as they arrive."""

    def __init__(self, num_workers, dataset, batchify_fn, np_state):
        # Forking copies the arrays as they are: finish the operations that write them first.
        nd.waitall()
        _import_meta_kernels()
        ctx = multiprocessing.get_context('fork')
        base_seed = int(np.random.randint(0, 1 << 30))
        self._procs, self._conns = [], []
        self._pending = [0] * num_workers       # batches asked of each worker, not yet read
        self._asked = [collections.deque() for _ in range(num_workers)]   # their tags, in order
        self._ready = [{} for _ in range(num_workers)]   # tag -> result read ahead
        self._live = set()      # serial numbers of the passes still wanted
        self._sharing = 0.0     # the cores counted as the workers' (share_cores)
        self._cpu = 0.0         # the workers' CPU seconds since the first live pass started
        self._made = 0          # the batches they made meanwhile
        self._start = 0.0       # when it started (time.monotonic)
        self._serial = 0
        self._next = 0
        self.broken = None      # the error that ended this pool
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN) \
            if threading.current_thread() is threading.main_thread() else None
        try:
            for i in range(num_workers):
                ours, theirs = ctx.Pipe()
                p = ctx.Process(target=_worker_loop, name='DataLoader worker %d' % i,
                                args=(theirs, self._conns + [ours], dataset, batchify_fn,
                                      (base_seed + 7919 * (i + 1)) % (1 << 31), os.getpid(),
                                      np_state),
                                daemon=True)
                p.start()
                theirs.close()
                self._procs.append(p)
                self._conns.append(ours)
        finally:
            if handler is not None:
                signal.signal(signal.SIGINT, handler)
        # Also at interpreter exit, before multiprocessing's own handler would join them.
        self._finalizer = weakref.finalize(self, _stop_workers, self._procs, self._conns)

    def new_pass(self):
        self._serial += 1
        if not self._live:
            # the workers make batches from now on, on the cores the kernels run on: all at
            # once at first (the batches asked ahead), a core each; then what they measure
            self._cpu, self._made, self._start = 0.0, 0, time.monotonic()
            self._share(len(self._procs))
        self._live.add(self._serial)
        return self._serial

    def end_pass(self, serial):
        self._live.discard(serial)
        if not self._live:
            self._stop_sharing()
        for ready in self._ready:
            for tag in [t for t in ready if t[0] == serial]:
                del ready[tag]

    def submit(self, tag, samples):
        """Sends batch ``tag`` (serial, index) to a worker; returns the worker's number."""
        self._check()
        self._drain()
        n = len(self._procs)
        k = min(range(n), key=lambda i: (self._pending[i], (i - self._next) % n))
        self._next = (k + 1) % n
        try:
            self._conns[k].send((tag, samples))
        except OSError:
            self._fail(k)
        self._pending[k] += 1
        self._asked[k].append(tag)
        return k

    def get(self, k, tag, timeout):
        """The result of batch ``tag`` from worker ``k``: (True, batch) or (False,
        (exception, traceback text)). Raises DataLoaderTimeout after ``timeout`` seconds and
        DataLoaderWorkerError when the worker dies."""
        ready = self._ready[k]
        if tag in ready:
            return ready.pop(tag)
        self._check()
        conn, proc = self._conns[k], self._procs[k]
        deadline = time.monotonic() + timeout
        while True:
            if conn.poll():
                got, out = self._recv(k, tag)
                if got == tag:
                    return out
                continue
            if proc.exitcode is not None:
                self._fail(k)
            left = deadline - time.monotonic()
            if left <= 0:
                raise DataLoaderTimeout(
                    "DataLoader: a worker took more than timeout=%s seconds to make batch %d. A "
                    "slow dataset or transform needs a larger timeout=." % (timeout, tag[1]))
            multiprocessing.connection.wait([conn, proc.sentinel], left)

    def _recv(self, k, tag):
        conn = self._conns[k]
        try:
            got, out, nfds, cpu = conn.recv()
            if nfds:
                with socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    out = (out[0], _map_shared(out[1], multiprocessing.reduction.recvfds(
                        sock, nfds)))
        except (EOFError, OSError):
            self._procs[k].join(1.0)
            self._fail(k)
        self._pending[k] -= 1
        self._asked[k].popleft()
        self._measure(cpu)
        if got != tag and got[0] in self._live:
            self._ready[k][got] = out
        return got, out

    def _drain(self):
        """Reads the results that have arrived, so that no worker waits to send one."""
        for k, conn in enumerate(self._conns):
            while self._pending[k] and conn.poll():
                self._recv(k, None)

    def _fail(self, k):
        # A worker makes its batches in the order asked: it died making the oldest unread one.
        proc, asked = self._procs[k], self._asked[k]
        tag = asked[0] if asked else None
        self.broken = DataLoaderWorkerError(
            "DataLoader: worker process %d (pid %s) %s%s; the loader starts new workers on "
            "its next pass" % (k, proc.pid, _describe_exit(proc),
                               '' if tag is None else ' while making batch %d' % tag[1]))
        self.close()
        raise self.broken

    def _check(self):
        if self.broken is not None:
            raise self.broken

    def _measure(self, cpu):
        """Counts a batch's ``cpu`` seconds in its worker. Once each worker has made two
        batches, the cores counted as theirs are the cores their CPU time fills: CPU seconds
        over seconds since the pass started (the book's LeNet, a DataLoader of 4 processes
        making a batch in 4.6 ms of CPU every 30 ms: 0.15; its softmax regression's, a batch
        in 3 ms every 3.5 ms: 0.8)."""
        self._cpu += cpu
        self._made += 1
        if self._live and self._made >= 2 * len(self._procs):
            span = time.monotonic() - self._start
            if span > 0:
                self._share(self._cpu / span)

    def _share(self, cores):
        share_cores(cores - self._sharing)
        self._sharing = cores

    def _stop_sharing(self):
        self._share(0.0)

    def close(self):
        self._stop_sharing()
        self._finalizer()


_worker_dataset = None


def _worker_initializer(dataset, active_shape=False, active_array=False):
    """MXNet's initializer of a ``multiprocessing.Pool``'s workers: keeps the dataset for
    ``_worker_fn`` and takes the creator's NumPy semantics."""
    global _worker_dataset
    _worker_dataset = dataset
    set_np(shape=active_shape, array=active_array)


def _worker_fn(samples, batchify_fn, dataset=None):
    """MXNet's worker function for a process pool (``apply_async``): one batch of the samples
    of ``dataset`` (the one ``_worker_initializer`` kept), pickled with ``ForkingPickler``."""
    batch = _make_batch(_worker_dataset if dataset is None else dataset, samples, batchify_fn)
    return bytes(ForkingPickler.dumps(batch))


class _MultiWorkerIter:
    """One pass over the batches, made by worker processes (or threads), returned in order.

    The arguments and members are MXNet 1.9's, which code built on MXNet subclasses:
    ``worker_pool`` is the loader's own pool, or any pool with ``apply_async`` (a
    ``multiprocessing.Pool``), which runs ``worker_fn(samples, batchify_fn, dataset)``;
    without ``dataset`` its results are pickled bytes (``_worker_fn``'s). Batches asked of it
    wait in ``_data_buffer`` by number; ``_push_next`` asks for the next one."""

    def __init__(self, worker_pool, batchify_fn, batch_sampler, pin_memory=False,
                 pin_device_id=0, worker_fn=_worker_fn, prefetch=0, dataset=None,
                 data_loader=None, timeout=120):
        self._worker_pool = worker_pool
        self._batchify_fn = batchify_fn
        self._batch_sampler = batch_sampler
        self._data_buffer = {}
        self._rcvd_idx = 0
        self._sent_idx = 0
        self._iter = iter(self._batch_sampler)
        self._worker_fn = worker_fn
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._dataset = dataset
        self._data_loader = data_loader
        self._timeout = timeout
        # the loader's own processes (their pipes) serve passes told apart by a serial number
        own = isinstance(worker_pool, _WorkerPool)
        self._serial = worker_pool.new_pass() if own else None
        for _ in range(prefetch):
            self._push_next()

    def __len__(self):
        return len(self._batch_sampler)

    def _push_next(self):
        r = next(self._iter, None)
        if r is None:
            return
        if self._serial is not None:
            job = self._worker_pool.submit((self._serial, self._sent_idx), r)
        else:
            job = self._worker_pool.apply_async(self._worker_fn,
                                                (r, self._batchify_fn, self._dataset))
        self._data_buffer[self._sent_idx] = job
        self._sent_idx += 1

    def __next__(self):
        self._push_next()
        if self._rcvd_idx == self._sent_idx:
            raise StopIteration
        job = self._data_buffer.pop(self._rcvd_idx)
        pin = cpu_pinned(self._pin_device_id) if self._pin_memory else None
        if self._serial is not None:
            ok, batch = self._worker_pool.get(job, (self._serial, self._rcvd_idx),
                                              self._timeout)
            if not ok:
                exc, text = batch
                raise exc from _WorkerTraceback(text)
            batch = _from_host(batch, pin)
        else:
            try:
                batch = job.get(self._timeout)
            except multiprocessing.TimeoutError:
                raise DataLoaderTimeout(
                    "DataLoader: a worker took more than timeout=%s seconds to make batch %d. "
                    "A slow dataset or transform needs a larger timeout=."
                    % (self._timeout, self._rcvd_idx)) from None
            if self._dataset is None:       # a process pool's pickled batch
                batch = pickle.loads(batch)
            if pin is not None:
                batch = _as_in_context(batch, pin)
        self._rcvd_idx += 1
        return batch

    next = __next__

    def __iter__(self):
        return self

    def __del__(self):
        if getattr(self, '_serial', None) is not None:
            try:
                self._worker_pool.end_pass(self._serial)
            except Exception:   # at interpreter exit
                pass


class DataLoader:
    """Loads mini-batches from a dataset.

    Parameters (as MXNet 1.9)
    -------------------------
    dataset : Dataset, or an NDArray / NumPy array / list used as one.
    batch_size : int; required unless ``batch_sampler`` is given.
    shuffle : bool, draw the samples in a new random order each pass.
    sampler : Sampler of sample indices (not with ``shuffle``); a sampler yielding one
        process's share of the indices shards the data for distributed training.
    last_batch : 'keep' (default), 'discard' or 'rollover' (the rest starts the next pass).
    batch_sampler : Sampler of lists of indices (instead of the four arguments above).
    batchify_fn : merges a list of samples into a batch (``default_batchify_fn``).
    num_workers : worker processes (0: batches are made in the calling thread).
    pin_memory, pin_device_id : return batches in ``cpu_pinned(pin_device_id)`` (page-locked
        host memory when there is a GPU), for faster copies to a GPU.
    prefetch : batches requested ahead of use (default ``2 * num_workers``).
    thread_pool : use threads instead of processes as workers.
    timeout : seconds a worker may take for one batch.
    auto_reload : start the workers on the next pass as soon as one pass ends.

    >>> import neomx as mx
    >>> loader = DataLoader(mx.nd.arange(10), batch_size=4)
    >>> len(loader), [b.shape for b in loader]
    (3, [(4, 1), (4, 1), (2, 1)])
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None,
                 num_workers=0, pin_memory=False, pin_device_id=0,
                 prefetch=None, thread_pool=False, timeout=120, auto_reload=False):
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._pin_ctx = cpu_pinned(pin_device_id) if pin_memory else None
        self._thread_pool = thread_pool
        if not timeout > 0:
            raise ValueError("DataLoader: timeout must be positive, given %r" % (timeout,))
        self._timeout = timeout

        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("batch_size must be specified unless batch_sampler is specified")
            if sampler is None:
                if shuffle:
                    sampler = _sampler.RandomSampler(len(dataset))
                else:
                    sampler = _sampler.SequentialSampler(len(dataset))
            elif shuffle:
                raise ValueError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size,
                                                  last_batch if last_batch else 'keep')
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError("batch_size, shuffle, sampler and last_batch must not be specified "
                             "if batch_sampler is specified.")
        self._batch_sampler = batch_sampler
        self._num_workers = num_workers if num_workers >= 0 else 0
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._batchify_fn = default_batchify_fn if batchify_fn is None else batchify_fn
        self._np_state = _np_state()      # the workers make batches in the creator's semantics
        self._worker_pool = None
        if self._num_workers > 0:
            self._worker_pool = self._start_pool()
        self.auto_reload = auto_reload
        self._iter = None
        if auto_reload:
            self.refresh()

    def _start_pool(self):
        if self._thread_pool:
            return multiprocessing.pool.ThreadPool(self._num_workers, _thread_setup,
                                                   self._np_state)
        return _WorkerPool(self._num_workers, self._dataset, self._batchify_fn, self._np_state)

    def _prefetch_iter(self):
        if self._num_workers == 0:
            return self._same_process_iter()
        if getattr(self._worker_pool, 'broken', None) is not None:     # a worker died
            self._worker_pool = self._start_pool()
        threads = self._thread_pool
        return _MultiWorkerIter(
            self._worker_pool, self._batchify_fn, self._batch_sampler,
            pin_memory=self._pin_memory, pin_device_id=self._pin_device_id,
            worker_fn=_thread_worker_fn if threads else _worker_fn, prefetch=self._prefetch,
            dataset=self._dataset if threads else None, data_loader=self, timeout=self._timeout)

    def _same_process_iter(self):
        dataset, batchify_fn, pin = self._dataset, self._batchify_fn, self._pin_ctx
        for batch in self._batch_sampler:
            ret = _make_batch(dataset, batch, batchify_fn)
            if pin is not None:
                ret = _as_in_context(ret, pin)
            yield ret

    def __iter__(self):
        if self._iter is None:
            self.refresh()
        t, self._iter = self._iter, None
        yield from t
        if self._iter is None and self.auto_reload:
            self.refresh()

    def __len__(self):
        return len(self._batch_sampler)

    def refresh(self):
        """Starts the next pass now (with workers, they begin prefetching at once)."""
        self._iter = self._prefetch_iter()

    def clean(self):
        """Drops a pass started by ``refresh``."""
        self._iter = None

    def __del__(self):
        pool = getattr(self, '_worker_pool', None)
        if pool is not None:
            self._worker_pool = None
            if isinstance(pool, _WorkerPool):
                pool.close()
            else:
                pool.terminate()


# -- MXNet 1.x's first DataLoader and its helpers -------------------------------------------
# Code written for MXNet imports these names from this module; the loader runs on the
# machinery above.

import sys  # noqa: E402,F401
from multiprocessing.pool import ThreadPool  # noqa: E402,F401
from multiprocessing.queues import Queue as _MPQueue, SimpleQueue as _MPSimpleQueue  # noqa: E402

from ... import context, io  # noqa: E402,F401


class DataLoaderV1(DataLoader):
    """MXNet 1.x's first DataLoader (``num_workers`` processes fed batch by batch): the same
    arguments and batches as ``DataLoader`` without its ``prefetch``, ``thread_pool``,
    ``timeout`` and ``auto_reload``, on which it runs."""

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None,
                 num_workers=0, pin_memory=False, pin_device_id=0):
        super().__init__(dataset, batch_size=batch_size, shuffle=shuffle, sampler=sampler,
                         last_batch=last_batch, batch_sampler=batch_sampler,
                         batchify_fn=batchify_fn, num_workers=num_workers,
                         pin_memory=pin_memory, pin_device_id=pin_device_id)


def rebuild_ndarray(tensor, np_array=False):
    """The NDArray (``mx.np.ndarray`` with ``np_array``) over a tensor a ``reduce_ndarray``
    pickle carried (in shared memory between processes)."""
    out = from_tensor(tensor)
    if np_array:
        from ...numpy import ndarray as np_ndarray
        out.__class__ = np_ndarray
    return out


def reduce_ndarray(data):
    """``ForkingPickler`` reduction of an NDArray: its values go to the other process in
    shared memory (``ForkingPickler.register(nd.NDArray, reduce_ndarray)``)."""
    import torch.multiprocessing  # noqa: F401  (shared-memory pickling of tensors)
    return rebuild_ndarray, (torch.from_numpy(np.ascontiguousarray(data.asnumpy()))
                             .share_memory_(),)


def rebuild_np_ndarray(tensor):
    """``rebuild_ndarray`` for ``mx.np.ndarray``."""
    return rebuild_ndarray(tensor, np_array=True)


def reduce_np_ndarray(data):
    """``reduce_ndarray`` for ``mx.np.ndarray``."""
    return rebuild_np_ndarray, reduce_ndarray(data)[1]


class ConnectionWrapper:
    """A ``multiprocessing`` connection whose ``send``/``recv`` pickle with
    ``ForkingPickler`` (so registered reductions, as ``reduce_ndarray``, apply)."""

    def __init__(self, conn):
        self._conn = conn

    def send(self, obj):
        self._conn.send_bytes(bytes(ForkingPickler.dumps(obj)))

    def recv(self):
        return pickle.loads(self._conn.recv_bytes())

    def __getattr__(self, name):
        return getattr(self.__dict__['_conn'], name)


class Queue(_MPQueue):
    """``multiprocessing.Queue`` of this process' context (pickled with ForkingPickler)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, ctx=multiprocessing.get_context(), **kwargs)


class SimpleQueue(_MPSimpleQueue):
    """``multiprocessing.SimpleQueue`` of this process' context, its ends wrapped in
    ``ConnectionWrapper``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, ctx=multiprocessing.get_context(), **kwargs)
        self._reader = ConnectionWrapper(self._reader)
        self._writer = ConnectionWrapper(self._writer)
        self._send = self._writer.send
        self._recv = self._reader.recv


def worker_loop_v1(dataset, key_queue, data_queue, batchify_fn):
    """A V1 worker: takes ``(index, sample indices)`` from ``key_queue`` until ``(None,
    ...)``, puts ``(index, batch)`` on ``data_queue``."""
    while True:
        idx, samples = key_queue.get()
        if idx is None:
            break
        data_queue.put((idx, _make_batch(dataset, samples, batchify_fn)))


def fetcher_loop_v1(data_queue, data_buffer, pin_memory=False, pin_device_id=0,
                    data_buffer_lock=None):
    """The V1 fetcher thread: moves ``(index, batch)`` from ``data_queue`` into
    ``data_buffer[index]`` (in ``cpu_pinned(pin_device_id)`` with ``pin_memory``) until
    ``(None, ...)``."""
    while True:
        idx, batch = data_queue.get()
        if idx is None:
            break
        if pin_memory:
            batch = _as_in_context(batch, cpu_pinned(pin_device_id))
        if data_buffer_lock is not None:
            with data_buffer_lock:
                data_buffer[idx] = batch
        else:
            data_buffer[idx] = batch
