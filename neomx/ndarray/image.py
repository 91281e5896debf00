"""``nd.image``: operators registered as ``_image_<name>`` (to_tensor, normalize, resize, crop,
flips)."""
from ..ops import registry as _registry
from .gen import nd_function as _nd_function


def __getattr__(name):
    full = '_image_' + name
    if _registry.exists(full):
        return _nd_function(_registry.get(full))
    raise AttributeError("neomx.nd.image has no operator %r" % name)
