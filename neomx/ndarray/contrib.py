"""``nd.contrib``: operators registered as ``_contrib_<name>``."""
from ..ops import registry as _registry
from .gen import nd_function as _nd_function


def __getattr__(name):
    full = '_contrib_' + name
    if _registry.exists(full):
        return _nd_function(_registry.get(full))
    raise AttributeError("neomx.nd.contrib has no operator %r" % name)
