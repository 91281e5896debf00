"""``nd.save`` / ``nd.load``: MXNet's binary NDArray file format, bit for bit.

File (little-endian)::

    u64 0x112 | u64 0 | u64 N | N x record | u64 K | K x (u64 len, bytes)   # K names, 0 for a list
    record: u32 0xF993FAC9 | i32 stype (0 dense) | i32 ndim, ndim x i64 dims
            | i32 dev_type (1 cpu, 2 gpu) | i32 dev_id | i32 type_flag | raw data

Readers also take V1 records (0xF993FAC8, no stype), V3 records (0xF993FACA) and the legacy
layout without a magic number. Writes go to a temporary file renamed into place, so a crash
never leaves a half-written file.

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


def _read_sparse(r, stype):
    """The rest of a csr (2) or row_sparse (1) record (see ``_sparse_record``)."""
    from .sparse import _host_array, _rules
    def shape(what):
        (ndim,) = r.unpack('<i', what)
        if not 0 <= ndim <= 32:
            raise MXNetError("%s: corrupt sparse record (%s of %d dims)"
                             % (r.source, what, ndim))
        return tuple(r.unpack('<%dq' % ndim, what))
    shape('storage shape')
    dims = shape('shape')
    dev_type, dev_id = r.unpack('<ii', 'context')
    (flag,) = r.unpack('<i', 'dtype flag')
    naux = 2 if stype == 2 else 1
    aux = []
    for _ in range(naux):
        (aflag,) = r.unpack('<i', 'index dtype')
        aux.append((aflag, shape('index shape')))
    np_type = _NP_OF_FLAG.get(flag)
    if np_type is None or stype not in (1, 2) or (stype == 2 and len(dims) != 2):
        raise MXNetError("%s: unsupported sparse record (storage type %d, dtype flag %d, shape "
                         "%s)" % (r.source, stype, flag, dims))

    def take(np_t, shp, what):
        n = 1
        for d in shp:
            n *= d
        return np.frombuffer(r.take(np.dtype(np_t).itemsize * n, what), dtype=np_t).reshape(shp)
    # the values' shape from the indices' (MXNet 1.9.1 writes a row_sparse array's storage
    # shape with 0 rows)
    nnz = aux[-1][1][0] if aux[-1][1] else 0
    storage = (nnz,) if stype == 2 else (nnz,) + tuple(dims[1:])
    if any(f not in _NP_OF_FLAG for f, _ in aux) or any(d < 0 for _, s in aux for d in s):
        raise MXNetError("%s: corrupt sparse record (index arrays %s)" % (r.source, aux))
    values = torch.from_numpy(take(np_type, storage, 'sparse values').copy())
    idx = [torch.from_numpy(take(_NP_OF_FLAG[f], s, 'sparse indices').astype(np.int64))
           for f, s in aux]
    if stype == 2:
        t = _rules.csr_tensor(idx[0], idx[1], values, dims)
        name = 'csr'
    else:
        t = _rules.rsp_tensor(idx[0], values, dims)
        name = 'row_sparse'
    return _host_array(t, _place(dev_type, dev_id), name)


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


class _Reader:
    def __init__(self, buf, source):
        self.buf = memoryview(buf)
        self.pos = 0
        self.source = source

    def take(self, n, what):
        if self.pos + n > len(self.buf):
            raise MXNetError("%s: file is truncated or corrupt (needed %d bytes for %s at offset %d, "
                             "file has %d)" % (self.source, n, what, self.pos, len(self.buf)))
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt, what):
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size, what))


def _place(dev_type, dev_id):
    if dev_type == 2 and dev_id < num_gpus():
        return Context('gpu', dev_id)
    return cpu(0)


def _read_array(r):
    from .creation import array
    (magic,) = r.unpack('<I', 'record magic')
    if magic == V3_MAGIC and not is_np_shape():
        raise MXNetError("%s: the array was saved in np shape semantics and must be loaded in "
                         "them: load it inside `with mx.np_shape(True):` (or under npx.set_np())"
                         % r.source)
    if magic in (V1_MAGIC, V2_MAGIC) and is_np_shape() and not _global_np_shape():
        raise MXNetError("%s: the array was not saved in np shape semantics but is being loaded "
                         "in them: load it inside `with mx.np_shape(False):`" % r.source)
    if magic in (V2_MAGIC, V3_MAGIC):
        (stype,) = r.unpack('<i', 'storage type')
        if stype != 0:
            return _read_sparse(r, stype)
        (ndim,) = r.unpack('<i', 'ndim')
        legacy_dims = False
    elif magic == V1_MAGIC:
        (ndim,) = r.unpack('<i', 'ndim')
        legacy_dims = False
    else:
        ndim = magic          # legacy layout: no magic, u32 ndim and u32 dims
        legacy_dims = True
        if ndim > 32:
            raise MXNetError("%s: not an NDArray file (record starts with 0x%08X)" % (r.source, magic))
    if ndim < 0 or (ndim == 0 and magic != V3_MAGIC):
        return None           # an empty (none) array
    if ndim > 32:
        raise MXNetError("%s: corrupt record (ndim %d)" % (r.source, ndim))
    dims = r.unpack('<%d%s' % (ndim, 'I' if legacy_dims else 'q'), 'shape')
    if any(d < 0 for d in dims):
        raise MXNetError("%s: corrupt record (shape %s has a negative dimension)"
                         % (r.source, tuple(dims)))
    dev_type, dev_id = r.unpack('<ii', 'context')
    (flag,) = r.unpack('<i', 'dtype flag')
    n = 1
    for d in dims:   # Python ints: a corrupt shape must not wrap around as np.prod would
        n *= d
    if flag == _BF16:
        raw = np.frombuffer(r.take(2 * n, 'data'), dtype=np.int16).copy()
        t = torch.from_numpy(raw).view(torch.bfloat16).reshape(dims)
        return _to_ctx(t, dev_type, dev_id)
    np_type = _NP_OF_FLAG.get(flag)
    if np_type is None:
        raise MXNetError("%s: unknown dtype flag %d" % (r.source, flag))
    itemsize = np.dtype(np_type).itemsize
    raw = r.take(itemsize * n, 'data')
    try:
        data = np.frombuffer(raw, dtype=np_type).reshape(dims)
    except ValueError as e:     # dimensions no array can have, even an empty one
        raise MXNetError("%s: corrupt record (an array of shape %s and dtype %s cannot exist: "
                         "%s)" % (r.source, tuple(dims), np.dtype(np_type).name,
                                  str(e).split(';')[0])) from None
    if not dims:        # a 0-d array of a V3 record
        return _to_ctx(torch.from_numpy(data.copy()), dev_type, dev_id)
    return array(data, ctx=_place(dev_type, dev_id), dtype=dtype_name(np_type))


def _global_np_shape():
    from .. import util
    return util._global_np_shape and util._shape_state.active is None


def raw_bytes(arr):
    """The one-array record of ``arr`` (MXNet's ``MXNDArraySaveRawBytes``, kept by
    ``NDArray.__getstate__``)."""
    return _record(arr)


def from_raw_bytes(buf, source='<raw bytes>'):
    """The array of a one-array record (``raw_bytes``); None for an empty record."""
    return _read_array(_Reader(buf, source))


def _to_ctx(t, dev_type, dev_id):
    from .ndarray import from_tensor
    ctx = _place(dev_type, dev_id)
    return from_tensor(t.to(ctx.torch_device), ctx)


def loads(buf, source='<buffer>'):
    r = _Reader(buf, source)
    magic, _reserved = r.unpack('<QQ', 'header')
    if magic != LIST_MAGIC:
        raise MXNetError("%s: not an MXNet NDArray file (magic 0x%X, expected 0x112)" % (source, magic))
    (count,) = r.unpack('<Q', 'array count')
    if count > 1 << 32:
        raise MXNetError("%s: corrupt header (%d arrays)" % (source, count))
    arrays = [_read_array(r) for _ in range(count)]
    (nnames,) = r.unpack('<Q', 'name count')
    if nnames == 0:
        return arrays
    if nnames != count:
        raise MXNetError("%s: %d arrays but %d names" % (source, count, nnames))
    names = []
    for _ in range(nnames):
        (length,) = r.unpack('<Q', 'name length')
        raw = bytes(r.take(length, 'name'))
        try:
            names.append(raw.decode('utf-8'))
        except UnicodeDecodeError:
            raise MXNetError("%s: corrupt name %r (not UTF-8)" % (source, raw[:40])) from None
    return dict(zip(names, arrays))


def load(fname):
    """Loads a file written by ``save`` (or by MXNet): a list, or a dict when names were saved."""
    fname = os.fspath(fname)
    try:
        with open(fname, 'rb') as f:
            buf = f.read()
    except OSError as e:
        raise MXNetError("load: cannot read %s: %s" % (fname, e.strerror)) from None
    return loads(buf, fname)


def load_frombuffer(buf):
    """Like ``load`` from bytes in memory."""
    return loads(buf)
