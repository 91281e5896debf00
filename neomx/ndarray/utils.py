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
import tempfile

import numpy as np
import torch

from ..base import MXNetError, dtype_flag, dtype_name
from ..context import Context, cpu, num_gpus
from .ndarray import NDArray

__all__ = ['save', 'load', 'load_frombuffer', 'dumps', 'loads']

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
_NP_OF_FLAG = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32,
               5: np.int8, 6: np.int64, 7: np.bool_, 8: np.int16}
_BF16 = 12


def _record(arr):
    t = arr._data().detach()
    if t.device.type != 'cpu':
        t = t.cpu()
    flag = dtype_flag(arr._dtype)
    shape = arr.shape
    head = struct.pack('<Iii', V2_MAGIC, 0, len(shape))
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
    if isinstance(data, dict):
        names = list(data.keys())
        arrays = [data[k] for k in names]
        for k in names:
            if not isinstance(k, str):
                raise MXNetError("save: dictionary keys must be strings, got %r" % (k,))
    elif isinstance(data, (list, tuple)):
        names, arrays = [], list(data)
    else:
        raise MXNetError("save: data must be an NDArray, a list of NDArrays or a dict of str to "
                         "NDArray, got %s" % type(data).__name__)
    for i, a in enumerate(arrays):
        if not isinstance(a, NDArray):
            raise MXNetError("save: item %s is a %s, not an NDArray"
                             % (names[i] if names else i, type(a).__name__))
    parts = [struct.pack('<QQQ', LIST_MAGIC, 0, len(arrays))]
    parts.extend(_record(a) for a in arrays)
    parts.append(struct.pack('<Q', len(names)))
    for k in names:
        b = k.encode('utf-8')
        parts.append(struct.pack('<Q', len(b)) + b)
    return b''.join(parts)


def save(fname, data):
    """Saves an NDArray, a list of them or a dict of them to ``fname`` in MXNet's format."""
    payload = dumps(data)
    fname = os.fspath(fname)
    folder = os.path.dirname(os.path.abspath(fname))
    fd, tmp = tempfile.mkstemp(prefix='.' + os.path.basename(fname) + '.', dir=folder)
    try:
        with os.fdopen(fd, 'wb') as f:
            f.write(payload)
        os.replace(tmp, fname)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
    if magic in (V2_MAGIC, V3_MAGIC):
        (stype,) = r.unpack('<i', 'storage type')
        if stype != 0:
            raise MXNetError("%s: sparse arrays (storage type %d) are not supported; neomx arrays "
                             "are dense" % (r.source, stype))
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
    dev_type, dev_id = r.unpack('<ii', 'context')
    (flag,) = r.unpack('<i', 'dtype flag')
    n = int(np.prod(dims)) if dims else 1
    if flag == _BF16:
        raw = np.frombuffer(r.take(2 * n, 'data'), dtype=np.int16).copy()
        t = torch.from_numpy(raw).view(torch.bfloat16).reshape(dims)
        return _to_ctx(t, dev_type, dev_id)
    np_type = _NP_OF_FLAG.get(flag)
    if np_type is None:
        raise MXNetError("%s: unknown dtype flag %d" % (r.source, flag))
    itemsize = np.dtype(np_type).itemsize
    data = np.frombuffer(r.take(itemsize * n, 'data'), dtype=np_type).reshape(dims or (1,))
    return array(data, ctx=_place(dev_type, dev_id), dtype=dtype_name(np_type))


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
        names.append(bytes(r.take(length, 'name')).decode('utf-8'))
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
