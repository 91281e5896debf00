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

from .... import ndarray as nd
from ....base import numeric_types
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ['Compose', 'HybridCompose', 'Cast', 'ToTensor', 'Normalize', 'Resize', 'CropResize',
           'CenterCrop', 'RandomResizedCrop', 'RandomFlipLeftRight', 'RandomFlipTopBottom',
           'RandomApply']


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

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """``(x[c] - mean[c]) / std[c]`` for each channel ``c`` of a CHW (or NCHW) tensor with 1 or
    3 channels; a scalar ``mean`` or ``std`` applies to every channel."""

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


def _crop_resize(x, box, size, interpolation):
    """The window ``box`` = (x0, y0, w, h) of image ``x``, resized to ``size`` = (w, h)."""
    x0, y0, w, h = box
    out = nd.image.crop(x, x0, y0, w, h)
    if (w, h) != tuple(size):
        out = nd.image.resize(out, size, False, interpolation)
    return out


def _center_box(w, h, size):
    """MXNet's ``image.center_crop`` window: the largest of ``size``'s aspect ratio that fits,
    centred."""
    cw, ch = size
    if h < ch:
        cw, ch = float(cw * h) / ch, h
    if w < cw:
        cw, ch = w, float(ch * w) / cw
    cw, ch = int(cw), int(ch)
    return int((w - cw) / 2), int((h - ch) / 2), cw, ch


class CenterCrop(Block):
    """Crops the centre of an HWC image to ``size`` (an int or ``(width, height)``); an image
    smaller than ``size`` is cropped to its aspect ratio and scaled up.

    >>> CenterCrop((4, 2))(nd.zeros((6, 8, 3))).shape
    (2, 4, 3)
    """

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._size = _pair(size)
        self._interpolation = interpolation

    def forward(self, x):
        h, w = x.shape[0], x.shape[1]
        return _crop_resize(x, _center_box(w, h, self._size), self._size, self._interpolation)


class RandomResizedCrop(Block):
    """Crops a random window of an HWC image, with an area of ``scale`` (a fraction range) of
    the image's and an aspect ratio (width / height) in ``ratio``, and resizes it to ``size``
    (an int or ``(width, height)``). After 10 draws that do not fit, crops the centre. Draws
    from Python's ``random`` module, as MXNet does."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._size = _pair(size)
        self._scale = (scale, 1.0) if isinstance(scale, numeric_types) else scale
        self._ratio = ratio
        self._interpolation = interpolation

    def forward(self, x):
        h, w = x.shape[0], x.shape[1]
        area = h * w
        log_ratio = (np.log(self._ratio[0]), np.log(self._ratio[1]))
        for _ in range(10):
            target = random.uniform(*self._scale) * area
            aspect = np.exp(random.uniform(*log_ratio))
            cw = int(round(np.sqrt(target * aspect)))
            ch = int(round(np.sqrt(target / aspect)))
            if 0 < cw <= w and 0 < ch <= h:
                x0 = random.randint(0, w - cw)
                y0 = random.randint(0, h - ch)
                return _crop_resize(x, (x0, y0, cw, ch), self._size, self._interpolation)
        return _crop_resize(x, _center_box(w, h, self._size), self._size, self._interpolation)


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
