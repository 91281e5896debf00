"""``mx.image`` (also ``mx.img``): image decoding, resizing, cropping, augmenters and
iterators, and (``mx.image.detection``, also ``mx.image.det``) their object-detection
versions."""
from . import image
from .image import *  # noqa: F401,F403
from .image import _get_interp_method  # noqa: F401
from ._iter import ImageIter  # noqa: F401
from . import detection
from . import detection as det  # noqa: F401
from .detection import *  # noqa: F401,F403
from .. import io, recordio  # noqa: F401
from .. import ndarray as nd  # noqa: F401
from ..util import is_np_array  # noqa: F401
from ..base import numeric_types  # noqa: F401
