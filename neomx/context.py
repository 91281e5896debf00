"""Devices: ``cpu(i)`` and ``gpu(i)``.

Each context is a device for the engine: ``cpu(0)`` and ``cpu(1)`` have their own workers and
run at the same time, as two GPUs would.

>>> import neomx as mx
>>> mx.cpu(1)
cpu(1)
>>> with mx.cpu(1):
...     mx.context.current_context()
cpu(1)
"""
import os
import threading
import warnings

import torch

from .base import ClassPropertyMeta, MXNetError, classproperty
from .util import set_module

__all__ = ['Context', 'cpu', 'gpu', 'cpu_pinned', 'num_gpus', 'current_context', 'gpu_memory_info']


def _context(device_type, device_id):
    """A Context from its pickle (a function of neomx's, so that a pickle loads without the
    ``mxnet`` alias)."""
    return Context(device_type, device_id)


@set_module('mxnet.context')
class Context(metaclass=ClassPropertyMeta):
    """A device: ``Context('cpu', 0)``, ``Context('gpu', 1)`` or ``Context(other_context)``.

    Its module reads ``mxnet.context``, as MXNet's, since libraries name the class that way
    (GluonTS serialises a context as ``mxnet.context.Context`` and decodes only that name)."""
    devtype2str = {1: 'cpu', 2: 'gpu', 3: 'cpu_pinned', 5: 'cpu_shared'}
    devstr2type = {'cpu': 1, 'gpu': 2, 'cpu_pinned': 3, 'cpu_shared': 5}
    _default = threading.local()
    __slots__ = ('device_typeid', 'device_id', 'key', '_hash', '_torch')

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            device_typeid, device_id = device_type.device_typeid, device_type.device_id
        else:
            device_typeid = self.devstr2type.get(device_type)
            if device_typeid is None:
                raise MXNetError("unknown device type %r: expected one of %s"
                                 % (device_type, ', '.join(self.devstr2type)))
        if not isinstance(device_id, int) or device_id < 0:
            raise MXNetError("device id must be a non-negative integer, got %r" % (device_id,))
        self.device_typeid = device_typeid
        self.device_id = device_id
        self.key = (device_typeid << 20) | device_id   # a small int naming the device
        self._hash = hash(self.key)
        self._torch = None

    @property
    def device_type(self):
        return self.devtype2str[self.device_typeid]

    @property
    def torch_device(self):
        """The torch device holding this context's arrays (``cpu(i)`` are all host memory)."""
        dev = self._torch
        if dev is None:
            if self.device_typeid == 2:
                if self.device_id >= num_gpus():
                    raise MXNetError("%s is not available: this machine has %d GPU(s)"
                                     % (self, num_gpus()))
                dev = torch.device('cuda', self.device_id)
            else:
                dev = torch.device('cpu')
            self._torch = dev
        return dev

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_typeid == other.device_typeid
                and self.device_id == other.device_id)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __str__(self):
        return '%s(%d)' % (self.device_type, self.device_id)

    __repr__ = __str__

    def __reduce__(self):
        return (_context, (self.device_type, self.device_id))

    def __enter__(self):
        state = Context._default
        if not hasattr(state, 'stack'):
            state.stack = []
        state.stack.append(getattr(state, 'value', None))
        state.value = self
        return self

    def __exit__(self, *exc):
        state = Context._default
        state.value = state.stack.pop()

    def empty_cache(self):
        """Releases cached GPU memory of this device back to the driver."""
        if self.device_typeid == 2:
            with torch.cuda.device(self.device_id):
                torch.cuda.empty_cache()

    @property
    def is_gpu(self):
        return self.device_typeid == 2

    @classproperty
    def default_ctx(cls):
        """MXNet 1.x's deprecated class attribute: this thread's current context (assigning
        it sets this thread's default)."""
        warnings.warn("Context.default_ctx has been deprecated. Please use "
                      "Context.current_context() instead.", DeprecationWarning, stacklevel=2)
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, ctx):
        Context._default.value = ctx


def cpu(device_id=0):
    """The CPU context ``cpu(device_id)``; distinct ids are distinct engine devices."""
    return Context('cpu', device_id)


def cpu_pinned(device_id=0):
    return Context('cpu_pinned', device_id)


def gpu(device_id=0):
    """The GPU context ``gpu(device_id)``. Creating it never fails; using it without such a
    GPU raises an error naming the device."""
    return Context('gpu', device_id)


_NUM_GPUS = None


def num_gpus():
    """The number of CUDA devices torch sees."""
    global _NUM_GPUS
    if _NUM_GPUS is None:
        _NUM_GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return _NUM_GPUS


def gpu_memory_info(device_id=0):
    """(free, total) bytes of GPU ``device_id``."""
    if device_id >= num_gpus():
        raise MXNetError("gpu(%d) is not available: this machine has %d GPU(s)" % (device_id, num_gpus()))
    return torch.cuda.mem_get_info(device_id)


_MEMORY = {}


def memory_bytes(ctx):
    """The memory of the device of ``ctx`` in bytes (for a CPU, the machine's physical memory),
    or None when it cannot be told: no array larger than that can be made there."""
    key = (ctx.device_typeid, ctx.device_id if ctx.device_typeid == 2 else 0)
    if key not in _MEMORY:
        size = None
        try:
            if ctx.device_typeid == 2:
                size = torch.cuda.get_device_properties(ctx.device_id).total_memory
            else:
                size = os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE')
        except (AttributeError, ValueError, OSError, RuntimeError, AssertionError):
            pass
        _MEMORY[key] = size if size and size > 0 else None
    return _MEMORY[key]


_CPU0 = Context('cpu', 0)


def current_context():
    """The context arrays are created on when none is given (``cpu(0)`` unless inside a
    ``with ctx:`` block)."""
    return getattr(Context._default, 'value', None) or _CPU0
