"""Shared foundations: the error type, dtype tables and environment settings.

Everything else in neomx imports from here; this module imports nothing of neomx.
"""
import ctypes
import os
import sys
import threading

# How many times an OpenMP helper thread of torch's kernels spins waiting for the next
# parallel region before it sleeps: libgomp reads GOMP_SPINCOUNT once, when torch loads it, so
# it is set here, before torch is imported, unless the program chose a spin count or a wait
# policy of its own (or imported torch first). libgomp's 300,000 spins (a helper busy about
# 5 ms after one parallel kernel on the 2-core machine of docs/benchmarks.md) assume its
# threads own the cores; beside them neomx keeps a front end pushing operations, and an engine
# worker woken while a helper spins waits for a core. 30,000 (about 1 ms) still bridges the
# gaps between the kernels of a training step. The book's loops against PyTorch, per round,
# as a share of their time with libgomp's default: LeNet 0.94x (two runs of 5 and 8 rounds),
# the MLP 0.92x, softmax regression and the MLP in Gluon 1.02x (one run of 5), the RNN from
# scratch 0.95-1.02x (five runs of 5 to 20 rounds, median 0.99x; docs/benchmarks.md). Longer
# spins trade one loop for another: on two AMD EPYC cores, 100,000-300,000 took the RNN 0.95-0.98x
# its time, whose front end idles while the worker computes, and LeNet 1.01-1.07x, whose front
# end pushes beside the worker's parallel kernels.
OMP_SPIN_COUNT = 30000
if not ({'GOMP_SPINCOUNT', 'OMP_WAIT_POLICY'} & os.environ.keys() or 'torch' in sys.modules):
    os.environ['GOMP_SPINCOUNT'] = str(OMP_SPIN_COUNT)

import numpy as np  # noqa: E402
import torch  # noqa: E402

__all__ = ['MXNetError', 'NotSupportedForSparseNDArray', 'NotImplementedForSymbol',
           'numeric_types', 'integer_types', 'string_types', 'dtype_np', 'dtype_torch',
           'dtype_name', 'env_int', 'env_str', 'data_dir', 'data_dir_default', 'py_str', 'c_str',
           'c_str_array', 'c_array', 'classproperty', 'ClassPropertyMeta', 'with_metaclass', 'register_error', 'error_types',
           'check_call', 'unavailable', 'c_function']


class MXNetError(RuntimeError):
    """The error neomx raises for invalid operations, as MXNet's ``mxnet.base.MXNetError``."""


error_types = {}


def register_error(func_name=None, cls=None):
    """Registers an error class under a name (its own by default), as MXNet's
    ``mxnet.base.register_error``; usable as ``@register_error`` or
    ``@register_error('Name')``. The registry is ``error_types``."""
    if callable(func_name) and cls is None:
        cls, func_name = func_name, func_name.__name__

    def register(cls):
        error_types[func_name or cls.__name__] = cls
        return cls
    return register(cls) if cls is not None else register


register_error(MXNetError)
for _builtin in (ValueError, TypeError, AttributeError, IndexError, NotImplementedError):
    register_error(_builtin.__name__, _builtin)


@register_error
class NotSupportedForSparseNDArray(MXNetError):
    """A call that dense arrays support and sparse ones do not."""


@register_error
class NotImplementedForSymbol(MXNetError):
    """A call that needs values (``asnumpy``, ``if sym:``) on a Symbol, which has none."""

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = function.__name__
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = 'Function {}'.format(self.function)
        if self.alias:
            msg += ' (namely operator "{}")'.format(self.alias)
        if self.args:
            msg += ' with arguments ({})'.format(', '.join(self.args))
        return msg + ' is not implemented for Symbol and only available in NDArray.'


def py_str(x):
    """Bytes from the back end as a Python string (MXNet's ``py_str``)."""
    return x.decode('utf-8') if isinstance(x, (bytes, bytearray)) else str(x)


def c_str(string):
    """A Python string as the bytes MXNet's C API took (``c_str``); neomx has no C API, and
    code that builds such arguments gets the encoded bytes."""
    return string.encode('utf-8')


def c_str_array(strings):
    """A ctypes array of ``char*`` holding ``strings`` encoded as UTF-8, as MXNet's C API took
    lists of names (``MXSetSubgraphPropertyOpNames``; see _capi.py)."""
    arr = (ctypes.c_char_p * len(strings))()
    arr[:] = [s.encode('utf-8') for s in strings]
    return arr


def c_array(ctype, values):
    """A ctypes array of ``ctype`` holding ``values`` (MXNet's ``c_array``)."""
    return (ctype * len(values))(*values)


class _NullType:
    """The "argument not given" marker of MXNet's generated operator functions."""

    def __repr__(self):
        return '_Null'


_Null = _NullType()


def _as_list(obj):
    """``obj`` if it is a list or tuple, else ``[obj]``."""
    return obj if isinstance(obj, (list, tuple)) else [obj]


def flatten(args, leaf, what):
    """(flat list, format) of ``args``: a leaf or a (nested) list or tuple of them. ``leaf(x)``
    is None for what is not a leaf, else the leaf's format: 0 for one value, n for a Symbol of
    n outputs. ``regroup`` rebuilds the nesting (MXNet's control-flow functions take and give
    nested lists so); ``what`` names the argument in the error."""
    fmt = leaf(args)
    if fmt is not None:
        return [args], fmt
    if not isinstance(args, (list, tuple)):
        raise MXNetError("%s must be a (nested) list of arrays or symbols, but got %r of type "
                         "%s" % (what, args, type(args).__name__))
    flat, fmts = [], []
    for a in args:
        f, m = flatten(a, leaf, what)
        flat.extend(f)
        fmts.append(m)
    return flat, fmts


def regroup(flat, fmt):
    """The nesting ``fmt`` (from ``flatten``) rebuilt from the values ``flat``."""
    def take(items, fmt):
        if isinstance(fmt, int):
            if fmt == 0:
                return items[0], items[1:]
            return items[:fmt], items[fmt:]
        out = []
        for f in fmt:
            r, items = take(items, f)
            out.append(r)
        return out, items
    return take(list(flat), fmt)[0]


class classproperty:
    """A property of a class (``@classproperty def name(cls): ...``); with a ``setter`` it can
    be assigned (``Cls.name = value``) on classes made by ``ClassPropertyMeta``."""

    def __init__(self, fget, fset=None):
        self.fget = fget
        self.fset = fset

    def __get__(self, obj, owner):
        return self.fget(owner)

    def setter(self, fset):
        self.fset = fset
        return self


class ClassPropertyMeta(type):
    """The metaclass that routes ``Cls.name = value`` to a ``classproperty``'s setter (MXNet
    keeps its per-thread defaults, such as ``Context.default_ctx``, so)."""

    def __setattr__(cls, key, value):
        for klass in cls.__mro__:
            prop = klass.__dict__.get(key)
            if prop is not None:
                if isinstance(prop, classproperty) and prop.fset is not None:
                    prop.fset(cls, value)
                    return
                break
        super().__setattr__(key, value)


def with_metaclass(meta, *bases):
    """A base class with metaclass ``meta`` (Python 2/3 idiom kept for MXNet-era code)."""
    return meta('with_metaclass_base', bases or (object,), {})


# MXNet's C handle types. neomx has no C library; code that only names them (type annotations,
# isinstance checks on ctypes values) keeps working.
NDArrayHandle = SymbolHandle = ExecutorHandle = CachedOpHandle = KVStoreHandle = ctypes.c_void_p
FunctionHandle = OpHandle = DataIterHandle = DataIterCreatorHandle = RecordIOHandle = ctypes.c_void_p
ProfileHandle = DLPackHandle = RtcHandle = CudaModuleHandle = CudaKernelHandle = ctypes.c_void_p
mx_uint = ctypes.c_uint
mx_int = ctypes.c_int
mx_float = ctypes.c_float
mx_float_p = ctypes.POINTER(mx_float)
mx_real_t = np.float32


numeric_types = (float, int, np.generic)
integer_types = (int, np.integer)
string_types = (str,)

# MXNet's numpy stand-in for bfloat16, which numpy lacks: the 16 bits as a named uint16 field
# (``NDArray.dtype`` of a bfloat16 array, ``amp.bfloat16``).
bfloat16 = np.dtype([('bfloat16', np.uint16)])

# MXNet's type flags (the numbers in .params files and symbol JSON `__dtype__`).
_TABLE = [
    # name       numpy        torch           flag
    ('float32', np.float32, torch.float32, 0),
    ('float64', np.float64, torch.float64, 1),
    ('float16', np.float16, torch.float16, 2),
    ('uint8', np.uint8, torch.uint8, 3),
    ('int32', np.int32, torch.int32, 4),
    ('int8', np.int8, torch.int8, 5),
    ('int64', np.int64, torch.int64, 6),
    ('bool', np.bool_, torch.bool, 7),
    ('int16', np.int16, torch.int16, 8),
    ('bfloat16', bfloat16, torch.bfloat16, 12),
]
_BY_NAME = {name: (npt, tt, flag) for name, npt, tt, flag in _TABLE}
_NAME_OF_TORCH = {tt: name for name, _, tt, _ in _TABLE}
_NAME_OF_FLAG = {flag: name for name, _, _, flag in _TABLE}
_NAME_OF_NP = {np.dtype(npt): name for name, npt, _, _ in _TABLE if npt is not None}
_CACHE = {}


def dtype_name(dtype):
    """Canonical name ('float32', ...) of a dtype given as a name, numpy type, torch dtype or
    MXNet type flag. Raises a TypeError naming the value for anything else."""
    try:
        return _CACHE[dtype]
    except (KeyError, TypeError):
        pass
    name = None
    if isinstance(dtype, str):
        name = dtype if dtype in _BY_NAME else None
        if name is None and dtype not in ('', 'None'):
            try:        # NumPy's other spellings: 'half', 'float', 'f4', 'double', ...
                name = _NAME_OF_NP.get(np.dtype(dtype))
            except TypeError:
                name = None
    elif isinstance(dtype, torch.dtype):
        name = _NAME_OF_TORCH.get(dtype)
    elif isinstance(dtype, bool):
        name = None
    elif isinstance(dtype, int):
        name = _NAME_OF_FLAG.get(dtype)
    elif dtype is None:
        name = 'float32'
    else:
        try:
            name = _NAME_OF_NP.get(np.dtype(dtype))
        except TypeError:
            name = None
    if name is None:
        raise TypeError("unsupported dtype %r: expected one of %s" % (dtype, ', '.join(_BY_NAME)))
    try:
        _CACHE[dtype] = name
    except TypeError:
        pass
    return name


def dtype_np(dtype):
    """The numpy type (e.g. ``numpy.float32``) MXNet reports as ``NDArray.dtype``; for
    bfloat16, MXNet's stand-in ``bfloat16`` (a dtype, numpy having no such type)."""
    return _BY_NAME[dtype_name(dtype)][0]


def dtype_torch(dtype):
    return _BY_NAME[dtype_name(dtype)][1]


def dtype_flag(dtype):
    return _BY_NAME[dtype_name(dtype)][2]


def size_text(nbytes):
    """``nbytes`` as people write it: '512 bytes', '3.6 TiB'.

    >>> size_text(4 * 10 ** 12)
    '3.6 TiB'
    """
    if nbytes < 1024:
        return '%d bytes' % nbytes
    for unit in ('KiB', 'MiB', 'GiB', 'TiB', 'PiB'):
        nbytes /= 1024.0
        if nbytes < 1024 or unit == 'PiB':
            return '%.1f %s' % (nbytes, unit)


def env_str(*names, default=None):
    """The first of the environment variables ``names`` that is set (neomx's own name first,
    then MXNet's), or ``default``."""
    for name in names:
        value = os.environ.get(name)
        if value not in (None, ''):
            return value
    return default


def data_dir_default():
    """``~/.mxnet`` (MXNet's folder, so files it downloaded are found); ``%APPDATA%\\mxnet``
    on Windows."""
    if sys.platform == 'win32' and os.environ.get('APPDATA'):
        return os.path.join(os.environ['APPDATA'], 'mxnet')
    return os.path.join(os.path.expanduser('~'), '.mxnet')


def data_dir():
    """Where datasets and models are kept: ``$NEOMX_HOME`` or ``$MXNET_HOME``, else
    ``data_dir_default()``."""
    return os.path.expanduser(env_str('NEOMX_HOME', 'MXNET_HOME', default=data_dir_default()))


def env_int(*names, default=None):
    value = env_str(*names)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise MXNetError("environment variable %s=%r: expected an integer" % (names[0], value)) from None


def c_function(name, restype=ctypes.c_int, argtypes=None):
    """The C function ``name`` among the process's own symbols (the C library's, and those of
    the libraries torch loaded, such as its OpenMP runtime), typed; None where there is none."""
    try:
        fn = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    fn.restype = restype
    if argtypes is not None:
        fn.argtypes = argtypes
    return fn


class _Mode(threading.local):
    """The front end's autograd mode, per Python thread (read when an operation is pushed)."""
    recording = False
    training = False
    # The deferred-compute trace of a Gluon block being hybridized (gluon/_deferred.py), or
    # None: while set, operations record themselves into it as they run.
    tracing = None


mode = _Mode()


# -- where an operation was pushed from ---------------------------------------------------

_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep   # the neomx package
_INTERNAL = {}


def user_line(depth=2):
    """(file, line) of the innermost caller outside neomx, for error messages."""
    return site_line(user_site(depth + 1))


def user_site(depth=2):
    """Where the innermost caller outside neomx is, as ``(code, instruction offset)``, which
    ``site_line`` turns into ``user_line``'s (file, line); None when every caller is inside
    neomx. For what is found at every call and wanted only on a failure (the user's line of
    each queued engine operation): a frame's line number is decoded from its code's line
    table, which cost a tenth of a recorded operation's push."""
    try:
        f = sys._getframe(depth)
    except ValueError:      # fewer frames than that (a caller's ``skip`` past the bottom)
        return None
    internal = _INTERNAL
    while f is not None:
        code = f.f_code
        name = code.co_filename
        r = internal.get(name)
        if r is None:
            r = internal[name] = name.startswith(_PKG)
        if not r:
            return (code, f.f_lasti)
        f = f.f_back
    return None


def site_line(site):
    """(file, line) of a ``user_site`` (None for None)."""
    if site is None:
        return None
    code, offset = site
    for start, end, line in code.co_lines():
        if start <= offset < end and line is not None:
            return (code.co_filename, line)
    return (code.co_filename, code.co_firstlineno)


# The message of the last failed call of ``_LIB`` (neomx/_capi.py, which also sets ``_LIB``
# here when it is imported), per thread.
LAST_ERROR = threading.local()


def check_call(ret):
    """Raises MXNetError with the last error's message when a ``_LIB`` call returned non-zero
    (MXNet's ``check_call``); returns ``ret``."""
    if ret != 0:
        raise MXNetError(py_str(getattr(LAST_ERROR, 'message', '').encode('utf-8')))
    return ret


def unavailable(name, message, doc):
    """A function named ``name`` that raises ``MXNetError(message)`` when called: a name of
    MXNet's API that neomx keeps, so that code importing it loads, but does not provide."""
    def fn(*args, **kwargs):
        raise MXNetError(message)
    fn.__name__ = name
    fn.__doc__ = doc
    return fn
