"""Image operators (MXNet's ``nd.image.*``, registered as ``_image_<name>``): HWC images and
NHWC batches in, as MXNet's ``image_random`` and ``resize`` operators take them.

Every entry has its own shape rule, which also checks the input: these operators run per
sample inside DataLoader worker processes, where inferring shapes on 'meta' tensors would
first import torch's reference kernels (seconds, in every worker).

Resizing calls ``torch.nn.functional.interpolate``; its bilinear, bicubic and nearest modes
sample at the pixel centres as OpenCV does, so results agree with MXNet's to rounding (one
step of a ``uint8``).
"""
import ast

import torch
import torch.nn.functional as F

from .layout import dense
from .registry import Attr, Bool, Int, ShapeError, Shape, register


class Floats(Attr):
    """A float or a tuple of floats (``0.5``, ``(0.1, 0.2, 0.3)``, ``'(0.1, 0.2)'``)."""
    kind = 'float or tuple of floats'

    def parse(self, value):
        if isinstance(value, str):
            value = ast.literal_eval(value.strip())
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return (float(value),)
        return tuple(float(v) for v in value)

    def format(self, value):
        return '(' + ', '.join(repr(v) for v in value) + (',)' if len(value) == 1 else ')')


def _image_shape(op, shape, batch_ok=True):
    """Checks an HWC image (or NHWC batch) shape; returns it."""
    if len(shape) != 3 and not (batch_ok and len(shape) == 4):
        raise ShapeError("%s: input image must have shape (height, width, channels)%s, but got %s"
                         % (op, ' or (N, height, width, channels)' if batch_ok else '', shape))
    return shape


def _same_rule(op, batch_ok=True):
    def rule(attrs, shapes, dtypes):
        return (_image_shape(op, shapes[0], batch_ok),), (dtypes[0],)
    return rule


def _to_tensor_rule(attrs, shapes, dtypes):
    s = _image_shape('to_tensor', shapes[0])
    return (s[:-3] + (s[-1], s[-3], s[-2]),), ('float32',)


def _to_tensor(data):
    """HWC (or NHWC) values in [0, 255] to CHW (or NCHW) float32 in [0, 1]."""
    perm = (2, 0, 1) if data.dim() == 3 else (0, 3, 1, 2)
    # Row-major, not .contiguous(): with one channel the permuted result is already contiguous
    # and keeps channels-last strides, on which torch's convolution goes wrong (see ops.layout).
    return dense(data.permute(perm).to(torch.float32) / 255.0)


register('_image_to_tensor', infer=_to_tensor_rule, infer_attrs=())(_to_tensor)


def _normalize_rule(attrs, shapes, dtypes):
    shape = shapes[0]
    if len(shape) not in (3, 4):
        raise ShapeError("normalize: input tensor must have shape (channels, height, width) or "
                         "(N, channels, height, width), but got %s" % (shape,))
    c = shape[-3]
    if c not in (1, 3):
        raise ShapeError("normalize: the channel dimension must have 1 or 3 elements, but the "
                         "input has shape %s" % (shape,))
    for name in ('mean', 'std'):
        if len(attrs[name]) not in (1, c):
            raise ShapeError("normalize: %s must have 1 or %d elements for input of shape %s, "
                             "but got %s" % (name, c, shape, attrs[name]))
    return (shape,), (dtypes[0],)


def _normalize(data, mean, std):
    """``(data[c] - mean[c]) / std[c]`` for each channel of a CHW (or NCHW) tensor."""
    c = data.shape[-3]
    m = torch.tensor(mean[:c], dtype=data.dtype, device=data.device).view(-1, 1, 1)
    s = torch.tensor(std[:c], dtype=data.dtype, device=data.device).view(-1, 1, 1)
    return (data - m) / s


register('_image_normalize', infer=_normalize_rule,
         attrs={'mean': Floats((0.0, 0.0, 0.0, 0.0)),
                'std': Floats((1.0, 1.0, 1.0, 1.0))})(_normalize)


def resize_shape(h, w, size, keep_ratio):
    """(new height, new width) for MXNet's ``size`` (an int or (width, height)): with
    ``keep_ratio`` an int sets the short edge and the long one follows, rounded down."""
    if len(size) == 1:
        s = size[0]
        if not keep_ratio:
            return s, s
        if h > w:
            return int(h * s / w), s
        return s, int(w * s / h)
    if len(size) != 2:
        raise ShapeError("resize: size must be an int or (width, height), got %s" % (size,))
    return size[1], size[0]


_MODES = {0: 'nearest', 1: 'bilinear', 2: 'bicubic', 3: 'area'}


def _resize_rule(attrs, shapes, dtypes):
    shape = _image_shape('resize', shapes[0])
    if attrs['interp'] not in _MODES:
        raise ShapeError("resize: interp=%d is not supported (0 nearest, 1 bilinear, 2 bicubic, "
                         "3 area)" % attrs['interp'])
    oh, ow = resize_shape(shape[-3], shape[-2], attrs['size'], attrs['keep_ratio'])
    if oh <= 0 or ow <= 0:
        raise ShapeError("resize: output size %dx%d (height x width) must be positive" % (oh, ow))
    return (shape[:-3] + (oh, ow, shape[-1]),), (dtypes[0],)


def _area_weights(n_in, n_out, dtype, device):
    """(n_out, n_in) weights of OpenCV's INTER_AREA: output pixel i averages the input over
    [i * s, (i + 1) * s), s = n_in / n_out, each input pixel weighted by its overlap (torch's
    'area' mode uses whole pixels only, which differs when s is not an integer)."""
    s = n_in / n_out
    lo = torch.arange(n_out, dtype=torch.float64, device=device)[:, None] * s
    j = torch.arange(n_in, dtype=torch.float64, device=device)[None, :]
    w = (torch.minimum(lo + s, j + 1) - torch.maximum(lo, j)).clamp_(min=0)
    return (w / w.sum(1, keepdim=True)).to(dtype)


def _resize(data, size, keep_ratio, interp):
    """Resizes an HWC image or NHWC batch; integer images are rounded and clipped back."""
    mode = _MODES[interp]
    h, w = data.shape[-3], data.shape[-2]
    oh, ow = resize_shape(h, w, size, keep_ratio)
    batch = data if data.dim() == 4 else data.unsqueeze(0)
    x = dense(batch.permute(0, 3, 1, 2).to(torch.float64 if data.dtype == torch.float64
                                           else torch.float32))
    if mode == 'area':
        wh = _area_weights(h, oh, x.dtype, x.device)
        ww = _area_weights(w, ow, x.dtype, x.device)
        y = torch.einsum('ih,nchw,jw->ncij', wh, x, ww)
    else:
        extra = {} if mode == 'nearest' else {'align_corners': False}
        y = F.interpolate(x, size=(oh, ow), mode=mode, **extra)
    if not data.dtype.is_floating_point:
        info = torch.iinfo(data.dtype)
        y = y.round_().clamp_(info.min, info.max)
    y = dense(y.to(data.dtype).permute(0, 2, 3, 1))
    return y if data.dim() == 4 else y[0]


register('_image_resize', infer=_resize_rule,
         attrs={'size': Shape(()), 'keep_ratio': Bool(False), 'interp': Int(1)})(_resize)


def _crop_rule(attrs, shapes, dtypes):
    shape = _image_shape('crop', shapes[0])
    x, y, width, height = attrs['x'], attrs['y'], attrs['width'], attrs['height']
    h, w = shape[-3], shape[-2]
    if x < 0 or y < 0 or width <= 0 or height <= 0 or x + width > w or y + height > h:
        raise ShapeError("crop: window x=%d, y=%d, width=%d, height=%d does not fit an image of "
                         "height %d and width %d" % (x, y, width, height, h, w))
    return (shape[:-3] + (height, width, shape[-1]),), (dtypes[0],)


def _crop(data, x, y, width, height):
    """The ``height`` x ``width`` window at column ``x``, row ``y`` of an HWC image or NHWC
    batch."""
    return data[..., y:y + height, x:x + width, :]


register('_image_crop', view=True, infer=_crop_rule,
         attrs={'x': Int(), 'y': Int(), 'width': Int(), 'height': Int()})(_crop)


def _flip_left_right(data):
    return torch.flip(data, [-2])


def _flip_top_bottom(data):
    return torch.flip(data, [-3])


# MXNet's flips take single images only.
register('_image_flip_left_right', infer=_same_rule('flip_left_right', False),
         infer_attrs=())(_flip_left_right)
register('_image_flip_top_bottom', infer=_same_rule('flip_top_bottom', False),
         infer_attrs=())(_flip_top_bottom)


def _random_flip(axis):
    def kernel(data, generator):
        """Flips an HWC image with probability 0.5."""
        if torch.rand((), generator=generator, device=generator.device) < 0.5:
            return torch.flip(data, [axis])
        return data.clone()
    return kernel


register('_image_random_flip_left_right', rng=True, infer_attrs=(),
         infer=_same_rule('random_flip_left_right', False))(_random_flip(-2))
register('_image_random_flip_top_bottom', rng=True, infer_attrs=(),
         infer=_same_rule('random_flip_top_bottom', False))(_random_flip(-3))
