"""Neural-network operators: MXNet 1.9's names, inputs, attributes and semantics on torch.

Layers with parameters register a ``fill`` rule: given the input shapes with unknown
dimensions as 0 (a ``Dense`` whose ``in_units`` is not known yet), it returns the shapes with
the parameter shapes filled in. Gluon's deferred initialisation and ``Symbol.infer_shape``
both use it.

Layouts other than channels-first (``NHWC``, ...) are computed by moving the channel axis to
position 1 and back: torch's kernels are channels-first.

>>> import neomx as mx
>>> x = mx.nd.ones((1, 2, 4, 4))
>>> w = mx.nd.ones((3, 2, 3, 3))
>>> mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=3, no_bias=True).shape
(1, 3, 2, 2)
"""
import math
from math import prod

import torch
import torch.nn.functional as F

from ..base import dtype_torch
from .layout import convolution_operands, dense, max_pool_by_channels, takes_channels_last
from .shape import rows
from .registry import (Bool, DType, Enum, Float, FloatOrNone, Int, IntOrNone, Shape,
                       ShapeError, Str, register, same_as_input)

__all__ = []


class OptEnum(Enum):
    """An Enum whose default is None; MXNet writes that None as the string 'None'."""

    def __init__(self, *choices):
        super().__init__(*choices, default=None)

    def parse(self, value):
        if value is None or value == 'None':
            return None
        return super().parse(value)


class BoolOrNone(Bool):
    kind = 'boolean or None'

    def parse(self, value):
        if value is None or value == 'None':
            return None
        return super().parse(value)


def _no_bias(attrs):
    return ('bias',) if attrs['no_bias'] else ()


def _check_param(op, name, shape, expected):
    if tuple(shape) != tuple(expected):
        raise ShapeError("%s: %s has shape %s, expected %s" % (op, name, tuple(shape),
                                                               tuple(expected)))


# -- FullyConnected ---------------------------------------------------------------------------

def _fc_fill(attrs, shapes):
    data = shapes[0]
    n = attrs['num_hidden']
    if data is None or not data:
        return shapes
    if attrs['flatten']:
        k = 1
        for d in data[1:]:
            k *= d
    else:
        k = data[-1]
    out = list(shapes)
    out[1] = (n, k)
    if not attrs['no_bias']:
        out[2] = (n,)
    return out


def _fully_connected(data, weight, bias=None, num_hidden=0, no_bias=False, flatten=True):
    """``data @ weight.T + bias``; with ``flatten`` the data is first reshaped to 2-d."""
    if flatten and data.dim() != 2:
        data = rows(data)
    if weight.shape[0] != num_hidden:
        raise ShapeError("weight has shape %s, expected (%d, %d)"
                         % (tuple(weight.shape), num_hidden, data.shape[-1]))
    if bias is not None and bias.dim() == 2:    # MXNet takes a (num_hidden, 1) bias too
        bias = bias.reshape(-1)
    return F.linear(data, weight, None if no_bias else bias)


def _fc_infer(attrs, shapes, dtypes):
    data = shapes[0]
    if not data:
        raise ShapeError("data has no axes")
    n = attrs['num_hidden']
    filled = _fc_fill(attrs, [data, None, None])
    _check_param('FullyConnected', 'weight', shapes[1], filled[1])
    if not attrs['no_bias'] and len(shapes) > 2 and shapes[2] is not None:
        if tuple(shapes[2]) != (n, 1):     # a column bias is MXNet's other accepted form
            _check_param('FullyConnected', 'bias', shapes[2], (n,))
    _same_dtypes('FullyConnected', dtypes)
    out = (data[0], n) if attrs['flatten'] else tuple(data[:-1]) + (n,)
    return (out,), (dtypes[0],)


def _same_dtypes(op, dtypes):
    given = [d for d in dtypes if d is not None]
    if any(d != given[0] for d in given):
        raise ShapeError("%s: inputs have different dtypes %s" % (op, given))


def _fc_cost(attrs, shapes, out_shapes):
    return prod(out_shapes[0]) * shapes[1][1]


def _conv_cost(attrs, shapes, out_shapes):
    # Each output element sums C/num_group x kernel products (Deconvolution: each input one).
    w = shapes[1]
    per = prod(w[1:])
    return prod(out_shapes[0]) * per if attrs.get('adj') is None else prod(shapes[0]) * per


def _pool_cost(attrs, shapes, out_shapes):
    k = shapes[0][2:] if attrs['global_pool'] else attrs['kernel']
    return prod(out_shapes[0]) * prod(k)


def _fc_back(attrs, shapes, out_shapes):
    """The data's unknown batch axis (all but the last axis without ``flatten``) from the
    output's: a begin state ``zeros((0, hidden))`` gets its batch size this way."""
    data, out = shapes[0], out_shapes[0]
    if not data:
        return shapes
    lead = out[:1] if attrs['flatten'] else out[:-1]
    filled = tuple(d or o for d, o in zip(data, lead)) + tuple(data[len(lead):])
    return [filled] + list(shapes[1:])


register('FullyConnected', inputs=('data', 'weight', 'bias'), heavy=True, cost=_fc_cost,
         back=_fc_back, drop_inputs=_no_bias, fill=_fc_fill, infer=_fc_infer,
         attrs={'num_hidden': Int(), 'no_bias': Bool(False),
                'flatten': Bool(True)})(_fully_connected)


# -- Convolution and Deconvolution ------------------------------------------------------------

_LAYOUTS = ('NCW', 'NCHW', 'NCDHW', 'NWC', 'NHWC', 'NDHWC')


def _channels_last(layout):
    return layout is not None and layout[-1] == 'C'


# MXNet's channels-last ``layout`` attribute (NHWC data and weights) is moved to channels-first
# and back, at the price of two copies; which memory format the kernels then run in is
# ops.layout's to decide.

def _to_first(t):
    """NH..WC -> NCH..W, row-major"""
    return dense(t.movedim(-1, 1))


def _to_last(t):
    return dense(t.movedim(1, -1))


def _spatial(attrs, n):
    """stride, dilate, pad with MXNet's defaults (1, 1, 0 per spatial axis)."""
    stride = attrs['stride'] or (1,) * n
    dilate = attrs['dilate'] or (1,) * n
    pad = attrs['pad'] or (0,) * n
    for name, v in (('stride', stride), ('dilate', dilate), ('pad', pad)):
        if len(v) != n:
            raise ShapeError("%s=%s does not match kernel=%s (%d spatial axes)"
                             % (name, v, attrs['kernel'], n))
    return stride, dilate, pad


def _conv_channels(data, layout):
    return data[-1] if _channels_last(layout) else data[1]


def _conv_fill(attrs, shapes):
    """weight (num_filter, C/num_group, *kernel) and bias (num_filter,) from data (N, C, ...);
    Deconvolution's weight is (C, num_filter/num_group, *kernel)."""
    data = shapes[0]
    out = list(shapes)
    kernel, f, g = tuple(attrs['kernel']), attrs['num_filter'], attrs['num_group']
    layout = attrs['layout']
    if data and len(data) == len(kernel) + 2:
        c = _conv_channels(data, layout)
        if attrs.get('adj') is not None:           # Deconvolution
            w = (c, f // g) + kernel
        else:
            w = (f, c // g if c else 0) + kernel
        if _channels_last(layout):
            w = (w[0],) + w[2:] + (w[1],)
        out[1] = w
    if len(out) > 2 and not attrs['no_bias']:
        out[2] = (f,)
    return out


def _convolution(data, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(), num_filter=0,
                 num_group=1, workspace=1024, no_bias=False, cudnn_tune=None, cudnn_off=False,
                 layout=None):
    """N-d convolution (1, 2 or 3 spatial axes) with MXNet's stride/dilate/pad/num_group."""
    _, _, stride, dilate, pad = _conv_geometry(
        'Convolution', {'kernel': kernel, 'stride': stride, 'dilate': dilate, 'pad': pad,
                        'num_filter': num_filter, 'num_group': num_group, 'no_bias': no_bias,
                        'layout': layout}, _shapes(data, weight, bias))
    last = _channels_last(layout)
    if last:
        data, weight = _to_first(data), _to_first(weight)
    else:
        data, weight, stride = convolution_operands(data, weight, kernel, stride, pad)
    out = torch.convolution(data, weight, None if no_bias else bias, stride, pad, dilate,
                            False, (0,) * len(kernel), num_group)
    return _to_last(out) if last else out


_CONV_ATTRS = {'kernel': Shape(), 'stride': Shape(()), 'dilate': Shape(()), 'pad': Shape(()),
               'num_filter': Int(), 'num_group': Int(1), 'workspace': Int(1024),
               'no_bias': Bool(False),
               'cudnn_tune': OptEnum('fastest', 'limited_workspace', 'off'),
               'cudnn_off': Bool(False), 'layout': OptEnum(*_LAYOUTS)}

def _shapes(*tensors):
    return [None if t is None else tuple(t.shape) for t in tensors]


def _conv_geometry(op, attrs, shapes):
    """(data shape channels-first, kernel, stride, dilate, pad) after checking the data's rank,
    the channels against num_group, the weight's and the bias's shapes: the one check of
    Convolution's and Deconvolution's inputs, made by shape inference and by the kernels."""
    kernel = tuple(attrs['kernel'])
    n = len(kernel)
    data = tuple(shapes[0])
    layout = attrs['layout']
    if len(data) != n + 2:
        raise ShapeError("%s: data must be %d-d for kernel=%s (layout %s), got shape %s"
                         % (op, n + 2, kernel, layout or 'NC' + 'DHW'[3 - n:], data))
    if _channels_last(layout):
        data = (data[0], data[-1]) + data[1:-1]
    c, f, g = data[1], attrs['num_filter'], attrs['num_group']
    if c % g or f % g:
        raise ShapeError("%s: channels %d and num_filter %d must both be divisible by "
                         "num_group %d" % (op, c, f, g))
    expected = _conv_fill(attrs, [shapes[0], None, None])[1]
    _check_param(op, 'weight', shapes[1], expected)
    if not attrs['no_bias'] and len(shapes) > 2 and shapes[2] is not None:
        _check_param(op, 'bias', shapes[2], (f,))
    stride, dilate, pad = _spatial(attrs, n)
    return data, kernel, stride, dilate, pad


def _channels_back(attrs, out):
    return (out[0],) + out[2:] + (out[1],) if _channels_last(attrs['layout']) else out


def _conv_infer(attrs, shapes, dtypes):
    data, kernel, stride, dilate, pad = _conv_geometry('Convolution', attrs, shapes)
    _same_dtypes('Convolution', dtypes)
    spatial = []
    for x, k, st, d, p in zip(data[2:], kernel, stride, dilate, pad):
        o = (x + 2 * p - d * (k - 1) - 1) // st + 1
        if o <= 0:
            raise ShapeError("Convolution: kernel %s (dilate %s) does not fit input %s padded "
                             "by %s" % (kernel, dilate, data[2:], pad))
        spatial.append(o)
    out = (data[0], attrs['num_filter']) + tuple(spatial)
    return (_channels_back(attrs, out),), (dtypes[0],)


def _conv_back(attrs, shapes, out_shapes):
    """The data's unknown dimensions from the output's (spatial sizes as MXNet infers them
    backwards) and the channels from the weight."""
    data, out = shapes[0], out_shapes[0]
    kernel = tuple(attrs['kernel'])
    if (not data or not out or len(data) != len(kernel) + 2 or len(out) != len(data)
            or _channels_last(attrs['layout'])):
        return shapes
    stride, dilate, pad = _spatial(attrs, len(kernel))
    spatial = tuple(x or (((o - 1) * st - 2 * p + dl * (k - 1) + 1) if o else 0)
                    for x, o, k, st, dl, p in zip(data[2:], out[2:], kernel, stride, dilate, pad))
    c = data[1]
    weight = shapes[1] if len(shapes) > 1 else None
    if not c and weight and len(weight) == len(data) and weight[1]:
        c = weight[1] * attrs['num_group']
    return [(data[0] or out[0], c) + spatial] + list(shapes[1:])


register('Convolution', inputs=('data', 'weight', 'bias'), heavy=True, drop_inputs=_no_bias,
         cost=_conv_cost, fill=_conv_fill, infer=_conv_infer, back=_conv_back,
         attrs=_CONV_ATTRS)(_convolution)


def _deconv_pad(attrs, in_spatial):
    """(pad, adj) of a Deconvolution: given, or derived from target_shape as MXNet does
    (the total padding split evenly, the odd remainder going to adj)."""
    kernel = attrs['kernel']
    stride, dilate, pad = _spatial(attrs, len(kernel))
    adj = attrs['adj'] or (0,) * len(kernel)
    target = attrs['target_shape']
    if target and any(t > 0 for t in target):
        pads, adjs = [], []
        for i, t in enumerate(target):
            full = stride[i] * (in_spatial[i] - 1) + dilate[i] * (kernel[i] - 1) + 1
            if t > full:
                raise ShapeError("Deconvolution: target_shape %s is larger than the largest "
                                 "output %d along spatial axis %d" % (tuple(target), full, i))
            total = full - t
            adjs.append(total % 2)
            pads.append((total + 1) // 2)
        pad, adj = tuple(pads), tuple(adjs)
    elif len(adj) != len(kernel):
        raise ShapeError("Deconvolution: adj=%s does not match kernel=%s" % (adj, kernel))
    for a, s, d in zip(adj, stride, dilate):
        if a >= max(s, d):
            raise ShapeError("Deconvolution: adj=%s must be smaller than stride=%s or dilate=%s"
                             % (adj, stride, dilate))
    return stride, dilate, pad, adj


def _deconvolution(data, weight, bias=None, kernel=(), stride=(), dilate=(), pad=(), adj=(),
                   target_shape=(), num_filter=0, num_group=1, workspace=512, no_bias=True,
                   cudnn_tune=None, cudnn_off=False, layout=None):
    """Transposed convolution: the gradient of Convolution with respect to its data."""
    attrs = {'kernel': kernel, 'stride': stride, 'dilate': dilate, 'pad': pad, 'adj': adj,
             'target_shape': target_shape, 'num_filter': num_filter, 'num_group': num_group,
             'no_bias': no_bias, 'layout': layout}
    first = _conv_geometry('Deconvolution', attrs, _shapes(data, weight, bias))[0]
    stride, dilate, pad, adj = _deconv_pad(attrs, first[2:])
    last = _channels_last(layout)
    if last:
        data, weight = _to_first(data), _to_first(weight)
    else:
        data, weight = dense(data), dense(weight)
    out = torch.convolution(data, weight, None if no_bias else bias, stride, pad, dilate, True,
                            adj, num_group)
    return _to_last(out) if last else out


def _deconv_infer(attrs, shapes, dtypes):
    data, kernel, _, _, _ = _conv_geometry('Deconvolution', attrs, shapes)
    _same_dtypes('Deconvolution', dtypes)
    stride, dilate, pad, adj = _deconv_pad(attrs, data[2:])
    spatial = tuple(st * (x - 1) + d * (k - 1) + 1 - 2 * p + a
                    for x, k, st, d, p, a in zip(data[2:], kernel, stride, dilate, pad, adj))
    out = (data[0], attrs['num_filter']) + spatial
    return (_channels_back(attrs, out),), (dtypes[0],)


register('Deconvolution', inputs=('data', 'weight', 'bias'), heavy=True, drop_inputs=_no_bias,
         cost=_conv_cost, fill=_conv_fill, infer=_deconv_infer,
         attrs={'kernel': Shape(), 'stride': Shape(()), 'dilate': Shape(()), 'pad': Shape(()),
                'adj': Shape(()), 'target_shape': Shape(()), 'num_filter': Int(),
                'num_group': Int(1), 'workspace': Int(512), 'no_bias': Bool(True),
                'cudnn_tune': OptEnum('fastest', 'limited_workspace', 'off'),
                'cudnn_off': Bool(False), 'layout': OptEnum(*_LAYOUTS)})(_deconvolution)


# -- Pooling -----------------------------------------------------------------------------------

def _pool_out(size, k, s, p, convention):
    if convention == 'full':
        return 1 + int(math.ceil((size + 2 * p - k) / s))
    if convention == 'same':
        return int(math.ceil(size / s))
    return 1 + (size + 2 * p - k) // s


def _pool_geometry(shape, kernel, global_pool, stride, pad, convention):
    """(kernel, stride, pad, output spatial sizes) of a channels-first Pooling input."""
    n = len(shape) - 2
    if n not in (1, 2, 3):
        raise ShapeError("Pooling: data must be 3-d, 4-d or 5-d (N, C, spatial...), got shape %s"
                         % (shape,))
    if global_pool:
        kernel, stride, pad = tuple(shape[2:]), (1,) * n, (0,) * n
    else:
        if len(kernel) != n:
            raise ShapeError("Pooling: kernel=%s does not match data of shape %s"
                             % (tuple(kernel), shape))
        stride = tuple(stride) or (1,) * n
        if convention == 'same':
            if n != 1:
                raise ShapeError("Pooling: pooling_convention='same' is for 1-d pooling (data "
                                 "(batch, channel, x)), as in MXNet; got data of shape %s"
                                 % (shape,))
            if any(pad):
                raise ShapeError("Pooling: pooling_convention='same' pads by itself; pad must "
                                 "be 0, got %s" % (tuple(pad),))
            pad = (0,) * n
        pad = tuple(pad) or (0,) * n
    outs = []
    for i in range(n):
        size = shape[2 + i]
        if kernel[i] > size + 2 * pad[i] and convention != 'same':
            raise ShapeError("Pooling: kernel %s is larger than the padded input %s"
                             % (tuple(kernel), shape[2:]))
        outs.append(_pool_out(size, kernel[i], stride[i], pad[i], convention))
    return tuple(kernel), stride, pad[:n], outs


def _pool_infer(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    last = _channels_last(attrs['layout'])
    if last:
        shape = (shape[0], shape[-1]) + shape[1:-1]
    _, _, _, outs = _pool_geometry(shape, attrs['kernel'], attrs['global_pool'],
                                   attrs['stride'], attrs['pad'], attrs['pooling_convention'])
    out = shape[:2] + tuple(outs)
    return ((out[0],) + out[2:] + (out[1],) if last else out,), (dtypes[0],)


def _lp(x, p_value):
    if p_value not in (1, 2, 3):
        raise ShapeError("Pooling: lp pooling needs p_value 1, 2 or 3, got %r" % (p_value,))
    return x ** p_value if p_value != 1 else x


def _lp_root(out, p_value):
    if p_value == 1:
        return out
    return out.sqrt() if p_value == 2 else torch.sign(out) * out.abs().pow(1.0 / 3)


def _pool_torch(data, kernel, stride, pad, pool_type, p_value, count_include_pad, ceil):
    """Pooling by torch's kernels (when MXNet's windows are torch's)."""
    nd2 = len(kernel)
    if pool_type == 'max':
        if nd2 == 2 and max_pool_by_channels(data):
            return _MaxPool2d.apply(data, kernel, stride, pad, ceil)
        return (F.max_pool2d if nd2 == 2 else F.max_pool3d)(data, kernel, stride, pad,
                                                          ceil_mode=ceil)
    if pool_type not in ('avg', 'sum', 'lp'):
        raise ShapeError("Pooling: unknown pool_type %r" % (pool_type,))
    x = _lp(data, p_value) if pool_type == 'lp' else data
    include = True if count_include_pad is None else count_include_pad
    divisor = None if pool_type == 'avg' else 1      # a sum: divide by 1
    f = F.avg_pool2d if nd2 == 2 else F.avg_pool3d
    out = f(x, kernel, stride, pad, ceil_mode=ceil, count_include_pad=include,
            divisor_override=divisor)
    return _lp_root(out, p_value) if pool_type == 'lp' else out


def _pool_padded(data, kernel, stride, pad, right, outs, pool_type, p_value, count_include_pad,
                 convention):
    """Pooling over explicitly padded data, for the windows torch's kernels refuse: padding
    over half the kernel (d2l pads a 3-wide window by 2), 'full' windows starting in the
    padding, 'same'. Padding reads as the lowest value for max; averages divide by the
    window's part within the padded input (count_include_pad, MXNet's default) or within the
    data ('same' always)."""
    nd2 = len(kernel)
    flat = []
    for p, r in zip(reversed(pad), reversed(right)):
        flat.extend([p, r])
    window = tuple(slice(0, o) for o in outs)
    pool_sum = F.avg_pool2d if nd2 == 2 else F.avg_pool3d
    if pool_type == 'max':
        lowest = torch.finfo(data.dtype).min if data.is_floating_point() else \
            torch.iinfo(data.dtype).min
        padded = F.pad(data, flat, value=lowest)
        out = (F.max_pool2d if nd2 == 2 else F.max_pool3d)(padded, kernel, stride)
        return out[(Ellipsis,) + window]
    if pool_type not in ('avg', 'sum', 'lp'):
        raise ShapeError("Pooling: unknown pool_type %r" % (pool_type,))
    x = _lp(data, p_value) if pool_type == 'lp' else data
    total = pool_sum(F.pad(x, flat), kernel, stride, divisor_override=1)[(Ellipsis,) + window]
    if pool_type == 'avg':
        include = convention != 'same' and (count_include_pad is None or count_include_pad)
        mask = torch.ones((1, 1) + tuple(data.shape[2:]), dtype=data.dtype, device=data.device)
        if include:     # the padding counts, what lies beyond it does not
            mask = F.pad(mask, [q for p in reversed(pad) for q in (p, p)], value=1.0)
            mask = F.pad(mask, [q for p, r in zip(reversed(pad), reversed(right))
                                for q in (0, r - p)])
        else:
            mask = F.pad(mask, flat)
        count = pool_sum(mask, kernel, stride, divisor_override=1)[(Ellipsis,) + window]
        return torch.where(count > 0, total / count.clamp(min=1), torch.zeros_like(total))
    return _lp_root(total, p_value) if pool_type == 'lp' else total


class _MaxPool2d(torch.autograd.Function):
    """2-d max pooling of a row-major NCHW tensor, its forward computed by torch's channels-last
    CPU kernel on a channels-last copy of the input (``layout.max_pool_by_channels`` says
    when). torch's channels-first kernel compares one element at a time; the channels-last one
    compares 16 channels at once (docs/benchmarks.md has the figures). Both kernels are ATen's
    own loops (no oneDNN) and scan each window in the same order, so the output and the argmax
    indices are the same bit for bit, ties and NaN included. Everything leaving this function
    is row-major: the output, the indices, and the gradient, which torch's channels-first
    backward kernel scatters through the indices."""

    @staticmethod
    def forward(ctx, x, kernel, stride, pad, ceil):
        out, idx = torch.ops.aten.max_pool2d_with_indices(
            x.contiguous(memory_format=torch.channels_last), kernel, stride, pad, (1, 1), ceil)
        idx = dense(idx)
        ctx.save_for_backward(x, idx)
        ctx.geometry = (kernel, stride, pad, ceil)
        return dense(out)

    @staticmethod
    def backward(ctx, grad):
        x, idx = ctx.saved_tensors
        kernel, stride, pad, ceil = ctx.geometry
        gx = torch.ops.aten.max_pool2d_with_indices_backward(dense(grad), x, kernel, stride, pad,
                                                             (1, 1), ceil, idx)
        return gx, None, None, None, None


def _pooling(data, kernel=(), pool_type='max', global_pool=False, cudnn_off=False,
             pooling_convention='valid', stride=(), pad=(), p_value=None, count_include_pad=None,
             layout=None):
    """Max/avg/sum/lp pooling over 1, 2 or 3 spatial axes with MXNet's windows: any padding
    (also over half the kernel, which torch refuses), ``pooling_convention='full'`` rounding
    the output size up (no window is dropped for starting in the padding, unlike torch's
    ceil_mode) and 'same' (1-d: ceil(size / stride) outputs, padded after)."""
    last = _channels_last(layout)
    if last:
        data = _to_first(data)
    elif not takes_channels_last(data):
        data = dense(data)
    kernel, stride, pad, outs = _pool_geometry(tuple(data.shape), kernel, global_pool, stride,
                                               pad, pooling_convention)
    n = len(kernel)
    one_d = n == 1
    if one_d:   # torch's 1-d avg pooling has no divisor_override: pool in 2-d
        data = data.unsqueeze(-1)
        kernel, stride, pad, outs = kernel + (1,), stride + (1,), pad + (0,), outs + [1]
    sizes = data.shape[2:]
    # the padding after each axis that MXNet's windows read: 'full' may need more than pad
    # (its last window can start in the padding), 'same' pads only after
    right = [max(0, (o - 1) * st + k - d - (0 if pooling_convention == 'same' else p))
             for o, st, k, d, p in zip(outs, stride, kernel, sizes, pad)]
    torch_can = (pooling_convention != 'same' and all(2 * p <= k for p, k in zip(pad, kernel))
                 and all(r <= p or (o - 1) * st < d + p
                         for r, p, o, st, d in zip(right, pad, outs, stride, sizes)))
    if torch_can:
        out = _pool_torch(data, kernel, stride, pad, pool_type, p_value, count_include_pad,
                          pooling_convention == 'full')
    else:
        out = _pool_padded(data, kernel, stride, pad, right, outs, pool_type, p_value,
                           count_include_pad, pooling_convention)
    if one_d:
        out = out.squeeze(-1)
    return _to_last(out) if last else out


register('Pooling', heavy=True, cost=_pool_cost, infer=_pool_infer,
         attrs={'kernel': Shape(()), 'pool_type': Enum('avg', 'lp', 'max', 'sum', default='max'),
                'global_pool': Bool(False), 'cudnn_off': Bool(False),
                'pooling_convention': Enum('full', 'same', 'valid', default='valid'),
                'stride': Shape(()), 'pad': Shape(()), 'p_value': IntOrNone(None),
                'count_include_pad': BoolOrNone(None),
                'layout': OptEnum('NCDHW', 'NCHW', 'NCW', 'NDHWC', 'NHWC', 'NWC')})(_pooling)


# -- activations -------------------------------------------------------------------------

# MXNet 1.9's act_type values (log_sigmoid and mish are operators of their own, nd.mish).
_ACT = {'relu': torch.relu, 'sigmoid': torch.sigmoid, 'tanh': torch.tanh,
        'softrelu': F.softplus, 'softsign': F.softsign}


def _activation(data, act_type):
    return _ACT[act_type](data)


register('Activation', infer=same_as_input, infer_attrs=(),
         attrs={'act_type': Enum(*_ACT)})(_activation)

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


def _leaky_fill(attrs, shapes):
    """prelu's gamma: one slope per channel unless given (a single shared slope is (1,))."""
    out = list(shapes)
    data = shapes[0]
    if attrs['act_type'] == 'prelu' and len(out) > 1 and data and \
            not (out[1] and all(d > 0 for d in out[1])):
        out[1] = (data[1] if len(data) > 1 else data[0],)
    return out


def _leaky_relu(data, gamma=None, act_type='leaky', slope=0.25, lower_bound=0.125,
                upper_bound=0.334, is_train=False, generator=None):
    """leaky: x or slope*x; prelu: x or gamma*x (gamma per channel, axis 1); elu:
    slope*(exp(x)-1) below 0; selu; gelu (erf form); rrelu: a random slope in
    [lower_bound, upper_bound) in training, their mean otherwise."""
    if act_type == 'leaky':
        return F.leaky_relu(data, slope)
    if act_type == 'prelu':
        if gamma.dim() == 1 and data.dim() > 1:
            if gamma.shape[0] not in (1, data.shape[1]):
                raise ShapeError("LeakyReLU: prelu gamma has shape %s, expected (%d,) or (1,)"
                                 % (tuple(gamma.shape), data.shape[1]))
            gamma = gamma.reshape((1, -1) + (1,) * (data.dim() - 2))
        elif 1 < gamma.dim() < data.dim():
            # MXNet aligns a gamma of several axes with data's leading axes
            gamma = gamma.reshape(tuple(gamma.shape) + (1,) * (data.dim() - gamma.dim()))
        return torch.where(data > 0, data, gamma * data)
    # elu, selu: the exponential branch is taken of x clamped to <= 0; of x itself, a large x
    # overflows it to inf, and where's zero gradient times exp's inf makes the gradient NaN
    if act_type == 'elu':
        return torch.where(data > 0, data, slope * torch.expm1(data.clamp(max=0)))
    if act_type == 'selu':
        return _SELU_LAMBDA * torch.where(data > 0, data,
                                          _SELU_ALPHA * torch.expm1(data.clamp(max=0)))
    if act_type == 'gelu':
        return F.gelu(data)
    if act_type == 'rrelu':
        if is_train and data.device.type != 'meta':
            s = torch.empty(data.shape, dtype=data.dtype, device=data.device)
            s.uniform_(lower_bound, upper_bound, generator=generator)
            return torch.where(data > 0, data, s * data)
        return F.leaky_relu(data, (lower_bound + upper_bound) / 2)
    raise ShapeError("LeakyReLU: unknown act_type %r" % (act_type,))


register('LeakyReLU', inputs=('data', 'gamma'), rng=True, train=True, fill=_leaky_fill,
         drop_inputs=lambda attrs: () if attrs['act_type'] == 'prelu' else ('gamma',),
         infer=same_as_input, infer_attrs=(),
         attrs={'act_type': Enum('elu', 'gelu', 'leaky', 'prelu', 'rrelu', 'selu',
                                 default='leaky'),
                'slope': Float(0.25), 'lower_bound': Float(0.125),
                'upper_bound': Float(0.334)})(_leaky_relu)


# -- softmax family ------------------------------------------------------------------------

def _length_mask(data, length, axis):
    """True where the position along ``axis`` is below ``length`` (shape: data without axis)."""
    n = data.shape[axis]
    pos = torch.arange(n, device=data.device).reshape((-1,) + (1,) * (data.dim() - 1 - axis))
    return pos < length.to(torch.int64).unsqueeze(axis)


def _softmax_like(f, fill):
    def kernel(data, length=None, axis=-1, temperature=None, dtype=None, use_length=False):
        axis = axis % data.dim()
        x = data if temperature in (None, 1.0) else data / temperature
        if dtype is not None:
            x = x.to(dtype_torch(dtype))
        if use_length and length is not None:
            mask = _length_mask(x, length, axis)
            out = f(x.masked_fill(~mask, float('-inf')), dim=axis)
            return out.masked_fill(~mask, fill)
        return f(x, dim=axis)
    return kernel


_SOFTMAX = {'axis': Int(-1), 'temperature': FloatOrNone(None),
            'dtype': OptEnum('float16', 'float32', 'float64'), 'use_length': Bool(False)}


def _log_softmax(data, axis=-1, temperature=None, dtype=None, use_length=False):
    return _softmax_like(torch.log_softmax, 0.0)(data, None, axis, temperature, dtype, False)


def _softmax_infer(attrs, shapes, dtypes):
    data = shapes[0]
    if not -len(data) <= attrs['axis'] < len(data):
        raise ShapeError("axis %d is out of range for data of shape %s" % (attrs['axis'], data))
    return (data,), (attrs['dtype'] or dtypes[0],)


register('softmax', inputs=('data', 'length'), attrs=_SOFTMAX, infer=_softmax_infer,
         drop_inputs=lambda attrs: () if attrs['use_length'] else ('length',))(
    _softmax_like(torch.softmax, 0.0))
register('log_softmax', attrs=_SOFTMAX, infer=_softmax_infer)(_log_softmax)


def _softmax_activation(data, mode='instance'):
    """Softmax over axis 1 (``channel``) or, for ``instance``, over the last axis: MXNet
    flattens the data to 2-d keeping the last axis, so a 2-d input is normalised per row."""
    if mode == 'channel':
        return torch.softmax(data, dim=1)
    return torch.softmax(data, dim=-1)


register('SoftmaxActivation', infer=same_as_input,
         attrs={'mode': Enum('channel', 'instance', default='instance')})(_softmax_activation)


def _softmax_output_axes(data, multi_output, preserve_shape):
    """(probabilities, class axis) of SoftmaxOutput's forward."""
    if preserve_shape:
        return torch.softmax(data, dim=-1), data.dim() - 1
    if multi_output:
        return torch.softmax(data, dim=1), 1
    return torch.softmax(rows(data), dim=1).reshape(data.shape), None


def _softmax_output(data, label, grad_scale=1.0, ignore_label=-1.0, multi_output=False,
                    use_ignore=False, preserve_shape=False, normalization='null', out_grad=False,
                    smooth_alpha=0.0):
    """Softmax in the forward pass; its gradient is ``softmax(x) - one_hot(label)`` (the
    cross-entropy gradient), scaled, whatever the head gradient."""
    return _softmax_output_axes(data, multi_output, preserve_shape)[0]


def _softmax_output_grad(inputs, outputs, out_grads, grad_scale=1.0, ignore_label=-1.0,
                         multi_output=False, use_ignore=False, preserve_shape=False,
                         normalization='null', out_grad=False, smooth_alpha=0.0):
    data, label = inputs
    prob = outputs
    if preserve_shape:
        axis = data.dim() - 1
    elif multi_output:
        axis = 1
    else:
        axis = 1
        prob = prob.reshape(data.shape[0], -1)
    if label.shape == prob.shape:       # probabilities as labels
        grad = prob - label.to(prob.dtype)
        valid = None
    else:
        idx = label.to(torch.int64)
        if label.dim() != prob.dim() - 1:
            idx = idx.reshape(prob.shape[:axis] + prob.shape[axis + 1:])
        keep = idx != int(ignore_label) if use_ignore else None
        num_classes = prob.shape[axis]
        target = F.one_hot(idx.clamp(0, num_classes - 1), num_classes).movedim(-1, axis)
        target = target.to(prob.dtype)
        if smooth_alpha:
            target = target * (1 - smooth_alpha) + (1 - target) * (smooth_alpha / (num_classes - 1))
        grad = prob - target
        # 'valid' counts the labels other than ignore_label, use_ignore or not (as MXNet)
        valid = idx != int(ignore_label)
        if keep is not None:
            grad = grad * keep.unsqueeze(axis).to(grad.dtype)
    scale = grad_scale
    if multi_output and not preserve_shape and normalization != 'valid':
        # MXNet averages over the positions of each example too
        scale = scale / max(math.prod(data.shape[2:]), 1)
    if normalization == 'batch':
        scale = scale / data.shape[0]
    elif normalization == 'valid':
        if valid is not None:
            scale = scale / max(int(valid.sum()), 1)
        else:
            scale = scale / max(grad.numel() // grad.shape[axis], 1)
    grad = grad * scale
    if out_grad:
        grad = grad * out_grads[0].reshape(grad.shape)
    return grad.reshape(data.shape), None


def _softmax_output_fill(attrs, shapes):
    out = list(shapes)
    data = shapes[0]
    if data and (len(out) < 2 or not out[1]):
        if attrs['preserve_shape']:
            out[1] = tuple(data[:-1])
        elif attrs['multi_output']:
            out[1] = (data[0],) + tuple(data[2:])
        else:
            out[1] = (data[0],)
    return out


register('SoftmaxOutput', inputs=('data', 'label'), aliases=('Softmax',), infer=same_as_input,
         grad=_softmax_output_grad, fill=_softmax_output_fill,
         attrs={'grad_scale': Float(1.0), 'ignore_label': Float(-1.0),
                'multi_output': Bool(False), 'use_ignore': Bool(False),
                'preserve_shape': Bool(False),
                'normalization': Enum('batch', 'null', 'valid', default='null'),
                'out_grad': Bool(False), 'smooth_alpha': Float(0.0)})(_softmax_output)


# -- regression outputs: the forward is the prediction; the gradient is MXNet's, whatever
# the head gradient: grad_scale / (label elements per example) * d(loss)/d(prediction) --

def _regression_infer(attrs, shapes, dtypes):
    data, label = shapes
    if label and data and (label[0] != data[0] or
                           prod(label) != prod(data)):
        raise ShapeError("regression output: label shape %s does not match data shape %s"
                         % (tuple(label), tuple(data)))
    return (tuple(data),), (dtypes[0],)


def _regression_fill(attrs, shapes):
    out = list(shapes)
    data = shapes[0]
    if data and (len(out) < 2 or not out[1]):
        out[1] = (data[0],) if len(data) == 2 and data[1] == 1 else tuple(data)
    return out


def _regression(name, forward, loss_grad):
    def kernel(data, label, grad_scale=1.0):
        return forward(data)

    def grad(inputs, outputs, out_grads, grad_scale=1.0):
        data, label = inputs
        per_example = label.numel() // max(label.shape[0], 1) if label.dim() else 1
        g = loss_grad(outputs, label.reshape(outputs.shape).to(outputs.dtype))
        return g * (grad_scale / max(per_example, 1)), None
    kernel.__name__ = '_' + name
    kernel.__doc__ = '``%s``: see the comment above.' % name
    register(name, inputs=('data', 'label'), infer=_regression_infer, infer_attrs=(),
             fill=_regression_fill, grad=grad, attrs={'grad_scale': Float(1.0)})(kernel)


_regression('LinearRegressionOutput', lambda x: x.clone(), lambda out, y: out - y)
_regression('MAERegressionOutput', lambda x: x.clone(), lambda out, y: torch.sign(out - y))
_regression('LogisticRegressionOutput', torch.sigmoid, lambda out, y: out - y)


def _svm_output(data, label, margin=1.0, regularization_coefficient=1.0, use_linear=False):
    """The scores themselves; the gradient is that of the one-vs-all hinge loss (squared
    unless ``use_linear``), whatever the head gradient."""
    return data.clone()


def _svm_output_grad(inputs, outputs, out_grads, margin=1.0, regularization_coefficient=1.0,
                     use_linear=False):
    data, label = inputs
    x = data.reshape(data.shape[0], -1)
    sign = -torch.ones_like(x)          # +1 at the label's class, -1 elsewhere
    sign.scatter_(1, label.reshape(-1, 1).to(torch.int64), 1.0)
    slack = margin - sign * x
    if use_linear:
        g = -sign * (slack > 0).to(x.dtype)
    else:
        g = -2 * sign * slack.clamp(min=0)
    return (g * regularization_coefficient).reshape(data.shape), None


register('SVMOutput', inputs=('data', 'label'), infer=same_as_input, infer_attrs=(),
         grad=_svm_output_grad,
         fill=lambda attrs, shapes: [shapes[0], shapes[1] if shapes[1] else
                                     (tuple(shapes[0][:1]) if shapes[0] else None)],
         attrs={'margin': Float(1.0), 'regularization_coefficient': Float(1.0),
                'use_linear': Bool(False)})(_svm_output)


def _l2_normalization(data, eps=1e-10, mode='instance'):
    """``data`` divided by its L2 norm over every axis but the first ('instance'), over the
    channel axis 1 ('channel'), or over the spatial axes 2... ('spatial')."""
    if mode == 'instance':
        dims = tuple(range(1, data.dim()))
    elif mode == 'channel':
        dims = (1,)
    else:
        dims = tuple(range(2, data.dim()))
    if data.dim() < (2 if mode == 'instance' else 3):
        raise ShapeError("L2Normalization: mode=%r needs more axes than shape %s"
                         % (mode, tuple(data.shape)))
    norm = torch.sqrt((data * data).sum(dim=dims, keepdim=True) + eps)
    return data / norm


register('L2Normalization', infer=same_as_input, infer_attrs=(),
         attrs={'eps': Float(1e-10),
                'mode': Enum('channel', 'instance', 'spatial', default='instance')})(
    _l2_normalization)


def _softmax_cross_entropy(data, label):
    """Sum over the batch of ``-log softmax(data)[label]``, as an array of shape (1,)."""
    if data.dim() != 2 or label.shape != (data.shape[0],):
        raise ShapeError("softmax_cross_entropy: data must be (batch, classes) and label "
                         "(batch,), got %s and %s" % (tuple(data.shape), tuple(label.shape)))
    return F.cross_entropy(data, label.to(torch.int64), reduction='sum').reshape(1)


def _sce_infer(attrs, shapes, dtypes):
    data, label = shapes
    if len(data) != 2 or tuple(label) != (data[0],):
        raise ShapeError("data must be (batch, classes) and label (batch,), got %s and %s"
                         % (tuple(data), tuple(label)))
    return ((1,),), (dtypes[0],)


register('softmax_cross_entropy', inputs=('data', 'label'), infer=_sce_infer,
         infer_attrs=())(_softmax_cross_entropy)


def _ctc_loss(data, label, data_lengths=None, label_lengths=None, use_data_lengths=False,
              use_label_lengths=False, blank_label='first'):
    """Connectionist temporal classification loss per sequence: ``data`` holds activations
    (T, N, C) (softmax is applied here), ``label`` (N, L) the classes, padded with 0 when the
    blank is the 'first' class and with -1 when it is the 'last'; the lengths, when used,
    give each sequence's data and label length."""
    t, n, c = data.shape
    lab = label.to(torch.int64)
    if use_label_lengths:
        llen = label_lengths.to(torch.int64)
    else:
        pad = lab == (0 if blank_label == 'first' else -1)
        # the first padding position, or the full width where there is none
        llen = torch.where(pad.any(dim=1), pad.to(torch.int8).argmax(dim=1),
                           torch.full((n,), lab.shape[1], dtype=torch.int64, device=lab.device))
    dlen = data_lengths.to(torch.int64) if use_data_lengths else \
        torch.full((n,), t, dtype=torch.int64, device=data.device)
    blank = 0 if blank_label == 'first' else c - 1
    if use_data_lengths:
        # steps past a sequence's end take no part, whatever they hold (NaN included): their
        # gradient is 0, as in MXNet
        inside = torch.arange(t, device=data.device)[:, None] < dlen.to(data.device)[None, :]
        data = torch.where(inside[..., None], data, torch.zeros((), dtype=data.dtype,
                                                                device=data.device))
    logp = torch.log_softmax(data, dim=-1)
    return F.ctc_loss(logp, lab.clamp(min=0), dlen, llen, blank=blank, reduction='none')


def _ctc_infer(attrs, shapes, dtypes):
    data, label = shapes[0], shapes[1]
    if len(data) != 3 or len(label) != 2 or label[0] != data[1]:
        raise ShapeError("CTCLoss: data must be (sequence, batch, classes) and label (batch, "
                         "label length), got %s and %s" % (tuple(data), tuple(label)))
    return ((data[1],),), (dtypes[0],)


register('CTCLoss', inputs=('data', 'label', 'data_lengths', 'label_lengths'),
         aliases=('ctc_loss', '_contrib_CTCLoss', '_contrib_ctc_loss'), infer=_ctc_infer,
         drop_inputs=lambda attrs: (() if attrs['use_data_lengths'] else ('data_lengths',)) +
         (() if attrs['use_label_lengths'] else ('label_lengths',)),
         attrs={'use_data_lengths': Bool(False), 'use_label_lengths': Bool(False),
                'blank_label': Enum('first', 'last', default='first')})(_ctc_loss)


# -- losses whose gradient ignores the head gradient -------------------------------------

def _make_loss(data, grad_scale=1.0, valid_thresh=0.0, normalization='null'):
    return data.clone()


def _make_loss_grad(inputs, outputs, out_grads, grad_scale=1.0, valid_thresh=0.0,
                    normalization='null'):
    data = inputs[0]
    scale = grad_scale
    if normalization == 'batch':
        scale /= data.shape[0]
    elif normalization == 'valid':
        scale /= max(int((data > valid_thresh).sum()), 1)
    return (torch.full_like(data, scale),)


register('MakeLoss', infer=same_as_input, grad=_make_loss_grad,
         attrs={'grad_scale': Float(1.0), 'valid_thresh': Float(0.0),
                'normalization': Enum('batch', 'null', 'valid', default='null')})(_make_loss)


def _make_loss_plain(data):
    return data.clone()


register('make_loss', infer=same_as_input, infer_attrs=(),
         grad=lambda inputs, outputs, out_grads: (torch.ones_like(inputs[0]),),
         output_names=('loss',))(_make_loss_plain)


# -- normalisation -------------------------------------------------------------------------

def _norm_fill(axis_of):
    def fill(attrs, shapes):
        out = list(shapes)
        data = shapes[0]
        if data:
            c = axis_of(attrs, data)
            for i in range(1, len(out)):
                out[i] = (c,)
        return out
    return fill


def _num_norm_outputs(attrs):
    return 3 if attrs['output_mean_var'] else 1


def _norm_output_names(spread):
    """The outputs: with output_mean_var also the mean and the var (BatchNorm: in fact
    1/sqrt(var+eps), as MXNet) or std."""
    return lambda attrs: ('output', 'mean', spread)[:_num_norm_outputs(attrs)]


def _bn_channels(attrs, data):
    return data[attrs['axis'] % len(data)]


def _bn_infer(attrs, shapes, dtypes):
    data = shapes[0]
    if not data:
        raise ShapeError("BatchNorm: data has no axes")
    axis = attrs['axis']
    if not -len(data) <= axis < len(data):
        raise ShapeError("BatchNorm: axis %d is out of range for data of shape %s" % (axis, data))
    c = data[axis % len(data)]
    for name, s in zip(('gamma', 'beta', 'moving_mean', 'moving_var'), shapes[1:]):
        if s is not None and tuple(s) != (c,):
            raise ShapeError("BatchNorm: %s has shape %s, expected (%d,) (the size of axis %d "
                             "of data %s)" % (name, tuple(s), c, axis, tuple(data)))
    if attrs['output_mean_var']:
        return (data, (c,), (c,)), (dtypes[0], dtypes[3] or dtypes[0], dtypes[4] or dtypes[0])
    return (data,), (dtypes[0],)


def _batch_norm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9,
                fix_gamma=True, use_global_stats=False, output_mean_var=False, axis=1,
                cudnn_off=False, min_calib_range=None, max_calib_range=None, is_train=False):
    """Batch normalisation over every axis but ``axis``. In training (and without
    ``use_global_stats``) it normalises with the batch statistics and updates the moving
    ones in place, ``moving = moving * momentum + batch * (1 - momentum)`` with the biased
    variance (MXNet on GPU updates them in the forward pass, as here; on CPU in the
    backward). Otherwise it normalises with the moving statistics. ``fix_gamma`` uses 1 for
    gamma (and gamma gets no gradient). The extra outputs are the mean and 1/sqrt(var+eps)."""
    nd_ = data.dim()
    axis = axis % nd_
    if axis == 1 and takes_channels_last(data):
        x = data
    else:
        x = dense(data.movedim(axis, 1) if axis != 1 else data)
    if nd_ == 1:
        x = x.unsqueeze(0)
    if fix_gamma:
        gamma = gamma * 0 + 1      # 1, with a zero gradient (the graph stays connected)
    if is_train and not use_global_stats:
        out, mean, invstd = torch.native_batch_norm(x, gamma, beta, None, None, True, 0.0, eps)
        if x.device.type != 'meta':
            with torch.no_grad():
                var = invstd.detach().to(moving_var.dtype).reciprocal().square() - eps
                moving_mean.mul_(momentum).add_(mean.detach().to(moving_mean.dtype),
                                                alpha=1 - momentum)
                moving_var.mul_(momentum).add_(var, alpha=1 - momentum)
    else:
        out = torch.batch_norm(x, gamma, beta, moving_mean, moving_var, False, 0.0, eps, False)
        mean = moving_mean
        invstd = (moving_var + eps).rsqrt()
    if nd_ == 1:
        out = out.squeeze(0)
    if axis != 1:
        out = dense(out.movedim(1, axis))
    if output_mean_var:
        return out, mean, invstd
    return out


register('BatchNorm', inputs=('data', 'gamma', 'beta', 'moving_mean', 'moving_var'),
         mutate=('moving_mean', 'moving_var'), train=True, heavy=True,
         num_outputs=_num_norm_outputs, output_names=_norm_output_names('var'),
         infer=_bn_infer, fill=_norm_fill(_bn_channels),
         attrs={'eps': Float(1e-3), 'momentum': Float(0.9), 'fix_gamma': Bool(True),
                'use_global_stats': Bool(False), 'output_mean_var': Bool(False),
                'axis': Int(1), 'cudnn_off': Bool(False),
                'min_calib_range': FloatOrNone(None),
                'max_calib_range': FloatOrNone(None)})(_batch_norm)


def _batch_norm_v1(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9,
                   fix_gamma=True, use_global_stats=False, output_mean_var=False,
                   is_train=False):
    """MXNet's first BatchNorm: BatchNorm over axis 1."""
    return _batch_norm(data, gamma, beta, moving_mean, moving_var, eps, momentum, fix_gamma,
                       use_global_stats, output_mean_var, 1, is_train=is_train)


_BN_V1 = {'eps': Float(1e-3), 'momentum': Float(0.9), 'fix_gamma': Bool(True),
          'use_global_stats': Bool(False), 'output_mean_var': Bool(False)}
register('BatchNorm_v1', inputs=('data', 'gamma', 'beta', 'moving_mean', 'moving_var'),
         mutate=('moving_mean', 'moving_var'), train=True, heavy=True,
         num_outputs=_num_norm_outputs, output_names=_norm_output_names('var'),
         infer=lambda attrs, shapes, dtypes: _bn_infer(dict(attrs, axis=1), shapes, dtypes),
         fill=_norm_fill(lambda attrs, data: data[1]), attrs=_BN_V1)(_batch_norm_v1)


def _layer_norm(data, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False):
    """Normalises along ``axis`` and scales by gamma, shifts by beta (both of that axis'
    size); the extra outputs are the mean and the standard deviation, with ``axis`` kept as
    size 1."""
    axis = axis % data.dim()
    c = data.shape[axis]
    _check_param('LayerNorm', 'gamma', gamma.shape, (c,))
    _check_param('LayerNorm', 'beta', beta.shape, (c,))
    last = axis == data.dim() - 1
    x = data if last else data.movedim(axis, -1)
    if gamma.requires_grad or beta.requires_grad:
        # The affine part outside the fused kernel: its backward sums the gradients of gamma
        # and beta over thousands of rows less precisely than torch.sum (MXNet's tests
        # compare them with 1e-4 tolerances).
        out = torch.addcmul(beta, F.layer_norm(x, (c,), None, None, eps), gamma)
    else:
        out = F.layer_norm(x, (c,), gamma, beta, eps)
    if not last:
        out = dense(out.movedim(-1, axis))
    if not output_mean_var:
        return out
    var, mean = torch.var_mean(data, dim=axis, keepdim=True, unbiased=False)
    return out, mean, (var + eps).sqrt()


def _norm_infer(op, channels, stat_shape):
    def infer(attrs, shapes, dtypes):
        data = shapes[0]
        if not data:
            raise ShapeError("%s: data has no axes" % op)
        c = channels(attrs, data)
        for name, sh in zip(('gamma', 'beta'), shapes[1:]):
            if sh is not None:
                _check_param(op, name, sh, (c,))
        if attrs['output_mean_var']:
            stat = stat_shape(attrs, data)
            return (data, stat, stat), (dtypes[0],) * 3
        return (data,), (dtypes[0],)
    return infer


def _ln_axis(attrs, data):
    axis = attrs['axis']
    if not -len(data) <= axis < len(data):
        raise ShapeError("LayerNorm: axis %d is out of range for data of shape %s"
                         % (axis, tuple(data)))
    return axis % len(data)


register('LayerNorm', inputs=('data', 'gamma', 'beta'),
         infer=_norm_infer('LayerNorm', lambda a, d: d[_ln_axis(a, d)],
                           lambda a, d: tuple(1 if i == _ln_axis(a, d) else x
                                              for i, x in enumerate(d))),
         fill=_norm_fill(
    lambda attrs, data: data[attrs['axis'] % len(data)]),
    num_outputs=_num_norm_outputs, output_names=_norm_output_names('std'),
    attrs={'axis': Int(-1), 'eps': Float(1e-5), 'output_mean_var': Bool(False)})(_layer_norm)


def _instance_norm(data, gamma, beta, eps=1e-3):
    """Normalises each (instance, channel) over its spatial axes, then scales and shifts per
    channel."""
    c = data.shape[1]
    _check_param('InstanceNorm', 'gamma', gamma.shape, (c,))
    _check_param('InstanceNorm', 'beta', beta.shape, (c,))
    # torch's instance_norm refuses a single spatial element; MXNet normalises it to 0
    dims = tuple(range(2, data.dim()))
    var, mean = torch.var_mean(data, dim=dims, unbiased=False, keepdim=True)
    shape = (1, c) + (1,) * (data.dim() - 2)
    return (data - mean) * torch.rsqrt(var + eps) * gamma.reshape(shape) + beta.reshape(shape)


register('InstanceNorm', inputs=('data', 'gamma', 'beta'), infer=same_as_input,
         fill=_norm_fill(lambda attrs, data: data[1]),
         attrs={'eps': Float(1e-3)})(_instance_norm)


def _group_norm(data, gamma, beta, num_groups=1, eps=1e-5, output_mean_var=False):
    """Normalises each group of ``C/num_groups`` channels (with all spatial positions); as in
    MXNet 1.x, gamma and beta have one value per group."""
    n, c = data.shape[0], data.shape[1]
    if c % num_groups:
        raise ShapeError("GroupNorm: %d channels are not divisible by num_groups=%d"
                         % (c, num_groups))
    _check_param('GroupNorm', 'gamma', gamma.shape, (num_groups,))
    _check_param('GroupNorm', 'beta', beta.shape, (num_groups,))
    x = data.reshape(n, num_groups, -1)
    out = F.layer_norm(x, (x.shape[-1],), None, None, eps)
    out = (out * gamma.reshape(1, -1, 1) + beta.reshape(1, -1, 1)).reshape(data.shape)
    if not output_mean_var:
        return out
    var, mean = torch.var_mean(x, dim=-1, unbiased=False)
    return out, mean, (var + eps).sqrt()


register('GroupNorm', inputs=('data', 'gamma', 'beta'),
         infer=_norm_infer('GroupNorm', lambda a, d: a['num_groups'],
                           lambda a, d: (d[0], a['num_groups'])),
         fill=_norm_fill(lambda attrs, data: attrs['num_groups']),
         num_outputs=_num_norm_outputs, output_names=_norm_output_names('std'),
         attrs={'num_groups': Int(1), 'eps': Float(1e-5),
                'output_mean_var': Bool(False)})(_group_norm)


def _lrn(data, alpha=1e-4, beta=0.75, knorm=2.0, nsize=1):
    """Local response normalisation across channels:
    ``x / (knorm + alpha/nsize * sum of x^2 over nsize channels)^beta``."""
    return F.local_response_norm(dense(data), nsize, alpha, beta, knorm)


register('LRN', infer=same_as_input,
         attrs={'alpha': Float(1e-4), 'beta': Float(0.75), 'knorm': Float(2.0),
                'nsize': Int()})(_lrn)


# -- Dropout -------------------------------------------------------------------------------

def _dropout(data, p, mode, axes, cudnn_off, is_train, generator):
    """Zeroes elements with probability ``p`` and scales the rest by 1/(1-p) in training
    (or always with ``mode='always'``); the identity otherwise. ``axes`` share one mask
    value along them (variational dropout)."""
    if p <= 0 or not (is_train or mode == 'always') or data.device.type == 'meta':
        return data.clone() if data.device.type != 'meta' else torch.empty_like(data)
    if p >= 1:
        # MXNet's mask is 0 / (1 - p): every element of the result is NaN
        return data * float('nan')
    shape = list(data.shape)
    for a in axes:
        shape[a] = 1
    keep = torch.empty(shape, dtype=torch.float32, device=data.device)
    keep.uniform_(0, 1, generator=generator)
    mask = (keep >= p).to(data.dtype) / (1.0 - p)
    return data * mask


def _dropout_infer(attrs, shapes, dtypes):
    n = len(shapes[0])
    for a in attrs['axes']:
        if not -n <= a < n:
            raise ShapeError("Dropout: axes=%s is out of range for data of shape %s"
                             % (attrs['axes'], tuple(shapes[0])))
    return (shapes[0],), (dtypes[0],)


register('Dropout', rng=True, train=True, infer=_dropout_infer, infer_attrs=('axes',),
         attrs={'p': Float(0.5), 'mode': Enum('training', 'always', default='training'),
                'axes': Shape(()), 'cudnn_off': BoolOrNone(False)})(_dropout)


# -- Embedding and UpSampling --------------------------------------------------------------

def _embedding_infer(attrs, shapes, dtypes):
    data, weight = shapes
    expected = (attrs['input_dim'], attrs['output_dim'])
    if weight is not None and tuple(weight) != expected:
        raise ShapeError("Embedding: weight has shape %s, expected (input_dim, output_dim) = %s"
                         % (tuple(weight), expected))
    return (tuple(data) + (attrs['output_dim'],),), (dtypes[1] or attrs['dtype'],)


def _embedding(data, weight, input_dim=0, output_dim=0, dtype='float32', sparse_grad=False):
    """Rows of ``weight`` picked by the indices in ``data`` (clipped to [0, input_dim)); with
    ``sparse_grad`` the weight's gradient is a sparse tensor of the rows looked up (a
    row_sparse gradient array stores just those)."""
    idx = data.to(torch.int64).clamp(0, input_dim - 1)
    return F.embedding(idx, weight, sparse=bool(sparse_grad) and weight.requires_grad)


register('Embedding', inputs=('data', 'weight'), infer=_embedding_infer,
         fill=lambda attrs, shapes: [shapes[0], (attrs['input_dim'], attrs['output_dim'])],
         attrs={'input_dim': Int(), 'output_dim': Int(), 'dtype': DType('float32'),
                'sparse_grad': Bool(False)})(_embedding)


def _sparse_embedding(data, weight, input_dim=0, output_dim=0, dtype='float32',
                      deterministic=False):
    """Embedding whose weight's gradient is row_sparse (torch's sparse gradient of the rows
    looked up); out-of-range indices are an error here, as in MXNet, not clipped."""
    idx = data.to(torch.int64)
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= input_dim):
        raise ShapeError("SparseEmbedding: input contains indices outside [0, %d): %s"
                         % (input_dim, sorted(set(idx[(idx < 0) | (idx >= input_dim)]
                                                  .tolist()))[:10]))
    return F.embedding(idx, weight, sparse=weight.requires_grad)


register('_contrib_SparseEmbedding', inputs=('data', 'weight'), infer=_embedding_infer,
         fill=lambda attrs, shapes: [shapes[0], (attrs['input_dim'], attrs['output_dim'])],
         attrs={'input_dim': Int(), 'output_dim': Int(), 'dtype': DType('float32'),
                'deterministic': Bool(False)})(_sparse_embedding)


def _upsampling(*data, scale=1, num_filter=0, sample_type='nearest', multi_input_mode='concat',
                num_args=1, workspace=512):
    """Nearest: each input is repeated to ``scale`` times the first input's spatial size,
    then the inputs are concatenated along channels (or summed). Bilinear: a grouped
    Deconvolution of ``data`` with the weight given as the second input."""
    if sample_type == 'bilinear':
        x, weight = data
        p = int(math.ceil((scale - 1) / 2.0))
        return torch.convolution(dense(x), dense(weight), None, (scale, scale), (p, p), (1, 1),
                                 True, (0, 0), num_filter or x.shape[1])
    h, w = data[0].shape[2] * scale, data[0].shape[3] * scale
    outs = []
    for x in data:
        if h % x.shape[2] or w % x.shape[3]:
            raise ShapeError("UpSampling: input of shape %s cannot be scaled to %dx%d"
                             % (tuple(x.shape), h, w))
        s = h // x.shape[2]
        outs.append(x.repeat_interleave(s, dim=2).repeat_interleave(w // x.shape[3], dim=3))
    if len(outs) == 1:
        return outs[0]
    if multi_input_mode == 'sum':
        out = outs[0]
        for o in outs[1:]:
            out = out + o
        return out
    return torch.cat(outs, dim=1)


def _upsampling_fill(attrs, shapes):
    out = list(shapes)
    if attrs['sample_type'] == 'bilinear' and len(out) > 1 and shapes[0]:
        s = attrs['scale']
        k = 2 * s - s % 2
        c = attrs['num_filter'] or shapes[0][1]
        out[1] = (c, 1, k, k)
    return out


register('UpSampling', inputs=('*data',), key_var_num_args='num_args', fill=_upsampling_fill,
         attrs={'scale': Int(), 'num_filter': Int(0),
                'sample_type': Enum('bilinear', 'nearest'),
                'multi_input_mode': Enum('concat', 'sum', default='concat'),
                'num_args': Int(), 'workspace': Int(512)})(_upsampling)
