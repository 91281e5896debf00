"""What libraries built on MXNet check for at import (neomx/_library_checks.py): the distutils
stand-in, and GluonCV's PyTorch-version check under the ``mxnet`` alias."""
import importlib.util
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

from neomx import _library_checks
from neomx._library_checks import LooseVersion, StrictVersion, strtobool, version_in_range

# distutils' own classes warn that they are deprecated at each use
pytestmark = pytest.mark.filterwarnings('ignore:distutils Version classes:DeprecationWarning')

ALIAS_PATH = os.path.join(os.path.dirname(_library_checks.__file__), '_alias_path')
VERSIONS = ['1.9.1', '1.10', '1.4.0', '2.0.0', '2.13.0+cpu', '1.13.1', '0.10.0', '1.9.1b20',
            '2', '1.5.0.post0', '3.1rc2', '1.9']


def _stdlib_distutils_version():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        try:
            from distutils import version
        except ImportError:
            return None
    return version


def test_loose_version_orders_as_distutils():
    ref = _stdlib_distutils_version()
    if ref is None:
        pytest.skip('no distutils in this interpreter to compare with')
    for a in VERSIONS:
        for b in VERSIONS:
            try:
                want = (ref.LooseVersion(a) < ref.LooseVersion(b),
                        ref.LooseVersion(a) == ref.LooseVersion(b),
                        ref.LooseVersion(a) >= b)
            except TypeError:       # a number against a word: distutils cannot order them
                with pytest.raises(TypeError):
                    LooseVersion(a) < LooseVersion(b)
                continue
            got = (LooseVersion(a) < LooseVersion(b), LooseVersion(a) == LooseVersion(b),
                   LooseVersion(a) >= b)
            assert got == want, (a, b)
    assert LooseVersion('2.13.0+cpu').version == ref.LooseVersion('2.13.0+cpu').version


def test_strict_version_and_strtobool():
    assert StrictVersion('1.3.1') > StrictVersion('1.3')
    assert StrictVersion('1.3') == StrictVersion('1.3.0')
    assert StrictVersion('1.4a1') < StrictVersion('1.4') < StrictVersion('1.4.1')
    assert StrictVersion('1.4a2') < StrictVersion('1.4b1')
    with pytest.raises(ValueError, match="invalid version number '1.4.x'"):
        StrictVersion('1.4.x')
    assert [strtobool(v) for v in ('Yes', 'on', '1', 'FALSE', 'off', '0')] == [1, 1, 1, 0, 0, 0]
    with pytest.raises(ValueError, match="invalid truth value 'maybe'"):
        strtobool('maybe')


def test_version_in_range_reads_release_numbers():
    assert version_in_range('1.9.1', '1.4.0', '2.0.0')
    assert not version_in_range('2.13.0+cpu', '1.4.0', '2.0.0')
    assert version_in_range('1.13.1+cu117', '1.4.0', '2.0.0')
    assert not version_in_range('1.3.9', '1.4.0', '2.0.0')
    assert version_in_range('1.10', '1.9.1', '1.11')


def _run(code, env=None, cwd=None):
    r = subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=300, env=dict(os.environ, PYTHONFAULTHANDLER='1',
                                                        **(env or {})), cwd=cwd)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_distutils_stand_in_where_the_interpreter_has_none():
    # An interpreter without distutils (Python >= 3.12, no setuptools): every finder that could
    # serve it is made to answer None for it, as there.
    out = _run('''
        import importlib.machinery, sys
        class NoDistutils(importlib.machinery.PathFinder):
            @classmethod
            def find_spec(cls, name, path=None, target=None):
                if name == 'distutils' or name.startswith('distutils.'):
                    return None
                return importlib.machinery.PathFinder.find_spec(name, path, target)
        sys.meta_path[:] = [NoDistutils if f is importlib.machinery.PathFinder else f
                            for f in sys.meta_path
                            if 'distutils' not in type(f).__module__.lower()]
        sys.modules.pop('distutils', None)
        try:
            import distutils.version
        except ImportError:
            print('absent')
        from neomx import _mxnet_alias
        _mxnet_alias.install()
        from distutils.version import LooseVersion
        from distutils.util import strtobool
        import distutils
        print(LooseVersion('1.9.1') < LooseVersion('1.10'), strtobool('yes'),
              type(distutils.version.LooseVersion('2')).__module__)
    ''')
    assert out.split() == ['absent', 'True', '1', 'neomx._library_checks']


def test_distutils_of_the_interpreter_comes_first():
    spec = _library_checks._DistutilsFallback().find_spec('distutils.version')
    assert spec is not None and spec.loader.module.LooseVersion is LooseVersion
    if importlib.util.find_spec('distutils') is None:
        pytest.skip('this interpreter has no distutils of its own')
    out = _run('''
        from neomx import _mxnet_alias
        _mxnet_alias.install()
        import warnings
        warnings.simplefilter('ignore')
        import distutils.version
        print(distutils.version.__name__, distutils.version.LooseVersion.__module__)
    ''')
    assert 'neomx' not in out


# A package laid out as GluonCV 0.10 is: its check module asks for torch in [1.4, 2.0) and raises
# RuntimeError otherwise; its __init__ imports the checks before mxnet.
FAKE_CHECK = '''
def _require_mxnet_version(low, high='2.0.0'):
    import mxnet
    from distutils.version import LooseVersion
    if not LooseVersion(low) <= LooseVersion(mxnet.__version__) < LooseVersion(high):
        raise RuntimeError('mxnet %s out of range' % mxnet.__version__)

def _require_pytorch_version(low, high='2.0.0'):
    import torch
    from distutils.version import LooseVersion
    if not LooseVersion(low) <= LooseVersion(torch.__version__) < LooseVersion(high):
        raise RuntimeError('torch %s out of range' % torch.__version__)
'''
FAKE_INIT = '''
from .check import _require_mxnet_version, _require_pytorch_version
found_mxnet = found_torch = False
try:
    _require_mxnet_version('1.4.0')
    found_mxnet = True
except ImportError:
    pass
try:
    _require_pytorch_version('1.4.0', '2.0.0')
    found_torch = True
except ImportError:
    pass
'''


@pytest.fixture
def fake_gluoncv(tmp_path):
    pkg = tmp_path / 'gluoncv'
    pkg.mkdir()
    (pkg / '__init__.py').write_text(FAKE_INIT)
    (pkg / 'check.py').write_text(FAKE_CHECK)
    return tmp_path


def test_gluoncv_check_under_neomx_run(fake_gluoncv):
    import torch
    if version_in_range(torch.__version__, '1.4.0', '2.0.0'):
        pytest.skip('torch %s is in the range GluonCV accepts' % torch.__version__)
    code = 'import gluoncv; print(gluoncv.found_mxnet, gluoncv.found_torch)'
    r = subprocess.run([sys.executable, '-m', 'neomx', 'run', '-c', code], capture_output=True,
                       text=True, timeout=300, cwd=fake_gluoncv,
                       env=dict(os.environ, PYTHONPATH=str(fake_gluoncv)))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ['True', 'False']


def test_gluoncv_check_through_the_alias_path(fake_gluoncv):
    # `import mxnet` first happens inside the library's own check, after check.py has run
    import torch
    if version_in_range(torch.__version__, '1.4.0', '2.0.0'):
        pytest.skip('torch %s is in the range GluonCV accepts' % torch.__version__)
    out = _run('''
        import gluoncv, sys
        print(gluoncv.found_mxnet, gluoncv.found_torch, 'mxnet' in sys.modules)
        from gluoncv import check
        print(check._require_pytorch_version is gluoncv._require_pytorch_version)
        try:
            check._require_pytorch_version('1.4.0', '2.0.0')
        except ImportError as e:
            print('ImportError:', e)
    ''', env={'PYTHONPATH': os.pathsep.join([ALIAS_PATH, str(fake_gluoncv)])}, cwd=fake_gluoncv)
    lines = out.splitlines()
    assert lines[0] == 'True False True' and lines[1] == 'True'
    assert lines[2].startswith("ImportError: GluonCV's PyTorch modules need torch>=1.4.0,<2.0.0")


def test_gluoncv_check_untouched_without_the_alias(fake_gluoncv):
    import torch
    if version_in_range(torch.__version__, '1.4.0', '2.0.0'):
        pytest.skip('torch %s is in the range GluonCV accepts' % torch.__version__)
    out = _run('''
        import sys
        sys.modules['mxnet'] = type(sys)('mxnet'); sys.modules['mxnet'].__version__ = '1.9.1'
        try:
            import gluoncv
        except RuntimeError as e:
            print('RuntimeError:', e)
    ''', env={'PYTHONPATH': str(fake_gluoncv)}, cwd=fake_gluoncv)
    assert out.startswith('RuntimeError: torch')


def test_gluoncv_check_in_range_runs_the_library_s_own():
    calls = []

    class Check:
        @staticmethod
        def _require_pytorch_version(low, high='2.0.0'):
            calls.append((low, high))
    Check.__name__ = 'gluoncv.check'
    wrapped = _library_checks._gluoncv_check(Check)['_require_pytorch_version']
    wrapped('0.1', '99.0')
    assert calls == [('0.1', '99.0')]
    with pytest.raises(ImportError, match='neomx.s kernel library'):
        wrapped('99.0', '100.0')
    assert calls == [('0.1', '99.0')]


@pytest.mark.skipif(importlib.util.find_spec('gluoncv') is None, reason='GluonCV not installed')
def test_real_gluoncv_imports_under_neomx_run():
    code = 'import gluoncv; print(gluoncv._found_mxnet, gluoncv.model_zoo.get_model)'
    r = subprocess.run([sys.executable, '-m', 'neomx', 'run', '-c', code], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith('True <function get_model')


@pytest.mark.skipif(importlib.util.find_spec('scipy') is None, reason='SciPy not installed')
def test_scipy_serves_numpy_names_under_the_alias():
    out = _run('''
        import scipy, numpy
        had = hasattr(scipy, 'rand')
        before = scipy.__version__
        from neomx import _mxnet_alias
        _mxnet_alias.install()
        from scipy import rand, zeros
        print(had, rand is numpy.random.rand, zeros is numpy.zeros,
              scipy.__version__ == before)
    ''')
    assert out.split()[1:] == ['True', 'True', 'True']
