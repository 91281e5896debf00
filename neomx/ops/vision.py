"""Spatial sampling operators of detection and vision models: region-of-interest pooling
(ROIPooling, ROIAlign, RROIAlign, PSROIPooling), spatial transformers (GridGenerator,
BilinearSampler, SpatialTransformer), FlowNet's Correlation, and im2col/col2im (the
deformable convolutions are in contrib_nn.py).

Regions are rows ``[batch_index, x1, y1, x2, y2]`` in input-image coordinates, scaled to the
feature map by ``spatial_scale``. The sampling follows MXNet's kernels (their rounding and
clipping rules); gradients flow to the data (not to the regions, as in MXNet).
"""
import math

import torch
import torch.nn.functional as F

from .layout import dense
from .nn import BoolOrNone
from .registry import Bool, Enum, Float, Int, ShapeError, Shape, register


def _bilinear(img, y, x):
    """``img`` (C, H, W) sampled at the points ``y``, ``x`` (any equal shapes) with MXNet's
    ROIAlign interpolation: points beyond one pixel outside the map give 0, the others are
    clamped to it."""
    h, w = img.shape[-2:]
    outside = (y < -1.0) | (y > h) | (x < -1.0) | (x > w)
    y = y.clamp(min=0)
    x = x.clamp(min=0)
    y0 = y.floor().long()
    x0 = x.floor().long()
    ylast = y0 >= h - 1
    xlast = x0 >= w - 1
    y0 = torch.where(ylast, torch.full_like(y0, h - 1), y0)
    x0 = torch.where(xlast, torch.full_like(x0, w - 1), x0)
    y = torch.where(ylast, y0.to(y.dtype), y)
    x = torch.where(xlast, x0.to(x.dtype), x)
    y1 = torch.where(ylast, y0, y0 + 1)
    x1 = torch.where(xlast, x0, x0 + 1)
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    val = (hy * hx * img[:, y0, x0] + hy * lx * img[:, y0, x1] +
           ly * hx * img[:, y1, x0] + ly * lx * img[:, y1, x1])
    return torch.where(outside, torch.zeros_like(val), val)


def _check_rois(op, data, rois, width):
    if data.dim() != 4 or rois.dim() != 2 or rois.shape[1] != width:
        raise ShapeError("%s: data must be NCHW and rois (num_rois, %d), got %s and %s"
                         % (op, width, tuple(data.shape), tuple(rois.shape)))


def _roi_rule(op, width, channels=None):
    def rule(attrs, shapes, dtypes):
        data, rois = shapes
        if len(data) != 4 or len(rois) != 2 or rois[1] != width:
            raise ShapeError("%s: data must be NCHW and rois (num_rois, %d), got %s and %s"
                             % (op, width, tuple(data), tuple(rois)))
        ph, pw = _pooled(attrs['pooled_size'])
        c = data[1] if channels is None else channels(attrs, data[1])
        return ((rois[0], c, ph, pw),), (dtypes[0],)
    return rule


def _pooled(size):
    size = tuple(size) if isinstance(size, tuple) else (size,)
    return (size[0], size[0]) if len(size) == 1 else size


# -- ROIPooling ----------------------------------------------------------------------------

def _roi_pooling(data, rois, pooled_size=(), spatial_scale=1.0):
    """Max pooling of each region (rounded to whole feature-map cells) into a
    ``pooled_size`` grid; an empty bin gives 0."""
    _check_rois('ROIPooling', data, rois, 5)
    ph_n, pw_n = _pooled(pooled_size)
    n, c, h, w = data.shape
    if data.device.type == 'meta':
        return data.new_empty((rois.shape[0], c, ph_n, pw_n))
    outs = []
    for roi in rois.detach().to(torch.float64).cpu().tolist():
        b = int(roi[0])
        x1, y1, x2, y2 = (int(round(v * spatial_scale)) for v in roi[1:5])
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        bh, bw = rh / ph_n, rw / pw_n
        img = data[b]
        cells = []
        for ph in range(ph_n):
            hs = min(max(int(math.floor(ph * bh)) + y1, 0), h)
            he = min(max(int(math.ceil((ph + 1) * bh)) + y1, 0), h)
            for pw in range(pw_n):
                ws = min(max(int(math.floor(pw * bw)) + x1, 0), w)
                we = min(max(int(math.ceil((pw + 1) * bw)) + x1, 0), w)
                if he <= hs or we <= ws:
                    cells.append(img.new_zeros((c,)))
                else:
                    cells.append(img[:, hs:he, ws:we].reshape(c, -1).max(dim=1).values)
        outs.append(torch.stack(cells, dim=1).reshape(c, ph_n, pw_n))
    return torch.stack(outs) if outs else data.new_zeros((0, c, ph_n, pw_n))


register('ROIPooling', inputs=('data', 'rois'), infer=_roi_rule('ROIPooling', 5),
         heavy=True, attrs={'pooled_size': Shape(), 'spatial_scale': Float()})(_roi_pooling)


# -- ROIAlign and RROIAlign ---------------------------------------------------------------------

def _grid_counts(roi_h, roi_w, ph_n, pw_n, ratio):
    if ratio > 0:
        return ratio, ratio
    return max(int(math.ceil(roi_h / ph_n)), 1), max(int(math.ceil(roi_w / pw_n)), 1)


def _axis_weights(start, bin_size, grid, bins, size):
    """ROIAlign's sampling along one axis as a matrix: (regions, bins, size), the weight of
    each feature-map row (or column) in each bin's average over its ``grid`` samples
    (per region), with MXNet's interpolation: a sample beyond one pixel outside the map
    counts 0, the others are clamped to it. Bilinear sampling is the product of the two
    axes' weights, so a region's bins are ``Ay @ feature @ Ax^T``."""
    num, dev, dt = start.shape[0], start.device, start.dtype
    g_max = int(grid.max())
    s = torch.arange(g_max, device=dev)
    p = torch.arange(bins, device=dev)
    # pos = start + p * bin + (s + .5) * bin / grid, in that order, as MXNet's kernel has it
    pos = ((start[:, None, None] + p[None, :, None].to(dt) * bin_size[:, None, None]) +
           (s[None, None, :].to(dt) + 0.5) * bin_size[:, None, None] / grid[:, None, None].to(dt))
    used = (s[None, None, :] < grid[:, None, None]) & (pos >= -1.0) & (pos <= size)
    pos = pos.clamp(min=0)
    lo = pos.floor().long()
    last = lo >= size - 1
    lo = torch.where(last, torch.full_like(lo, size - 1), lo)
    pos = torch.where(last, lo.to(dt), pos)
    hi = torch.where(last, lo, lo + 1)
    frac = pos - lo
    scale = used.to(dt) / grid[:, None, None].to(dt)
    weights = torch.zeros((num, bins, size), dtype=dt, device=dev)
    weights.scatter_add_(2, torch.cat([lo, hi], dim=2),
                         torch.cat([(1 - frac) * scale, frac * scale], dim=2))
    return weights


def _roi_align(data, rois, pooled_size=(), spatial_scale=1.0, sample_ratio=-1,
               position_sensitive=False, aligned=False):
    """The average of bilinear samples on a regular grid in each bin of each region
    (``sample_ratio`` samples per bin side, or as many as the bin is wide); with
    ``position_sensitive``, bin (i, j) of output channel c reads input channel
    ``(c * ph + i) * pw + j``. The sampling is separable: each region's bins are two matrix
    products with its rows' and columns' weights (``_axis_weights``), over the band of rows
    its chunk of regions covers."""
    _check_rois('ROIAlign', data, rois, 5)
    ph_n, pw_n = _pooled(pooled_size)
    n, c, h, w = data.shape
    c_out = c // (ph_n * pw_n) if position_sensitive else c
    num = rois.shape[0]
    if data.device.type == 'meta':
        return data.new_empty((num, c_out, ph_n, pw_n))
    if num == 0:
        return data.new_zeros((0, c_out, ph_n, pw_n))
    dev, dt = data.device, data.dtype
    # the region's corners, sizes and bins in the data's precision, as MXNet's kernel has them
    box = rois.detach().to(device=dev, dtype=dt)
    corner = box[:, 1:5] * spatial_scale - (0.5 if aligned else 0.0)
    x1, y1 = corner[:, 0], corner[:, 1]
    rw, rh = corner[:, 2] - x1, corner[:, 3] - y1
    if not aligned:
        rw, rh = rw.clamp(min=1.0), rh.clamp(min=1.0)
    bh, bw = rh / ph_n, rw / pw_n
    if sample_ratio > 0:
        gh = gw = torch.full((num,), sample_ratio, dtype=torch.long, device=dev)
    else:
        gh = torch.ceil(rh / ph_n).long().clamp(min=1)
        gw = torch.ceil(rw / pw_n).long().clamp(min=1)
    wy = _axis_weights(y1, bh, gh, ph_n, h)        # (num, ph, h)
    wx = _axis_weights(x1, bw, gw, pw_n, w)        # (num, pw, w)
    batch = box[:, 0].long()
    outs, order = [], []
    for b in torch.unique(batch).tolist():
        sel = (batch == b).nonzero().flatten()
        img = data[b].permute(1, 0, 2).contiguous()     # (h, c, w): a band of rows is a view
        step = max(1, (1 << 24) // (ph_n * c * w))     # bounds the (k, ph, c, w) product
        for part in sel.split(step):
            ay = wy[part]
            k = len(part)
            rows = ay.any(dim=1).any(dim=0).nonzero().flatten()     # the rows any region reads
            if len(rows) == 0:
                outs.append(data.new_zeros((k, c, ph_n, pw_n)))
                order.append(part)
                continue
            r0, r1 = int(rows[0]), int(rows[-1]) + 1
            t = torch.matmul(ay[:, :, r0:r1].reshape(k * ph_n, r1 - r0),
                             img[r0:r1].reshape(r1 - r0, c * w))
            o = torch.matmul(t.reshape(k, ph_n * c, w), wx[part].transpose(1, 2))
            outs.append(o.reshape(k, ph_n, c, pw_n).permute(0, 2, 1, 3))
            order.append(part)
    out = torch.cat(outs)
    idx = torch.cat(order)
    if not bool((idx == torch.arange(num, device=dev)).all()):
        out = out[torch.argsort(idx)]
    if position_sensitive:
        idx = torch.arange(c_out * ph_n * pw_n, device=dev).reshape(c_out, ph_n * pw_n)
        out = out.reshape(num, c, ph_n * pw_n)[:, idx, torch.arange(ph_n * pw_n, device=dev)]
        out = out.reshape(num, c_out, ph_n, pw_n)
    return out.contiguous()


register('_contrib_ROIAlign', inputs=('data', 'rois'), heavy=True,
         infer=_roi_rule('ROIAlign', 5, lambda attrs, c: c // (
             _pooled(attrs['pooled_size'])[0] * _pooled(attrs['pooled_size'])[1])
             if attrs['position_sensitive'] else c),
         attrs={'pooled_size': Shape(), 'spatial_scale': Float(), 'sample_ratio': Int(-1),
                'position_sensitive': Bool(False), 'aligned': Bool(False)})(_roi_align)


def _rroi_align(data, rois, pooled_size=(), spatial_scale=1.0, sampling_ratio=-1):
    """ROIAlign of rotated regions ``[batch, center_x, center_y, width, height, angle]`` (the
    angle in degrees, counter-clockwise)."""
    _check_rois('RROIAlign', data, rois, 6)
    ph_n, pw_n = _pooled(pooled_size)
    n, c, h, w = data.shape
    if data.device.type == 'meta':
        return data.new_empty((rois.shape[0], c, ph_n, pw_n))
    outs = []
    for roi in rois.detach().to(torch.float32).cpu():
        b = int(roi[0])
        cx, cy, rw, rh = (roi[1:5] * spatial_scale).tolist()
        theta = float(roi[5]) * math.pi / 180.0
        rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph_n, rw / pw_n
        gh, gw = _grid_counts(rh, rw, ph_n, pw_n, sampling_ratio)
        yl = -rh / 2 + (torch.arange(ph_n * gh, dtype=data.dtype) // gh) * bh + \
            ((torch.arange(ph_n * gh) % gh).to(data.dtype) + 0.5) * bh / gh
        xl = -rw / 2 + (torch.arange(pw_n * gw, dtype=data.dtype) // gw) * bw + \
            ((torch.arange(pw_n * gw) % gw).to(data.dtype) + 0.5) * bw / gw
        yy, xx = torch.meshgrid(yl, xl, indexing='ij')
        cos, sin = math.cos(theta), math.sin(theta)
        x = (xx * cos + yy * sin + cx).to(data.device)
        y = (yy * cos - xx * sin + cy).to(data.device)
        outs.append(_bilinear(data[b], y, x).reshape(c, ph_n, gh, pw_n, gw).mean(dim=(2, 4)))
    return torch.stack(outs) if outs else data.new_zeros((0, c, ph_n, pw_n))


register('_contrib_RROIAlign', inputs=('data', 'rois'), heavy=True,
         infer=_roi_rule('RROIAlign', 6),
         attrs={'pooled_size': Shape(), 'spatial_scale': Float(),
                'sampling_ratio': Int(-1)})(_rroi_align)


# -- PSROIPooling (R-FCN) ---------------------------------------------------------------------

def _psroi_pooling(data, rois, spatial_scale=1.0, output_dim=0, pooled_size=0, group_size=0):
    """Position-sensitive average pooling: bin (i, j) of output channel c averages input
    channel ``(c * group + gi) * group + gj`` over the bin (cells rounded outwards)."""
    _check_rois('PSROIPooling', data, rois, 5)
    p = pooled_size
    g = group_size or pooled_size
    n, c, h, w = data.shape
    if c != output_dim * g * g:
        raise ShapeError("PSROIPooling: data has %d channels, expected output_dim * group_size"
                         "^2 = %d" % (c, output_dim * g * g))
    if data.device.type == 'meta':
        return data.new_empty((rois.shape[0], output_dim, p, p))
    outs = []
    for roi in rois.detach().to(torch.float64).cpu().tolist():
        b = int(roi[0])
        x1 = round(roi[1]) * spatial_scale
        y1 = round(roi[2]) * spatial_scale
        x2 = (round(roi[3]) + 1.0) * spatial_scale
        y2 = (round(roi[4]) + 1.0) * spatial_scale
        rw, rh = max(x2 - x1, 0.1), max(y2 - y1, 0.1)
        bh, bw = rh / p, rw / p
        img = data[b].reshape(output_dim, g, g, h, w)
        cells = []
        for ph in range(p):
            hs = min(max(int(math.floor(ph * bh + y1)), 0), h)
            he = min(max(int(math.ceil((ph + 1) * bh + y1)), 0), h)
            gi = min(max(int(math.floor(ph * g / p)), 0), g - 1)
            for pw in range(p):
                ws = min(max(int(math.floor(pw * bw + x1)), 0), w)
                we = min(max(int(math.ceil((pw + 1) * bw + x1)), 0), w)
                gj = min(max(int(math.floor(pw * g / p)), 0), g - 1)
                if he <= hs or we <= ws:
                    cells.append(img.new_zeros((output_dim,)))
                else:
                    cells.append(img[:, gi, gj, hs:he, ws:we].mean(dim=(1, 2)))
        outs.append(torch.stack(cells, dim=1).reshape(output_dim, p, p))
    return torch.stack(outs) if outs else data.new_zeros((0, output_dim, p, p))


def _psroi_rule(attrs, shapes, dtypes):
    data, rois = shapes
    if len(data) != 4 or len(rois) != 2 or rois[1] != 5:
        raise ShapeError("PSROIPooling: data must be NCHW and rois (num_rois, 5), got %s and %s"
                         % (tuple(data), tuple(rois)))
    p = attrs['pooled_size']
    return ((rois[0], attrs['output_dim'], p, p),), (dtypes[0],)


register('_contrib_PSROIPooling', inputs=('data', 'rois'), heavy=True, infer=_psroi_rule,
         attrs={'spatial_scale': Float(), 'output_dim': Int(), 'pooled_size': Int(),
                'group_size': Int(0)})(_psroi_pooling)


# -- spatial transformer networks ----------------------------------------------------------------

def _affine_grid(theta, h, w):
    """(N, 2, h, w) source coordinates in [-1, 1] (x then y) of the target grid under the
    affine maps ``theta`` (N, 6)."""
    ys = torch.linspace(-1, 1, h, dtype=theta.dtype, device=theta.device) if h > 1 else \
        torch.full((1,), -1.0, dtype=theta.dtype, device=theta.device)
    xs = torch.linspace(-1, 1, w, dtype=theta.dtype, device=theta.device) if w > 1 else \
        torch.full((1,), -1.0, dtype=theta.dtype, device=theta.device)
    yy, xx = torch.meshgrid(ys, xs, indexing='ij')
    target = torch.stack([xx.reshape(-1), yy.reshape(-1), torch.ones_like(xx).reshape(-1)])
    return (theta.reshape(-1, 2, 3) @ target).reshape(-1, 2, h, w)


def _grid_generator(data, transform_type='affine', target_shape=(0, 0)):
    """Sampling grids for BilinearSampler: from affine maps (N, 6) over a ``target_shape``
    grid, or from a flow field (N, 2, H, W) added to the pixel grid ('warp'), as x and y in
    [-1, 1]."""
    if transform_type == 'affine':
        h, w = target_shape
        return _affine_grid(data, h, w)
    n, _, h, w = data.shape
    ys = torch.arange(h, dtype=data.dtype, device=data.device).reshape(h, 1)
    xs = torch.arange(w, dtype=data.dtype, device=data.device).reshape(1, w)
    x = (data[:, 0] + xs) / ((w - 1) / 2.0) - 1
    y = (data[:, 1] + ys) / ((h - 1) / 2.0) - 1
    return torch.stack([x, y], dim=1)


def _grid_rule(attrs, shapes, dtypes):
    data = tuple(shapes[0])
    if attrs['transform_type'] == 'affine':
        if len(data) != 2 or data[1] != 6:
            raise ShapeError("GridGenerator: affine data must be (batch, 6), got %s" % (data,))
        return ((data[0], 2) + tuple(attrs['target_shape']),), (dtypes[0],)
    if len(data) != 4 or data[1] != 2:
        raise ShapeError("GridGenerator: warp data must be (batch, 2, H, W), got %s" % (data,))
    return (data,), (dtypes[0],)


register('GridGenerator', infer=_grid_rule,
         attrs={'transform_type': Enum('affine', 'warp'),
                'target_shape': Shape((0, 0))})(_grid_generator)


def _bilinear_sampler(data, grid, cudnn_off=None):
    """``data`` sampled bilinearly at ``grid`` (N, 2, H, W: x and y in [-1, 1], the corners
    being the corner pixels' centres); outside the map counts as 0."""
    return F.grid_sample(dense(data), grid.permute(0, 2, 3, 1).to(data.dtype), mode='bilinear',
                         padding_mode='zeros', align_corners=True)


def _sampler_rule(attrs, shapes, dtypes):
    data, grid = shapes
    if len(data) != 4 or len(grid) != 4 or grid[1] != 2 or grid[0] != data[0]:
        raise ShapeError("BilinearSampler: data must be NCHW and grid (N, 2, H, W), got %s and "
                         "%s" % (tuple(data), tuple(grid)))
    return ((data[0], data[1], grid[2], grid[3]),), (dtypes[0],)


register('BilinearSampler', inputs=('data', 'grid'), infer=_sampler_rule,
         attrs={'cudnn_off': BoolOrNone(None)})(_bilinear_sampler)


def _grid_sample(data, grid, mode='bilinear', padding_mode='zeros', align_corners=False):
    """``data`` (N, C, H, W) or (N, C, D, H, W) sampled at ``grid`` (N, H', W', 2) or
    (N, D', H', W', 3): coordinates in [-1, 1], x first; ``align_corners`` puts -1 and 1 on the
    corner pixels' centres, else on their outer edges; ``padding_mode`` says what lies outside
    (zeros, the border's values, a reflection). torch's grid_sample: what ONNX's GridSample
    and BilinearSampler with other options need (MXNet has no such operator)."""
    if mode == 'bicubic' and data.dim() != 4:
        raise ShapeError("_grid_sample: bicubic sampling is 2-d, data has shape %s"
                         % (tuple(data.shape),))
    return F.grid_sample(dense(data), grid.to(data.dtype), mode=mode, padding_mode=padding_mode,
                         align_corners=align_corners)


def _grid_sample_rule(attrs, shapes, dtypes):
    data, grid = shapes
    if len(data) not in (4, 5) or len(grid) != len(data) or grid[-1] != len(data) - 2 or \
            grid[0] != data[0]:
        raise ShapeError("_grid_sample: data must be (N, C, H, W) or (N, C, D, H, W) and grid "
                         "(N, H', W', 2) or (N, D', H', W', 3), got %s and %s"
                         % (tuple(data), tuple(grid)))
    return ((data[0], data[1]) + tuple(grid[1:-1]),), (dtypes[0],)


register('_grid_sample', inputs=('data', 'grid'), infer=_grid_sample_rule,
         attrs={'mode': Enum('bilinear', 'nearest', 'bicubic', default='bilinear'),
                'padding_mode': Enum('zeros', 'border', 'reflection', default='zeros'),
                'align_corners': Bool(False)})(_grid_sample)


def _spatial_transformer(data, loc, target_shape=(0, 0), transform_type='affine',
                         sampler_type='bilinear', cudnn_off=None):
    """``data`` resampled on the grid of the affine maps ``loc`` (N, 6) over
    ``target_shape``: BilinearSampler(data, GridGenerator(loc))."""
    h, w = target_shape
    return _bilinear_sampler(data, _affine_grid(loc.reshape(-1, 6), h, w))


def _transformer_rule(attrs, shapes, dtypes):
    data = tuple(shapes[0])
    if len(data) != 4:
        raise ShapeError("SpatialTransformer: data must be NCHW, got %s" % (data,))
    return (data[:2] + tuple(attrs['target_shape']),), (dtypes[0],)


register('SpatialTransformer', inputs=('data', 'loc'), infer=_transformer_rule,
         fill=lambda attrs, shapes: [shapes[0], shapes[1] if shapes[1] else
                                     ((shapes[0][0], 6) if shapes[0] else None)],
         attrs={'target_shape': Shape((0, 0)), 'transform_type': Enum('affine'),
                'sampler_type': Enum('bilinear'), 'cudnn_off': BoolOrNone(None)})(
    _spatial_transformer)


# -- im2col / col2im -------------------------------------------------------------------------------

def _conv_params(kernel, stride, dilate, pad):
    n = len(kernel)
    return (tuple(kernel), tuple(stride) or (1,) * n, tuple(dilate) or (1,) * n,
            tuple(pad) or (0,) * n)


def _im2col(data, kernel=(), stride=(), dilate=(), pad=()):
    """The patches a convolution reads, as columns: (N, C * prod(kernel), number of
    positions)."""
    k, s, d, p = _conv_params(kernel, stride, dilate, pad)
    if len(k) != 2:
        raise ShapeError("im2col: only 2-d kernels are supported, got kernel=%s" % (k,))
    return F.unfold(dense(data), k, dilation=d, padding=p, stride=s)


def _col2im(data, output_size=(), kernel=(), stride=(), dilate=(), pad=()):
    """The inverse arrangement of im2col, summing overlapping patches into an image of
    ``output_size``."""
    k, s, d, p = _conv_params(kernel, stride, dilate, pad)
    if len(k) != 2:
        raise ShapeError("col2im: only 2-d kernels are supported, got kernel=%s" % (k,))
    return F.fold(data, tuple(output_size), k, dilation=d, padding=p, stride=s)


_CONV = {'kernel': Shape(), 'stride': Shape(()), 'dilate': Shape(()), 'pad': Shape(())}
register('im2col', attrs=_CONV, heavy=True)(_im2col)
register('col2im', attrs=dict({'output_size': Shape()}, **_CONV), heavy=True)(_col2im)


# -- Correlation (FlowNet) ----------------------------------------------------------------------

def _correlation_geometry(attrs, shape):
    k, md = attrs['kernel_size'], attrs['max_displacement']
    s1, s2, pad = attrs['stride1'], attrs['stride2'], attrs['pad_size']
    hp, wp = shape[2] + 2 * pad, shape[3] + 2 * pad
    border = md + (k - 1) // 2
    top_h = int(math.ceil((hp - 2 * border) / s1))
    top_w = int(math.ceil((wp - 2 * border) / s1))
    if top_h < 1 or top_w < 1:
        raise ShapeError("Correlation: kernel_size=%d and max_displacement=%d do not fit data of "
                         "shape %s padded by %d (the output would be %dx%d)"
                         % (k, md, tuple(shape), pad, top_h, top_w))
    grid = 2 * (md // s2) + 1
    return top_h, top_w, grid


def _correlation_rule(attrs, shapes, dtypes):
    a, b = shapes
    if len(a) != 4 or tuple(a) != tuple(b):
        raise ShapeError("Correlation: data1 and data2 must be NCHW of one shape, got %s and %s"
                         % (tuple(a), tuple(b)))
    top_h, top_w, grid = _correlation_geometry(attrs, a)
    return ((a[0], grid * grid, top_h, top_w),), (dtypes[0],)


def _correlation(data1, data2, kernel_size=1, max_displacement=1, stride1=1, stride2=1,
                 pad_size=0, is_multiply=True):
    """For each displacement (dy, dx) within ``max_displacement`` (in steps of ``stride2``):
    the mean over channels and a ``kernel_size`` window of data1 * shifted data2 (or
    |data1 - shifted data2|), at every ``stride1``-th position; displacements are the
    output channels, row by row."""
    attrs = {'kernel_size': kernel_size, 'max_displacement': max_displacement,
             'stride1': stride1, 'stride2': stride2, 'pad_size': pad_size}
    top_h, top_w, grid = _correlation_geometry(attrs, tuple(data1.shape))
    n, c = data1.shape[:2]
    k, md, r = kernel_size, max_displacement, max_displacement // stride2
    dtype = data1.dtype
    a = dense(data1.to(torch.float32) if dtype == torch.float16 else data1)
    b = dense(data2.to(a.dtype))
    extra = k      # room for the last window whatever the rounding
    a = F.pad(a, (pad_size, pad_size + extra, pad_size, pad_size + extra))
    b = F.pad(b, (pad_size, pad_size + extra, pad_size, pad_size + extra))
    rows = (top_h - 1) * stride1 + k
    cols = (top_w - 1) * stride1 + k
    win = a[:, :, md:md + rows, md:md + cols]
    outs = []
    for py in range(-r, r + 1):
        for px in range(-r, r + 1):
            dy, dx = py * stride2, px * stride2
            other = b[:, :, md + dy:md + dy + rows, md + dx:md + dx + cols]
            if is_multiply:
                v = win * other
            else:   # |a - b| whose gradient in a is +1 where a >= b (MXNet's), not 0 at a == b
                diff = win - other
                v = diff * torch.where(diff >= 0, 1.0, -1.0).to(diff.dtype)
            v = v.sum(dim=1, keepdim=True)
            outs.append(F.avg_pool2d(v, k, stride=stride1) if k > 1 else
                        v[:, :, ::stride1, ::stride1])
    out = torch.cat(outs, dim=1)[:, :, :top_h, :top_w] / c
    return out.to(dtype)


register('Correlation', inputs=('data1', 'data2'), infer=_correlation_rule, heavy=True,
         attrs={'kernel_size': Int(1), 'max_displacement': Int(1), 'stride1': Int(1),
                'stride2': Int(1), 'pad_size': Int(0), 'is_multiply': Bool(True)})(_correlation)

