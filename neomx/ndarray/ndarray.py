"""NDArray: an n-dimensional array whose operations run asynchronously on the engine.

An NDArray is (shape, dtype, context, storage). The storage is an engine Var holding a
``torch.Tensor`` that is filled in when the operation producing it runs, so reading
``.shape`` never waits while ``asnumpy()`` does. Contiguous basic slices and ``reshape`` are
views: they share the storage (and its Var) of the array they come from, as in MXNet.

>>> import neomx as mx
>>> a = mx.nd.ones((2, 3))
>>> b = a * 2 + 1          # queued, returns at once
>>> b.shape                # known without waiting
(2, 3)
>>> b.asnumpy().tolist()   # waits for the result
[[3.0, 3.0, 3.0], [3.0, 3.0, 3.0]]
"""

import numpy as np
import torch

from .. import engine as _engine
from ..base import MXNetError, dtype_name, dtype_np, dtype_torch, mode, size_text, user_line
from ..context import Context, current_context, memory_bytes
from ..engine import Var
from ..ops import amp as _amp
from ..ops import registry
from ..ops.layout import dense, row_major as _strides
from ..ops.registry import ShapeError
from ..util import is_np_array as _is_np_array
from . import one_element as _one_element
from .handles import array_of_handle, parameter_of
from .run import (closure, merge_leaves, own, record_outputs, recording, shadowed,
                  store_into)

__all__ = ['NDArray', 'Storage', 'invoke', 'push_write', 'from_tensor', 'empty_like_spec',
           'waitall', 'rng_var']

_REAL = (int, float, np.integer, np.floating, bool, np.bool_)
# NumPy's number classes (``asscalar`` returns one): with an array they take the fast path as
# the Python number of their value, as the general path takes them (``float(other)``)
_NP_NUMBERS = frozenset(np.dtype(c).type for c in 'efdbhilqBHILQ')

# Names MXNet code imports from this module. The storage type ids are MXNet's, as they appear
# in symbol attributes such as __storage_type__ (sparse types: see nd.sparse).
py_slice = slice
_STORAGE_TYPE_STR_TO_ID = {'undefined': -1, 'default': 0, 'row_sparse': 1, 'csr': 2}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}


class Storage(Var):
    """The storage of an array and of its views: the engine Var, the tensor, and autograd state
    (the gradient buffer of a marked variable; for a recorded result, the marked variables it
    depends on and the recorded Storages it was computed from, ``RELEASED`` once a backward
    pass has freed its graph). ``leaves`` holds weak references to the marked variables'
    Storages (a marked variable's own set names itself); the ``parents`` chain keeps them alive
    while a recorded result needs them. ``siblings`` holds weak references to the Storages of
    all the results of the operation that made this one, when it made several: a backward pass
    releases them together, as MXNet releases an operation's node."""
    __slots__ = ('tensor', 'grad', 'grad_req', 'leaves', 'parents', 'recipe', 'fresh_grad',
                 'shadow', 'siblings', 'alive_at')

    def __init__(self, tensor=None):
        self.writer = None
        self.wseq = 0
        self.readers = None
        self.error = None
        self.tensor = tensor
        self.grad = None
        self.grad_req = 'null'
        self.leaves = None
        self.parents = None
        self.recipe = None
        self.siblings = None
        self.alive_at = -1        # run.reaches_released
        self.fresh_grad = False   # set by backward, cleared by the Trainer (stale gradients)
        # Integer arrays are differentiated (as in MXNet) through a float64 copy that torch
        # autograd can follow: set for a marked integer variable and the integer results
        # recorded from it (see run.closure); True until the engine has made it.
        self.shadow = None


class RNGState(Var):
    """The random generator of one device: random operations read and write it, so they draw
    in push order. A random operation that fails leaves the generator usable, so the ones after
    it run (in MXNet 1.9.1 they failed with its error until that had been raised)."""
    __slots__ = ('generator',)
    fails_with_writer = False

    def __init__(self, device):
        super().__init__()
        self.generator = torch.Generator(device=device)


_RNG = {}


def rng_var(ctx):
    """The generator Var of ``ctx`` (one per device)."""
    v = _RNG.get(ctx)
    if v is None:
        v = _RNG[ctx] = RNGState(ctx.torch_device)
        v.generator.manual_seed(_default_seed(ctx))
    return v


_SEED = [5489]   # the last global seed (``mx.random.seed``) seeds devices first used later


def seed_for(ctx, base=None):
    base = _SEED[0] if base is None else base
    return base + 1009 * ctx.device_id + (500009 if ctx.device_typeid == 2 else 0)


def _default_seed(ctx):
    return seed_for(ctx)


def _fmt_where(where):
    """' (at FILE, line N)' for the user's line ``where``; None: the caller's line outside
    neomx, found now (a push-time error is raised in the call that pushes), which costs
    nothing on the calls that do not fail."""
    if where is None:
        where = user_line()
    return '' if where is None else ' (at %s, line %d)' % where


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# -- pushing operations -------------------------------------------------------------------

_new = object.__new__


def _make(var, shape, dtype, ctx, view=None):
    a = _new(NDArray)
    a._var = var
    a._shape = shape
    a._dtype = dtype
    a._ctx = ctx
    a._view = view
    return a


def from_tensor(tensor, ctx=None):
    """An NDArray holding ``tensor`` (no copy; the caller gives up the tensor)."""
    if ctx is None:
        ctx = _ctx_of_tensor(tensor)
    tensor = dense(tensor)
    return _make(Storage(tensor), tuple(tensor.shape), dtype_name(tensor.dtype), ctx)


# -- the caller's array class ---------------------------------------------------------------
#
# mx.np.ndarray subclasses NDArray, so this module cannot name it: neomx.numpy registers its
# module here when it is imported (``_numpy.ndarray``, ``_numpy.array``).
_numpy = None


def array_class():
    """The class of the arrays the calling code works with: ``mx.np.ndarray`` under NumPy
    array semantics (``npx.set_np()``, ``use_np``, ``util.np_array()``), else ``NDArray``.

    Every array that neomx makes for its caller out of something other than arrays (a file,
    NumPy data, numbers, a shape: a dataset's samples, ``image.imread``, the array an
    initializer fills, a DataLoader's batches, an RNN's begin state) has this class, as in
    MXNet; an operator's results take the class of its inputs instead. ``nd.*`` functions
    called by name stay legacy.

    >>> import neomx as mx
    >>> array_class().__name__
    'NDArray'
    >>> with mx.util.np_array(True):
    ...     array_class().__module__
    'mxnet.numpy'
    """
    if _numpy is not None and _is_np_array():
        return _numpy.ndarray
    return NDArray


def in_array_class(x, cls=None):
    """``x`` (an NDArray, or a list, tuple or dict of them, nested) with its legacy NDArrays
    given the class ``cls`` (default ``array_class()``; another class than ``mx.np.ndarray``
    changes nothing) over the same storage: for arrays that neomx's legacy functions made on
    behalf of code working with ``cls``. Other arrays (``mx.np.ndarray``, sparse arrays) and
    other objects are returned as they are."""
    if cls is None:
        cls = array_class()
    if _numpy is None or cls is not _numpy.ndarray:
        return x
    if x.__class__ is NDArray:
        out = _make(x._var, x._shape, x._dtype, x._ctx, x._view)
        out.__class__ = cls
        return out
    if isinstance(x, (list, tuple)):
        items = [in_array_class(v, cls) for v in x]
        return items if type(x) is list else (tuple(items) if type(x) is tuple
                                              else type(x)(*items))
    if isinstance(x, dict):
        return {k: in_array_class(v, cls) for k, v in x.items()}
    return x


def new_array(source, ctx=None, dtype=None):
    """A copy of ``source`` (NumPy data, a list, a number) in ``array_class()``, by that
    class's rules: ``mx.np.array`` (a NumPy array keeps its dtype; float32 otherwise), else
    ``nd.array`` (float32 unless ``dtype`` is given).

    >>> import numpy as onp, neomx as mx
    >>> new_array(onp.arange(3)).dtype
    <class 'numpy.float32'>
    >>> with mx.util.np_array(True):
    ...     new_array(onp.arange(3)).dtype
    dtype('int64')
    """
    if array_class() is not NDArray:
        return _numpy.array(source, dtype=dtype, ctx=ctx)
    from .creation import array
    return array(source, ctx=ctx, dtype=dtype)


def _ctx_of_tensor(t):
    from ..context import cpu, gpu
    return gpu(t.device.index or 0) if t.device.type == 'cuda' else cpu(0)


def empty_like_spec(shape, dtype, ctx):
    """An NDArray whose storage is yet to be written by an operation the caller pushes."""
    return _make(Storage(), tuple(shape), dtype, ctx)


def _check_ctx(op_name, inputs, where):
    ctx = None
    for x in inputs:
        if x is None:
            continue
        if ctx is None:
            ctx = x._ctx
        elif x._ctx != ctx:
            raise MXNetError("%s: inputs are on different devices (%s and %s); copy them to one "
                             "device first with as_in_context%s"
                             % (op_name, ctx, x._ctx, _fmt_where(where)))
    return ctx


def invoke(op, inputs, attrs, out=None, ctx=None, where=None):
    """Pushes operator ``op`` on NDArray ``inputs`` (None for an absent optional input) with
    canonical ``attrs``; returns its output NDArray, or a list when it has several. Shapes and
    dtypes are inferred here, so a mismatch raises now, naming the operator, the shapes and the
    caller's line."""
    if mode.tracing is not None:
        return _traced(op, inputs, attrs, out, ctx, where)
    if op.simple and out is None:
        n = len(inputs)
        if n == 1:
            if inputs[0] is not None:
                res = _fast_call(op, inputs[0], None, None, attrs, where)
                if res is not None:
                    return res
        elif n == 2:
            a, b = inputs
            # Arrays of two classes take the general path, which picks the result's class.
            if a is not None and b is not None and a.__class__ is b.__class__:
                res = _fast_call(op, a, b, None, attrs, where)
                if res is not None:
                    return res
    for x in inputs:
        if x is not None and x._sparse:
            return sparse_call(op, inputs, attrs, out, ctx, where)
    if out is not None and any(t._sparse for t in (out if isinstance(out, (list, tuple))
                                                   else (out,))):
        return sparse_call(op, inputs, attrs, out, ctx, where)
    return invoke_dense(op, inputs, attrs, out, ctx, where)


def invoke_dense(op, inputs, attrs, out=None, ctx=None, where=None):
    """``invoke``'s general path, for dense arrays (``nd.sparse`` calls it with sparse ones
    where it runs an operator on their dense forms)."""
    if inputs:
        ctx = _check_ctx(op.name, inputs, where) or ctx or current_context()
        shapes = tuple(None if x is None else x._shape for x in inputs)
        dtypes = tuple(None if x is None else x._dtype for x in inputs)
    else:
        ctx = ctx or current_context()
        shapes = dtypes = ()
    casts = None
    table = _amp.table
    if table is not None and dtypes:
        # mixed precision (amp.init): the kernel reads its inputs cast as the table says, and
        # its outputs' dtypes follow from theirs
        casts = table.casts(op, attrs, dtypes)
        if casts is not None:
            dtypes = tuple(d if c is None else c for d, c in zip(dtypes, casts))
        attrs = table.scale_loss_output(op, attrs)
    try:
        out_shapes, out_dtypes = op.infer(attrs, shapes, dtypes)
    except ShapeError as e:
        raise _shape_error(op, e, attrs, shapes, dtypes, where) from None
    _check_results(op, attrs, out_shapes, out_dtypes, ctx, where)
    outs = [_make(Storage(), s, d, ctx) for s, d in zip(out_shapes, out_dtypes)]
    cls = _subclass(inputs, op.name, attrs)
    if cls is not None:
        for o in outs:
            o.__class__ = cls
    kw = attrs
    extra_reads = ()
    if op.rng or op.train or op.creation:
        generator = None
        if op.rng:
            rv = rng_var(ctx)
            generator = rv.generator
            extra_reads = (rv,)
        kw = dict(attrs, **op.kernel_kwargs(ctx.torch_device, mode.training, generator))
    in_vars = [x._var for x in inputs if x is not None]
    rec = False
    if mode.recording:
        leaves = merge_leaves(in_vars)
        if leaves is not None:
            rec = record_outputs([o._var for o in outs],
                                 [None if x is None else x._var for x in inputs], leaves,
                                 (op, attrs, tuple(inputs)))
    shadows = bool(rec) and out is None and shadowed(in_vars, [o._dtype for o in outs])
    mutated = ()
    if op.mutate:
        names = op.input_names(attrs, len(inputs), present_only=False)
        mutated = [inputs[names.index(n)]._var for n in op.mutated(attrs, mode.training)
                   if n in names and inputs[names.index(n)] is not None]
    writes = [o._var for o in outs]
    if mutated:
        writes.extend(mutated)
    if extra_reads:
        in_vars.extend(extra_reads)
        writes.extend(extra_reads)
    if out is not None:
        outs = _redirect(op, outs, out, where, inputs)
        writes = [o._var for o in outs] + writes[len(outs):]
    fn = closure(op.kernel, inputs, outs, kw, rec, op.view, into=out is not None,
                 shadows=shadows, casts=casts)
    _engine.push(fn, in_vars, writes, ctx, op.name, work=op.work(attrs, shapes, out_shapes))
    if out is not None:
        return out
    if op.num_outputs(attrs) == 1 and len(outs) == 1:
        return outs[0]
    return outs


def _subclass(inputs, name, attrs):
    """The array class of an operator's results: that of its first input of a subclass of
    NDArray (``mx.np.ndarray``), or None for plain NDArray. (Sparse arrays' results get their
    classes from nd.sparse.)"""
    for x in inputs:
        if x is not None and x.__class__ is not NDArray and not x._sparse:
            return x.__class__
    return None


def sparse_call(op, inputs, attrs, out, ctx, where):
    """``invoke`` where an input or ``out=`` is a sparse array: set by nd.sparse."""
    raise MXNetError("%s: sparse arrays need neomx.ndarray.sparse" % op.name)


def _traced(op, inputs, attrs, out, ctx, where):
    """``invoke`` while a block is traced (``mode.tracing``): runs the operator, then records
    it in the trace."""
    trace = mode.tracing
    mode.tracing = None
    try:
        # A write into out= is a new value in the graph: the run computes it into a new
        # array (leaving out= and whatever it is recorded in alone), and the trace takes
        # out= to stand for it from here on.
        res = invoke(op, inputs, attrs, None if trace.functional else out, ctx, where)
    finally:
        mode.tracing = trace
    if not trace.functional:
        return res
    trace.record(op, inputs, attrs, res)
    if out is not None:
        targets = out if isinstance(out, (list, tuple)) else [out]
        results = res if isinstance(res, list) else [res]
        for t, r in zip(targets, results):
            trace.alias(t, r)
    return res


_LARGE = 1 << 24    # results of fewer elements are not checked against the device's memory


def _check_results(op, attrs, out_shapes, out_dtypes, ctx, where):
    """Raises now, naming the operator and the caller's line, what the kernel would raise at
    the next synchronisation in torch's words: a creation or random operator's ``shape`` with
    a negative dimension (its shape rule reads one as unknown, which only a Symbol may leave),
    and results larger than the memory of the device."""
    if op.creation or op.rng:
        shape = attrs.get('shape')
        if isinstance(shape, tuple) and any(d < 0 for d in shape):
            raise MXNetError("%s: shape %s has a negative dimension: a dimension cannot be "
                             "negative%s" % (op.name, shape, _fmt_where(where)))
    n = 0
    for s in out_shapes:
        n += _numel(s)
    if n > _LARGE:
        need = sum(_numel(s) * dtype_torch(d).itemsize for s, d in zip(out_shapes, out_dtypes))
        have = memory_bytes(ctx)
        if have is not None and need > have:
            what = ', '.join('%s %s' % (d, s) for s, d in zip(out_shapes, out_dtypes))
            raise MXNetError("%s: the result (%s) needs %s of memory, more than the %s %s has%s"
                             % (op.name, what, size_text(need), size_text(have), ctx,
                                _fmt_where(where)))


def _shape_error(op, exc, attrs, shapes, dtypes, where):
    """The MXNetError for inputs that do not fit ``op``: the rule's words (prefixed with the
    operator's name unless they start with it), the inputs and the user's line."""
    msg = str(exc)
    if not msg.startswith(op.name + ':'):
        msg = '%s: %s' % (op.name, msg)
    return MXNetError('%s; inputs %s%s' % (msg, _describe(op, attrs, shapes, dtypes),
                                           _fmt_where(where)))


def _describe(op, attrs, shapes, dtypes):
    try:
        names = op.input_names(attrs, len(shapes))
    except Exception:
        names = ()
    parts = []
    for i, (s, d) in enumerate(zip(shapes, dtypes)):
        n = names[i] if i < len(names) else 'arg%d' % i
        parts.append('%s=%s' % (n, 'None' if s is None else '%s %s' % (s, d)))
    return '(' + ', '.join(parts) + ')' + (' with ' + ', '.join('%s=%r' % kv for kv in attrs.items())
                                           if attrs else '')


def row_major_storage(var, write=False):
    """``var``'s tensor laid out row-major, for an operation that reads it (``write`` False)
    or writes it through a view. Convolution, batch normalisation and pooling keep 4-d float32
    CPU results channels-last (see ops.layout); such a storage goes row-major when a view of it
    is made or code outside the engine reads it. A recorded tensor's copy stays in autograd's
    graph.

    A marked variable stored channels-last (a convolution's weight, see
    ``ops.layout.keep_channels_last``) is autograd's leaf and must stay the same tensor: a
    reader gets a row-major copy (other operations may be reading the variable at the same
    time), a writer, which has the variable to itself, lays the leaf out row-major in place."""
    t = var.tensor
    if t.is_contiguous():
        return t
    if t.is_leaf and t.requires_grad:
        if not write:
            return t.contiguous()
        t.data = t.data.contiguous()
        return t
    t = var.tensor = own(t)
    return t


def _redirect(op, outs, out, where, inputs=()):
    targets = out if isinstance(out, (list, tuple)) else [out]
    if len(targets) != len(outs):
        raise MXNetError("%s: %d output(s) but out= has %d%s"
                         % (op.name, len(outs), len(targets), _fmt_where(where)))
    for o, t in zip(outs, targets):
        if not isinstance(t, NDArray):
            raise MXNetError("%s: out= must be NDArray, got %s" % (op.name, type(t).__name__))
        if t._shape != o._shape:
            raise MXNetError("%s: out= has shape %s but the result has shape %s%s"
                             % (op.name, t._shape, o._shape, _fmt_where(where)))
        _check_writable(t, where, inputs)
    return list(targets)


def _check_writable(target, where=None, values=()):
    """Raises when recording and an in-place write into ``target`` (of the NDArrays
    ``values``) would corrupt a graph: as in MXNet, neither an array in a graph nor a value
    computed in one may be written in place."""
    if not mode.recording:
        return
    if target._var.leaves:
        raise MXNetError("Assigning to NDArrays that are already in a computational graph will "
                         "cause undefined behavior when evaluating gradients. Please call "
                         "backward first to clear the graph or do this out of a record section"
                         "%s" % _fmt_where(where))
    for v in values:
        if v is not None and v._var.leaves:
            raise MXNetError("Inplace operations (+=, -=, x[:]=, etc) are not supported when "
                             "recording with autograd: the value written into the array is in a "
                             "computational graph%s" % _fmt_where(where))


def push_write(target, fn_value, reads, name, where=None):
    """Pushes an in-place write into ``target``: ``fn_value()`` (run by the engine) returns the
    tensor or Python scalar to store."""
    _check_writable(target, where)

    def fn():
        value = fn_value()
        dst = target._tensor(write=True)
        with torch.no_grad():
            if isinstance(value, torch.Tensor):
                dst.copy_(value)
            else:
                dst.fill_(value)
    _engine.push(fn, reads, [target._var], target._ctx, name)
    return target


def waitall():
    """Blocks until every pushed operation is complete, then raises the first error of the
    operations it waited for."""
    _engine.waitall()


def _arith(array_name, scalar_name):
    """The NDArray method ``x (op) other``: operator ``scalar_name`` with a number,
    ``array_name`` with an array (None: a reflected method, which only numbers reach). A plain
    array with a number or a plain array takes the fast path (``fastpath.call``); the rest, or
    what the fast path declines, ``_binary``."""
    array_op = registry.get(array_name) if array_name else None
    scalar_op = registry.get(scalar_name)

    def method(self, other):
        cls = other.__class__
        if cls is float or cls is int:
            out = _fast_call(scalar_op, self, None, other)
            if out is not None:
                return out
        elif cls is NDArray and array_op is not None:
            out = _fast_call(array_op, self, other)
            if out is not None:
                return out
        elif cls in _NP_NUMBERS:
            out = _fast_call(scalar_op, self, None, other.item())
            if out is not None:
                return out
        return _binary(self, other, array_name, scalar_name)
    return method


# -- the array ----------------------------------------------------------------------------

class NDArray:
    """An n-dimensional array on a device; see the module docstring."""
    __slots__ = ('_var', '_shape', '_dtype', '_ctx', '_view', '__weakref__')
    __array_priority__ = 1000.0
    _sparse = False         # csr and row_sparse arrays (nd.sparse) set it

    # --- attributes that never wait ---
    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return dtype_np(self._dtype)

    @property
    def context(self):
        return self._ctx

    ctx = context

    @property
    def size(self):
        return _numel(self._shape)

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def stype(self):
        return 'default'

    @property
    def writable(self):
        return True

    @property
    def handle(self):
        """What stands for MXNet's C handle: the array itself (``mxnet.base._LIB``'s functions
        take it; see neomx/_capi.py and ndarray/handles.py)."""
        return self

    @property
    def _as_parameter_(self):
        """What ctypes passes for the array: a handle that ``NDArray(handle=...)`` turns back
        into it (``ctypes.cast(arr, NDArrayHandle)`` in MXNet's monitor callbacks)."""
        return parameter_of(self)

    def __init__(self, handle=None, writable=True):
        """``NDArray(handle=h)``: the array of a handle ``_LIB.MXNDArrayFromDLPack`` wrote (MXNet
        code building arrays through the C API). Arrays are otherwise made by ``nd.array``,
        ``nd.zeros`` and the operators."""
        if handle is None:
            raise MXNetError("NDArray() needs a handle; create arrays with nd.array, nd.zeros, "
                             "nd.empty and the like")
        if isinstance(handle, NDArray):
            other = handle
        else:
            other = array_of_handle(handle)
        self._var, self._shape, self._dtype, self._ctx, self._view = (
            other._var, other._shape, other._dtype, other._ctx, other._view)

    @property
    def grad(self):
        """The gradient buffer of a variable marked with ``attach_grad``, else None."""
        return self._var.grad

    @property
    def _fresh_grad(self):
        """Whether a backward pass has written this variable's gradient since the flag was
        last cleared (MXNet's flag; the Trainer uses it to find stale gradients)."""
        return self._var.fresh_grad

    @_fresh_grad.setter
    def _fresh_grad(self, state):
        self._var.fresh_grad = bool(state)

    @property
    def T(self):
        if self.ndim < 2:
            return self
        return _op('transpose')(self)

    # --- the tensor, when the engine has produced it ---
    def _tensor(self, write=False):
        """The tensor, in an operation of the engine that reads this array or, with ``write``,
        writes into it."""
        var = self._var
        t = var.tensor
        if self._view is None:
            return t
        if not t.is_contiguous():
            t = row_major_storage(var, write)
        return self._view_of(t)

    def _view_of(self, t):
        return t.as_strided(self._shape, _strides(self._shape), t.storage_offset() + self._view)

    def _data(self):
        """The tensor after waiting for it (for code outside the engine), row-major."""
        self.wait_to_read()
        if self._var.tensor is None:
            self._refill()
        t = row_major_storage(self._var)
        return t if self._view is None else self._view_of(t)

    def _refill(self):
        """Storage for an array whose producing operation failed, once its error was raised:
        MXNet reads such an array's memory, unset; neomx gives zeros (written by an operation
        of its own, ordered with whatever else writes the storage)."""
        var = self._var
        need = (self._view or 0) + self.size
        shape = need if self._view is not None else self._shape
        dtype, device = dtype_torch(self._dtype), self._ctx.torch_device

        def fill():
            t = var.tensor
            if t is None or t.numel() < need:
                fresh = torch.zeros(shape, dtype=dtype, device=device)
                if t is not None:
                    fresh.view(-1)[:t.numel()] = t.reshape(-1)
                var.tensor = fresh
        _engine.push(fill, [], [var], self._ctx, '_refill')
        _engine.wait_for_var(var)

    # --- synchronisation ---
    def wait_to_read(self):
        """Blocks until the pending writes to this array are done; raises their error."""
        if mode.tracing is not None:
            # values read while a block is traced: its graph depends on them
            mode.tracing.values_read = True
        _engine.wait_for_var(self._var)

    def wait_to_write(self):
        """Blocks until pending reads and writes of this array are done."""
        _engine.wait_for_var(self._var, True)

    def asnumpy(self):
        """A numpy copy of the array (waits for it). Under NumPy 2 a one-element result converts
        to a number as in NumPy 1 (``float(a)``, ``'%f' % a``): see ``ndarray.one_element``."""
        t = self._data().detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        if _one_element.NEEDED and t.numel() == 1 and t.dim():
            return _one_element.copy_of(t.cpu().numpy())
        if t.device.type != 'cpu':
            return t.cpu().numpy()
        return t.numpy().copy()

    def asscalar(self):
        """The value of a one-element array as a numpy scalar (waits for it)."""
        if self.size != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(())[()]

    def item(self):
        return self.asscalar().item()

    def tolist(self):
        return self.asnumpy().tolist()

    def __repr__(self):
        shape_info = 'x'.join('%d' % d for d in self._shape)
        return '\n%s\n<%s %s @%s>' % (str(self.asnumpy()), self.__class__.__name__, shape_info,
                                      self._ctx)

    __str__ = __repr__

    def __bool__(self):
        n = self.size
        if n == 0:
            return False
        if n == 1:
            return bool(self.asscalar())
        raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")

    __nonzero__ = __bool__

    def __float__(self):
        return float(self.asscalar())

    def __int__(self):
        return int(self.asscalar())

    def __index__(self):
        if self.size != 1 or not np.issubdtype(self.dtype, np.integer):
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.asscalar())

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d NDArray")
        return self._shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __hash__(self):
        return id(self)

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype)

    def __reduce__(self):
        return (_from_numpy_ctx, (self.asnumpy(), str(self._ctx.device_type), self._ctx.device_id))

    def __getstate__(self):
        """MXNet's state of an array: ``{'handle': bytearray}`` holding its record in the
        ``nd.save`` format (pickling itself goes through ``__reduce__``)."""
        from .utils import raw_bytes
        return {'handle': bytearray(raw_bytes(self))}

    def __setstate__(self, state):
        """Makes this array the one of a state from ``__getstate__`` (also MXNet's; an array
        saved on a GPU comes back on cpu(0) when there is no GPU)."""
        from .utils import from_raw_bytes
        handle = state.get('handle') if isinstance(state, dict) else None
        if handle is None:
            raise MXNetError("__setstate__: expected a dict with a 'handle' of raw bytes, got %r"
                             % (type(state).__name__,))
        other = from_raw_bytes(bytes(handle), '__setstate__')
        if other is None:
            raise MXNetError("__setstate__: the state holds no array")
        self._var, self._shape, self._dtype, self._ctx, self._view = (
            other._var, other._shape, other._dtype, other._ctx, other._view)

    # --- DLPack ---
    def __dlpack__(self, stream=None, **kwargs):
        t = self._data().detach()
        return t.__dlpack__(**({'stream': stream} if stream is not None else {}))

    def __dlpack_device__(self):
        return self._data().__dlpack_device__()

    def to_dlpack_for_read(self):
        return torch.utils.dlpack.to_dlpack(self._data().detach())

    def to_dlpack_for_write(self):
        self.wait_to_write()
        return torch.utils.dlpack.to_dlpack(self._tensor(write=True).detach())

    # --- copies and conversion ---
    def copyto(self, other):
        """Copies into ``other`` (an NDArray, written in place) or onto a Context (a new array)."""
        if isinstance(other, Context):
            out = _make(Storage(), self._shape, self._dtype, other)
        elif isinstance(other, NDArray):
            if other._shape != self._shape:
                raise MXNetError("copyto: shape mismatch, source %s and target %s"
                                 % (self._shape, other._shape))
            if other is self or (other._var is self._var and other._view == self._view):
                return other
            out = other
        else:
            raise TypeError("copyto does not support type %s" % type(other).__name__)
        copy_into(self, out)
        return out

    def copy(self):
        return self.copyto(self._ctx)

    def as_in_context(self, context):
        """This array if it is on ``context``, else a copy there."""
        if self._ctx == context:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def as_nd_ndarray(self):
        return self

    def astype(self, dtype, copy=True):
        name = dtype_name(dtype)
        if not copy and name == self._dtype:
            return self
        return _op('Cast')(self, dtype=name)

    def tostype(self, stype):
        """A copy of storage type ``stype`` ('default', 'csr', 'row_sparse'; see
        ``ndarray/sparse.py``)."""
        if stype == 'default' and self.__class__ is NDArray:
            return self
        from .sparse import cast_storage
        return cast_storage(self, stype)

    def detach(self):
        """A new array sharing this one's data, outside any recorded graph: a constant to
        autograd (MXNet's ``detach``)."""
        prev = mode.recording
        mode.recording = False
        try:
            out = _op('_detach')(self)
        finally:
            mode.recording = prev
        out.__class__ = self.__class__      # the storage type stays
        return out

    # --- views ---
    def reshape(self, *shape, **kwargs):
        """A view with a new shape (MXNet's codes 0, -1, -2, -3, -4 are understood)."""
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = tuple(shape[0])
        if not shape:
            shape = kwargs.pop('shape', None)
            if shape is None:
                raise MXNetError("reshape: no shape given")
        reverse = kwargs.pop('reverse', False)
        if kwargs:
            raise TypeError("reshape: unexpected arguments %s" % ', '.join(kwargs))
        if mode.tracing is not None:
            return _op('Reshape')(self, shape=tuple(shape), reverse=reverse)
        from ..ops.shape import infer_reshape
        shape = tuple(shape)
        if all(isinstance(d, (int, np.integer)) and d > 0 for d in shape) and \
                _numel(shape) != self.size:
            raise ValueError('Cannot reshape array of size %d into shape %s'
                             % (self.size, shape))
        try:
            new = infer_reshape(self._shape, shape, reverse)
        except ShapeError as e:
            raise MXNetError("reshape: %s" % e) from None
        return _make(self._var, new, self._dtype, self._ctx, self._view or 0)

    def _view_as(self, name, **kwargs):
        """A view of this array shaped as operator ``name`` would shape it."""
        op = registry.get(name)
        (shape,), _ = op.infer(op.parse_attrs(kwargs), (self._shape,), (self._dtype,))
        return self.reshape(shape)

    def flatten(self, inplace=False):
        """The array as 2-d (first axis kept); with ``inplace`` a view sharing storage."""
        return self._view_as('Flatten') if inplace else _op('Flatten')(self)

    def expand_dims(self, axis, inplace=False):
        """A new axis of length 1 at ``axis``; with ``inplace`` a view sharing storage."""
        if inplace:
            return self._view_as('expand_dims', axis=axis)
        return _op('expand_dims')(self, axis=axis)

    def squeeze(self, axis=None, inplace=False):
        """The axes of length 1 (or ``axis``) removed; with ``inplace`` a view sharing
        storage."""
        if inplace:
            return self._view_as('squeeze', axis=axis)
        return _op('squeeze')(self, axis=axis)

    def _at(self, i):
        n = self._shape[0]
        if i < -n or i >= n:
            raise IndexError("index %d is out of bounds for axis 0 with size %d" % (i, n))
        i %= n
        rest = self._shape[1:]
        return _make(self._var, rest or (1,), self._dtype, self._ctx,
                     (self._view or 0) + i * _numel(rest))

    def _slice0(self, start, stop):
        rest = self._shape[1:]
        return _make(self._var, (stop - start,) + rest, self._dtype, self._ctx,
                     (self._view or 0) + start * _numel(rest))

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """Whether basic index ``slc_key`` gives a view (a contiguous part) of an array of
        ``shape`` (MXNet's helper name)."""
        from .indexing import is_contiguous_key
        return is_contiguous_key(slc_key, shape)

    def __getitem__(self, key):
        return _getitem(self, key)

    def __setitem__(self, key, value):
        _setitem(self, key, value)

    # --- autograd: attach_grad and backward are added by neomx.autograd, the layer above ---

    # --- arithmetic ---
    __add__ = __radd__ = _arith('broadcast_add', '_plus_scalar')
    __sub__ = _arith('broadcast_sub', '_minus_scalar')
    __rsub__ = _arith(None, '_rminus_scalar')
    __mul__ = __rmul__ = _arith('broadcast_mul', '_mul_scalar')
    __truediv__ = _arith('broadcast_div', '_div_scalar')
    __rtruediv__ = _arith(None, '_rdiv_scalar')
    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    __mod__ = _arith('broadcast_mod', '_mod_scalar')
    __rmod__ = _arith(None, '_rmod_scalar')
    __pow__ = _arith('broadcast_power', '_power_scalar')
    __rpow__ = _arith(None, '_rpower_scalar')

    def __neg__(self):
        return _op('negative')(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _op('abs')(self)

    def __eq__(self, other):
        if other is None:
            return False
        return _binary(self, other, 'broadcast_equal', '_equal_scalar')

    def __ne__(self, other):
        if other is None:
            return True
        return _binary(self, other, 'broadcast_not_equal', '_not_equal_scalar')

    __gt__ = _arith('broadcast_greater', '_greater_scalar')
    __ge__ = _arith('broadcast_greater_equal', '_greater_equal_scalar')
    __lt__ = _arith('broadcast_lesser', '_lesser_scalar')
    __le__ = _arith('broadcast_lesser_equal', '_lesser_equal_scalar')

    def __iadd__(self, other):
        return _inplace(self, other, 'broadcast_add', '_plus_scalar')

    def __isub__(self, other):
        return _inplace(self, other, 'broadcast_sub', '_minus_scalar')

    def __imul__(self, other):
        return _inplace(self, other, 'broadcast_mul', '_mul_scalar')

    def __itruediv__(self, other):
        return _inplace(self, other, 'broadcast_div', '_div_scalar')

    __idiv__ = __itruediv__

    def __imod__(self, other):
        return _inplace(self, other, 'broadcast_mod', '_mod_scalar')

    def __matmul__(self, other):
        return _op('dot')(self, other)


def _from_numpy_ctx(array, device_type, device_id):
    from .creation import array as _array
    return _array(array, ctx=Context(device_type, device_id), dtype=array.dtype)


# Operators are looked up lazily: ops/ defines them after this module is imported.
_OP_FUNCS = {}


def _op(name):
    f = _OP_FUNCS.get(name)
    if f is None:
        from . import gen
        f = _OP_FUNCS[name] = gen.nd_function(registry.get(name))
    return f


def _binary(lhs, rhs, array_op, scalar_op):
    """``lhs (op) rhs`` for an NDArray ``lhs``; ``array_op`` None means rhs is the left operand
    of a reflected scalar op."""
    if isinstance(rhs, NDArray):
        if array_op is None:
            return NotImplemented
        return invoke(registry.get(array_op), (lhs, rhs), _EMPTY)
    if isinstance(rhs, _REAL):
        op = registry.get(scalar_op)
        return invoke(op, (lhs,), {'scalar': float(rhs)})
    if isinstance(rhs, np.ndarray):
        from .creation import array as _array
        return _binary(lhs, _array(rhs, ctx=lhs._ctx, dtype=lhs._dtype), array_op, scalar_op)
    return NotImplemented


def _inplace(self, other, array_op, scalar_op):
    cls = other.__class__
    if cls is float or cls is int:
        out = _fast_call(registry.get(scalar_op), self, None, other, out=self)
        if out is not None:
            return out
    elif cls is NDArray and self.__class__ is NDArray:
        out = _fast_call(registry.get(array_op), self, other, out=self)
        if out is not None:
            return out
    elif cls in _NP_NUMBERS:        # ``g[:] *= theta / norm`` after norm's asscalar
        out = _fast_call(registry.get(scalar_op), self, None, other.item(), out=self)
        if out is not None:
            return out
    if isinstance(other, NDArray):
        return invoke(registry.get(array_op), (self, other), _EMPTY, out=self)
    if isinstance(other, _REAL):
        return invoke(registry.get(scalar_op), (self,), {'scalar': float(other)}, out=self)
    raise TypeError("unsupported operand type %s for in-place %s" % (type(other).__name__, array_op))


_EMPTY = {}


def copy_into(src, dst):
    """Pushes a copy of ``src`` into ``dst`` (any devices); on its own copy worker when the
    devices differ, so the copy overlaps computation."""
    cross = src._ctx != dst._ctx
    dev = dst._ctx.torch_device
    rec = bool(mode.recording and src._var.leaves)
    if rec:
        record_outputs([dst._var], [src._var], src._var.leaves,
                       (registry.get('_copy'), {}, (src,)))
    fresh = dst._var.tensor is None and dst._view is None and dst._var.writer is None
    dtype = dtype_torch(dst._dtype)

    gpu = dev.type == 'cuda' or src._ctx.device_typeid == 2
    dst_stream = _engine.stream_of(dst._ctx) if dev.type == 'cuda' else None

    def fn():
        with recording(rec):
            t = src._tensor()
            if t.device != dev:
                r = t.to(dev, dtype=dtype, non_blocking=dev.type == 'cuda')
                if gpu:
                    # The copy ran on this worker's stream: finish it before the copy counts as
                    # done, and tell the allocator the destination is used on the compute stream.
                    torch.cuda.current_stream(dev if dev.type == 'cuda' else t.device).synchronize()
                    if dst_stream is not None:
                        r.record_stream(dst_stream)
            else:
                r = t.to(dtype=dtype, copy=True) if fresh else t
            if fresh:
                dst._var.tensor = dense(r)
            else:
                store_into(dst, r)
    reads = [src._var]
    _engine.push(fn, reads, [dst._var], dst._ctx, '_copyto', copy=cross)


def _fast_call(op, a, b=None, number=None, attrs=_EMPTY, where=None, out=None):
    """The fast path of tiny operations, ``fastpath.call``, which installs itself here when
    it is imported (it builds on this module); None (not taken) until then."""
    return None


def _getitem(x, key):
    """``x[key]``: ``indexing.getitem``, which installs itself here when it is imported (it
    builds on this module; an import in ``__getitem__`` cost a microsecond a call)."""
    from .indexing import getitem
    return getitem(x, key)


def _setitem(x, key, value):
    """``x[key] = value``: ``indexing.setitem``, installed here as ``_getitem``."""
    from .indexing import setitem
    setitem(x, key, value)


def __getattr__(name):
    # MXNet's ndarray/ndarray.py holds the array functions (nd.maximum, nd.zeros, nd.concatenate,
    # ...) beside the class, and code passes the module itself as a hybrid_forward's F (GluonTS:
    # QuantileLoss's F=nd.ndarray). Here they live in creation.py, which builds on this module.
    from . import creation
    if name in creation.__all__:
        return getattr(creation, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
