"""Contrib layers' operators: ``_contrib_SyncBatchNorm``, ``_contrib_DeformableConvolution``
(Dai et al. 2017) and ``_contrib_ModulatedDeformableConvolution`` (v2, Zhu et al. 2018).

A deformable convolution samples its input at the kernel's grid positions moved by learned
offsets (bilinear interpolation, zero outside the image), optionally weighs each sample by a
mask, and applies the weights to the samples as a grouped matrix product. Offsets have
``2 * num_deformable_group * kh * kw`` channels: for each deformable group and kernel position
(row-major) the row offset, then the column offset.
"""
import torch
import torch.nn.functional as F

from .layout import dense
from .nn import _batch_norm, _bn_infer, _norm_fill, _bn_channels, _num_norm_outputs, \
    _norm_output_names
from .nn import OptEnum
from .registry import Bool, Float, Int, Shape, ShapeError, Str, register


def _sync_bn_infer(attrs, shapes, dtypes):
    if attrs['ndev'] != 1:
        raise ShapeError("SyncBatchNorm: ndev=%d: synchronising the statistics of several "
                         "devices of one process is not supported; use ndev=1 (one device per "
                         "process) or nn.BatchNorm" % attrs['ndev'])
    return _bn_infer(dict(attrs, axis=1), shapes, dtypes)


def _sync_batch_norm(data, gamma, beta, moving_mean, moving_var, eps, momentum, fix_gamma,
                     use_global_stats, output_mean_var, ndev, key, is_train=False):
    """Batch normalisation over axis 1 with the statistics of the whole batch (one device:
    exactly BatchNorm's). Its extra outputs are the mean and the variance (BatchNorm's second
    is 1/sqrt(var+eps))."""
    out = _batch_norm(data, gamma, beta, moving_mean, moving_var, eps, momentum, fix_gamma,
                      use_global_stats, output_mean_var, 1, is_train=is_train)
    if not output_mean_var:
        return out
    out, mean, invstd = out
    return out, mean, invstd.reciprocal().square() - eps


register('_contrib_SyncBatchNorm', inputs=('data', 'gamma', 'beta', 'moving_mean', 'moving_var'),
         mutate=('moving_mean', 'moving_var'), train=True, heavy=True,
         num_outputs=_num_norm_outputs, output_names=_norm_output_names('var'),
         infer=_sync_bn_infer, fill=_norm_fill(lambda attrs, data: _bn_channels(
             dict(attrs, axis=1), data)),
         attrs={'eps': Float(1e-3), 'momentum': Float(0.9), 'fix_gamma': Bool(True),
                'use_global_stats': Bool(False), 'output_mean_var': Bool(False),
                'ndev': Int(1), 'key': Str()})(_sync_batch_norm)


def _pair(attrs, name, default):
    v = attrs[name] or default
    if len(v) != 2:
        raise ShapeError("DeformableConvolution: %s must have 2 values (2-D only), got %s"
                         % (name, v))
    return tuple(v)


def _geometry(attrs, data_shape):
    kh, kw = _pair(attrs, 'kernel', None)
    sh, sw = _pair(attrs, 'stride', (1, 1))
    dh, dw = _pair(attrs, 'dilate', (1, 1))
    ph, pw = _pair(attrs, 'pad', (0, 0))
    _, _, h, w = data_shape
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    return (kh, kw), (sh, sw), (dh, dw), (ph, pw), (oh, ow)


def _deform_infer(modulated):
    op = 'ModulatedDeformableConvolution' if modulated else 'DeformableConvolution'

    def infer(attrs, shapes, dtypes):
        data = shapes[0]
        if data is None or len(data) != 4:
            raise ShapeError("%s: data must be 4-d NCHW, got %s" % (op, data))
        if attrs['layout'] not in (None, 'NCHW'):
            raise ShapeError("%s: only the NCHW layout is supported, got %s"
                             % (op, attrs['layout']))
        (kh, kw), _, _, _, (oh, ow) = _geometry(attrs, data)
        n, c = data[0], data[1]
        g, dg, f = attrs['num_group'], attrs['num_deformable_group'], attrs['num_filter']
        if c % g or f % g or c % dg:
            raise ShapeError("%s: %d input channels and %d filters must divide into %d groups "
                             "and the channels into %d deformable groups" % (op, c, f, g, dg))
        if oh <= 0 or ow <= 0:
            raise ShapeError("%s: the kernel does not fit the padded input %s" % (op, data))
        expected = [('offset', (n, 2 * dg * kh * kw, oh, ow))]
        if modulated:
            expected.append(('mask', (n, dg * kh * kw, oh, ow)))
        expected.append(('weight', (f, c // g, kh, kw)))
        if not attrs['no_bias']:
            expected.append(('bias', (f,)))
        for (name, shape), got in zip(expected, shapes[1:]):
            if got is not None and tuple(got) != shape:
                raise ShapeError("%s: %s has shape %s, expected %s for data %s"
                                 % (op, name, tuple(got), shape, tuple(data)))
        return ((n, f, oh, ow),), (dtypes[0],)
    return infer


def _deform_fill(modulated):
    def fill(attrs, shapes):
        data = shapes[0]
        if not data or 0 in data[1:]:
            return shapes
        (kh, kw), _, _, _, (oh, ow) = _geometry(attrs, data)
        n, c = data[0], data[1]
        dg, f = attrs['num_deformable_group'], attrs['num_filter']
        full = [tuple(data), (n, 2 * dg * kh * kw, oh, ow)]
        if modulated:
            full.append((n, dg * kh * kw, oh, ow))
        full.append((f, c // attrs['num_group'], kh, kw))
        if not attrs['no_bias']:
            full.append((f,))
        return [s if (s and 0 not in s) or i >= len(full) else full[i]
                for i, s in enumerate(shapes)]
    return fill


def _deformable_conv(data, offset, mask, weight, bias, kernel, stride, dilate, pad, num_filter,
                     num_group, num_deformable_group, no_bias):
    n, c, h, w = data.shape
    attrs = {'kernel': kernel, 'stride': stride, 'dilate': dilate, 'pad': pad}
    (kh, kw), (sh, sw), (dh, dw), (ph, pw), (oh, ow) = _geometry(attrs, data.shape)
    k, dg, g = kh * kw, num_deformable_group, num_group
    dev, dt = data.device, data.dtype
    # sampling positions (in input pixels) of every kernel tap at every output position
    ky, kx = torch.meshgrid(torch.arange(kh, device=dev, dtype=dt) * dh,
                            torch.arange(kw, device=dev, dtype=dt) * dw, indexing='ij')
    oy = torch.arange(oh, device=dev, dtype=dt) * sh - ph
    ox = torch.arange(ow, device=dev, dtype=dt) * sw - pw
    base_y = ky.reshape(k, 1, 1) + oy.view(1, oh, 1)             # (k, oh, 1)
    base_x = kx.reshape(k, 1, 1) + ox.view(1, 1, ow)             # (k, 1, ow)
    off = offset.reshape(n, dg, k, 2, oh, ow)
    y = base_y + off[:, :, :, 0]                                 # (n, dg, k, oh, ow)
    x = base_x + off[:, :, :, 1]
    valid = None
    if mask is None:
        # v1 (as MXNet's kernel): a tap outside [0, size) reads 0, one in the last pixel's
        # far half reads that pixel; v2 interpolates with zeros beyond the edge instead
        valid = ((y >= 0) & (y < h) & (x >= 0) & (x < w)).to(dt)
        y = y.clamp(0, h - 1)
        x = x.clamp(0, w - 1)
    # grid_sample's pixel-centre coordinates (align_corners=False): pixel i is (2i + 1)/size - 1
    grid = torch.stack([(2 * x + 1) / w - 1, (2 * y + 1) / h - 1], -1)
    grid = grid.reshape(n * dg, k * oh, ow, 2)
    sampled = F.grid_sample(dense(data).reshape(n * dg, c // dg, h, w), grid, mode='bilinear',
                            padding_mode='zeros', align_corners=False)
    sampled = sampled.reshape(n, dg, c // dg, k, oh, ow)
    weight_of_tap = mask if mask is not None else valid
    sampled = sampled * weight_of_tap.reshape(n, dg, 1, k, oh, ow)
    cols = sampled.reshape(n, g, (c // g) * k, oh * ow)          # channel-major, then tap
    wmat = weight.reshape(g, num_filter // g, (c // g) * k)
    out = torch.einsum('gfc,ngcl->ngfl', wmat, cols).reshape(n, num_filter, oh, ow)
    if bias is not None:
        out = out + bias.view(1, -1, 1, 1)
    return out


_DEFORM_ATTRS = {'kernel': Shape(), 'stride': Shape(()), 'dilate': Shape(()), 'pad': Shape(()),
                 'num_filter': Int(), 'num_group': Int(1), 'num_deformable_group': Int(1),
                 'workspace': Int(1024), 'no_bias': Bool(False),
                 'layout': OptEnum('NCDHW', 'NCHW', 'NCW')}


def _deform(data, offset, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(),
            num_filter=0, num_group=1, num_deformable_group=1, workspace=1024, no_bias=False,
            layout=None):
    """Deformable convolution v1: the kernel's taps moved by ``offset``."""
    return _deformable_conv(data, offset, None, weight, bias, kernel, stride, dilate, pad,
                            num_filter, num_group, num_deformable_group, no_bias)


def _modulated(data, offset, mask, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(),
               num_filter=0, num_group=1, num_deformable_group=1, workspace=1024, no_bias=False,
               layout=None):
    """Modulated deformable convolution (v2): the moved taps weighted by ``mask``."""
    return _deformable_conv(data, offset, mask, weight, bias, kernel, stride, dilate, pad,
                            num_filter, num_group, num_deformable_group, no_bias)


def _drop_bias(attrs):
    return ('bias',) if attrs['no_bias'] else ()


register('_contrib_DeformableConvolution', inputs=('data', 'offset', 'weight', 'bias'),
         drop_inputs=_drop_bias, heavy=True, infer=_deform_infer(False), fill=_deform_fill(False),
         attrs=dict(_DEFORM_ATTRS))(_deform)
register('_contrib_ModulatedDeformableConvolution',
         inputs=('data', 'offset', 'mask', 'weight', 'bias'), drop_inputs=_drop_bias, heavy=True,
         infer=_deform_infer(True), fill=_deform_fill(True),
         attrs=dict(_DEFORM_ATTRS))(_modulated)
