"""``sym.linalg``: operators registered as ``_linalg_<name>``."""
from ..ops import registry as _registry
from .symbol import _OPS


def __getattr__(name):
    full = '_linalg_' + name
    if _registry.exists(full):
        return _OPS[full]
    raise AttributeError("neomx.sym.linalg has no operator %r" % name)
