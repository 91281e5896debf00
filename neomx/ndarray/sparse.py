"""``mx.nd.sparse``: MXNet's sparse storage types, ``csr`` and ``row_sparse``.

A ``CSRNDArray`` stores a 2-d matrix as compressed sparse rows (values, column indices, row
pointers: a ``torch.sparse_csr`` tensor); a ``RowSparseNDArray`` stores only the rows holding
non-zeros (a ``torch.sparse_coo`` tensor of one sparse dimension). Their memory is
proportional to what they store: a 10^6 x 10^6 csr matrix of 10^6 non-zeros takes 20 MB
(float32 values, int64 indices), where its dense form would take 4 TB.

Operators follow MXNet's storage-type rules (``ops/sparse.py``): those MXNet runs on sparse
storage (``dot``, ``retain``, the elementwise operators whose value at 0 is 0, ``+``/``-``/``*``
of two arrays of one sparse type, slices and rows of a csr matrix, ...) give results of that
storage type, computed on the stored values; the others run on dense copies of their sparse
inputs and give dense results, as MXNet's storage fallback does. ``tostype`` converts.

Code that handles an array's tensor itself (optimizer updates, the KVStore, graphs bound to
arrays, autograd) sees the dense form: the storage keeps it beside the sparse one while it is
used and follows writes into it (``SparseStorage``). While autograd records, operators on
sparse arrays compute densely and their results keep the storage type MXNet gives them.

>>> import neomx as mx
>>> a = mx.nd.array([[0, 1, 0], [2, 0, 3]]).tostype('csr')
>>> a.stype, a.indptr.asnumpy().tolist(), a.indices.asnumpy().tolist()
('csr', [0, 1, 3], [1, 0, 2])
>>> a.data.asnumpy().tolist()
[1.0, 2.0, 3.0]
>>> (a * 2).stype, mx.nd.exp(a).stype
('csr', 'default')
"""
import weakref

import numpy as np
import torch

from .. import engine as _engine
from ..base import MXNetError, dtype_name, dtype_torch, mode
from ..ops import registry
from ..ops import sparse as _rules
from ..ops.registry import ShapeError
from . import ndarray as _nd
from .ndarray import NDArray, Storage, _make, _op, _shape_error, invoke
from .run import closure, register_storage_types, store_into

__all__ = ['BaseSparseNDArray', 'CSRNDArray', 'RowSparseNDArray', 'csr_matrix',
           'row_sparse_array', 'zeros', 'empty', 'array', 'retain', 'add', 'subtract',
           'multiply', 'divide', 'dot', 'cast_storage', 'zeros_like']

STYPES = _rules.STYPES


# -- storage --------------------------------------------------------------------------------

_RAW = Storage.tensor           # the slot holding the tensor


class _Held:
    """A sparse storage's contents: the sparse tensor and, while code that reads tensors
    directly uses it, its dense form, with the dense form's version when the two agreed."""
    __slots__ = ('sparse', 'dense', 'version')

    def __init__(self, sparse, dense=None, version=0):
        self.sparse = sparse
        self.dense = dense
        self.version = version


class SparseStorage(Storage):
    """The storage of a sparse array. ``sparse()`` is its sparse tensor; ``tensor`` (what code
    reading storages directly sees) its dense form, made when asked for and kept while it may
    be written: a write into it (torch's version counter moves) is carried into the sparse
    tensor the next time that is read. Assigning a dense tensor makes it the contents (the
    sparse tensor follows); assigning a sparse one replaces them."""
    __slots__ = ()
    stype = None

    @property
    def tensor(self):
        h = _RAW.__get__(self)
        if h.__class__ is not _Held:        # None, or a dense tensor written as the contents
            return h
        d = h.dense
        if d is None:
            d = h.dense = h.sparse.to_dense()
            h.version = d._version
        return d

    @tensor.setter
    def tensor(self, t):
        if t is None or t.layout is torch.strided:
            _RAW.__set__(self, t)
        else:
            _RAW.__set__(self, _Held(_rules.to_stype(t, self.stype)))

    def sparse(self):
        """The sparse tensor (inside an operation reading this storage); None before the
        operation writing it has run."""
        h = _RAW.__get__(self)
        if h is None:
            return None
        if h.__class__ is not _Held:
            s = _rules.to_stype(h.detach(), self.stype)
            # an autograd leaf stays the tensor autograd knows; other dense forms are dropped
            _RAW.__set__(self, _Held(s, h, h._version) if h.requires_grad else _Held(s))
            return s
        d = h.dense
        if d is not None:
            if d._version != h.version:
                h.sparse = _rules.to_stype(d.detach(), self.stype)
                h.version = d._version
            if not d.requires_grad:
                h.dense = None
        return h.sparse

    def write(self, t):
        """Replaces the contents with tensor ``t`` (any layout); an autograd leaf among them
        (a marked variable's) is written in place, as autograd needs it kept."""
        h = _RAW.__get__(self)
        leaf = h.dense if h.__class__ is _Held else h
        if leaf is not None and leaf.requires_grad:
            with torch.no_grad():
                leaf.copy_(_rules.to_dense(t))
        else:
            self.tensor = t

    def stored(self):
        """The sparse tensor if that is what the storage holds now, without converting."""
        h = _RAW.__get__(self)
        return h.sparse if h.__class__ is _Held and h.dense is None else None


class CSRStorage(SparseStorage):
    __slots__ = ()
    stype = 'csr'


class RowSparseStorage(SparseStorage):
    __slots__ = ()
    stype = 'row_sparse'


_STORAGES = {'csr': CSRStorage, 'row_sparse': RowSparseStorage}


def sparse_tensor(x):
    """The tensor of array ``x`` in its own storage type (inside an operation reading it)."""
    var = x._var
    if isinstance(var, SparseStorage) and var.stype == x.stype:
        return var.sparse()
    t = var.tensor if x._view is None else x._tensor()
    return _rules.to_stype(t.detach(), x.stype)


def _input_tensor(x):
    """What a kernel run in storage types reads of array ``x``: its sparse tensor, or a
    dense array's (``run.tensors`` with ``stypes``)."""
    if x._sparse:
        return sparse_tensor(x)
    return x._var.tensor if x._view is None else x._tensor()


def _store(o, r, into):
    """Stores result ``r`` into array ``o`` in ``o``'s storage type; ``into``: written into the
    existing array (a marked variable's dense form in place, ``SparseStorage.write``)."""
    r = _rules.to_stype(r, o.stype)
    if not into:
        o._var.tensor = r
    elif o._sparse:
        o._var.write(r)
    else:
        store_into(o, r)


register_storage_types(_input_tensor, _store)


# -- arrays ---------------------------------------------------------------------------------

class BaseSparseNDArray(NDArray):
    """An array of a sparse storage type (see the module docstring)."""
    __slots__ = ()
    _sparse = True

    def __repr__(self):
        return '\n<%s %s @%s>' % (type(self).__name__, 'x'.join('%d' % d for d in self._shape),
                                  self._ctx)

    __str__ = __repr__

    def _sparse_now(self):
        """The sparse tensor, after waiting for it."""
        self.wait_to_read()
        if _RAW.__get__(self._var) is None:     # its operation failed (the error was raised)
            self._refill()
        return sparse_tensor(self)

    def _data(self):
        # a dense copy for the caller: the storage keeps only its sparse form
        t = self._sparse_now().detach()
        return _rules.to_dense(t)

    def asnumpy(self):
        t = self._data()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.cpu().numpy()

    def copyto(self, other):
        """A copy on a Context (of this storage type) or into an array (converted to its
        storage type)."""
        from ..context import Context
        if isinstance(other, Context):
            return _push_sparse(lambda t: t.to(other.torch_device, copy=True), [self],
                                self._shape, self._dtype, other, self.stype, '_copyto')
        if isinstance(other, NDArray):
            if other._shape != self._shape:
                raise MXNetError("copyto: shape mismatch, source %s and target %s"
                                 % (self._shape, other._shape))
            if other is self:
                return other
            assign(other, self)
            return other
        raise TypeError("copyto does not support type %s" % type(other).__name__)

    def check_format(self, full_check=True):
        """Raises MXNetError when the parts this array was made from (``csr_matrix((data,
        indices, indptr))``, ``row_sparse_array((data, indices))``) are not a valid array of
        its storage type: indices out of range, out of order or negative, an indptr that
        decreases or does not end at the number of values. As MXNet's, the check of the
        indices themselves runs only with ``full_check``. (Values whose place such parts do
        not give are left out: zeros, where MXNet's reading them is undefined.) Arrays made
        any other way are always valid."""
        err = _FORMAT_ERRORS.get(id(self))
        if err is not None and full_check:
            raise MXNetError("check_format: %s" % err)

    @property
    def _num_aux(self):
        return len(self._aux_types)

    @property
    def nnz(self):
        """The number of stored values."""
        t = self._sparse_now()
        return int(t.values().numel())

    __hash__ = NDArray.__hash__

    def __reduce__(self):
        return (_from_numpy_stype, (self.asnumpy(), str(self._ctx.device_type),
                                    self._ctx.device_id, self.stype))

    def astype(self, dtype, copy=True):
        if not copy and dtype_name(dtype) == self._dtype:
            return self
        name = dtype_name(dtype)
        return _push_sparse(lambda t: t.to(dtype_torch(name), copy=True), [self], self._shape, name,
                            self._ctx, self.stype, 'astype')

    def tostype(self, stype):
        return cast_storage(self, stype)

    def __setitem__(self, key, value):
        if not (isinstance(key, slice) and key == slice(None)):
            raise MXNetError("%s only supports [:] for assignment, got the index %r"
                             % (type(self).__name__, key))
        if isinstance(value, NDArray):
            if value._shape != self._shape:
                raise MXNetError("%s[:] = value: shape mismatch, %s and %s"
                                 % (type(self).__name__, self._shape, value._shape))
            if value is not self:
                assign(self, value)
            return
        if isinstance(value, (int, float, np.integer, np.floating)):
            if self.stype == 'csr':
                raise MXNetError("CSRNDArray[:] = number is not supported (MXNet's neither); "
                                 "assign an array")
            from .creation import full
            assign(self, full(self._shape, value, ctx=self._ctx, dtype=self._dtype))
            return
        from .creation import array as dense_array
        assign(self, dense_array(np.asarray(value), ctx=self._ctx, dtype=self._dtype))

    # -- x (op) y as MXNet's sparse arrays compute it: the elementwise operators for arrays of
    # one shape, so that the storage rules apply --
    def _elemwise(self, other, elem, broadcast, scalar):
        if isinstance(other, NDArray) and other._shape == self._shape:
            return _op(elem)(self, other)
        return _nd._binary(self, other, broadcast, scalar)

    def __add__(self, other):
        return self._elemwise(other, 'elemwise_add', 'broadcast_add', '_plus_scalar')

    def __sub__(self, other):
        return self._elemwise(other, 'elemwise_sub', 'broadcast_sub', '_minus_scalar')

    def __mul__(self, other):
        return self._elemwise(other, 'elemwise_mul', 'broadcast_mul', '_mul_scalar')

    def __truediv__(self, other):
        return self._elemwise(other, 'elemwise_div', 'broadcast_div', '_div_scalar')

    __div__ = __truediv__

    # a dense array on the left: the operators of dense arrays (broadcast_*), as in MXNet
    def __radd__(self, other):
        if isinstance(other, NDArray):
            return _op('broadcast_add')(other, self)
        return _nd._binary(self, other, None, '_plus_scalar')

    def __rmul__(self, other):
        if isinstance(other, NDArray):
            return _op('broadcast_mul')(other, self)
        return _nd._binary(self, other, None, '_mul_scalar')

    def _values(self):
        return self.asnumpy()


class CSRNDArray(BaseSparseNDArray):
    """A 2-d array of storage type ``csr`` (compressed sparse rows)."""
    __slots__ = ()
    _aux_types = (np.int64, np.int64)       # indptr, indices

    @property
    def stype(self):
        return 'csr'

    def _part(self, which):
        t = self._sparse_now()
        part = {'data': t.values, 'indices': t.col_indices, 'indptr': t.crow_indices}[which]()
        return _nd.from_tensor(part.detach().clone(), self._ctx)

    @property
    def data(self):
        """The stored values, row by row."""
        return self._part('data')

    @property
    def indices(self):
        """The column index of each stored value."""
        return self._part('indices')

    @property
    def indptr(self):
        """Where each row's values start in ``data`` (and, last, their count)."""
        return self._part('indptr')

    def __getitem__(self, key):
        # Rows of a csr matrix are a csr matrix, as MXNet slices them (split_and_load); one
        # row is a 1-row matrix.
        n = self._shape[0]
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not -n <= key < n:
                raise IndexError("CSRNDArray: row %d out of range for shape %s"
                                 % (key, self._shape))
            key = int(key) % n
            key = slice(key, key + 1)
        if isinstance(key, slice) and key.step in (None, 1):
            begin, end, _ = key.indices(n)
            return _op('slice')(self, begin=(begin,), end=(max(begin, end),))
        return cast_storage(self, 'default')[key]

    def asscipy(self):
        import scipy.sparse as spsp
        t = self._sparse_now()
        return spsp.csr_matrix((t.values().cpu().numpy(), t.col_indices().cpu().numpy(),
                                t.crow_indices().cpu().numpy()), shape=self._shape)


class RowSparseNDArray(BaseSparseNDArray):
    """An array of storage type ``row_sparse``: only the rows holding non-zeros are stored."""
    __slots__ = ()
    _aux_types = (np.int64,)                # indices

    @property
    def stype(self):
        return 'row_sparse'

    @property
    def data(self):
        """The stored rows."""
        return _nd.from_tensor(self._sparse_now().values().detach().clone(), self._ctx)

    @property
    def indices(self):
        """The index of each stored row."""
        return _nd.from_tensor(self._sparse_now().indices()[0].detach().clone(), self._ctx)

    def retain(self, indices):
        return retain(self, indices)


_CLASSES = {'csr': CSRNDArray, 'row_sparse': RowSparseNDArray, 'default': NDArray}


class StorageTypeError(MXNetError, ValueError):
    """An unknown storage type, or a shape or set of parts that cannot make an array of the
    one asked for: a ValueError, as MXNet raises for these."""


# id(array) -> why the parts it was made from are not a valid array of its storage type
# (``check_format`` raises it); removed when the array goes.
_FORMAT_ERRORS = {}


def _remember_format_error(arr, err):
    if err is not None:
        key = id(arr)
        _FORMAT_ERRORS[key] = err
        weakref.finalize(arr, _FORMAT_ERRORS.pop, key, None)
    return arr


def _check_stype(stype, where):
    if stype not in _CLASSES:
        raise StorageTypeError("%s: unknown storage type %r (expected one of %s)"
                               % (where, stype, ', '.join(STYPES)))


def with_stype(arr, stype, where='tostype'):
    """``arr`` itself as an array of storage type ``stype`` (no copy): its class, and its
    storage's, change. For an array an operation just made."""
    _check_stype(stype, where)
    if stype == 'csr' and arr.ndim != 2:
        raise StorageTypeError("%s: a csr array is 2-d, got shape %s" % (where, arr.shape))
    arr.__class__ = _CLASSES[stype]
    if stype != 'default' and arr._var.__class__ is not _STORAGES[stype]:
        arr._var.__class__ = _STORAGES[stype]
    return arr


def _new(shape, dtype, ctx, stype, tensor=None):
    """A new array of storage type ``stype`` holding ``tensor`` (or to be written)."""
    var = Storage() if stype == 'default' else _STORAGES[stype]()
    out = _make(var, tuple(shape), dtype, ctx)
    out.__class__ = _CLASSES[stype]
    if tensor is not None:
        var.tensor = tensor
    return out


def _push_sparse(fn, inputs, shape, dtype, ctx, stype, name):
    """Pushes ``fn`` on the sparse (or dense) tensors of ``inputs``; its result, converted to
    ``stype``, is a new array of ``shape`` and ``dtype``."""
    out = _new(shape, dtype, ctx, stype)
    _engine.push(closure(fn, inputs, [out], stypes=True), [x._var for x in inputs], [out._var],
                 ctx, name)
    return out


def assign(target, src):
    """Pushes a copy of ``src`` into ``target`` (of any storage types): a sparse target's
    storage becomes the copy, converted to its storage type."""
    if target._sparse:
        dev, dt = target._ctx.torch_device, dtype_torch(target._dtype)
        fn = closure(lambda t: t.detach().to(dev, dt, copy=True), [src], [target], into=True,
                     stypes=True)
        _engine.push(fn, [src._var], [target._var], target._ctx, '_copyto')
        return target
    if src._sparse:
        src = cast_storage(src, 'default')
    NDArray.copyto(src, target)
    return target


def cast_storage(arr, stype):
    """A copy of ``arr`` of storage type ``stype`` (MXNet's ``tostype``)."""
    _check_stype(stype, 'tostype')
    if stype == 'csr' and arr.ndim != 2:
        raise StorageTypeError("tostype: a csr array is 2-d, got shape %s" % (arr.shape,))
    if stype == 'csr' and arr.stype == 'row_sparse':
        raise StorageTypeError("cast_storage from row_sparse to csr is not supported")
    return call(registry.get('cast_storage'), (arr,), {'stype': stype}, None, None, None)


def zeros_like(arr, **kwargs):
    """An array of zeros of ``arr``'s shape, dtype and storage type."""
    return _op('zeros_like')(arr, **kwargs)


def _from_numpy_stype(values, device_type, device_id, stype):
    from ..context import Context
    from .creation import array as dense_array
    out = dense_array(values, ctx=Context(device_type, device_id), dtype=values.dtype)
    return cast_storage(out, stype) if stype != 'default' else out


# -- operators on sparse arrays -----------------------------------------------------------

def call(op, inputs, attrs, out, ctx, where):
    """``invoke`` of operator ``op`` where an input (or ``out=``) is sparse: the storage types
    of the results follow MXNet's rules (``ops/sparse.py``); an operator with a sparse kernel
    runs on the sparse storage, the others on dense copies of the sparse inputs. While autograd
    records, the kernel runs on the dense forms, so gradients flow as through dense
    operators."""
    present = [x for x in inputs if x is not None]
    stypes = tuple(x.stype for x in present)
    rule = _rules.rule_of(op.name)
    out_stypes = rule(attrs, stypes) if rule is not None else None
    if mode.recording and any(getattr(x._var, 'leaves', None) for x in present):
        res = _nd.invoke_dense(op, inputs, attrs, None, ctx, where)
        res = _restype(res, out_stypes)
    elif out_stypes is None:
        dense_inputs = [x if x is None or not x._sparse else cast_storage(x, 'default')
                        for x in inputs]
        res = _nd.invoke_dense(op, dense_inputs, attrs, None, ctx, where)
        if op.mutate:       # sparse inputs the operator writes get the dense copies' values
            names = op.input_names(attrs, len(inputs), present_only=False)
            for n in op.mutated(attrs):
                i = names.index(n) if n in names else None
                if i is not None and inputs[i] is not None and inputs[i]._sparse:
                    assign(inputs[i], dense_inputs[i])
    else:
        res = _run_sparse(op, inputs, attrs, out_stypes, ctx, where)
    if out is None:
        return res
    targets = out if isinstance(out, (list, tuple)) else [out]
    results = res if isinstance(res, list) else [res]
    if len(targets) != len(results):
        raise MXNetError("%s: %d output(s) but out= has %d" % (op.name, len(results),
                                                               len(targets)))
    for t, r in zip(targets, results):
        if t._shape != r._shape:
            raise MXNetError("%s: out= has shape %s but the result has shape %s"
                             % (op.name, t._shape, r._shape))
        assign(t, r)
    return out


def _restype(res, out_stypes):
    if out_stypes is not None:
        for r, st in zip(res if isinstance(res, list) else [res], out_stypes):
            if st != 'default':
                with_stype(r, st, 'sparse operator')
    return res


def _run_sparse(op, inputs, attrs, out_stypes, ctx, where):
    present = [x for x in inputs if x is not None]
    ctx = _nd._check_ctx(op.name, present, where) or ctx
    shapes = tuple(None if x is None else x._shape for x in inputs)
    dtypes = tuple(None if x is None else x._dtype for x in inputs)
    try:
        out_shapes, out_dtypes = op.infer(attrs, shapes, dtypes)
    except ShapeError as e:
        raise _shape_error(op, e, attrs, shapes, dtypes, where) from None
    for s, st in zip(out_shapes, out_stypes):
        if st == 'csr' and len(s) != 2:
            raise MXNetError("%s: a csr result must be 2-d, got shape %s" % (op.name, s))
    outs = [_new(s, d, ctx, st) for s, d, st in zip(out_shapes, out_dtypes, out_stypes)]
    kernel = _rules.kernel_of(op.name)
    if kernel is None:      # a rule without a sparse kernel: computed densely, then converted
        kernel = _on_dense(op.kernel)
    kw = attrs
    if op.rng or op.train or op.creation:
        kw = dict(attrs, **op.kernel_kwargs(ctx.torch_device, mode.training, None))
    _engine.push(closure(kernel, inputs, outs, kw, stypes=True), [x._var for x in present],
                 [o._var for o in outs], ctx, op.name)
    return outs[0] if op.num_outputs(attrs) == 1 and len(outs) == 1 else outs


def _on_dense(kernel):
    """``kernel`` run on the dense forms of tensors of any storage type."""
    def run(*ts, **kw):
        return kernel(*[None if t is None else _rules.to_dense(t) for t in ts], **kw)
    return run


# -- creation ---------------------------------------------------------------------------------

def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An array of zeros of storage type ``stype`` (storing nothing)."""
    from .creation import _ctx, zeros as dense_zeros
    _check_stype(stype, 'sparse.zeros')
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(d) for d in shape)
    if stype == 'default':
        return dense_zeros(shape, ctx=ctx, dtype=dtype)
    if stype == 'csr' and len(shape) != 2:
        raise StorageTypeError("sparse.zeros: a csr array is 2-d, got shape %s" % (shape,))
    ctx = _ctx(ctx)
    name = dtype_name(dtype) if dtype is not None else 'float32'
    dev, dt = ctx.torch_device, dtype_torch(name)
    if stype == 'csr':
        t = _rules.csr_tensor(torch.zeros(shape[0] + 1, dtype=torch.int64, device=dev),
                              torch.zeros(0, dtype=torch.int64, device=dev),
                              torch.zeros(0, dtype=dt, device=dev), shape)
    else:
        t = _rules.rsp_tensor(torch.zeros(0, dtype=torch.int64, device=dev),
                              torch.zeros((0,) + shape[1:], dtype=dt, device=dev), shape)
    return _new(shape, name, ctx, stype, t)


def empty(stype, shape, ctx=None, dtype=None):
    """An array of storage type ``stype`` holding no values (all zeros)."""
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def _dense_dtype(source, dtype):
    """The dtype of an array made from ``source``: ``dtype`` when given, else that of an
    NDArray, NumPy array or scipy matrix, else float32 (MXNet's default for lists)."""
    if dtype is not None:
        return np.dtype(dtype_name(dtype))
    if isinstance(source, (NDArray, np.ndarray)) or hasattr(source, 'tocsr'):  # or scipy's
        return np.dtype(source.dtype)
    return np.dtype(np.float32)


def _np(x):
    return x.asnumpy() if isinstance(x, NDArray) else np.asarray(x)


def _is_shape(arg):
    return isinstance(arg, tuple) and all(isinstance(d, (int, np.integer))
                                          and not isinstance(d, bool) for d in arg)


def _check_shape(given, shape, where):
    if shape is not None and tuple(int(d) for d in given) != tuple(int(d) for d in shape):
        raise StorageTypeError("%s: shape mismatch detected, %s v.s. %s"
                               % (where, tuple(given), tuple(shape)))


def _host_array(values, ctx, stype):
    """A new array of storage type ``stype`` from the host tensor ``values`` (any layout)."""
    from .creation import _ctx
    ctx = _ctx(ctx)
    t = _rules.to_stype(values, stype).to(ctx.torch_device)
    return _new(tuple(values.shape), dtype_name(values.dtype), ctx, stype, t)


def _torch_dtype(dt):
    return dtype_torch(dtype_name(dt))


def _from_dense(source, shape, ctx, dtype, stype, where):
    if hasattr(source, 'tocsr') and hasattr(source, 'toarray'):        # scipy.sparse
        if stype == 'csr':
            m = source.tocsr()
            m.sum_duplicates()
            m.sort_indices()
            _check_shape(m.shape, shape, where)
            return _parts_csr(m.data.astype(_dense_dtype(source, dtype), copy=False),
                              m.indices, m.indptr, m.shape, ctx)
        dense = source.toarray()
    else:
        dense = _np(source)
    dense = dense.astype(_dense_dtype(source, dtype), copy=False)
    _check_shape(dense.shape, shape, where)
    if stype == 'csr' and dense.ndim != 2:
        raise StorageTypeError("%s: a csr array is 2-d, got shape %s" % (where, dense.shape))
    t = torch.from_numpy(np.ascontiguousarray(dense))
    return _host_array(t, ctx, stype)


def _parts_csr(data, indices, indptr, shape, ctx):
    from .creation import _ctx
    ctx = _ctx(ctx)
    dev = ctx.torch_device
    t = _rules.csr_tensor(torch.as_tensor(np.asarray(indptr, dtype=np.int64), device=dev),
                          torch.as_tensor(np.asarray(indices, dtype=np.int64), device=dev),
                          torch.as_tensor(np.ascontiguousarray(data), device=dev),
                          tuple(int(d) for d in shape))
    return _new(tuple(shape), dtype_name(data.dtype), ctx, 'csr', t)


def _csr_error(indices, indptr, shape, n_data):
    """Why ``(indices, indptr)`` are not a valid csr array of ``shape``, or None; and
    whether the values can still be placed (indptr and indices in range)."""
    rows, cols = shape
    if len(indptr) != rows + 1 or indptr[0] != 0 or np.any(np.diff(indptr) < 0) \
            or indptr[-1] != len(indices) or len(indices) != n_data:
        return ("indptr %s does not start at 0 and rise to the %d values of a csr array of "
                "%d rows" % (indptr.tolist(), len(indices), rows)), False
    if indices.size and (indices.min() < 0 or indices.max() >= cols):
        return ("the column indices of a csr array must lie in [0, %d), got %s"
                % (cols, indices.tolist())), False
    row_of = np.repeat(np.arange(rows), np.diff(indptr))
    same_row = row_of[1:] == row_of[:-1]
    if np.any(same_row & (indices[1:] <= indices[:-1])):
        return ("the column indices of each row of a csr array must be in ascending order, "
                "got %s for indptr %s" % (indices.tolist(), indptr.tolist())), True
    return None, True


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A ``CSRNDArray`` from ``(data, indices, indptr)``, ``(data, (row, col))`` (coordinate
    form: repeated positions add up), a dense array (NDArray, NumPy or nested lists), a
    scipy sparse matrix, a sparse NDArray, or ``(rows, cols)`` for zeros. The dtype is
    ``dtype``, else the data's (float32 for lists); the shape is ``shape``, else inferred from
    the indices (a ValueError where there are none). Valid parts are stored as they are,
    without a dense copy.

    >>> import neomx as mx
    >>> a = mx.nd.sparse.csr_matrix(([1.0, 2.0], [2, 0], [0, 1, 2]))
    >>> a.shape, a.asnumpy().tolist()
    ((2, 3), [[0.0, 0.0, 1.0], [2.0, 0.0, 0.0]])
    """
    where = 'csr_matrix'
    if isinstance(arg1, tuple):
        if len(arg1) == 2 and _is_shape(arg1):
            _check_shape(arg1, shape, where)
            return zeros('csr', arg1, ctx=ctx, dtype=dtype)
        if len(arg1) == 2 and isinstance(arg1[1], (tuple, list)) and len(arg1[1]) == 2:
            data, (row, col) = _np(arg1[0]), (_np(a).astype(np.int64) for a in arg1[1])
            if shape is None:
                if not row.size:
                    raise StorageTypeError("csr_matrix: invalid shape, cannot infer it from "
                                           "no coordinates")
                shape = (int(row.max()) + 1, int(col.max()) + 1)
            shape = tuple(int(d) for d in shape)
            if row.size and (min(row.min(), col.min()) < 0 or row.max() >= shape[0]
                             or col.max() >= shape[1]):
                raise StorageTypeError("csr_matrix: coordinates out of range for shape %s"
                                       % (shape,))
            vals = torch.from_numpy(np.ascontiguousarray(
                data.reshape(-1).astype(_dense_dtype(arg1[0], dtype), copy=False)))
            coo = torch.sparse_coo_tensor(torch.from_numpy(np.stack([row, col])), vals, shape,
                                          check_invariants=False).coalesce()
            return _host_array(coo, ctx, 'csr')
        if len(arg1) != 3:
            raise StorageTypeError("csr_matrix: expected (data, indices, indptr), (data, (row, "
                                   "col)) or a shape, got a tuple of %d" % len(arg1))
        data, indices, indptr = (_np(a) for a in arg1)
        indices, indptr = indices.astype(np.int64).reshape(-1), indptr.astype(np.int64)
        data = data.reshape(-1).astype(_dense_dtype(arg1[0], dtype), copy=False)
        rows = len(indptr) - 1
        if shape is None:
            if not indices.size:
                raise StorageTypeError("csr_matrix: invalid shape, cannot infer the number of "
                                       "columns from no indices (give shape=)")
            shape = (rows, int(indices.max()) + 1)
        shape = tuple(int(d) for d in shape)
        if len(shape) != 2:
            raise StorageTypeError("csr_matrix: a csr array is 2-d, got shape %s" % (shape,))
        err, placeable = _csr_error(indices, indptr, shape, data.shape[0])
        if err is None:
            return _parts_csr(data, indices, indptr, shape, ctx)
        # invalid parts: the values that have a place, for check_format to report the rest
        dense = np.zeros(shape, dtype=data.dtype)
        if placeable:
            row_of = np.repeat(np.arange(shape[0]), np.diff(indptr))
            np.add.at(dense, (row_of, indices), data)
        out = _host_array(torch.from_numpy(dense), ctx, 'csr')
        return _remember_format_error(out, err)
    if isinstance(arg1, BaseSparseNDArray) and shape is None:
        return array(arg1, ctx=ctx, dtype=dtype).tostype('csr')
    return _from_dense(arg1, shape, ctx, dtype, 'csr', where)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A ``RowSparseNDArray`` from ``(data, indices)`` (the stored rows and their row
    indices), a dense array, a sparse NDArray, or a shape tuple for zeros. The dtype is
    ``dtype``, else the data's (float32 for lists); the shape is ``shape``, else the data's
    with as many rows as the largest index needs.

    >>> import neomx as mx
    >>> r = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [2]))
    >>> r.shape, r.indices.asnumpy().tolist()
    ((3, 2), [2])
    """
    where = 'row_sparse_array'
    if _is_shape(arg1):
        _check_shape(arg1, shape, where)
        return zeros('row_sparse', arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, tuple):
        if len(arg1) != 2:
            raise StorageTypeError("row_sparse_array: expected (data, indices) or a shape, got "
                                   "a tuple of %d" % len(arg1))
        data, indices = _np(arg1[0]), _np(arg1[1]).astype(np.int64).reshape(-1)
        data = data.astype(_dense_dtype(arg1[0], dtype), copy=False)
        if shape is None:
            if not indices.size:
                raise StorageTypeError("row_sparse_array: invalid shape, cannot infer the "
                                       "number of rows from no indices (give shape=)")
            shape = (int(indices.max()) + 1,) + data.shape[1:]
        shape = tuple(int(d) for d in shape)
        if data.shape[0] != indices.shape[0] or tuple(data.shape[1:]) != shape[1:]:
            raise StorageTypeError("row_sparse_array: data of shape %s and %d indices do not "
                                   "fit shape %s" % (data.shape, indices.shape[0], shape))
        err = None
        if indices.size and (indices.min() < 0 or indices.max() >= shape[0]):
            err = ("the row indices of a row_sparse array must lie in [0, %d), got %s"
                   % (shape[0], indices.tolist()))
            t = torch.zeros(shape, dtype=_torch_dtype(data.dtype))
        elif np.any(indices[1:] <= indices[:-1]):
            err = ("the row indices of a row_sparse array must be in ascending order, "
                   "got %s" % (indices.tolist(),))
            dense = np.zeros(shape, dtype=data.dtype)
            dense[indices] = data
            t = torch.from_numpy(dense)
        else:   # valid: stored as given
            t = _rules.rsp_tensor(torch.from_numpy(indices),
                                  torch.from_numpy(np.ascontiguousarray(data)), shape)
        return _remember_format_error(_host_array(t, ctx, 'row_sparse'), err)
    if isinstance(arg1, BaseSparseNDArray) and shape is None:
        return array(arg1, ctx=ctx, dtype=dtype).tostype('row_sparse')
    return _from_dense(arg1, shape, ctx, dtype, 'row_sparse', where)


def array(source_array, ctx=None, dtype=None):
    """A sparse array from a sparse NDArray (a copy) or a scipy sparse matrix (csr)."""
    if isinstance(source_array, BaseSparseNDArray):
        out = source_array.copyto(ctx) if ctx is not None else \
            cast_storage(source_array, source_array.stype)
        return out if dtype is None else out.astype(dtype)
    if hasattr(source_array, 'tocsr'):
        return csr_matrix(source_array.tocsr(), ctx=ctx, dtype=dtype)
    raise MXNetError("sparse.array: expected a sparse NDArray or a scipy sparse matrix, got %s"
                     % type(source_array).__name__)


def retain(data, indices=None, **kwargs):
    """A row_sparse array keeping the rows of ``data`` listed in ``indices`` (the others 0).

    >>> import neomx as mx
    >>> x = mx.nd.ones((3, 1)).tostype('row_sparse')
    >>> mx.nd.sparse.retain(x, mx.nd.array([0, 2])).asnumpy().reshape(-1).tolist()
    [1.0, 0.0, 1.0]
    """
    if kwargs or indices is None:
        raise MXNetError("sparse.retain: expects data and indices%s"
                         % ('' if not kwargs else ', got the unknown arguments %s'
                            % sorted(kwargs)))
    if getattr(data, 'stype', None) != 'row_sparse':
        raise MXNetError("sparse.retain: data must be a row_sparse array, got storage type %r"
                         % (getattr(data, 'stype', type(data).__name__),))
    return invoke(registry.get('_sparse_retain'), (data, indices), {})


def add(lhs, rhs):
    """``lhs + rhs``: of the sparse type both share (elemwise_add for one shape)."""
    return lhs + rhs if isinstance(lhs, NDArray) else rhs.__radd__(lhs)


def subtract(lhs, rhs):
    """``lhs - rhs``: of the sparse type both share (elemwise_sub for one shape)."""
    if isinstance(lhs, NDArray):
        return lhs - rhs
    return _nd._binary(rhs, lhs, None, '_rminus_scalar')


def multiply(lhs, rhs):
    """``lhs * rhs``: sparse for a sparse ``lhs`` times a number, a dense array or one of its
    storage type, and for a number times a sparse array (as MXNet 1.9.1 gives them)."""
    return lhs * rhs if isinstance(lhs, NDArray) else rhs.__rmul__(lhs)


def divide(lhs, rhs):
    """``lhs / rhs``: sparse for a sparse ``lhs`` and a number."""
    if isinstance(lhs, NDArray):
        return lhs / rhs
    return _nd._binary(rhs, lhs, None, '_rdiv_scalar')


def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    """The matrix product; ``forward_stype`` names the storage type of the result, else
    MXNet's rule gives it (csr^T times dense: row_sparse; dense times csr: csr; else dense).

    >>> import neomx as mx
    >>> a = mx.nd.array([[0, 1], [2, 0]]).tostype('csr')
    >>> y = mx.nd.sparse.dot(a, mx.nd.ones((2, 3)), transpose_a=True)
    >>> y.stype, y.indices.asnumpy().tolist()
    ('row_sparse', [0, 1])
    """
    attrs = {'transpose_a': transpose_a, 'transpose_b': transpose_b,
             'forward_stype': forward_stype}
    return call(registry.get('dot'), (lhs, rhs), registry.get('dot').parse_attrs(attrs),
                None, None, None)


def dense_or_sparse_dot(generated):
    """``nd.dot``: the generated function, or ``dot`` above where ``forward_stype`` asks for
    a sparse result of dense arrays (the sparse inputs' cases reach nd.sparse anyway)."""
    op = generated.op
    parsed = {}     # (transpose_a, transpose_b, forward_stype) -> the parsed attributes

    def dot_(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None, out=None,
             name=None):
        if forward_stype not in (None, 'None', 'default') and out is None:
            return dot(lhs, rhs, transpose_a, transpose_b, forward_stype)
        if out is None and lhs.__class__ is NDArray and rhs.__class__ is NDArray:
            # straight to the fast path, which the generated function's call by name would
            # reach after parsing the names (nd.dot is a third of the book's RNN operations)
            key = (transpose_a, transpose_b, forward_stype)
            try:
                attrs = parsed.get(key)
            except TypeError:       # an unhashable value: the generated function's error
                return generated(lhs, rhs, transpose_a=transpose_a, transpose_b=transpose_b,
                                 forward_stype=forward_stype)
            if attrs is None:
                if len(parsed) >= 64:
                    parsed.clear()
                attrs = parsed[key] = op.parse_attrs(
                    {'transpose_a': transpose_a, 'transpose_b': transpose_b,
                     'forward_stype': forward_stype})
            r = _nd._fast_call(op, lhs, rhs, None, attrs)
            if r is not None:
                return r
        return generated(lhs, rhs, transpose_a=transpose_a, transpose_b=transpose_b,
                         forward_stype=forward_stype, out=out)
    dot_.__name__ = 'dot'
    dot_.__doc__ = generated.__doc__
    dot_.op = generated.op
    return dot_


def __getattr__(name):
    # Every operator takes sparse arrays: nd.sparse.<op> is nd.<op>.
    if name.startswith('__'):
        raise AttributeError(name)
    from . import _ndarray_mod
    f = _ndarray_mod._OP_FUNCS.get(name)
    if f is None or name.startswith('_'):
        raise AttributeError("module 'neomx.ndarray.sparse' has no attribute %r" % (name,))
    return f


_nd.sparse_call = call
