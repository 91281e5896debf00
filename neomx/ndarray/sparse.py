"""``mx.nd.sparse``: MXNet's sparse storage types, ``csr`` and ``row_sparse``, kept dense.

neomx stores every array densely. A ``CSRNDArray`` or ``RowSparseNDArray`` is an NDArray whose
values live in dense storage and whose storage type (``stype``) says how MXNet would have
stored it: code that builds sparse arrays, checks ``stype``, reads ``data``/``indices``/
``indptr`` or attaches a sparse gradient runs and computes the same values as on MXNet, without
MXNet's savings in memory. Operators take sparse arrays like any others and return dense
(``'default'``) results, as MXNet's storage fallback does; ``tostype`` converts. The
operations MXNet has sparse rules for keep the storage type: ``retain``, copies and casts,
``+``/``-``/``*`` of two arrays of one sparse type, ``*`` and ``/`` by a number, a sparse array
times a dense one, comparisons with a number that 0 fails (``x > 0``, ``x == 1``), ``take`` of
csr rows. Arrays made from parts (``csr_matrix((data, indices, indptr))``) remember whether
the parts were a valid array of their type, for ``check_format``.
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
import weakref

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
        """Raises MXNetError when the parts this array was made from (``csr_matrix((data,
        indices, indptr))``, ``row_sparse_array((data, indices))``) are not a valid array of
        its storage type: indices out of range, out of order or negative, an indptr that
        decreases or does not end at the number of values. As MXNet's, the check of the
        indices themselves runs only with ``full_check``. (Values whose place such parts do
        not give are left out: zeros, where MXNet's reading them is undefined.) Arrays made
        any other way hold their values densely and are always valid."""
        err = _FORMAT_ERRORS.get(id(self))
        if err is not None and full_check:
            raise MXNetError("check_format: %s" % err)

    @property
    def _num_aux(self):
        return len(self._aux_types)

    # -- comparisons with a number keep the storage type where 0 (op) number is false, so the
    # result is zero wherever the array is (MXNet's sparse rule for them) --
    def __eq__(self, other):
        return _compare(self, other, NDArray.__eq__, lambda a, b: a == b)

    def __ne__(self, other):
        return _compare(self, other, NDArray.__ne__, lambda a, b: a != b)

    def __gt__(self, other):
        return _compare(self, other, NDArray.__gt__, lambda a, b: a > b)

    def __ge__(self, other):
        return _compare(self, other, NDArray.__ge__, lambda a, b: a >= b)

    def __lt__(self, other):
        return _compare(self, other, NDArray.__lt__, lambda a, b: a < b)

    def __le__(self, other):
        return _compare(self, other, NDArray.__le__, lambda a, b: a <= b)

    __hash__ = NDArray.__hash__

    def __reduce__(self):
        return (_from_numpy_stype, (self.asnumpy(), str(self._ctx.device_type),
                                    self._ctx.device_id, self.stype))

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
    _aux_types = (np.int64, np.int64)       # indptr, indices

    @staticmethod
    def _keeps(name, attrs):
        # take of whole rows (axis 0) keeps csr in MXNet; mode 'raise' falls back to dense
        return name == 'take' and attrs is not None and attrs.get('axis', 0) == 0 \
            and attrs.get('mode', 'clip') != 'raise'

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
        # Rows of a csr matrix are a csr matrix, as MXNet slices them (split_and_load); one
        # row is a 1-row matrix.
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            n = self._shape[0]
            if not -n <= key < n:
                raise IndexError("CSRNDArray: row %d out of range for shape %s"
                                 % (key, self._shape))
            key = int(key) % n
            key = slice(key, key + 1)
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
    _aux_types = (np.int64,)                # indices

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


def _small(values, like):
    from .creation import array
    return array(values, ctx=like._ctx, dtype=values.dtype)


def _check_stype(stype, where):
    if stype not in _CLASSES:
        raise StorageTypeError("%s: unknown storage type %r (expected one of %s)"
                               % (where, stype, ', '.join(STYPES)))


def with_stype(arr, stype, where='tostype'):
    """``arr`` itself as an array of storage type ``stype`` (a class change, no copy)."""
    _check_stype(stype, where)
    if stype == 'csr' and arr.ndim != 2:
        raise StorageTypeError("%s: a csr array is 2-d, got shape %s" % (where, arr.shape))
    arr.__class__ = _CLASSES[stype]
    return arr


def cast_storage(arr, stype):
    """A copy of ``arr`` of storage type ``stype`` (MXNet's ``tostype``)."""
    _check_stype(stype, 'tostype')
    return with_stype(_op('_copy')(arr), stype)


def _from_numpy_stype(values, device_type, device_id, stype):
    from ..context import Context
    from .creation import array as dense_array
    out = dense_array(values, ctx=Context(device_type, device_id), dtype=values.dtype)
    return with_stype(out, stype, 'unpickling')


def _compare(arr, other, dense_op, holds):
    out = dense_op(arr, other)
    if isinstance(out, NDArray) and isinstance(other, (int, float, np.number)) \
            and not isinstance(other, bool) and not holds(0, other):
        with_stype(out, arr.stype, 'comparison')
    return out


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An array of zeros of storage type ``stype``."""
    from .creation import zeros as dense_zeros
    _check_stype(stype, 'sparse.zeros')
    return with_stype(dense_zeros(shape, ctx=ctx, dtype=dtype), stype, 'sparse.zeros')


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


def _from_dense(source, shape, ctx, dtype, stype, where):
    from .creation import array as dense_array
    if hasattr(source, 'tocsr') and hasattr(source, 'toarray'):        # scipy.sparse
        dense = source.toarray()
    else:
        dense = _np(source)
    dense = dense.astype(_dense_dtype(source, dtype), copy=False)
    _check_shape(dense.shape, shape, where)
    return with_stype(dense_array(dense, ctx=ctx, dtype=dense.dtype), stype, where)


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
    the indices (a ValueError where there are none).

    >>> import neomx as mx
    >>> a = mx.nd.sparse.csr_matrix(([1.0, 2.0], [2, 0], [0, 1, 2]))
    >>> a.shape, a.asnumpy().tolist()
    ((2, 3), [[0.0, 0.0, 1.0], [2.0, 0.0, 0.0]])
    """
    from .creation import array as dense_array
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
            dense = np.zeros(shape, dtype=_dense_dtype(arg1[0], dtype))
            np.add.at(dense, (row, col), data)
            return with_stype(dense_array(dense, ctx=ctx, dtype=dense.dtype), 'csr', where)
        if len(arg1) != 3:
            raise StorageTypeError("csr_matrix: expected (data, indices, indptr), (data, (row, "
                                   "col)) or a shape, got a tuple of %d" % len(arg1))
        data, indices, indptr = (_np(a) for a in arg1)
        indices, indptr = indices.astype(np.int64).reshape(-1), indptr.astype(np.int64)
        rows = len(indptr) - 1
        if shape is None:
            if not indices.size:
                raise StorageTypeError("csr_matrix: invalid shape, cannot infer the number of "
                                       "columns from no indices (give shape=)")
            shape = (rows, int(indices.max()) + 1)
        shape = tuple(int(d) for d in shape)
        if len(shape) != 2:
            raise StorageTypeError("csr_matrix: a csr array is 2-d, got shape %s" % (shape,))
        dense = np.zeros(shape, dtype=_dense_dtype(arg1[0], dtype))
        err, placeable = _csr_error(indices, indptr, shape, data.reshape(-1).shape[0])
        if placeable:
            row_of = np.repeat(np.arange(shape[0]), np.diff(indptr))
            np.add.at(dense, (row_of, indices), data.reshape(-1))
        out = with_stype(dense_array(dense, ctx=ctx, dtype=dense.dtype), 'csr', where)
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
    from .creation import array as dense_array
    where = 'row_sparse_array'
    if _is_shape(arg1):
        _check_shape(arg1, shape, where)
        return zeros('row_sparse', arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, tuple):
        if len(arg1) != 2:
            raise StorageTypeError("row_sparse_array: expected (data, indices) or a shape, got "
                                   "a tuple of %d" % len(arg1))
        data, indices = _np(arg1[0]), _np(arg1[1]).astype(np.int64).reshape(-1)
        if shape is None:
            if not indices.size:
                raise StorageTypeError("row_sparse_array: invalid shape, cannot infer the "
                                       "number of rows from no indices (give shape=)")
            shape = (int(indices.max()) + 1,) + data.shape[1:]
        shape = tuple(int(d) for d in shape)
        if data.shape[0] != indices.shape[0] or tuple(data.shape[1:]) != shape[1:]:
            raise StorageTypeError("row_sparse_array: data of shape %s and %d indices do not "
                                   "fit shape %s" % (data.shape, indices.shape[0], shape))
        dense = np.zeros(shape, dtype=_dense_dtype(arg1[0], dtype))
        err = None
        if indices.size and (indices.min() < 0 or indices.max() >= shape[0]):
            err = ("the row indices of a row_sparse array must lie in [0, %d), got %s"
                   % (shape[0], indices.tolist()))
        else:
            dense[indices] = data
            if np.any(indices[1:] <= indices[:-1]):
                err = ("the row indices of a row_sparse array must be in ascending order, "
                       "got %s" % (indices.tolist(),))
        out = with_stype(dense_array(dense, ctx=ctx, dtype=dense.dtype), 'row_sparse', where)
        return _remember_format_error(out, err)
    if isinstance(arg1, BaseSparseNDArray) and shape is None:
        return array(arg1, ctx=ctx, dtype=dtype).tostype('row_sparse')
    return _from_dense(arg1, shape, ctx, dtype, 'row_sparse', where)


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
