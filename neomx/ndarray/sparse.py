"""``mx.nd.sparse``: MXNet's sparse storage types, ``csr`` and ``row_sparse``, kept dense.

neomx stores every array densely. A ``CSRNDArray`` or ``RowSparseNDArray`` is an NDArray whose
values live in dense storage and whose storage type (``stype``) says how MXNet would have
stored it: code that builds sparse arrays, checks ``stype``, reads ``data``/``indices``/
``indptr`` or attaches a sparse gradient runs and computes the same values as on MXNet, without
MXNet's savings in memory. Operators take sparse arrays like any others and return dense
(``'default'``) results, as MXNet's storage fallback does; ``tostype`` converts. The
operations MXNet has sparse rules for keep the storage type: ``retain``, copies and casts,
``+``/``-``/``*`` of two arrays of one sparse type, ``*`` and ``/`` by a number, a sparse array
times a dense one.
The stored entries are the non-zero ones (an entry MXNet stores with the value 0 is not
stored here); optimizers update only the stored rows of a row_sparse gradient
(``lazy_update``), and ``KVStore.row_sparse_pull`` pulls only the rows asked for.

>>> import neomx as mx
>>> a = mx.nd.array([[0, 1, 0], [2, 0, 3]]).tostype('csr')
>>> a.stype, a.indptr.asnumpy().tolist(), a.indices.asnumpy().tolist()
('csr', [0, 1, 3], [1, 0, 2])
>>> a.data.asnumpy().tolist()
[1.0, 2.0, 3.0]
"""
import numpy as np

from ..base import MXNetError, dtype_name
from ..ops import registry
from .ndarray import NDArray, _op, invoke, user_line

__all__ = ['BaseSparseNDArray', 'CSRNDArray', 'RowSparseNDArray', 'csr_matrix',
           'row_sparse_array', 'zeros', 'empty', 'array', 'retain', 'add', 'subtract',
           'multiply', 'divide', 'dot']

STYPES = ('default', 'row_sparse', 'csr')


class BaseSparseNDArray(NDArray):
    """An array of a sparse storage type (see the module docstring)."""
    __slots__ = ()
    _result_class = NDArray     # what operators on it return: dense arrays

    def __repr__(self):
        return '\n<%s %s @%s>' % (type(self).__name__, 'x'.join('%d' % d for d in self._shape),
                                  self._ctx)

    __str__ = __repr__

    def copyto(self, other):
        out = super().copyto(other)
        if not isinstance(other, NDArray):
            out.__class__ = type(self)
        return out

    def check_format(self, full_check=True):
        """Always valid: the values are stored densely."""

    def astype(self, dtype, copy=True):
        if not copy and dtype_name(dtype) == self._dtype:
            return self
        return with_stype(NDArray.astype(self, dtype), self.stype)

    # -- the operations with a sparse rule keep the storage type --
    def __add__(self, other):
        return add(self, other)

    def __sub__(self, other):
        return subtract(self, other)

    def __mul__(self, other):
        return multiply(self, other)

    def __rmul__(self, other):
        return multiply(other, self)

    def __truediv__(self, other):
        return divide(self, other)

    __div__ = __truediv__

    def __neg__(self):
        return with_stype(NDArray.__neg__(self), self.stype)

    def _values(self):
        return self.asnumpy()


class CSRNDArray(BaseSparseNDArray):
    """A 2-d array of storage type ``csr`` (compressed sparse rows)."""
    __slots__ = ()

    @property
    def stype(self):
        return 'csr'

    def _parts(self):
        v = self._values()
        rows, cols = np.nonzero(v)
        indptr = np.zeros(v.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=v.shape[0]), out=indptr[1:])
        return v[rows, cols], cols.astype(np.int64), indptr

    @property
    def data(self):
        """The stored (non-zero) values, row by row."""
        return _small(self._parts()[0], self)

    @property
    def indices(self):
        """The column index of each stored value."""
        return _small(self._parts()[1], self)

    @property
    def indptr(self):
        """Where each row's values start in ``data`` (and, last, their count)."""
        return _small(self._parts()[2], self)

    def __getitem__(self, key):
        # Rows of a csr matrix are a csr matrix, as MXNet slices them (split_and_load).
        out = NDArray.__getitem__(self, key)
        if isinstance(key, slice) and out.ndim == 2:
            return with_stype(out, 'csr')
        return out

    def asscipy(self):
        import scipy.sparse as spsp
        data, indices, indptr = self._parts()
        return spsp.csr_matrix((data, indices, indptr), shape=self._shape)


class RowSparseNDArray(BaseSparseNDArray):
    """An array of storage type ``row_sparse``: only the rows holding non-zeros are stored."""
    __slots__ = ()

    @property
    def stype(self):
        return 'row_sparse'

    def _rows(self):
        v = self._values()
        flat = v.reshape(v.shape[0], -1) if v.ndim else v.reshape(1, -1)
        return v, np.nonzero(np.any(flat != 0, axis=1))[0].astype(np.int64)

    @property
    def data(self):
        """The stored rows."""
        v, rows = self._rows()
        return _small(v[rows], self)

    @property
    def indices(self):
        """The index of each stored row."""
        return _small(self._rows()[1], self)

    def retain(self, indices):
        return retain(self, indices)


_CLASSES = {'csr': CSRNDArray, 'row_sparse': RowSparseNDArray, 'default': NDArray}


def _small(values, like):
    from .creation import array
    return array(values, ctx=like._ctx, dtype=values.dtype)


def _check_stype(stype, where):
    if stype not in _CLASSES:
        raise MXNetError("%s: unknown storage type %r (expected one of %s)"
                         % (where, stype, ', '.join(STYPES)))


def with_stype(arr, stype, where='tostype'):
    """``arr`` itself as an array of storage type ``stype`` (a class change, no copy)."""
    _check_stype(stype, where)
    if stype == 'csr' and arr.ndim != 2:
        raise MXNetError("%s: a csr array is 2-d, got shape %s" % (where, arr.shape))
    arr.__class__ = _CLASSES[stype]
    return arr


def cast_storage(arr, stype):
    """A copy of ``arr`` of storage type ``stype`` (MXNet's ``tostype``)."""
    _check_stype(stype, 'tostype')
    return with_stype(_op('_copy')(arr), stype)


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An array of zeros of storage type ``stype``."""
    from .creation import zeros as dense_zeros
    return with_stype(dense_zeros(shape, ctx=ctx, dtype=dtype), stype, 'sparse.zeros')


def empty(stype, shape, ctx=None, dtype=None):
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def _dense_dtype(values, dtype):
    if dtype is not None:
        return dtype
    return values.dtype if isinstance(values, np.ndarray) and values.dtype.kind == 'f' \
        else np.float32


def _np(x):
    return x.asnumpy() if isinstance(x, NDArray) else np.asarray(x)


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A ``CSRNDArray`` from ``(data, indices, indptr)``, a dense array (NDArray, numpy or
    nested lists), a scipy sparse matrix, or ``(rows, cols)`` for zeros."""
    from .creation import array as dense_array
    if isinstance(arg1, tuple) and len(arg1) == 2 and all(isinstance(d, (int, np.integer))
                                                         for d in arg1):
        return zeros('csr', arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, tuple) and len(arg1) == 3:
        data, indices, indptr = (_np(a) for a in arg1)
        indices, indptr = indices.astype(np.int64), indptr.astype(np.int64)
        rows = len(indptr) - 1
        if shape is None:
            shape = (rows, int(indices.max()) + 1 if indices.size else 0)
        if len(shape) != 2 or shape[0] != rows:
            raise MXNetError("csr_matrix: indptr of length %d does not fit shape %s"
                             % (len(indptr), shape))
        if indices.size and (indices.min() < 0 or indices.max() >= shape[1]):
            raise MXNetError("csr_matrix: column indices must lie in [0, %d), got %s"
                             % (shape[1], indices.tolist()))
        dense = np.zeros(shape, dtype=_dense_dtype(data, dtype))
        row_of = np.repeat(np.arange(rows), np.diff(indptr))
        np.add.at(dense, (row_of, indices), data)
        return with_stype(dense_array(dense, ctx=ctx, dtype=dense.dtype), 'csr', 'csr_matrix')
    if hasattr(arg1, 'tocsr') and hasattr(arg1, 'toarray'):      # scipy.sparse
        dense = arg1.toarray()
    else:
        dense = _np(arg1)
    dense = dense.astype(_dense_dtype(dense, dtype))
    return with_stype(dense_array(dense, ctx=ctx, dtype=dense.dtype), 'csr', 'csr_matrix')


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A ``RowSparseNDArray`` from ``(data, indices)`` (the stored rows and their row
    indices), a dense array, or a shape tuple for zeros."""
    from .creation import array as dense_array
    if isinstance(arg1, tuple) and all(isinstance(d, (int, np.integer)) for d in arg1):
        return zeros('row_sparse', arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, tuple) and len(arg1) == 2:
        data, indices = _np(arg1[0]), _np(arg1[1]).astype(np.int64)
        if shape is None:
            shape = (int(indices.max()) + 1 if indices.size else 0,) + data.shape[1:]
        if data.shape[0] != indices.shape[0] or tuple(data.shape[1:]) != tuple(shape[1:]):
            raise MXNetError("row_sparse_array: data of shape %s and %d indices do not fit "
                             "shape %s" % (data.shape, indices.shape[0], tuple(shape)))
        dense = np.zeros(shape, dtype=_dense_dtype(data, dtype))
        dense[indices] = data
        return with_stype(dense_array(dense, ctx=ctx, dtype=dense.dtype), 'row_sparse',
                          'row_sparse_array')
    dense = _np(arg1)
    dense = dense.astype(_dense_dtype(dense, dtype))
    return with_stype(dense_array(dense, ctx=ctx, dtype=dense.dtype), 'row_sparse',
                      'row_sparse_array')


def array(source_array, ctx=None, dtype=None):
    """A sparse array from a sparse NDArray (a copy) or a scipy sparse matrix (csr)."""
    if isinstance(source_array, BaseSparseNDArray):
        out = cast_storage(source_array, source_array.stype)
        out = out.as_in_context(ctx) if ctx is not None else out
        return out if dtype is None else with_stype(out.astype(dtype), source_array.stype)
    if hasattr(source_array, 'tocsr'):
        return csr_matrix(source_array.tocsr(), ctx=ctx, dtype=dtype)
    raise MXNetError("sparse.array: expected a sparse NDArray or a scipy sparse matrix, got %s"
                     % type(source_array).__name__)


def retain(data, indices):
    """A row_sparse array keeping the rows of ``data`` listed in ``indices`` (the others 0).

    >>> import neomx as mx
    >>> x = mx.nd.ones((3, 1)).tostype('row_sparse')
    >>> mx.nd.sparse.retain(x, mx.nd.array([0, 2])).asnumpy().reshape(-1).tolist()
    [1.0, 0.0, 1.0]
    """
    if getattr(data, 'stype', None) != 'row_sparse':
        raise MXNetError("sparse.retain: data must be a row_sparse array, got storage type %r"
                         % (getattr(data, 'stype', type(data).__name__),))
    out = invoke(registry.get('_sparse_retain'), (data, indices), {}, where=user_line())
    return with_stype(out, 'row_sparse', 'retain')


def _stype_of(x):
    return x.stype if isinstance(x, NDArray) else 'number'


def _binary(name, lhs, rhs, keep):
    """``lhs (name) rhs`` on the dense values; of the sparse type ``keep(lhs stype, rhs
    stype)`` names (None: dense), as MXNet's sparse rules give it."""
    from . import creation
    out = getattr(creation, name)(lhs, rhs)
    st = keep(_stype_of(lhs), _stype_of(rhs))
    like = lhs if isinstance(lhs, NDArray) else rhs
    return with_stype(out, st, name) if st and out.shape == like.shape else out


def add(lhs, rhs):
    """``lhs + rhs``: sparse when both are of the same sparse storage type."""
    return _binary('add', lhs, rhs, lambda a, b: a if a == b and a in _SPARSE else None)


def subtract(lhs, rhs):
    """``lhs - rhs``: sparse when both are of the same sparse storage type."""
    return _binary('subtract', lhs, rhs, lambda a, b: a if a == b and a in _SPARSE else None)


def multiply(lhs, rhs):
    """``lhs * rhs``: sparse for a sparse ``lhs`` times a number, a dense array or one of its
    storage type, and for a number times a sparse array (as MXNet 1.9.1 gives them)."""
    def keep(a, b):
        if a in _SPARSE:
            return a if b in ('number', 'default', a) else None
        return b if b in _SPARSE and a == 'number' else None
    return _binary('multiply', lhs, rhs, keep)


def divide(lhs, rhs):
    """``lhs / rhs``: sparse for a sparse ``lhs`` and a number."""
    return _binary('divide', lhs, rhs, lambda a, b: a if a in _SPARSE and b == 'number' else None)


_SPARSE = ('row_sparse', 'csr')


def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    """The matrix product of the values; ``forward_stype`` names the storage type of the
    result (dense by default)."""
    out = _op('dot')(lhs, rhs, transpose_a=transpose_a, transpose_b=transpose_b)
    return with_stype(out, forward_stype, 'dot') if forward_stype not in (None, 'default') \
        else out


def __getattr__(name):
    # Every operator takes sparse arrays (their values are dense): nd.sparse.<op> is nd.<op>.
    if name.startswith('__'):
        raise AttributeError(name)
    from . import _ndarray_mod
    f = _ndarray_mod._OP_FUNCS.get(name)
    if f is None or name.startswith('_'):
        raise AttributeError("module 'neomx.ndarray.sparse' has no attribute %r" % (name,))
    return f
