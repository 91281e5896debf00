"""``nd.save`` / ``nd.load``: MXNet's binary format, bit for bit, in both directions; clear
errors for corrupt files; atomic writes."""
import os
import signal
import struct
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx.base import MXNetError
from test_engine import failing

# Every dtype neomx stores; int16 is a neomx extension MXNet 1.9.1 cannot read back
# ("Unknown type enum 8"), so it is left out of the files given to MXNet.
DTYPES = ['float32', 'float64', 'float16', 'uint8', 'int32', 'int8', 'int64', 'bool', 'int16',
          'bfloat16']
MX_DTYPES = [d for d in DTYPES if d != 'int16']
# Exactly representable in every dtype above (bool keeps only zero / non-zero).
VALUES = np.array([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], dtype=np.float64)


def _values(dtype):
    if dtype == 'bool':
        return VALUES % 2 == 1
    if dtype == 'int8':
        return VALUES - 6
    if dtype in ('float32', 'float64', 'float16', 'bfloat16'):
        return VALUES * 0.25 - 1
    return VALUES


def _make(dtype, ctx=None):
    return nd.array(_values(dtype).astype(np.float64), ctx=ctx).astype(dtype)


def _as_float(a):
    """An array's values as float64 numpy (bfloat16 has no numpy dtype)."""
    return a.astype('float64').asnumpy()


def _dtype(a):
    return a._dtype  # the canonical name, also for bfloat16 (whose .dtype numpy cannot express)


# -- round trips in neomx -------------------------------------------------------------------

@pytest.mark.parametrize('dtype', DTYPES)
def test_round_trip_each_dtype(tmp_path, dtype):
    a = _make(dtype)
    path = tmp_path / 'a.nd'
    nd.save(str(path), a)
    (b,) = nd.load(str(path))
    assert _dtype(b) == dtype
    assert b.shape == (3, 4)
    assert b.context == mx.cpu(0)
    np.testing.assert_array_equal(_as_float(b), _values(dtype).astype(np.float64))
    # Loading and saving again gives the same bytes.
    nd.save(str(tmp_path / 'b.nd'), [b])
    assert (tmp_path / 'b.nd').read_bytes() == path.read_bytes()


def test_round_trip_list_dict_and_shapes(tmp_path):
    rs = np.random.RandomState(0)
    arrays = [nd.array(rs.randn(*s)) for s in [(1,), (5,), (2, 3), (2, 1, 3, 1), (2, 2, 2, 2, 2)]]
    arrays.append(nd.array(np.zeros((0, 3))))    # zero-size arrays keep their shape
    nd.save(str(tmp_path / 'list.nd'), arrays)
    back = nd.load(str(tmp_path / 'list.nd'))
    assert isinstance(back, list) and len(back) == len(arrays)
    for a, b in zip(arrays, back):
        assert b.shape == a.shape
        np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())

    named = {'w': arrays[2], 'b': arrays[1], 'unicode-ключ': arrays[0], '': arrays[3]}
    nd.save(str(tmp_path / 'dict.nd'), named)
    back = nd.load(str(tmp_path / 'dict.nd'))
    assert isinstance(back, dict)
    assert list(back) == list(named)     # file order is the dict's order
    for k in named:
        np.testing.assert_array_equal(back[k].asnumpy(), named[k].asnumpy())


def test_empty_list_and_dict(tmp_path):
    # MXNet writes both as the same 32 bytes: header, 0 arrays, 0 names.
    expected = struct.pack('<QQQQ', 0x112, 0, 0, 0)
    nd.save(str(tmp_path / 'l.nd'), [])
    nd.save(str(tmp_path / 'd.nd'), {})
    assert (tmp_path / 'l.nd').read_bytes() == expected
    assert (tmp_path / 'd.nd').read_bytes() == expected
    assert nd.load(str(tmp_path / 'l.nd')) == []


def test_save_waits_for_pending_work_and_views(tmp_path):
    x = nd.ones((4, 3))
    for _ in range(20):
        x += 1
    view = x[1:3]            # a view: only its rows are written
    nd.save(str(tmp_path / 'v.nd'), {'x': x, 'view': view, 'on_cpu1': x.as_in_context(mx.cpu(1))})
    back = nd.load(str(tmp_path / 'v.nd'))
    np.testing.assert_array_equal(back['x'].asnumpy(), np.full((4, 3), 21, np.float32))
    assert back['view'].shape == (2, 3)
    np.testing.assert_array_equal(back['view'].asnumpy(), np.full((2, 3), 21, np.float32))
    # As in MXNet, a cpu(1) array records device id 1 and loads on cpu(0).
    assert back['on_cpu1'].context == mx.cpu(0)


def test_dumps_matches_save_and_load_frombuffer(tmp_path):
    data = {'a': _make('float32'), 'b': _make('int64')}
    nd.save(str(tmp_path / 'f.nd'), data)
    raw = (tmp_path / 'f.nd').read_bytes()
    assert nd.utils.dumps(data) == raw
    back = nd.load_frombuffer(raw)
    np.testing.assert_array_equal(back['b'].asnumpy(), _values('int64'))


def test_record_layout_is_mxnet_v2():
    # One float32 array of shape (2,) on cpu: the bytes MXNet 1.9.1 writes.
    raw = nd.utils.dumps([nd.array([1.0, 2.0])])
    expected = (struct.pack('<QQQ', 0x112, 0, 1)
                + struct.pack('<Iii', 0xF993FAC9, 0, 1) + struct.pack('<q', 2)
                + struct.pack('<iii', 1, 0, 0) + struct.pack('<2f', 1.0, 2.0)
                + struct.pack('<Q', 0))
    assert raw == expected


def test_reads_v1_v3_and_legacy_records(tmp_path):
    data = struct.pack('<3f', 1.0, 2.0, 3.0)
    tail = struct.pack('<iii', 1, 0, 0) + data
    records = {
        'v1': struct.pack('<Ii', 0xF993FAC8, 1) + struct.pack('<q', 3) + tail,
        'v3': struct.pack('<Iii', 0xF993FACA, 0, 1) + struct.pack('<q', 3) + tail,
        'legacy': struct.pack('<II', 1, 3) + tail,   # no magic: u32 ndim, u32 dims
    }
    for kind, rec in records.items():
        path = tmp_path / (kind + '.nd')
        path.write_bytes(struct.pack('<QQQ', 0x112, 0, 1) + rec + struct.pack('<Q', 0))
        # As in MXNet, V3 records (written under NumPy shape semantics) load only under them.
        with mx.np_shape(kind == 'v3'):
            (a,) = nd.load(str(path))
        np.testing.assert_array_equal(a.asnumpy(), [1, 2, 3], err_msg=kind)
    with pytest.raises(mx.MXNetError, match='np shape semantics'):
        nd.load(str(tmp_path / 'v3.nd'))
    with mx.np_shape(True), pytest.raises(mx.MXNetError, match='np shape semantics'):
        nd.load(str(tmp_path / 'v1.nd'))


def test_np_shape_records_keep_0d_and_zero_size_arrays(tmp_path):
    path = str(tmp_path / 'x.nd')
    with mx.np_shape(True):
        nd.save(path, [nd.array(np.ones(())), nd.zeros((2, 0, 3))])
        a, b = nd.load(path)
    assert a.shape == () and a.asscalar() == 1 and b.shape == (2, 0, 3)
    nd.save(path, [nd.array(np.zeros((0, 4)))])   # V2 records round-trip zero sizes too
    assert nd.load(path)[0].shape == (0, 4)


def test_getstate_and_setstate_hold_the_record():
    x = nd.array([[1, 2], [3, 4]], dtype='int32')
    state = x.__getstate__()
    assert isinstance(state['handle'], bytearray)
    y = nd.zeros(1)
    y.__setstate__(state)
    assert y.shape == (2, 2) and y.dtype == np.int32 and y.asnumpy().tolist() == [[1, 2], [3, 4]]


def test_gpu_record_loads_on_cpu_without_gpu(tmp_path):
    if mx.num_gpus():
        pytest.skip('this machine has a GPU')
    raw = bytearray(nd.utils.dumps([nd.array([5.0, 6.0])]))
    dev = 24 + 12 + 8                  # header, magic/stype/ndim, one dim
    raw[dev:dev + 8] = struct.pack('<ii', 2, 0)
    (a,) = nd.load_frombuffer(bytes(raw))
    assert a.context == mx.cpu(0)
    np.testing.assert_array_equal(a.asnumpy(), [5, 6])


def test_save_rejects_bad_data_with_mxnet_exception_types(tmp_path):
    path = str(tmp_path / 'x.nd')
    with pytest.raises(TypeError, match='str->NDArray'):
        nd.save(path, {1: nd.ones(1)})
    with pytest.raises(TypeError, match='str->NDArray'):
        nd.save(path, [nd.ones(1), np.ones(1)])
    with pytest.raises(TypeError, match='str->NDArray'):
        nd.save(path, {'a': 1})
    with pytest.raises(ValueError, match='NDArray'):
        nd.save(path, 3)
    assert not os.path.exists(path)


def test_save_to_missing_folder_names_the_path(tmp_path):
    path = str(tmp_path / 'no' / 'such' / 'dir' / 'x.nd')
    with pytest.raises(MXNetError, match='save: cannot write .*x.nd'):
        nd.save(path, [nd.ones(1)])


def test_saved_file_mode_follows_umask(tmp_path):
    old = os.umask(0o022)
    try:
        nd.save(str(tmp_path / 'm.nd'), [nd.ones(1)])
        with open(str(tmp_path / 'plain'), 'wb'):
            pass
    finally:
        os.umask(old)
    assert (os.stat(str(tmp_path / 'm.nd')).st_mode & 0o777
            == os.stat(str(tmp_path / 'plain')).st_mode & 0o777 == 0o644)


# -- corrupt files --------------------------------------------------------------------------

def _good_file(tmp_path):
    path = tmp_path / 'good.nd'
    nd.save(str(path), {'w': nd.array([[1, 2], [3, 4]]), 'bias': nd.array([7], dtype='int32')})
    return path.read_bytes()


def _load_bytes(tmp_path, raw, name='bad.nd'):
    path = tmp_path / name
    path.write_bytes(raw)
    return nd.load(str(path))


def test_every_truncation_is_a_clear_error(tmp_path):
    raw = _good_file(tmp_path)
    for n in range(len(raw)):
        with pytest.raises(MXNetError) as info:
            _load_bytes(tmp_path, raw[:n], 'cut%d.nd' % n)
        assert 'cut%d.nd' % n in str(info.value)
        assert 'truncated' in str(info.value) or n == 0
    assert 'truncated' in str(pytest.raises(MXNetError, _load_bytes, tmp_path, b'').value)


@pytest.mark.parametrize('case', ['magic', 'record magic', 'dtype', 'negative dim', 'huge dims',
                                  'ndim', 'sparse', 'names', 'utf8', 'text'])
def test_corrupt_file_is_a_clear_error(tmp_path, case):
    raw = bytearray(_good_file(tmp_path))
    rec = 24                            # the first record
    dims = rec + 12                     # its two i64 dims
    flag = dims + 16 + 8                # its type flag
    expect = {'magic': r'header: magic at offset 0 reads 0x00000113, where the rest of the '
                       r'file fits 0x00000112: .*not an MXNet NDArray file',
              'record magic': r'record 0 \(offset 24\): magic at offset 24 reads 0xDEADBEEF',
              'dtype': r'record 0 \(offset 24\): dtype flag at offset 60 reads 99: expected one '
                       r'of 0 \(float32\)',
              'negative dim': 'dimension 0 at offset 36 reads -2: a dimension cannot be negative',
              'huge dims': r'shape at offset 36 reads \(1099511627776, 1099511627776\): '
                           r'1208925819614629174706176 elements, more than the \d+ bytes left',
              'ndim': 'ndim at offset 32 reads 1000: expected 0 to 32',
              'sparse': r'storage type at offset 28 reads 1, where the rest of the file fits 0: '
                        r'the file is corrupt \(read as it is, record 0',
              'names': r'names \(offset 116\): name count at offset 116 reads 3, where the rest '
                       r'of the file fits 2',
              'utf8': 'not UTF-8',
              'text': r'header: magic at offset 0 reads 0x\w+: not an MXNet NDArray file'}[case]
    if case == 'magic':
        raw[0:8] = struct.pack('<Q', 0x113)
    elif case == 'record magic':
        raw[rec:rec + 4] = struct.pack('<I', 0xDEADBEEF)
    elif case == 'dtype':
        raw[flag:flag + 4] = struct.pack('<i', 99)
    elif case == 'negative dim':
        raw[dims:dims + 8] = struct.pack('<q', -2)
    elif case == 'huge dims':           # 2**40 x 2**40 elements must not wrap around or allocate
        raw[dims:dims + 16] = struct.pack('<qq', 1 << 40, 1 << 40)
    elif case == 'ndim':
        raw[rec + 8:rec + 12] = struct.pack('<i', 1000)
    elif case == 'sparse':
        raw[rec + 4:rec + 8] = struct.pack('<i', 1)
    elif case == 'names':
        names_at = raw.rindex(struct.pack('<Q', 2) + struct.pack('<Q', 1) + b'w')
        raw[names_at:names_at + 8] = struct.pack('<Q', 3)
    elif case == 'utf8':
        at = raw.rindex(b'bias')
        raw[at:at + 4] = b'\xff\xfe\xfd\xfc'
    elif case == 'text':
        raw = bytearray(b'This is a text file, not a checkpoint at all.\n' * 3)
    with pytest.raises(MXNetError, match=expect) as info:
        _load_bytes(tmp_path, bytes(raw))
    assert 'bad.nd' in str(info.value)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(MXNetError, match='cannot read .*nothing.nd'):
        nd.load(str(tmp_path / 'nothing.nd'))
    with pytest.raises(MXNetError, match='cannot read'):
        nd.load(str(tmp_path))


# -- atomic writes --------------------------------------------------------------------------

def _old_checkpoint(tmp_path):
    path = tmp_path / 'ckpt.params'
    nd.save(str(path), {'w': nd.ones((100, 10))})
    return path, path.read_bytes()


def _leftovers(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir() if p.name != 'ckpt.params')


def test_failure_mid_write_keeps_old_file(tmp_path, monkeypatch):
    path, before = _old_checkpoint(tmp_path)
    from neomx import atomic as utils        # where the writing happens

    real_open = open

    class HalfFile:
        """Writes half of what it is given, then fails as a full disk would."""

        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            self.f.write(bytes(data[:len(data) // 2]))
            self.f.flush()
            raise OSError(28, 'No space left on device')

    def half_open(fd, mode='r', *args, **kwargs):
        return HalfFile(real_open(fd, mode, *args, **kwargs))

    monkeypatch.setattr(utils, 'open', half_open, raising=False)
    with pytest.raises(MXNetError, match='No space left'):
        nd.save(str(path), {'w': nd.zeros((100, 10))})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert _leftovers(tmp_path) == []
    np.testing.assert_array_equal(nd.load(str(path))['w'].asnumpy(), np.ones((100, 10)))


def test_interrupt_before_rename_keeps_old_file(tmp_path, monkeypatch):
    path, before = _old_checkpoint(tmp_path)
    from neomx import atomic as utils

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(utils.os, 'replace', interrupted)
    with pytest.raises(KeyboardInterrupt):
        nd.save(str(path), {'w': nd.zeros((100, 10))})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert _leftovers(tmp_path) == []


def test_failed_array_is_not_written(tmp_path):
    path, before = _old_checkpoint(tmp_path)
    bad, _ = failing(nd.array([1, -2]))      # fails when it runs
    with pytest.raises(MXNetError, match='check_positive'):
        nd.save(str(path), {'w': bad})
    assert path.read_bytes() == before


def test_killed_writer_never_leaves_a_partial_file(tmp_path):
    """A process killed at an arbitrary moment while saving leaves a complete file."""
    path = tmp_path / 'ckpt.params'
    child = textwrap.dedent('''
        import sys, neomx as mx
        i = 0
        while True:
            i += 1
            mx.nd.save(sys.argv[1], {'w': mx.nd.full((2000, 1000), i)})
            if i == 1:
                print('saved', flush=True)
    ''')
    proc = subprocess.Popen([sys.executable, '-c', child, str(path)], stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == b'saved'
        time.sleep(0.4)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    w = nd.load(str(path))['w'].asnumpy()
    assert w.shape == (2000, 1000)
    assert w.min() == w.max() >= 1


# -- against real MXNet 1.9.1 ---------------------------------------------------------------

_REF_PRELUDE = '''
import numpy as np, mxnet as mx
BF16 = np.dtype([('bfloat16', np.uint16)])
def mxtype(name):
    return BF16 if name == 'bfloat16' else name
VALUES = np.array(%r, dtype=np.float64)
def values(dtype):
    if dtype == 'bool':
        return VALUES %% 2 == 1
    if dtype == 'int8':
        return VALUES - 6
    if dtype in ('float32', 'float64', 'float16', 'bfloat16'):
        return VALUES * 0.25 - 1
    return VALUES
''' % (VALUES.tolist(),)


def test_files_written_by_mxnet_load_in_neomx(tmp_path, mxnet_ref):
    mxnet_ref(_REF_PRELUDE + textwrap.dedent('''
        arrays = {d: mx.nd.array(values(d).astype(np.float64), dtype='float64').astype(mxtype(d))
                  for d in %r}
        mx.nd.save('dict.nd', arrays)
        mx.nd.save('list.nd', [arrays['float32'], arrays['int64'][1:2], arrays['uint8'].T])
        mx.nd.save('single.nd', arrays['float16'])
        mx.nd.save('empty.nd', [])
        mx.nd.save('cpu1.nd', [mx.nd.ones((2, 2), ctx=mx.cpu(1))])
        rs = np.random.RandomState(3)
        big = mx.nd.array(rs.randn(64, 33))
        mx.nd.save('big.nd', {'big': big})
        np.save('big.npy', big.asnumpy())
    ''' % (MX_DTYPES,)), cwd=str(tmp_path))
    d = nd.load(str(tmp_path / 'dict.nd'))
    assert list(d) == MX_DTYPES
    for name, a in d.items():
        assert _dtype(a) == name
        assert a.shape == (3, 4)
        np.testing.assert_array_equal(_as_float(a), _values(name).astype(np.float64), err_msg=name)
    lst = nd.load(str(tmp_path / 'list.nd'))
    assert [a.shape for a in lst] == [(3, 4), (1, 4), (4, 3)]
    np.testing.assert_array_equal(lst[1].asnumpy(), _values('int64')[1:2])
    np.testing.assert_array_equal(lst[2].asnumpy(), _values('uint8').T)
    (single,) = nd.load(str(tmp_path / 'single.nd'))
    assert _dtype(single) == 'float16'
    assert nd.load(str(tmp_path / 'empty.nd')) == []
    (c1,) = nd.load(str(tmp_path / 'cpu1.nd'))
    assert c1.context == mx.cpu(0)
    np.testing.assert_array_equal(nd.load(str(tmp_path / 'big.nd'))['big'].asnumpy(),
                                  np.load(str(tmp_path / 'big.npy')))
    # Bit for bit: saving what was loaded gives back MXNet's bytes.
    for name in ('dict.nd', 'list.nd', 'single.nd', 'empty.nd', 'big.nd'):
        again = tmp_path / ('again-' + name)
        nd.save(str(again), nd.load(str(tmp_path / name)))
        assert again.read_bytes() == (tmp_path / name).read_bytes(), name


def test_sparse_records_of_mxnet_are_read_with_their_layout_checked(tmp_path, mxnet_ref):
    """MXNet's csr and row_sparse records read as such (their layout: the storage shape, each
    index array's dtype and shape); index arrays no such array can have are an error naming
    the record."""
    mxnet_ref(textwrap.dedent('''
        import mxnet as mx
        csr = mx.nd.array([[0, 1, 0], [2, 0, 0]]).tostype('csr')
        rsp = mx.nd.array([[0, 0], [3, 4], [0, 0]]).tostype('row_sparse')
        mx.nd.save('sparse.nd', {'d': mx.nd.ones((2,)), 'c': csr, 'r': rsp})
    '''), cwd=str(tmp_path))
    from neomx.ndarray.utils import _Layout
    raw = (tmp_path / 'sparse.nd').read_bytes()
    records, names = _Layout(memoryview(raw)).file()
    assert names == ['d', 'c', 'r']
    assert [(r.stype, r.dims, r.values) for r in records] == [
        (0, (2,), None), (2, (2, 3), (2,)), (1, (3, 2), (1, 2))]
    d = nd.load(str(tmp_path / 'sparse.nd'))
    assert (d['c'].stype, d['r'].stype) == ('csr', 'row_sparse')
    assert d['c'].asnumpy().tolist() == [[0, 1, 0], [2, 0, 0]]
    assert d['r'].asnumpy().tolist() == [[0, 0], [3, 4], [0, 0]]
    # the csr array's column indices, the last 16 bytes before its row_sparse neighbour
    rsp_start = records[2].start
    bad = bytearray(raw)
    bad[rsp_start - 8:rsp_start] = struct.pack('<q', 7)
    (tmp_path / 'bad.nd').write_bytes(bytes(bad))
    with pytest.raises(MXNetError, match=r'bad\.nd: record 1 \(offset \d+\): the index data at '
                                         r'offset \d+ of the csr array of shape \(2, 3\) hold '
                                         r'column indices outside \[0, 3\): the file is corrupt'):
        nd.load(str(tmp_path / 'bad.nd'))


def test_files_written_by_neomx_load_in_mxnet(tmp_path, mxnet_ref):
    arrays = {d: _make(d) for d in MX_DTYPES}
    nd.save(str(tmp_path / 'dict.nd'), arrays)
    rs = np.random.RandomState(4)
    x = nd.array(rs.randn(6, 5))
    nd.save(str(tmp_path / 'list.nd'), [x, x[2:4], x.T, nd.zeros((1,), dtype='int8')])
    nd.save(str(tmp_path / 'empty.nd'), [])
    np.save(str(tmp_path / 'x.npy'), x.asnumpy())
    out = mxnet_ref(_REF_PRELUDE + textwrap.dedent('''
        d = mx.nd.load('dict.nd')
        assert list(d) == %r, list(d)
        for name, a in d.items():
            assert a.dtype == np.dtype(mxtype(name)), (name, a.dtype)
            assert a.shape == (3, 4), (name, a.shape)
            got = a.astype('float64').asnumpy()
            assert (got == values(name).astype(np.float64)).all(), (name, got)
        mx.nd.save('dict-again.nd', d)
        x = np.load('x.npy')
        l = mx.nd.load('list.nd')
        assert [a.shape for a in l] == [(6, 5), (2, 5), (5, 6), (1,)]
        assert (l[0].asnumpy() == x).all() and (l[1].asnumpy() == x[2:4]).all()
        assert (l[2].asnumpy() == x.T).all() and l[3].dtype == np.int8
        mx.nd.save('list-again.nd', l)
        assert mx.nd.load('empty.nd') == []
        print('ok')
    ''' % (MX_DTYPES,)), cwd=str(tmp_path))
    assert out.strip().endswith('ok')
    # MXNet writes the same bytes back: neomx's files are MXNet's format exactly.
    assert (tmp_path / 'dict-again.nd').read_bytes() == (tmp_path / 'dict.nd').read_bytes()
    assert (tmp_path / 'list-again.nd').read_bytes() == (tmp_path / 'list.nd').read_bytes()


def test_gluon_params_written_by_mxnet(tmp_path, mxnet_ref):
    mxnet_ref(textwrap.dedent('''
        import numpy as np, mxnet as mx
        from mxnet.gluon import nn
        mx.random.seed(7)
        net = nn.HybridSequential()
        net.add(nn.Dense(5, in_units=4, activation='relu'), nn.Dense(3, in_units=5))
        net.initialize(mx.init.Xavier())
        net.save_parameters('net.params')
        params = net._collect_params_with_prefix()
        np.savez('values.npz', **{k: v.data().asnumpy() for k, v in params.items()})
        net.hybridize()
        x = mx.nd.ones((2, 4))
        np.save('y.npy', net(x).asnumpy())
        net.export('net', epoch=3)
    '''), cwd=str(tmp_path))
    expected = np.load(str(tmp_path / 'values.npz'))
    params = nd.load(str(tmp_path / 'net.params'))
    assert sorted(params) == ['0.bias', '0.weight', '1.bias', '1.weight']
    assert params['0.weight'].shape == (5, 4) and params['1.bias'].shape == (3,)
    for k, v in params.items():
        assert v.dtype == np.float32
        np.testing.assert_array_equal(v.asnumpy(), expected[k])
    # The loaded weights compute what MXNet computed.
    x = nd.ones((2, 4))
    h = nd.relu(nd.dot(x, params['0.weight'], transpose_b=True) + params['0.bias'])
    y = nd.dot(h, params['1.weight'], transpose_b=True) + params['1.bias']
    np.testing.assert_allclose(y.asnumpy(), np.load(str(tmp_path / 'y.npy')), rtol=1e-5, atol=1e-6)
    # export() names parameters arg:<name>.
    exported = nd.load(str(tmp_path / 'net-0003.params'))
    assert len(exported) == 4 and all(k.startswith('arg:') for k in exported)
    assert sorted(v.shape for v in exported.values()) == sorted(v.shape for v in params.values())
