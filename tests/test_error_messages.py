"""Errors that name the file or operator at fault and say what was expected, where they once
ended in an AttributeError, NumPy's words or a doubled prefix."""
import struct
import sys

import pytest

import neomx as mx
from neomx import gluon, nd


def _record(ndim, dims=(), flag=0, data=b''):
    return (struct.pack('<Iii', 0xF993FAC9, 0, ndim) + struct.pack('<%dq' % len(dims), *dims)
            + struct.pack('<iii', 1, 0, flag) + data)


def _write(path, records, names):
    body = struct.pack('<QQQ', 0x112, 0, len(records)) + b''.join(records)
    body += struct.pack('<Q', len(names))
    for n in names:
        body += struct.pack('<Q', len(n)) + n.encode()
    path.write_bytes(body)
    return str(path)


@pytest.mark.parametrize('ndim', [0, -1])
def test_load_parameters_with_an_empty_record(tmp_path, ndim):
    # A record of ndim 0 (or -1) holds MXNet's "none" array: no shape, no values.
    path = _write(tmp_path / 'net.params',
                  [struct.pack('<Iii', 0xF993FAC9, 0, ndim), _record(1, (2,), 0, b'\0' * 8)],
                  ['weight', 'bias'])
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize()
    with pytest.raises(mx.MXNetError, match=r"Parameter '\w+weight' from file.*net\.params: it "
                                            r"holds an empty array .*expected an array of shape "
                                            r"\(2, 3\)"):
        net.load_parameters(path)
    with pytest.raises(mx.MXNetError, match=r"'\w+weight' from file: .*net\.params: it holds "
                                            r"an empty array"):
        net.collect_params().load(path, restore_prefix=net.prefix)


def test_load_impossible_shape_names_the_file(tmp_path):
    path = _write(tmp_path / 'big.params', [_record(2, (0, 2 ** 62))], ['weight'])
    with pytest.raises(mx.MXNetError, match=r'big\.params: corrupt record \(an array of shape '
                                            r'\(0, 4611686018427387904\) and dtype float32 '
                                            r'cannot exist'):
        nd.load(path)
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize()
    with pytest.raises(mx.MXNetError, match=r'big\.params'):
        net.load_parameters(path)


def test_operator_name_once():
    with pytest.raises(mx.MXNetError) as e:
        nd.FullyConnected(nd.ones((2, 3)), nd.ones((4, 5)), nd.ones((4,)), num_hidden=4)
    msg = str(e.value)
    assert msg.startswith('FullyConnected: weight has shape (4, 5), expected (4, 3); inputs ')
    assert msg.count('FullyConnected:') == 1
    with pytest.raises(mx.MXNetError, match=r'^dot: inner dimensions differ'):
        nd.dot(nd.ones((2, 3)), nd.ones((4, 5)))


def test_a_failed_array_raises_at_every_read_until_written(engine):
    # MXNet 1.9.1 raises the error once; then the failed array and what was computed from it
    # read as unset memory, and waitall passes.
    import numpy as np
    bad = nd.linalg.potrf(-nd.array(np.eye(3))); line = sys._getframe().f_lineno  # noqa: E702
    dep = bad + 1
    for x in (bad, bad, dep, dep, bad[0]):
        with pytest.raises(mx.MXNetError, match=r'operator _linalg_potrf failed: .*not '
                                                r'positive-definite') as info:
            x.asnumpy()
        assert '%s, line %d' % (__file__, line) in str(info.value)
    with pytest.raises(mx.MXNetError, match='_linalg_potrf'):
        nd.waitall()                    # once for each failure, though reads raised it
    nd.waitall()
    with pytest.raises(mx.MXNetError, match='_linalg_potrf'):
        dep.asnumpy()                   # still failed
    bad[:] = 1                          # overwritten whole: readable again
    assert bad.asnumpy().sum() == 9
