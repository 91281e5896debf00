"""Shared fixtures: both engines, the devices to test on, the reference MXNet environment."""
import os
import subprocess
import sys

import pytest

import neomx as mx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MXNET_REF = os.environ.get('NEOMX_MXNET_REF', os.path.join(ROOT, '.mxnet-ref', 'bin', 'python'))


def pytest_collection_modifyitems(config, items):
    if mx.num_gpus() == 0:
        skip = pytest.mark.skip(reason='needs a CUDA GPU')
        for item in items:
            if 'gpu' in item.keywords:
                item.add_marker(skip)


@pytest.fixture(params=['ThreadedEngine', 'NaiveEngine'])
def engine(request):
    """Runs the test once under each engine."""
    with mx.engine.engine_scope(request.param) as eng:
        yield eng


def pytest_generate_tests(metafunc):
    # The operator tests (test_ops_*.py) run under both engines: NaiveEngine, running each
    # operation inline, is the reference the threaded engine must agree with. Tests that ask
    # for `engine` choose for themselves; the differential tests against MXNet (`mxnet_ref`)
    # compare with MXNet once, under the default engine.
    names = metafunc.fixturenames
    if (metafunc.module.__name__.startswith('test_ops_') and 'engine' not in names and
            'mxnet_ref' not in names):
        names.append('op_engine')
        metafunc.parametrize('op_engine', ['ThreadedEngine', 'NaiveEngine'], indirect=True)


@pytest.fixture
def op_engine(request):
    """The engine an operator test runs under (see pytest_generate_tests)."""
    with mx.engine.engine_scope(request.param) as eng:
        yield eng


def _contexts():
    ctxs = [mx.cpu(0)]
    if mx.num_gpus():
        ctxs.append(mx.gpu(0))
    return ctxs


@pytest.fixture(params=_contexts(), ids=str)
def ctx(request):
    """Each device the op tests run on: cpu(0), and gpu(0) when there is one."""
    return request.param


def has_mxnet_ref():
    return os.path.exists(MXNET_REF)


def run_mxnet(code, cwd=None, timeout=300):
    """Runs ``code`` with real MXNet 1.9.1 (the reference environment); returns stdout.
    Tests calling it skip when the environment is absent."""
    if not has_mxnet_ref():
        pytest.skip('reference MXNet 1.9.1 environment not found at %s' % MXNET_REF)
    env = dict(os.environ, MXNET_ENGINE_TYPE='NaiveEngine', OMP_NUM_THREADS='1')
    env.pop('PYTHONPATH', None)
    r = subprocess.run([MXNET_REF, '-c', code], cwd=cwd, capture_output=True, text=True,
                       timeout=timeout, env=env)
    if r.returncode != 0:
        raise AssertionError('reference MXNet failed:\n' + r.stderr[-3000:])
    return r.stdout


@pytest.fixture
def mxnet_ref():
    """A function running Python code under real MXNet 1.9.1 (skips if it is not installed)."""
    return run_mxnet


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
