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
  on one).
"""
import ctypes
import os

import torch

from ..base import c_function, env_int

__all__ = ['INLINE_WORK', 'LIGHT_WORK', 'PARALLEL_WORK', 'ThreadBudget', 'cpu_budget',
           'local_share', 'bind_to_local_share', 'end_idle_helpers']

INLINE_WORK = env_int('NEOMX_ENGINE_INLINE_WORK', default=1 << 15)
LIGHT_WORK = env_int('NEOMX_ENGINE_LIGHT_WORK', default=1 << 18)
PARALLEL_WORK = 1 << 18


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
    both cores. ``NEOMX_CPU_THREADS`` (or ``OMP_NUM_THREADS``) fixes the count per device."""
    __slots__ = ('devices', 'intra_op_threads', 'pinned')

    def __init__(self):
        self.devices = set()        # ids of the CPU devices in use
        self.intra_op_threads = 0   # per device; 0 until a CPU device is in use
        self.pinned = None          # the cores this process was pinned to (bind_to_local_share)

    def use_device(self, ctx):
        """Recomputes the count when a new CPU device comes into use (the first one also pins
        the process to its share of the cores)."""
        if ctx.device_typeid == 2 or ctx.device_id in self.devices:
            return
        if not self.devices:
            self.pinned = bind_to_local_share()
        self.devices.add(ctx.device_id)
        fixed = env_int('NEOMX_CPU_THREADS', 'OMP_NUM_THREADS')
        n = fixed if fixed else max(1, cpu_budget() // len(self.devices))
        if n != self.intra_op_threads:
            self.intra_op_threads = n
            torch.set_num_threads(n)

    def for_work(self, work):
        """The intra-op threads for an operation of size ``work`` (None: large); 0 while no
        CPU device is in use (leave torch's setting alone)."""
        return self.intra_op_threads if work is None or work >= PARALLEL_WORK else 1


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
