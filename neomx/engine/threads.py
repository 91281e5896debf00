"""Thread budget and CPU affinity: how many intra-op threads torch's kernels use, and which
cores a process keeps to. Policy only; the dependency tracking is in ``var.py`` and the
execution in ``engine.py``.

The work thresholds say how an operation of a given size (``work``: multiply-adds from an
operator's ``cost=`` rule, else elements) is run:

- below ``INLINE_WORK`` (ATen's grain size: such a kernel runs on one thread whatever the
  setting), an operation whose Vars have nothing pending runs at once in the pushing thread:
  its kernel takes a few microseconds, less than queueing it and sharing the GIL with a worker
  would cost. ``NEOMX_ENGINE_INLINE_WORK`` changes it; 0 queues every operation;
- below ``LIGHT_WORK`` (about 2^18, tens of microseconds of kernel time here) handing the
  operation to a sleeping worker, and sharing the GIL with it, costs more than running it in
  the thread that waits for it: it does not wake an idle worker on its own.
  ``NEOMX_ENGINE_LIGHT_WORK`` changes it;
- below ``PARALLEL_WORK`` the kernel runs on one intra-op thread: waking intra-op threads costs
  more than they would share (a batch-1 matrix-vector product runs slower on two threads than
  on one). ``NEOMX_ENGINE_PARALLEL_WORK`` changes it.

Every operation runs on one intra-op thread while the cores are contended (``LoadProbe``): a
parallel kernel ends only when each of its threads has run its share, and a thread woken for
its share on a core another thread is using first waits for the scheduler to give it one
(tens of microseconds on an idle machine, 20-30 ms per wake-up on two cores with a load average
of 15-20, where the RNN of d2l's chapter 6 took 100 s on two threads and 4.6 s on one).

A worker shares the GIL with the thread that pushes to it: once the first worker starts, a
thread waiting for the GIL takes it after ``GIL_INTERVAL`` (1 ms) instead of CPython's 5 ms
(``share_the_gil``).
"""
import ctypes
import os
import sys
import time

import torch

from ..base import c_function, env_int

__all__ = ['INLINE_WORK', 'LIGHT_WORK', 'PARALLEL_WORK', 'CONTENDED_WAIT', 'ThreadBudget',
           'LoadProbe', 'run_queue_wait', 'single_threaded', 'cpu_budget', 'local_share',
           'bind_to_local_share', 'end_idle_helpers', 'front_end_thread', 'share_cores',
           'settle_intra_op_threads', 'GIL_INTERVAL', 'share_the_gil', 'float_controls',
           'set_float_controls']

INLINE_WORK = env_int('NEOMX_ENGINE_INLINE_WORK', default=1 << 15)
LIGHT_WORK = env_int('NEOMX_ENGINE_LIGHT_WORK', default=1 << 18)
PARALLEL_WORK = env_int('NEOMX_ENGINE_PARALLEL_WORK', default=1 << 18)
# How long a thread waiting for the GIL lets another keep it (microseconds) once the engine
# runs workers (``share_the_gil``); CPython's default is 5000. 0 (NEOMX_ENGINE_GIL_INTERVAL=0):
# the interpreter's, untouched.
GIL_INTERVAL = env_int('NEOMX_ENGINE_GIL_INTERVAL', default=1000)
# Mean wait for a core per wake-up (microseconds) above which the cores count as contended;
# they count as free again below a quarter of it. 0 (NEOMX_ENGINE_CONTENDED_WAIT=0): never.
CONTENDED_WAIT = env_int('NEOMX_ENGINE_CONTENDED_WAIT', default=1000)


def cpu_budget():
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class ThreadBudget:
    """The intra-op thread count of the CPU devices in use: the cores are shared by them and
    never oversubscribed (two threads fighting for one core run a training step several times
    slower than one). The Python front end gets no core of its own: while the devices compute
    it mostly waits, and a LeNet step on one device of a 2-core machine runs 1.7x faster with
    both cores. While the cores are contended (``contended``, kept by the workers'
    ``LoadProbe``) every kernel runs on one thread. ``NEOMX_CPU_THREADS`` (or
    ``OMP_NUM_THREADS``) fixes the count per device, contended or not."""
    __slots__ = ('devices', 'intra_op_threads', 'pinned', 'contended', 'fixed')

    def __init__(self):
        self.devices = set()        # ids of the CPU devices in use
        self.intra_op_threads = 0   # per device; 0 until a CPU device is in use
        self.pinned = None          # the cores this process was pinned to (bind_to_local_share)
        self.contended = False      # the cores are busy with other threads (LoadProbe)
        self.fixed = False          # the count was set by the environment

    def use_device(self, ctx):
        """Recomputes the count when a new CPU device comes into use (the first one also pins
        the process to its share of the cores)."""
        if ctx.device_typeid == 2 or ctx.device_id in self.devices:
            return
        if not self.devices:
            self.pinned = bind_to_local_share()
        self.devices.add(ctx.device_id)
        fixed = env_int('NEOMX_CPU_THREADS', 'OMP_NUM_THREADS')
        self.fixed = bool(fixed)
        n = fixed if fixed else max(1, cpu_budget() // len(self.devices))
        if n != self.intra_op_threads:
            self.intra_op_threads = n
            torch.set_num_threads(n)

    def for_work(self, work):
        """The intra-op threads for an operation of size ``work`` (None: large); 0 while no
        CPU device is in use (leave torch's setting alone). While data loading processes work
        beside the devices (``share_cores``), the kernels leave them the cores they take,
        counting a core once they fill a quarter of it (``SHARED_CORE``), up to half of
        them."""
        if work is not None and work < PARALLEL_WORK:
            return 1
        n = self.intra_op_threads
        if not n or self.fixed:
            return n
        if self.contended:
            return 1
        taken = int(_SHARED[0] + 1 - SHARED_CORE)
        return n - min(taken, n // 2) if taken else n

    def set_for(self, work, current):
        """Sets the calling thread's intra-op threads for an operation of size ``work``, which
        the thread is set to ``current`` for; returns its setting now."""
        n = self.for_work(work)
        if n != current and n:
            torch.set_num_threads(n)
            return n
        return current

    def probe(self):
        """A ``LoadProbe`` for a CPU worker's thread to keep ``contended`` with; None where
        the count is fixed, load following is off or the system does not say."""
        if self.fixed or not CONTENDED_WAIT or run_queue_wait() is None:
            return None
        return LoadProbe(self)


_SHARED = [0.0]  # cores taken by data loading processes beside this process's devices (share_cores)
# The share of a core that data loading processes must fill for the kernels to leave them the
# core (``share_cores``). Their fill is what they got, not what they wanted: a parallel kernel
# whose helper spins on the core they need starves them, their fill drops, and at a half the
# count held itself there (the MLP from scratch of bench_book.py on two AMD EPYC cores: its
# loaders filled 0.4 of a core beside two-thread kernels, 0.6 beside one-thread ones, and a
# run took 1.7-1.9 s on two threads against 1.2-1.4 s on one, at random).
SHARED_CORE = 0.25


def share_cores(cores):
    """Counts ``cores`` more (fewer, when negative) of the cores as taken by a DataLoader's
    worker processes in a pass: the kernels leave them as many cores, each counted once they
    fill a quarter of it (``SHARED_CORE``), up to half the cores (``ThreadBudget.for_work``).
    A loader counts a core per process at a pass's start, while they make its first batches
    together, then the cores their CPU time fills. On two cores, the book's Fashion-MNIST loops
    (a DataLoader of 4 processes, a batch in 3-4 ms) ran 1.1-1.6x faster with their kernels on
    one thread than on two, whose helper threads spin-wait between parallel kernels on the core
    a loader process wanted; LeNet, whose processes fill a tenth to a fifth of a core, runs
    faster on two (docs/benchmarks.md)."""
    _SHARED[0] = max(0.0, _SHARED[0] + cores)


def run_queue_wait():
    """(nanoseconds the calling thread has waited for a core while ready to run, times it was
    given one), from Linux's ``/proc/thread-self/schedstat``; None where it is unavailable."""
    try:
        with open('/proc/thread-self/schedstat', 'rb') as f:
            fields = f.read().split()
        return int(fields[1]), int(fields[2])
    except (OSError, ValueError, IndexError):
        return None


class LoadProbe:
    """Tells a ``ThreadBudget`` whether the cores are contended, from how long its thread (a
    CPU worker's) waits for a core each time it becomes ready to run, over ``INTERVAL``
    seconds: the wait a kernel's other intra-op threads have too, before they start their
    share. Contended above ``CONTENDED_WAIT`` microseconds per wake-up on average, free again
    below a quarter of it; a window of fewer than ``MIN_WAKEUPS`` wake-ups leaves the verdict
    as it was. The measure counts this process's threads as much as other processes': a front
    end busy pushing small operations while a worker's kernel wants both cores of two is
    contention too."""
    __slots__ = ('budget', 'next', 'wait', 'wakeups')
    INTERVAL = 0.2
    MIN_WAKEUPS = 4

    def __init__(self, budget):
        self.budget = budget
        self.next = 0.0
        self.wait, self.wakeups = run_queue_wait() or (0, 0)

    def sample(self, now=None):
        """Updates the verdict; call from the probe's thread when ``now >= self.next``."""
        self.next = (time.monotonic() if now is None else now) + self.INTERVAL
        got = run_queue_wait()
        if got is None:
            return
        wait, wakeups = got
        dw, dn = wait - self.wait, wakeups - self.wakeups
        self.wait, self.wakeups = wait, wakeups
        if dn < self.MIN_WAKEUPS:
            return
        mean_us = dw / dn / 1e3
        if mean_us > CONTENDED_WAIT:
            self.budget.contended = True
        elif mean_us < CONTENDED_WAIT / 4:
            self.budget.contended = False


class single_threaded:
    """``with single_threaded():`` runs its block's kernels on one intra-op thread, then puts
    the calling thread's setting back: for code of many mid-sized operations that gain nothing
    from a second thread and, on a busy machine, lose several times over waiting for it (greedy
    non-maximum suppression)."""
    __slots__ = ('prev',)

    def __enter__(self):
        self.prev = torch.get_num_threads()
        torch.set_num_threads(1)

    def __exit__(self, *exc):
        torch.set_num_threads(self.prev)


def local_share(cores, local_rank, local_size):
    """The cores that process ``local_rank`` of ``local_size`` processes on one machine keeps
    to: an equal, disjoint slice of ``cores``; None when there is nothing to split (one
    process, or fewer cores than processes)."""
    cores = sorted(cores)
    if local_size is None or local_size < 2 or local_rank is None:
        return None
    k = len(cores) // local_size
    if k == 0 or not 0 <= local_rank < local_size:
        return None
    return set(cores[local_rank * k:(local_rank + 1) * k])


def bind_to_local_share():
    """Pins every thread of this process to its share of the cores when it is one of several
    processes of a job on this machine (LOCAL_RANK and LOCAL_WORLD_SIZE, set by ``neomx
    launch`` and torchrun), so that the processes do not migrate across each other's cores
    (two LeNet processes on two cores: 0.95x to 1.2x the throughput of unpinned ones, on a
    noisy machine). Threads started later inherit the mask. NEOMX_CPU_AFFINITY=0 leaves the
    affinity alone. Returns the cores, or None when nothing was pinned. Once per process: a
    later engine (or a forked child) keeps the share taken first."""
    if _BOUND:
        return _BOUND[0]
    share = None
    if env_int('NEOMX_CPU_AFFINITY', default=1) != 0 and hasattr(os, 'sched_setaffinity'):
        share = local_share(os.sched_getaffinity(0), env_int('LOCAL_RANK'),
                            env_int('LOCAL_WORLD_SIZE'))
    if share is not None:
        for tid in os.listdir('/proc/self/task'):
            try:
                os.sched_setaffinity(int(tid), share)
            except OSError:     # a thread that has just ended
                pass
    _BOUND.append(share)
    return share


_BOUND = []


def end_idle_helpers():
    """Ends the OpenMP helper threads the calling thread keeps for torch's parallel kernels
    (libgomp's ``omp_pause_resource_all``); its next parallel kernel starts them again. libgomp
    stops every helper spin-waiting between parallel regions once the process has more of them
    than cores, so two threads running torch on all cores (an engine worker and the main
    thread) slow each other down even in turn. Returns False where torch's OpenMP is not
    libgomp's (nothing to end)."""
    if _OMP_PAUSE is None:
        return False
    _OMP_PAUSE(1)       # omp_pause_soft
    return True


_OMP_PAUSE = c_function('omp_pause_resource_all', ctypes.c_int, (ctypes.c_int,))
_PID = os.getpid()


def front_end_thread():
    """Sets the calling thread, which pushes to CPU workers, to one intra-op thread and ends
    the OpenMP helpers it kept from earlier kernels (a copy from NumPy of a large array): it
    computes only operations too small to share (``INLINE_WORK``, a waiter's ``_help``). Any
    kernel it ran on two threads would give the process a second OpenMP team, and with more
    helpers than cores libgomp stops every helper spin-waiting between parallel regions, the
    worker's too: the RNN of ``bench_book.py`` then took 1.04-1.11 s instead of 0.52-0.58, at
    random, whenever the front end had run one tiny ``tanh`` itself. Not in a forked child,
    whose copy of the parent's helpers has no threads behind it to end."""
    settle_intra_op_threads()
    torch.set_num_threads(1)
    if os.getpid() == _PID:
        end_idle_helpers()


def settle_intra_op_threads():
    """Makes torch fix the calling thread's intra-op thread count now, so that the count the
    thread sets next is the one it keeps. torch gives a thread its count lazily, at its first
    parallel kernel (or ``get_num_threads``), taking the count that any thread of the process
    set last; a count the thread set before that (``set_num_threads``) is replaced. The front
    end's one thread, set when the first CPU worker starts, became the worker's two whenever
    the worker ran a kernel before the front end ran its first (a program that waits, sleeps
    or reads a file between making its parameters with ``nd.random`` and computing anything
    itself): the front end's next kernel started an OpenMP team of its own, and the book's RNN
    from scratch took 70-72 ms a batch (forward and backward) instead of 39
    (docs/benchmarks.md). A worker settles its own at its start, for the same reason: its
    count is set per operation (``ThreadBudget.set_for``), which trusts it."""
    torch.get_num_threads()


_CPYTHON_SWITCH_INTERVAL = 0.005
_GIL_SHARED = [False]


def share_the_gil():
    """Shortens the interpreter's GIL switch interval to ``GIL_INTERVAL`` when the engine's
    first worker starts, unless the program set an interval of its own. A worker needs the GIL
    for a few microseconds between kernels, and a front end running Python keeps it until it
    blocks or the interval ends: CPython's 5 ms. The book's RNN from scratch, whose front end
    pushes some 310 operations after each batch's synchronisation while the worker it woke waits
    for the GIL, took 0.947x its time per round at 1 ms (15 rounds), the other loops of
    ``bench_book.py`` 1.00-1.05x (docs/benchmarks.md). A thread waiting for nothing costs
    nothing: the interval matters only while two threads want the GIL."""
    if _GIL_SHARED[0]:
        return
    _GIL_SHARED[0] = True
    if GIL_INTERVAL > 0 and sys.getswitchinterval() == _CPYTHON_SWITCH_INTERVAL:
        sys.setswitchinterval(GIL_INTERVAL / 1e6)


# -- the floating-point environment ------------------------------------------------------------
#
# Flush-to-zero, denormals-are-zero and the rounding mode are settings of each thread (x86's
# MXCSR register): torch.set_flush_denormal(True) sets them in the calling thread only, a thread
# starts with its creator's, and OpenMP's helper threads keep those they started with. An
# engine worker started before the main thread changed them would compute with the old ones,
# and an operation's results would depend on which thread ran it (a waiting thread runs queued
# operations itself). glibc's fenv_t on x86-64 holds the MXCSR at byte 28.

_FENV_SIZE, _MXCSR_AT, _MXCSR_CONTROLS = 32, 28, 0xFFC0    # masks, rounding, FTZ, DAZ
_FEGETENV = c_function('fegetenv', ctypes.c_int, (ctypes.c_char_p,))
_FESETENV = c_function('fesetenv', ctypes.c_int, (ctypes.c_char_p,))
_FENV = (_FEGETENV is not None and _FESETENV is not None and hasattr(os, 'uname')
         and os.uname().machine == 'x86_64')


def float_controls():
    """The calling thread's floating-point control settings (x86-64's MXCSR without its status
    flags: flush-to-zero, denormals-are-zero, rounding, exception masks) as an int; None where
    they cannot be read (another architecture or C library)."""
    if not _FENV:
        return None
    buf = ctypes.create_string_buffer(_FENV_SIZE)
    _FEGETENV(buf)
    return int.from_bytes(buf.raw[_MXCSR_AT:_MXCSR_AT + 4], 'little') & _MXCSR_CONTROLS


def set_float_controls(controls):
    """Gives the calling thread the control settings ``controls`` (from ``float_controls``;
    None: nothing to do), keeping its status flags."""
    if controls is None or not _FENV:
        return
    buf = ctypes.create_string_buffer(_FENV_SIZE)
    _FEGETENV(buf)
    raw = bytearray(buf.raw)
    at = _MXCSR_AT
    mxcsr = int.from_bytes(raw[at:at + 4], 'little')
    raw[at:at + 4] = ((mxcsr & ~_MXCSR_CONTROLS) | controls).to_bytes(4, 'little')
    _FESETENV(bytes(raw))
