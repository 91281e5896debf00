"""``sym.contrib``: operators registered as ``_contrib_<name>``."""
from ..ops import registry as _registry
from .symbol import _OPS


def __getattr__(name):
    full = '_contrib_' + name
    if _registry.exists(full):
        return _OPS[full]
    raise AttributeError("neomx.sym.contrib has no operator %r" % name)
