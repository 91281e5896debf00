"""The seeds' asynchronous-computation code (d2l, "Computational Performance": asynchronous
computation and automatic parallelism) runs as written on neomx.

The code is the seeds' own; the tests assert what it computes and that the calls the seeds
call synchronising (wait_to_read, waitall, asnumpy, asscalar, print) leave nothing pending.
Times are printed by the seeds' Benchmark class and never asserted."""
import os
import re
import subprocess
import sys
import threading
import time
import types

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx.engine.var import pending

# The seeds' Benchmark class, verbatim.
BENCHMARK = '''
class Benchmark():  # 本类已保存在d2lzh包中方便以后使用
    def __init__(self, prefix=None):
        self.prefix = prefix + ' ' if prefix else ''

    def __enter__(self):
        self.start = time.time()

    def __exit__(self, *args):
        print('%stime: %.4f sec' % (self.prefix, time.time() - self.start))
'''


def _benchmark_class():
    ns = {'time': time}
    exec(BENCHMARK, ns)
    return ns['Benchmark']


Benchmark = _benchmark_class()
d2l = types.SimpleNamespace(Benchmark=Benchmark)   # the seeds call it as d2l.Benchmark too

TIME = r'time: \d+\.\d{4} sec\n'   # what Benchmark prints after its prefix


def _complete(a):
    """True when no operation writing ``a`` is pending."""
    return not pending(a._var)


def _dot_sum_reference(x):
    """sum(x @ x) in float64 without the O(n^3) product: sum_k colsum_k(x) * rowsum_k(x)."""
    x = x.astype(np.float64)
    return float((x.sum(axis=0) * x.sum(axis=1)).sum())




def test_workloads_are_queued(capsys):
    # Hold the worker of cpu(0) so that nothing queued can run before the checks below;
    # the seed's code itself is unchanged.
    gate = threading.Event()
    hold = nd.zeros((1,))
    mx.engine.push(gate.wait, [], [hold._var], mx.cpu(0), 'hold')
    try:
        with Benchmark('Workloads are queued.'):
            x = nd.random.uniform(shape=(2000, 2000))
            y = nd.dot(x, x).sum()
        # The block returned with the work still queued; shapes are known all the same.
        assert not _complete(x) and not _complete(y)
        assert x.shape == (2000, 2000) and y.shape == (1,)
    finally:
        gate.set()
    with Benchmark('Workloads are finished.'):
        print('sum =', y)
    out = capsys.readouterr().out
    assert re.match(r'Workloads are queued\. ' + TIME, out)
    assert re.search(r'sum = \n\[[-+.e\d]+\]\n<NDArray 1 @cpu\(0\)>\n', out)
    assert re.search(r'Workloads are finished\. ' + TIME, out)
    xs = x.asnumpy()
    assert 0 <= xs.min() and xs.max() < 1
    np.testing.assert_allclose(y.asscalar(), _dot_sum_reference(xs), rtol=1e-4)


def test_synchronising_functions(capsys):
    # The seeds use the 2000 x 2000 x from above; 1000 x 1000 keeps the test quick.
    x = nd.random.uniform(shape=(1000, 1000))
    xs = x.asnumpy()
    expected = _dot_sum_reference(xs)
    with Benchmark():
        y = nd.dot(x, x).sum()
        y.wait_to_read()
    assert _complete(y)
    np.testing.assert_allclose(y.asscalar(), expected, rtol=1e-4)

    with Benchmark():
        y = nd.dot(x, x)
        z = nd.dot(x, x)
        nd.waitall()
    assert _complete(y) and _complete(z)
    np.testing.assert_array_equal(y.asnumpy(), z.asnumpy())

    with Benchmark():
        y = nd.dot(x, x)
        a = y.asnumpy()
    assert isinstance(a, np.ndarray) and a.shape == (1000, 1000) and a.dtype == np.float32
    np.testing.assert_allclose(a.sum(dtype=np.float64), expected, rtol=1e-4)

    with Benchmark():
        y = nd.dot(x, x)
        s = y.sum().asscalar()
    assert isinstance(s, np.float32)
    np.testing.assert_allclose(s, expected, rtol=1e-4)
    out = capsys.readouterr().out
    assert re.fullmatch(TIME * 4, out)


def test_synchronous_and_asynchronous_loops():
    # The seeds' "y = x + 1" a thousand times, waiting each step or only at the end.
    x = nd.random.uniform(shape=(1, 512))
    with Benchmark('synchronous.'):
        for _ in range(1000):
            y = x + 1
            y.wait_to_read()
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy() + 1)
    with Benchmark('asynchronous.'):
        for _ in range(1000):
            y = x + 1
        nd.waitall()
    assert _complete(y)
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy() + 1)


def test_a_times_b_plus_2():
    a = nd.ones((1, 2))
    b = nd.ones((1, 2))
    c = a * b + 2
    # What the seed's notebook shows for `c` (MXNet 1.9.1 prints exactly this).
    assert repr(c) == '\n[[3. 3.]]\n<NDArray 1x2 @cpu(0)>'
    assert _complete(c)
    assert c.asnumpy().tolist() == [[3.0, 3.0]]


def run(x):
    with d2l.Benchmark('Run.'):
        list = [nd.dot(x, x) for _ in range(10)]  # noqa: A001 - the seed's own name
    return list


def test_run_ten_dots_on_cpu(capsys):
    x_cpu = nd.random.uniform(shape=(20, 20))
    results = run(x_cpu)
    nd.waitall()
    assert re.fullmatch(r'Run\. ' + TIME, capsys.readouterr().out)
    assert len(results) == 10 and all(_complete(r) for r in results)
    expected = x_cpu.asnumpy() @ x_cpu.asnumpy()
    for r in results:
        assert r.shape == (20, 20) and r.context == mx.cpu(0)
        np.testing.assert_allclose(r.asnumpy(), expected, rtol=1e-5)


@pytest.mark.gpu
def test_run_ten_dots_on_gpu(capsys):
    x_cpu = nd.random.uniform(shape=(20, 20))
    x_gpu = nd.random.uniform(shape=(20, 20), ctx=mx.gpu(0))
    on_cpu, on_gpu = run(x_cpu), run(x_gpu)
    nd.waitall()
    assert capsys.readouterr().out.count('Run. time:') == 2
    for xs, results in ((x_cpu, on_cpu), (x_gpu, on_gpu)):
        expected = xs.asnumpy() @ xs.asnumpy()
        for r in results:
            assert r.context == xs.context
            np.testing.assert_allclose(r.asnumpy(), expected, rtol=1e-4)


SEED_SCRIPT = '''
import time
import mxnet as mx
from mxnet import autograd, gluon, nd
import os
import subprocess
''' + BENCHMARK + '''
# 通过这个基准类来测试时间。
with Benchmark('Workloads are queued.'):
    x = nd.random.uniform(shape=(2000, 2000))
    y = nd.dot(x, x).sum()

with Benchmark('Workloads are finished.'):
    print('sum =', y)

a = nd.ones((1, 2))
b = nd.ones((1, 2))
c = a * b + 2
print(c)

def run(x):
    with Benchmark('Run.'):
        list = [nd.dot(x, x) for _ in range(10)]
    return list
x_cpu = nd.random.uniform(shape=(20, 20))
run(x_cpu)
nd.waitall()
print('expected sum = %.6e' % float((x.asnumpy().astype('float64').sum(axis=0)
                                    * x.asnumpy().astype('float64').sum(axis=1)).sum()))
print('arrays from', type(x).__module__)
'''


def test_seed_runs_as_an_mxnet_script(tmp_path):
    """`neomx run` gives the seed's `import mxnet` to neomx, unchanged."""
    script = tmp_path / 'async_seed.py'
    script.write_text(SEED_SCRIPT, encoding='utf-8')
    r = subprocess.run([sys.executable, '-m', 'neomx', 'run', str(script)], capture_output=True,
                       text=True, timeout=300, cwd=str(tmp_path),
                       env=dict(os.environ, PYTHONIOENCODING='utf-8'))
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    assert re.search(r'Workloads are queued\. ' + TIME, out)
    got = float(re.search(r'sum = \n\[([-+.e\d]+)\]\n<NDArray 1 @cpu\(0\)>', out).group(1))
    expected = float(re.search(r'expected sum = (\S+)', out).group(1))
    assert got == pytest.approx(expected, rel=1e-4)
    assert '\n[[3. 3.]]\n<NDArray 1x2 @cpu(0)>\n' in out
    assert re.search(r'Run\. ' + TIME, out)
    assert out.splitlines()[-1].startswith('arrays from neomx.')
