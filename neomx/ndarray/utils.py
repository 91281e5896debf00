"""``nd.save`` / ``nd.load``: MXNet's binary NDArray file format, bit for bit.

File (little-endian)::

    u64 0x112 | u64 0 | u64 N | N x record | u64 K | K x (u64 len, bytes)   # K names, 0 for a list
    record: u32 0xF993FAC9 | i32 stype (0 dense) | i32 ndim, ndim x i64 dims
            | i32 dev_type (1 cpu, 2 gpu) | i32 dev_id | i32 type_flag | raw data

Readers also take V1 records (0xF993FAC8, no stype), V3 records (0xF993FACA) and the legacy
layout without a magic number. Writes go to a temporary file renamed into place, so a crash
never leaves a half-written file. Reads check every field, and that the records and names
end exactly at the end of the file: a file that does not read so is an error naming the file,
the record and the offset of the field at fault (the format has no checksum: a flipped bit in
the values or the names, or a dtype flag turned into another of the same width, still loads).

>>> import neomx as mx, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), 'x.nd')
>>> mx.nd.save(path, {'w': mx.nd.ones((2, 2))})
>>> mx.nd.load(path)['w'].shape
(2, 2)
"""
import os
import struct

import numpy as np
import torch

from .. import atomic
from ..base import MXNetError, dtype_flag, dtype_name
from ..context import Context, cpu, num_gpus
from ..util import is_np_shape
from .ndarray import NDArray

__all__ = ['save', 'load', 'load_frombuffer', 'dumps', 'loads']

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
_NP_OF_FLAG = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32,
               5: np.int8, 6: np.int64, 7: np.bool_, 8: np.int16}
_BF16 = 12


def _shape_bytes(shape):
    return struct.pack('<i%dq' % len(shape), len(shape), *shape)


def _sparse_record(arr):
    """A csr or row_sparse array's record, as MXNet writes it: after the storage type, the
    shape of the stored values, then the shape, context and dtype, each index array's dtype
    and shape (csr: indptr, indices; row_sparse: indices), the values and the indices."""
    t = arr._sparse_now().detach().cpu()
    if arr.stype == 'csr':
        values, aux, stype = t.values(), [t.crow_indices(), t.col_indices()], 2
    else:
        t = t.coalesce()
        values, aux, stype = t.values(), [t.indices()[0]], 1
    magic = V3_MAGIC if is_np_shape() else V2_MAGIC
    out = [struct.pack('<Ii', magic, stype), _shape_bytes(tuple(values.shape)),
           _shape_bytes(arr.shape),
           struct.pack('<iii', 2 if arr.context.device_typeid == 2 else 1, arr.context.device_id,
                       dtype_flag(arr._dtype))]
    for a in aux:
        out.append(struct.pack('<i', dtype_flag('int64')) + _shape_bytes(tuple(a.shape)))
    out.append(np.ascontiguousarray(values.numpy()).tobytes())
    out.extend(np.ascontiguousarray(a.to(torch.int64).numpy()).tobytes() for a in aux)
    return b''.join(out)


def _sparse_array(buf, rec, source, index):
    """The csr (2) or row_sparse (1) array of sparse record ``rec`` (number ``index``; see
    ``_sparse_record``; ``_Layout`` found its values' shape from the indices', as MXNet 1.9.1
    writes a row_sparse array's storage shape with 0 rows). Indices that no such array can
    have raise an MXNetError naming ``source`` and the record: torch does not check them."""
    from .sparse import _host_array, _rules
    pos = rec.data

    def take(flag, shape):
        nonlocal pos
        n = _ITEMSIZE[flag]
        for d in shape:
            n *= d
        out = np.frombuffer(buf[pos:pos + n], dtype=_NP_OF_FLAG[flag]).reshape(shape)
        pos += n
        return out
    if rec.flag == _BF16:
        raw = take(8, rec.values)       # the same bytes as int16
        values = torch.from_numpy(raw.copy()).view(torch.bfloat16)
    else:
        values = torch.from_numpy(take(rec.flag, rec.values).copy())
    index_at = pos
    idx = [take(f, s).astype(np.int64) for f, s in rec.aux]
    bad = _bad_indices(rec, idx)
    if bad:
        raise MXNetError("%s: record %d (offset %d): the index data at offset %d of the %s array "
                         "of shape %s hold %s: the file is corrupt"
                         % (source, index, rec.start, index_at, _STYPES[rec.stype], rec.dims,
                            bad))
    idx = [torch.from_numpy(i) for i in idx]
    if rec.stype == 2:
        t = _rules.csr_tensor(idx[0], idx[1], values, rec.dims)
    else:
        t = _rules.rsp_tensor(idx[0], values, rec.dims)
    return _host_array(t, _place(*rec.dev), _STYPES[rec.stype])


def _bad_indices(rec, idx):
    """What is wrong with the index arrays of a sparse record, or ''."""
    rows = rec.dims[0]
    if rec.stype == 2:
        indptr, cols = idx
        if indptr.shape != (rows + 1,) or indptr[0] != 0 or indptr[-1] != len(cols):
            return 'row pointers %s for %d rows and %d values' % (
                np.array2string(indptr, threshold=8), rows, len(cols))
        if (np.diff(indptr) < 0).any():
            return 'decreasing row pointers'
        if len(cols) and (cols.min() < 0 or cols.max() >= rec.dims[1]):
            return 'column indices outside [0, %d)' % rec.dims[1]
        return ''
    (r,) = idx
    if r.ndim != 1 or (len(r) and (r.min() < 0 or r.max() >= rows or (np.diff(r) <= 0).any())):
        return 'row indices that are not ascending in [0, %d)' % rows
    return ''


def _record(arr):
    if arr._sparse:
        return _sparse_record(arr)
    t = arr._data().detach()
    if t.device.type != 'cpu':
        t = t.cpu()
    flag = dtype_flag(arr._dtype)
    shape = arr.shape
    # Under NumPy shape semantics MXNet writes V3 records (where 0-d arrays and zero sizes mean
    # what they say) and reads each kind only under the semantics it was written in; a 0-d
    # array can only be written that way.
    magic = V3_MAGIC if (not shape or is_np_shape()) else V2_MAGIC
    head = struct.pack('<Iii', magic, 0, len(shape))
    dims = struct.pack('<%dq' % len(shape), *shape)
    dev = struct.pack('<iii', 2 if arr.context.device_typeid == 2 else 1, arr.context.device_id, flag)
    if flag == _BF16:
        raw = t.contiguous().view(torch.int16).numpy().tobytes()
    else:
        raw = np.ascontiguousarray(t.numpy()).tobytes()
    return head + dims + dev + raw


def dumps(data):
    """The bytes ``save`` would write for ``data``."""
    if isinstance(data, NDArray):
        data = [data]
    # The exception types are MXNet's (TypeError for a bad item, ValueError for a bad
    # container), so code that catches them keeps working.
    if isinstance(data, dict):
        names = list(data.keys())
        arrays = [data[k] for k in names]
        for k in names:
            if not isinstance(k, str):
                raise TypeError("save only accept dict str->NDArray or list of NDArray: "
                                "key %r is a %s, not a str" % (k, type(k).__name__))
    elif isinstance(data, (list, tuple)):
        names, arrays = [], list(data)
    else:
        raise ValueError("data needs to either be a NDArray, dict of str, NDArray pairs or a "
                         "list of NDarrays; got %s" % type(data).__name__)
    for i, a in enumerate(arrays):
        if not isinstance(a, NDArray):
            raise TypeError("save only accept dict str->NDArray or list of NDArray: item %r is "
                            "a %s" % (names[i] if names else i, type(a).__name__))
    parts = [struct.pack('<QQQ', LIST_MAGIC, 0, len(arrays))]
    parts.extend(_record(a) for a in arrays)
    parts.append(struct.pack('<Q', len(names)))
    for k in names:
        b = k.encode('utf-8')
        parts.append(struct.pack('<Q', len(b)) + b)
    return b''.join(parts)


def save(fname, data):
    """Saves an NDArray, a list of them or a dict of them to ``fname`` in MXNet's format.
    The file is replaced atomically: readers see the old file or the new one, never a part."""
    payload = dumps(data)
    fname = os.fspath(fname)
    try:
        _write_atomic(fname, payload)
    except OSError as e:
        raise MXNetError("save: cannot write %s: %s" % (fname, e.strerror or e)) from None


def _write_atomic(fname, payload):
    """Writes ``payload`` to ``fname`` whole or not at all (see ``neomx.atomic``)."""
    atomic.write(fname, payload)


# -- reading ----------------------------------------------------------------------------------
#
# A file is read in two passes: ``_Layout`` reads where every record, its fields and its data
# are, checking each field as it goes, and only a file whose layout holds together up to its
# last byte gives arrays. A field that does not read as the format says raises ``_Corrupt``;
# the error then names the first field that, given another value, makes the whole file read
# consistently (``_blame``), since a corrupt field is often noticed only further on (a wrong
# ndim shifts every field after it; a wrong shape or dtype moves where the next record starts).

_ITEMSIZE = {flag: np.dtype(t).itemsize for flag, t in _NP_OF_FLAG.items()}
_ITEMSIZE[_BF16] = 2
_MAGICS = {V1_MAGIC: 'V1', V2_MAGIC: 'V2', V3_MAGIC: 'V3'}
_DEVICE_TYPES = {1: 'cpu', 2: 'gpu', 3: 'cpu_pinned', 5: 'cpu_shared'}
_STYPES = {0: 'default', 1: 'row_sparse', 2: 'csr'}
_INDEX_FLAGS = (3, 4, 5, 6, 8)     # the integer types
_MAX_NDIM = 32
_MAX_DEV_ID = 1 << 16
_FLAGS = ', '.join('%d (%s)' % (f, dtype_name(f)) for f in sorted(_ITEMSIZE))


def _index_shape_error(stype, i, shape, dims):
    """What is wrong with the shape of index array ``i`` of a sparse record of shape ``dims``,
    or None: each is 1-d; csr's row pointers (``i`` 0) are one more than the rows; row_sparse
    has at most one row index per row."""
    if len(shape) != 1:
        return 'expected one dimension'
    if stype == 2 and i == 0 and shape[0] != dims[0] + 1:
        return 'expected (%d,), one more than the rows' % (dims[0] + 1)
    if stype == 1 and shape[0] > dims[0]:
        return 'expected at most %d row indices' % dims[0]
    return None


class _Corrupt(Exception):
    """A field that does not read as the format says: ``where`` names the record (or the
    header, the names), ``field`` and ``offset`` the field, ``says`` what is wrong with it;
    ``length`` when the file's length alone may be wrong (truncated, or bytes appended)."""

    def __init__(self, where, field, offset, says, length=False):
        super().__init__(where, field, offset, says)
        self.where, self.field, self.offset, self.says = where, field, offset, says
        self.length = length

    def text(self):
        return '%s: %s at offset %d %s' % (self.where, self.field, self.offset, self.says)


class _Record:
    """Where one record's parts are: ``dims`` is None for MXNet's empty ("none") array. A
    sparse record (``stype`` 1, row_sparse, or 2, csr) has the shape of its stored values
    (``values``) and ``aux``, the ``(dtype flag, shape)`` of each index array, whose data
    follow the values'."""
    __slots__ = ('start', 'magic', 'dims', 'dev', 'flag', 'data', 'end', 'stype', 'values',
                 'aux')

    def __init__(self, start, magic, dims=None, dev=(1, 0), flag=0, data=0, end=0, stype=0,
                 values=None, aux=()):
        self.start, self.magic, self.dims, self.dev = start, magic, dims, dev
        self.flag, self.data, self.end = flag, data, end
        self.stype, self.values, self.aux = stype, values, aux


class _Layout:
    """Reads the layout of ``buf``, checking every field; ``fix`` maps an offset to a value to
    read there instead (``_blame`` tries values), ``known`` records (by offset) to take as
    read. ``fields`` lists what was read, in order, as ``(where, field, offset, struct format,
    value)``."""

    def __init__(self, buf, fix=None, known=None):
        self.buf = buf
        self.size = len(buf)
        self.fix = fix or {}
        self.known = known or {}
        self.fields = []
        self.records = []
        self.where = 'header'

    def int(self, pos, fmt, field):
        if pos + struct.calcsize(fmt) > self.size:
            raise _Corrupt(self.where, field, pos, 'is cut off: the file ends at byte %d '
                           '(truncated)' % self.size, length=True)
        value = self.fix.get(pos)
        if value is None:
            (value,) = struct.unpack_from(fmt, self.buf, pos)
        self.fields.append((self.where, field, pos, fmt, value))
        return value

    def record(self, pos, index, like=None):
        """The record at ``pos``; ``like`` is record 0, whose layout every record shares."""
        rec = self.known.get(pos)
        if rec is not None:
            return rec
        self.where = 'record %d (offset %d)' % (index, pos)
        start = pos
        magic = self.int(pos, '<I', 'magic')
        if magic not in _MAGICS and magic > _MAX_NDIM:
            raise _Corrupt(self.where, 'magic', pos, 'reads 0x%08X: expected 0x%08X, 0x%08X or '
                           '0x%08X' % (magic, V1_MAGIC, V2_MAGIC, V3_MAGIC))
        if like is not None and (magic in _MAGICS or like.magic in _MAGICS) and \
                magic != like.magic:
            raise _Corrupt(self.where, 'magic', pos, 'reads 0x%08X, but record 0 starts with '
                           '0x%08X: the records of a file share one layout' % (magic, like.magic))
        pos += 4
        stype = 0
        if magic in (V2_MAGIC, V3_MAGIC):
            stype = self.int(pos, '<i', 'storage type')
            if stype not in _STYPES:
                raise _Corrupt(self.where, 'storage type', pos, 'reads %d: expected 0 (dense), '
                               '1 (row_sparse) or 2 (csr)' % stype)
            pos += 4
        if stype:
            # the shape of the stored values: not read, as MXNet 1.9.1 writes a row_sparse
            # array's with 0 rows (the indices' shape says how many there are)
            pos = self.shape(pos, 'storage shape')[1]
        if magic in _MAGICS:
            ndim = self.int(pos, '<i', 'ndim')
            pos += 4
        else:
            ndim = magic        # the legacy layout: no magic, u32 ndim and u32 dimensions
        if stype == 0 and (ndim == -1 or (ndim == 0 and magic != V3_MAGIC)):
            return _Record(start, magic, end=pos)
        if not 0 <= ndim <= _MAX_NDIM:
            raise _Corrupt(self.where, 'ndim', pos - 4, 'reads %d: expected 0 to %d'
                           % (ndim, _MAX_NDIM))
        fmt = '<q' if magic in _MAGICS else '<I'
        width = struct.calcsize(fmt)
        dims = []
        for k in range(ndim):
            d = self.int(pos, fmt, 'dimension %d' % k)
            if d < 0:
                raise _Corrupt(self.where, 'dimension %d' % k, pos, 'reads %d: a dimension '
                               'cannot be negative' % d)
            dims.append(d)
            pos += width
        n = 1
        for d in dims:      # Python ints: a corrupt shape must not wrap around
            n *= d
        if stype == 2 and ndim != 2:
            raise _Corrupt(self.where, 'ndim', pos - width * ndim - 4, 'reads %d: a csr '
                           'array has 2 dimensions' % ndim)
        if stype == 0 and n > self.size - pos - 12:
            raise _Corrupt(self.where, 'shape', pos - width * ndim, 'reads %s: %d elements, '
                           'more than the %d bytes left in the file can hold: the file is '
                           'truncated or corrupt' % (tuple(dims), n, max(self.size - pos - 12, 0)),
                           length=True)
        dev_type = self.int(pos, '<i', 'device type')
        if dev_type not in _DEVICE_TYPES:
            raise _Corrupt(self.where, 'device type', pos, 'reads %d: expected 1 (cpu), 2 (gpu),'
                           ' 3 (cpu_pinned) or 5 (cpu_shared)' % dev_type)
        dev_id = self.int(pos + 4, '<i', 'device id')
        if not 0 <= dev_id < _MAX_DEV_ID:
            raise _Corrupt(self.where, 'device id', pos + 4, 'reads %d: expected 0 to %d'
                           % (dev_id, _MAX_DEV_ID - 1))
        flag = self.int(pos + 8, '<i', 'dtype flag')
        itemsize = _ITEMSIZE.get(flag)
        if itemsize is None:
            raise _Corrupt(self.where, 'dtype flag', pos + 8, 'reads %d: expected one of %s'
                           % (flag, _FLAGS))
        pos += 12
        aux = []
        if stype:
            for i in range(2 if stype == 2 else 1):
                aflag = self.int(pos, '<i', 'index %d dtype flag' % i)
                if aflag not in _INDEX_FLAGS:
                    raise _Corrupt(self.where, 'index %d dtype flag' % i, pos, 'reads %d: '
                                   'expected an integer type (%s)' % (aflag, ', '.join(
                                       '%d (%s)' % (f, dtype_name(f)) for f in _INDEX_FLAGS)))
                ashape, end = self.shape(pos + 4, 'index %d shape' % i)
                wrong = _index_shape_error(stype, i, ashape, dims)
                if wrong:
                    raise _Corrupt(self.where, 'index %d shape' % i, pos + 4, 'reads %s: %s '
                                   'for a %s array of shape %s'
                                   % (ashape, wrong, _STYPES[stype], tuple(dims)))
                aux.append((aflag, ashape))
                pos = end
            nnz = aux[-1][1][0] if aux[-1][1] else 0
            values = (nnz,) if stype == 2 else (nnz,) + tuple(dims[1:])
            n = 1
            for d in values:
                n *= d
        nbytes = n * itemsize
        for aflag, ashape in aux:
            m = _ITEMSIZE[aflag]
            for d in ashape:
                m *= d
            nbytes += m
        if pos + nbytes > self.size:
            raise _Corrupt(self.where, 'data', pos, 'is cut off: %s %s needs %d bytes, the file '
                           'ends %d bytes after it (truncated)'
                           % (dtype_name(flag), tuple(dims), nbytes, self.size - pos), length=True)
        nonzero = 1
        for d in dims:
            nonzero *= max(d, 1)
        if nonzero * itemsize >= 1 << 63:   # even empty, NumPy and torch cannot make it
            raise _Corrupt(self.where, 'shape', pos - 12 - width * ndim, 'reads %s: an array '
                           'of that shape and dtype %s cannot exist'
                           % (tuple(dims), dtype_name(flag)))
        return _Record(start, magic, tuple(dims), (dev_type, dev_id), flag, pos, pos + nbytes,
                       stype, values if stype else None, tuple(aux))

    def shape(self, pos, what):
        """``(shape, next offset)`` of the i32 ndim and i64 dimensions at ``pos``."""
        ndim = self.int(pos, '<i', what + ' ndim')
        if not 0 <= ndim <= _MAX_NDIM:
            raise _Corrupt(self.where, what + ' ndim', pos, 'reads %d: expected 0 to %d'
                           % (ndim, _MAX_NDIM))
        dims = []
        for k in range(ndim):
            d = self.int(pos + 4 + 8 * k, '<q', '%s dimension %d' % (what, k))
            if not 0 <= d <= self.size:
                raise _Corrupt(self.where, '%s dimension %d' % (what, k), pos + 4 + 8 * k,
                               'reads %d: expected 0 to the file\'s size' % d)
            dims.append(d)
        return tuple(dims), pos + 4 + 8 * ndim

    def file(self):
        """``(records, names)`` of an NDArray file (names empty for a list)."""
        magic = self.int(0, '<Q', 'magic')
        if magic != LIST_MAGIC:
            raise _Corrupt('header', 'magic', 0, 'reads 0x%X: not an MXNet NDArray file '
                           '(expected 0x112)' % magic)
        self.int(8, '<Q', 'reserved field')
        count = self.int(16, '<Q', 'array count')
        if count > (self.size - 32) // 4:       # the smallest record is 4 bytes
            raise _Corrupt('header', 'array count', 16, 'reads %d: more records than the %d '
                           'bytes after the header can hold: the file is truncated or corrupt'
                           % (count, self.size - 24), length=True)
        pos = 24
        records = self.records
        for i in range(count):
            rec = self.record(pos, i, records[0] if records else None)
            records.append(rec)
            pos = rec.end
        self.where = 'names (offset %d)' % pos
        nnames = self.int(pos, '<Q', 'name count')
        if nnames not in (0, count):
            raise _Corrupt(self.where, 'name count', pos, 'reads %d: expected %d (one name '
                           'for each array) or 0' % (nnames, count))
        pos += 8
        names = []
        for i in range(nnames):
            length = self.int(pos, '<Q', 'length of name %d' % i)
            if length > self.size - pos - 8:
                raise _Corrupt(self.where, 'length of name %d' % i, pos, 'reads %d: more than '
                               'the %d bytes left in the file: the file is truncated or corrupt'
                               % (length, self.size - pos - 8), length=True)
            raw = bytes(self.buf[pos + 8:pos + 8 + length])
            try:
                name = raw.decode('utf-8')
            except UnicodeDecodeError:
                raise _Corrupt(self.where, 'name %d' % i, pos + 8, '(%r) is not UTF-8'
                               % raw[:40]) from None
            if name in names:       # a dict was saved: one array would be lost
                raise _Corrupt(self.where, 'name %d' % i, pos + 8, '(%r) repeats name %d'
                               % (name, names.index(name)))
            names.append(name)
            pos += 8 + length
        if pos != self.size:
            raise _Corrupt(self.where, 'end of the names', pos, 'is not the end of the file: '
                           '%d more bytes follow' % (self.size - pos), length=True)
        return records, names

    def one(self):
        """The record of a buffer holding one record (``raw_bytes``)."""
        rec = self.record(0, 0)
        if rec.end != self.size:
            raise _Corrupt(self.where, 'end of the record', rec.end, 'is not the end of the '
                           'buffer: %d more bytes follow' % (self.size - rec.end), length=True)
        return rec


def _blame(buf, exc, read):
    """What to say of ``exc``, raised by ``read(_Layout(buf))``. A corrupt field is often
    noticed only further on (a wrong ndim shifts every field after it, a wrong shape or dtype
    moves where the next record starts), and files are mostly damaged by a flipped bit or by
    being cut short: the first field (of the failing record, the one before it, the header's
    array count or the names section) that, with one bit flipped (or, for a record magic,
    another magic), makes the whole file read consistently is named as the one at fault;
    where ``exc`` may be the file's length alone (truncated, or bytes appended), as the
    other explanation."""
    layout = _Layout(buf)
    try:
        read(layout)
    except _Corrupt:
        pass
    # The records before the one before the failing one are read as they were.
    known = {r.start: r for r in layout.records[:max(len(layout.records) - 1, 0)]}
    fields = layout.fields
    failing = [i for i, f in enumerate(fields) if f[0] == exc.where]
    if not failing:
        return exc.text()
    groups = {exc.where}
    if failing[0] > 0:
        groups.add(fields[failing[0] - 1][0])  # the record (or header) before the failing one
    candidates = [f for f in fields if f[0] in groups or f[1] in ('array count', 'name count')]
    for where, field, offset, fmt, value in sorted(candidates, key=lambda f: f[2]):
        for v in _flips(field, fmt, value, len(buf)):
            try:
                read(_Layout(buf, {offset: v}, known))
            except (_Corrupt, MXNetError):
                continue
            fix = '%s: %s at offset %d reads %s, where the rest of the file fits %s' % (
                where, field, offset, _show(field, value), _show(field, v))
            if exc.length:
                return "%s; or, if the file's length is right, %s" % (exc.text(), fix)
            if (where, field) == (exc.where, exc.field):
                said = exc.says.split(': ', 1)[-1]      # without 'reads <value>'
                return '%s: the file is corrupt (read as it is: %s)' % (fix, said)
            return '%s: the file is corrupt (read as it is, %s)' % (fix, exc.text())
    return exc.text()


def _flips(field, fmt, value, size):
    """The values one bit away from ``value`` (a field of format ``fmt``) that the field may
    hold in a file of ``size`` bytes; for a record magic, the other magics too."""
    bits = 8 * struct.calcsize(fmt)
    unsigned = value & ((1 << bits) - 1)
    out = [m for m in _MAGICS if m != value] if field == 'magic' else []
    for b in range(bits):
        v = unsigned ^ (1 << b)
        if fmt in ('<i', '<q') and v >= 1 << (bits - 1):
            v -= 1 << bits
        if field == 'magic' or field == 'dtype flag' and v in _ITEMSIZE or \
                field == 'device type' and v in _DEVICE_TYPES or -1 <= v <= size:
            out.append(v)
    return out


def _show(field, value):
    return '0x%08X' % value if field == 'magic' else str(value)


def _layout(buf, source, read):
    try:
        return read(_Layout(buf))
    except _Corrupt as exc:
        raise MXNetError('%s: %s' % (source, _blame(buf, exc, read))) from None


def _check_np_shape(records, source):
    for rec in records:
        if rec.magic == V3_MAGIC and not is_np_shape():
            raise MXNetError("%s: the array was saved in np shape semantics and must be loaded "
                             "in them: load it inside `with mx.np_shape(True):` (or under "
                             "npx.set_np())" % source)
        if rec.magic in (V1_MAGIC, V2_MAGIC) and is_np_shape() and not _global_np_shape():
            raise MXNetError("%s: the array was not saved in np shape semantics but is being "
                             "loaded in them: load it inside `with mx.np_shape(False):`"
                             % source)


def _array(buf, rec, source, index):
    """The array of record ``rec`` (number ``index``) of ``buf`` (None for an empty record)."""
    from .creation import array
    if rec.dims is None:
        return None
    if rec.stype:
        return _sparse_array(buf, rec, source, index)
    dims = rec.dims
    raw = buf[rec.data:rec.end]
    if rec.flag == _BF16:
        t = torch.from_numpy(np.frombuffer(raw, dtype=np.int16).copy())
        return _to_ctx(t.view(torch.bfloat16).reshape(dims), *rec.dev)
    np_type = _NP_OF_FLAG[rec.flag]
    data = np.frombuffer(raw, dtype=np_type).reshape(dims)
    if not dims:        # a 0-d array of a V3 record
        return _to_ctx(torch.from_numpy(data.copy()), *rec.dev)
    return array(data, ctx=_place(*rec.dev), dtype=dtype_name(np_type))


def _place(dev_type, dev_id):
    if dev_type == 2 and dev_id < num_gpus():
        return Context('gpu', dev_id)
    return cpu(0)


def _global_np_shape():
    from .. import util
    return util._global_np_shape and util._shape_state.active is None


def raw_bytes(arr):
    """The one-array record of ``arr`` (MXNet's ``MXNDArraySaveRawBytes``, kept by
    ``NDArray.__getstate__``)."""
    return _record(arr)


def from_raw_bytes(buf, source='<raw bytes>'):
    """The array of a one-array record (``raw_bytes``); None for an empty record."""
    buf = memoryview(buf)
    rec = _layout(buf, source, _Layout.one)
    _check_np_shape([rec], source)
    return _array(buf, rec, source, 0)


def _to_ctx(t, dev_type, dev_id):
    from .ndarray import from_tensor
    ctx = _place(dev_type, dev_id)
    return from_tensor(t.to(ctx.torch_device), ctx)


def loads(buf, source='<buffer>'):
    """The arrays of the bytes of an NDArray file: a list, or a dict when it has names. A file
    that does not read as the format says, up to its last byte, raises an MXNetError naming
    ``source``, the record and the offset of the field at fault."""
    buf = memoryview(buf)
    records, names = _layout(buf, source, _Layout.file)
    _check_np_shape(records, source)
    arrays = [_array(buf, rec, source, i) for i, rec in enumerate(records)]
    return dict(zip(names, arrays)) if names else arrays


def load(fname):
    """Loads a file written by ``save`` (or by MXNet): a list, or a dict when names were saved."""
    fname = os.fspath(fname)
    try:
        buf = atomic.read(fname)
    except OSError as e:
        raise MXNetError("load: cannot read %s: %s" % (fname, e.strerror or e)) from None
    return loads(buf, fname)


def load_frombuffer(buf):
    """Like ``load`` from bytes in memory."""
    return loads(buf)
