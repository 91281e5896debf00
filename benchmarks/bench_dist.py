"""Data-parallel training across processes: LeNet on 28x28 images, global batch 256.

Compares, in training samples per second (median of the repeats):

- 1 process x 1 thread, no KVStore (the whole batch in one process);
- 2 processes x 1 thread with the 'dist_sync' KVStore (half the batch each), gradients reduced
  in buckets during backward (neomx's default), and with that turned off
  (NEOMX_DIST_BUCKET_MB=0: one allreduce per step, after backward), and with the processes
  not pinned to their own cores (NEOMX_CPU_AFFINITY=0);
- the same with PyTorch (an equivalent LeNet, DistributedDataParallel over gloo), under
  torchrun as it is and pinned the way neomx pins.

Target on a 2-core machine: 2 processes >= 1.7x one process.

    python benchmarks/bench_dist.py [--steps 30] [--repeats 5] [--no-torch]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import common  # noqa: F401  (puts the checkout on sys.path)
from common import finish, fmt

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))
GLOBAL_BATCH = 256


# -- the workers ----------------------------------------------------------------------------

def neomx_worker(args):
    import numpy as np
    import neomx as mx
    from neomx import autograd, gluon, nd
    from neomx.gluon import nn

    kv = mx.kv.create(args.kv) if args.kv != 'none' else None
    rank, nw = (kv.rank, kv.num_workers) if kv else (0, 1)
    batch = GLOBAL_BATCH // nw
    mx.random.seed(0)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(channels=6, kernel_size=5, activation='sigmoid'),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Conv2D(channels=16, kernel_size=5, activation='sigmoid'),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Dense(120, activation='sigmoid'), nn.Dense(84, activation='sigmoid'),
            nn.Dense(10))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1},
                            kvstore=kv if kv else 'device')
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rs = np.random.RandomState(rank)
    batches = [(nd.array(rs.rand(batch, 1, 28, 28)), nd.array(rs.randint(0, 10, batch)))
               for _ in range(4)]

    def step(i):
        x, y = batches[i % len(batches)]
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(GLOBAL_BATCH)

    for i in range(args.warmup):
        step(i)
    nd.waitall()
    if kv:
        kv.barrier()
    t0 = time.perf_counter()
    for i in range(args.steps):
        step(i)
    nd.waitall()
    if kv:
        kv.barrier()
    return rank, time.perf_counter() - t0


def torch_worker(args):
    import torch
    import torch.distributed as dist
    from torch import nn

    if os.environ.get('BENCH_PIN_TORCH'):
        # The same pinning neomx does for the processes of a job on one machine.
        from neomx.engine.threads import bind_to_local_share
        bind_to_local_share()

    world = int(os.environ.get('WORLD_SIZE', 1))
    if world > 1:
        dist.init_process_group('gloo')
    rank = dist.get_rank() if world > 1 else 0
    batch = GLOBAL_BATCH // world
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 6, 5), nn.Sigmoid(), nn.MaxPool2d(2, 2),
                        nn.Conv2d(6, 16, 5), nn.Sigmoid(), nn.MaxPool2d(2, 2), nn.Flatten(),
                        nn.Linear(256, 120), nn.Sigmoid(), nn.Linear(120, 84), nn.Sigmoid(),
                        nn.Linear(84, 10))
    model = nn.parallel.DistributedDataParallel(net) if world > 1 else net
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(rank)
    batches = [(torch.rand(batch, 1, 28, 28, generator=g), torch.randint(0, 10, (batch,),
                                                                        generator=g))
               for _ in range(4)]

    def step(i):
        x, y = batches[i % len(batches)]
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for i in range(args.warmup):
        step(i)
    if world > 1:
        dist.barrier()
    t0 = time.perf_counter()
    for i in range(args.steps):
        step(i)
    if world > 1:
        dist.barrier()
    return rank, time.perf_counter() - t0


# -- the driver -----------------------------------------------------------------------------

def _env(**extra):
    env = dict(os.environ)
    for k in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'MASTER_ADDR', 'MASTER_PORT'):
        env.pop(k, None)
    env.update(OMP_NUM_THREADS='1', NEOMX_CPU_THREADS='1')
    env.update(extra)
    return env


def run_config(procs, framework, kv, steps, warmup, env_extra=None):
    worker = [HERE, '--worker', framework, '--kv', kv, '--steps', str(steps),
              '--warmup', str(warmup)]
    if procs == 1:
        cmd = [sys.executable] + worker
    elif framework == 'neomx':
        cmd = [sys.executable, '-m', 'neomx', 'launch', '-n', str(procs)] + worker
    else:
        cmd = [sys.executable, '-m', 'torch.distributed.run', '--standalone',
               '--nproc-per-node', str(procs)] + worker
    r = subprocess.run(cmd, cwd=ROOT, env=_env(**(env_extra or {})), capture_output=True,
                       text=True, timeout=900)
    lines = [l for l in r.stdout.splitlines() if l.startswith('RESULT ')]
    if r.returncode != 0 or not lines:
        raise RuntimeError('%s failed:\n%s\n%s' % (' '.join(cmd), r.stdout[-2000:],
                                                   r.stderr[-4000:]))
    seconds = json.loads(lines[0][7:])['seconds']
    return GLOBAL_BATCH * steps / seconds


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--worker', choices=['neomx', 'torch'])
    p.add_argument('--kv', default='none')
    p.add_argument('--steps', type=int, default=30)
    p.add_argument('--warmup', type=int, default=5)
    p.add_argument('--repeats', type=int, default=5)
    p.add_argument('--no-torch', action='store_true')
    p.add_argument('--no-mxnet', action='store_true', help='(no MXNet reference here)')
    p.add_argument('--repeat', type=int, help='same as --repeats')
    p.add_argument('--json', metavar='PATH', help='also write the result as JSON to PATH')
    args = p.parse_args()
    if args.repeat:
        args.repeats = args.repeat
    if args.worker:
        rank, seconds = (neomx_worker if args.worker == 'neomx' else torch_worker)(args)
        if rank == 0:
            print('RESULT ' + json.dumps({'seconds': seconds}), flush=True)
        return
    configs = [
        ('neomx 1 process x 1 thread', 1, 'neomx', 'none', None),
        ('neomx 2 processes x 1 thread, dist_sync, buckets during backward', 2, 'neomx',
         'dist_sync', None),
        ('neomx 2 processes x 1 thread, dist_sync, one allreduce after backward', 2, 'neomx',
         'dist_sync', {'NEOMX_DIST_BUCKET_MB': '0'}),
        ('neomx 2 processes x 1 thread, dist_sync, not pinned (NEOMX_CPU_AFFINITY=0)', 2,
         'neomx', 'dist_sync', {'NEOMX_CPU_AFFINITY': '0'}),
    ]
    if not args.no_torch:
        configs += [('PyTorch 1 process x 1 thread', 1, 'torch', 'none', None),
                    ('PyTorch 2 processes x 1 thread, DDP (gloo)', 2, 'torch', 'ddp', None),
                    ('PyTorch 2 processes x 1 thread, DDP (gloo), pinned as neomx pins', 2,
                     'torch', 'ddp', {'BENCH_PIN_TORCH': '1'})]
    results = {}
    for _ in range(args.repeats):       # interleaved, so that drifts in load hit all alike
        for name, procs, fw, kv, env in configs:
            results.setdefault(name, []).append(run_config(procs, fw, kv, args.steps,
                                                           args.warmup, env))
    med = {name: statistics.median(v) for name, v in results.items()}
    base = {'neomx': med[configs[0][0]], 'PyTorch': med.get('PyTorch 1 process x 1 thread')}
    rows = []
    for name, procs, fw, kv, env in configs:
        b = base['neomx' if fw == 'neomx' else 'PyTorch']
        rows.append([name, med[name], 1000.0 * GLOBAL_BATCH / med[name], med[name] / b])
    two = med[configs[1][0]] / base['neomx']
    notes = ['target: 2 processes >= 1.7x one process: %sx (%s)'
             % (fmt(two), 'met' if two >= 1.7 else 'MISSED'),
             'buckets reduced during backward against one allreduce after backward: %sx the '
             'throughput' % fmt(med[configs[1][0]] / med[configs[2][0]]),
             'pinned (each process of the job to its own share of the cores, the default) '
             'against not pinned: %sx the throughput' % fmt(med[configs[1][0]] / med[configs[3][0]]),
             '%d steps after %d warm-up, median of %d runs, interleaved; every process has one '
             'intra-op thread; %d cores' % (args.steps, args.warmup, args.repeats,
                                            len(os.sched_getaffinity(0)))]
    if 'PyTorch 2 processes x 1 thread, DDP (gloo)' in med:
        notes.insert(1, 'PyTorch DDP in the same run: %sx one PyTorch process (%sx pinned as '
                     'neomx pins; torchrun does not pin)'
                     % (fmt(med['PyTorch 2 processes x 1 thread, DDP (gloo)'] / base['PyTorch']),
                        fmt(med['PyTorch 2 processes x 1 thread, DDP (gloo), pinned as neomx '
                                'pins'] / base['PyTorch'])))
    finish({'title': 'Data-parallel training across processes (LeNet, 28x28, global batch %d)'
                     % GLOBAL_BATCH,
            'about': 'Training samples per second; the last column is the ratio to one process '
                     'of the same framework (higher is better).',
            'headers': ['configuration', 'samples/s', 'ms/step', 'vs 1 process'],
            'rows': rows, 'notes': notes}, args)


if __name__ == '__main__':
    main()
