"""What libraries built on MXNet 1.x check for when they are imported, given under the alias.

Libraries written for MXNet 1.9 check their surroundings as they import: GluonCV asks for
``mxnet`` in [1.4, 2.0) (the alias answers '1.9.1') and for PyTorch either absent or in
[1.4, 2.0), raising RuntimeError for a torch outside it, and compares versions with
``distutils.version.LooseVersion``, which Python 3.12 removed. Under neomx, torch is always
installed (it is neomx's kernel library) and the interpreter may be 3.12 or later, so such a
library would not import unmodified. ``install()``, called by the ``mxnet`` alias, gives them
what they check for, in memory (no file on disk is changed):

- ``distutils``: where the interpreter has none (Python >= 3.12 without setuptools' copy), a
  small stand-in with ``distutils.version.LooseVersion``/``StrictVersion`` and
  ``distutils.util.strtobool`` is found last on ``sys.meta_path``, after every real one.
- ``ADJUSTMENTS``: per library module, a function applied to the module right after it is
  executed (or at once, if it was imported before the alias was installed). GluonCV's
  ``_require_pytorch_version`` treats a torch outside the range GluonCV supports as absent
  (ImportError), so GluonCV imports its MXNet half only, as it does where torch is not
  installed; in its range, GluonCV's own check runs. ``scipy`` gets back the NumPy names
  SciPy < 1.12 served (``scipy.rand``, ``scipy.zeros``, ...), as NumPy 1's removed names come
  back (neomx/_numpy1.py).

>>> from neomx import _library_checks
>>> v = _library_checks.LooseVersion
>>> v('1.9.1') < v('1.10'), v('2.13.0+cpu') >= v('2.0.0')
(True, True)
"""
import importlib.abc
import importlib.util
import re
import sys
import types

__all__ = ['install', 'uninstall', 'ADJUSTMENTS', 'LooseVersion', 'StrictVersion', 'strtobool',
           'version_in_range']


# -- distutils for interpreters without it ------------------------------------------------------

class LooseVersion:
    """``distutils.version.LooseVersion``: a version string split into numbers and words,
    compared as a list (``'1.10' > '1.9'``; ``'2.13.0+cpu'`` is ``[2, 13, 0, '+cpu']``)."""

    _part = re.compile(r'(\d+|[a-z]+|\.)', re.IGNORECASE)

    def __init__(self, vstring=None):
        if vstring is not None:
            self.parse(vstring)

    def parse(self, vstring):
        self.vstring = vstring
        parts = [p for p in self._part.split(vstring) if p and p != '.']
        self.version = [int(p) if p.isdigit() else p for p in parts]

    def _cmp(self, other):
        if isinstance(other, str):
            other = LooseVersion(other)
        elif not isinstance(other, LooseVersion):
            return NotImplemented
        return (self.version > other.version) - (self.version < other.version)

    def __eq__(self, other):
        c = self._cmp(other)
        return c if c is NotImplemented else c == 0

    def __lt__(self, other):
        c = self._cmp(other)
        return c if c is NotImplemented else c < 0

    def __le__(self, other):
        c = self._cmp(other)
        return c if c is NotImplemented else c <= 0

    def __gt__(self, other):
        c = self._cmp(other)
        return c if c is NotImplemented else c > 0

    def __ge__(self, other):
        c = self._cmp(other)
        return c if c is NotImplemented else c >= 0

    __hash__ = None

    def __str__(self):
        return self.vstring

    def __repr__(self):
        return "LooseVersion ('%s')" % self.vstring


class StrictVersion(LooseVersion):
    """``distutils.version.StrictVersion``: ``N.N[.N][(a|b)N]``; a pre-release sorts before
    its release."""

    _form = re.compile(r'^(\d+)\.(\d+)(?:\.(\d+))?(?:([ab])(\d+))?$')

    def parse(self, vstring):
        m = self._form.match(vstring)
        if m is None:
            raise ValueError("invalid version number '%s'" % vstring)
        major, minor, patch, tag, num = m.groups()
        self.vstring = vstring
        self.version = (int(major), int(minor), int(patch or 0))
        self.prerelease = (tag, int(num)) if tag else None

    def _cmp(self, other):
        if isinstance(other, str):
            other = StrictVersion(other)
        elif not isinstance(other, StrictVersion):
            return NotImplemented
        if self.version != other.version:
            return (self.version > other.version) - (self.version < other.version)
        # a release sorts after its pre-releases
        a = self.prerelease or ('~', 0)
        b = other.prerelease or ('~', 0)
        return (a > b) - (a < b)

    def __repr__(self):
        return "StrictVersion ('%s')" % self.vstring


def strtobool(val):
    """``distutils.util.strtobool``: 1 for y, yes, t, true, on, 1; 0 for n, no, f, false, off,
    0 (any case); ValueError otherwise."""
    val = val.lower()
    if val in ('y', 'yes', 't', 'true', 'on', '1'):
        return 1
    if val in ('n', 'no', 'f', 'false', 'off', '0'):
        return 0
    raise ValueError("invalid truth value %r" % (val,))


def _distutils_modules():
    pkg = types.ModuleType('distutils', 'neomx\'s stand-in for the removed distutils: '
                                        'version.LooseVersion/StrictVersion, util.strtobool.')
    pkg.__path__ = []
    version = types.ModuleType('distutils.version')
    version.LooseVersion, version.StrictVersion = LooseVersion, StrictVersion
    util = types.ModuleType('distutils.util')
    util.strtobool = strtobool
    pkg.version, pkg.util = version, util
    return {'distutils': pkg, 'distutils.version': version, 'distutils.util': util}


class _ModuleLoader(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class _DistutilsFallback(importlib.abc.MetaPathFinder):
    """Last on ``sys.meta_path``: answers for ``distutils`` only when no finder before it did."""

    _modules = None

    def find_spec(self, fullname, path=None, target=None):
        if fullname != 'distutils' and not fullname.startswith('distutils.'):
            return None
        if self._modules is None:
            self._modules = _distutils_modules()
        module = self._modules.get(fullname)
        if module is None:
            return None
        return importlib.util.spec_from_loader(fullname, _ModuleLoader(module),
                                               is_package=fullname == 'distutils')


# -- adjustments to library modules --------------------------------------------------------------

def _release(version):
    """The leading numbers of a version string: '2.13.0+cpu' -> (2, 13, 0)."""
    nums = []
    for part in str(version).split('.'):
        m = re.match(r'\d+', part)
        if m is None:
            break
        nums.append(int(m.group()))
        if m.end() < len(part):
            break
    return tuple(nums)


def version_in_range(version, low, high):
    """Whether ``low <= version < high``, on the release numbers (local tags ignored)."""
    return _release(low) <= _release(version) < _release(high)


def _gluoncv_check(module):
    original = getattr(module, '_require_pytorch_version', None)
    if original is None:        # a GluonCV without the check
        return {}

    def _require_pytorch_version(torch_version, max_torch_version='2.0.0'):
        # torch is installed as neomx's kernel library, not as a framework for GluonCV's
        # PyTorch half; outside the range that half supports it counts as absent, so GluonCV
        # goes on with its MXNet half alone, as it does without torch.
        import torch
        if not version_in_range(torch.__version__, torch_version, max_torch_version):
            raise ImportError("GluonCV's PyTorch modules need torch>=%s,<%s; torch %s is "
                              "neomx's kernel library here, so they are not loaded"
                              % (torch_version, max_torch_version, torch.__version__))
        return original(torch_version, max_torch_version)

    _require_pytorch_version.__wrapped__ = original
    return {'_require_pytorch_version': _require_pytorch_version}


def _scipy_numpy_names(module):
    # SciPy < 1.12 served NumPy's namespace as its own (``from scipy import rand``, deprecated
    # since SciPy 1.4); code of MXNet's time reads it. Only names SciPy lacks are added.
    import numpy
    names = {n: getattr(numpy, n) for n in getattr(numpy, '__all__', ())
             if hasattr(numpy, n) and not n.startswith('_') and not hasattr(module, n)}
    for n in ('rand', 'randn'):
        if not hasattr(module, n):
            names[n] = getattr(numpy.random, n)
    return names


# module name -> function(module) -> {name: replacement}; the replacements are set on the module
# and on its package wherever the package holds the original (``from .check import f``).
ADJUSTMENTS = {
    'gluoncv.check': _gluoncv_check,
    'scipy': _scipy_numpy_names,
}


def _adjust(module):
    name = module.__name__
    if getattr(module, '_neomx_adjusted', False):
        return
    replacements = ADJUSTMENTS[name](module)
    parent = sys.modules.get(name.rpartition('.')[0])
    for attr, value in replacements.items():
        original = getattr(module, attr, None)
        setattr(module, attr, value)
        if parent is not None and original is not None and vars(parent).get(attr) is original:
            setattr(parent, attr, value)
    module._neomx_adjusted = True


class _AdjustingLoader(importlib.abc.Loader):
    """Runs the real loader, then the module's adjustment."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _adjust(module)

    def __getattr__(self, name):        # get_source, get_filename, ... for tracebacks
        return getattr(self.loader, name)


class _AdjustingFinder(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path``: for the modules of ``ADJUSTMENTS``, the spec the finders
    after it give, with a loader that adjusts the module once it has run."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in ADJUSTMENTS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, 'find_spec'):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, 'exec_module'):
            return spec
        spec.loader = _AdjustingLoader(spec.loader)
        return spec


_finder = _AdjustingFinder()
_fallback = _DistutilsFallback()


def install():
    """Puts both finders on ``sys.meta_path`` and adjusts the modules of ``ADJUSTMENTS`` that are
    already imported (a library that imported its checks before its first ``import mxnet``)."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    if _fallback not in sys.meta_path:
        sys.meta_path.append(_fallback)
    for name in ADJUSTMENTS:
        module = sys.modules.get(name)
        if module is not None:
            _adjust(module)


def uninstall():
    for finder in (_finder, _fallback):
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
