"""``nd.linalg``: operators registered as ``_linalg_<name>``."""
from ..ops import registry as _registry
from .gen import nd_function as _nd_function


def __getattr__(name):
    full = '_linalg_' + name
    if _registry.exists(full):
        return _nd_function(_registry.get(full))
    raise AttributeError("neomx.nd.linalg has no operator %r" % name)
