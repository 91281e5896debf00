"""Training across processes: the dist_sync KVStore on torch.distributed, `neomx launch`, the
distributed samplers, and workers that die or hang."""
import json
import os
import re
import runpy
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, nd
from neomx.base import MXNetError
from neomx.gluon.data.sampler_dist import DistributedSampler, SplitSampler

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STRESS = int(os.environ.get('NEOMX_STRESS', '1'))

# An MXNet 1.x training script, unchanged but for the sampler that shards the data: a small
# MLP on a synthetic problem, GLOBAL_BATCH samples per step split over the workers.
TRAIN = '''
import json, os, sys
import numpy as np
import mxnet as mx
from mxnet import autograd, gluon
from mxnet.gluon import nn
from neomx.gluon.data.sampler_dist import DistributedSampler

kvname, out = sys.argv[1], sys.argv[2]
GLOBAL_BATCH, STEPS = 32, 5
kv = mx.kv.create(kvname) if kvname != 'none' else None
rank, nw = (kv.rank, kv.num_workers) if kv else (0, 1)
mx.random.seed(0)
rs = np.random.RandomState(0)
X = rs.randn(GLOBAL_BATCH * STEPS, 20).astype('float32')
Y = rs.randint(0, 4, size=GLOBAL_BATCH * STEPS).astype('float32')
data = gluon.data.ArrayDataset(X, Y)
loader = gluon.data.DataLoader(data, batch_size=GLOBAL_BATCH // nw,
                               sampler=DistributedSampler(len(data), shuffle=False))
net = nn.HybridSequential()
net.add(nn.Dense(32, activation='relu'), nn.Dense(16, activation='relu'), nn.Dense(4))
net.initialize(mx.init.Xavier())
net.hybridize()
trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5, 'momentum': 0.9},
                        kvstore=kvname if kv else 'device')
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
for x, y in loader:
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(GLOBAL_BATCH)
params = net.collect_params()
mx.nd.waitall()
store = trainer._kvstore
served = store._bucketer.served if kv is not None and store._bucketer is not None else 0
if rank == 0:
    with open(out, 'w') as f:
        json.dump({'params': [params[k].data().asnumpy().tolist() for k in sorted(params)],
                   'workers': nw, 'served': served}, f)
'''


def _env(**extra):
    env = dict(os.environ)
    for k in ('PYTHONPATH', 'RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'MASTER_ADDR', 'MASTER_PORT'):
        env.pop(k, None)
    env['OMP_NUM_THREADS'] = '1'
    env.update(extra)
    return env


def test_launch_two_workers_match_one_process(tmp_path):
    script = tmp_path / 'train.py'
    script.write_text(TRAIN)
    # One process, the whole batch: run here, with `import mxnet` aliased as `neomx run` does.
    from neomx import _mxnet_alias
    was = _mxnet_alias.installed()
    argv = sys.argv
    _mxnet_alias.install()
    try:
        sys.argv = [str(script), 'none', str(tmp_path / 'one.json')]
        runpy.run_path(str(script), run_name='__main__')
    finally:
        sys.argv = argv
        if not was:
            _mxnet_alias.uninstall()
    # Two processes, half the batch each, launched as a user would; buckets of ~2 KB, so that
    # each layer's gradients start their allreduce on their own while backward goes on.
    r = subprocess.run([sys.executable, '-m', 'neomx', 'launch', '-n', '2', '--profile',
                        str(tmp_path / 'trace.json'), str(script), 'dist_sync',
                        str(tmp_path / 'two.json')],
                       cwd=str(tmp_path), env=_env(NEOMX_DIST_BUCKET_MB='0.002'),
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    one = json.loads((tmp_path / 'one.json').read_text())
    two = json.loads((tmp_path / 'two.json').read_text())
    assert two['workers'] == 2
    assert len(one['params']) == len(two['params']) == 6
    for a, b in zip(one['params'], two['params']):
        np.testing.assert_allclose(np.array(b), np.array(a), rtol=1e-5, atol=1e-6)
    # After the first step (which tells the store which arrays are gradients of which key),
    # every key's sum came from a bucket reduced during backward: 6 keys x 4 steps.
    assert two['served'] == 24
    # The trace shows it: bucket allreduces start inside a backward pass of cpu(0).
    trace = json.loads((tmp_path / 'trace-rank0.json').read_text())['traceEvents']
    names = {e['tid']: e['args']['name'] for e in trace if e.get('name') == 'thread_name'}
    backward = [(e['ts'], e['ts'] + e['dur']) for e in trace
                if e['ph'] == 'X' and e['name'] == '_backward' and names[e['tid']] == 'cpu(0)']
    buckets = [e['ts'] for e in trace if e['ph'] == 'X' and names[e['tid']] == 'dist:allreduce']
    assert len(buckets) >= 4 * 2
    assert any(a < t < b for t in buckets for a, b in backward)
    # The launcher merged both workers' traces into the file asked for.
    merged = json.loads((tmp_path / 'trace.json').read_text())['traceEvents']
    procs = {e['args']['name'].split(' (')[0] for e in merged if e.get('name') == 'process_name'}
    assert procs == {'neomx rank 0', 'neomx rank 1'}


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _start_workers(tmp_path, code, n=2, **env):
    """Starts ``n`` processes of ``code`` (run with `neomx run`) as one job, without a launcher
    that would stop the others when one exits."""
    script = tmp_path / 'worker.py'
    script.write_text(textwrap.dedent(code))
    port = str(_free_port())
    procs = []
    for rank in range(n):
        e = _env(RANK=str(rank), WORLD_SIZE=str(n), LOCAL_RANK=str(rank),
                 MASTER_ADDR='127.0.0.1', MASTER_PORT=port, **env)
        procs.append(subprocess.Popen([sys.executable, '-m', 'neomx', 'run', str(script)],
                                      cwd=str(tmp_path), env=e, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    return procs


SURVIVOR = '''
import os, sys, time
import mxnet as mx
kv = mx.kv.create('dist_sync')
kv.init(0, mx.nd.ones((1000,)) * (kv.rank + 1))
out = mx.nd.zeros((1000,))
kv.pull(0, out=out)
assert out.asnumpy()[0] == 1.0          # every worker starts from rank 0's value
kv.barrier()
if kv.rank == 1:
    %s
t0 = time.time()
try:
    for i in range(1000):
        g = mx.nd.ones((1000,))
        kv.pushpull(0, g)
        g.asnumpy()
    print('NO ERROR')
except mx.MXNetError as e:
    print('CAUGHT after %%.1f s: %%s' %% (time.time() - t0, e))
'''


# Training with a Trainer: the gradients are reduced in buckets during backward, on a process
# group of their own (which once waited 30 minutes whatever NEOMX_DIST_TIMEOUT said).
TRAINER_SURVIVOR = '''
import os, sys, time
import mxnet as mx
from mxnet import autograd, gluon, nd
kv = mx.kv.create('dist_sync')
net = gluon.nn.HybridSequential()
net.add(gluon.nn.Dense(64, activation='relu'), gluon.nn.Dense(10))
net.initialize(mx.init.Xavier())
trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1}, kvstore=kv)
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
x, y = nd.random.uniform(shape=(16, 20)), nd.array([i %% 10 for i in range(16)])
t0 = time.time()
try:
    for step in range(1000):
        if step == 5:
            if kv.rank == 1:
                %s
            t0 = time.time()
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(16)
        loss.asnumpy()
    print('NO ERROR')
except mx.MXNetError as e:
    print('CAUGHT after %%.1f s: %%s' %% (time.time() - t0, e))
print('served', trainer._kvstore._bucketer.served)
'''


def lost_worker(tmp_path, fate, code, timeout=4):
    """Rank 1 of a 2-process job dies or hangs; rank 0 fails with a clear error within the
    timeout (at once when the other dies)."""
    action = 'os._exit(3)' if fate == 'dies' else 'time.sleep(600)'
    procs = _start_workers(tmp_path, code % action, NEOMX_DIST_TIMEOUT=str(timeout),
                           PYTHONFAULTHANDLER='1')
    try:
        out, err = procs[0].communicate(timeout=120)
    except subprocess.TimeoutExpired:
        out, err = '', ''
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.communicate()
    assert 'CAUGHT' in out, 'rank 0 still waiting after 120 s, or failed otherwise:\n' + \
        out + err[-3000:]
    msg = out[out.index('CAUGHT'):]
    assert 'dist KVStore' in msg and 'worker 0 of 2' in msg
    assert 'died or stopped calling the KVStore' in msg and \
        'NEOMX_DIST_TIMEOUT=%d' % timeout in msg
    elapsed = float(msg.split('after ')[1].split(' s')[0])
    assert elapsed < timeout + 3, msg
    return out


HANGS_AT_STEP_5 = '''
import time
import mxnet as mx
kv = mx.kv.create('dist_sync')
kv.init(0, mx.nd.zeros((100,)))
for i in range(1000):
    if i == 5 and kv.rank == 0:
        time.sleep(600)                 # stops calling the KVStore
    g = mx.nd.ones((100,))
    kv.pushpull(0, g)
    g.asnumpy()
'''


def test_launcher_names_the_worker_that_stopped_calling_the_kvstore(tmp_path):
    """Rank 0 stops calling the KVStore and rank 1 times out waiting for it: torch's report
    names rank 1 (it failed first); the launcher names rank 0 as the root cause, and rank 1's
    error says that worker 0 stopped."""
    script = tmp_path / 'worker.py'
    script.write_text(HANGS_AT_STEP_5)
    r = subprocess.run([sys.executable, '-m', 'neomx', 'launch', '-n', '2', str(script)],
                       cwd=str(tmp_path), env=_env(NEOMX_DIST_TIMEOUT='4'),
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-4000:]
    assert re.search(r"neomx launch: root cause: rank 0 stopped calling the KVStore: it started "
                     r"(\d+) collective\(s\), the last at [\d:]+, while rank 1 started (\d+) "
                     r".*Torch's report names rank 1, which failed first: it gave up waiting "
                     r"for rank 0", r.stderr), r.stderr[-4000:]
    assert re.search(r'failed on worker 1 of 2: .*Worker 0 started \d+ collective\(s\), the '
                     r'last \d+ s ago, to this worker\'s \d+: it stopped calling the KVStore',
                     r.stderr), r.stderr[-4000:]


@pytest.mark.parametrize('fate', ['dies', 'hangs'])
def test_lost_worker_fails_the_others(tmp_path, fate):
    lost_worker(tmp_path, fate, SURVIVOR)


@pytest.mark.stress
@pytest.mark.parametrize('fate', ['dies', 'hangs'])
def test_lost_worker_fails_the_others_in_training(tmp_path, fate):
    for _ in range(STRESS):
        out = lost_worker(tmp_path, fate, TRAINER_SURVIVOR)
        assert 'gradient bucket' in out and 'served 0' not in out, out   # the buckets' path


# -- one process: the store alone ------------------------------------------------------------

def test_single_process_store():
    kv = mx.kv.create('dist_sync')
    assert (kv.type, kv.rank, kv.num_workers) == ('dist_sync', 0, 1)
    assert mx.kv.create('dist_device_sync').type == 'dist_device_sync'
    kv.init(['a', 'b'], [nd.ones((2, 3)), nd.zeros((4,))])
    vals = [nd.ones((2, 3), ctx=mx.cpu(0)) * 2, nd.ones((2, 3), ctx=mx.cpu(1)) * 3]
    kv.push('a', vals)
    out = [nd.zeros((2, 3), ctx=mx.cpu(0)), nd.zeros((2, 3), ctx=mx.cpu(1))]
    kv.pull('a', out=out)
    for o in out:
        assert o.asnumpy().tolist() == [[5.0] * 3] * 2
    kv.barrier()
    with pytest.raises(MXNetError, match="'b' holds shape"):
        kv.push('b', nd.ones((5,)))


@pytest.mark.parametrize('kind', ['dist_async', 'dist_device_async'])
def test_async_is_refused_with_reason(kind):
    with pytest.raises(MXNetError, match="parameter servers.*Use 'dist_sync'"):
        mx.kv.create(kind)


def _two_device_round(kv, ps, xs, edit=None):
    for p, x in zip(ps, xs):
        with autograd.record():
            loss = (nd.dot(x, p) ** 2).sum()
        loss.backward()
    if edit is not None:
        edit(ps)
    grads = [p.grad for p in ps]
    expect = sum(g.asnumpy() for g in grads)
    kv.pushpull(0, grads)
    return expect, [g.asnumpy() for g in grads]


@pytest.mark.parametrize('kind', ['dist_sync', 'dist_device_sync'])
def test_buckets_within_one_process_and_stale_gradients(kind):
    # Two devices in one process: the bucket sums both devices' gradients during backward;
    # a gradient changed after backward (in-place clipping) is reduced again by the push.
    kv = mx.kv.create(kind)
    ctxs = [mx.cpu(0), mx.cpu(1)]
    rs = np.random.RandomState(3)
    w = rs.randn(6, 4).astype('float32')
    ps = [nd.array(w, ctx=c) for c in ctxs]
    for p in ps:
        p.attach_grad()
    xs = [nd.array(rs.randn(5, 6), ctx=c) for c in ctxs]
    kv.init(0, ps[0])
    served = []
    for step in range(3):
        expect, got = _two_device_round(kv, ps, xs)
        for g in got:
            np.testing.assert_allclose(g, expect, rtol=1e-5)
        served.append(kv._bucketer.served)
    assert served == [0, 1, 2]          # the first push learns the gradients, then buckets

    def clip(ps):
        for p in ps:
            p.grad[:] = p.grad * 0.5
    expect, got = _two_device_round(kv, ps, xs, edit=clip)
    for g in got:
        np.testing.assert_allclose(g, expect, rtol=1e-5)
    assert kv._bucketer.served == 2     # not taken from the bucket


@pytest.mark.parametrize('on_store', [None, False])
def test_trainer_dist_sync_single_process_matches_device(on_store):
    from neomx import gluon
    from neomx.gluon import nn
    results = []
    for kvname in ('device', 'dist_sync'):
        mx.random.seed(7)
        net = nn.Dense(3, in_units=5)
        ctxs = [mx.cpu(0), mx.cpu(1)]
        net.initialize(mx.init.Xavier(), ctx=ctxs)
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1,
                                                              'momentum': 0.5},
                                kvstore=kvname, update_on_kvstore=on_store)
        rs = np.random.RandomState(0)
        for _ in range(3):
            for c in ctxs:
                x = nd.array(rs.randn(4, 5), ctx=c)
                with autograd.record():
                    loss = (net(x) ** 2).sum()
                loss.backward()
            trainer.step(8)
        results.append([p.data(mx.cpu(1)).asnumpy() for p in net.collect_params().values()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_distributed_sampler():
    shards = [list(DistributedSampler(10, num_replicas=3, rank=r, shuffle=False))
              for r in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    assert all(len(DistributedSampler(10, 3, r)) == 4 for r in range(3))
    # Shuffled: every process uses the same order for an epoch, a new one for the next.
    s = [DistributedSampler(12, num_replicas=2, rank=r, seed=5) for r in range(2)]
    e0 = [list(x) for x in s]
    assert sorted(e0[0] + e0[1]) == list(range(12))
    for x in s:
        x.set_epoch(1)
    e1 = [list(x) for x in s]
    assert sorted(e1[0] + e1[1]) == list(range(12)) and e1 != e0
    dropped = [list(DistributedSampler(7, 2, r, shuffle=False, drop_last=True)) for r in (0, 1)]
    assert dropped == [[0, 2, 4], [1, 3, 5]]
    parts = [sorted(SplitSampler(10, num_parts=2, part_index=r)) for r in (0, 1)]
    assert parts == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    with pytest.raises(MXNetError, match='0 <= rank < num_replicas'):
        DistributedSampler(10, num_replicas=2, rank=2)


def test_sampler_reads_the_job(monkeypatch):
    import torch.distributed as dist
    if dist.is_initialized():
        assert len(DistributedSampler(10)) == -(-10 // dist.get_world_size())
    else:
        monkeypatch.setenv('RANK', '1')
        monkeypatch.setenv('WORLD_SIZE', '4')
        assert list(DistributedSampler(8, shuffle=False)) == [1, 5]


# -- each local process keeps to its share of the cores ---------------------------------------

def test_local_share_splits_the_cores_evenly():
    from neomx.engine.threads import local_share
    assert local_share({0, 1}, 0, 2) == {0}
    assert local_share({1, 0}, 1, 2) == {1}
    assert local_share(range(8), 1, 2) == {4, 5, 6, 7}
    assert local_share(range(7), 2, 3) == {4, 5}            # the odd core is left to nobody
    assert local_share({0, 1}, 0, 3) is None                # fewer cores than processes
    assert local_share({0, 1}, 0, 1) is None                # alone: nothing to split
    assert local_share({0, 1}, None, 2) is None
    assert local_share({0, 1}, 2, 2) is None                # not a rank of this machine


AFFINITY = '''
import json, os
import neomx as mx
from neomx import nd
(nd.ones((512, 512)) * 2).wait_to_read()          # starts the cpu(0) worker
print(json.dumps({'pinned': sorted(mx.engine.current().pinned or []),
                  'threads': sorted({tuple(sorted(os.sched_getaffinity(int(t))))
                                     for t in os.listdir('/proc/self/task')})}))
'''


@pytest.mark.skipif(not hasattr(os, 'sched_getaffinity') or len(os.sched_getaffinity(0)) < 2,
                    reason='needs Linux and 2 cores')
def test_local_processes_are_pinned_to_disjoint_cores(tmp_path):
    script = tmp_path / 'affinity.py'
    script.write_text(AFFINITY)
    cores = sorted(os.sched_getaffinity(0))
    half = len(cores) // 2

    def run(rank, **env):
        r = subprocess.run([sys.executable, '-m', 'neomx', 'run', str(script)], cwd=str(tmp_path),
                           env=_env(LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE='2', **env),
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-3000:]
        return json.loads(r.stdout.strip().splitlines()[-1])

    first, second = run(0), run(1)
    assert first['pinned'] == cores[:half] and second['pinned'] == cores[half:2 * half]
    # Every thread of the process, the engine's workers and torch's included.
    assert first['threads'] == [cores[:half]]
    assert second['threads'] == [cores[half:2 * half]]
    left_alone = run(1, NEOMX_CPU_AFFINITY='0')
    assert left_alone['pinned'] == [] and left_alone['threads'] == [cores]
