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
from .registry import Attr, Bool, Float, Int, ShapeError, Shape, register


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
    # The cast makes the row-major copy (a new tensor even for float32 input), which the
    # division then updates in place.
    return data.permute(perm).to(torch.float32, memory_format=torch.contiguous_format,
                                 copy=True).div_(255.0)


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


_NORMALIZE_CONSTANTS = {}


def _normalize(data, mean, std):
    """``(data[c] - mean[c]) / std[c]`` for each channel of a CHW (or NCHW) tensor."""
    c = data.shape[-3]
    key = (mean[:c], std[:c], data.dtype, data.device)
    ms = _NORMALIZE_CONSTANTS.get(key)
    if ms is None:      # made once: a data pipeline normalises every image with the same
        ms = tuple(torch.tensor(v[:c], dtype=data.dtype, device=data.device).view(-1, 1, 1)
                   for v in (mean, std))
        if len(_NORMALIZE_CONSTANTS) > 64:
            _NORMALIZE_CONSTANTS.clear()
        _NORMALIZE_CONSTANTS[key] = ms
    return (data - ms[0]) / ms[1]


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
    return size[1], size[0]


_MODES = {0: 'nearest', 1: 'bilinear', 2: 'bicubic', 3: 'area', 4: 'lanczos'}


def _check_interp(op, interp):
    if interp not in _MODES:
        raise ShapeError("%s: interp=%d is not supported (0 nearest, 1 bilinear, 2 bicubic, "
                         "3 area, 4 lanczos)" % (op, interp))


def _resize_rule(attrs, shapes, dtypes):
    shape = _image_shape('resize', shapes[0])
    _check_interp('resize', attrs['interp'])
    if len(attrs['size']) not in (1, 2):
        raise ShapeError("resize: size must be an int or (width, height), got %s"
                         % (attrs['size'],))
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


def _lanczos_weights(n_in, n_out, dtype, device):
    """(n_out, n_in) weights of OpenCV's INTER_LANCZOS4: 8 taps of sinc(d) sinc(d / 4) around
    the pixel-centre position, normalised, indices past the edge clamped to it."""
    src = (torch.arange(n_out, dtype=torch.float64, device=device) + 0.5) * (n_in / n_out) - 0.5
    base = torch.floor(src)
    taps = base[:, None] + torch.arange(-3, 5, dtype=torch.float64, device=device)[None, :]
    d = src[:, None] - taps
    w = torch.sinc(d) * torch.sinc(d / 4)
    w = w / w.sum(1, keepdim=True)
    out = torch.zeros(n_out, n_in, dtype=torch.float64, device=device)
    out.scatter_add_(1, taps.clamp(0, n_in - 1).long(), w)
    return out.to(dtype)


def resample(data, oh, ow, interp):
    """An HWC image or NHWC batch resized to ``oh`` x ``ow`` with OpenCV's interpolation
    ``interp`` (0-4), sampling at pixel centres; integer images are rounded and clipped."""
    mode = _MODES[interp]
    h, w = data.shape[-3], data.shape[-2]
    batch = data if data.dim() == 4 else data.unsqueeze(0)
    x = dense(batch.permute(0, 3, 1, 2).to(torch.float64 if data.dtype == torch.float64
                                           else torch.float32))
    if (oh, ow) == (h, w):
        y = x
    elif mode in ('area', 'lanczos'):
        weights = _area_weights if mode == 'area' else _lanczos_weights
        wh = weights(h, oh, x.dtype, x.device)
        ww = weights(w, ow, x.dtype, x.device)
        y = torch.einsum('ih,nchw,jw->ncij', wh, x, ww)
    else:
        extra = {} if mode == 'nearest' else {'align_corners': False}
        y = F.interpolate(x, size=(oh, ow), mode=mode, **extra)
    if not data.dtype.is_floating_point:
        info = torch.iinfo(data.dtype)
        y = y.round().clamp_(info.min, info.max)
    y = dense(y.to(data.dtype).permute(0, 2, 3, 1))
    return y if data.dim() == 4 else y[0]


def _resize(data, size, keep_ratio, interp):
    """Resizes an HWC image or NHWC batch; integer images are rounded and clipped back."""
    oh, ow = resize_shape(data.shape[-3], data.shape[-2], size, keep_ratio)
    return resample(data, oh, ow, interp)


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


# -- MXNet's OpenCV operators (``_cvimresize``, ``_cvcopyMakeBorder``), behind mx.image ----------

def _cvimresize_rule(attrs, shapes, dtypes):
    shape = _image_shape('imresize', shapes[0], batch_ok=False)
    _check_interp('imresize', attrs['interp'])
    if attrs['w'] <= 0 or attrs['h'] <= 0:
        raise ShapeError("imresize: width %d and height %d must be positive"
                         % (attrs['w'], attrs['h']))
    return ((attrs['h'], attrs['w'], shape[2]),), (dtypes[0],)


def _cvimresize(src, w, h, interp):
    """Resizes an HWC image to ``h`` x ``w`` with OpenCV's interpolation ``interp``."""
    return resample(src, h, w, interp)


register('_cvimresize', infer=_cvimresize_rule, inputs=('src',),
         attrs={'w': Int(), 'h': Int(), 'interp': Int(1)})(_cvimresize)


def border_index(n, lo, hi, kind):
    """Source indices (long tensor of n + lo + hi, -1 where a constant is filled) of OpenCV's
    border ``kind``: 0 constant, 1 replicate (aaa|abc), 2 reflect (cba|abc), 3 wrap
    (def|abcdef), 4 reflect-101 (dcb|abcd)."""
    i = torch.arange(-lo, n + hi)
    if kind == 0:
        return torch.where((i >= 0) & (i < n), i, torch.full_like(i, -1))
    if kind == 1:
        return i.clamp(0, n - 1)
    if kind == 3:
        return i % n
    if kind == 2:
        j = i % (2 * n)
        return torch.where(j < n, j, 2 * n - 1 - j)
    if n == 1:
        return torch.zeros_like(i)
    j = i % (2 * n - 2)
    return torch.where(j < n, j, 2 * n - 2 - j)


def _border_rule(attrs, shapes, dtypes):
    shape = shapes[0]
    if len(shape) not in (2, 3):
        raise ShapeError("copyMakeBorder: the image must be HxW or HxWxC, got shape %s"
                         % (shape,))
    if attrs['type'] not in (0, 1, 2, 3, 4):
        raise ShapeError("copyMakeBorder: type=%d is not a border type (0 constant, 1 replicate, "
                         "2 reflect, 3 wrap, 4 reflect-101)" % attrs['type'])
    pads = [attrs[k] for k in ('top', 'bot', 'left', 'right')]
    if min(pads) < 0:
        raise ShapeError("copyMakeBorder: the margins must not be negative, got top=%d, bot=%d, "
                         "left=%d, right=%d" % tuple(pads))
    h = shape[0] + pads[0] + pads[1]
    w = shape[1] + pads[2] + pads[3]
    return ((h, w) + tuple(shape[2:]),), (dtypes[0],)


def _copy_make_border(src, top, bot, left, right, type, value, values):
    """Pads an HxW(xC) image with OpenCV's border ``type``; ``values`` (one per channel, or
    ``value`` for all) fill a constant border."""
    rows = border_index(src.shape[0], top, bot, type)
    cols = border_index(src.shape[1], left, right, type)
    out = src[rows.clamp(min=0)][:, cols.clamp(min=0)]
    if type == 0:
        fill = torch.tensor(values if values else (value,), dtype=torch.float64)
        c = src.shape[2] if src.dim() == 3 else 1
        fill = fill[:c] if fill.numel() >= c else torch.cat(
            [fill, torch.zeros(c - fill.numel(), dtype=torch.float64)]) \
            if values else fill.expand(c)
        fill = fill.to(src.dtype).to(src.device)
        outside = (rows[:, None] < 0) | (cols[None, :] < 0)
        if src.dim() == 3:
            out = torch.where(outside[:, :, None], fill.view(1, 1, -1), out)
        else:
            out = torch.where(outside, fill[0], out)
    return out


register('_cvcopyMakeBorder', infer=_border_rule, inputs=('src',),
         attrs={'top': Int(), 'bot': Int(), 'left': Int(), 'right': Int(), 'type': Int(0),
                'value': Float(0.0), 'values': Floats(())})(_copy_make_border)


# -- color jitter and lighting (``_image_random_*``, ``_image_adjust_lighting``) -----------------
# Images are HWC (or NHWC) RGB. Integer images are computed in float and cast back clipped and
# truncated, as MXNet's kernels do.

_LUMA = (0.299, 0.587, 0.114)
# AlexNet's PCA of ImageNet's RGB pixels (eigenvalues; eigenvectors as columns).
_EIGVAL = (55.46, 4.794, 1.148)
_EIGVEC = ((-0.5675, 0.7192, 0.4009),
           (-0.5808, -0.0045, -0.8140),
           (-0.5836, -0.6948, 0.4203))


def _float(data):
    return data.to(torch.float64 if data.dtype == torch.float64 else torch.float32)


def _back(y, like):
    if like.dtype.is_floating_point:
        return y.to(like.dtype)
    info = torch.iinfo(like.dtype)
    return y.clamp(info.min, info.max).to(like.dtype)


def _gray(x):
    w = torch.tensor(_LUMA, dtype=x.dtype, device=x.device)
    return (x[..., :3] * w).sum(-1, keepdim=True)


def _brightness(x, alpha):
    return x * alpha


def _contrast(x, alpha):
    # the mean luma of each image (of the whole batch's images separately)
    mean = _gray(x).mean(dim=(-3, -2, -1), keepdim=True)
    return x * alpha + mean * (1 - alpha)


def _saturation(x, alpha):
    # MXNet 1.9.1's kernel blends with 0.114 * B alone (its gray sum overwrites itself); the
    # luma of all three channels is the transform its documentation describes.
    return x * alpha + _gray(x) * (1 - alpha)


def _hue(x, alpha):
    """Rotates the hue by ``alpha`` turns, as in HLS space with lightness and saturation kept:
    each pixel's largest and smallest channel values stay, the hue moves between them."""
    rgb = x[..., :3]
    r, g, b = rgb.unbind(-1)
    hi, lo = rgb.amax(-1), rgb.amin(-1)
    delta = hi - lo
    safe = torch.where(delta > 0, delta, torch.ones_like(delta))
    h = torch.where(hi == r, (g - b) / safe,
                    torch.where(hi == g, (b - r) / safe + 2, (r - g) / safe + 4)) / 6
    h = torch.where(delta > 0, h + alpha, torch.zeros_like(h))

    def channel(t):
        t = t % 1.0
        ramp = torch.where(t < 1 / 6, 6 * t, torch.where(
            t < 0.5, torch.ones_like(t), torch.where(t < 2 / 3, (2 / 3 - t) * 6,
                                                     torch.zeros_like(t))))
        return lo + delta * ramp
    out = torch.stack([channel(h + 1 / 3), channel(h), channel(h - 1 / 3)], -1)
    if x.shape[-1] > 3:
        out = torch.cat([out, x[..., 3:]], -1)
    return out


def _lighting(x, alpha):
    vec = torch.tensor(_EIGVEC, dtype=torch.float64)
    val = torch.tensor(_EIGVAL, dtype=torch.float64)
    rgb = vec @ (torch.as_tensor(alpha, dtype=torch.float64) * val)
    return x + rgb.to(x.dtype).to(x.device)


def _uniform(lo, hi, generator):
    u = torch.rand((), generator=generator, device=generator.device, dtype=torch.float64)
    return float(lo + (hi - lo) * u)


def _check_factors(op, lo, hi):
    if lo < 0 or hi < 0:
        raise ShapeError("%s: min_factor %g and max_factor %g must not be negative"
                         % (op, lo, hi))
    if lo > hi:
        raise ShapeError("%s: min_factor %g is larger than max_factor %g" % (op, lo, hi))


def _jitter_rule(op):
    def rule(attrs, shapes, dtypes):
        shape = _image_shape(op, shapes[0])
        if shape[-1] not in (1, 3, 4) or op != 'random_brightness' and shape[-1] == 1:
            raise ShapeError("%s: the image must have 3 (RGB) channels%s, got shape %s"
                             % (op, '' if op != 'random_brightness' else ' or 1', shape))
        if 'min_factor' in attrs:
            _check_factors(op, attrs['min_factor'], attrs['max_factor'])
        return (shape,), (dtypes[0],)
    return rule


def _random_op(name, fn):
    def kernel(data, min_factor, max_factor, generator):
        return _back(fn(_float(data), _uniform(min_factor, max_factor, generator)), data)
    kernel.__doc__ = "%s of an HWC RGB image by a factor drawn from [min_factor, max_factor]." \
        % name
    return kernel


_FACTORS = {'min_factor': Float(), 'max_factor': Float()}
for _name, _fn in (('brightness', _brightness), ('contrast', _contrast),
                   ('saturation', _saturation), ('hue', _hue)):
    register('_image_random_' + _name, rng=True, infer=_jitter_rule('random_' + _name),
             attrs=dict(_FACTORS))(_random_op('Scales the ' + _name, _fn))


def _color_jitter(data, brightness, contrast, saturation, hue, generator):
    """Brightness, contrast, saturation (factors 1 +- the amount) and hue (+- the amount of a
    turn) jitter of an HWC RGB image, in a random order."""
    x = _float(data)
    steps = [(_brightness, brightness, 1.0), (_contrast, contrast, 1.0),
             (_saturation, saturation, 1.0), (_hue, hue, 0.0)]
    for i in torch.randperm(4, generator=generator, device=generator.device).tolist():
        fn, amount, centre = steps[i]
        if amount > 0:
            x = fn(x, _uniform(centre - amount, centre + amount, generator))
    return _back(x, data)


register('_image_random_color_jitter', rng=True, infer=_jitter_rule('random_color_jitter'),
         attrs={'brightness': Float(), 'contrast': Float(), 'saturation': Float(),
                'hue': Float()})(_color_jitter)


def _adjust_lighting(data, alpha):
    """Adds AlexNet's PCA lighting noise: the eigenvectors of ImageNet's RGB covariance scaled
    by ``alpha`` (one per eigenvalue) times the eigenvalues."""
    return _back(_lighting(_float(data), alpha), data)


def _random_lighting(data, alpha_std, generator):
    """``adjust_lighting`` with alphas drawn from N(0, alpha_std)."""
    alpha = torch.randn(3, generator=generator, device=generator.device,
                        dtype=torch.float64).cpu() * alpha_std
    return _back(_lighting(_float(data), alpha), data)


def _lighting_rule(attrs, shapes, dtypes):
    shape = _image_shape('adjust_lighting', shapes[0])
    if shape[-1] != 3:
        raise ShapeError("adjust_lighting: the image must have 3 (RGB) channels, got shape %s"
                         % (shape,))
    if 'alpha' in attrs and len(attrs['alpha']) != 3:
        raise ShapeError("adjust_lighting: alpha must have 3 values, got %s" % (attrs['alpha'],))
    return (shape,), (dtypes[0],)


register('_image_adjust_lighting', infer=_lighting_rule,
         attrs={'alpha': Floats()})(_adjust_lighting)
register('_image_random_lighting', rng=True, infer=_lighting_rule,
         attrs={'alpha_std': Float(0.05)})(_random_lighting)
