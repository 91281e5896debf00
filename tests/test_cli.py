"""The `neomx` command: run (with `import mxnet` aliased to neomx), profile, launch's arguments."""
import importlib.util
import json
import os
import pydoc
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import neomx
from neomx import _mxnet_alias, cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def neomx_cmd(*args, cwd=None, timeout=120, env=None):
    """Runs `python -m neomx args...` in a fresh interpreter."""
    e = dict(os.environ)
    e.pop('PYTHONPATH', None)
    e.update(env or {})
    return subprocess.run([sys.executable, '-m', 'neomx'] + list(args), cwd=cwd, env=e,
                          capture_output=True, text=True, timeout=timeout)


def write(path, code):
    path.write_text(textwrap.dedent(code))
    return str(path)


def test_run_script_written_for_mxnet(tmp_path):
    # An MXNet 1.x script, as the seeds write them, run unchanged: its imports resolve to
    # neomx's own module objects, argv and __name__ are those of `python script.py`, and
    # Python processes it starts resolve `import mxnet` too.
    script = write(tmp_path / 'seed.py', """
        import subprocess, sys
        import mxnet as mx
        from mxnet import nd, autograd
        import mxnet.ndarray
        import mxnet.ndarray.ndarray as ndmod
        import neomx
        assert nd is neomx.nd and mxnet.ndarray is neomx.ndarray and mx.gluon is neomx.gluon
        assert mx.__version__ == '1.9.1' and neomx.__version__ == '0.1.0'
        assert ndmod is neomx.ndarray.ndarray and isinstance(nd.ones(1), mx.nd.NDArray)
        assert sys.modules['mxnet.ndarray'] is neomx.ndarray
        for name in ('gluon', 'sym', 'symbol', 'init', 'optimizer', 'kv', 'kvstore', 'profiler'):
            if hasattr(neomx, name):
                ns = {}
                exec('from mxnet import ' + name + ' as m', ns)
                assert ns['m'] is getattr(neomx, name), name
        x = nd.array([[0, 1], [2, 3]])
        x.attach_grad()
        with autograd.record():
            y = (x * x).sum()
        y.backward()
        print('grad', x.grad.asnumpy().tolist())
        print('argv', sys.argv[1:], __name__, sys.path[0] == %r)
        child = subprocess.run([sys.executable, '-c',
                                'import mxnet; print(mxnet.nd.__name__, mxnet.__version__)'],
                               capture_output=True, text=True)
        print('child', child.stdout.strip())
    """ % str(tmp_path))
    r = neomx_cmd('run', script, '--lr', '0.1', 'x', cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert 'grad [[0.0, 2.0], [4.0, 6.0]]' in r.stdout
    assert "argv ['--lr', '0.1', 'x'] __main__ True" in r.stdout
    assert 'child neomx.ndarray 1.9.1' in r.stdout


def test_run_reports_mxnet_version(tmp_path):
    # Libraries built on Gluon check mxnet.__version__ before they import: under the alias it
    # is the MXNet release whose API neomx implements, while neomx keeps its own version. The
    # top-level `mxnet` is a module of its own that shares neomx's namespace both ways.
    script = write(tmp_path / 'version.py', """
        import sys
        import mxnet as mx
        import neomx
        from mxnet import *                       # noqa: F403
        import mxnet.gluon.nn
        print('versions', mx.__version__, neomx.__version__, __version__)
        print('same', mx.nd is neomx.nd, mxnet.gluon.nn is neomx.gluon.nn,
              isinstance(mx.nd.ones(1), neomx.nd.NDArray), sys.modules['mxnet'] is mx)
        mx.some_setting = 5                       # set through mxnet, seen by neomx
        print('shared', neomx.some_setting, 'nd' in dir(mx), mx.__name__, neomx.__name__)
        del mx.some_setting
        print('deleted', hasattr(neomx, 'some_setting'))
    """)
    r = neomx_cmd('run', script, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert 'versions 1.9.1 0.1.0 1.9.1' in r.stdout
    assert 'same True True True True' in r.stdout
    assert 'shared 5 True mxnet neomx' in r.stdout
    assert 'deleted False' in r.stdout


def test_mxnet_code_gets_numpy_1_names(tmp_path):
    # MXNet-era code uses NumPy 1's names that NumPy 2 removed (np.int, np.NaN, np.round_...):
    # importing mxnet brings them back, as NumPy 1's aliases; importing neomx alone does not.
    script = write(tmp_path / 'old.py', """
        import numpy as np
        import mxnet as mx
        x = mx.nd.array([1.6, -2.5]).asnumpy()
        print('mxnet', np.int is int, np.float is float, np.isnan(np.NaN), np.Inf == np.inf,
              np.round_(x).tolist(), np.product([2, 3]), np.float_ is np.float64,
              x.astype(np.int).tolist(), np.asfarray([1, 2]).dtype, np.in1d([1, 5], [5]).tolist())
    """)
    r = neomx_cmd('run', script, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "mxnet True True True True [2.0, -2.0] 6 True [1, -2] float64 [False, True]" \
        in r.stdout, r.stdout
    if np.lib.NumpyVersion(np.__version__) >= '2.0.0':
        alone = subprocess.run([sys.executable, '-c', 'import numpy as np, neomx; '
                                'print(sorted(set(vars(np)) & {"int", "NaN", "round_"}))'],
                               capture_output=True, text=True, timeout=120)
        assert alone.stdout.strip() == '[]', alone.stderr


@pytest.fixture
def in_process(monkeypatch):
    """Runs `neomx run` in this process, undoing what it changes (argv, path, alias)."""
    monkeypatch.setattr(sys, 'argv', list(sys.argv))
    monkeypatch.setattr(sys, 'path', list(sys.path))
    monkeypatch.setenv('PYTHONPATH', os.environ.get('PYTHONPATH', ''))
    was = _mxnet_alias.installed()
    yield cli.main
    if not was:
        _mxnet_alias.uninstall()


@pytest.mark.skipif(importlib.util.find_spec('neomx.gluon.nn') is None,
                    reason='neomx.gluon.nn is not there yet')
def test_run_gluon_seed(tmp_path, in_process, capsys):
    script = write(tmp_path / 'hybrid.py', """
        from mxnet import nd, sym, init
        from mxnet.gluon import nn
        import mxnet.gluon.nn
        import neomx
        assert nn is neomx.gluon.nn and mxnet.gluon.nn is nn and sym is neomx.sym

        def get_net():
            net = nn.HybridSequential()
            net.add(nn.Dense(256, activation='relu'), nn.Dense(128, activation='relu'),
                    nn.Dense(2))
            net.initialize(init.Xavier())
            return net

        x = nd.random.normal(shape=(1, 512))
        net = get_net()
        print('out', net(x).shape)
    """)
    assert in_process(['run', script]) == 0
    assert 'out (1, 2)' in capsys.readouterr().out


def test_run_module_and_code(tmp_path, in_process, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pkg = tmp_path / 'mypkg'
    pkg.mkdir()
    (pkg / '__init__.py').write_text('')
    write(pkg / 'job.py', """
        import sys
        from mxnet import nd
        print('module', __name__, sys.argv[1:], nd.ones((3,)).sum().asscalar())
    """)
    assert in_process(['run', '-m', 'mypkg.job', 'a', '-b']) == 0
    assert "module __main__ ['a', '-b'] 3.0" in capsys.readouterr().out
    assert in_process(['run', '-c', 'import sys, mxnet; print(mxnet.nd.__name__, sys.argv)',
                       'z']) == 0
    assert "neomx.ndarray ['-c', 'z']" in capsys.readouterr().out


def test_exit_status_and_missing_file(tmp_path, in_process, capsys):
    # sys.exit's status is the command's status.
    ex = write(tmp_path / 'ex.py', 'import sys\nsys.exit(3)\n')
    with pytest.raises(SystemExit) as e:
        in_process(['run', ex])
    assert e.value.code == 3
    assert in_process(['run', str(tmp_path / 'missing.py')]) == 2
    assert "can't open file" in capsys.readouterr().err
    # An error in the script: status 1, Python's traceback without the command's frames.
    bad = write(tmp_path / 'bad2.py', 'import mxnet\nmxnet.nd.ones((2,)).reshape((3, -1))\n')
    assert in_process(['run', bad]) == 1
    err = capsys.readouterr().err
    assert 'bad2.py", line 2' in err and 'MXNetError' in err and 'cli.py' not in err


def test_usage_errors(capsys):
    assert cli.main(['frobnicate']) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err
    assert cli.main(['run']) == 2
    assert 'expected a script' in capsys.readouterr().err
    assert cli.main(['profile', '--bogus', 'x.py']) == 2
    assert "unknown option '--bogus'" in capsys.readouterr().err
    assert cli.main(['launch', '-c', 'print(1)']) == 2
    assert cli.main(['launch', '--nnodes', '2', 'x.py']) == 2
    assert '--master' in capsys.readouterr().err
    assert cli.main(['launch', '--master', 'nohost', 'x.py']) == 2
    assert 'ADDR:PORT' in capsys.readouterr().err
    assert cli.main(['--help']) == 0
    assert 'neomx launch' in capsys.readouterr().out
    assert cli.main(['--version']) == 0
    assert neomx.__version__ in capsys.readouterr().out


def test_command_help(capsys):
    """`neomx COMMAND --help` (or -h, among its options) shows that command's options."""
    launch_options = ['-n N, --nproc-per-node N', '--nnodes M', '--node-rank R',
                      '--master ADDR:PORT', '--profile FILE', '--max-restarts K']
    for argv in (['launch', '--help'], ['launch', '-n', '2', '-h']):
        assert cli.main(argv) == 0
        out = capsys.readouterr().out
        assert out.startswith('usage: neomx launch') and 'NEOMX_DIST_TIMEOUT' in out
        assert all(o in out for o in launch_options), out
    assert cli.main(['profile', '--help']) == 0
    out = capsys.readouterr().out
    assert out.startswith('usage: neomx profile') and '-o FILE, --output FILE' in out
    assert '--stats' in out and 'metadata' in out
    assert cli.main(['run', '-h']) == 0
    assert capsys.readouterr().out.startswith('usage: neomx run')
    assert cli.main(['--help']) == 0
    assert '--max-restarts K' in capsys.readouterr().out


def test_option_parsing():
    # Options stop at the script (or -m/-c); everything after it is the script's.
    assert cli._parse(['-o', 'p.json', 's.py', '-o', 'x'], {'-o': ('out', True)}) == \
        ({'out': 'p.json'}, 'path', 's.py', ['-o', 'x'])
    assert cli._parse(['--stats', '-mpkg.m', '1'], {'--stats': ('stats', False)}) == \
        ({'stats': True}, 'module', 'pkg.m', ['1'])
    assert cli._parse(['--', '-weird.py'], {}) == ({}, 'path', '-weird.py', [])
    assert cli._parse(['-o=a', 's.py'], {'-o': ('out', True)})[0] == {'out': 'a'}


def test_launch_arguments():
    one = cli._launch_argv({'nproc': '2'}, 'path', 'train.py', ['--epochs', '1'])
    assert one == ['--nproc-per-node', '2', '--standalone', '-m', 'neomx', 'run', 'train.py',
                   '--epochs', '1']
    multi = cli._launch_argv({'nproc': '4', 'nnodes': '2', 'node_rank': '1',
                              'master': '10.0.0.1:29500', 'profile': 'p.json'},
                             'module', 'pkg.train', [])
    assert multi == ['--nproc-per-node', '4', '--nnodes', '2', '--node-rank', '1',
                     '--master-addr', '10.0.0.1', '--master-port', '29500',
                     '-m', 'neomx', 'profile', '-o', 'p.json', '-m', 'pkg.train']
    with pytest.raises(cli.UsageError, match='node-rank'):
        cli._launch_argv({'nnodes': '2', 'node_rank': '2', 'master': 'h:1'}, 'path', 's', [])


def test_alias_in_process():
    was = _mxnet_alias.installed()
    _mxnet_alias.install()
    try:
        import mxnet
        import mxnet.ndarray.ndarray as m
        from mxnet import nd, profiler
        assert m is neomx.ndarray.ndarray and nd is neomx.nd and sys.modules['mxnet'] is mxnet
        assert profiler is neomx.profiler
        # The real module keeps its own spec (the alias does not rename neomx).
        assert neomx.__spec__.name == 'neomx' and neomx.ndarray.__spec__.name == 'neomx.ndarray'
        with pytest.raises(ImportError, match="neomx has no module 'neomx.no_such_module'"):
            import mxnet.no_such_module  # noqa: F401
        # Below a module reached through an attribute (mxnet.nd), a missing module is reported
        # under the name asked for, so pydoc.locate walks on to the attribute (how GluonTS
        # decodes its serialised 'mxnet.nd.array').
        with pytest.raises(ImportError) as e:
            import mxnet.nd.array  # noqa: F401
        assert e.value.name == 'mxnet.nd.array'
        assert pydoc.locate('mxnet.nd.array') is neomx.nd.array
    finally:
        if not was:
            _mxnet_alias.uninstall()
    if not was:
        assert 'mxnet' not in sys.modules and 'mxnet.ndarray' not in sys.modules


def test_profile_command(tmp_path):
    script = os.path.join(ROOT, 'docs', 'img', 'two_device_timeline.py')
    out = tmp_path / 'trace.json'
    r = neomx_cmd('profile', '-o', str(out), '--stats', script, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert 'events written to %s' % out in r.stderr
    assert 'operator\n=================' in r.stderr
    trace = json.loads(out.read_text())
    count = int(r.stderr.split(' events written to')[0].split()[-1])
    assert count == len(trace['traceEvents'])       # metadata events included
    tracks = {e['args']['name'] for e in trace['traceEvents'] if e['name'] == 'thread_name'}
    assert {'cpu(0)', 'cpu(1)', 'python:MainThread'} <= tracks
    dots = [e for e in trace['traceEvents'] if e['ph'] == 'X' and e['name'] == 'dot'
            and e.get('cat') == 'operator']
    assert len(dots) == 120
