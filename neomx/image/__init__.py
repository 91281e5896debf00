"""``mx.image`` (also ``mx.img``): image decoding, resizing, cropping, augmenters and
iterators."""
from . import image
from .image import *  # noqa: F401,F403
from .image import _get_interp_method  # noqa: F401


def __getattr__(name):
    if name == 'ImageIter':
        return image.ImageIter
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
