"""The stress suite: the runs that once crashed, hung or grew without bound, repeated.

Marked ``stress``: the plain test command (and .ci/run, with PYTHONFAULTHANDLER=1 so that a
crash shows every thread's stack) runs a bounded form; ``NEOMX_STRESS=N`` repeats each case N
times (or makes it N times longer) for a longer run:

    NEOMX_STRESS=20 PYTHONFAULTHANDLER=1 python -m pytest -m stress tests

The DataLoader cases are in test_dataloader_workers.py and the lost-worker jobs of dist_sync
in test_dist.py, marked the same way.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx.engine import ThreadedEngine

pytestmark = pytest.mark.stress

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STRESS = int(os.environ.get('NEOMX_STRESS', '1'))


def run_child(code, args=(), env=None, timeout=300):
    """Runs ``code`` in a fresh Python (faulthandler on: a crash prints every thread's stack,
    and the child dumps them itself before ``timeout``); returns the JSON it prints last."""
    full = dict(os.environ, PYTHONFAULTHANDLER='1', CHILD_TIMEOUT=str(timeout - 10))
    full.update(env or {})
    try:
        r = subprocess.run([sys.executable, '-c', textwrap.dedent(code)] + [str(a) for a in args],
                           cwd=ROOT, env=full, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail('the child hung (killed after %d s):\n%s' % (timeout, (e.stderr or b'')[-6000:]))
    assert r.returncode == 0, 'child failed (rc %d):\n%s\n%s' % (r.returncode, r.stdout[-2000:],
                                                                 r.stderr[-8000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


# -- data-parallel training of a conv net with batch norm ---------------------------------------

# On two CPU devices, from uint8 images turned into tensors by ToTensor (one channel: the
# layout that made torch's convolution corrupt memory), from the same values in an array with
# channels-last strides, and in a row-major array (the reference); oneDNN held to its AVX2
# kernels, the ones that went wrong.
TRAIN_CONV = '''
import faulthandler, json, os, sys
faulthandler.dump_traceback_later(int(os.environ['CHILD_TIMEOUT']), exit=True)
import numpy as np
import neomx as mx
from neomx import autograd, gluon, nd
from neomx.gluon import nn
from neomx.gluon.data.vision import transforms
from neomx.examples.train import Residual

hybridize, steps = sys.argv[1] == 'hybrid', int(sys.argv[2])
ctx = [mx.cpu(0), mx.cpu(1)]
rs = np.random.RandomState(0)
images = rs.randint(0, 256, (steps, 32, 28, 28, 1)).astype('uint8')
labels = rs.randint(0, 10, (steps, 32)).astype('float32')

def net():
    mx.random.seed(0)
    n = nn.HybridSequential()
    n.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'),
          Residual(4), Residual(8, use_1x1conv=True, strides=2),
          Residual(16, use_1x1conv=True, strides=2), nn.GlobalAvgPool2D(), nn.Dense(10))
    n.initialize(mx.init.Xavier(), ctx=ctx)
    if hybridize:
        n.hybridize()
    return n

to_tensor = transforms.ToTensor()
losses = {}
for source in ('to_tensor', 'strided', 'row_major'):
    n = net()
    trainer = gluon.Trainer(n.collect_params(), 'sgd', {'learning_rate': 0.1, 'momentum': 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    curve = []
    for s in range(steps):
        # Each device's half goes to the network as made (the way the main job feeds it).
        halves = [images[s][:16], images[s][16:]]
        if source == 'to_tensor':
            Xs = [to_tensor(nd.array(h, ctx=c, dtype='uint8')) for h, c in zip(halves, ctx)]
        elif source == 'strided':   # NumPy calls the transposed batch C-contiguous
            Xs = [nd.array(h.transpose(0, 3, 1, 2) / np.float32(255), ctx=c)
                  for h, c in zip(halves, ctx)]
        else:                       # the reference: made row-major by NumPy itself
            Xs = []
            for h, c in zip(halves, ctx):
                x = np.empty((16, 1, 28, 28), np.float32)
                x[:, 0] = h[..., 0] / np.float32(255)
                Xs.append(nd.array(x, ctx=c))
        ys = gluon.utils.split_and_load(nd.array(labels[s]), ctx)
        with autograd.record():
            ls = [loss_fn(n(x), y) for x, y in zip(Xs, ys)]
        for l in ls:
            l.backward()
        trainer.step(32)
        curve.append(sum(float(l.mean().asscalar()) for l in ls) / 2)
    losses[source] = curve
print(json.dumps(losses))
'''


@pytest.mark.parametrize('mode', ['imperative', 'hybrid'])
def test_data_parallel_conv_training(mode):
    for _ in range(STRESS):
        out = run_child(TRAIN_CONV, [mode, 12], env={'ONEDNN_MAX_CPU_ISA': 'AVX2'})
        ref = np.array(out['row_major'])
        assert np.isfinite(ref).all() and ref[-3:].mean() < ref[:3].mean()
        for source in ('to_tensor', 'strided'):
            # The same values in any layout: the same training, up to rounding.
            np.testing.assert_allclose(out[source], ref, rtol=1e-4, atol=1e-5, err_msg=source)


def test_main_job_resnet():
    """The README's job on ResNet (width 4), which crashed every time, with oneDNN's AVX2
    kernels."""
    for _ in range(STRESS):
        env = dict(os.environ, PYTHONFAULTHANDLER='1', ONEDNN_MAX_CPU_ISA='AVX2')
        r = subprocess.run([sys.executable, '-m', 'neomx.examples.train', '--model', 'resnet18',
                            '--resnet-width', '4', '--epochs', '1', '--max-batches', '10',
                            '--train-size', '640', '--test-size', '64', '--hybridize',
                            '--no-progress'], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-8000:]
        assert 'resnet18: 1 epochs' in r.stdout


# -- many Python threads pushing at once -------------------------------------------------------

THREADS = '''
import faulthandler, json, os, sys, threading
faulthandler.dump_traceback_later(int(os.environ['CHILD_TIMEOUT']), exit=True)
import numpy as np
import neomx as mx
from neomx import nd

N_THREADS, ITERS = 8, int(sys.argv[1])
shared = [nd.zeros((8, 8), ctx=mx.cpu(0)), nd.zeros((8, 8), ctx=mx.cpu(1))]
table = nd.zeros((N_THREADS, 16), ctx=mx.cpu(1))     # one row per thread, written by views
errors, results = [], {}

def work(t):
    try:
        rs = np.random.RandomState(t)
        ctx = mx.cpu(t % 2)
        m = rs.uniform(-0.5, 0.5, (8, 8)).astype(np.float32)
        a_np = rs.uniform(-1, 1, (8, 8)).astype(np.float32)
        a, w = nd.array(a_np, ctx=ctx), nd.array(m, ctx=ctx)
        acc, acc_np = nd.zeros((8, 8), ctx=ctx), np.zeros((8, 8), np.float32)
        for i in range(ITERS):
            k = i % 4
            if k == 0:      # a dependent chain on a private array
                a = nd.tanh(nd.dot(a, w))
                a_np = np.tanh(a_np @ m)
            elif k == 1:    # independent work, dropped
                nd.relu(a * 2 - 1)
            elif k == 2:    # in place on a private array
                acc += a
                acc_np += a_np
            else:           # in place on arrays every thread writes, on both devices
                shared[0] += 1
                shared[1] += 1
                table[t] += 1     # a view of one row
            if i % 97 == t:
                a.wait_to_read()
            if i % 500 == 499:
                nd.waitall()
        results[t] = (float(np.abs(a.asnumpy() - a_np).max()),
                      float(np.abs(acc.asnumpy() - acc_np).max()))
    except BaseException as e:
        errors.append(repr(e))

threads = [threading.Thread(target=work, args=(t,)) for t in range(N_THREADS)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print(json.dumps({'errors': errors, 'done': len(results),
                  'worst': max(max(r) for r in results.values()) if results else None,
                  'shared': [float(s.asnumpy().min()) for s in shared] +
                            [float(s.asnumpy().max()) for s in shared],
                  'table': table.asnumpy()[:, 0].tolist()}))
'''


def test_eight_threads_against_numpy():
    iters = 2000 * STRESS
    out = run_child(THREADS, [iters])
    assert out['errors'] == [] and out['done'] == 8
    assert out['worst'] < 1e-3, out['worst']
    n = 8 * (iters // 4)
    assert out['shared'] == [n] * 4
    assert out['table'] == [iters // 4] * 8


# -- random programs under both engines ------------------------------------------------------

@pytest.mark.parametrize('seed', [21, 22])
def test_long_random_programs_agree_between_engines(seed):
    from test_engine import _random_nd_program
    steps = 10000 * STRESS
    with mx.engine.engine_scope(ThreadedEngine()):
        threaded, seen_t = _random_nd_program(seed, steps)
    with mx.engine.engine_scope('NaiveEngine'):
        naive, seen_n = _random_nd_program(seed, steps)
    assert len(seen_t) == len(seen_n) > 0
    for x, y in zip(seen_t + threaded, seen_n + naive):
        np.testing.assert_array_equal(x, y)


# -- a long training loop that never synchronises ---------------------------------------------

UNSYNCED = '''
import faulthandler, json, os, sys
faulthandler.dump_traceback_later(int(os.environ['CHILD_TIMEOUT']), exit=True)
import numpy as np
import neomx as mx
from neomx import autograd, gluon, nd
from neomx.gluon import nn

def rss():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20

steps = int(sys.argv[1])
ctx = [mx.cpu(0), mx.cpu(1)]
net = nn.HybridSequential()
net.add(nn.Dense(256, activation='relu'), nn.Dense(256, activation='relu'), nn.Dense(10))
net.initialize(mx.init.Xavier(), ctx=ctx)
net.hybridize()
trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.05})
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
rs = np.random.RandomState(0)
X = nd.array(rs.uniform(size=(64, 512)))
Y = nd.array(rs.randint(0, 10, 64))
Xs, Ys = gluon.utils.split_and_load(X, ctx), gluon.utils.split_and_load(Y, ctx)
total = [nd.zeros((1,), ctx=c) for c in ctx]
samples = []
for step in range(steps):
    with autograd.record():
        ls = [loss_fn(net(x), y) for x, y in zip(Xs, Ys)]
    for l in ls:
        l.backward()
    trainer.step(64)
    for t, l in zip(total, ls):
        t += l.sum()
    if step == 100:
        nd.waitall()
        base = rss()
    if step > 100 and step % 100 == 0:
        samples.append(rss() - base)     # no synchronisation in the loop
nd.waitall()
print(json.dumps({'growth_mb': samples, 'loss': sum(float(t.asscalar()) for t in total)}))
'''


def test_unsynchronised_training_stays_within_memory():
    """2,000 steps queued without a synchronisation: back-pressure holds the resident memory
    within 16 MB of what it was after 100 steps (measured: under 1 MB; with
    NEOMX_ENGINE_MAX_INFLIGHT=0, no back-pressure, it grew by 62 MB)."""
    out = run_child(UNSYNCED, [2000 * STRESS], timeout=600)
    assert np.isfinite(out['loss'])
    assert max(out['growth_mb']) < 16, out['growth_mb']


# -- failed arrays: every read raises, from many threads, and nothing is kept -----------------

def _fail_and_read(rounds, errors):
    """Fails an operator ``rounds`` times; each failed array, a view of it and an array
    computed from it must raise at every read, and independent work must be right."""
    import weakref
    kept = []
    for i in range(rounds):
        bad = nd.linalg.potrf(-nd.array(np.eye(3)))
        dep = (bad + 1) * 2
        view = bad[1]
        for x in (bad, dep, view, bad, dep):
            try:
                x.asnumpy()
                errors.append('round %d: a failed array was read' % i)
            except mx.MXNetError as e:
                if 'potrf' not in str(e):
                    errors.append('round %d: %s' % (i, e))
        if (nd.ones((3,)) * i).asnumpy().tolist() != [i] * 3:
            errors.append('round %d: independent work went wrong' % i)
        kept.append(weakref.ref(bad._var))
    return kept


@pytest.mark.parametrize('kind', ['ThreadedEngine', 'NaiveEngine'])
def test_failed_arrays_raise_at_every_read_from_many_threads(kind):
    import gc
    import threading
    rounds = 100 * STRESS
    errors, refs = [], []
    with mx.engine.engine_scope(kind):
        threads = [threading.Thread(target=lambda: refs.extend(_fail_and_read(rounds, errors)))
                   for _ in range(4 if kind == 'ThreadedEngine' else 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=240)
        assert not any(t.is_alive() for t in threads), 'a reading thread hung'
        assert errors == []
        # The failed arrays were dropped: freed at once (no cycle through their errors), and
        # so not reported by waitall.
        assert [r for r in refs if r() is not None] == []
        gc.collect()
        mx.nd.waitall()


# -- corrupt nd.save files: a clean error naming the file, or the arrays saved -----------------

def _saved_layout(raw):
    """The bytes of ``raw`` (an nd.save file) whose corruption no reader can notice, as the
    format has no checksum: the values (and a sparse array's indices), the names, and each
    record's dtype flag (another flag of the same width reads the same bytes); and, apart,
    those that may also change a shape: a csr array's column count and a row_sparse array's
    row count, which only the indices bound. Everything else is structure."""
    from neomx.ndarray.utils import _Layout
    layout = _Layout(memoryview(raw))
    records, names = layout.file()
    blind, reshaped = set(), set()
    for rec in records:
        blind.update(range(rec.data, rec.end))
    sparse = {'record %d (offset %d)' % (i, r.start): r.stype for i, r in enumerate(records)}
    for where, field, offset, _, _ in layout.fields:
        if field == 'dtype flag':
            blind.update(range(offset, offset + 4))
        elif (sparse.get(where), field) in ((2, 'dimension 1'), (1, 'dimension 0')):
            reshaped.update(range(offset, offset + 8))
    pos = records[-1].end + 8
    for name in names:
        blind.update(range(pos + 8, pos + 8 + len(name.encode())))
        pos += 8 + len(name.encode())
    return blind, reshaped


def _same_arrays(a, b):
    return (list(a) == list(b) and
            all(a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and
                a[k].asnumpy().tobytes() == b[k].asnumpy().tobytes() for k in a))


def test_corrupt_files_load_right_or_name_the_file(tmp_path):
    """Every bit of an nd.save file flipped, every byte dropped or doubled, and the file cut at
    every length: each load gives the arrays saved or an MXNetError naming the file (for a
    corrupt record, the record and the offset). A flip the format cannot notice (the values,
    a name, a dtype flag turned into another of the same width) may load other values, but
    never another number of arrays or other names' count, nor other shapes (but for a sparse
    array's column or row count, which only its indices bound: see ``_saved_layout``)."""
    saved = {'w': nd.array([[1, 2], [3, 4.5]]), 'b': nd.array([7], dtype='int32'),
             'h': nd.array([1, 2, 3], dtype='float16'),
             's': nd.array([[0, 1, 0], [2, 0, 0]]).tostype('csr')}
    good = tmp_path / 'good.params'
    nd.save(str(good), saved)
    raw = good.read_bytes()
    ref = nd.load(str(good))
    blind, reshaped = _saved_layout(raw)
    cases = [('flip%d.%d' % (i, b), raw[:i] + bytes([raw[i] ^ (1 << b)]) + raw[i + 1:])
             for i in range(len(raw)) for b in range(8)]
    cases += [('drop%d' % i, raw[:i] + raw[i + 1:]) for i in range(len(raw))]
    cases += [('double%d' % i, raw[:i + 1] + raw[i:]) for i in range(len(raw))]
    cases += [('cut%d' % n, raw[:n]) for n in range(len(raw))]
    path = tmp_path / 'corrupt.params'
    counts = {'error': 0, 'right': 0, 'blind': 0}
    for name, data in cases:
        path.write_bytes(data)
        try:
            out = nd.load(str(path))
        except mx.MXNetError as e:
            msg = str(e)
            assert msg.startswith(str(path) + ': '), (name, msg)
            assert ' at offset ' in msg, (name, msg)
            counts['error'] += 1
            continue
        if _same_arrays(out, ref):
            counts['right'] += 1
            continue
        at = int(name[4:].split('.')[0]) if name.startswith('flip') else -1
        assert at in blind | reshaped, (name, {k: (v.shape, v.dtype) for k, v in out.items()})
        assert len(out) == len(ref), name
        if at in blind:
            assert [v.shape for v in out.values()] == [v.shape for v in ref.values()], name
        counts['blind'] += 1
    # Every corruption of the structure is noticed; the loads that went through are the
    # changes no reader can see, or ones that change nothing (the reserved field, a device id).
    assert counts['error'] > 0.75 * len(cases), counts
