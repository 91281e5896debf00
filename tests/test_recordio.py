"""``mx.recordio``: MXNet's RecordIO format, byte for byte, in both directions; records holding
the magic number; image records; indexed access; pickling into worker processes."""
import os
import pickle
import struct

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

MAGIC = struct.pack('<I', 0xced7230a)
# Payloads that exercise the format: empty, unaligned lengths, and the magic number at aligned
# offsets (the writer cuts the record there) and unaligned ones (left alone).
RECORDS = [b'hello', b'', MAGIC, b'abcd' + MAGIC + b'xyz', MAGIC * 3 + b'ab',
           b'x' * 13 + MAGIC, b'12' + MAGIC + b'5678', b'1234' + MAGIC + b'5678' + MAGIC]


def _write(idx, rec, records):
    w = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    for i, r in enumerate(records):
        w.write_idx(i, r)
    w.close()


def test_sequential_roundtrip(tmp_path):
    path = str(tmp_path / 'a.rec')
    w = mx.recordio.MXRecordIO(path, 'w')
    for r in RECORDS:
        w.write(r)
    w.close()
    r = mx.recordio.MXRecordIO(path, 'r')
    assert [r.read() for _ in RECORDS] == RECORDS
    assert r.read() is None
    r.reset()
    assert r.read() == RECORDS[0]
    r.close()


def test_layout_is_dmlc_recordio(tmp_path):
    """Magic, length word with the part flag in its top 3 bits, payload padded to 4 bytes; a
    payload holding the magic number at an aligned offset is cut into parts without it."""
    path = str(tmp_path / 'a.rec')
    w = mx.recordio.MXRecordIO(path, 'w')
    w.write(b'abcde')
    w.write(b'abcd' + MAGIC + b'xy')
    w.close()
    raw = open(path, 'rb').read()
    assert raw[:16] == MAGIC + struct.pack('<I', 5) + b'abcde\0\0\0'
    assert raw[16:] == (MAGIC + struct.pack('<I', (1 << 29) | 4) + b'abcd'
                        + MAGIC + struct.pack('<I', (3 << 29) | 2) + b'xy\0\0')


def test_indexed_random_access(tmp_path):
    idx, rec = str(tmp_path / 'a.idx'), str(tmp_path / 'a.rec')
    _write(idx, rec, RECORDS)
    r = mx.recordio.MXIndexedRecordIO(idx, rec, 'r')
    assert r.keys == list(range(len(RECORDS)))
    for i in reversed(range(len(RECORDS))):
        assert r.read_idx(i) == RECORDS[i]
    with pytest.raises(KeyError, match='not in the index'):
        r.read_idx(99)
    r.close()
    with open(idx) as f:
        assert f.readline() == '0\t0\n'


def test_string_keys(tmp_path):
    idx, rec = str(tmp_path / 'a.idx'), str(tmp_path / 'a.rec')
    w = mx.recordio.MXIndexedRecordIO(idx, rec, 'w', key_type=str)
    w.write_idx('cat', b'meow')
    w.write_idx('dog', b'woof')
    w.close()
    r = mx.recordio.MXIndexedRecordIO(idx, rec, 'r', key_type=str)
    assert r.read_idx('dog') == b'woof' and r.keys == ['cat', 'dog']


def test_pickle_reopens(tmp_path):
    idx, rec = str(tmp_path / 'a.idx'), str(tmp_path / 'a.rec')
    _write(idx, rec, RECORDS)
    r = mx.recordio.MXIndexedRecordIO(idx, rec, 'r')
    r.read_idx(3)
    r2 = pickle.loads(pickle.dumps(r))
    assert r2.is_open and r2.read_idx(4) == RECORDS[4]
    assert r.read_idx(2) == RECORDS[2]


def test_pack_unpack():
    header, s = mx.recordio.unpack(mx.recordio.pack(mx.recordio.IRHeader(9, 3.5, 12, 1), b'xy'))
    # a scalar label forces flag 0
    assert (header.flag, header.label, header.id, header.id2, s) == (0, 3.5, 12, 1, b'xy')
    header, s = mx.recordio.unpack(mx.recordio.pack((0, [1, 2, 3], 5, 0), b'payload'))
    assert header.flag == 3 and header.label.dtype == np.float32
    assert header.label.tolist() == [1.0, 2.0, 3.0] and s == b'payload'
    assert len(mx.recordio.pack((0, 1, 2, 0), b'')) == 24


def test_errors_name_the_file(tmp_path):
    with pytest.raises(MXNetError, match='cannot open'):
        mx.recordio.MXRecordIO(str(tmp_path / 'missing.rec'), 'r')
    with pytest.raises(ValueError, match='Invalid flag'):
        mx.recordio.MXRecordIO(str(tmp_path / 'a.rec'), 'x')
    bad = tmp_path / 'bad.rec'
    bad.write_bytes(b'not a recordio file')
    r = mx.recordio.MXRecordIO(str(bad), 'r')
    with pytest.raises(MXNetError, match='bad.rec.*magic'):
        r.read()
    cut = tmp_path / 'cut.rec'
    cut.write_bytes(MAGIC + struct.pack('<I', 100) + b'short')
    with pytest.raises(MXNetError, match='cut.rec ends inside a record'):
        mx.recordio.MXRecordIO(str(cut), 'r').read()
    with pytest.raises(MXNetError, match='24-byte header'):
        mx.recordio.unpack(b'abc')


def test_image_records(tmp_path):
    pytest.importorskip('PIL')
    img = (np.arange(6 * 8 * 3).reshape(6, 8, 3) * 5 % 256).astype(np.uint8)
    s = mx.recordio.pack_img((0, 4.0, 1, 0), img, img_fmt='.png')
    header, out = mx.recordio.unpack_img(s)
    assert header.label == 4.0 and out.shape == (6, 8, 3) and (out == img).all()
    header, gray = mx.recordio.unpack_img(s, iscolor=0)
    assert gray.shape == (6, 8)
    # JPEG is lossy: close, not equal
    header, out = mx.recordio.unpack_img(mx.recordio.pack_img((0, 4.0, 1, 0), img, quality=100))
    assert np.abs(out.astype(int) - img).mean() < 8


def test_files_read_in_mxnet_and_back(tmp_path, mxnet_ref):
    """neomx writes, MXNet 1.9.1 reads; MXNet writes the same records: the files are equal."""
    idx, rec = str(tmp_path / 'n.idx'), str(tmp_path / 'n.rec')
    _write(idx, rec, RECORDS + [mx.recordio.pack((0, [1.5, 2.0], 7, 0), b'img')])
    with open(tmp_path / 'recs.pkl', 'wb') as f:
        pickle.dump(RECORDS, f)
    out = mxnet_ref(r'''
import pickle, mxnet as mx
recs = pickle.load(open('recs.pkl', 'rb'))
r = mx.recordio.MXIndexedRecordIO('n.idx', 'n.rec', 'r')
assert [r.read_idx(i) for i in range(len(recs))] == recs
h, s = mx.recordio.unpack(r.read_idx(len(recs)))
print(h.flag, h.label.tolist(), h.id, s)
w = mx.recordio.MXIndexedRecordIO('m.idx', 'm.rec', 'w')
for i, x in enumerate(recs):
    w.write_idx(i, x)
w.write_idx(len(recs), mx.recordio.pack(mx.recordio.IRHeader(0, [1.5, 2.0], 7, 0), b'img'))
w.close()
''', cwd=str(tmp_path))
    assert out.split() == ['2', '[1.5,', '2.0]', '7', "b'img'"]
    assert open(tmp_path / 'm.rec', 'rb').read() == open(rec, 'rb').read()
    assert open(tmp_path / 'm.idx').read() == open(idx).read()
    r = mx.recordio.MXIndexedRecordIO(str(tmp_path / 'm.idx'), str(tmp_path / 'm.rec'), 'r')
    assert [r.read_idx(i) for i in range(len(RECORDS))] == RECORDS
    assert os.path.getsize(rec) % 4 == 0
