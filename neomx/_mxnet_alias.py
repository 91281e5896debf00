"""Makes ``import mxnet`` (and every ``mxnet.x.y``) give neomx's own modules.

``neomx run script.py`` installs this before running the script, so code written for MXNet 1.x
runs unchanged. Each ``mxnet[.x]`` is the very module object ``neomx[.x]`` (registered under
both names in ``sys.modules``), so ``mxnet.nd is neomx.nd`` and an ``isinstance`` test against
``mxnet.nd.NDArray`` accepts neomx arrays.

>>> from neomx import _mxnet_alias
>>> _mxnet_alias.install()
>>> import mxnet, neomx
>>> from mxnet import nd
>>> mxnet is neomx and nd is neomx.nd
True
>>> _mxnet_alias.uninstall()
"""
import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ['install', 'uninstall', 'installed', 'ALIAS', 'TARGET']

ALIAS = 'mxnet'
TARGET = 'neomx'


def _target_module(fullname):
    """The neomx module that ``mxnet...`` name ``fullname`` stands for.

    Some of MXNet's names are attributes rather than files (``mxnet.nd`` is ``mxnet.ndarray``
    imported under another name); ``import mxnet.nd`` fails in MXNet itself but there is no harm
    in accepting it, so an attribute that is a module is taken as well."""
    target = TARGET + fullname[len(ALIAS):]
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name != target:
            raise               # a module neomx's own code needs is missing: not ours to hide
        parent, _, child = target.rpartition('.')
        mod = getattr(sys.modules.get(parent), child, None)
        if isinstance(mod, type(sys)):
            return mod
        raise ModuleNotFoundError(
            "No module named %r: neomx runs MXNet code by aliasing 'mxnet' to 'neomx', and neomx "
            "has no module %r" % (fullname, target), name=fullname) from None


class _AliasLoader(importlib.abc.Loader):
    """Hands out the already-imported neomx module instead of executing anything."""

    def __init__(self, module):
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # importlib has just set module.__spec__ to the alias's spec: give neomx its own back,
        # so reloading, pickling by reference and runpy see the real module.
        module.__spec__ = self.spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    """A meta-path finder that answers for ``mxnet`` and ``mxnet.*`` only."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + '.'):
            return None
        module = _target_module(fullname)
        is_pkg = hasattr(module, '__path__')
        spec = importlib.util.spec_from_loader(fullname, _AliasLoader(module), is_package=is_pkg)
        if is_pkg:
            spec.submodule_search_locations = list(module.__path__)
        return spec


_finder = _AliasFinder()


def install():
    """Makes ``mxnet`` resolve to neomx in this interpreter (first on ``sys.meta_path``, ahead of
    a real MXNet that may be installed). Modules already imported as ``neomx.*`` are registered
    as ``mxnet.*`` at once, so ``sys.modules`` agrees with what an import would give."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    for name, mod in list(sys.modules.items()):
        if mod is not None and (name == TARGET or name.startswith(TARGET + '.')):
            sys.modules.setdefault(ALIAS + name[len(TARGET):], mod)


def uninstall():
    """Removes the alias and forgets the ``mxnet.*`` entries it made."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + '.')]:
        mod = sys.modules[name]
        if mod is not None and getattr(mod, '__name__', '').split('.')[0] == TARGET:
            del sys.modules[name]


def installed():
    return _finder in sys.meta_path
