"""MXNet's INT8 operators, with the semantics of MXNet 1.9's CPU (MKL-DNN) build: what the
graphs of ``mx.contrib.quantization`` (GluonCV's ``*_int8`` models among them) run.

A quantized array is three arrays: int8 or uint8 values and the float32 range ``(min, max)``
they stand for, each of shape (1,). MXNet maps the range's largest magnitude ``r =
max(|min|, |max|)`` to 127.5 (int8) or 255.5 (uint8), so a value ``q`` stands for ``q * r /
127.5`` (``r / 255.5``); quantizing rounds to the nearest integer and saturates. Fused
convolutions accumulate in int32 and requantize to the calibrated output range.

>>> import neomx as mx
>>> q, lo, hi = mx.nd.contrib.quantize_v2(mx.nd.array([-1.0, 0.25, 2.0]), out_type='int8')
>>> q.asnumpy().tolist(), lo.asnumpy().tolist(), hi.asnumpy().tolist()
([-64, 16, 127], [-2.0], [2.0])
"""
import math

import torch

from ..base import MXNetError
from .nn import _conv_fill, _conv_infer, _convolution, _pool_infer, _pooling
from .registry import (Any, Bool, Enum, FloatOrNone, Op, ShapeError, add, get, register)
from .shape import rows

__all__ = []

# The quantized ranges of MXNet's quantization_utils.h: what the largest magnitude maps to.
RANGE = {torch.int8: 127.5, torch.uint8: 255.5}
_LIMITS = {torch.int8: (-128, 127), torch.uint8: (0, 255), torch.int32: (-2 ** 31, 2 ** 31 - 1)}
_INT32_RANGE = 2147483647.0
_NAMES = {'int8': torch.int8, 'uint8': torch.uint8, 'int32': torch.int32}


def _max_abs(lo, hi):
    return torch.maximum(lo.abs(), hi.abs())


def _range_of(t, what):
    """A float32 scalar tensor from a (1,)-shaped range input."""
    if t.numel() != 1:
        raise ShapeError("%s must hold one value, got shape %s" % (what, tuple(t.shape)))
    return t.reshape(()).float()


def _saturate(values, dtype):
    """``values`` (float) rounded to the nearest integer (ties to even, as MKL-DNN's
    conversions) and clipped to ``dtype``'s range."""
    lo, hi = _LIMITS[dtype]
    return torch.round(values).clamp_(lo, hi).to(dtype)


def _quantize(x, real, dtype):
    """``x`` (float32) scaled so that ``real`` maps to ``RANGE[dtype]``, rounded, saturated."""
    scale = torch.where(real > 0, _over(RANGE[dtype], real), torch.zeros_like(real))
    return _saturate(x.float() * scale, dtype)


def _over(number, t):
    """``number / t`` divided in float32 as MXNet does (torch's ``number / t`` multiplies by a
    reciprocal, which can differ in the last bit and move a rounded result)."""
    return torch.full_like(t, number) / t


def _scalar(v, like):
    return torch.full((1,), float(v), dtype=torch.float32, device=like.device)


def _ranges_infer(dtype):
    def infer(attrs, shapes, dtypes):
        return (shapes[0], (1,), (1,)), (dtype(attrs, dtypes), 'float32', 'float32')
    return infer


# -- quantize, dequantize, requantize --------------------------------------------------------

def _quantize_v2_dtype(attrs, dtypes=None):
    """MXNet's rule: 'auto' is uint8 when the calibrated range is non-negative, else int8
    (int8 also when there is no calibrated range)."""
    t = attrs['out_type']
    if t == 'auto':
        lo = attrs['min_calib_range']
        return 'uint8' if lo is not None and attrs['max_calib_range'] is not None \
            and lo >= 0 else 'int8'
    return t


def _quantize_v2(data, out_type='int8', min_calib_range=None, max_calib_range=None):
    """``data`` (float) in int8 or uint8, with its range: the calibrated one when given, else
    the data's own minimum and maximum. int8's range is symmetric, ``(-r, r)``; uint8 keeps
    the range's ends (negative values saturate to 0)."""
    dtype = _NAMES[_quantize_v2_dtype({'out_type': out_type, 'min_calib_range': min_calib_range,
                                       'max_calib_range': max_calib_range})]
    if data.dtype in (torch.int8, torch.uint8):
        raise MXNetError("_contrib_quantize_v2: data is already quantized (%s); it takes "
                         "float data" % str(data.dtype).replace('torch.', ''))
    x = data.float()
    if min_calib_range is not None and max_calib_range is not None:
        lo, hi = _scalar(min_calib_range, x)[0], _scalar(max_calib_range, x)[0]
    elif x.numel():
        lo, hi = x.min(), x.max()
    else:
        lo = hi = torch.zeros((), device=x.device)
    real = _max_abs(lo, hi)
    q = _quantize(x, real, dtype)
    if dtype == torch.int8:
        return q, (-real).reshape(1), real.reshape(1)
    return q, lo.reshape(1), hi.reshape(1)


register('_contrib_quantize_v2', num_outputs=3,
         output_names=('output', 'min_output', 'max_output'),
         infer=_ranges_infer(lambda a, d: _quantize_v2_dtype(a)),
         attrs={'out_type': Enum('auto', 'int8', 'uint8', default='int8'),
                'min_calib_range': FloatOrNone(None),
                'max_calib_range': FloatOrNone(None)})(_quantize_v2)


def _quantize_v1(data, min_range, max_range, out_type='uint8'):
    """``_contrib_quantize``: ``data`` in ``out_type`` for the range given as arrays. Unlike
    quantize_v2, MXNet scales by 127 (255), not 127.5: int8 is ``rint(x * 127 / r)`` within
    [-128, 127] (range output (-r, r)), uint8 ``rint(x * 255 / r)`` within [0, 255] (range
    output (min, max))."""
    dtype = _NAMES[out_type]
    lo = _range_of(min_range, '_contrib_quantize: min_range')
    hi = _range_of(max_range, '_contrib_quantize: max_range')
    real = _max_abs(lo, hi)
    q = _saturate(data.float() * _over(RANGE[dtype] - 0.5, real), dtype)
    if dtype == torch.int8:
        return q, (-real).reshape(1), real.reshape(1)
    return q, lo.reshape(1), hi.reshape(1)


register('_contrib_quantize', inputs=('data', 'min_range', 'max_range'), num_outputs=3,
         output_names=('output', 'min_output', 'max_output'),
         infer=_ranges_infer(lambda a, d: a['out_type']),
         attrs={'out_type': Enum('int8', 'uint8', default='uint8')})(_quantize_v1)


def _dequantize(data, min_range, max_range, out_type='float32'):
    """int8/uint8 ``data`` back to float32: ``q * max(|min|, |max|) / range``."""
    if data.dtype not in RANGE:
        raise MXNetError("_contrib_dequantize: data must be int8 or uint8, got %s"
                         % str(data.dtype).replace('torch.', ''))
    real = _max_abs(_range_of(min_range, '_contrib_dequantize: min_range'),
                    _range_of(max_range, '_contrib_dequantize: max_range'))
    return data.float() * (real / RANGE[data.dtype])


register('_contrib_dequantize', inputs=('data', 'min_range', 'max_range'),
         infer=lambda attrs, shapes, dtypes: ((shapes[0],), ('float32',)), infer_attrs=(),
         attrs={'out_type': Enum('float32', default='float32')})(_dequantize)


def _requantize(data, min_range, max_range, out_type='int8', min_calib_range=None,
                max_calib_range=None):
    """int32 ``data`` (range ``(min, max)`` for ±2^31-1) to int8: into the calibrated range
    when given, else into the range its values reach."""
    if data.dtype != torch.int32:
        raise MXNetError("_contrib_requantize: data must be int32, got %s"
                         % str(data.dtype).replace('torch.', ''))
    real_in = _max_abs(_range_of(min_range, '_contrib_requantize: min_range'),
                       _range_of(max_range, '_contrib_requantize: max_range'))
    values = data.double() * (real_in.double() / _INT32_RANGE)
    if min_calib_range is not None and max_calib_range is not None:
        real = torch.tensor(max(abs(min_calib_range), abs(max_calib_range)),
                            dtype=torch.float64, device=data.device)
    elif data.numel():
        real = _max_abs(values.min(), values.max())
    else:
        real = torch.zeros((), dtype=torch.float64, device=data.device)
    dtype = torch.int8 if out_type in ('int8', 'auto') else torch.uint8
    q = _quantize(values, real.float(), dtype)
    r = real.float().reshape(1)
    return q, -r, r


register('_contrib_requantize', inputs=('data', 'min_range', 'max_range'), num_outputs=3,
         output_names=('output', 'min_output', 'max_output'),
         infer=_ranges_infer(lambda a, d: 'uint8' if a['out_type'] == 'uint8' else 'int8'),
         attrs={'out_type': Enum('auto', 'int8', 'uint8', default='int8'),
                'min_calib_range': FloatOrNone(None),
                'max_calib_range': FloatOrNone(None)})(_requantize)


# -- quantized pooling, flatten ---------------------------------------------------------------

def _quantized_pooling(data, min_data, max_data, **attrs):
    """Pooling of int8/uint8 ``data``: max pooling picks values, average pooling rounds its
    means to the nearest integer; the range passes through."""
    if data.dtype not in RANGE:
        raise MXNetError("_contrib_quantized_pooling: data must be int8 or uint8, got %s"
                         % str(data.dtype).replace('torch.', ''))
    if attrs['pool_type'] not in ('max', 'avg'):
        raise MXNetError("_contrib_quantized_pooling: pool_type %r; MXNet quantizes max and "
                         "avg pooling only" % attrs['pool_type'])
    out = _pooling(data.float(), **attrs)
    return _saturate(out, data.dtype), min_data.float(), max_data.float()


def _quantized_pooling_infer(attrs, shapes, dtypes):
    out, _ = _pool_infer(attrs, shapes[:1], dtypes[:1])
    return (out[0], (1,), (1,)), (dtypes[0], 'float32', 'float32')


def _register_quantized_pooling():
    pooling = get('Pooling')
    register('_contrib_quantized_pooling', inputs=('data', 'min_data', 'max_data'),
             num_outputs=3, output_names=('output', 'min_output', 'max_output'), heavy=True,
             cost=pooling.cost, infer=_quantized_pooling_infer,
             attrs=dict(pooling.attrs))(_quantized_pooling)


_register_quantized_pooling()


def _quantized_flatten(data, min_data, max_data):
    return rows(data), min_data.float(), max_data.float()


register('_contrib_quantized_flatten', inputs=('data', 'min_data', 'max_data'), num_outputs=3,
         output_names=('output', 'min_output', 'max_output'),
         infer=lambda attrs, shapes, dtypes: (
             ((shapes[0][0], math.prod(shapes[0][1:])), (1,), (1,)),
             (dtypes[0], 'float32', 'float32')), infer_attrs=())(_quantized_flatten)


# -- the fused convolution of MXNet's MKL-DNN subgraph backend --------------------------------

# Activations that make a quantized output uint8 (MXNet's IsOutputUInt8): non-negative.
_NON_NEGATIVE = {'relu', 'sigmoid', 'softrelu'}
_SUM_OPS = {'elemwise_add', '_plus', '_Plus', 'broadcast_add', 'add_n', 'ElementWiseSum',
            '_add'}


class Fused:
    """What a fused node's subgraph says (MXNet's parser reads the same from it): the
    Convolution's or FullyConnected's attributes, the BatchNorm's, and the activations before
    and after the sum (``(op name, attrs)``, None when absent)."""
    __slots__ = ('main', 'bn', 'act', 'postsum_act', 'has_sum')

    def __init__(self, graph, kind):
        self.main = self.bn = self.act = self.postsum_act = None
        self.has_sum = False
        for node in graph.nodes:
            op = node.op
            if op is None:
                continue
            name = op.name
            if name == kind:
                self.main = dict(node.attrs)
            elif name == 'BatchNorm':
                self.bn = dict(node.attrs)
            elif name in _SUM_OPS:
                self.has_sum = True
            elif name in ('Activation', 'LeakyReLU', 'clip', 'relu', 'sigmoid'):
                act = (name, dict(node.attrs))
                if self.has_sum:
                    self.postsum_act = act
                else:
                    self.act = act
        if self.main is None:
            raise MXNetError("the subgraph of a fused %s node holds no %s" % (kind, kind))


def _fused(subgraph, kind):
    """The ``Fused`` description of ``subgraph`` (cached on the graph object)."""
    if subgraph is None:
        raise MXNetError("_sg_mkldnn_conv: the node holds no subgraph (MXNet's JSON gives it "
                         "as the node's \"subgraphs\")")
    got = getattr(subgraph, '_fused', None)
    if got is None:
        got = Fused(subgraph, kind)
        try:
            subgraph._fused = got
        except AttributeError:
            pass
    return got


def _act_kind(act):
    """The activation's type name: relu, sigmoid, ... (LeakyReLU's act_type, 'clip')."""
    if act is None:
        return None
    name, attrs = act
    if name == 'Activation':
        return attrs['act_type']
    if name == 'LeakyReLU':
        return attrs.get('act_type', 'leaky')
    return name


def _apply_act(x, act):
    if act is None:
        return x
    name, attrs = act
    op = get(name)
    return op.kernel(x, **attrs, **op.kernel_kwargs(x.device, False, None)) \
        if name != 'LeakyReLU' else op.kernel(x, None, **attrs, is_train=False, generator=None)


class FusedOp(Op):
    """``_sg_mkldnn_conv``: a node of MXNet's MKL-DNN subgraph backend standing for a
    Convolution, optionally a BatchNorm, an activation, an elementwise sum with another array
    and an activation after it, whose settings its subgraph holds (the ``subgraph``
    attribute, which symbol JSON reads from and writes back as the node's "subgraphs").
    Quantized (``quantized=True``), the data comes in int8/uint8 with its range and the node
    adds the ranges of the data and of the sum to its inputs. (MXNet's
    ``_sg_mkldnn_fully_connected`` quantizes by rules of its own, not checked here: it is
    not registered.)"""

    def __init__(self, name, kernel, kind, attrs):
        self.kind = kind
        super().__init__(name, kernel, inputs=('*data',), attrs=attrs, heavy=True,
                         num_outputs=self._count, infer=self._infer_fused,
                         fill=self._fill_fused)
        self.mutate = self._mutated             # the written inputs depend on the subgraph

    def _count(self, attrs):
        return 3 if attrs['quantized'] else 1

    def output_names(self, attrs):
        return ('output', 'output_min', 'output_max') if attrs['quantized'] else ('output',)

    def format_attrs(self, attrs):
        out = super().format_attrs(attrs)
        out.pop('subgraph', None)
        return out

    def _fused_of(self, attrs):
        return _fused(attrs['subgraph'], self.kind)

    def input_names(self, attrs, num_inputs=None, present_only=True):
        f = self._fused_of(attrs)
        names = ['data', 'weight']
        if not f.main.get('no_bias', False):
            names.append('bias')
        if f.bn is not None:
            names += ['gamma', 'beta', 'moving_mean', 'moving_var']
        if f.has_sum:
            names.append('sum')
        if attrs['quantized']:
            names += ['min_data', 'max_data']
            if f.has_sum:
                names += ['min_sum', 'max_sum']
        return tuple(names)

    def _mutated(self, attrs):
        # MXNet lists the BatchNorm's moving statistics as the node's auxiliary states
        return ('moving_mean', 'moving_var') if self._fused_of(attrs).bn is not None else ()

    def _fill_fused(self, attrs, shapes):
        f = self._fused_of(attrs)
        names = self.input_names(attrs)
        out = list(shapes) + [None] * (len(names) - len(shapes))
        out[1] = _conv_fill(f.main, [out[0], out[1], None])[1]
        n = f.main['num_filter']
        for i, name in enumerate(names):
            if name in ('bias', 'gamma', 'beta', 'moving_mean', 'moving_var'):
                out[i] = (n,)
            elif name.startswith(('min_', 'max_')):
                out[i] = (1,)
        return out

    def _infer_fused(self, attrs, shapes, dtypes):
        f = self._fused_of(attrs)
        names = self.input_names(attrs)
        conv_shapes = [shapes[0], shapes[1], shapes[2] if 'bias' in names else None]
        (shape,), _ = _conv_infer(f.main, conv_shapes, ('float32',) * 3)
        if not attrs['quantized']:
            return (shape,), (dtypes[0],)
        return (shape, (1,), (1,)), (_fused_out_dtype(attrs, f), 'float32', 'float32')


def _fused_out_dtype(attrs, f):
    """int32 without a calibrated range, float32 when asked for, else uint8 after a
    non-negative activation (the last one applied) and int8 otherwise."""
    if attrs['min_calib_range'] is None or attrs['max_calib_range'] is None:
        return 'int32'
    if attrs['enable_float_output']:
        return 'float32'
    last = f.postsum_act if f.has_sum else f.act
    return 'uint8' if _act_kind(last) in _NON_NEGATIVE else 'int8'


def _folded(w, b, bn, g):
    """Weight and bias with the BatchNorm folded in as MXNet folds them: ``alpha = gamma /
    sqrt(var + eps)`` (in double), then in float32 ``w * alpha``, ``beta + alpha * (b -
    mean)``."""
    w = w.float()
    n = w.shape[0]
    b = torch.zeros(n, dtype=torch.float32, device=w.device) if b is None else b.float()
    if bn is None:
        return w, b
    gamma = torch.ones_like(b) if bn['fix_gamma'] else g['gamma'].float()
    # MXNet adds its double eps to the float variance and divides in double
    alpha = (gamma.double() / torch.sqrt(g['moving_var'].double() + bn['eps'])).float()
    w = w * alpha.reshape((n,) + (1,) * (w.dim() - 1))
    return w, g['beta'].float() + alpha * (b - g['moving_mean'].float())


def _main(kind, f, data, w, b):
    attrs = dict(f.main)
    attrs['no_bias'] = b is None
    return _convolution(data, w, b, **attrs)


def _fused_kernel(kind):
    def kernel(*inputs, subgraph=None, quantized=False, min_calib_range=None,
               max_calib_range=None, enable_float_output=False, **flags):
        f = _fused(subgraph, kind)
        op_name = '_sg_mkldnn_conv'
        names = FUSED[op_name].input_names({'subgraph': subgraph, 'quantized': quantized})
        if len(inputs) != len(names):
            raise MXNetError("%s: expected %d inputs (%s), got %d"
                             % (op_name, len(names), ', '.join(names), len(inputs)))
        g = dict(zip(names, inputs))
        w, b = _folded(g['weight'], g.get('bias'), f.bn, g)
        if not quantized:
            out = _apply_act(_main(kind, f, g['data'], w, b), f.act)
            if f.has_sum:
                out = _apply_act(out + g['sum'], f.postsum_act)
            return out
        return _quantized_fused(kind, f, g, w, b, min_calib_range, max_calib_range,
                                enable_float_output, op_name)
    return kernel


def _quantized_fused(kind, f, g, w, b, min_calib, max_calib, float_output, op_name):
    """The int8 computation MXNet's MKL-DNN build runs: weights quantized per output channel
    (per tensor without a calibrated output range) to int8, the bias to int32 at the data's
    scale times the weight's, products accumulated in int32 (exactly, in float64 here), then
    requantized to the calibrated output range, the activation, the sum (dequantized at its
    own range) and the activation after it applied on the way."""
    data = g['data']
    if data.dtype not in RANGE:
        raise MXNetError("%s: quantized data must be int8 or uint8, got %s"
                         % (op_name, str(data.dtype).replace('torch.', '')))
    data_min = _range_of(g['min_data'], op_name + ': min_data')
    if data.dtype == torch.uint8 and data_min < 0:
        raise MXNetError("%s: uint8 data stands for a range below 0 (min_data %g); MXNet "
                         "expects int8 data then" % (op_name, float(data_min)))
    data_real = _max_abs(data_min, _range_of(g['max_data'], op_name + ': max_data'))
    data_scale = _over(RANGE[data.dtype], data_real)
    calibrated = min_calib is not None and max_calib is not None
    n = w.shape[0]
    flat = w.reshape(n, -1)
    if calibrated:
        w_real = flat.abs().amax(dim=1)
    else:
        w_real = flat.abs().amax().expand(n)
    w_scale = torch.where(w_real > 0, _over(RANGE[torch.int8], w_real), torch.zeros_like(w_real))
    shape = (n,) + (1,) * (w.dim() - 1)
    qw = _saturate(w * w_scale.reshape(shape), torch.int8)
    acc_scale = data_scale * w_scale             # float32, per output channel
    qb = torch.round(b * acc_scale).double()
    acc = _main(kind, f, data.double(), qw.double(), qb)
    channel = (1, n) + (1,) * (acc.dim() - 2)
    if not calibrated:
        if f.has_sum:
            raise MXNetError("%s: a quantized sum needs a calibrated output range "
                             "(min_calib_range, max_calib_range)" % op_name)
        out = _apply_act(acc, f.act)
        # MXNet states the int32 range by steps of max/127 (max/255 for uint8 data) of the
        # data and max/127 of the weight, not the 127.5 (255.5) the values were scaled by
        steps = {torch.int8: 127.0, torch.uint8: 255.0}[data.dtype]
        real = (data_real / steps) * (w_real[0] / 127.0) * _INT32_RANGE
        return _saturate(out, torch.int32), (-real).reshape(1), real.reshape(1)
    out_real = torch.tensor(max(abs(min_calib), abs(max_calib)), dtype=torch.float32,
                            device=data.device)
    out_dtype = _NAMES.get(_fused_out_dtype({'min_calib_range': min_calib,
                                             'max_calib_range': max_calib,
                                             'enable_float_output': float_output}, f))
    out_scale = _over(RANGE[out_dtype], out_real) if out_dtype is not None else torch.ones(())
    if out_dtype is None:                       # enable_float_output: real values
        scale = _over(1.0, acc_scale)
    else:
        scale = out_scale / data_scale / w_scale
    # MKL-DNN requantizes in float32: the int32 sum converted, times the channel's scale
    out = _apply_act(acc.float() * scale.reshape(channel), f.act)
    if f.has_sum:
        s = g['sum']
        if s.dtype in RANGE:
            sum_real = _max_abs(_range_of(g['min_sum'], op_name + ': min_sum'),
                                _range_of(g['max_sum'], op_name + ': max_sum'))
            sum_scale = out_scale / _over(RANGE[s.dtype], sum_real)
        else:
            sum_scale = out_scale
        # one rounding, as a fused multiply-add
        out = _apply_act((out.double() + s.double() * sum_scale.double()).float(),
                         f.postsum_act)
    if out_dtype is None:
        return out.float(), _scalar(min_calib, out), _scalar(max_calib, out)
    # With a sum, MKL-DNN writes into the sum's array: the result saturates to the sum's type
    # and its bytes become the output's (an int8 sum under a uint8 output stops at 127; a
    # uint8 sum under an int8 output wraps above 127), as MXNet 1.9.1 computes it.
    held = g['sum'].dtype if f.has_sum and g['sum'].dtype in RANGE else out_dtype
    q = _saturate(out, held)
    if held != out_dtype:
        q = q.view(out_dtype)
    return q, _scalar(min_calib, out), _scalar(max_calib, out)


_FUSED_FLAGS = {'quantized': Bool(False), 'enable_float_output': Bool(False),
                'with_bn': Bool(False), 'with_act': Bool(False), 'with_sum': Bool(False),
                'with_postsum_act': Bool(False),
                # MXNet 1.5's names of the activations, in files it wrote (GluonCV's)
                'with_relu': Bool(False), 'with_postsum_relu': Bool(False),
                'min_calib_range': FloatOrNone(None), 'max_calib_range': FloatOrNone(None),
                'subgraph': Any(None)}

FUSED = {'_sg_mkldnn_conv': add(FusedOp('_sg_mkldnn_conv', _fused_kernel('Convolution'),
                                        'Convolution', dict(_FUSED_FLAGS)))}
