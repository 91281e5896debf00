"""benchmarks/bench_cnn.py compares like with like: each of d2l's chapter-5 networks, as the
benchmark writes it in Gluon (the source MXNet 1.9.1 runs too) and in torch.nn, has the same
parameters and gives the same output shape. A network that drifted on one side would make the
benchmark's ratios meaningless."""
import os
import sys

import pytest
import torch

import neomx as mx
from neomx import nd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'benchmarks'))
import bench_cnn  # noqa: E402


def _gluon_net(name):
    namespace = {'NETWORKS': bench_cnn.NETWORKS}
    exec(compile(bench_cnn._gluon_source('neomx'), bench_cnn.__file__, 'exec'), namespace)
    return namespace['d2l_net'](name)


@pytest.mark.parametrize('name', sorted(bench_cnn.NETWORKS))
def test_networks_match_their_pytorch_twins(name):
    size = bench_cnn.NETWORKS[name][0]
    net = _gluon_net(name)
    net.initialize(init=mx.init.Xavier())
    out = net(nd.random.uniform(shape=(1, 1, size, size)))
    tnet = bench_cnn.torch_net(name).eval()
    with torch.no_grad():
        tout = tnet(torch.rand(1, 1, size, size))
    assert out.shape == tuple(tout.shape) == (1, 10)
    # BatchNorm's moving statistics are auxiliary states in Gluon and buffers in torch.nn
    shapes = sorted(tuple(p.shape) for p in net.collect_params().values()
                    if not p.name.endswith(('running_mean', 'running_var')))
    tshapes = sorted(tuple(p.shape) for p in tnet.parameters())
    assert shapes == tshapes


def test_device_variants_run_and_make_a_row():
    """The variants of ``--gpu`` (neomx on the device, PyTorch eager in both memory formats and
    compiled) run on the CPU too; torch.compile's 'eager' backend keeps the test fast."""
    variants = bench_cnn.device_variants('resnet', 2, True, 'cpu', compiled='eager')
    assert list(variants) == bench_cnn.GPU_LABELS
    times = bench_cnn.measure(variants, 1)
    assert set(times) == set(bench_cnn.GPU_LABELS)
    assert all(t > 0 for t in times.values())
    r = bench_cnn.row('resnet', 'training', 2, times, bench_cnn.GPU_LABELS,
                      bench_cnn.GPU_LABELS[2:])
    best = min(times[k] for k in bench_cnn.GPU_LABELS[2:])
    assert r[:3] == ['ResNet-18 96x96', 'training', 2]
    assert r[-2] == pytest.approx(times['neomx hybridized'] / best, rel=1e-3)
    assert len(r) == len(bench_cnn.HEADERS[:3] + bench_cnn.GPU_LABELS + bench_cnn.HEADERS[-2:])
