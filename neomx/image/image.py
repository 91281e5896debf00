"""Reading, decoding and augmenting images, as MXNet's ``mx.image``.

Images are HWC NDArrays (``uint8`` as decoded, RGB unless asked for BGR; ``mx.np.ndarray``
under NumPy semantics, as in MXNet). Resizing follows
OpenCV's ``cv2.resize`` (pixel-centre sampling; ``interp`` 0 nearest, 1 bilinear, 2 bicubic,
3 area, 4 Lanczos, 9 chosen from the sizes, 10 random), decoding uses Pillow (the extra
``neomx[image]``).

>>> import neomx as mx
>>> img = mx.nd.array(np.arange(48).reshape(4, 4, 3), dtype='uint8')
>>> imresize(img, 2, 3).shape
(3, 2, 3)
>>> out, box = center_crop(img, (2, 2))
>>> out.shape, box
((2, 2, 3), (1, 1, 2, 2))
>>> scale_down((640, 480), (720, 120))
(640, 106)
"""
import json
import random
import warnings
from numbers import Number

import numpy as np
import torch

from ..base import MXNetError, numeric_types
from .. import ndarray as nd
from ..ndarray.ndarray import from_tensor, in_array_class, new_array
from . import _codec

__all__ = ['imread', 'imdecode', 'imresize', 'scale_down', 'copyMakeBorder', 'resize_short',
           'fixed_crop', 'random_crop', 'center_crop', 'color_normalize', 'random_size_crop',
           'imrotate', 'random_rotate', 'Augmenter', 'SequentialAug', 'ResizeAug',
           'ForceResizeAug', 'RandomCropAug', 'RandomSizedCropAug', 'CenterCropAug',
           'RandomOrderAug', 'BrightnessJitterAug', 'ContrastJitterAug', 'SaturationJitterAug',
           'HueJitterAug', 'ColorJitterAug', 'LightingAug', 'ColorNormalizeAug', 'RandomGrayAug',
           'HorizontalFlipAug', 'CastAug', 'CreateAugmenter']


def _to_nd(array, out=None, ctx=None):
    result = new_array(array, dtype=array.dtype, ctx=ctx)
    if out is None:
        return result
    if out.shape != result.shape:
        raise MXNetError("the output array has shape %s, the image %s" % (out.shape, result.shape))
    out[:] = result
    return out


def imread(filename, flag=1, to_rgb=True, out=None):
    """Reads and decodes the image file ``filename`` to an HWC ``uint8`` NDArray.

    Parameters
    ----------
    filename : str
    flag : {0, 1}, default 1
        1 for three color channels, 0 for grayscale (one channel).
    to_rgb : bool, default True
        RGB channel order (MXNet's), or BGR (OpenCV's) when False.
    out : NDArray, optional
        The array to write into.
    """
    return _to_nd(_codec.read(filename, flag, bool(to_rgb)), out)


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """Decodes an encoded image (JPEG, PNG, ...) to an HWC ``uint8`` NDArray.

    Parameters
    ----------
    buf : bytes, bytearray, numpy.ndarray or NDArray (of uint8)
        The encoded image.
    flag : {0, 1, -1}, default 1
        1 for three color channels, 0 for grayscale, -1 as stored (alpha kept).
    to_rgb : bool, default True
        RGB channel order, or BGR when False.
    out : NDArray, optional
    """
    if isinstance(buf, nd.NDArray):
        buf = buf.asnumpy().astype(np.uint8)
    return _to_nd(_codec.decode(buf, flag, bool(to_rgb)), out)


def imresize(src, w, h, interp=1, out=None):
    """Resizes the HWC image ``src`` to width ``w`` and height ``h``, as ``cv2.resize`` does.

    ``interp``: 0 nearest, 1 bilinear (default), 2 bicubic, 3 area, 4 Lanczos.
    """
    return nd._internal._cvimresize(src, w=w, h=h, interp=interp, out=out)


def scale_down(src_size, size):
    """The crop ``size`` (w, h) scaled down, keeping its aspect ratio, to fit in ``src_size``
    (w, h).

    >>> scale_down((360, 1000), (480, 500))
    (360, 375)
    """
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=(), out=None):
    """Pads the image ``src`` by ``top``, ``bot``, ``left`` and ``right`` pixels, as OpenCV's
    ``copyMakeBorder``.

    ``type`` (OpenCV's numbers): 0 constant (``values``, one per channel, or ``value``),
    1 replicate (aaa|abc), 2 reflect (cba|abc), 3 wrap (def|abcdef), 4 reflect-101 (dcb|abcd).
    """
    # pylint: disable=redefined-builtin
    return nd._internal._cvcopyMakeBorder(src, top=top, bot=bot, left=left, right=right,
                                          type=type, value=value, values=tuple(values),
                                          out=out)


def _get_interp_method(interp, sizes=()):
    """The OpenCV interpolation (0-4) for ``interp``: 9 picks bicubic to enlarge, area to
    shrink and bilinear otherwise from ``sizes`` = (old h, old w, new h, new w) (bicubic without
    sizes); 10 picks one at random."""
    if interp == 9:
        if not sizes:
            return 2
        oh, ow, nh, nw = sizes
        if nh > oh and nw > ow:
            return 2
        if nh < oh and nw < ow:
            return 3
        return 1
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError('Unknown interp method %d' % interp)
    return interp


def resize_short(src, size, interp=2):
    """Resizes the HWC image ``src`` so that its shorter edge is ``size`` (the longer one keeps
    the aspect ratio, rounded down)."""
    h, w = src.shape[0], src.shape[1]
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """The ``w`` x ``h`` window of ``src`` at column ``x0``, row ``y0``, resized to ``size``
    (w, h) when given."""
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        sizes = (h, w, size[1], size[0])
        out = imresize(out, size[0], size[1], interp=_get_interp_method(interp, sizes))
    return out


def random_crop(src, size, interp=2):
    """A random window of ``size`` (w, h) of ``src`` (scaled down to fit, then resized back to
    ``size``); returns ``(image, (x, y, w, h))``. Draws from Python's ``random``."""
    h, w = src.shape[0], src.shape[1]
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """The central window of ``size`` (w, h) of ``src`` (scaled down to fit, then resized back
    to ``size``); returns ``(image, (x, y, w, h))``."""
    h, w = src.shape[0], src.shape[1]
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """``(src - mean) / std`` per channel, computed in place in ``src`` (as MXNet does) and
    returned."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """A random window of ``src`` whose area is a fraction ``area`` (a minimum, or a (min,
    max) range) of the image's and whose aspect ratio w / h is in ``ratio`` (log-uniform),
    resized to ``size`` (w, h); after 10 draws that do not fit, the central crop. Returns
    ``(image, (x, y, w, h))``."""
    h, w = src.shape[0], src.shape[1]
    if 'min_area' in kwargs:
        warnings.warn('`min_area` is deprecated. Please use `area` instead.', DeprecationWarning)
        area = kwargs.pop('min_area')
    if kwargs:
        raise TypeError("random_size_crop: unexpected keyword arguments %s" % sorted(kwargs))
    if isinstance(area, numeric_types):
        area = (area, 1.0)
    log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
    for _ in range(10):
        target = random.uniform(area[0], area[1]) * h * w
        aspect = np.exp(random.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target * aspect)))
        new_h = int(round(np.sqrt(target / aspect)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def _rotate(images, radians, zoom_in, zoom_out):
    """Rotates each NCHW image by its angle (counter-clockwise) about its centre, sampling
    bilinearly with zeros outside, optionally scaled so that no padding shows (zoom_in) or the
    whole image does (zoom_out)."""
    n, _, h, w = images.shape
    dt = images.dtype
    ys = torch.arange(h, dtype=dt) - (h - 1) / 2
    xs = torch.arange(w, dtype=dt) - (w - 1) / 2
    gy, gx = torch.meshgrid(ys, xs, indexing='ij')
    c = torch.cos(radians).view(n, 1, 1)
    s = torch.sin(radians).view(n, 1, 1)
    # the rotated grid is normalised by the half-sizes after rotating, keeping the aspect ratio
    grid_x = (gx * c - gy * s) / ((w - 1) / 2)
    grid_y = (gx * s + gy * c) / ((h - 1) / 2)
    scale = torch.ones(n, 1, 1, dtype=dt)
    if zoom_in or zoom_out:
        a = radians.abs().view(n, 1, 1)
        diag = float(np.hypot(h, w))
        corner = float(np.arctan2(h, w))
        reach_x = torch.maximum((diag * torch.cos(corner + a)).abs(),
                                (diag * torch.cos(corner - a)).abs())
        reach_y = torch.maximum((diag * torch.sin(corner + a)).abs(),
                                (diag * torch.sin(corner - a)).abs())
        if zoom_out:
            scale = torch.maximum(reach_x / w, reach_y / h)
        else:
            scale = torch.minimum(w / reach_x, h / reach_y)
    grid = torch.stack([grid_x * scale, grid_y * scale], -1)
    return torch.nn.functional.grid_sample(images, grid, mode='bilinear', padding_mode='zeros',
                                           align_corners=True)


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotates a CHW ``float32`` image (by a number of degrees) or an NCHW batch (by one number,
    or an NDArray of one angle per image) counter-clockwise about the centre. ``zoom_in``
    scales so that no padding shows, ``zoom_out`` so that the whole image does."""
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if np.dtype(src.dtype) != np.float32:
        raise TypeError("Only `float32` images are supported by this function")
    single = src.ndim == 3
    if single:
        if not isinstance(rotation_degrees, Number):
            raise TypeError("When a single image is passed the rotation angle is required to "
                            "be a scalar.")
    elif src.ndim != 4:
        raise ValueError("Only 3D and 4D are supported by this function")
    n = 1 if single else src.shape[0]
    if isinstance(rotation_degrees, Number):
        degrees = torch.full((n,), float(rotation_degrees), dtype=torch.float32)
    else:
        degrees = torch.as_tensor(np.asarray(
            rotation_degrees.asnumpy() if isinstance(rotation_degrees, nd.NDArray)
            else rotation_degrees, dtype=np.float32)).reshape(-1)
    if degrees.numel() != n:
        raise ValueError("The number of images must be equal to the number of rotation angles")
    images = src._data()
    images = images.unsqueeze(0) if single else images
    out = _rotate(images.cpu(), degrees * (np.pi / 180), zoom_in, zoom_out)
    out = out[0] if single else out
    return in_array_class(from_tensor(out.to(images.device).contiguous(), src.context),
                          type(src))


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """``imrotate`` by angles drawn uniformly from ``angle_limits`` (degrees), one per image,
    from NumPy's global generator (as MXNet)."""
    if src.ndim == 3:
        degrees = np.random.uniform(*angle_limits)
    else:
        degrees = nd.array(np.random.uniform(*angle_limits, size=src.shape[0]))
    return imrotate(src, degrees, zoom_in=zoom_in, zoom_out=zoom_out)


# -- augmenters --------------------------------------------------------------------------------

class Augmenter:
    """Base class of the image augmenters: ``aug(src)`` returns the augmented HWC image.
    ``dumps()`` describes it as JSON."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for k, v in self._kwargs.items():
            if isinstance(v, nd.NDArray):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self):
        """The augmenter as a JSON string ``[name, kwargs]``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src):
        raise NotImplementedError("Must override implementation.")


class SequentialAug(Augmenter):
    """Applies the augmenters ``ts`` in order."""

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def dumps(self):
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]

    def __call__(self, src):
        for aug in self.ts:
            src = aug(src)
        return src


class ResizeAug(Augmenter):
    """Resizes the shorter edge to ``size``."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src):
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(Augmenter):
    """Resizes to ``size`` (w, h), whatever the aspect ratio."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src):
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return imresize(src, *self.size, interp=_get_interp_method(self.interp, sizes))


class RandomCropAug(Augmenter):
    """Crops a random window of ``size`` (w, h)."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src):
        return random_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """Crops a window of random area and aspect ratio and resizes it to ``size`` (see
    ``random_size_crop``)."""

    def __init__(self, size, area, ratio, interp=2, **kwargs):
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        self.size = size
        if 'min_area' in kwargs:
            warnings.warn('`min_area` is deprecated. Please use `area` instead.',
                          DeprecationWarning)
            area = kwargs.pop('min_area')
        if kwargs:
            raise TypeError("RandomSizedCropAug: unexpected keyword arguments %s" % sorted(kwargs))
        self.area = area
        self.ratio = ratio
        self.interp = interp

    def __call__(self, src):
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


class CenterCropAug(Augmenter):
    """Crops the central window of ``size`` (w, h)."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size = size
        self.interp = interp

    def __call__(self, src):
        return center_crop(src, self.size, self.interp)[0]


class RandomOrderAug(Augmenter):
    """Applies the augmenters ``ts`` in a random order."""

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def dumps(self):
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]

    def __call__(self, src):
        random.shuffle(self.ts)
        for t in self.ts:
            src = t(src)
        return src


_GRAY = (0.299, 0.587, 0.114)


class BrightnessJitterAug(Augmenter):
    """Scales the (float) image by 1 + U(-brightness, brightness), in place."""

    def __init__(self, brightness):
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src):
        src *= 1.0 + random.uniform(-self.brightness, self.brightness)
        return src


class ContrastJitterAug(Augmenter):
    """Blends the (float) image with its mean luma: ``alpha * src + (1 - alpha) * mean``,
    alpha = 1 + U(-contrast, contrast)."""

    def __init__(self, contrast):
        super().__init__(contrast=contrast)
        self.contrast = contrast
        self.coef = nd.array([[_GRAY]])

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        gray = src * self.coef
        # the mean over pixels of the luma, times (1 - alpha), added to every channel
        gray = (3.0 * (1.0 - alpha) / gray.size) * nd.sum(gray)
        src *= alpha
        src += gray
        return src


class SaturationJitterAug(Augmenter):
    """Blends each pixel with its luma: ``alpha * src + (1 - alpha) * gray``, alpha = 1 +
    U(-saturation, saturation)."""

    def __init__(self, saturation):
        super().__init__(saturation=saturation)
        self.saturation = saturation
        self.coef = nd.array([[_GRAY]])

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        gray = nd.sum(src * self.coef, axis=2, keepdims=True)
        gray *= (1.0 - alpha)
        src *= alpha
        src += gray
        return src


# RGB <-> YIQ (NTSC) matrices: a hue rotation is a rotation of the I-Q plane.
_TYIQ = np.array([[0.299, 0.587, 0.114],
                  [0.596, -0.274, -0.321],
                  [0.211, -0.523, 0.311]])
_ITYIQ = np.array([[1.0, 0.956, 0.621],
                   [1.0, -0.272, -0.647],
                   [1.0, -1.107, 1.705]])


class HueJitterAug(Augmenter):
    """Rotates the hue by U(-hue, hue) half-turns, as a linear map in YIQ space."""

    def __init__(self, hue):
        super().__init__(hue=hue)
        self.hue = hue
        self.tyiq = _TYIQ
        self.ityiq = _ITYIQ

    def __call__(self, src):
        alpha = random.uniform(-self.hue, self.hue)
        u, w = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        rot = np.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        t = (self.ityiq @ rot @ self.tyiq).T
        return nd.dot(src, nd.array(t, dtype=src.dtype))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter (those > 0), in a random order."""

    def __init__(self, brightness, contrast, saturation):
        ts = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """Adds PCA lighting noise: ``eigvec @ (alpha * eigval)`` with alpha ~ N(0, alphastd) (from
    NumPy's global generator)."""

    def __init__(self, alphastd, eigval, eigvec):
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = alphastd
        self.eigval = eigval
        self.eigvec = eigvec

    def __call__(self, src):
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        rgb = np.dot(self.eigvec * alpha, self.eigval)
        src += nd.array(rgb, dtype=src.dtype)
        return src


class ColorNormalizeAug(Augmenter):
    """Subtracts ``mean`` and divides by ``std`` (per channel)."""

    def __init__(self, mean, std):
        super().__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, nd.NDArray) else nd.array(mean)
        self.std = std if std is None or isinstance(std, nd.NDArray) else nd.array(std)

    def __call__(self, src):
        return color_normalize(src, self.mean, self.std)


class RandomGrayAug(Augmenter):
    """With probability ``p``, replaces every channel by the luma (0.21 R + 0.72 G + 0.07 B)."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p
        self.mat = nd.array([[0.21, 0.21, 0.21],
                             [0.72, 0.72, 0.72],
                             [0.07, 0.07, 0.07]])

    def __call__(self, src):
        if random.random() < self.p:
            src = nd.dot(src, self.mat.astype(src.dtype))
        return src


class HorizontalFlipAug(Augmenter):
    """Flips left to right with probability ``p``."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
        return src


class CastAug(Augmenter):
    """Casts to ``typ`` (float32)."""

    def __init__(self, typ='float32'):
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src):
        return src.astype(self.typ)


# AlexNet's PCA of ImageNet's RGB pixels, and ImageNet's RGB mean and standard deviation.
_PCA_EIGVAL = np.array([55.46, 4.794, 1.148])
_PCA_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                        [-0.5808, -0.0045, -0.8140],
                        [-0.5836, -0.6948, 0.4203]])
_IMAGENET_MEAN = (123.68, 116.28, 103.53)
_IMAGENET_STD = (58.395, 57.12, 57.375)


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False, rand_mirror=False,
                    mean=None, std=None, brightness=0, contrast=0, saturation=0, hue=0,
                    pca_noise=0, rand_gray=0, inter_method=2):
    """The standard list of augmenters for images of ``data_shape`` (C, H, W): resize the short
    edge to ``resize``; a random-sized (``rand_resize``), random (``rand_crop``) or central crop
    to (W, H); a random mirror; a cast to float32; color, hue and PCA lighting jitter; random
    gray; normalisation by ``mean`` / ``std`` (True for ImageNet's).

    >>> [type(a).__name__ for a in CreateAugmenter((3, 224, 224), resize=256, mean=True)]
    ['ResizeAug', 'CenterCropAug', 'CastAug', 'ColorNormalizeAug']
    """
    auglist = []
    if resize > 0:
        auglist.append(ResizeAug(resize, inter_method))
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        if not rand_crop:
            raise ValueError("CreateAugmenter: rand_resize needs rand_crop")
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    if brightness or contrast or saturation:
        auglist.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        auglist.append(HueJitterAug(hue))
    if pca_noise > 0:
        auglist.append(LightingAug(pca_noise, _PCA_EIGVAL, _PCA_EIGVEC))
    if rand_gray > 0:
        auglist.append(RandomGrayAug(rand_gray))
    if mean is True:
        mean = nd.array(_IMAGENET_MEAN)
    elif mean is not None and not (isinstance(mean, (np.ndarray, nd.NDArray))
                                   and mean.shape[0] in (1, 3)):
        raise ValueError("CreateAugmenter: mean must be True or an array of 1 or 3 values")
    if std is True:
        std = nd.array(_IMAGENET_STD)
    elif std is not None and not (isinstance(std, (np.ndarray, nd.NDArray))
                                  and std.shape[0] in (1, 3)):
        raise ValueError("CreateAugmenter: std must be True or an array of 1 or 3 values")
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from .. import io, recordio  # noqa: E402,F401
from ..ndarray import _internal  # noqa: E402,F401
from ..util import is_np_array  # noqa: E402,F401


def __getattr__(name):
    # image.image.ImageIter (MXNet's module holds it); _iter.py builds on this module
    if name == 'ImageIter':
        from ._iter import ImageIter
        return ImageIter
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
