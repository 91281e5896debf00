"""DataLoader worker processes never hang and never outlive their loader: dropped passes and
loaders, a worker that raises, a worker killed by a signal, Ctrl-C, the interpreter exiting
with a loader alive, and the parent killed outright. The bounded forms run here; the stress
suite (``stress``: the cases in fresh processes) repeats them NEOMX_STRESS times."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from neomx.gluon.data import DataLoader, Dataset
from neomx.gluon.data.dataloader import DataLoaderWorkerError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STRESS = int(os.environ.get('NEOMX_STRESS', '1'))


def alive(pid):
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (FileNotFoundError, ProcessLookupError):
        return False
    except OSError:     # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False


def wait_gone(pids, timeout=10.0):
    """The processes of ``pids`` still alive after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def start_child(code):
    """A fresh Python running ``code`` (with faulthandler on), its output as text lines."""
    env = dict(os.environ, PYTHONFAULTHANDLER='1')
    return subprocess.Popen([sys.executable, '-c', textwrap.dedent(code)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(child, timeout):
    """(stdout, stderr) of ``child``, failing the test if it runs past ``timeout``."""
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        pytest.fail('the child hung (killed after %ss):\n%s\n%s' % (timeout, out[-2000:],
                                                                    err[-6000:]))
    return out, err


def worker_pids(out):
    return [int(p) for line in out.splitlines() if line.startswith('workers ')
            for p in line.split()[1:]]


# MXNet 1.9.1's test_multi_worker_dataloader_release_pool hung here in Pool.terminate.
RELEASE_POOL = '''
import numpy as np
from neomx.gluon.data import DataLoader
A = np.random.rand(999, 2000)
for _ in range(%d):
    D = DataLoader(A, batch_size=8, num_workers=8)
    it = iter(D)
    x = next(it)
    assert x.shape == (8, 2000)
    print('workers', *[p.pid for p in D._worker_pool._procs], flush=True)
    del it, D
print('done', flush=True)
'''


def release_pool(rounds, timeout):
    out, err = finish(start_child(RELEASE_POOL % rounds), timeout)
    assert out.rstrip().endswith('done'), err[-6000:]
    pids = worker_pids(out)
    assert len(pids) == 8 * rounds
    assert wait_gone(pids) == [], 'orphaned workers'


@pytest.mark.stress
def test_dropped_loaders_release_their_workers():
    for _ in range(STRESS):
        release_pool(10, 300)


class _Range(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.float32(i)


def test_dropped_and_concurrent_passes():
    loader = DataLoader(_Range(100), 3, num_workers=3)
    for k in range(12):
        it = iter(loader)
        for _ in range(k % 5):
            next(it)
        del it                      # its batches in flight are dropped as they arrive
    assert np.concatenate([b.asnumpy() for b in loader]).tolist() == list(range(100))
    a, b = iter(loader), iter(loader)
    assert next(a).asnumpy().tolist() == [0, 1, 2]
    assert next(b).asnumpy().tolist() == [0, 1, 2]
    assert next(a).asnumpy().tolist() == [3, 4, 5]
    assert len(list(b)) == 33
    pids = [p.pid for p in loader._worker_pool._procs]
    del loader, a, b
    assert wait_gone(pids) == []


def test_a_pass_counts_the_cores_its_workers_take(monkeypatch):
    """While a pass of a loader with worker processes is wanted, the engine counts the cores
    they take from its kernels (engine.threads.share_cores): one per process while they make
    the pass's first batches, asked ahead together; then their CPU time per second of the
    pass, once each has made two batches; none once the last live pass is dropped or done.
    (The workers' CPU clock is faked: forked after the patch, they read it.)"""
    import itertools
    from neomx.gluon.data import dataloader
    calls = []
    monkeypatch.setattr(dataloader, 'share_cores', calls.append)
    monkeypatch.setattr(time, 'process_time', lambda: 0.0)   # batches made in no time
    loader = DataLoader(_Range(60), 3, num_workers=3)
    assert calls == []
    a = iter(loader)
    next(a)
    assert calls[0] == 3
    b = iter(loader)        # a second live pass: the same workers, counted once
    for _ in range(8):
        next(a)
        next(b)
    assert calls[0] == 3 and len(calls) > 1 and abs(sum(calls)) < 1e-9
    del a
    assert len(list(b)) == 12 and abs(sum(calls)) < 1e-9
    del b
    assert abs(sum(calls)) < 1e-9
    del calls[:]
    # workers busy 10 s (of their clock) per batch: they take every core asked of them
    monkeypatch.setattr(time, 'process_time', itertools.count(0.0, 10.0).__next__)
    busy = DataLoader(_Range(60), 3, num_workers=3)
    a = iter(busy)
    for _ in range(10):
        next(a)
    assert calls[0] == 3 and sum(calls) > 3
    del a
    assert abs(sum(calls)) < 1e-9
    del loader, busy


class _DiesOnce(Dataset):
    """Its worker kills itself with SIGKILL at sample 6 while ``flag`` does not exist."""

    def __init__(self, flag):
        self.flag = flag

    def __len__(self):
        return 16

    def __getitem__(self, i):
        if i == 6 and not os.path.exists(self.flag):
            open(self.flag, 'w').close()
            os.kill(os.getpid(), signal.SIGKILL)
        return np.float32(i)


def test_worker_killed_by_a_signal(tmp_path):
    for i in range(STRESS):
        loader = DataLoader(_DiesOnce(str(tmp_path / ('died%d' % i))), 2, num_workers=2,
                            timeout=60)
        start = time.monotonic()
        with pytest.raises(DataLoaderWorkerError, match=r'worker process \d \(pid \d+\) was '
                                                         r'killed by SIGKILL .*while making batch 3'):
            list(loader)
        assert time.monotonic() - start < 10
        # the next pass has new workers (and the flag: no worker dies)
        assert [b.asnumpy().tolist() for b in loader] == [[2 * k, 2 * k + 1] for k in range(8)]


def test_worker_error_keeps_its_type_and_traceback():
    class Failing(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            if i == 5:
                raise KeyError('sample %d is broken' % i)
            return np.float32(i)

    loader = DataLoader(Failing(), 2, num_workers=2)
    for _ in range(2):      # the workers live on after an error
        with pytest.raises(KeyError, match='sample 5 is broken') as e:
            list(loader)
        assert 'in __getitem__' in str(e.value.__cause__)


INTERRUPTED = '''
import signal, time
# as in an interactive program: a process started in the background inherits SIGINT ignored
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
from neomx.gluon.data import DataLoader, Dataset

class Slow(Dataset):
    def __len__(self):
        return 10000

    def __getitem__(self, i):
        time.sleep(0.02)
        return np.float32(i)

loader = DataLoader(Slow(), 4, num_workers=2)
print('workers', *[p.pid for p in loader._worker_pool._procs], flush=True)
try:
    for i, b in enumerate(loader):
        if i == 2:
            print('ready', flush=True)
except KeyboardInterrupt:
    print('interrupted', flush=True)
print('after', next(iter(loader)).asnumpy().tolist(), flush=True)
'''


def interrupted(timeout=120):
    """Ctrl-C in the middle of a pass: KeyboardInterrupt in the parent only; the loader still
    works, and its workers end with the interpreter."""
    child = start_child(INTERRUPTED)
    lines = []
    deadline = time.monotonic() + timeout
    for line in child.stdout:
        lines.append(line)
        if line.startswith('ready'):
            break
        if time.monotonic() > deadline:
            break
    child.send_signal(signal.SIGINT)
    out, err = finish(child, timeout)
    out = ''.join(lines) + out
    assert child.returncode == 0, err[-6000:]
    assert 'interrupted' in out and 'after [0.0, 1.0, 2.0, 3.0]' in out, out
    assert wait_gone(worker_pids(out)) == []


@pytest.mark.stress
def test_ctrl_c():
    for _ in range(STRESS):
        interrupted()


AT_EXIT = '''
import os, signal
import numpy as np
from neomx.gluon.data import DataLoader
loader = DataLoader(np.random.rand(99, 20), batch_size=8, num_workers=3)
it = iter(loader)
next(it)
print('workers', *[p.pid for p in loader._worker_pool._procs], flush=True)
if %r:
    os.kill(os.getpid(), signal.SIGKILL)
'''


def ends_with_parent(kill, timeout=120):
    out, err = finish(start_child(AT_EXIT % kill), timeout)
    pids = worker_pids(out)
    assert len(pids) == 3, err[-6000:]
    # At exit the loader stops its workers; killed outright, its workers notice within a
    # second or two (their pipe's end, or their parent's pid).
    assert wait_gone(pids, 15) == [], 'orphaned workers'


@pytest.mark.stress
@pytest.mark.parametrize('kill', [False, True], ids=['exit', 'parent-killed'])
def test_workers_end_with_their_parent(kill):
    for _ in range(STRESS):
        ends_with_parent(kill)
