"""Image transforms: Blocks to use as ``dataset.transform_first(...)``.

Images are HWC NDArrays (``uint8`` as read by the datasets); ``ToTensor`` turns them into CHW
``float32`` in [0, 1], after which ``Normalize`` applies. ``Resize``, ``ToTensor``,
``Normalize`` and ``Cast`` also take NHWC / NCHW batches.

>>> import neomx as mx
>>> from neomx.gluon.data.vision import transforms
>>> t = transforms.Compose([transforms.Resize(32), transforms.ToTensor(),
...                         transforms.Normalize(0.5, 0.25)])
>>> t(mx.nd.zeros((28, 28, 1), dtype='uint8')).shape
(1, 32, 32)
"""
import random

import numpy as np

from .... import image
from .... import ndarray as nd
from ....base import numeric_types
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ['Compose', 'HybridCompose', 'Cast', 'ToTensor', 'Normalize', 'Resize', 'CropResize',
           'CenterCrop', 'RandomResizedCrop', 'RandomFlipLeftRight', 'RandomFlipTopBottom',
           'RandomApply', 'Rotate', 'RandomRotation', 'RandomBrightness', 'RandomContrast',
           'RandomSaturation', 'RandomHue', 'RandomColorJitter', 'RandomLighting',
           'sample_ndim']


class Compose(Sequential):
    """Applies ``transforms`` in order. Runs of consecutive HybridBlocks are grouped into one
    hybridized ``HybridSequential``, as MXNet does.

    >>> Compose([Cast('float16')])(nd.ones((2, 2, 3))).dtype
    <class 'numpy.float16'>
    """

    def __init__(self, transforms):
        super().__init__()
        hybrid = []
        for t in list(transforms) + [None]:
            if isinstance(t, HybridBlock):
                hybrid.append(t)
                continue
            if len(hybrid) == 1:
                self.add(hybrid[0])
            elif len(hybrid) > 1:
                block = HybridSequential()
                block.add(*hybrid)
                block.hybridize()
                self.add(block)
            hybrid = []
            if t is not None:
                self.add(t)


def sample_ndim(block):
    """The number of axes of the samples on which ``block`` computes a batch of them (stacked on
    a new first axis) exactly as it computes each one: the deterministic transforms that take
    a batch too (``ToTensor``, ``Normalize``, ``Resize``: images of 3 axes; ``Cast``: any
    number, 0) and compositions of them, without hooks. None for any other block, a random
    transform or a subclass included (it may compute otherwise).

    >>> sample_ndim(Compose([Resize(4), ToTensor(), Cast('float16')]))
    3
    >>> sample_ndim(RandomFlipLeftRight()) is None
    True
    """
    if not isinstance(block, Block) or block._forward_hooks or block._forward_pre_hooks:
        return None
    kind = type(block)
    if kind in (Compose, HybridCompose, Sequential, HybridSequential):
        ndims = set()
        for child in block._children.values():
            n = sample_ndim(child)
            if n is None:
                return None
            if n:
                ndims.add(n)
        if not block._children or len(ndims) > 1:
            return None
        return ndims.pop() if ndims else 0
    return kind.__dict__.get('_sample_ndim')


class HybridCompose(HybridSequential):
    """Applies the HybridBlocks ``transforms`` in order, as one HybridBlock (hybridizable)."""

    def __init__(self, transforms):
        super().__init__()
        for t in transforms:
            if not isinstance(t, HybridBlock):
                raise TypeError("HybridCompose takes HybridBlocks only, got %s; use Compose for "
                                "a mix" % type(t).__name__)
            self.add(t)


class Cast(HybridBlock):
    """Casts to ``dtype`` (default float32)."""
    _sample_ndim = 0    # computes a batch as each of its samples (sample_ndim)

    def __init__(self, dtype='float32'):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """HWC (or NHWC) values in [0, 255] to CHW (or NCHW) float32 in [0, 1].

    >>> ToTensor()(nd.full((4, 2, 3), 255, dtype='uint8')).shape
    (3, 4, 2)
    """
    _sample_ndim = 3

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """``(x[c] - mean[c]) / std[c]`` for each channel ``c`` of a CHW (or NCHW) tensor with 1 or
    3 channels; a scalar ``mean`` or ``std`` applies to every channel."""
    _sample_ndim = 3

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, self._mean, self._std)


class Resize(HybridBlock):
    """Resizes an HWC image (or NHWC batch) to ``size``: an int (square; with ``keep_ratio``
    the short edge) or ``(width, height)``. ``interpolation``: 0 nearest, 1 bilinear (default),
    2 bicubic, 3 area.

    >>> Resize((6, 4))(nd.zeros((8, 8, 3), dtype='uint8')).shape
    (4, 6, 3)
    """
    _sample_ndim = 3

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._keep = keep_ratio
        self._size = size
        self._interpolation = interpolation

    def hybrid_forward(self, F, x):
        return F.image.resize(x, self._size, self._keep, self._interpolation)


class CropResize(HybridBlock):
    """Crops the ``width`` x ``height`` window at column ``x``, row ``y`` of an HWC image (or
    NHWC batch), then resizes it to ``size`` when given."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._box = (x, y, width, height)
        self._size = size
        self._interpolation = 1 if interpolation is None else interpolation

    def hybrid_forward(self, F, x):
        out = F.image.crop(x, *self._box)
        if self._size:
            out = F.image.resize(out, self._size, False, self._interpolation)
        return out


def _pair(size):
    return (size, size) if isinstance(size, numeric_types) else tuple(size)


class CenterCrop(Block):
    """Crops the centre of an HWC image to ``size`` (an int or ``(width, height)``); an image
    smaller than ``size`` is cropped to its aspect ratio and scaled up (``image.center_crop``).

    >>> CenterCrop((4, 2))(nd.zeros((6, 8, 3))).shape
    (2, 4, 3)
    """

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._args = (_pair(size), interpolation)

    def forward(self, x):
        return image.center_crop(x, *self._args)[0]


class RandomResizedCrop(Block):
    """Crops a random window of an HWC image, with an area of ``scale`` (a fraction range) of
    the image's and an aspect ratio (width / height) in ``ratio``, and resizes it to ``size``
    (an int or ``(width, height)``); after 10 draws that do not fit, the centre
    (``image.random_size_crop``). Draws from Python's ``random`` module, as MXNet does."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._args = (_pair(size), scale, ratio, interpolation)

    def forward(self, x):
        return image.random_size_crop(x, *self._args)[0]


class Rotate(Block):
    """Rotates a CHW (or NCHW) ``float32`` image by ``rotation_degrees`` counter-clockwise,
    keeping its shape; ``zoom_in`` scales so that no padding shows, ``zoom_out`` so that the
    whole image does (``image.imrotate``)."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        if x.dtype is not np.float32:
            raise TypeError("This transformation only supports float32. "
                            "Consider calling it after ToTensor")
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """With probability ``rotate_with_proba``, rotates a CHW (or NCHW) ``float32`` image by an
    angle drawn uniformly from ``angle_limits`` (degrees; one per image of a batch)."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if not 0 <= rotate_with_proba <= 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        if np.random.random() > self._rotate_with_proba:
            return x
        if x.dtype is not np.float32:
            raise TypeError("This transformation only supports float32. "
                            "Consider calling it after ToTensor")
        return image.random_rotate(x, *self._args)


class _RandomFactor(HybridBlock):
    """Jitters an HWC image with a factor drawn from [max(0, 1 - amount), 1 + amount]."""
    _op = None

    def __init__(self, amount):
        super().__init__()
        self._args = (max(0, 1 - amount), 1 + amount)

    def hybrid_forward(self, F, x):
        return getattr(F.image, self._op)(x, *self._args)


class RandomBrightness(_RandomFactor):
    """Scales an HWC image's values by a factor drawn from [max(0, 1 - brightness),
    1 + brightness]."""
    _op = 'random_brightness'


class RandomContrast(_RandomFactor):
    """Blends an HWC RGB image with its mean luma by a factor drawn from
    [max(0, 1 - contrast), 1 + contrast]."""
    _op = 'random_contrast'


class RandomSaturation(_RandomFactor):
    """Blends each pixel of an HWC RGB image with its luma by a factor drawn from
    [max(0, 1 - saturation), 1 + saturation]."""
    _op = 'random_saturation'


class RandomHue(_RandomFactor):
    """Rotates the hue of an HWC RGB image by a number of turns drawn from [max(0, 1 - hue),
    1 + hue] (modulo one turn: a jitter of +- hue turns)."""
    _op = 'random_hue'


class RandomColorJitter(HybridBlock):
    """Jitters brightness, contrast, saturation (factors 1 +- each amount) and hue (+- the
    amount of a turn) of an HWC RGB image, in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def hybrid_forward(self, F, x):
        return F.image.random_color_jitter(x, *self._args)


class RandomLighting(HybridBlock):
    """Adds AlexNet-style PCA lighting noise of strength ``alpha`` to an HWC RGB image."""

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.image.random_lighting(x, self._alpha)


class RandomFlipLeftRight(HybridBlock):
    """Flips an HWC image left to right with probability 0.5 (drawn from the device's
    generator, so ``mx.random.seed`` makes it reproducible)."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_left_right(x)


class RandomFlipTopBottom(HybridBlock):
    """Flips an HWC image top to bottom with probability 0.5."""

    def hybrid_forward(self, F, x):
        return F.image.random_flip_top_bottom(x)


class RandomApply(Sequential):
    """Applies ``transforms`` (a Block) with probability ``p``."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < random.random():
            return x
        return self.transforms(x)


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from ....util import is_np_array  # noqa: E402,F401
