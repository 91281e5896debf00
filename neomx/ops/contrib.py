"""``nd.contrib`` operators without a family of their own: small elementwise and indexing
operators, the interleaved attention products of transformer models, int8 quantization, and
the resizing operators of segmentation models (adaptive average pooling, bilinear resize).
"""
import math

import numpy as np
import torch
import torch.nn.functional as F

from ..base import dtype_torch
from .layout import dense
from .registry import (Axis, Bool, Enum, Float, FloatOrNone, Int, IntOrNone, ShapeError, Shape,
                       Str, register, same_as_input)


# -- elementwise --------------------------------------------------------------------------

def _quadratic(data, a=0.0, b=0.0, c=0.0):
    """``a * x**2 + b * x + c``."""
    return (a * data + b) * data + c


register('_contrib_quadratic', infer=same_as_input, infer_attrs=(),
         attrs={'a': Float(0.0), 'b': Float(0.0), 'c': Float(0.0)})(_quadratic)


def _gradient_multiplier(data, scalar=1.0, is_int=True):
    """The identity, whose gradient is the head gradient times ``scalar`` (gradient reversal
    layers use a negative one)."""
    return data.clone()


register('_contrib_gradientmultiplier', infer=same_as_input, infer_attrs=(),
         grad=lambda inputs, outputs, out_grads, scalar=1.0, is_int=True:
         (out_grads[0] * scalar,),
         attrs={'scalar': Float(1.0), 'is_int': Bool(True)})(_gradient_multiplier)


def _round_ste(data):
    """Rounds half away from zero (as C's ``round``), with the straight-through estimator's
    gradient: the head gradient passes unchanged."""
    if not data.is_floating_point():
        return data.clone()
    return torch.sign(data) * torch.floor(data.abs() + 0.5)


register('_contrib_round_ste', infer=same_as_input, infer_attrs=(),
         grad=lambda inputs, outputs, out_grads: (out_grads[0],))(_round_ste)


def _sign_ste(data):
    """The sign (-1, 0, 1), with the straight-through estimator's gradient: the head gradient
    passes unchanged."""
    return torch.sign(data)


register('_contrib_sign_ste', infer=same_as_input, infer_attrs=(),
         grad=lambda inputs, outputs, out_grads: (out_grads[0],))(_sign_ste)


# MXNet 1.9.1 operators neomx does not provide, with the reason; ``nd.contrib.<name>`` and
# ``sym.contrib.<name>`` exist and raise an MXNetError saying so when called.
_QUANTIZED = ("MXNet's INT8 operator is not part of neomx, which has quantize, quantize_v2, "
              "dequantize, requantize, quantized_pooling, quantized_flatten and the fused "
              "_sg_mkldnn_conv (ops/quantization.py)")
_GRAPH = ("DGL's graph operators on CSR adjacency matrices run imperatively in neomx "
          "(nd.contrib); their results' shapes and storage depend on the graph's values, which "
          "a neomx graph cannot hold")
_GPU_ONLY = "MXNet 1.9.1 implements it for GPUs only, and neomx does not provide it"
_BACKWARD = ("MXNet's separate backward operator; neomx has none: autograd differentiates "
             "the forward operator")
UNAVAILABLE = dict(
    [(n, _QUANTIZED) for n in (
        'quantize_asym', 'calibrate_entropy', 'quantized_act', 'quantized_batch_norm',
        'quantized_concat', 'quantized_conv', 'quantized_elemwise_add',
        'quantized_elemwise_mul', 'quantized_embedding', 'quantized_fully_connected',
        'quantized_rnn')] +
    [(n, _GRAPH) for n in (
        'dgl_adjacency', 'dgl_csr_neighbor_non_uniform_sample',
        'dgl_csr_neighbor_uniform_sample', 'dgl_graph_compact', 'dgl_subgraph', 'edge_id')] +
    [(n, _GPU_ONLY) for n in ('fft', 'ifft', 'count_sketch', 'DeformablePSROIPooling')] +
    [(n, _BACKWARD) for n in ('backward_gradientmultiplier', 'backward_hawkesll',
                              'backward_index_copy', 'backward_quadratic')] +
    [('getnnz', "it counts the stored values of a CSR array, which runs imperatively in "
                "neomx (nd.contrib.getnnz)")])


def _hawkesll(lda, alpha, beta, state, lags, marks, valid_length, max_time):
    """Log likelihood of N sequences of a K-variate Hawkes process with exponential decay
    (MXNet's ``contrib.hawkesll``): for mark k the intensity is
    ``lda[n, k] + alpha[k] * beta[k] * s_k(t)``, the memory ``s_k(t)`` the sum of
    ``exp(-beta[k] (t - t_i))`` over earlier points of mark k (``state`` at t = 0). Returns
    (log likelihood (N,), the memory at ``max_time`` (N, K)). Autograd differentiates it."""
    n_seq, steps = lags.shape
    beta_ = beta.reshape(1, -1)
    rows = torch.arange(n_seq, device=lags.device)
    t_end = max_time.reshape(-1, 1).to(lda.dtype)
    s = state.to(lda.dtype)
    # the initial memory's share of the compensator (the intensity's integral over the period)
    comp = (lda * t_end + alpha * s * (1 - torch.exp(-beta_ * t_end))).sum(dim=1)
    ll = torch.zeros(n_seq, dtype=lda.dtype, device=lda.device)
    t = torch.zeros(n_seq, dtype=lda.dtype, device=lda.device)
    valid = valid_length.reshape(-1)
    for j in range(steps):
        live = (valid > j).to(lda.dtype)
        lag = lags[:, j].to(lda.dtype) * live
        t = t + lag
        s = s * torch.exp(-beta_ * lag.reshape(-1, 1))
        k = marks[:, j].long().clamp(0, lda.shape[1] - 1)
        a, b = alpha[k], beta[k]
        intensity = lda[rows, k] + a * b * s[rows, k]
        ll = ll + live * torch.log(torch.where(live > 0, intensity, torch.ones_like(intensity)))
        comp = comp + live * a * (1 - torch.exp(-b * (t_end.reshape(-1) - t)))
        s = s + live.reshape(-1, 1) * torch.nn.functional.one_hot(k, lda.shape[1]).to(s.dtype)
    s = s * torch.exp(-beta_ * (t_end - t.reshape(-1, 1)))
    return ll - comp, s


register('_contrib_hawkesll', inputs=('lda', 'alpha', 'beta', 'state', 'lags', 'marks',
                                      'valid_length', 'max_time'), num_outputs=2,
         infer=lambda a, s, d: ((s[0][:1], s[0]), (d[0], d[0])), infer_attrs=())(_hawkesll)


def _boolean_mask(data, index, axis=0):
    """The slices of ``data`` along ``axis`` where the 1-d ``index`` is non-zero."""
    keep = torch.nonzero(index.reshape(-1)).reshape(-1)
    return torch.index_select(data, axis, keep)


def _boolean_mask_rule(attrs, shapes, dtypes):
    data, index = shapes
    axis = attrs['axis'] % len(data) if data else 0
    if len(index) != 1 or index[0] not in (0, data[axis]):
        raise ShapeError("boolean_mask: index of shape %s does not fit axis %d of data %s "
                         "(expected a 1-d index of that axis' length)" % (index, axis, data))
    # the length along axis depends on the index's values: unknown (0) until it runs
    return (tuple(data[:axis]) + (0,) + tuple(data[axis + 1:]),), (dtypes[0],)


register('_contrib_boolean_mask', inputs=('data', 'index'), attrs={'axis': Int(0)},
         infer=_boolean_mask_rule)(_boolean_mask)

# Operators whose output shape depends on their inputs' values: a graph holding one cannot be
# compiled for fixed shapes (a hybridized block calling one runs imperatively).
DYNAMIC_SHAPE = frozenset(('_contrib_boolean_mask',))


def unavailable(name, where):
    """A function standing for operator ``name`` of ``where`` ('nd.contrib', 'sym.contrib')
    that raises an MXNetError with the reason when called."""
    from ..base import unavailable as function
    return function(name, "%s.%s: %s" % (where, name, UNAVAILABLE[name]),
                    "Not provided by neomx: raises MXNetError (%s)." % UNAVAILABLE[name])


def _div_sqrt_dim(data):
    """``data / sqrt(data.shape[-1])`` (the scaling of dot-product attention)."""
    return data / math.sqrt(data.shape[-1])


register('_contrib_div_sqrt_dim', infer=same_as_input, infer_attrs=())(_div_sqrt_dim)


def _allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=True):
    """1 (uint8) when every ``|a - b| <= atol + rtol * |b|``, else 0."""
    if a.device.type == 'meta':
        return torch.empty((), dtype=torch.uint8, device='meta')
    close = torch.isclose(a, b.to(a.dtype), rtol=rtol, atol=atol, equal_nan=equal_nan)
    return close.all().to(torch.uint8)


register('_contrib_allclose', inputs=('a', 'b'),
         infer=lambda attrs, shapes, dtypes: (((),), ('uint8',)), infer_attrs=(),
         attrs={'rtol': Float(1e-5), 'atol': Float(1e-8), 'equal_nan': Bool(True)})(_allclose)


# -- indexing -----------------------------------------------------------------------------

def _index_copy(old_tensor, index_vector, new_tensor):
    """``old_tensor`` with its rows ``index_vector`` replaced by the rows of ``new_tensor``."""
    if new_tensor.shape[1:] != old_tensor.shape[1:] or \
            new_tensor.shape[0] != index_vector.reshape(-1).shape[0]:
        raise ShapeError("index_copy: new_tensor %s must hold one row of old_tensor %s per "
                         "index (%d)" % (tuple(new_tensor.shape), tuple(old_tensor.shape),
                                         index_vector.numel()))
    return old_tensor.index_copy(0, index_vector.reshape(-1).to(torch.int64),
                                 new_tensor.to(old_tensor.dtype))


register('_contrib_index_copy', inputs=('old_tensor', 'index_vector', 'new_tensor'),
         infer=same_as_input, infer_attrs=())(_index_copy)


def _index_array_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    axes = _index_axes(len(shape), attrs['axes'])
    return (shape + (len(axes),),), ('int64',)


def _index_axes(ndim, axes):
    if axes is None:
        return tuple(range(ndim))
    axes = axes if isinstance(axes, tuple) else (axes,)
    for a in axes:
        if not -ndim <= a < ndim:
            raise ShapeError("index_array: axis %d is out of range for %d dims" % (a, ndim))
    return tuple(a % ndim for a in axes)


def _index_array(data, axes=None):
    """The index of every element (int64): ``out[i, j, ..., k]`` is ``(i, j, ...)`` over
    ``axes`` (all by default)."""
    shape = tuple(data.shape)
    picked = _index_axes(len(shape), axes)
    if not shape:
        return torch.zeros((0,), dtype=torch.int64, device=data.device)
    grids = torch.meshgrid(*[torch.arange(d, device=data.device) for d in shape], indexing='ij')
    return torch.stack([grids[a] for a in picked], dim=-1)


register('_contrib_index_array', infer=_index_array_rule,
         attrs={'axes': Axis(None)})(_index_array)


def _arange_like_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    if attrs['axis'] is not None:
        axis = attrs['axis']
        if not -len(shape) <= axis < len(shape):
            raise ShapeError("arange_like: axis %d is out of range for shape %s" % (axis, shape))
        shape = (shape[axis],)
    return (shape,), (dtypes[0],)


def _arange_like(data, start=0.0, step=1.0, repeat=1, ctx='', axis=None):
    """``start, start + step, ...`` (each value ``repeat`` times) in the shape of ``data``
    (of its axis ``axis``), in its dtype."""
    (shape,), _ = _arange_like_rule({'axis': axis}, (tuple(data.shape),), (None,))
    n = int(np.prod(shape))
    i = torch.arange(n, dtype=torch.float64, device=data.device)
    values = start + step * torch.floor(i / repeat)
    return values.reshape(shape).to(data.dtype)


register('_contrib_arange_like', infer=_arange_like_rule,
         attrs={'start': Float(0.0), 'step': Float(1.0), 'repeat': Int(1), 'ctx': Str(''),
                'axis': IntOrNone(None)})(_arange_like)


# -- interleaved attention products (transformer self- and encoder-decoder attention) -------

def _heads(t, heads, parts):
    """(seq, batch, heads * parts * d) -> ``parts`` tensors (batch * heads, seq, d)."""
    seq, batch, width = t.shape
    if width % (heads * parts):
        raise ShapeError("interleaved_matmul: last axis %d is not heads (%d) x %d x head_dim"
                         % (width, heads, parts))
    t = t.reshape(seq, batch, heads, parts, -1)
    return [t[:, :, :, p, :].permute(1, 2, 0, 3).reshape(batch * heads, seq, -1)
            for p in range(parts)]


def _merge_heads(t, heads):
    """(batch * heads, seq, d) -> (seq, batch, heads * d)."""
    bh, seq, d = t.shape
    return t.reshape(bh // heads, heads, seq, d).permute(2, 0, 1, 3).reshape(seq, bh // heads,
                                                                             heads * d)


def _selfatt_qk(queries_keys_values, heads):
    q, k, _ = _heads(queries_keys_values, heads, 3)
    return torch.bmm(q / math.sqrt(q.shape[-1]), k.transpose(1, 2))


def _selfatt_valatt(queries_keys_values, attention, heads):
    v = _heads(queries_keys_values, heads, 3)[2]
    return _merge_heads(torch.bmm(attention, v), heads)


def _encdec_qk(queries, keys_values, heads):
    (q,) = _heads(queries, heads, 1)
    k, _ = _heads(keys_values, heads, 2)
    return torch.bmm(q / math.sqrt(q.shape[-1]), k.transpose(1, 2))


def _encdec_valatt(keys_values, attention, heads):
    v = _heads(keys_values, heads, 2)[1]
    return _merge_heads(torch.bmm(attention, v), heads)


_HEADS = {'heads': Int()}
register('_contrib_interleaved_matmul_selfatt_qk', inputs=('queries_keys_values',),
         attrs=_HEADS, heavy=True)(_selfatt_qk)
register('_contrib_interleaved_matmul_selfatt_valatt',
         inputs=('queries_keys_values', 'attention'), attrs=_HEADS, heavy=True)(_selfatt_valatt)
register('_contrib_interleaved_matmul_encdec_qk', inputs=('queries', 'keys_values'),
         attrs=_HEADS, heavy=True)(_encdec_qk)
register('_contrib_interleaved_matmul_encdec_valatt', inputs=('keys_values', 'attention'),
         attrs=_HEADS, heavy=True)(_encdec_valatt)


# -- resizing (segmentation models) -----------------------------------------------------------

def _adaptive_size(output_size, shape):
    size = tuple(output_size)
    if not size:
        return (1, 1)
    if len(size) == 1:
        return (size[0], size[0])
    if len(size) != 2:
        raise ShapeError("AdaptiveAvgPooling2D: output_size %s must have 1 or 2 values"
                         % (size,))
    return size


def _adaptive_avg_pool_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    if len(shape) != 4:
        raise ShapeError("AdaptiveAvgPooling2D: data must be NCHW, got shape %s" % (shape,))
    return (shape[:2] + _adaptive_size(attrs['output_size'], shape),), (dtypes[0],)


def _adaptive_avg_pool(data, output_size=()):
    """Average pooling to a fixed output size: output cell (i, j) averages the input rows
    floor(i*H/h) .. ceil((i+1)*H/h) and the same columns."""
    return F.adaptive_avg_pool2d(dense(data), _adaptive_size(output_size, tuple(data.shape)))


register('_contrib_AdaptiveAvgPooling2D', infer=_adaptive_avg_pool_rule,
         attrs={'output_size': Shape(())})(_adaptive_avg_pool)


def _scaled(size, scale):
    # MXNet multiplies in single precision: 10 * 0.7 is 7 there, 6.999... in double
    return int(np.float32(size) * np.float32(scale))


def _resize_size(attrs, shape, like):
    h, w = shape[2], shape[3]
    mode = attrs['mode']
    sh, sw = attrs['scale_height'], attrs['scale_width']
    if mode == 'like':
        if like is None:
            raise ShapeError("BilinearResize2D: mode='like' needs the like input")
        return tuple(like[2:4])
    if mode == 'size':
        return (_scaled(h, sh) if sh is not None else attrs['height'],
                _scaled(w, sw) if sw is not None else attrs['width'])
    if mode == 'odd_scale':
        if sh is None or sw is None:
            raise ShapeError("BilinearResize2D: mode='odd_scale' needs scale_height and "
                             "scale_width")
        odd = lambda n, s: _scaled(n, s) if n % 2 == 0 else _scaled(n - 1, s) + 1  # noqa: E731
        return odd(h, sh), odd(w, sw)
    step = {'to_even_down': (0, -1), 'to_even_up': (0, 1), 'to_odd_down': (1, -1),
            'to_odd_up': (1, 1)}[mode]
    fix = lambda n: n if n % 2 == step[0] else n + step[1]  # noqa: E731
    return fix(h), fix(w)


def _bilinear_resize_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    if len(shape) != 4:
        raise ShapeError("BilinearResize2D: data must be NCHW, got shape %s" % (shape,))
    like = shapes[1] if len(shapes) > 1 else None
    return (shape[:2] + _resize_size(attrs, shape, like),), (dtypes[0],)


def _bilinear_resize(data, like=None, height=1, width=1, scale_height=None, scale_width=None,
                     mode='size', align_corners=True):
    """Bilinear resizing of NCHW ``data`` to a size given by ``height``/``width``, by scales,
    by ``like``'s size, or to the nearest even or odd size (``mode``)."""
    attrs = {'height': height, 'width': width, 'scale_height': scale_height,
             'scale_width': scale_width, 'mode': mode}
    size = _resize_size(attrs, tuple(data.shape), None if like is None else tuple(like.shape))
    out = F.interpolate(dense(data), size=size, mode='bilinear', align_corners=align_corners)
    if like is not None and like.requires_grad:
        out = out + 0 * like.sum()      # like's gradient: zeros
    return out


register('_contrib_BilinearResize2D', inputs=('data', 'like'), infer=_bilinear_resize_rule,
         drop_inputs=lambda attrs: () if attrs['mode'] == 'like' else ('like',),
         attrs={'height': Int(1), 'width': Int(1), 'scale_height': FloatOrNone(None),
                'scale_width': FloatOrNone(None),
                'mode': Enum('size', 'odd_scale', 'like', 'to_even_down', 'to_even_up',
                             'to_odd_down', 'to_odd_up', default='size'),
                'align_corners': Bool(True)})(_bilinear_resize)
