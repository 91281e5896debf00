"""Makes ``import mxnet`` (and every ``mxnet.x.y``) give neomx's own modules.

``neomx run script.py`` installs this before running the script, so code written for MXNet 1.x
runs unchanged. Each ``mxnet.x[.y]`` is the very module object ``neomx.x[.y]`` (registered under
both names in ``sys.modules``), so ``mxnet.nd is neomx.nd`` and an ``isinstance`` test against
``mxnet.nd.NDArray`` accepts neomx arrays.

The top-level ``mxnet`` alone is a module of its own (``MXNetModule``): every attribute is
neomx's (read, set and deleted on neomx itself) except the module's own dunder names, so
``mxnet.__version__`` is the version of the MXNet API that neomx implements, '1.9.1' (libraries
built on Gluon check it before they import), while ``neomx.__version__`` stays neomx's own.

>>> from neomx import _mxnet_alias
>>> _mxnet_alias.install()
>>> import mxnet, neomx
>>> from mxnet import nd
>>> nd is neomx.nd and mxnet.gluon is neomx.gluon
True
>>> mxnet.__version__, neomx.__version__
('1.9.1', '0.1.0')
>>> _mxnet_alias.uninstall()
"""
import importlib
import importlib.abc
import importlib.util
import sys
import types

from . import _library_checks, _numpy1

__all__ = ['install', 'uninstall', 'installed', 'alias_module', 'MXNetModule', 'ALIAS', 'TARGET',
           'MXNET_VERSION']

ALIAS = 'mxnet'
TARGET = 'neomx'
MXNET_VERSION = '1.9.1'      # the MXNet release whose API neomx implements


def _is_dunder(name):
    return name.startswith('__') and name.endswith('__')


class MXNetModule(types.ModuleType):
    """``mxnet`` under the alias: neomx's namespace under MXNet's version.

    A module of its own rather than neomx itself, because the two must answer ``__version__``
    differently. Its own namespace holds only module dunders (``__name__``, ``__spec__``,
    ``__version__``, ...); every other name is looked up, set and deleted on neomx, so
    ``mxnet.nd is neomx.nd``, ``mxnet.x = v`` is seen as ``neomx.x`` and a submodule imported
    later is reachable under both names."""

    def __getattr__(self, name):
        return getattr(sys.modules[TARGET], name)

    def __setattr__(self, name, value):
        if _is_dunder(name):
            super().__setattr__(name, value)
        else:
            setattr(sys.modules[TARGET], name, value)

    def __delattr__(self, name):
        if _is_dunder(name):
            super().__delattr__(name)
        else:
            delattr(sys.modules[TARGET], name)

    def __dir__(self):
        return sorted(set(dir(sys.modules[TARGET])) | set(self.__dict__))


_alias = None


def alias_module():
    """The one ``mxnet`` module (made on first use)."""
    global _alias
    if _alias is None:
        target = importlib.import_module(TARGET)
        mod = MXNetModule(ALIAS, target.__doc__)
        spec = importlib.util.spec_from_loader(ALIAS, _AliasLoader(mod), is_package=True)
        spec.submodule_search_locations = list(target.__path__)
        spec.origin, spec.has_location = target.__file__, True     # its repr shows the file
        for name, value in (('__spec__', spec), ('__loader__', spec.loader),
                            ('__package__', ALIAS), ('__path__', list(target.__path__)),
                            ('__file__', target.__file__), ('__version__', MXNET_VERSION)):
            setattr(mod, name, value)
        _alias = mod
    return _alias


def _target_module(fullname):
    """The neomx module that ``mxnet...`` name ``fullname`` stands for.

    Some of MXNet's names are attributes rather than files (``mxnet.nd`` is ``mxnet.ndarray``
    imported under another name); ``import mxnet.nd`` fails in MXNet itself but there is no harm
    in accepting it, so an attribute that is a module is taken as well."""
    if fullname == ALIAS:
        return alias_module()
    # Below a module reached through an attribute (``mxnet.nd.array``: ``mxnet.nd`` is
    # ``neomx.ndarray``), the name is looked up in that module, and a missing one is reported
    # under the name asked for, as Python reports it (pydoc.locate and the like rely on it).
    parent_alias, _, child = fullname.rpartition('.')
    parent = sys.modules.get(parent_alias)
    target = (parent.__name__ + '.' + child if parent_alias != ALIAS and parent is not None
              else TARGET + fullname[len(ALIAS):])
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
        self.spec = getattr(module, '__spec__', None)   # None while alias_module() makes it

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # importlib has just set module.__spec__ to the alias's spec: give neomx its own back,
        # so reloading, pickling by reference and runpy see the real module.
        if self.spec is not None:
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
    as ``mxnet.*`` at once, so ``sys.modules`` agrees with what an import would give. Code
    importing ``mxnet`` is written for NumPy 1 too: the names NumPy 2 removed come back
    (neomx/_numpy1.py); libraries built on MXNet find what they check for as they import
    (neomx/_library_checks.py)."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
        _numpy1.restore()
    _library_checks.install()
    for name, mod in list(sys.modules.items()):
        if mod is not None and (name == TARGET or name.startswith(TARGET + '.')):
            sys.modules.setdefault(ALIAS + name[len(TARGET):],
                                   alias_module() if name == TARGET else mod)


def uninstall():
    """Removes the alias and forgets the ``mxnet.*`` entries it made."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    _library_checks.uninstall()
    for name in [n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + '.')]:
        mod = sys.modules[name]
        if mod is not None and (mod is _alias
                                or getattr(mod, '__name__', '').split('.')[0] == TARGET):
            del sys.modules[name]


def installed():
    return _finder in sys.meta_path
