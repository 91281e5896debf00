"""Errors that name the file or operator at fault and say what was expected, where they once
ended in an AttributeError, NumPy's words or a doubled prefix."""
import os
import re
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
    with pytest.raises(mx.MXNetError, match=r'big\.params: .*shape at offset 36 reads '
                                            r'\(0, 4611686018427387904\): an array of that '
                                            r'shape and dtype float32 cannot exist'):
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


# -- corrupt files: the first field at fault, with the file, the record and the offset ----------

def _saved(tmp_path):
    path = tmp_path / 'net.params'
    nd.save(str(path), {'w': nd.array([[1, 2], [3, 4]]), 'b': nd.array([7], dtype='int32')})
    return path, path.read_bytes()


def _flip(raw, at, bit=0):
    return raw[:at] + bytes([raw[at] ^ (1 << bit)]) + raw[at + 1:]


@pytest.mark.parametrize('case, at, bit, expect', [
    # a V2 record's magic read as V1: MXNet 1.9.1 says "Invalid NDArray file format"; read on,
    # record 0 is an empty V1 record and record 1 starts in the middle of it
    ('magic', 24, 0, r'record 0 \(offset 24\): magic at offset 24 reads 0xF993FAC8, where the '
                     r'rest of the file fits 0xF993FAC9: the file is corrupt \(read as it is, '
                     r'record 1 \(offset 32\): magic at offset 32 reads 0x00000002'),
    # one more dimension shifts every field after it: noticed at the device type
    ('ndim', 32, 0, r'record 0 \(offset 24\): ndim at offset 32 reads 3, where the rest of the '
                    r'file fits 2: .*device type at offset 60 reads 0'),
    # a longer record: noticed where the next record should start
    ('dimension', 36, 0, r'record 0 \(offset 24\): dimension 0 at offset 36 reads 3, where the '
                         r'rest of the file fits 2: .*record 1 \(offset \d+\): magic'),
    ('dtype flag', 60, 0, r'record 0 \(offset 24\): dtype flag at offset 60 reads 1, where the '
                          r'rest of the file fits 0'),
    # one array fewer: the next record read as the names ("2 arrays but 4187224777 names")
    ('array count', 16, 1, r'header: array count at offset 16 reads 0, where the rest of the '
                           r'file fits 2'),
])
def test_a_corrupt_field_is_named_not_one_further_on(tmp_path, case, at, bit, expect):
    path, raw = _saved(tmp_path)
    path.write_bytes(_flip(raw, at, bit))
    with pytest.raises(mx.MXNetError, match=r'^%s: %s' % (re.escape(str(path)), expect)):
        nd.load(str(path))


def test_records_end_exactly_at_the_names_and_the_names_at_the_end(tmp_path):
    path, raw = _saved(tmp_path)
    path.write_bytes(raw + b'\0\0')
    with pytest.raises(mx.MXNetError, match=r'net\.params: names \(offset \d+\): end of the '
                                            r'names at offset \d+ is not the end of the file: '
                                            r'2 more bytes follow; or, if the file\'s length is '
                                            r'right, names .*: length of name 1 at offset 133 '
                                            r'reads 1, where the rest of the file fits 3'):
        nd.load(str(path))
    path.write_bytes(raw[:-3])
    with pytest.raises(mx.MXNetError, match=r'net\.params: names .* is cut off: the file ends '
                                            r'at byte \d+ \(truncated\)'):
        nd.load(str(path))


def _in_thread(fn, fifo):
    """Runs ``fn``; if it is still running after 20 s (blocked on ``fifo``), releases it by
    opening the FIFO for writing, and fails."""
    import threading
    box = []

    def run():
        try:
            box.append(fn())
        except BaseException as e:      # noqa: B902 - handed to the test
            box.append(e)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(20)
    if t.is_alive():
        with open(fifo, 'wb'):
            pass
        t.join(20)
        pytest.fail('blocked on the FIFO %s' % fifo)
    return box[0]


@pytest.mark.skipif(not hasattr(os, 'mkfifo'), reason='no FIFOs here')
def test_loading_from_a_fifo_or_a_directory_is_refused_at_once(tmp_path):
    fifo = str(tmp_path / 'pipe')
    os.mkfifo(fifo)
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize()
    real = str(tmp_path / 'net')
    net.hybridize()
    net(nd.ones((1, 3)))
    net.export(real)
    loaders = {
        'nd.load': lambda p: nd.load(p),
        'load_parameters': lambda p: net.load_parameters(p),
        'sym.load': lambda p: mx.sym.load(p),
        'imports (symbol file)': lambda p: gluon.SymbolBlock.imports(p, ['data']),
        'imports (params file)': lambda p: gluon.SymbolBlock.imports(
            real + '-symbol.json', ['data'], p),
    }
    for name, load in loaders.items():
        err = _in_thread(lambda: load(fifo), fifo)
        assert isinstance(err, mx.MXNetError), (name, err)
        assert re.search(r'cannot read .*pipe: a FIFO \(named pipe\), not a regular file',
                         str(err)), (name, str(err))
        folder = str(tmp_path / ('dir-symbol.json' if 'sym' in name else 'dir.params'))
        os.makedirs(folder, exist_ok=True)
        with pytest.raises(mx.MXNetError, match=r'cannot read .*dir.*: a directory, not a '
                                                r'regular file'):
            load(folder)
    trainer = gluon.Trainer(net.collect_params(), 'sgd')
    err = _in_thread(lambda: trainer.load_states(fifo), fifo)
    assert isinstance(err, OSError) and 'FIFO' in str(err), err


# -- errors at the call, in the caller's words ---------------------------------------------------

@pytest.mark.parametrize('make, name', [
    (lambda: nd.random.uniform(shape=(-2,)), '_random_uniform'),
    (lambda: nd.random.normal(shape=(2, -1)), '_random_normal'),
    (lambda: nd.random.randint(0, 5, shape=(-3,)), '_random_randint'),
    (lambda: nd.random.exponential(shape=(-1,)), '_random_exponential'),
    (lambda: nd.random.randn(2, -3), '_random_normal'),
    (lambda: nd.random.uniform(nd.zeros((2,)), nd.ones((2,)), shape=(-2,)), '_sample_uniform'),
    (lambda: nd.random.multinomial(nd.ones((2, 3)) / 3, shape=(-1,)), '_sample_multinomial'),
    (lambda: nd.random_uniform(shape=(-2, 2)), '_random_uniform'),
    (lambda: nd.zeros((-2,)), 'zeros'),
    (lambda: nd.full((-1,), 3), 'full'),
])
def test_a_negative_shape_fails_at_the_call(make, name):
    # MXNet 1.9.1: "shape dim size must be >= -1, while received -2", also at the call
    with pytest.raises(mx.MXNetError, match=r'^%s: shape \(.*\) has a negative dimension'
                                            % re.escape(name)):
        make()


def test_negative_sizes_of_eye_and_linspace_fail_at_the_call():
    with pytest.raises(mx.MXNetError, match=r'^_eye: N=-1, M=0: a dimension cannot be negative'):
        nd.eye(-1)
    with pytest.raises(mx.MXNetError, match=r'^_linspace: num=-1: the number of values cannot '
                                            r'be negative'):
        nd.linspace(0, 1, -1)


@pytest.mark.parametrize('make, name', [
    (lambda: nd.zeros((10 ** 6, 10 ** 6)), '_zeros'),
    (lambda: nd.random.uniform(shape=(10 ** 6, 10 ** 6)), '_random_uniform'),
    (lambda: nd.broadcast_to(nd.ones((1, 1)), shape=(10 ** 6, 10 ** 6)), 'broadcast_to'),
    (lambda: nd.tile(nd.ones((1000,)), reps=(10 ** 6, 10 ** 3)), 'tile'),    # the fast path
])
def test_an_allocation_larger_than_the_device_says_how_much_at_the_call(make, name):
    # torch says, at the next synchronisation, "DefaultCPUAllocator: can't allocate memory";
    # MXNet 1.9.1 "Size of tensor you are trying to allocate is larger than 2^31 elements"
    with pytest.raises(mx.MXNetError, match=r'^%s: the result \(float32 \(1000000, 1000000\)\) '
                                            r'needs 3\.6 TiB of memory, more than the [\d.]+ '
                                            r'[GTM]iB cpu\(0\) has \(at .*test_error_messages'
                                            % re.escape(name)):
        make()


def test_a_custom_function_whose_backward_returns_the_wrong_shape_is_named():
    from neomx import autograd

    class Square(autograd.Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x * x

        def backward(self, dy):
            return nd.ones((3,))

    class Broadcast(autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return nd.ones((2,))            # broadcasts to (2, 2): MXNet assigns it so

    x = nd.ones((2, 2))
    x.attach_grad()
    with autograd.record():
        y = Square()(x)
    y.backward()
    with pytest.raises(mx.MXNetError, match=r'Square\.backward returned a gradient of shape '
                                            r'\(3,\) for input 0, of shape \(2, 2\)'):
        x.grad.asnumpy()
    with autograd.record():
        y = Broadcast()(x)
    y.backward()
    assert x.grad.asnumpy().tolist() == [[1, 1], [1, 1]]


def test_trainer_step_before_the_first_forward_says_initialisation_was_deferred():
    net = gluon.nn.Dense(2)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    # MXNet 1.9.1's words (not a warning that the gradients are stale)
    with pytest.raises(gluon.parameter.DeferredInitializationError,
                       match=r"Parameter 'dense\d+_weight' has not been initialized yet because "
                             r"initialization was deferred\. Actual initialization happens "
                             r"during the first forward pass"):
        trainer.step(1)
    with pytest.raises(gluon.parameter.DeferredInitializationError):
        trainer.allreduce_grads()


@pytest.mark.parametrize('make, shape, bad', [
    (lambda: gluon.nn.Dense(-3), r'\(-3, 0\)', -3),
    (lambda: gluon.nn.Dense(3, in_units=-2), r'\(3, -2\)', -2),
    (lambda: gluon.nn.Conv2D(-3, 3), r'\(-3, 0, 3, 3\)', -3),
])
def test_a_negative_layer_size_says_a_dimension_cannot_be_negative(make, shape, bad):
    # MXNet 1.9.1: "shape dimension size cannot be less than 0, while received -3" (an
    # AssertionError at initialize); neomx says it when the layer is made
    with pytest.raises(AssertionError, match=r"Parameter '\w+' of shape %s: shape dimension size "
                                             r"cannot be less than 0, while received %d"
                                             % (shape, bad)):
        make()


def _reported_failures():
    """The messages of the failures waitall still has to report (it reports one a call)."""
    out = []
    while True:
        try:
            nd.waitall()
            return out
        except mx.MXNetError as e:
            out.append(str(e))


@pytest.mark.parametrize('hybridize', [False, True])
def test_a_failed_prediction_leaves_batch_norm_usable(hybridize):
    # Predicting, BatchNorm only reads its moving statistics: a forward pass that fails (on
    # a failed input here; an interruption alike) does not fail them, and the next
    # predictions and training steps run. MXNet writes them only in training too.
    import numpy as np
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(3, in_units=3), mx.gluon.nn.BatchNorm(in_channels=3))
    net.initialize()
    if hybridize:
        net.hybridize()
    x = nd.array(np.eye(3))
    want = net(x).asnumpy()
    _reported_failures()                # (earlier tests' failures)
    bad = nd.linalg.potrf(-x)           # fails when it runs
    with pytest.raises(mx.MXNetError, match='_linalg_potrf'):
        net(bad).asnumpy()
    assert any('_linalg_potrf' in m for m in _reported_failures())
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    with mx.autograd.record():
        net(x).sum().backward()
    assert np.abs(net[1].running_mean.data().asnumpy()).sum() > 0     # training wrote them
