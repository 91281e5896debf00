"""``mx.image`` (also ``mx.img``): image decoding, resizing, cropping, augmenters and
iterators."""
from . import image
from .image import *  # noqa: F401,F403
from .image import _get_interp_method  # noqa: F401
from ._iter import ImageIter  # noqa: F401
