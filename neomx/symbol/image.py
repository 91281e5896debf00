"""``sym.image``: operators registered as ``_image_<name>`` (to_tensor, normalize, resize, crop,
flips)."""
from ..ops import registry as _registry
from .symbol import _OPS


def __getattr__(name):
    full = '_image_' + name
    if _registry.exists(full):
        return _OPS[full]
    raise AttributeError("neomx.sym.image has no operator %r" % name)
