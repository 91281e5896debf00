"""``nd.image``: operators registered as ``_image_<name>`` (to_tensor, normalize, resize, crop,
flips)."""
from ..ops import registry as _registry
from .ndarray import _op as _nd_op


def __getattr__(name):
    full = '_image_' + name
    if _registry.exists(full):
        return _nd_op(full)
    raise AttributeError("neomx.nd.image has no operator %r" % name)
