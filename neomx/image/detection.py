"""Object detection images, as MXNet's ``mx.image.detection`` (also ``mx.image.det``):
augmenters that move the bounding boxes with the image, and ``ImageDetIter``.

A label is a 2-d array, one row per object: ``[class, xmin, ymin, xmax, ymax, extra...]``,
the corners as fractions of the image's width and height. In a record file or image list a
label is stored flat: ``[header width A, object width B, (A - 2 more header values),
object 1 (B values), object 2, ...]``.

>>> import neomx as mx
>>> img = mx.nd.zeros((20, 40, 3), dtype='uint8')
>>> label = np.array([[0, 0.1, 0.2, 0.5, 0.6]])
>>> _, out = DetHorizontalFlipAug(1.0)(img, label.copy())
>>> out.round(3).tolist()
[[0.0, 0.5, 0.2, 0.9, 0.6]]
"""
import json
import logging
import math
import random
import warnings

import numpy as np

from .. import ndarray as nd
from ..base import numeric_types
from ..io import DataBatch, DataDesc
from ..ndarray.ndarray import new_array
from ._iter import ImageIter
from .image import (Augmenter, CastAug, ColorJitterAug, ColorNormalizeAug, ForceResizeAug,
                    HueJitterAug, LightingAug, RandomGrayAug, ResizeAug, copyMakeBorder,
                    fixed_crop)

__all__ = ['DetAugmenter', 'DetBorrowAug', 'DetRandomSelectAug', 'DetHorizontalFlipAug',
           'DetRandomCropAug', 'DetRandomPadAug', 'CreateMultiRandCropAugmenter',
           'CreateDetAugmenter', 'ImageDetIter']


class DetAugmenter:
    """Base class of the detection augmenters: ``aug(src, label)`` returns the augmented HWC
    image and its label (objects x (class, xmin, ymin, xmax, ymax, ...))."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        for k, v in kwargs.items():
            if isinstance(v, nd.NDArray):
                v = v.asnumpy()
            if isinstance(v, np.ndarray):
                self._kwargs[k] = v.tolist()

    def dumps(self):
        """The augmenter as a JSON string ``[name, kwargs]``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src, label):
        raise NotImplementedError("Must override implementation.")


class DetBorrowAug(DetAugmenter):
    """Applies an image augmenter (``mx.image.Augmenter``) that leaves the boxes where they
    are (color changes, casts, a resize of the whole image)."""

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError("DetBorrowAug: expected an mx.image.Augmenter, got %s"
                            % type(augmenter).__name__)
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        return [type(self).__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """Applies one of ``aug_list``, picked at random, or (with probability ``skip_prob``, or
    always when the list is empty) none."""

    def __init__(self, aug_list, skip_prob=0):
        super().__init__(skip_prob=skip_prob)
        aug_list = list(aug_list) if isinstance(aug_list, (list, tuple)) else [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise ValueError("DetRandomSelectAug: the list may hold DetAugmenters only, "
                                 "got %s" % type(aug).__name__)
        self.aug_list = aug_list
        self.skip_prob = skip_prob if aug_list else 1

    def dumps(self):
        return [type(self).__name__.lower(), [a.dumps() for a in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return src, label
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """Mirrors the image left to right with probability ``p``, and the boxes with it (the
    label array is changed in place)."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
            self._flip_label(label)
        return src, label

    @staticmethod
    def _flip_label(label):
        left = 1.0 - label[:, 3]
        label[:, 3] = 1.0 - label[:, 1]
        label[:, 1] = left


def _pair(value, what, aug):
    if isinstance(value, (tuple, list)):
        return tuple(value)
    if not isinstance(value, numeric_types):
        raise TypeError("%s: %s must be a number or a (low, high) pair, got %r"
                        % (aug, what, value))
    logging.info('Using fixed %s: %s in %s', what, value, aug)
    return (value, value)


def _box_areas(boxes):
    """Areas of boxes given as rows (xmin, ymin, xmax, ymax), 0 for empty ones."""
    return np.maximum(0, boxes[:, 2] - boxes[:, 0]) * np.maximum(0, boxes[:, 3] - boxes[:, 1])


def _clip_boxes(boxes, xmin, ymin, xmax, ymax):
    """The part of each box inside the window; all zeros where nothing is."""
    out = np.stack([np.maximum(boxes[:, 0], xmin), np.maximum(boxes[:, 1], ymin),
                    np.minimum(boxes[:, 2], xmax), np.minimum(boxes[:, 3], ymax)], axis=1)
    out[(out[:, 0] >= out[:, 2]) | (out[:, 1] >= out[:, 3])] = 0
    return out


def _window_height(low, high, ratio, width, height, crop):
    """A random window height between the heights giving areas ``low`` and ``high`` at aspect
    ratio ``ratio`` (width / height), kept inside (crop) or around (pad) the image."""
    h = int(round(math.sqrt(low / ratio)))
    top = int(round(math.sqrt(high / ratio)))
    if crop:
        if round(top * ratio) > width:     # the tallest window whose width still fits
            top = int((width + 0.4999999) / ratio)
        top = min(top, height)
        h = min(h, top)
    else:
        if round(h * ratio) < width:       # at least as wide as the image
            h = int((width + 0.499999) / ratio)
        h = min(max(h, height), top)
    if h < top:
        h = random.randint(h, top)
    return h


def _proposal_ranges(aug, aspect_ratio_range, area_range, area_floor, area_name):
    """The (aspect ratio, area) ranges of random crop or pad augmenter ``aug`` as pairs, and
    whether it is enabled: as MXNet, an area range reaching no higher than ``area_floor`` or
    reversed, or an aspect ratio range not positive or reversed, disables it with a warning
    (``area_name`` is what MXNet's warning calls the area range)."""
    aspect_ratio_range = _pair(aspect_ratio_range, 'aspect ratio', aug)
    area_range = _pair(area_range, 'area range', aug)
    if area_range[1] <= area_floor or area_range[0] > area_range[1]:
        warnings.warn('Skip %s due to invalid %s: %s' % (aug, area_name, area_range))
    elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
        warnings.warn('Skip %s due to invalid aspect_ratio_range: %s'
                      % (aug, aspect_ratio_range))
    else:
        return aspect_ratio_range, area_range, True
    return aspect_ratio_range, area_range, False


class DetRandomCropAug(DetAugmenter):
    """Crops a random window whose aspect ratio (width / height) is in
    ``aspect_ratio_range`` and whose area is a fraction in ``area_range`` of the image's,
    such that every object it overlaps is covered more than ``min_object_covered``; objects
    left with less than ``min_eject_coverage`` of their area are dropped. Up to
    ``max_attempts`` windows are tried; if none fits, the image is left as it is."""

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        aspect_ratio_range, area_range, self.enabled = _proposal_ranges(
            'DetRandomCropAug', aspect_ratio_range, area_range, 0, 'area_range')
        super().__init__(min_object_covered=min_object_covered,
                         aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return src, label

    def _covers_enough(self, label, box, width, height):
        x0, y0, x1, y1 = box
        if (x1 - x0) * (y1 - y0) < 2:
            return False
        areas = _box_areas(label[:, 1:5])
        seen = areas * width * height > 2          # objects of more than 2 pixels
        if not seen.any():
            return False
        inside = _clip_boxes(label[seen, 1:5], x0 / width, y0 / height, x1 / width,
                             y1 / height)
        coverage = _box_areas(inside) / areas[seen]
        coverage = coverage[coverage > 0]
        return coverage.size > 0 and coverage.min() > self.min_object_covered

    def _crop_labels(self, label, x, y, w, h, width, height):
        """The label in the window's coordinates, without the objects it ejects (None when
        none is left)."""
        out = label.copy()
        fx, fy, fw, fh = x / width, y / height, w / width, h / height
        out[:, (1, 3)] = (out[:, (1, 3)] - fx) / fw
        out[:, (2, 4)] = (out[:, (2, 4)] - fy) / fh
        out[:, 1:5] = np.clip(out[:, 1:5], 0, 1)
        coverage = _box_areas(out[:, 1:5]) * fw * fh / _box_areas(label[:, 1:5])
        keep = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & \
            (coverage > self.min_eject_coverage)
        return out[keep] if keep.any() else None

    def _random_crop_proposal(self, label, height, width):
        """``(x, y, w, h, new label)`` of a window meeting the constraints, or ()."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        low, high = (a * height * width for a in self.area_range)
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = _window_height(low, high, ratio, width, height, crop=True)
            w = int(round(h * ratio))
            if w * h < low:                  # rounding took the area out of range
                h += 1
                w = int(round(h * ratio))
            if w * h > high:
                h -= 1
                w = int(round(h * ratio))
            if not (low <= w * h <= high and 0 <= w <= width and 0 <= h <= height):
                continue
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._covers_enough(label, (x, y, x + w, y + h), width, height):
                new = self._crop_labels(label, x, y, w, h, width, height)
                if new is not None:
                    return x, y, w, h, new
        return ()


class DetRandomPadAug(DetAugmenter):
    """Places the image at a random position on a larger canvas filled with ``pad_val``,
    whose aspect ratio is in ``aspect_ratio_range`` and whose area is a multiple in
    ``area_range`` (above 1) of the image's; the boxes move with the image."""

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0),
                 max_attempts=50, pad_val=(128, 128, 128)):
        if not isinstance(pad_val, (list, tuple)):
            if not isinstance(pad_val, numeric_types):
                raise TypeError("DetRandomPadAug: pad_val must be a number or one per "
                                "channel, got %r" % (pad_val,))
        aspect_ratio_range, area_range, self.enabled = _proposal_ranges(
            'DetRandomPadAug', aspect_ratio_range, area_range, 1.0, 'parameters')
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts

    def __call__(self, src, label):
        height, width = src.shape[0], src.shape[1]
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            values = self.pad_val if isinstance(self.pad_val, (list, tuple)) \
                else (self.pad_val,)
            # constant border (MXNet passes 16, OpenCV's BORDER_ISOLATED flag over constant,
            # which is the same for a whole image)
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, 0,
                                 values=tuple(float(v) for v in values))
        return src, label

    @staticmethod
    def _pad_labels(label, x, y, w, h, width, height):
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + x) / w
        out[:, (2, 4)] = (out[:, (2, 4)] * height + y) / h
        return out

    def _random_pad_proposal(self, label, height, width):
        """``(x, y, w, h, new label)`` of the canvas and the image's place on it, or ()."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        low, high = (a * height * width for a in self.area_range)
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = _window_height(low, high, ratio, width, height, crop=False)
            w = int(round(h * ratio))
            if h - height < 2 or w - width < 2:
                continue                     # a margin too thin to be worth it
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            return x, y, w, h, self._pad_labels(label, x, y, w, h, width, height)
        return ()


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    """A ``DetRandomSelectAug`` over several ``DetRandomCropAug``: each argument is one value
    for all of them or a list with one value per augmenter (lists must agree in length).

    >>> aug = CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5], skip_prob=0.2)
    >>> len(aug.aug_list), aug.aug_list[1].min_object_covered
    (2, 0.5)
    """
    params = [p if isinstance(p, list) else [p] for p in
              (min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
               max_attempts)]
    n = max(len(p) for p in params)
    for name, p in zip(('min_object_covered', 'aspect_ratio_range', 'area_range',
                        'min_eject_coverage', 'max_attempts'), params):
        if len(p) not in (1, n):
            raise ValueError("CreateMultiRandCropAugmenter: %s has %d values, expected 1 or %d"
                             % (name, len(p), n))
    params = [p * n if len(p) == 1 else p for p in params]
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma)
            for moc, arr, ar, mec, ma in zip(*params)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


_MEAN = np.array([123.68, 116.28, 103.53])
_STD = np.array([58.395, 57.12, 57.375])
_EIGVAL = np.array([55.46, 4.794, 1.148])
_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                    [-0.5808, -0.0045, -0.8140],
                    [-0.5836, -0.6948, 0.4203]])


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2, min_object_covered=0.1,
                       aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 3.0),
                       min_eject_coverage=0.3, max_attempts=50, pad_val=(127, 127, 127)):
    """The detection augmenters ``ImageDetIter`` uses by default, in order: resize of the
    short edge (``resize`` > 0), random crops (probability ``rand_crop``), mirroring, random
    padding (probability ``rand_pad``), a forced resize to ``data_shape`` (C, H, W), a cast to
    float32, color jitter, hue, PCA lighting noise, random gray, and normalisation
    (``mean``/``std`` True for ImageNet's values).

    >>> [type(a).__name__ for a in CreateDetAugmenter((3, 32, 32), rand_mirror=True)]
    ['DetHorizontalFlipAug', 'DetBorrowAug', 'DetBorrowAug']
    """
    augs = []
    if resize > 0:
        augs.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        augs.append(CreateMultiRandCropAugmenter(min_object_covered, aspect_ratio_range,
                                                 area_range, min_eject_coverage, max_attempts,
                                                 skip_prob=1 - rand_crop))
    if rand_mirror > 0:
        augs.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:     # as late as possible: the images are larger after it
        pad = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts, pad_val)
        augs.append(DetRandomSelectAug([pad], 1 - rand_pad))
    augs.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    augs.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        augs.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        augs.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        augs.append(DetBorrowAug(LightingAug(pca_noise, _EIGVAL, _EIGVEC)))
    if rand_gray > 0:
        augs.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    mean = _MEAN if mean is True else mean
    std = _STD if std is True else std
    for name, v in (('mean', mean), ('std', std)):
        if v is not None and not (isinstance(v, np.ndarray) and v.shape[0] in (1, 3)):
            raise ValueError("CreateDetAugmenter: %s must be True, None or a NumPy array of 1 "
                             "or 3 values, got %r" % (name, v))
    if mean is not None or std is not None:
        augs.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return augs


class ImageDetIter(ImageIter):
    """Batches of augmented images and their object labels, from a ``.rec`` file, an image
    list or ``imglist`` (see ``ImageIter``). The label batch has shape (batch, objects,
    object width), ``objects`` the most any image holds; rows past an image's objects are -1.

    ``aug_list`` defaults to ``CreateDetAugmenter(data_shape, **kwargs)``.
    """

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name='data', label_name='label',
                 last_batch_handle='pad', **kwargs):
        super().__init__(batch_size=batch_size, data_shape=data_shape,
                         path_imgrec=path_imgrec, path_imglist=path_imglist,
                         path_root=path_root, path_imgidx=path_imgidx, shuffle=shuffle,
                         part_index=part_index, num_parts=num_parts, aug_list=[],
                         imglist=imglist, data_name=data_name, label_name=label_name,
                         last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None \
            else aug_list
        self.label_shape = self._estimate_label_shape()
        self.provide_label = [DataDesc(label_name, (self.batch_size,) + self.label_shape)]

    def _check_valid_label(self, label):
        if label.ndim != 2 or label.shape[1] < 5:
            raise RuntimeError("Label with shape (1+, 5+) required, %s received." % (label,))
        valid = (label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])
        if not valid.any():
            raise RuntimeError('Invalid label occurs.')

    def _estimate_label_shape(self):
        """(most objects in one image, object width), reading every label once."""
        most, width = 0, None
        self.reset()
        try:
            while True:
                label = self._parse_label(self.next_sample()[0])
                most, width = max(most, label.shape[0]), label.shape[1]
        except StopIteration:
            pass
        self.reset()
        if width is None:
            raise RuntimeError("ImageDetIter: the data source holds no labelled image")
        return (most, width)

    def _parse_label(self, label):
        """The objects (rows) of a flat label ``[A, B, header..., objects...]``, without the
        ones whose box is empty."""
        raw = (label.asnumpy() if isinstance(label, nd.NDArray) else np.asarray(label)).ravel()
        if raw.size < 7:
            raise RuntimeError("Label shape is invalid: %s" % (raw.shape,))
        header, width = int(raw[0]), int(raw[1])
        if width <= 0 or (raw.size - header) % width:
            raise RuntimeError("Label shape %s inconsistent with annotation width %d."
                               % (raw.shape, width))
        out = raw[header:].reshape(-1, width)
        out = out[(out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2])]
        if not out.shape[0]:
            raise RuntimeError('Encounter sample with no valid label.')
        return out

    def reshape(self, data_shape=None, label_shape=None):
        """Changes the data shape (C, H, W) or the label shape (objects, width) of the
        batches; the label may grow, not shrink."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [DataDesc(self.provide_data[0].name,
                                          (self.batch_size,) + tuple(data_shape))]
            self.data_shape = tuple(data_shape)
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [DataDesc(self.provide_label[0].name,
                                           (self.batch_size,) + tuple(label_shape))]
            self.label_shape = tuple(label_shape)

    def _batchify(self, batch_data, batch_label, start=0):
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image([data])
                    label = self._parse_label(label)
                    data, label = self.augmentation_transform(data, label)
                    self._check_valid_label(label)
                except RuntimeError as e:
                    logging.debug('Invalid image, skipping: %s', e)
                    continue
                batch_data[i] = self.postprocess_data(data)
                n = label.shape[0]
                batch_label[i][0:n] = new_array(label)
                if n < batch_label[i].shape[0]:
                    batch_label[i][n:] = -1
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _new_label(self):
        # rows past an image's objects stay -1 (no object)
        label = super()._new_label()
        label[:] = -1
        return label

    def augmentation_transform(self, data, label):  # pylint: disable=arguments-differ
        """Applies the detection augmenters in order."""
        for aug in self.auglist:
            data, label = aug(data, label)
        return data, label

    def check_label_shape(self, label_shape):
        """Checks a new label shape: (objects, width), no fewer objects, the same width."""
        if len(label_shape) != 2:
            raise ValueError('label_shape should have length 2')
        if label_shape[0] < self.label_shape[0]:
            raise ValueError('Attempts to reduce label count from %d to %d, not allowed.'
                             % (self.label_shape[0], label_shape[0]))
        if label_shape[1] != self.provide_label[0][1][2]:
            raise ValueError('label_shape object width inconsistent: %d vs %d.'
                             % (self.provide_label[0][1][2], label_shape[1]))

    def draw_next(self, color=None, thickness=2, mean=None, std=None, clip=True,
                  waitKey=None, window_name='draw_next', id2labels=None):
        """Yields the next images (HWC uint8, BGR as OpenCV shows them) with their boxes
        drawn, as MXNet does with OpenCV; needs OpenCV (``cv2``), and warns and returns
        without it."""
        try:
            import cv2
        except ImportError as e:
            warnings.warn('Unable to import cv2, skip drawing: %s' % e)
            return
        count = 0
        try:
            while True:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image([data])
                    label = self._parse_label(label)
                except RuntimeError as e:
                    logging.debug('Invalid image, skipping: %s', e)
                    continue
                count += 1
                data, label = self.augmentation_transform(data, label)
                image = data.asnumpy().astype(np.float64)
                if std is not None:
                    image *= _STD if std is True else std
                if mean is not None:
                    image += _MEAN if mean is True else mean
                image = image[:, :, ::-1].copy()
                if clip:
                    image = np.clip(image, 0, 255)
                image = image.astype(np.uint8)
                bgr = tuple(color[::-1]) if color else None
                height, width = image.shape[:2]
                for row in label:
                    x1, y1 = int(row[1] * width), int(row[2] * height)
                    if x1 < 0:
                        continue
                    x2, y2 = int(row[3] * width), int(row[4] * height)
                    c = bgr or tuple(float(v) for v in np.random.rand(3) * 255)
                    cv2.rectangle(image, (x1, y1), (x2, y2), c, thickness)
                    name = (id2labels or {}).get(int(row[0]))
                    if name is not None:
                        font = cv2.FONT_HERSHEY_SIMPLEX
                        th = cv2.getTextSize(str(name), font, 0.5, 2)[0][1]
                        cv2.putText(image, str(name), (x1 + 5, y1 + th + 5), font, 0.5,
                                    (255, 255, 255), 2)
                if waitKey is not None:
                    cv2.imshow(window_name, image)
                    cv2.waitKey(waitKey)
                yield image
        except StopIteration:
            return

    def sync_label_shape(self, it, verbose=False):
        """Gives this iterator and ``it`` (another ImageDetIter) the same label shape, the
        larger object count of the two; returns ``it``."""
        if not isinstance(it, ImageDetIter):
            raise TypeError('Synchronize with invalid iterator.')
        mine, theirs = self.label_shape, it.label_shape
        if mine[1] != theirs[1]:
            raise ValueError("object width mismatch: %d vs %d" % (mine[1], theirs[1]))
        most = max(mine[0], theirs[0])
        if most > mine[0]:
            self.reshape(None, (most, mine[1]))
        if most > theirs[0]:
            it.reshape(None, (most, theirs[1]))
        if verbose and most > min(mine[0], theirs[0]):
            logging.info('Resized label_shape to (%d, %d).', most, mine[1])
        return it


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from .. import io  # noqa: E402,F401
from ..util import is_np_array  # noqa: E402,F401
from .image import RandomOrderAug  # noqa: E402,F401
