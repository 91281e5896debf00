"""MXNet's ``mxnet.util``: the NumPy-semantics switches, their decorators, and small helpers.

MXNet 1.x has two switches. *NumPy shape* semantics makes ``()`` the shape of a scalar and
``0`` a real dimension size (legacy shapes use ``0`` for "unknown"); *NumPy array* semantics
makes Gluon create ``mx.np.ndarray`` instead of ``mx.nd.NDArray``. Array semantics needs shape
semantics. Both are per thread; ``set_np_shape(2)`` turns shape semantics on for every thread
of the process (MXNet's "global" setting).

>>> from neomx import util
>>> util.is_np_shape(), util.is_np_array()
(False, False)
>>> with util.np_shape(True):
...     util.is_np_shape()
True
>>> @util.use_np
... def inside():
...     return util.is_np_shape(), util.is_np_array()
>>> inside()
(True, True)
"""
import functools
import inspect
import os
import threading

__all__ = ['set_np_shape', 'is_np_shape', 'np_shape', 'use_np_shape', 'np_array', 'is_np_array',
           'use_np_array', 'use_np', 'set_np', 'reset_np', 'set_module', 'getenv', 'setenv',
           'get_gpu_count', 'get_gpu_memory', 'get_cuda_compute_capability', 'makedirs',
           'wraps_safely', 'np_ufunc_legal_option', 'wrap_np_unary_func', 'wrap_np_binary_func']


# -- NumPy shape semantics ------------------------------------------------------------------

class _ShapeState(threading.local):
    active = None           # None: follow the process-wide setting


_shape_state = _ShapeState()
_global_np_shape = False


def set_np_shape(active):
    """Turns NumPy shape semantics on (``True``/1) or off (``False``/0) for this thread, or on
    for every thread (2, MXNet's global setting; 0 turns the global setting off again).
    Returns whether it was on before. Turning it off while NumPy array semantics is on is an
    error: ``reset_np()`` turns both off."""
    global _global_np_shape
    if not active and is_np_array():
        raise ValueError('set_np_shape(%r): NumPy shape semantics cannot be turned off while NumPy '
                         'array semantics is on; call npx.reset_np() to turn both off' % (active,))
    prev = is_np_shape()
    if active == 2 or active == 0:
        _global_np_shape = bool(active)
        _shape_state.active = None
    else:
        _shape_state.active = bool(active)
    return prev


def is_np_shape():
    """Whether NumPy shape semantics is on in this thread."""
    active = _shape_state.active
    return _global_np_shape if active is None else active


class _NumpyShapeScope:
    """``with np_shape(active):`` — shape semantics on or off inside the block."""

    def __init__(self, is_np_shape):
        self._enter_is_np_shape = bool(is_np_shape)
        self._prev = None

    def __enter__(self):
        self._prev = _shape_state.active
        _shape_state.active = self._enter_is_np_shape
        return self

    def __exit__(self, *exc):
        _shape_state.active = self._prev


def np_shape(active=True):
    """A scope with NumPy shape semantics turned on (or off): ``with np_shape(True): ...``."""
    return _NumpyShapeScope(active)


# -- NumPy array semantics ------------------------------------------------------------------

class _NumpyArrayScope:
    """``with np_array(active):`` — Gluon creates ``mx.np.ndarray`` inside the block. The scope
    in force in a thread is ``_NumpyArrayScope._current.value``."""

    _current = threading.local()

    def __init__(self, is_np_array):
        self._is_np_array = bool(is_np_array)
        self._old_scope = None

    def __enter__(self):
        current = _NumpyArrayScope._current
        self._old_scope = getattr(current, 'value', None) or _NumpyArrayScope(False)
        current.value = self
        return self

    def __exit__(self, *exc):
        _NumpyArrayScope._current.value = self._old_scope


def np_array(active=True):
    """A scope with NumPy array semantics turned on (or off): ``with np_array(True): ...``."""
    return _NumpyArrayScope(active)


def is_np_array():
    """Whether NumPy array semantics is on in this thread."""
    scope = getattr(_NumpyArrayScope._current, 'value', None)
    return scope._is_np_array if scope is not None else False


def _set_np_array(active):
    prev = is_np_array()
    _NumpyArrayScope._current.value = _NumpyArrayScope(active)
    return prev


def set_np(shape=True, array=True):
    """Turns NumPy shape and array semantics on (or off) for this thread together, as
    ``npx.set_np()`` does. Array semantics without shape semantics is an error."""
    if array and not shape:
        raise ValueError('set_np(shape=False, array=True): NumPy array semantics needs NumPy '
                         'shape semantics')
    _set_np_array(array)
    set_np_shape(shape)


def reset_np():
    """Turns NumPy shape and array semantics off for this thread."""
    set_np(shape=False, array=False)


# -- decorators -----------------------------------------------------------------------------

def wraps_safely(wrapped, assigned=functools.WRAPPER_ASSIGNMENTS):
    """``functools.wraps`` that skips the attributes ``wrapped`` lacks."""
    return functools.wraps(wrapped, [a for a in assigned if hasattr(wrapped, a)])


def _scoped(scopes, func, what):
    """``func`` (a function, or a class whose methods and properties are all wrapped) run inside
    the scopes made by ``scopes()``."""
    if inspect.isclass(func):
        # Inherited methods too (Block.initialize, __call__, ...), as MXNet does: a decorated
        # block creates NumPy arrays when its parameters are initialised.
        for name in dir(func):
            if name in ('__class__', '__new__', '__init_subclass__', '__subclasshook__'):
                continue
            member = inspect.getattr_static(func, name)
            if isinstance(member, property):
                setattr(func, name, property(*(None if f is None else _scoped(scopes, f, what)
                                               for f in (member.fget, member.fset,
                                                         member.fdel)), member.__doc__))
            elif isinstance(member, staticmethod):
                setattr(func, name, staticmethod(_scoped(scopes, member.__func__, what)))
            elif isinstance(member, classmethod):
                setattr(func, name, classmethod(_scoped(scopes, member.__func__, what)))
            elif inspect.isfunction(member):
                setattr(func, name, _scoped(scopes, member, what))
        return func
    if not callable(func):
        raise TypeError('%s: expected a function or a class, got %r' % (what, func))

    @wraps_safely(func)
    def wrapper(*args, **kwargs):
        managers = scopes()
        for m in managers:
            m.__enter__()
        try:
            return func(*args, **kwargs)
        finally:
            for m in reversed(managers):
                m.__exit__(None, None, None)
    return wrapper


def use_np_shape(func):
    """Decorates a function or class to run with NumPy shape semantics on."""
    return _scoped(lambda: (np_shape(True),), func, 'use_np_shape')


def use_np_array(func):
    """Decorates a function or class to run with NumPy array semantics on."""
    return _scoped(lambda: (np_array(True),), func, 'use_np_array')


def use_np(func):
    """Decorates a function or class (e.g. a Gluon block) to run with NumPy shape and array
    semantics on, as MXNet's ``use_np``."""
    return _scoped(lambda: (np_shape(True), np_array(True)), func, 'use_np')


def set_module(module):
    """Class/function decorator setting ``__module__`` (the module shown in reprs and docs)."""
    def decorator(obj):
        if module is not None:
            obj.__module__ = module
        return obj
    return decorator


_UFUNC_DEFAULTS = {'where': True, 'casting': 'same_kind', 'order': 'K', 'dtype': None,
                   'subok': True}
_UFUNC_DTYPES = ('int8', 'uint8', 'int32', 'int64', 'float16', 'float32', 'float64')


def np_ufunc_legal_option(key, value):
    """Whether ``key=value`` is a value NumPy accepts for ufunc keyword argument ``key``
    (``where``, ``casting``, ``order``, ``dtype``, ``subok``)."""
    if key == 'where':
        return True
    if key == 'casting':
        return value in ('no', 'equiv', 'safe', 'same_kind', 'unsafe')
    if key == 'order':
        return isinstance(value, str)
    if key == 'dtype':
        import numpy as onp
        try:
            return onp.dtype(value).name in _UFUNC_DTYPES
        except TypeError:
            return False
    if key == 'subok':
        return isinstance(value, bool)
    return False


def _checked_ufunc(func, kwargs):
    """NumPy ufunc keywords other than ``out`` are accepted at their defaults only: a legal
    other value is NotImplementedError, anything else TypeError."""
    for key, value in kwargs.items():
        if key not in _UFUNC_DEFAULTS:
            raise TypeError("%s: %r is an invalid keyword argument" % (func.__name__, key))
        if value is _UFUNC_DEFAULTS[key] or value == _UFUNC_DEFAULTS[key]:
            continue
        if np_ufunc_legal_option(key, value):
            raise NotImplementedError('%s: %s=%r is not implemented' % (func.__name__, key, value))
        raise TypeError('%s: %s=%r not understood' % (func.__name__, key, value))


def wrap_np_unary_func(func):
    """Checks NumPy ufunc keyword arguments (where/casting/order/dtype/subok) of a unary np
    function before calling it."""
    @wraps_safely(func)
    def wrapper(x, out=None, **kwargs):
        _checked_ufunc(func, kwargs)
        return func(x, out=out)
    return wrapper


def wrap_np_binary_func(func):
    """As ``wrap_np_unary_func``, for binary functions."""
    @wraps_safely(func)
    def wrapper(x1, x2, out=None, **kwargs):
        _checked_ufunc(func, kwargs)
        return func(x1, x2, out=out)
    return wrapper


# -- environment and devices ----------------------------------------------------------------

def getenv(name):
    """The value of environment variable ``name`` as the back end sees it (None when unset).
    neomx's back end reads the process environment, so this is ``os.environ.get``."""
    return os.environ.get(name)


def setenv(name, value):
    """Sets (``value`` a string) or unsets (``value`` None) an environment variable for the
    front and back end alike."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def get_gpu_count():
    """How many CUDA GPUs are visible."""
    from .context import num_gpus
    return num_gpus()


def get_gpu_memory(gpu_dev_id):
    """(free, total) bytes of GPU ``gpu_dev_id``."""
    from .context import gpu_memory_info
    return gpu_memory_info(gpu_dev_id)


def get_cuda_compute_capability(ctx):
    """The compute capability of the GPU of context ``ctx`` as an int (e.g. 80 for 8.0)."""
    import torch
    if ctx.device_type != 'gpu':
        raise ValueError('get_cuda_compute_capability: expected a GPU context, got %s' % (ctx,))
    if not torch.cuda.is_available():
        raise RuntimeError('get_cuda_compute_capability(%s): CUDA is not available' % (ctx,))
    major, minor = torch.cuda.get_device_capability(ctx.device_id)
    return major * 10 + minor


def makedirs(d):
    """``os.makedirs(d, exist_ok=True)`` with ``~`` expanded."""
    os.makedirs(os.path.expanduser(d), exist_ok=True)
