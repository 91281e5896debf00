"""``mx.recordio``: MXNet's RecordIO files (``.rec``, with an optional ``.idx`` index), read and
written in MXNet's own format, so files made by MXNet's ``im2rec`` read here and files written
here read in MXNet.

The format (dmlc-core's RecordIO), little-endian, every record aligned to 4 bytes::

    u32 magic 0xced7230a | u32 lrec = cflag << 29 | length | length bytes | zero padding to 4

A payload that holds the magic number at a 4-byte aligned offset is cut there: the parts are
written with ``cflag`` 1 (first), 2 (middle) and 3 (last), the magic numbers themselves left
out, and the reader puts them back. ``cflag`` 0 is a whole record. The index file has one line
``key<TAB>byte offset`` per record.

An image record (``pack`` / ``pack_img``) starts with the header ``IRHeader(flag, label, id,
id2)`` as ``struct`` format ``'IfQQ'`` (24 bytes); when ``flag`` > 0 the label is an array of
``flag`` float32 values that follows the header, and ``label`` is 0.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), 'tmp.rec')
>>> w = MXRecordIO(path, 'w')
>>> for i in range(3):
...     w.write(b'record_%d' % i)
>>> w.close()
>>> r = MXRecordIO(path, 'r')
>>> [r.read() for _ in range(4)]
[b'record_0', b'record_1', b'record_2', None]
>>> header, payload = unpack(pack(IRHeader(0, [1, 2], 7, 0), b'abc'))
>>> header.flag, header.label.tolist(), header.id, payload
(2, [1.0, 2.0], 7, b'abc')
"""
import numbers
import os
import struct
from collections import namedtuple
from multiprocessing import current_process

import numpy as np

from .base import MXNetError

__all__ = ['MXRecordIO', 'MXIndexedRecordIO', 'IRHeader', 'pack', 'unpack', 'pack_img',
           'unpack_img']

_MAGIC = 0xced7230a
_MAGIC_BYTES = struct.pack('<I', _MAGIC)
_LREC_BITS = 29
_MAX_LENGTH = 1 << _LREC_BITS


def _encode_lrec(cflag, length):
    return struct.pack('<II', _MAGIC, (cflag << _LREC_BITS) | length)


def write_record(f, buf):
    """Writes ``buf`` (bytes-like) as one record to the binary file ``f``."""
    data = buf if isinstance(buf, bytes) else memoryview(buf).cast('B').tobytes()
    n = len(data)
    if n >= _MAX_LENGTH:
        raise MXNetError("RecordIO: a record holds less than 2^29 bytes, got %d" % n)
    # The magic number may only appear as a record head: the payload is cut wherever it
    # occurs at an aligned offset (rare: about one in 2^30 aligned words of random data).
    parts, start, pos = [], 0, data.find(_MAGIC_BYTES)
    while pos != -1:
        if pos % 4:
            pos = data.find(_MAGIC_BYTES, pos + 1)
            continue
        parts.append((1 if start == 0 else 2, start, pos))
        start = pos + 4
        pos = data.find(_MAGIC_BYTES, start)
    for cflag, a, b in parts:
        f.write(_encode_lrec(cflag, b - a))
        f.write(data[a:b])
    f.write(_encode_lrec(3 if parts else 0, n - start))
    f.write(data[start:] if start else data)
    pad = -n % 4
    if pad:
        f.write(b'\0' * pad)


def read_record(f, uri='<file>'):
    """The next record of the binary file ``f`` as bytes, or None at its end."""
    return _parse(f.read, f.tell, uri)


def read_record_at(pread, offset, uri='<file>'):
    """The record at byte ``offset``, read with ``pread(n, offset)`` (``os.pread`` of a file
    descriptor: no shared position, so threads and processes may read one file at once)."""
    pos = [offset]

    def read(n):
        data = pread(n, pos[0])
        pos[0] += len(data)
        return data
    record = _parse(read, lambda: pos[0], uri)
    if record is None:
        raise MXNetError("RecordIO: %s has no record at byte %d (the file is %s)"
                         % (uri, offset, 'shorter' if offset else 'empty'))
    return record


def _parse(read, tell, uri):
    """One record from ``read(n)`` (sequential reads), None at the end of the data."""
    chunks = []
    while True:
        head = read(8)
        if not head:
            if chunks:
                raise MXNetError("RecordIO: %s ends inside a record split in parts" % uri)
            return None
        if len(head) < 8:
            raise MXNetError("RecordIO: %s ends inside a record header at byte %d"
                             % (uri, tell() - len(head)))
        magic, lrec = struct.unpack('<II', head)
        if magic != _MAGIC:
            raise MXNetError("RecordIO: %s is not a RecordIO file or is corrupt: magic number "
                             "0x%08x at byte %d, expected 0x%08x"
                             % (uri, magic, tell() - 8, _MAGIC))
        cflag, length = lrec >> _LREC_BITS, lrec & (_MAX_LENGTH - 1)
        data = read(length + (-length % 4))
        if len(data) < length:
            raise MXNetError("RecordIO: %s ends inside a record: %d bytes announced at byte %d, "
                             "%d there" % (uri, length, tell() - len(data) - 8, len(data)))
        if cflag == 0:
            return data[:length]
        if chunks and cflag == 1 or not chunks and cflag in (2, 3):
            raise MXNetError("RecordIO: %s is corrupt: part flag %d out of order at byte %d"
                             % (uri, cflag, tell() - len(data) - 8))
        chunks.append(data[:length])
        if cflag == 3:
            return _MAGIC_BYTES.join(chunks)


class MXRecordIO:
    """Reads or writes a RecordIO file sequentially.

    Parameters
    ----------
    uri : str
        Path to the record file.
    flag : str
        ``'w'`` to write (the file is truncated), ``'r'`` to read.

    An object opened in one process and used in another (a DataLoader worker) reopens the file
    there when it was pickled; a forked copy must call ``reset()`` first, as in MXNet.
    """

    def __init__(self, uri, flag):
        self.uri = os.fspath(uri)
        self.flag = flag
        self.pid = None
        self.is_open = False
        self._file = None
        self.open()

    def open(self):
        """Opens the record file (for writing, truncates it)."""
        if self.flag == 'w':
            mode, self.writable = 'wb', True
        elif self.flag == 'r':
            mode, self.writable = 'rb', False
        else:
            raise ValueError("Invalid flag %s" % self.flag)
        try:
            self._file = open(self.uri, mode)
        except OSError as e:
            raise MXNetError("RecordIO: cannot open %s for %s: %s"
                             % (self.uri, 'writing' if self.writable else 'reading',
                                e.strerror or e)) from None
        self.pid = current_process().pid
        self.is_open = True

    def __del__(self):
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def __getstate__(self):
        is_open = self.is_open
        self.close()
        d = dict(self.__dict__)
        d['is_open'] = is_open
        d['_file'] = None
        return d

    def __setstate__(self, d):
        is_open = d['is_open']
        self.__dict__ = d
        self.is_open = False
        if is_open:
            self.open()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check_pid(self, allow_reset=False):
        """A file object shared with a forked process would share its position too."""
        if self.pid != current_process().pid:
            if allow_reset:
                self.reset()
            else:
                raise RuntimeError("Forbidden operation in multiple processes")

    def close(self):
        """Closes the record file."""
        if not self.is_open:
            return
        self._file.close()
        self._file = None
        self.is_open = False
        self.pid = None

    def reset(self):
        """Back to the first record (for a file opened with ``'w'``: truncates it)."""
        self.close()
        self.open()

    def write(self, buf):
        """Appends ``buf`` (bytes) as one record."""
        assert self.writable
        self._check_pid(allow_reset=False)
        write_record(self._file, buf)

    def read(self):
        """The next record as bytes, or None after the last one."""
        assert not self.writable
        self._check_pid(allow_reset=False)
        return read_record(self._file, self.uri)


class MXIndexedRecordIO(MXRecordIO):
    """Reads or writes a RecordIO file with an index file, for random access by key.

    Parameters
    ----------
    idx_path : str
        Path to the index file (one ``key<TAB>offset`` line per record).
    uri : str
        Path to the record file.
    flag : str
        ``'w'`` or ``'r'``.
    key_type : type, default int
        The type keys are converted to.

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> w = MXIndexedRecordIO(os.path.join(d, 'a.idx'), os.path.join(d, 'a.rec'), 'w')
    >>> for i in range(3):
    ...     w.write_idx(i, b'record_%d' % i)
    >>> w.close()
    >>> r = MXIndexedRecordIO(os.path.join(d, 'a.idx'), os.path.join(d, 'a.rec'), 'r')
    >>> r.keys, r.read_idx(2)
    ([0, 1, 2], b'record_2')
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = idx_path
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        try:
            self.fidx = open(self.idx_path, self.flag)
        except OSError as e:
            super().close()
            raise MXNetError("RecordIO: cannot open the index %s: %s"
                             % (self.idx_path, e.strerror or e)) from None
        if not self.writable:
            for n, line in enumerate(self.fidx, 1):
                fields = line.strip().split('\t')
                if fields == ['']:
                    continue
                try:
                    key, pos = self.key_type(fields[0]), int(fields[1])
                except (ValueError, IndexError):
                    raise MXNetError("RecordIO: line %d of the index %s is %r, expected "
                                     "'key<TAB>offset'" % (n, self.idx_path, line)) from None
                self.idx[key] = pos
                self.keys.append(key)

    def close(self):
        """Closes the record file and the index."""
        if not self.is_open:
            return
        super().close()
        self.fidx.close()
        self.fidx = None

    def __getstate__(self):
        d = super().__getstate__()
        d['fidx'] = None
        return d

    def seek(self, idx):
        """Moves the read position to the record of key ``idx``."""
        assert not self.writable
        self._check_pid(allow_reset=True)
        try:
            pos = self.idx[idx]
        except KeyError:
            raise KeyError("RecordIO: key %r is not in the index %s (%d keys)"
                           % (idx, self.idx_path, len(self.idx))) from None
        self._file.seek(pos)

    def tell(self):
        """The byte offset the next record will be written at."""
        assert self.writable
        return self._file.tell()

    def read_idx(self, idx):
        """The record of key ``idx``."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Appends ``buf`` as the record of key ``idx``."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write('%s\t%d\n' % (str(key), pos))
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple('HEADER', ['flag', 'label', 'id', 'id2'])
IRHeader.__doc__ = """The header of an image record: ``flag`` (the label's length when the
label is an array, else 0), ``label`` (a number or an array of floats), ``id`` and ``id2``
(the record's id; ``id2`` its high bits, usually 0)."""

_IR_FORMAT = 'IfQQ'
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """``header`` (an ``IRHeader`` or 4-tuple) and the bytes ``s`` as one image record."""
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32).ravel()
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    return struct.pack(_IR_FORMAT, *header) + bytes(s)


def unpack(s):
    """``(header, payload)`` of an image record; an array label comes back as a float32 NumPy
    array of ``header.flag`` values."""
    if len(s) < _IR_SIZE:
        raise MXNetError("recordio.unpack: a record starts with a %d-byte header, got %d bytes"
                         % (_IR_SIZE, len(s)))
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if len(s) < 4 * header.flag:
            raise MXNetError("recordio.unpack: the header announces %d label values, but only "
                             "%d bytes follow it" % (header.flag, len(s)))
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


def unpack_img(s, iscolor=-1):
    """``(header, image)`` of an image record, the image decoded to a NumPy ``uint8`` array in
    OpenCV's layout (BGR channels; 2-D for ``iscolor=0``), as MXNet returns it. ``iscolor``: 1
    color, 0 grayscale, -1 as stored."""
    from .image import _codec
    header, s = unpack(s)
    return header, _codec.decode(s, iscolor, to_rgb=False, squeeze_gray=True)


def pack_img(header, img, quality=95, img_fmt='.jpg'):
    """An image record of the NumPy ``uint8`` image ``img`` (BGR channel order, HW or HWC, as
    OpenCV holds images), encoded as ``img_fmt`` ('.jpg' with JPEG ``quality`` 0-100, or '.png'
    with ``quality`` the compression level 0-9)."""
    from .image import _codec
    return pack(header, _codec.encode(img, img_fmt, quality, from_rgb=False))
