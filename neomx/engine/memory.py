"""Freed memory stays with the process: torch's CPU tensors come from the C library's
``malloc``, which by default hands freed memory back to the operating system (a block above its
mmap threshold, 32 MiB at most, is a mapping of its own and unmapped when freed; the heap is
trimmed above twice that threshold of free space at its top; a thread's heap, 64 MiB at most,
is deleted once it is empty, and a larger block a thread asks for is always a mapping of its
own), so the next training step faults the same pages in again, zero-filled, one by one (the
figures: docs/benchmarks.md, "Figures behind rules in the code"). MXNet keeps freed blocks in
its own storage pool for reuse; neomx asks glibc's ``malloc`` to keep them instead:

- every thread allocates from the one main heap (``M_ARENA_MAX`` 1), so the engine's workers'
  large blocks come from it too, without faulting in fresh pages of a heap of their own;
- every block comes from the heap, none from a mapping of its own (``M_MMAP_MAX`` 0; glibc
  still maps memory when the heap cannot grow);
- the heap is trimmed only above 1 GiB of free space at its top (``M_TRIM_THRESHOLD``), and
  grows with 64 MiB to spare (``M_TOP_PAD``);
- were mappings allowed again, blocks up to 32 MiB would still come from the heap
  (``M_MMAP_THRESHOLD``).

Threads that allocated before neomx was imported keep their own heaps. Resident memory stays
near its peak while the process lives, as with MXNet's pool. ``NEOMX_KEEP_FREED_MEMORY=0``
leaves ``malloc`` as it is, and so do the C library's own ``MALLOC_ARENA_MAX``,
``MALLOC_MMAP_MAX_``, ``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_TOP_PAD_`` and
``MALLOC_MMAP_THRESHOLD_`` for their settings when set; other C libraries are left alone.
"""
import ctypes
import os
import sys

from ..base import c_function

__all__ = ['keep_freed_memory']

_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3
_M_MMAP_MAX = -4
_M_ARENA_MAX = -8

SETTINGS = ((_M_ARENA_MAX, 'MALLOC_ARENA_MAX', 1),
            (_M_MMAP_MAX, 'MALLOC_MMAP_MAX_', 0),
            (_M_TRIM_THRESHOLD, 'MALLOC_TRIM_THRESHOLD_', 1 << 30),
            (_M_TOP_PAD, 'MALLOC_TOP_PAD_', 64 << 20),
            (_M_MMAP_THRESHOLD, 'MALLOC_MMAP_THRESHOLD_', 32 << 20))


def keep_freed_memory():
    """Sets glibc's ``malloc`` to keep freed memory (above); returns the names of the settings
    it made, empty where it made none."""
    if os.environ.get('NEOMX_KEEP_FREED_MEMORY', '1') in ('0', 'false', 'False', '') or \
            not sys.platform.startswith('linux'):
        return []
    mallopt = c_function('mallopt', ctypes.c_int, (ctypes.c_int, ctypes.c_int))
    if mallopt is None or c_function('gnu_get_libc_version') is None:   # musl's does nothing
        return []
    made = []
    for param, env, value in SETTINGS:
        if env not in os.environ and mallopt(param, value) == 1:
            made.append(env)
    return made
