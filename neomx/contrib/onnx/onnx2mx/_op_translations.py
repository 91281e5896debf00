"""One converter per ONNX operator: each turns an ONNX node into registry operators of a Symbol.

A converter takes the node (``import_onnx._Node``: attributes, inputs as Symbols with
``n.input(i)`` or as constants with ``n.const(i)``, shapes, dtypes, the opset) and returns the
Symbols of the node's outputs (or numpy arrays for outputs known at import: ``Shape`` of a
static shape). ``n.op(name, ...)`` makes a registry operator named after the node. The
decorator names the ONNX operators a converter handles and the attributes it understands;
any other attribute on a node is an error naming it. Opset differences (an attribute that
became an input) are handled in the converter, from ``n.opset``.

Operators ONNX defines as functions of others (its schemas' function bodies) and that have no
converter here are translated through their bodies (``function_body``).
"""
import functools

import numpy as np

from ....base import MXNetError
from .import_onnx import (ONNXImportError, _np_dtype_name, inline_function, inline_graph,
                          onnx_dtype, outer_names, translate_subgraph)

__all__ = ['converter', 'function_body']

_convert_map = {}


def converter(*op_types, attributes=(), random=False, folds_on=None):
    """Registers a converter for ``op_types``; ``attributes`` are those it understands,
    ``random`` marks operators that draw random numbers (never evaluated at import),
    ``folds_on`` the inputs whose values the result depends on (all by default: a node whose
    inputs are all constant is evaluated at import)."""
    def wrap(fn):
        for t in op_types:
            if t in _convert_map:
                raise ValueError("ONNX operator %s has two converters" % t)
            # one function object per operator: a converter shared by several operators
            # (LSTM, GRU, RNN) has each one's attributes
            entry = functools.wraps(fn)(lambda n, _fn=fn: _fn(n))
            entry.attributes = frozenset(attributes)
            entry.random = random
            entry.folds_on = folds_on
            _convert_map[t] = entry
        return fn
    return wrap


# -- helpers --------------------------------------------------------------------------------

def _norm(axis, rank):
    return axis + rank if axis < 0 else axis


def _ints(value):
    return tuple(int(v) for v in np.asarray(value).reshape(-1))


def _scalar(value):
    v = np.asarray(value).reshape(-1)
    return v[0].item()


def _cast(n, s, dtype):
    return n.op('Cast', s, dtype=dtype)


def _is_float(dtype):
    return dtype in ('float16', 'float32', 'float64', 'bfloat16')


def _reshape(n, s, shape):
    """A reshape to an exact shape (no special values: 0 is a size)."""
    return n.op('_np_reshape', s, newshape=tuple(int(d) for d in shape))


def _static(shape):
    return shape is not None and all(d is not None for d in shape)


def _filled(n, shape, value, dtype):
    """A constant array (an empty result, which MXNet's slicing operators refuse)."""
    return n.op('_npi_full', shape=tuple(int(d) for d in shape), value=value, dtype=dtype)


def _full_like(n, ref, value, dtype):
    """An array shaped like Symbol ``ref`` filled with ``value``."""
    return n.op('_npi_full_like', ref, fill_value=value, dtype=dtype)


# -- element-wise --------------------------------------------------------------------------

_UNARY = {'Abs': 'abs', 'Neg': 'negative', 'Exp': 'exp', 'Log': 'log', 'Sqrt': 'sqrt',
          'Reciprocal': 'reciprocal', 'Floor': 'floor', 'Ceil': 'ceil', 'Sign': 'sign',
          'Sin': 'sin', 'Cos': 'cos', 'Tan': 'tan', 'Asin': 'arcsin', 'Acos': 'arccos',
          'Atan': 'arctan', 'Sinh': 'sinh', 'Cosh': 'cosh', 'Asinh': 'arcsinh',
          'Acosh': 'arccosh', 'Atanh': 'arctanh', 'Sigmoid': 'sigmoid', 'Tanh': 'tanh',
          'Relu': 'relu', 'Erf': 'erf', 'Softsign': 'softsign', 'Round': '_npi_rint',
          'Not': '_npi_logical_not', 'BitwiseNot': '_npi_bitwise_not', 'IsNaN': '_npi_isnan',
          'Mish': 'mish'}


def _unary(opname):
    def convert(n):
        return n.op(opname, n.input(0))
    return convert


for _t, _o in _UNARY.items():
    converter(_t, attributes=('consumed_inputs',))(_unary(_o))


@converter('Identity')
def _identity(n):
    return n.op('_copy', n.input(0))


@converter('Softplus')
def _softplus(n):
    return n.op('Activation', n.input(0), act_type='softrelu')


@converter('IsInf', attributes=('detect_negative', 'detect_positive'))
def _isinf(n):
    pos, neg = n.attr('detect_positive', 1), n.attr('detect_negative', 1)
    x = n.input(0)
    if pos and neg:
        return n.op('_npi_isinf', x)
    if pos:
        return n.op('_npi_isposinf', x)
    if neg:
        return n.op('_npi_isneginf', x)
    return n.op('_npi_full_like', x, fill_value=0, dtype='bool')


# Binary operators with NumPy broadcasting; a constant of one element on one side becomes the
# scalar attribute of MXNet's ``*_scalar`` operator (no parameter for it).
_BINARY = {'Add': ('broadcast_add', '_plus_scalar', '_plus_scalar'),
           'Sub': ('broadcast_sub', '_minus_scalar', '_rminus_scalar'),
           'Mul': ('broadcast_mul', '_mul_scalar', '_mul_scalar'),
           'Div': ('broadcast_div', '_div_scalar', '_rdiv_scalar'),
           'Pow': ('broadcast_power', '_power_scalar', '_rpower_scalar'),
           'And': ('_npi_logical_and', None, None), 'Or': ('_npi_logical_or', None, None),
           'Xor': ('_npi_logical_xor', None, None), 'Equal': ('_npi_equal', None, None),
           'Greater': ('_npi_greater', None, None), 'Less': ('_npi_less', None, None),
           'GreaterOrEqual': ('_npi_greater_equal', None, None),
           'LessOrEqual': ('_npi_less_equal', None, None),
           'BitwiseAnd': ('_npi_bitwise_and', None, None),
           'BitwiseOr': ('_npi_bitwise_or', None, None),
           'BitwiseXor': ('_npi_bitwise_xor', None, None)}


def _scalar_side(n):
    """(symbol input, scalar, scalar on the right) when one input is a one-element constant
    that does not change the other's shape, else None."""
    if n.folding is not None:
        return None
    for i, other in ((1, 0), (0, 1)):
        if n.is_const(i) and not n.is_const(other):
            v = n.const(i)
            shape = n.shape(other)
            if v.size == 1 and shape is not None and v.ndim <= len(shape):
                return n.input(other), v.reshape(-1)[0].item(), i == 1
    return None


def _binary(names):
    opname, right, left = names

    def convert(n):
        if n.op_type == 'Pow' and n.dtype(1) != n.dtype(0):
            if n.is_const(1) and n.const(1).size == 1 and n.folding is None:
                return n.op('_power_scalar', n.input(0), scalar=_scalar(n.const(1)))
            return n.op(opname, n.input(0), _cast(n, n.input(1), n.dtype(0)))
        if right is not None and _is_float(n.dtype(0)):
            side = _scalar_side(n)
            if side is not None:
                x, value, on_right = side
                return n.op(right if on_right else left, x, scalar=value)
        return n.op(opname, n.input(0), n.input(1))
    return convert


for _t, _o in _BINARY.items():
    converter(_t, attributes=('axis', 'broadcast', 'consumed_inputs'))(_binary(_o))


@converter('Mod', attributes=('fmod',))
def _mod(n):
    return n.op('_npi_fmod' if n.attr('fmod', 0) else '_npi_mod', n.input(0), n.input(1))


def _variadic(opname, mean=False):
    def convert(n):
        xs = [x for x in n.inputs() if x is not None]
        out = xs[0]
        for x in xs[1:]:
            out = n.op(opname, out, x)
        if len(xs) == 1:
            out = n.op('_copy', out)
        if mean and len(xs) > 1:
            out = n.op('_div_scalar', out, scalar=float(len(xs)))
        return out
    return convert


converter('Sum', attributes=('consumed_inputs',))(_variadic('broadcast_add'))
converter('Mean', attributes=('consumed_inputs',))(_variadic('broadcast_add', mean=True))
converter('Max', attributes=('consumed_inputs',))(_variadic('broadcast_maximum'))
converter('Min', attributes=('consumed_inputs',))(_variadic('broadcast_minimum'))


@converter('Where')
def _where(n):
    return n.op('_npi_where', n.input(0), n.input(1), n.input(2))


@converter('Clip', attributes=('min', 'max', 'consumed_inputs'))
def _clip(n):
    x = n.input(0)
    if n.opset < 11:
        lo, hi = n.attr('min', -np.inf), n.attr('max', np.inf)
    else:
        lo, hi = None, None
        for i in (1, 2):
            if n.has(i) and not n.is_const(i):       # bounds computed at run time
                other = n.input(i)
                x = n.op('broadcast_maximum' if i == 1 else 'broadcast_minimum', x, other)
        lo = _scalar(n.const(1)) if n.is_const(1) else None
        hi = _scalar(n.const(2)) if n.is_const(2) else None
    if lo is None and hi is None:
        return x if x is not n.input(0) else n.op('_copy', x)
    if _is_float(n.dtype(0)):
        return n.op('clip', x, a_min=-np.inf if lo is None else lo,
                    a_max=np.inf if hi is None else hi)
    return n.op('_npi_clip', x, a_min=lo, a_max=hi)


# -- activations ---------------------------------------------------------------------------

@converter('LeakyRelu', attributes=('alpha', 'consumed_inputs'))
def _leaky_relu(n):
    return n.op('LeakyReLU', n.input(0), act_type='leaky', slope=n.attr('alpha', 0.01))


@converter('Elu', attributes=('alpha', 'consumed_inputs'))
def _elu(n):
    return n.op('LeakyReLU', n.input(0), act_type='elu', slope=n.attr('alpha', 1.0))


_SELU = (1.67326319217681884765625, 1.05070102214813232421875)


@converter('Selu', attributes=('alpha', 'gamma', 'consumed_inputs'))
def _selu(n):
    alpha, gamma = n.attr('alpha', _SELU[0]), n.attr('gamma', _SELU[1])
    x = n.input(0)
    if np.float32(alpha) == np.float32(_SELU[0]) and np.float32(gamma) == np.float32(_SELU[1]):
        return n.op('LeakyReLU', x, act_type='selu')
    elu = n.op('LeakyReLU', x, act_type='elu', slope=alpha)
    return n.op('_mul_scalar', elu, scalar=gamma)


@converter('PRelu', attributes=('consumed_inputs',))
def _prelu(n):
    x, slope = n.input(0), n.input(1)
    xs, ss = n.shape(0), n.shape(1)
    # MXNet's PReLU takes one slope per channel (axis 1) or a single one
    if xs is not None and ss is not None and len(xs) >= 2 and xs[1] is not None and (
            tuple(ss) in ((xs[1],), (xs[1],) + (1,) * (len(xs) - 2))) and len(ss) < len(xs):
        if len(ss) > 1:
            slope = _reshape(n, slope, (xs[1],))
        return n.op('LeakyReLU', x, slope, act_type='prelu')
    pos = n.op('relu', x)
    neg = n.op('broadcast_minimum', x, n.op('zeros_like', x))
    return n.op('broadcast_add', pos, n.op('broadcast_mul', neg, slope))


@converter('ThresholdedRelu', attributes=('alpha',))
def _thresholded_relu(n):
    x = n.input(0)
    keep = n.op('_greater_scalar', x, scalar=n.attr('alpha', 1.0))
    return n.op('broadcast_mul', x, keep)


@converter('HardSigmoid', attributes=('alpha', 'beta', 'consumed_inputs'))
def _hard_sigmoid(n):
    return n.op('hard_sigmoid', n.input(0), alpha=n.attr('alpha', 0.2), beta=n.attr('beta', 0.5))


@converter('HardSwish')
def _hard_swish(n):
    x = n.input(0)
    return n.op('broadcast_mul', x, n.op('hard_sigmoid', x, alpha=1.0 / 6, beta=0.5))


@converter('Celu', attributes=('alpha',))
def _celu(n):
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    alpha = n.attr('alpha', 1.0)
    x = n.input(0)
    e = n.op('_mul_scalar', n.op('_minus_scalar', n.op('exp', n.op('_div_scalar', x,
                                                                    scalar=alpha)),
                                  scalar=1.0), scalar=alpha)
    return n.op('broadcast_add', n.op('relu', x), n.op('_minimum_scalar', e, scalar=0.0))


@converter('Gelu', attributes=('approximate',))
def _gelu(n):
    approx = n.attr('approximate', 'none')
    x = n.input(0)
    if approx == 'none':
        return n.op('LeakyReLU', x, act_type='gelu')
    if approx != 'tanh':
        raise n.unsupported('approximate')
    # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    inner = n.op('broadcast_add', x, n.op('_mul_scalar', n.op('_power_scalar', x, scalar=3.0),
                                          scalar=0.044715))
    t = n.op('tanh', n.op('_mul_scalar', inner, scalar=float(np.sqrt(2 / np.pi))))
    return n.op('broadcast_mul', n.op('_mul_scalar', x, scalar=0.5),
                n.op('_plus_scalar', t, scalar=1.0))


@converter('Swish', attributes=('alpha',))
def _swish(n):
    x = n.input(0)
    return n.op('broadcast_mul', x, n.op('sigmoid', n.op('_mul_scalar', x,
                                                          scalar=n.attr('alpha', 1.0))))


@converter('Shrink', attributes=('bias', 'lambd'))
def _shrink(n):
    # x < -lambd: x + bias; x > lambd: x - bias; else 0
    bias, lambd = n.attr('bias', 0.0), n.attr('lambd', 0.5)
    x = n.input(0)
    dt = n.dtype(0)
    lo = n.op('Cast', n.op('_lesser_scalar', x, scalar=-lambd), dtype=dt)
    hi = n.op('Cast', n.op('_greater_scalar', x, scalar=lambd), dtype=dt)
    return n.op('broadcast_add', n.op('broadcast_mul', lo, n.op('_plus_scalar', x, scalar=bias)),
                n.op('broadcast_mul', hi, n.op('_minus_scalar', x, scalar=bias)))


def _softmax_like(opname):
    def convert(n):
        x = n.input(0)
        rank = n.rank(0)
        if n.opset >= 13:
            axis = _norm(n.attr('axis', -1), rank)
            return _softmax_axis(n, opname, x, axis)
        # before opset 13: the input is seen as 2-d, [:axis] by [axis:]
        axis = _norm(n.attr('axis', 1), rank)
        if axis == rank - 1:
            return _softmax_axis(n, opname, x, axis)
        shape = n.static_shape(0, 'for %s over axes %d.. before opset 13' % (n.op_type, axis))
        flat = _reshape(n, x, (int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))))
        return _reshape(n, _softmax_axis(n, opname, flat, 1), shape)
    return convert


def _softmax_axis(n, opname, x, axis):
    if opname == 'hardmax':
        dt = n.dtype(0)
        depth = n.shape(0)[axis]
        if depth is None:
            raise n.error("Hardmax needs the size of axis %d" % axis)
        idx = n.op('argmax', x, axis=axis)
        hot = n.op('one_hot', idx, depth=depth, dtype=dt)
        rank = n.rank(0)
        if axis != rank - 1:
            hot = n.op('_np_moveaxis', hot, source=rank - 1, destination=axis)
        return hot
    return n.op(opname, x, axis=axis)


converter('Softmax', attributes=('axis',))(_softmax_like('softmax'))
converter('LogSoftmax', attributes=('axis',))(_softmax_like('log_softmax'))
converter('Hardmax', attributes=('axis',))(_softmax_like('hardmax'))


# -- neural network ------------------------------------------------------------------------

def _pads(n, spatial, kernel, strides, dilations, in_shape=None, transpose=False,
          out_pad=None):
    """(begin pads, end pads) from ``pads`` or ``auto_pad`` (SAME_* needs the input's static
    spatial shape)."""
    auto = n.attr('auto_pad', 'NOTSET')
    if auto in ('NOTSET', ''):
        pads = n.attr('pads', (0,) * (2 * spatial))
        return tuple(pads[:spatial]), tuple(pads[spatial:])
    if auto == 'VALID':
        return (0,) * spatial, (0,) * spatial
    if auto not in ('SAME_UPPER', 'SAME_LOWER'):
        raise n.unsupported('auto_pad')
    if in_shape is None:
        in_shape = n.static_shape(0, 'for auto_pad=%s' % auto)
    begin, end = [], []
    for d, k, s, dl in zip(in_shape[2:], kernel, strides, dilations):
        if transpose:
            total = max(0, (d - 1) * s + out_pad[len(begin)] + (k - 1) * dl + 1 - d * s)
        else:
            out = -(-d // s)
            total = max(0, (out - 1) * s + (k - 1) * dl + 1 - d)
        small, large = total // 2, total - total // 2
        if auto == 'SAME_UPPER':
            begin.append(small)
            end.append(large)
        else:
            begin.append(large)
            end.append(small)
    return tuple(begin), tuple(end)


def _pad_spatial(n, x, begin, end, value=0.0):
    width = ((0, 0), (0, 0)) + tuple(zip(begin, end))
    return n.op('_npi_pad', x, pad_width=width, mode='constant', constant_values=value)


@converter('Conv', attributes=('auto_pad', 'dilations', 'group', 'kernel_shape', 'pads',
                               'strides'))
def _conv(n):
    return _conv_of(n, n.input(0), n.input(1), n.input(2))


def _conv_of(n, x, weight, bias, weight_index=1):
    """MXNet's Convolution with the node's geometry (the weight's shape from input
    ``weight_index``); asymmetric padding made explicit."""
    w_shape = n.static_shape(weight_index, 'for %s (the weight)' % n.op_type)
    spatial = len(w_shape) - 2
    kernel = tuple(n.attr('kernel_shape', w_shape[2:]))
    strides = tuple(n.attr('strides', (1,) * spatial))
    dilations = tuple(n.attr('dilations', (1,) * spatial))
    begin, end = _pads(n, spatial, kernel, strides, dilations)
    if begin != end:
        x = _pad_spatial(n, x, begin, end)
        begin = (0,) * spatial
    return n.op('Convolution', x, weight, bias, kernel=kernel, stride=strides,
                dilate=dilations, pad=begin, num_filter=w_shape[0],
                num_group=n.attr('group', 1), no_bias=bias is None)


@converter('ConvTranspose', attributes=('auto_pad', 'dilations', 'group', 'kernel_shape',
                                        'output_padding', 'output_shape', 'pads', 'strides'))
def _conv_transpose(n):
    w_shape = n.static_shape(1, 'for ConvTranspose (the weight)')
    spatial = len(w_shape) - 2
    group = n.attr('group', 1)
    kernel = tuple(n.attr('kernel_shape', w_shape[2:]))
    strides = tuple(n.attr('strides', (1,) * spatial))
    dilations = tuple(n.attr('dilations', (1,) * spatial))
    out_pad = tuple(n.attr('output_padding', (0,) * spatial))
    x = n.input(0)
    if n.attr('output_shape') is not None:
        in_shape = n.static_shape(0, 'for ConvTranspose with output_shape')
        target = tuple(n.attr('output_shape'))[-spatial:]
        begin, end = [], []
        for d, k, s, dl, op, t in zip(in_shape[2:], kernel, strides, dilations, out_pad,
                                      target):
            total = s * (d - 1) + op + (k - 1) * dl + 1 - t
            if n.attr('auto_pad', 'NOTSET') == 'SAME_UPPER':
                begin.append(total // 2)
                end.append(total - total // 2)
            else:
                begin.append(total - total // 2)
                end.append(total // 2)
    else:
        begin, end = _pads(n, spatial, kernel, strides, dilations, transpose=True,
                           out_pad=out_pad)
    bias = n.input(2)
    common = dict(kernel=kernel, stride=strides, dilate=dilations,
                  num_filter=w_shape[1] * group, num_group=group, no_bias=bias is None)
    if tuple(begin) == tuple(end) and all(b >= 0 for b in begin) and \
            all(p < s for p, s in zip(out_pad, strides)):
        return n.op('Deconvolution', x, n.input(1), bias, pad=tuple(begin), adj=out_pad,
                    **common)
    # asymmetric padding: the full output, then cropped
    full = n.op('Deconvolution', x, n.input(1), bias, pad=(0,) * spatial, **common)
    in_shape = n.static_shape(0, 'for ConvTranspose with asymmetric pads')
    size = [(d - 1) * s + (k - 1) * dl + 1 for d, k, s, dl in
            zip(in_shape[2:], kernel, strides, dilations)]
    stop = [sz - e + op for sz, e, op in zip(size, end, out_pad)]
    if any(st > sz for st, sz in zip(stop, size)):
        extra = [max(0, st - sz) for st, sz in zip(stop, size)]
        full = _pad_spatial(n, full, (0,) * spatial, extra)
    return n.op('slice', full, begin=(None, None) + tuple(begin),
                end=(None, None) + tuple(stop))


def _pool_out_sizes(in_sizes, kernel, strides, dilations, begin, end, ceil):
    out = []
    for d, k, s, dl, b, e in zip(in_sizes, kernel, strides, dilations, begin, end):
        span = d + b + e - ((k - 1) * dl + 1)
        o = (-(-span // s) if ceil else span // s) + 1
        if ceil and (o - 1) * s >= d + b:     # the last window starts in the end padding
            o -= 1
        out.append(o)
    return out


def _pool(pool_type):
    def convert(n):
        x = n.input(0)
        kernel = tuple(n.attr('kernel_shape'))
        spatial = len(kernel)
        strides = tuple(n.attr('strides', (1,) * spatial))
        dilations = tuple(n.attr('dilations', (1,) * spatial))
        if n.attr('storage_order', 0):
            raise n.unsupported('storage_order')
        if len(n.output_names) > 1 and n.output_names[1]:
            raise n.error("output 1 (the indices of the maxima) is not supported")
        begin, end = _pads(n, spatial, kernel, strides, dilations)
        ceil = bool(n.attr('ceil_mode', 0))
        include = bool(n.attr('count_include_pad', 0))
        if pool_type == 'lp':       # the p-th root of the sum of |x|^p over each window
            p = float(n.attr('p', 2))
            x = n.op('_power_scalar', n.op('abs', x), scalar=p)
            out = _window_reduce(n, x, 'sum', kernel, strides, dilations, begin, end, ceil,
                                 True)
            return n.op('_power_scalar', out, scalar=1.0 / p)
        return _window_reduce(n, x, pool_type, kernel, strides, dilations, begin, end, ceil,
                              include)
    return convert


def _window_reduce(n, x, kind, kernel, strides, dilations, begin, end, ceil, include):
    """Max, average or sum over ONNX's pooling windows. MXNet's Pooling where its windows are
    ONNX's (symmetric padding up to half the kernel, no dilation, floor); otherwise the
    padding made explicit (ceil_mode's windows never start in the end padding), dilated
    windows as strided slices, and averages divided by the count of what each window covers
    (the padding too with count_include_pad)."""
    spatial = len(kernel)
    regular = (begin == end and not ceil and all(d == 1 for d in dilations)
               and all(2 * b <= k for b, k in zip(begin, kernel)))
    if regular:
        if kind == 'max':
            return n.op('Pooling', x, kernel=kernel, stride=strides, pad=begin, pool_type='max')
        mean = n.op('Pooling', x, kernel=kernel, stride=strides, pad=begin, pool_type='avg',
                    count_include_pad=include or kind == 'sum')
        return mean if kind == 'avg' else n.op('_mul_scalar', mean,
                                               scalar=float(np.prod(kernel)))
    shape = n.static_shape(0, 'for pooling with asymmetric pads, ceil_mode or dilations')
    outs = _pool_out_sizes(shape[2:], kernel, strides, dilations, begin, end, ceil)
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    extra = [max(0, (o - 1) * s + k - (size + b + e))
             for o, s, k, size, b, e in zip(outs, strides, span, shape[2:], begin, end)]
    right = tuple(e + x_ for e, x_ in zip(end, extra))

    def means(t):
        """The mean (max) over each window of the padded ``t``, cropped to ONNX's output."""
        if all(d == 1 for d in dilations):
            r = n.op('Pooling', t, kernel=kernel, stride=strides, pool_type=op)
            return n.op('slice', r, begin=(None, None) + (0,) * spatial,
                        end=(None, None) + tuple(outs))
        acc = None
        for offset in np.ndindex(*kernel):
            lo = tuple(int(o * d) for o, d in zip(offset, dilations))
            part = n.op('slice', t, begin=(None, None) + lo,
                        end=(None, None) + tuple(lo_ + (o - 1) * s + 1 for lo_, o, s in
                                                 zip(lo, outs, strides)),
                        step=(1, 1) + strides)
            acc = part if acc is None else n.op('broadcast_maximum' if op == 'max' else
                                                'broadcast_add', acc, part)
        return acc if op == 'max' else n.op('_div_scalar', acc, scalar=float(np.prod(kernel)))

    op = 'max' if kind == 'max' else 'avg'
    r = means(_pad_spatial(n, x, begin, right, -np.inf if kind == 'max' else 0.0))
    if kind == 'sum':
        return n.op('_mul_scalar', r, scalar=float(np.prod(kernel)))
    if kind == 'avg':
        mask = _pad_spatial(n, n.op('ones_like', x), begin, end, 1.0 if include else 0.0)
        mask = _pad_spatial(n, mask, (0,) * spatial, extra, 0.0)
        r = n.op('broadcast_div', r, means(mask))
    return r


converter('MaxPool', attributes=('auto_pad', 'ceil_mode', 'dilations', 'kernel_shape', 'pads',
                                 'storage_order', 'strides'))(_pool('max'))
converter('AveragePool', attributes=('auto_pad', 'ceil_mode', 'count_include_pad', 'dilations',
                                     'kernel_shape', 'pads', 'strides'))(_pool('avg'))
converter('LpPool', attributes=('auto_pad', 'ceil_mode', 'dilations', 'kernel_shape', 'p',
                                'pads', 'strides'))(_pool('lp'))


def _global_pool(pool_type):
    def convert(n):
        rank = n.rank(0)
        x = n.input(0)
        if pool_type == 'lp':
            p = float(n.attr('p', 2))
            x = n.op('_power_scalar', n.op('abs', x), scalar=p)
            out = n.op('_np_sum', x, axis=tuple(range(2, rank)), keepdims=True)
            return n.op('_power_scalar', out, scalar=1.0 / p)
        return n.op('Pooling', x, kernel=(1,) * (rank - 2), global_pool=True,
                    pool_type=pool_type)
    return convert


converter('GlobalAveragePool')(_global_pool('avg'))
converter('GlobalMaxPool')(_global_pool('max'))
converter('GlobalLpPool', attributes=('p',))(_global_pool('lp'))


@converter('BatchNormalization', attributes=('epsilon', 'momentum', 'spatial', 'is_test',
                                             'consumed_inputs', 'training_mode'))
def _batch_norm(n):
    if n.opset < 9 and not n.attr('spatial', 1):
        raise n.unsupported('spatial', why="MXNet's BatchNorm normalizes per channel")
    eps = n.attr('epsilon', 1e-5)
    momentum = n.attr('momentum', 0.9)
    x, scale, bias, mean, var = n.inputs()[:5]
    training = n.attr('training_mode', 0) or (n.opset < 7 and not n.attr('is_test', 0) and
                                              len([o for o in n.output_names if o]) > 1)
    if not training:
        if len([o for o in n.output_names if o]) > 1:
            raise n.error("outputs beyond Y are defined only in training mode")
        return n.op('BatchNorm', x, scale, bias, mean, var, eps=eps, momentum=momentum,
                    fix_gamma=False, use_global_stats=True)
    # training mode: normalized by the batch's statistics, and the updated running ones
    rank = n.rank(0)
    axes = (0,) + tuple(range(2, rank))
    bshape = (1, -2) + (1,) * (rank - 2)
    bm = n.op('_npi_mean', x, axis=axes)
    bv = n.op('_npi_var', x, axis=axes)
    centred = n.op('broadcast_sub', x, n.op('Reshape', bm, shape=(-1,) + (1,) * (rank - 2)))
    inv = n.op('rsqrt', n.op('_plus_scalar', bv, scalar=eps))
    del bshape
    y = n.op('broadcast_mul', centred, n.op('Reshape', n.op('broadcast_mul', inv, scale),
                                            shape=(-1,) + (1,) * (rank - 2)))
    y = n.op('broadcast_add', y, n.op('Reshape', bias, shape=(-1,) + (1,) * (rank - 2)))
    run_mean = n.op('broadcast_add', n.op('_mul_scalar', mean, scalar=momentum),
                    n.op('_mul_scalar', bm, scalar=1 - momentum))
    run_var = n.op('broadcast_add', n.op('_mul_scalar', var, scalar=momentum),
                   n.op('_mul_scalar', bv, scalar=1 - momentum))
    return [y, run_mean, run_var]


@converter('InstanceNormalization', attributes=('epsilon',))
def _instance_norm(n):
    return n.op('InstanceNorm', n.input(0), n.input(1), n.input(2), eps=n.attr('epsilon', 1e-5))


@converter('LRN', attributes=('alpha', 'beta', 'bias', 'size'))
def _lrn(n):
    return n.op('LRN', n.input(0), alpha=n.attr('alpha', 1e-4), beta=n.attr('beta', 0.75),
                knorm=n.attr('bias', 1.0), nsize=n.attr('size'))


@converter('LayerNormalization', attributes=('axis', 'epsilon', 'stash_type'))
def _layer_norm(n):
    x, scale, bias = n.input(0), n.input(1), n.input(2)
    rank = n.rank(0)
    axis = _norm(n.attr('axis', -1), rank)
    eps = n.attr('epsilon', 1e-5)
    extra = [o for o in n.output_names[1:] if o]
    if axis == rank - 1 and not extra and n.shape(1) is not None and len(n.shape(1)) == 1:
        if bias is None:
            bias = n.op('zeros_like', scale)
        return n.op('LayerNorm', x, scale, bias, axis=-1, eps=eps)
    # over axes [axis, rank): mean and variance by reductions
    axes = tuple(range(axis, rank))
    mean = n.op('_npi_mean', x, axis=axes, keepdims=True)
    centred = n.op('broadcast_sub', x, mean)
    var = n.op('_npi_mean', n.op('square', centred), axis=axes, keepdims=True)
    inv = n.op('rsqrt', n.op('_plus_scalar', var, scalar=eps))
    y = n.op('broadcast_mul', n.op('broadcast_mul', centred, inv), scale)
    if bias is not None:
        y = n.op('broadcast_add', y, bias)
    return [y, mean, inv]


@converter('GroupNormalization', attributes=('epsilon', 'num_groups', 'stash_type'))
def _group_norm(n):
    x = n.input(0)
    groups = n.attr('num_groups')
    eps = n.attr('epsilon', 1e-5)
    shape = n.static_shape(0, 'for GroupNormalization')
    c = shape[1]
    scale, bias = n.input(1), n.input(2)
    if n.opset < 21:    # one scale and bias per group: repeated for its channels
        scale = n.op('repeat', scale, repeats=c // groups, axis=0)
        bias = n.op('repeat', bias, repeats=c // groups, axis=0)
    grouped = _reshape(n, x, (shape[0], groups, -1))
    mean = n.op('_npi_mean', grouped, axis=2, keepdims=True)
    centred = n.op('broadcast_sub', grouped, mean)
    var = n.op('_npi_mean', n.op('square', centred), axis=2, keepdims=True)
    y = _reshape(n, n.op('broadcast_mul', centred,
                         n.op('rsqrt', n.op('_plus_scalar', var, scalar=eps))), shape)
    cshape = (c,) + (1,) * (len(shape) - 2)
    return n.op('broadcast_add', n.op('broadcast_mul', y, _reshape(n, scale, cshape)),
                _reshape(n, bias, cshape))


@converter('LpNormalization', attributes=('axis', 'p'))
def _lp_normalization(n):
    x = n.input(0)
    p = n.attr('p', 2)
    norm = n.op('norm', x, ord=p, axis=n.attr('axis', -1), keepdims=True)
    zero = n.op('_npi_equal_scalar', norm, scalar=0.0)
    safe = n.op('_npi_where', zero, n.op('ones_like', norm), norm)
    return n.op('broadcast_div', x, safe)


@converter('MeanVarianceNormalization', attributes=('axes',))
def _mvn(n):
    x = n.input(0)
    axes = tuple(n.attr('axes', (0, 2, 3)))
    mean = n.op('_npi_mean', x, axis=axes, keepdims=True)
    centred = n.op('broadcast_sub', x, mean)
    var = n.op('_npi_mean', n.op('square', centred), axis=axes, keepdims=True)
    return n.op('broadcast_div', centred, n.op('_plus_scalar', n.op('sqrt', var), scalar=1e-9))


@converter('Dropout', attributes=('ratio', 'is_test', 'seed', 'consumed_inputs'),
           random=True)
def _dropout(n):
    x = n.input(0)
    ratio = n.attr('ratio', 0.5) if n.opset < 12 else _scalar(n.const(1, 'ratio', 0.5))
    training = bool(_scalar(n.const(2, 'training_mode', False))) if n.opset >= 12 else False
    y = (n.op('Dropout', x, p=ratio, mode='always') if training and ratio > 0
         else n.op('_copy', x))
    outs = [y]
    if len(n.output_names) > 1 and n.output_names[1]:
        if training and ratio > 0:
            raise n.error("the mask of a dropout in training mode is not supported")
        outs.append(n.op('_npi_full_like', x, fill_value=1, dtype='bool'))
    return outs


@converter('Gemm', attributes=('alpha', 'beta', 'broadcast', 'transA', 'transB'))
def _gemm(n):
    a, b, c = n.input(0), n.input(1), n.input(2)
    alpha, beta = n.attr('alpha', 1.0), n.attr('beta', 1.0)
    ta, tb = n.attr('transA', 0), n.attr('transB', 0)
    b_shape = n.shape(1)
    c_shape = n.shape(2)
    n_out = None if b_shape is None else b_shape[0 if tb else 1]
    if (not ta and tb and alpha == 1.0 and (c is None or beta == 1.0) and n_out is not None
            and (c is None or tuple(c_shape or ()) == (n_out,))):
        return n.op('FullyConnected', a, b, c, num_hidden=n_out, no_bias=c is None,
                    flatten=False)
    y = n.op('dot', a, b, transpose_a=bool(ta), transpose_b=bool(tb))
    if alpha != 1.0:
        y = n.op('_mul_scalar', y, scalar=alpha)
    if c is not None and beta != 0.0:
        if beta != 1.0:
            c = n.op('_mul_scalar', c, scalar=beta)
        y = n.op('broadcast_add', y, c)
    return y


@converter('MatMul')
def _matmul(n):
    a, b = n.input(0), n.input(1)
    if n.rank(0) == 2 and n.rank(1) == 2:
        return n.op('dot', a, b)
    return n.op('_npi_matmul', a, b)


@converter('Einsum', attributes=('equation',))
def _einsum(n):
    xs = n.inputs()
    return n.op('_npi_einsum', *xs, subscripts=n.attr('equation').replace(' ', ''),
                num_args=len(xs))


@converter('Det')
def _det(n):
    return n.op('_npi_det', n.input(0))


@converter('Flatten', attributes=('axis',))
def _flatten(n):
    x = n.input(0)
    axis = n.attr('axis', 1)
    shape = n.shape(0)
    rank = len(shape) if shape is not None else n.rank(0)
    axis = _norm(axis, rank)
    if shape is not None and all(d is not None for d in shape):
        return _reshape(n, x, (int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))))
    if axis == 1:
        return n.op('Flatten', x)
    if axis == 0:
        return n.op('Reshape', x, shape=(1, -1))
    raise n.error("Flatten at axis %d needs the input's static shape" % axis)


# -- shapes --------------------------------------------------------------------------------

@converter('Reshape', attributes=('shape', 'allowzero', 'consumed_inputs'))
def _reshape_op(n):
    x = n.input(0)
    shape = _ints(n.attr('shape') if n.opset < 5 else n.const(1, 'shape'))
    if n.attr('allowzero', 0) and 0 in shape:
        return n.op('_np_reshape', x, newshape=shape)
    in_shape = n.shape(0)
    if in_shape is not None and all(d is not None for d in in_shape):
        # the exact shape: a 0 copies the input's dimension, -1 takes what is left
        out = [in_shape[i] if d == 0 else d for i, d in enumerate(shape)]
        if -1 in out:
            known = int(np.prod([d for d in out if d != -1]))
            total = int(np.prod(in_shape))
            out[out.index(-1)] = total // known if known else 0
        return _reshape(n, x, out)
    # MXNet's Reshape has ONNX's special values: 0 copies a dimension, -1 is inferred
    return n.op('Reshape', x, shape=shape)


@converter('Transpose', attributes=('perm',))
def _transpose(n):
    perm = n.attr('perm')
    if perm is None:
        perm = tuple(reversed(range(n.rank(0))))
    return n.op('transpose', n.input(0), axes=tuple(perm))


@converter('Concat', attributes=('axis',))
def _concat(n):
    xs = [x for x in n.inputs() if x is not None]
    axis = n.attr('axis', 1)
    if axis < 0:
        axis = _norm(axis, n.rank(0))
    return n.op('Concat', *xs, dim=axis, num_args=len(xs))


@converter('Split', attributes=('axis', 'split', 'num_outputs'))
def _split(n):
    x = n.input(0)
    count = len(n.output_names)
    axis = n.attr('axis', 0)
    rank = n.rank(0)
    axis = _norm(axis, rank)
    sizes = n.attr('split') if n.opset < 13 else (
        _ints(n.const(1, 'split')) if n.has(1) else None)
    if sizes is None:
        dim = n.shape(0)[axis]
        if dim is None:
            if n.attr('num_outputs') is not None and n.opset >= 18:
                raise n.error("splitting an axis of unknown size")
            return list(n.op('SliceChannel', x, num_outputs=count, axis=axis))
        if dim % count == 0:
            sizes = (dim // count,) * count
        else:   # opset 18: the last part is smaller
            part = -(-dim // count)
            sizes = tuple(min(part, dim - i * part) for i in range(count))
    if count == 1:
        return [n.op('_copy', x)]
    bounds = np.cumsum((0,) + tuple(sizes))
    outs = []
    shape = n.shape(0)
    for i in range(count):
        if bounds[i] == bounds[i + 1] and _static(shape):
            part = list(shape)
            part[axis] = 0
            outs.append(_filled(n, part, 0, n.dtype(0)))
            continue
        outs.append(n.op('slice_axis', x, axis=axis, begin=int(bounds[i]),
                         end=int(bounds[i + 1])))
    return outs


def _slice_bounds(starts, ends, axes, steps, shape, n):
    """MXNet's slice begin/end/step over every axis up to the last sliced one, from ONNX's
    clamped bounds (INT_MAX, negative) resolved against the static dimensions where known."""
    rank = len(shape)
    axes = [_norm(a, rank) for a in axes]
    last = max(axes) + 1 if axes else 0
    begin, end, step = [None] * last, [None] * last, [None] * last
    for st, en, ax, sp in zip(starts, ends, axes, steps):
        if sp == 0:
            raise n.error("a step of 0 on axis %d" % ax)
        d = shape[ax]
        if d is None:
            big = 2 ** 62
            begin[ax] = None if (st == 0 and sp > 0) or (st >= big and sp < 0) else st
            end[ax] = None if en >= big or en <= -big else en
            step[ax] = sp
            continue
        b, e, s = slice(st, en, sp).indices(d)
        begin[ax], step[ax] = b, s
        end[ax] = None if e < 0 else e
        if s > 0 and e < b or s < 0 and e > b:     # empty
            end[ax] = b
    return tuple(begin), tuple(end), tuple(1 if s is None else s for s in step)


@converter('Slice', attributes=('starts', 'ends', 'axes'))
def _slice(n):
    x = n.input(0)
    if n.opset < 10:
        starts, ends = n.attr('starts'), n.attr('ends')
        axes = n.attr('axes', tuple(range(len(starts))))
        steps = (1,) * len(starts)
    else:
        starts, ends = _ints(n.const(1, 'starts')), _ints(n.const(2, 'ends'))
        axes = _ints(n.const(3, 'axes')) if n.has(3) else tuple(range(len(starts)))
        steps = _ints(n.const(4, 'steps')) if n.has(4) else (1,) * len(starts)
    shape = n.shape(0)
    if shape is None:
        shape = (None,) * n.rank(0)
    begin, end, step = _slice_bounds(starts, ends, axes, steps, shape, n)
    if _static(shape):
        out = list(shape)
        for ax, (b, e, st) in enumerate(zip(begin, end, step)):
            out[ax] = len(range(shape[ax])[slice(b, e, st)])
        if 0 in out:
            return _filled(n, out, 0, n.dtype(0))
    return n.op('slice', x, begin=begin, end=end, step=step)


def _axes_arg(n, name, index, since):
    """A list of axes given as the attribute ``name`` before opset ``since``, as input
    ``index`` from it (None when absent)."""
    if n.opset < since:
        v = n.attr(name)
        return None if v is None else tuple(v)
    if not n.has(index):
        return None
    return _ints(n.const(index, name))


@converter('Squeeze', attributes=('axes',))
def _squeeze(n):
    axes = _axes_arg(n, 'axes', 1, 13)
    x = n.input(0)
    if axes is None:
        shape = n.shape(0)
        if shape is not None and all(d is not None for d in shape):
            axes = tuple(i for i, d in enumerate(shape) if d == 1)
        else:
            return n.op('_np_squeeze', x)
    rank = n.rank(0)
    return n.op('_np_squeeze', x, axis=tuple(_norm(a, rank) for a in axes))


@converter('Unsqueeze', attributes=('axes',))
def _unsqueeze(n):
    axes = _axes_arg(n, 'axes', 1, 13)
    x = n.input(0)
    rank = n.rank(0) + len(axes)
    for a in sorted(_norm(a, rank) for a in axes):
        x = n.op('expand_dims', x, axis=a)
    return x


@converter('Expand')
def _expand(n):
    x = n.input(0)
    shape = _ints(n.const(1, 'shape'))
    in_shape = n.shape(0)
    rank = max(len(shape), len(in_shape) if in_shape is not None else n.rank(0))
    in_rank = len(in_shape)
    for _ in range(rank - in_rank):
        x = n.op('expand_dims', x, axis=0)
    in_shape = (1,) * (rank - in_rank) + tuple(in_shape)
    shape = (1,) * (rank - len(shape)) + tuple(shape)
    # a 1 keeps the input's dimension (MXNet's 0), anything else broadcasts to it
    target = tuple(0 if t == 1 else t for t in shape)
    if all(t == 0 or t == d for t, d in zip(target, in_shape)):
        return n.op('_copy', x)
    return n.op('broadcast_to', x, shape=target)


@converter('Tile')
def _tile(n):
    return n.op('tile', n.input(0), reps=_ints(n.const(1, 'repeats')))


@converter('Shape', attributes=('start', 'end'))
def _shape(n):
    shape = n.shape(0)
    rank = len(shape) if shape is not None else n.rank(0)
    start, end = n.attr('start', 0), n.attr('end', rank)
    lo, hi, _ = slice(start, end).indices(rank)
    part = shape[lo:hi]
    if all(d is not None for d in part):
        return np.array(part, dtype=np.int64)
    s = n.op('shape_array', n.input(0))
    return n.op('slice_axis', s, axis=0, begin=lo, end=max(lo, hi))


@converter('Size')
def _size(n):
    shape = n.shape(0)
    if shape is not None and all(d is not None for d in shape):
        return np.array(int(np.prod(shape)), dtype=np.int64)
    return n.op('_np_reshape', n.op('size_array', n.input(0)), newshape=())


@converter('Cast', attributes=('to', 'saturate', 'round_mode'))
def _cast_op(n):
    dtype = onnx_dtype(n.attr('to'), "ONNX node '%s' (Cast, opset %s): attribute to"
                       % (n.name, n.opset))
    return _cast(n, n.input(0), dtype)


@converter('CastLike', attributes=('saturate', 'round_mode'), folds_on=(0,))
def _cast_like(n):
    return _cast(n, n.input(0), n.dtype(1))


@converter('Constant', attributes=('value', 'value_float', 'value_floats', 'value_int',
                                   'value_ints', 'sparse_value', 'value_string',
                                   'value_strings'))
def _constant(n):
    for key, dtype in (('value', None), ('value_float', np.float32),
                       ('value_floats', np.float32), ('value_int', np.int64),
                       ('value_ints', np.int64)):
        if key in n.attrs:
            return np.asarray(n.attrs[key], dtype=dtype)
    if 'sparse_value' in n.attrs:
        raise n.unsupported('sparse_value', '<SparseTensorProto>',
                            'neomx imports dense tensors only')
    raise n.error("string constants have no neomx counterpart")


@converter('ConstantOfShape', attributes=('value',))
def _constant_of_shape(n):
    value = np.asarray(n.attr('value', np.zeros(1, np.float32)))
    shape = _ints(n.const(0, 'shape'))
    return n.op('_npi_full', shape=shape, value=float(value.reshape(-1)[0]),
                dtype=_np_dtype_name(value, n.name))


@converter('Range')
def _range(n):
    start, limit, delta = (n.const(i, w) for i, w in enumerate(('start', 'limit', 'delta')))
    dtype = _np_dtype_name(np.asarray(start), n.name)
    count = max(int(np.ceil((limit.item() - start.item()) / delta.item())), 0)
    if count == 0:
        return np.zeros((0,), dtype=start.dtype)
    return n.op('_npi_arange', start=start.item(), stop=start.item() + count * delta.item(),
                step=delta.item(), dtype=dtype)


@converter('EyeLike', attributes=('dtype', 'k'))
def _eye_like(n):
    shape = n.static_shape(0, 'for EyeLike')
    dtype = (onnx_dtype(n.attr('dtype'), "ONNX node '%s' (EyeLike): attribute dtype" % n.name)
             if n.attr('dtype') is not None else n.dtype(0))
    return n.op('_npi_eye', N=shape[0], M=shape[1], k=n.attr('k', 0), dtype=dtype)


@converter('DepthToSpace', attributes=('blocksize', 'mode'))
def _depth_to_space(n):
    b = n.attr('blocksize')
    x = n.input(0)
    if n.attr('mode', 'DCR') == 'DCR':
        return n.op('depth_to_space', x, block_size=b)
    shape = n.static_shape(0, 'for DepthToSpace in CRD mode')
    bn, c, h, w = shape
    y = _reshape(n, x, (bn, c // (b * b), b, b, h, w))
    y = n.op('transpose', y, axes=(0, 1, 4, 2, 5, 3))
    return _reshape(n, y, (bn, c // (b * b), h * b, w * b))


@converter('SpaceToDepth', attributes=('blocksize', 'mode'))
def _space_to_depth(n):
    b = n.attr('blocksize')
    x = n.input(0)
    if n.attr('mode', 'DCR') == 'DCR':
        return n.op('space_to_depth', x, block_size=b)
    shape = n.static_shape(0, 'for SpaceToDepth in CRD mode')
    bn, c, h, w = shape
    y = _reshape(n, x, (bn, c, h // b, b, w // b, b))
    y = n.op('transpose', y, axes=(0, 1, 3, 5, 2, 4))
    return _reshape(n, y, (bn, c * b * b, h // b, w // b))


@converter('Pad', attributes=('mode', 'pads', 'value', 'paddings'))
def _pad(n):
    x = n.input(0)
    mode = n.attr('mode', 'constant')
    rank = n.rank(0)
    if n.opset < 11:
        pads = n.attr('pads', n.attr('paddings'))
        value = n.attr('value', 0.0)
        axes = tuple(range(rank))
    else:
        pads = _ints(n.const(1, 'pads'))
        value = 0
        if n.has(2) and n.is_const(2):
            value = _scalar(n.const(2))
        axes = _ints(n.const(3, 'axes')) if n.has(3) else tuple(range(rank))
    axes = [_norm(a, rank) for a in axes]
    k = len(axes)
    width = [[0, 0] for _ in range(rank)]
    for i, a in enumerate(axes):
        width[a] = [int(pads[i]), int(pads[i + k])]
    if any(p < 0 for w in width for p in w):      # negative pads crop
        shape = n.shape(0)
        x = n.op('slice', x, begin=tuple(max(0, -w[0]) for w in width),
                 end=tuple(None if w[1] >= 0 else shape[i] + w[1]
                           for i, w in enumerate(width)))
        width = [[max(0, p) for p in w] for w in width]
    modes = {'constant': 'constant', 'reflect': 'reflect', 'edge': 'edge', 'wrap': 'wrap'}
    if mode not in modes:
        raise n.unsupported('mode')
    attrs = {'constant_values': value} if mode == 'constant' else {}
    width = tuple(tuple(w) for w in width)
    y = n.op('_npi_pad', x, pad_width=width, mode=modes[mode], **attrs)
    if mode == 'constant' and n.opset >= 11 and n.has(2) and not n.is_const(2):
        # a padding value computed at run time: where a padded mask of ones is 0
        inside = n.op('_npi_pad', n.op('ones_like', x), pad_width=width, mode='constant',
                      constant_values=0)
        fill = n.op('Cast', n.input(2), dtype=n.dtype(0))
        y = n.op('_npi_where', n.op('Cast', inside, dtype='bool'), y, fill)
    return y


# -- indexing ------------------------------------------------------------------------------

def _wrap_negative(n, idx, size):
    """Indices with the negative ones counted from the end of an axis of ``size``."""
    neg = n.op('_npi_less_scalar', idx, scalar=0)
    return n.op('_npi_where', neg, n.op('_plus_scalar', idx, scalar=size), idx)


@converter('Gather', attributes=('axis',))
def _gather(n):
    axis = _norm(n.attr('axis', 0), n.rank(0))
    return n.op('take', n.input(0), n.input(1), axis=axis, mode='wrap')


@converter('GatherElements', attributes=('axis',))
def _gather_elements(n):
    axis = _norm(n.attr('axis', 0), n.rank(0))
    size = n.shape(0)[axis]
    idx = _wrap_negative(n, n.input(1), size)
    return n.op('_npi_take_along_axis', n.input(0), idx, axis=axis)


@converter('GatherND', attributes=('batch_dims',))
def _gather_nd(n):
    if n.attr('batch_dims', 0):
        return _gather_nd_batched(n, n.attr('batch_dims'))
    idx = n.input(1)
    rank = n.rank(1)
    idx = n.op('transpose', idx, axes=(rank - 1,) + tuple(range(rank - 1)))
    return n.op('gather_nd', n.input(0), idx)


@converter('OneHot', attributes=('axis',))
def _one_hot(n):
    depth = int(_scalar(n.const(1, 'depth')))
    values = n.const(2, 'values')
    off, on = values.reshape(-1)[:2]
    idx = _wrap_negative(n, n.input(0), depth)
    rank = n.rank(0) + 1
    axis = _norm(n.attr('axis', -1), rank)
    hot = n.op('one_hot', idx, depth=depth, on_value=float(on), off_value=float(off),
               dtype=_np_dtype_name(values, n.name))
    if axis != rank - 1:
        hot = n.op('_np_moveaxis', hot, source=rank - 1, destination=axis)
    return hot


@converter('TopK', attributes=('axis', 'k', 'largest', 'sorted'))
def _topk_op(n):
    k = n.attr('k') if n.opset < 10 else int(_scalar(n.const(1, 'K')))
    axis = _norm(n.attr('axis', -1), n.rank(0))
    x = n.input(0)
    order = n.op('argsort', x, axis=axis, is_ascend=not n.attr('largest', 1), dtype='int64')
    idx = n.op('slice_axis', order, axis=axis, begin=0, end=k)
    return [n.op('_npi_take_along_axis', x, idx, axis=axis), idx]


def _arg_reduce(opname):
    def convert(n):
        x = n.input(0)
        rank = n.rank(0)
        axis = _norm(n.attr('axis', 0), rank)
        keep = bool(n.attr('keepdims', 1))
        if n.attr('select_last_index', 0):
            size = n.shape(0)[axis]
            if size is None:
                raise n.error("select_last_index needs the size of axis %d" % axis)
            r = n.op(opname, n.op('reverse', x, axis=axis), axis=axis, keepdims=keep)
            r = n.op('_rminus_scalar', n.op('Cast', r, dtype='int64'), scalar=size - 1)
            return r
        return n.op('Cast', n.op(opname, x, axis=axis, keepdims=keep), dtype='int64')
    return convert


converter('ArgMax', attributes=('axis', 'keepdims', 'select_last_index'))(_arg_reduce('argmax'))
converter('ArgMin', attributes=('axis', 'keepdims', 'select_last_index'))(_arg_reduce('argmin'))


@converter('Compress', attributes=('axis',))
def _compress(n):
    cond = np.asarray(n.const(1, 'condition')).astype(bool)
    idx = np.nonzero(cond)[0].astype(np.int64)
    x = n.input(0)
    axis = n.attr('axis')
    if axis is None:
        x = n.op('_np_reshape', x, newshape=(-1,))
        axis = 0
    axis = _norm(axis, n.rank(0) if n.attr('axis') is not None else 1)
    n.g._params[n.name + '/indices'] = idx
    return n.op('take', x, n.g._symbol_of(n.name + '/indices', 'indices'), axis=axis)


@converter('NonZero')
def _nonzero(n):
    x = n.const(0, 'X (its nonzero count decides the output shape)')
    return np.array(np.nonzero(x), dtype=np.int64)


@converter('Trilu', attributes=('upper',))
def _trilu(n):
    k = int(_scalar(n.const(1, 'k'))) if n.has(1) else 0
    return n.op('_npi_tril', n.input(0), k=k, lower=not n.attr('upper', 1))


@converter('CumSum', attributes=('exclusive', 'reverse'))
def _cumsum(n):
    axis = _norm(int(_scalar(n.const(1, 'axis'))), n.rank(0))
    x = n.input(0)
    rev = n.attr('reverse', 0)
    if rev:
        x = n.op('reverse', x, axis=axis)
    y = n.op('_np_cumsum', x, axis=axis, dtype=n.dtype(0))
    if n.attr('exclusive', 0):
        y = n.op('broadcast_sub', y, x)
    if rev:
        y = n.op('reverse', y, axis=axis)
    return y


@converter('ReverseSequence', attributes=('batch_axis', 'time_axis'))
def _reverse_sequence(n):
    time_axis, batch_axis = n.attr('time_axis', 0), n.attr('batch_axis', 1)
    x = n.input(0)
    if (time_axis, batch_axis) == (1, 0):
        x = n.op('SwapAxis', x, dim1=0, dim2=1)
    lens = n.op('Cast', n.input(1), dtype=n.dtype(0)) if _is_float(n.dtype(0)) else n.input(1)
    y = n.op('SequenceReverse', x, lens, use_sequence_length=True)
    if (time_axis, batch_axis) == (1, 0):
        y = n.op('SwapAxis', y, dim1=0, dim2=1)
    return y


# -- reductions ----------------------------------------------------------------------------

def _reduce(kind):
    def convert(n):
        x = n.input(0)
        since = 13 if n.op_type == 'ReduceSum' else 18
        axes = _axes_arg(n, 'axes', 1, since)
        keep = bool(n.attr('keepdims', 1))
        rank = n.rank(0)
        if not axes:
            if axes is not None or (n.opset >= since and n.attr('noop_with_empty_axes', 0)):
                if n.attr('noop_with_empty_axes', 0):
                    return n.op('_copy', x)
            axes = tuple(range(rank))
        axes = tuple(sorted(_norm(a, rank) for a in axes))
        dt = n.dtype(0)
        if kind == 'sum':
            return n.op('_np_sum', x, axis=axes, keepdims=keep)
        if kind == 'mean':
            return n.op('_npi_mean', x, axis=axes, keepdims=keep)
        if kind in ('max', 'min'):
            shape = n.shape(0)
            if _static(shape) and any(shape[a] == 0 for a in axes):
                if dt == 'bool':
                    value = kind == 'min'
                elif _is_float(dt):
                    value = -np.inf if kind == 'max' else np.inf
                else:
                    info = np.iinfo(np.dtype(dt))
                    value = int(info.min if kind == 'max' else info.max)
                out = [1 if a in axes else d for a, d in enumerate(shape)] if keep else \
                    [d for a, d in enumerate(shape) if a not in axes]
                return _filled(n, out, value, dt)
            return n.op('_np_' + kind, x, axis=axes, keepdims=keep)
        if kind == 'prod':
            return n.op('_np_prod', x, axis=axes, keepdims=keep)
        if kind == 'l1':
            return n.op('_np_sum', n.op('abs', x), axis=axes, keepdims=keep)
        if kind == 'l2':
            return n.op('sqrt', n.op('_np_sum', n.op('square', x), axis=axes, keepdims=keep))
        if kind == 'sumsquare':
            return n.op('_np_sum', n.op('square', x), axis=axes, keepdims=keep)
        if kind == 'logsum':
            return n.op('log', n.op('_np_sum', x, axis=axes, keepdims=keep))
        if kind == 'logsumexp':
            return n.op('log', n.op('_np_sum', n.op('exp', x), axis=axes, keepdims=keep))
        raise AssertionError(kind)
    return convert


for _t, _k in (('ReduceSum', 'sum'), ('ReduceMean', 'mean'), ('ReduceMax', 'max'),
               ('ReduceMin', 'min'), ('ReduceProd', 'prod'), ('ReduceL1', 'l1'),
               ('ReduceL2', 'l2'), ('ReduceSumSquare', 'sumsquare'),
               ('ReduceLogSum', 'logsum'), ('ReduceLogSumExp', 'logsumexp')):
    converter(_t, attributes=('axes', 'keepdims', 'noop_with_empty_axes'))(_reduce(_k))


# -- recurrent layers ----------------------------------------------------------------------

# ONNX's gate order in W, R and B, as indices into MXNet's (cuDNN's and torch's) order.
_GATE_ORDER = {'LSTM': (0, 2, 3, 1),      # ONNX i o f c -> i f c o
               'GRU': (1, 0, 2),          # ONNX z r h -> r z n
               'RNN': (0,)}
_DEFAULT_ACTS = {'LSTM': ('sigmoid', 'tanh', 'tanh'), 'GRU': ('sigmoid', 'tanh'),
                 'RNN': ('tanh',)}


def _gates(n, w, gates, hidden):
    """Rows of one direction's weight or bias reordered from ONNX's gate order."""
    order = _GATE_ORDER[n.op_type]
    if order == tuple(range(len(order))):
        return w
    parts = [n.op('slice_axis', w, axis=0, begin=g * hidden, end=(g + 1) * hidden)
             for g in order]
    return n.op('Concat', *parts, dim=0, num_args=len(parts))


def _rnn(n):
    kind = n.op_type
    hidden = n.attr('hidden_size')
    direction = n.attr('direction', 'forward')
    if direction not in ('forward', 'reverse', 'bidirectional'):
        raise n.unsupported('direction')
    dirs = 2 if direction == 'bidirectional' else 1
    acts = tuple(a.lower() for a in n.attr('activations', ())) or \
        _DEFAULT_ACTS[kind] * dirs
    fused = (kind != 'RNN' and acts == _DEFAULT_ACTS[kind] * dirs or
             kind == 'RNN' and acts in (('tanh',) * dirs, ('relu',) * dirs))
    fused = fused and all(n.attr(a) is None for a in ('activation_alpha', 'activation_beta',
                                                      'clip'))
    if kind == 'LSTM':
        fused = fused and not n.attr('input_forget', 0) and (
            not n.has(7) or n.is_const(7) and not np.any(n.const(7) != 0))
    if kind == 'GRU':
        fused = fused and n.attr('linear_before_reset', 0)
    if direction == 'reverse' and n.has(4):
        fused = False
    if not fused:   # what MXNet's fused RNN cannot do, as a loop unrolled over the steps
        return _rnn_unrolled(n, kind, hidden, dirs, direction, acts)
    mode = 'rnn_' + acts[0] if kind == 'RNN' else kind.lower()
    layout = n.attr('layout', 0)
    x = n.input(0)
    if layout:
        x = n.op('transpose', x, axes=(1, 0, 2))
    gates = len(_GATE_ORDER[kind])
    w, r, b = n.input(1), n.input(2), n.input(3)
    weights, biases = [], []
    for d in range(dirs):
        wd = n.op('squeeze', n.op('slice_axis', w, axis=0, begin=d, end=d + 1), axis=0)
        rd = n.op('squeeze', n.op('slice_axis', r, axis=0, begin=d, end=d + 1), axis=0)
        weights += [_gates(n, wd, gates, hidden), _gates(n, rd, gates, hidden)]
        if b is not None:
            bd = n.op('squeeze', n.op('slice_axis', b, axis=0, begin=d, end=d + 1), axis=0)
            for k in range(2):
                part = n.op('slice_axis', bd, axis=0, begin=k * gates * hidden,
                            end=(k + 1) * gates * hidden)
                biases.append(_gates(n, part, gates, hidden))
    flat = [n.op('Reshape', p, shape=(-1,)) for p in weights]
    if b is None:
        zeros = n.op('zeros_like', n.op('slice_axis', flat[0], axis=0, begin=0,
                                        end=gates * hidden))
        biases = [zeros] * (2 * dirs)
    flat += biases
    params = n.op('Concat', *flat, dim=0, num_args=len(flat))
    # the initial states, zeros when absent: (directions, batch, hidden)
    def state(i):
        s = n.input(i)
        if s is not None:
            return n.op('transpose', s, axes=(1, 0, 2)) if layout else s
        first = n.op('slice_axis', x, axis=0, begin=0, end=1)
        z = n.op('_np_sum', n.op('zeros_like', first), axis=2, keepdims=True)
        return n.op('broadcast_to', z, shape=(dirs, 0, hidden))
    h0 = state(5)
    c0 = state(6) if kind == 'LSTM' else None
    lens = n.input(4)
    if direction == 'reverse':
        x = n.op('reverse', x, axis=0)
    attrs = dict(state_size=hidden, num_layers=1, bidirectional=dirs == 2, mode=mode,
                 state_outputs=True)
    inputs = dict(data=x, parameters=params, state=h0)
    if kind == 'LSTM':
        inputs['state_cell'] = c0
    if lens is not None:
        inputs['sequence_length'] = n.op('Cast', lens, dtype='int32')
        attrs['use_sequence_length'] = True
    out = n.op('RNN', **inputs, **attrs)
    y = out[0]
    if direction == 'reverse':
        y = n.op('reverse', y, axis=0)
    y = n.op('Reshape', y, shape=(0, 0, dirs, hidden))        # (seq, batch, dirs, hidden)
    states = [out[1]] + ([out[2]] if kind == 'LSTM' else [])
    if layout:
        y = n.op('transpose', y, axes=(1, 0, 2, 3))            # (batch, seq, dirs, hidden)
        states = [n.op('transpose', s, axes=(1, 0, 2)) for s in states]
    else:
        y = n.op('transpose', y, axes=(0, 2, 1, 3))            # (seq, dirs, batch, hidden)
    return [y] + states


# ONNX's activations of recurrent cells: (name, number of alpha/beta values it takes)
_CELL_ACTS = {'relu': 0, 'tanh': 0, 'sigmoid': 0, 'affine': 2, 'leakyrelu': 1,
              'thresholdedrelu': 1, 'scaledtanh': 2, 'hardsigmoid': 2, 'elu': 1,
              'softsign': 0, 'softplus': 0}


def _cell_activation(n, name, alpha, beta):
    def apply(x):
        if name in ('relu', 'tanh', 'sigmoid', 'softsign'):
            return n.op(name, x)
        if name == 'softplus':
            return n.op('Activation', x, act_type='softrelu')
        if name == 'affine':
            return n.op('_plus_scalar', n.op('_mul_scalar', x, scalar=alpha), scalar=beta)
        if name == 'leakyrelu':
            return n.op('LeakyReLU', x, act_type='leaky', slope=alpha)
        if name == 'thresholdedrelu':
            return n.op('broadcast_mul', x, n.op('_greater_scalar', x, scalar=alpha))
        if name == 'scaledtanh':
            return n.op('_mul_scalar', n.op('tanh', n.op('_mul_scalar', x, scalar=beta)),
                        scalar=alpha)
        if name == 'hardsigmoid':
            return n.op('hard_sigmoid', x, alpha=alpha, beta=beta)
        if name == 'elu':
            return n.op('LeakyReLU', x, act_type='elu', slope=alpha)
        raise n.unsupported('activations')
    return apply


def _rnn_unrolled(n, kind, hidden, dirs, direction, acts):
    """A recurrent layer as ONNX defines it, step by step in registry operators: any
    activations, clipping, peepholes, input_forget, GRU's linear_before_reset=0, sequence
    lengths. The number of steps must be static."""
    alphas, betas = list(n.attr('activation_alpha', ())), list(n.attr('activation_beta', ()))
    fns = []
    for name in acts:
        if name not in _CELL_ACTS:
            raise n.unsupported('activations')
        k = _CELL_ACTS[name]
        alpha = alphas.pop(0) if k >= 1 and alphas else {'leakyrelu': 0.01, 'thresholdedrelu':
                                                         1.0, 'elu': 1.0, 'hardsigmoid': 0.2,
                                                         }.get(name, 1.0)
        beta = betas.pop(0) if k == 2 and betas else {'hardsigmoid': 0.5}.get(name, 0.0)
        fns.append(_cell_activation(n, name, alpha, beta))
    per = len(acts) // dirs
    clip = n.attr('clip')
    layout = n.attr('layout', 0)
    x = n.input(0)
    if layout:
        x = n.op('transpose', x, axes=(1, 0, 2))
    shape = n.shape(0)
    steps = shape[1 if layout else 0]
    if steps is None:
        raise n.error("this recurrent layer runs step by step and needs a static sequence "
                      "length")
    gates = len(_GATE_ORDER[kind])
    lens = n.input(4)
    mask_of = None
    if lens is not None:
        lens = n.op('Cast', lens, dtype=n.dtype(0))

        def mask_of(t):         # (batch, 1): 1 where step t is within the sequence
            return n.op('expand_dims', n.op('_greater_scalar', lens, scalar=float(t)), axis=1)

    def part(s, d):
        return n.op('squeeze', n.op('slice_axis', s, axis=0, begin=d, end=d + 1), axis=0)

    def rows(s, g):
        return n.op('slice_axis', s, axis=-1, begin=g * hidden, end=(g + 1) * hidden)

    def clipped(v):
        return v if clip is None else n.op('clip', v, a_min=-clip, a_max=clip)

    ys, hs, cs = [], [], []
    for d in range(dirs):
        f, g = fns[d * per], fns[d * per + 1] if per > 1 else None
        h_act = fns[d * per + 2] if per > 2 else None
        w, r = part(n.input(1), d), part(n.input(2), d)
        wb = rb = None
        if n.has(3):
            b = part(n.input(3), d)
            wb = n.op('slice_axis', b, axis=0, begin=0, end=gates * hidden)
            rb = n.op('slice_axis', b, axis=0, begin=gates * hidden, end=2 * gates * hidden)
        xw = n.op('FullyConnected', x, w, wb, num_hidden=gates * hidden, no_bias=wb is None,
                  flatten=False)                                    # (steps, batch, G*H)
        h = part(n.input(5), d) if n.has(5) else None
        c = part(n.input(6), d) if kind == 'LSTM' and n.has(6) else None
        peep = part(n.input(7), d) if kind == 'LSTM' and n.has(7) else None
        reverse = direction == 'reverse' or d == 1
        outs = [None] * steps
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            xt = n.op('squeeze', n.op('slice_axis', xw, axis=0, begin=t, end=t + 1), axis=0)
            if h is None:       # the zero initial state
                h = n.op('zeros_like', rows(xt, 0))
                if kind == 'LSTM' and c is None:
                    c = n.op('zeros_like', rows(xt, 0))
            hr = n.op('FullyConnected', h, r, rb, num_hidden=gates * hidden,
                      no_bias=rb is None)
            if kind == 'RNN':
                h_new = f(clipped(n.op('broadcast_add', xt, hr)))
            elif kind == 'GRU':
                z = f(clipped(n.op('broadcast_add', rows(xt, 0), rows(hr, 0))))
                rg = f(clipped(n.op('broadcast_add', rows(xt, 1), rows(hr, 1))))
                if n.attr('linear_before_reset', 0):
                    hh = n.op('broadcast_mul', rg, rows(hr, 2))
                else:       # the reset gate before the recurrent weight
                    rh = n.op('slice_axis', r, axis=0, begin=2 * hidden, end=3 * hidden)
                    rbh = None if rb is None else n.op('slice_axis', rb, axis=0,
                                                       begin=2 * hidden, end=3 * hidden)
                    hh = n.op('FullyConnected', n.op('broadcast_mul', rg, h), rh, rbh,
                              num_hidden=hidden, no_bias=rbh is None)
                cand = g(clipped(n.op('broadcast_add', rows(xt, 2), hh)))
                # (1 - z) * cand + z * h
                h_new = n.op('broadcast_add', cand, n.op('broadcast_mul', z,
                                                          n.op('broadcast_sub', h, cand)))
            else:
                pre = n.op('broadcast_add', xt, hr)         # gates i o f c
                pi = rows(pre, 0)
                pf = rows(pre, 2)
                if peep is not None:
                    pi = n.op('broadcast_add', pi, n.op('broadcast_mul', rows(peep, 0), c))
                    pf = n.op('broadcast_add', pf, n.op('broadcast_mul', rows(peep, 2), c))
                i = f(clipped(pi))
                fg = n.op('_rminus_scalar', i, scalar=1.0) if n.attr('input_forget', 0) \
                    else f(clipped(pf))
                cand = g(clipped(rows(pre, 3)))
                c_new = n.op('broadcast_add', n.op('broadcast_mul', fg, c),
                             n.op('broadcast_mul', i, cand))
                po = rows(pre, 1)
                if peep is not None:
                    po = n.op('broadcast_add', po, n.op('broadcast_mul', rows(peep, 1), c_new))
                h_new = n.op('broadcast_mul', f(clipped(po)), h_act(c_new))
            if mask_of is not None:     # past a sequence's end: the state stays, output 0
                m = mask_of(t)
                h_new = n.op('_npi_where', m, h_new, h)
                if kind == 'LSTM':
                    c_new = n.op('_npi_where', m, c_new, c)
                outs[t] = n.op('broadcast_mul', h_new, n.op('Cast', m, dtype=n.dtype(0)))
            else:
                outs[t] = h_new
            h = h_new
            if kind == 'LSTM':
                c = c_new
        ys.append(n.op('stack', *outs, axis=0, num_args=steps))       # (steps, batch, H)
        hs.append(h)
        cs.append(c)
    y = n.op('stack', *ys, axis=1, num_args=dirs)                    # (steps, dirs, batch, H)
    yh = n.op('stack', *hs, axis=0, num_args=dirs)
    outs = [y, yh]
    if kind == 'LSTM':
        outs.append(n.op('stack', *cs, axis=0, num_args=dirs))
    if layout:
        outs = [n.op('transpose', outs[0], axes=(2, 0, 1, 3))] + \
            [n.op('transpose', s, axes=(1, 0, 2)) for s in outs[1:]]
    return outs


converter('LSTM', attributes=('activation_alpha', 'activation_beta', 'activations', 'clip',
                              'direction', 'hidden_size', 'input_forget', 'layout'))(_rnn)
converter('GRU', attributes=('activation_alpha', 'activation_beta', 'activations', 'clip',
                             'direction', 'hidden_size', 'linear_before_reset',
                             'layout'))(_rnn)
converter('RNN', attributes=('activation_alpha', 'activation_beta', 'activations', 'clip',
                             'direction', 'hidden_size', 'layout'))(_rnn)


# -- operators defined as functions of others ----------------------------------------------

def function_body(n):
    """A converter for ONNX operator ``n`` that ONNX defines as a function of other operators
    (its schema's body for the node's opset, or the body built for the node's attributes and
    input types), or None."""
    import onnx
    from onnx import defs
    try:
        schema = defs.get_schema(n.op_type, n.opset, n.proto.domain)
    except Exception:
        return None
    fn = None
    try:
        if schema.has_function:
            versions = [v for v in schema.function_opset_versions if v <= n.opset]
            if versions:
                fn = onnx.FunctionProto()
                fn.ParseFromString(schema.get_function_with_opset_version(max(versions)))
            else:
                fn = schema.function_body
        elif schema.has_context_dependent_function:
            types = []
            for i, name in enumerate(n.input_names):
                t = onnx.TypeProto()
                if name:    # the builder may read the inputs' ranks and sizes
                    t.tensor_type.elem_type = _onnx_type_of(n.dtype(i))
                    shape = n.shape(i)
                    if shape is not None:
                        dims = t.tensor_type.shape.dim
                        for d in shape:
                            dims.add()
                            if d is not None:
                                dims[-1].dim_value = d
                types.append(t.SerializeToString())
            versions = [v for v in schema.context_dependent_function_opset_versions
                        if v <= n.opset]
            if versions:
                data = schema.get_context_dependent_function_with_opset_version(
                    max(versions), n.proto.SerializeToString(), types)
            else:
                data = schema.get_context_dependent_function(n.proto.SerializeToString(),
                                                             types)
            fn = onnx.FunctionProto()
            fn.ParseFromString(data)
    except ONNXImportError:
        raise
    except Exception:
        return None
    if fn is None or not fn.node:
        return None

    # the schema's defaults for the attributes the node leaves out
    defaults = [schema.attributes[a].default_value for a in schema.attributes
                if schema.attributes[a].default_value.name and
                a not in {x.name for x in n.proto.attribute}]

    def convert(node):
        inline_function(node.g, node.proto, fn, {'': node.opset}, defaults)
    convert.attributes = None
    convert.random = False
    convert.expanded = True
    return convert


def _onnx_type_of(dtype):
    from .import_onnx import _ONNX_DTYPES
    return {v: k for k, v in _ONNX_DTYPES.items()}[dtype]


# -- resizing ------------------------------------------------------------------------------

def _resize_coefficients(mode, ctm, nearest_mode, cubic_a, exclude_outside, antialias,
                         in_size, out_size, scale, roi):
    """One axis of ONNX's Resize, which is separable: (taps, coefficients, extrapolated), the
    input indices (out_size, n) each output reads, their weights, and the outputs that lie
    outside the input (tf_crop_and_resize)."""
    y = np.arange(out_size, dtype=np.float64)
    width = scale * in_size
    extrapolated = None
    if ctm == 'align_corners':
        x = np.zeros(out_size) if width == 1 else y * (in_size - 1) / (width - 1)
    elif ctm == 'asymmetric':
        x = y / scale
    elif ctm == 'tf_crop_and_resize':
        lo, hi = roi
        x = (np.full(out_size, (hi - lo) * (in_size - 1) / 2) if width == 1 else
             y * (hi - lo) * (in_size - 1) / (width - 1)) + lo * (in_size - 1)
        extrapolated = (x < 0) | (x > in_size - 1)
    elif ctm == 'pytorch_half_pixel':
        x = np.full(out_size, -0.5) if width == 1 else (y + 0.5) / scale - 0.5
    elif ctm == 'half_pixel':
        x = (y + 0.5) / scale - 0.5
    elif ctm == 'half_pixel_symmetric':
        offset = in_size / 2 * (1 - out_size / width)
        x = offset + (y + 0.5) / scale - 0.5
    elif ctm == 'tf_half_pixel_for_nn':
        x = (y + 0.5) / scale
    else:
        raise ValueError(ctm)
    base = np.floor(x)
    ratio = np.where(x == base, 1.0, x - base)     # the tap left of x is preferred

    def coeffs(r):
        if mode == 'nearest':
            if float(r).is_integer():
                return np.array([0.0, 1.0])
            up = {'round_prefer_floor': r > 0.5, 'round_prefer_ceil': r >= 0.5,
                  'floor': False, 'ceil': True}[nearest_mode]
            return np.array([0.0, 1.0]) if up else np.array([1.0, 0.0])
        s = min(scale, 1.0) if antialias else 1.0
        if mode == 'linear':
            if not antialias:
                return np.array([1 - r, r])
            start = int(np.floor(-1 / s) + 1)
            c = np.clip(1 - np.abs((np.arange(start, 2 - start) - r) * s), 0, 1)
            return c / c.sum()
        a = cubic_a

        def cubic(t):
            t = abs(t)
            if t <= 1:
                return (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1
            return a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a if t < 2 else 0.0
        if not antialias:
            return np.array([cubic(r + 1), cubic(r), cubic(1 - r), cubic(2 - r)])
        start = int(np.floor(-2 / s) + 1)
        c = np.array([cubic(s * (i - r)) for i in range(start, 2 - start)])
        return c / c.sum()
    weights = np.stack([coeffs(float(r)) for r in ratio]) if out_size else np.zeros((0, 2))
    n = weights.shape[1]
    # the n taps nearest to x, the smaller one first on a tie (ONNX's _get_neighbor)
    start = np.where(x == base, base - n // 2, base - n // 2 + 1).astype(np.int64)
    taps = start[:, None] + np.arange(n)[None, :]
    if exclude_outside:
        weights = np.where((taps < 0) | (taps >= in_size), 0.0, weights)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    return np.clip(taps, 0, in_size - 1), weights, extrapolated


def _resize_axis(n, x, axis, rank, dtype, taps, weights, extrapolated, fill):
    """Input ``x`` resized along ``axis``: a gather for nearest taps (one weight of 1 each),
    else a product with the (out, in) interpolation matrix, both constants."""
    out_size, in_size = taps.shape[0], None
    one_tap = np.all((weights == 0) | (weights == 1)) and np.all(weights.sum(axis=1) == 1)
    if one_tap and extrapolated is None:
        idx = taps[np.arange(out_size), weights.argmax(axis=1)]
        return n.op('take', x, n.constant(idx.astype(np.int64), 'indices%d' % axis),
                    axis=axis)
    in_size = n.shape(0)[axis]
    matrix = np.zeros((out_size, in_size))
    np.add.at(matrix, (np.repeat(np.arange(out_size), taps.shape[1]), taps.reshape(-1)),
              weights.reshape(-1))
    bias = None
    if extrapolated is not None and extrapolated.any():
        matrix[extrapolated] = 0.0
        bias = np.where(extrapolated, fill, 0.0)
    moved = n.op('SwapAxis', x, dim1=axis, dim2=rank - 1) if axis != rank - 1 else x
    npdtype = np.float32 if dtype == 'bfloat16' else np.dtype(dtype)
    y = n.op('dot', moved, n.constant(matrix.T.astype(npdtype), 'weights%d' % axis))
    if bias is not None:
        y = n.op('broadcast_add', y, n.constant(bias.astype(npdtype), 'fill%d' % axis))
    return n.op('SwapAxis', y, dim1=axis, dim2=rank - 1) if axis != rank - 1 else y


@converter('Resize', 'Upsample', attributes=(
    'antialias', 'axes', 'coordinate_transformation_mode', 'cubic_coeff_a', 'exclude_outside',
    'extrapolation_value', 'keep_aspect_ratio_policy', 'mode', 'nearest_mode', 'scales',
    'height_scale', 'width_scale'))
def _resize(n):
    x = n.input(0)
    shape = n.static_shape(0, 'for %s' % n.op_type)
    rank = len(shape)
    mode = n.attr('mode', 'nearest')
    mode = {'bilinear': 'linear', 'trilinear': 'linear'}.get(mode, mode)
    if mode not in ('nearest', 'linear', 'cubic'):
        raise n.unsupported('mode')
    resize11 = n.op_type == 'Resize' and n.opset >= 11
    ctm = n.attr('coordinate_transformation_mode', 'half_pixel') if resize11 else 'asymmetric'
    nearest_mode = n.attr('nearest_mode', 'round_prefer_floor') if resize11 else 'floor'
    axes = [_norm(a, rank) for a in n.attr('axes', range(rank))]
    scales = sizes = roi = None
    if n.op_type == 'Upsample':
        scales = n.attr('scales') if n.opset < 9 else n.const(1, 'scales')
        if scales is None:
            scales = (1.0, 1.0, n.attr('height_scale', 1.0), n.attr('width_scale', 1.0))
    elif n.opset < 11:
        scales = n.const(1, 'scales')
    else:
        roi = n.const(1, 'roi') if n.has(1) else None
        scales = n.const(2, 'scales') if n.has(2) else None
        sizes = n.const(3, 'sizes') if n.has(3) else None
        if scales is not None and np.asarray(scales).size == 0:
            scales = None
    if sizes is not None and np.asarray(sizes).size:
        sizes = [int(v) for v in np.asarray(sizes).reshape(-1)]
        scale = [sizes[axes.index(a)] / shape[a] if a in axes else 1.0 for a in range(rank)]
        out = [sizes[axes.index(a)] if a in axes else shape[a] for a in range(rank)]
        policy = n.attr('keep_aspect_ratio_policy', 'stretch')
        if policy != 'stretch':
            pick = min if policy == 'not_larger' else max
            s = pick(scale[a] for a in axes)
            scale = [s if a in axes else 1.0 for a in range(rank)]
            out = [int(s * shape[a] + 0.5) if a in axes else shape[a] for a in range(rank)]
    elif scales is not None:
        given = [float(v) for v in np.asarray(scales).reshape(-1)]
        scale = [given[axes.index(a)] if a in axes else 1.0 for a in range(rank)]
        out = [int(np.floor(s * d)) for s, d in zip(scale, shape)]
    else:
        raise n.error("neither scales nor sizes is given")
    roi_full = None
    if ctm == 'tf_crop_and_resize':
        r = np.asarray(roi, dtype=np.float64).reshape(-1)
        k = len(axes)
        roi_full = {a: (r[i], r[k + i]) for i, a in enumerate(axes)}
    dtype = n.dtype(0)
    for a in range(rank):
        identity = (np.isclose(scale[a], 1.0) and out[a] == shape[a] and
                    (roi_full is None or a not in roi_full or
                     tuple(roi_full[a]) == (0.0, 1.0)))
        if identity:
            continue
        taps, weights, extrapolated = _resize_coefficients(
            mode, ctm, nearest_mode, n.attr('cubic_coeff_a', -0.75),
            n.attr('exclude_outside', 0), n.attr('antialias', 0), shape[a], out[a], scale[a],
            None if roi_full is None else roi_full.get(a, (0.0, 1.0)))
        x = _resize_axis(n, x, a, rank, dtype, taps, weights, extrapolated,
                         n.attr('extrapolation_value', 0.0))
        shape = tuple(out[a] if i == a else d for i, d in enumerate(shape))
    return x if x is not n.input(0) else n.op('_copy', x)


# -- scatter, cumulative products, column images, regions of interest ----------------------

@converter('ScatterElements', 'Scatter', attributes=('axis', 'reduction'))
def _scatter_elements_op(n):
    axis = _norm(n.attr('axis', 0), n.rank(0))
    return n.op('_scatter_elements', n.input(0), n.input(1), n.input(2), axis=axis,
                reduction=n.attr('reduction', 'none'))


@converter('ScatterND', attributes=('reduction',))
def _scatter_nd(n):
    # data seen as (positions indexed, the rest): the updates scatter along its first axis at
    # each index's linear position
    shape = n.static_shape(0, 'for ScatterND')
    ishape = n.static_shape(1, 'for ScatterND (the indices)')
    k = ishape[-1]
    rows, cols = int(np.prod(shape[:k])), int(np.prod(shape[k:]))
    m = int(np.prod(ishape[:-1]))
    idx = n.input(1)
    dims = np.array(shape[:k], dtype=np.int64)
    strides = np.array([int(np.prod(shape[j + 1:k])) for j in range(k)], dtype=np.int64)
    neg = n.op('Cast', n.op('_npi_less_scalar', idx, scalar=0), dtype='int64')
    idx = n.op('broadcast_add', idx, n.op('broadcast_mul', neg, n.constant(dims, 'dims')))
    linear = n.op('_np_sum', n.op('broadcast_mul', idx, n.constant(strides, 'strides')),
                  axis=-1)
    linear = n.op('broadcast_to', _reshape(n, linear, (m, 1)), shape=(m, cols))
    data = _reshape(n, n.input(0), (rows, cols))
    updates = _reshape(n, n.input(2), (m, cols))
    out = n.op('_scatter_elements', data, linear, updates, axis=0,
               reduction=n.attr('reduction', 'none'))
    return _reshape(n, out, shape)


def _gather_nd_batched(n, b):
    shape = n.static_shape(0, 'for GatherND with batch_dims')
    ishape = n.static_shape(1, 'for GatherND with batch_dims (the indices)')
    batch = int(np.prod(shape[:b]))
    data = _reshape(n, n.input(0), (batch,) + tuple(shape[b:]))
    inner = tuple(ishape[b:-1])
    idx = _reshape(n, n.input(1), (batch,) + inner + (ishape[-1],))
    grid = np.broadcast_to(np.arange(batch, dtype=np.int64).reshape((batch,) + (1,) * len(inner)
                                                                    + (1,)),
                           (batch,) + inner + (1,))
    idx = n.op('Concat', n.constant(np.ascontiguousarray(grid), 'batch'),
               n.op('Cast', idx, dtype='int64'), dim=len(inner) + 1, num_args=2)
    rank = len(inner) + 2
    idx = n.op('transpose', idx, axes=(rank - 1,) + tuple(range(rank - 1)))
    out = n.op('gather_nd', data, idx)
    return _reshape(n, out, tuple(shape[:b]) + inner + tuple(shape[b + ishape[-1]:]))


@converter('CumProd', attributes=('exclusive', 'reverse'))
def _cumprod(n):
    axis = _norm(int(_scalar(n.const(1, 'axis'))), n.rank(0))
    x = n.input(0)
    rev = n.attr('reverse', 0)
    if rev:
        x = n.op('reverse', x, axis=axis)
    if n.attr('exclusive', 0):      # a 1 in front, the last element dropped
        size = n.shape(0)[axis]
        rank = n.rank(0)
        width = tuple((1, 0) if a == axis else (0, 0) for a in range(rank))
        x = n.op('_npi_pad', x, pad_width=width, mode='constant', constant_values=1)
        x = n.op('slice_axis', x, axis=axis, begin=0, end=size)
    y = n.op('_npi_cumprod', x, axis=axis, dtype=n.dtype(0))
    if rev:
        y = n.op('reverse', y, axis=axis)
    return y


@converter('Col2Im', attributes=('dilations', 'pads', 'strides'))
def _col2im(n):
    image = _ints(n.const(1, 'image_shape'))
    block = _ints(n.const(2, 'block_shape'))
    if len(image) != 2:
        raise n.error("MXNet's col2im makes 2-d images; this one has %d dimensions" % len(image))
    pads = n.attr('pads', (0, 0, 0, 0))
    if tuple(pads[:2]) != tuple(pads[2:]):
        raise n.unsupported('pads', why="MXNet's col2im pads symmetrically")
    return n.op('col2im', n.input(0), output_size=image, kernel=block,
                stride=tuple(n.attr('strides', (1, 1))),
                dilate=tuple(n.attr('dilations', (1, 1))), pad=tuple(pads[:2]))


@converter('RoiAlign', attributes=('coordinate_transformation_mode', 'mode', 'output_height',
                                   'output_width', 'sampling_ratio', 'spatial_scale'))
def _roi_align(n):
    if n.attr('mode', 'avg') != 'avg':
        raise n.unsupported('mode', why="MXNet's ROIAlign averages")
    ctm = n.attr('coordinate_transformation_mode',
                 'half_pixel' if n.opset >= 16 else 'output_half_pixel')
    dt = n.dtype(1)
    rois = n.op('Concat', _reshape(n, n.op('Cast', n.input(2), dtype=dt), (-1, 1)),
                n.input(1), dim=1, num_args=2)
    ratio = n.attr('sampling_ratio', 0)
    return n.op('_contrib_ROIAlign', n.input(0), rois,
                pooled_size=(n.attr('output_height', 1), n.attr('output_width', 1)),
                spatial_scale=n.attr('spatial_scale', 1.0),
                sample_ratio=ratio if ratio > 0 else -1, aligned=ctm == 'half_pixel')


# -- random numbers (neomx's generators: the values are not those of ONNX's seed) ----------

def _random_dtype(n, default):
    code = n.attr('dtype')
    if code is None:
        return default
    return onnx_dtype(code, "ONNX node '%s' (%s, opset %s): attribute dtype"
                      % (n.name, n.op_type, n.opset))


@converter('RandomNormal', 'RandomUniform', 'RandomNormalLike', 'RandomUniformLike',
           attributes=('dtype', 'high', 'low', 'mean', 'scale', 'seed', 'shape'), random=True)
def _random(n):
    normal = n.op_type.startswith('RandomNormal')
    values = (dict(loc=n.attr('mean', 0.0), scale=n.attr('scale', 1.0)) if normal else
              dict(low=n.attr('low', 0.0), high=n.attr('high', 1.0)))
    if n.op_type.endswith('Like'):
        dtype = _random_dtype(n, n.dtype(0))
        x = n.input(0)
        if dtype != n.dtype(0):
            x = n.op('Cast', x, dtype=dtype)
        return n.op('_random_normal_like' if normal else '_random_uniform_like', x, **values)
    return n.op('_random_normal' if normal else '_random_uniform',
                shape=tuple(n.attr('shape')), dtype=_random_dtype(n, 'float32'), **values)


@converter('Bernoulli', attributes=('dtype', 'seed'), random=True)
def _bernoulli(n):
    p = n.input(0)
    draw = n.op('_random_uniform_like', p)
    return n.op('Cast', n.op('_npi_less', draw, p), dtype=_random_dtype(n, n.dtype(0)))


# -- quantization (int8 and uint8: the arithmetic written out in registry operators) ------

_QRANGE = {'uint8': (0, 255), 'int8': (-128, 127), 'int16': (-32768, 32767),
           'int32': (-2 ** 31, 2 ** 31 - 1)}


def _per_axis(n, s, i, axis, rank):
    """Input ``i`` (a scale or zero point, a scalar or one per slice along ``axis``) shaped to
    broadcast against a tensor of ``rank``."""
    shape = n.shape(i)
    if shape is None or len(shape) == 0 or rank == 0 or int(np.prod(shape)) == 1:
        return s
    if len(shape) != 1:
        raise n.error("blocked quantization (a scale of shape %s) is not supported"
                      % (shape,))
    return n.op('Reshape', s, shape=tuple(-1 if a == axis else 1 for a in range(rank)))


def _quantize(n, x, scale, zero, dtype, rank, axis):
    lo, hi = _QRANGE[dtype]
    y = n.op('_npi_rint', n.op('broadcast_div', x, scale))
    if zero is not None:
        y = n.op('broadcast_add', y, n.op('Cast', zero, dtype=n.dtype(0) if _is_float(
            n.dtype(0)) else 'float32'))
    return n.op('Cast', n.op('clip', y, a_min=lo, a_max=hi), dtype=dtype)


@converter('QuantizeLinear', attributes=('axis', 'block_size', 'output_dtype', 'saturate',
                                         'precision'))
def _quantize_linear(n):
    if n.attr('block_size', 0):
        raise n.unsupported('block_size', why='blocked quantization')
    rank = n.rank(0)
    axis = _norm(n.attr('axis', 1), rank) if rank else 0
    if n.has(2):
        dtype = n.dtype(2)
    elif n.attr('output_dtype'):
        dtype = onnx_dtype(n.attr('output_dtype'), "ONNX node '%s' (QuantizeLinear): "
                           "attribute output_dtype" % n.name)
    else:
        dtype = 'uint8'
    if dtype not in _QRANGE:
        raise n.error("quantizing to %s is not supported (neomx has int8, uint8, int16, "
                      "int32)" % dtype)
    x = n.input(0)
    scale = _per_axis(n, n.op('Cast', n.input(1), dtype=n.dtype(0)), 1, axis, rank)
    zero = _per_axis(n, n.input(2), 2, axis, rank) if n.has(2) else None
    return _quantize(n, x, scale, zero, dtype, rank, axis)


@converter('DequantizeLinear', attributes=('axis', 'block_size', 'output_dtype'))
def _dequantize_linear(n):
    if n.attr('block_size', 0):
        raise n.unsupported('block_size', why='blocked quantization')
    rank = n.rank(0)
    axis = _norm(n.attr('axis', 1), rank) if rank else 0
    dtype = n.dtype(1)
    x = n.op('Cast', n.input(0), dtype=dtype)
    if n.has(2):
        zero = _per_axis(n, n.op('Cast', n.input(2), dtype=dtype), 2, axis, rank)
        x = n.op('broadcast_sub', x, zero)
    return n.op('broadcast_mul', x, _per_axis(n, n.input(1), 1, axis, rank))


@converter('DynamicQuantizeLinear')
def _dynamic_quantize_linear(n):
    x = n.input(0)
    lo = n.op('_minimum_scalar', n.op('_np_min', x), scalar=0.0)
    hi = n.op('_maximum_scalar', n.op('_np_max', x), scalar=0.0)
    scale = n.op('_div_scalar', n.op('broadcast_sub', hi, lo), scalar=255.0)
    zero = n.op('clip', n.op('_npi_rint', n.op('negative', n.op('broadcast_div', lo, scale))),
                a_min=0, a_max=255)
    y = n.op('clip', n.op('broadcast_add', n.op('_npi_rint', n.op('broadcast_div', x, scale)),
                          zero), a_min=0, a_max=255)
    return [n.op('Cast', y, dtype='uint8'), scale, n.op('Cast', zero, dtype='uint8')]


def _centred(n, i, zi, dtype):
    """Input ``i`` minus its zero point (input ``zi``), in ``dtype``."""
    x = n.op('Cast', n.input(i), dtype=dtype)
    if n.has(zi):
        z = n.op('Cast', n.input(zi), dtype=dtype)
        if n.shape(zi) and len(n.shape(zi)) == 1 and n.shape(zi)[0] > 1 and n.rank(i) > 1:
            z = n.op('Reshape', z, shape=(-1,) + (1,) * (n.rank(i) - 1)) if i == 0 and \
                n.op_type == 'MatMulInteger' else z
        x = n.op('broadcast_sub', x, z)
    return x


@converter('MatMulInteger')
def _matmul_integer(n):
    # exact in float64 for the products of 8-bit values and their sums
    a, b = _centred(n, 0, 2, 'float64'), _centred(n, 1, 3, 'float64')
    return n.op('Cast', n.op('_npi_matmul', a, b), dtype='int32')


@converter('ConvInteger', attributes=('auto_pad', 'dilations', 'group', 'kernel_shape', 'pads',
                                      'strides'))
def _conv_integer(n):
    x = _centred(n, 0, 2, 'float64')
    w = n.op('Cast', n.input(1), dtype='float64')
    if n.has(3):
        w = n.op('broadcast_sub', w, _per_axis(n, n.op('Cast', n.input(3), dtype='float64'),
                                               3, 0, n.rank(1)))
    return n.op('Cast', _conv_of(n, x, w, None), dtype='int32')


@converter('QLinearMatMul')
def _qlinear_matmul(n):
    # inputs: a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero
    a = n.op('broadcast_mul', _centred(n, 0, 2, 'float64'), n.op('Cast', n.input(1),
                                                                  dtype='float64'))
    b = n.op('broadcast_mul', _centred(n, 3, 5, 'float64'),
             _per_axis(n, n.op('Cast', n.input(4), dtype='float64'), 4, n.rank(3) - 1,
                       n.rank(3)))
    y = n.op('_npi_matmul', a, b)
    scale = n.op('Cast', n.input(6), dtype='float64')
    zero = n.input(7)
    lo, hi = _QRANGE[n.dtype(7)]
    y = n.op('_npi_rint', n.op('broadcast_div', y, scale))
    y = n.op('broadcast_add', y, n.op('Cast', zero, dtype='float64'))
    return n.op('Cast', n.op('clip', y, a_min=lo, a_max=hi), dtype=n.dtype(7))


@converter('QLinearConv', attributes=('auto_pad', 'dilations', 'group', 'kernel_shape', 'pads',
                                      'strides'))
def _qlinear_conv(n):
    # inputs: x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, bias (int32)
    x = n.op('broadcast_mul', _centred(n, 0, 2, 'float64'),
             n.op('Cast', n.input(1), dtype='float64'))
    w = n.op('Cast', n.input(3), dtype='float64')
    rank = n.rank(3)
    if n.has(5):
        w = n.op('broadcast_sub', w, _per_axis(n, n.op('Cast', n.input(5), dtype='float64'),
                                               5, 0, rank))
    w = n.op('broadcast_mul', w, _per_axis(n, n.op('Cast', n.input(4), dtype='float64'), 4, 0,
                                           rank))
    y = _conv_of(n, x, w, None, weight_index=3)
    if n.has(8):    # the bias is quantized with scale x_scale * w_scale
        bias = n.op('broadcast_mul', n.op('Cast', n.input(8), dtype='float64'),
                    n.op('broadcast_mul', n.op('Cast', n.input(1), dtype='float64'),
                         n.op('Cast', n.input(4), dtype='float64')))
        y = n.op('broadcast_add', y, n.op('Reshape', bias, shape=(-1,) + (1,) * (rank - 2)))
    lo, hi = _QRANGE[n.dtype(7)]
    y = n.op('_npi_rint', n.op('broadcast_div', y, n.op('Cast', n.input(6), dtype='float64')))
    y = n.op('broadcast_add', y, n.op('Cast', n.input(7), dtype='float64'))
    return n.op('Cast', n.op('clip', y, a_min=lo, a_max=hi), dtype=n.dtype(7))


# -- control flow -------------------------------------------------------------------------
#
# If, Scan and Loop become MXNet's control-flow nodes (sym.contrib cond, foreach, while_loop),
# which hold their subgraphs: each ONNX subgraph is translated, inside the builder's function,
# into ordinary Symbols that the builder cuts into a graph of its own. What a subgraph reads
# from the outer graph becomes an input of the node. An If whose condition is a constant is
# inlined instead (a flag in a function body, a shape test).

def _control_flow(n, build):
    """Runs ``build()`` (which calls a sym.contrib builder) with the outer constants the
    node's subgraphs read made variables first, outside the builder's scope (parameters of the
    outer graph, fed to the node)."""
    for a in n.attrs.values():
        if hasattr(a, 'node') and hasattr(a, 'output'):
            for name in outer_names(a):
                if name in n.g._params:
                    n.g._symbol_of(name, 'input of a subgraph')
    try:
        return build()
    except ONNXImportError:
        raise
    except (MXNetError, ValueError) as e:     # the builder's checks (MXNet's messages)
        raise n.error(str(e)) from None


def _reads(n, value, var):
    """``value`` made to read ``var`` (MXNet's loops require each step variable to be read):
    ``value`` itself, ``var`` only giving its shape."""
    return n.op('_identity_with_attr_like_rhs', value, var)


def _uses(sym, var):
    from ....symbol.graph import Graph
    return var.name in {v.name for v in Graph.of(sym).variables()}


def _if(n):
    """The branch an If takes: inlined when the condition is a constant; otherwise a
    ``_cond`` node (sym.contrib.cond) holding both branches, whose outputs must then have the
    same shapes."""
    from ....symbol.contrib import cond
    if n.is_const(0):
        branch = n.attr('then_branch') if bool(np.asarray(n.const(0)).reshape(-1)[0]) else \
            n.attr('else_branch')
        inline_graph(n.g, n, branch)
        return
    then, other = n.attr('then_branch'), n.attr('else_branch')
    if len(then.output) != len(other.output):
        raise n.error("the then-branch gives %d outputs and the else-branch %d"
                      % (len(then.output), len(other.output)))
    pred = n.input(0)

    def branch(label, graph):
        return lambda: translate_subgraph(n.g, n, graph, label, [])
    outs = _control_flow(n, lambda: cond(pred, branch('then', then), branch('else', other),
                                         name=n.g._unique(n.name)))
    outs = outs if isinstance(outs, list) else [outs]
    for name, out in zip(n.output_names, outs):
        if name:
            n.g._nodes[name] = out


_if.attributes = None
_if.random = False
_if.expanded = True
_convert_map['If'] = _if


def _move_axis(n, s, source, dest, rank):
    if source == dest:
        return s
    axes = list(range(rank))
    axes.insert(dest, axes.pop(source))
    return n.op('transpose', s, axes=tuple(axes))


@converter('Scan', attributes=('body', 'num_scan_inputs', 'scan_input_axes',
                               'scan_input_directions', 'scan_output_axes',
                               'scan_output_directions'), folds_on=())
def _scan(n):
    """Scan (opset 9 on) as ``_foreach`` (sym.contrib.foreach): the scan inputs moved to have
    their scanned axis first (reversed where scanned backwards), the body translated on their
    slices, its scan outputs stacked and moved to their axes."""
    from ....symbol.contrib import foreach
    if n.opset < 9:
        raise n.error("Scan of opset 8 (a batch axis and sequence lengths) is not supported; "
                      "opset 9 on is")
    body = n.attr('body')
    m = n.attr('num_scan_inputs')
    n_states = len(n) - m
    k = len(body.output) - n_states
    in_axes = n.attr('scan_input_axes', (0,) * m)
    in_dirs = n.attr('scan_input_directions', (0,) * m)
    out_axes = n.attr('scan_output_axes', (0,) * k)
    out_dirs = n.attr('scan_output_directions', (0,) * k)
    states = [n.input(i) for i in range(n_states)]
    data, slices = [], []       # the scanned arrays, axis first; (shape, dtype) of a slice
    read = _read_names(body)
    used = [j for j in range(m) if body.input[n_states + j].name in read]
    for j in range(m):
        i = n_states + j
        rank = n.rank(i)
        axis = _norm(in_axes[j], rank)
        x = _move_axis(n, n.input(i), axis, 0, rank)
        if in_dirs[j]:
            x = n.op('reverse', x, axis=0)
        shape = n.shape(i)
        slices.append((tuple(d for a, d in enumerate(shape) if a != axis), n.dtype(i)))
        # MXNet's foreach requires the body to read every slice: one the body ignores is
        # not fed (another one sets the number of steps)
        if j in used or (not used and j == 0):
            data.append(x)
    if not used:
        raise n.error("the body reads none of the scan inputs")
    info = [(n.shape(i), n.dtype(i)) for i in range(n_states)]

    def step(xs, ss):
        xs = xs if isinstance(xs, list) else [xs]
        ss = ss if isinstance(ss, list) else [ss]
        fed = dict(zip(used, xs))
        # a 1-d array's slices are (1,) in MXNet's foreach, 0-d in ONNX; an ignored slice is
        # bound to nothing the body reads
        xs_in = [(_reshape(n, fed[j], ()) if len(shape) == 0 else fed[j]) if j in fed
                 else None for j, (shape, _) in enumerate(slices)]
        outs = translate_subgraph(n.g, n, body, 'body',
                                  [(s,) + inf for s, inf in zip(ss, info)] +
                                  [(x,) + inf for x, inf in zip(xs_in, slices)])
        new, scanned = outs[:n_states], outs[n_states:]
        new = [s2 if _uses(s2, s) else _reads(n, s2, s) for s2, s in zip(new, ss)]
        return scanned, new
    stacked, finals = _control_flow(n, lambda: foreach(step, data, states,
                                                      name=n.g._unique(n.name)))
    stacked = stacked if isinstance(stacked, list) else [stacked]
    finals = finals if isinstance(finals, list) else [finals]
    outs = []
    for j, y in enumerate(stacked):
        if out_dirs[j]:
            y = n.op('reverse', y, axis=0)
        if out_axes[j]:
            rank = len(n.g._infer_symbol(y)[0])
            y = _move_axis(n, y, 0, _norm(out_axes[j], rank), rank)
        outs.append(y)
    return finals + outs


def _read_names(graph):
    """The names a subgraph's nodes (and their subgraphs) read, and its outputs."""
    import onnx
    read = set(o.name for o in graph.output)
    for nd_ in graph.node:
        read.update(nd_.input)
        for a in nd_.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                read.update(_read_names(a.g))
    return read


@converter('Loop', attributes=('body',), folds_on=())
def _loop(n):
    """Loop as ``_while_loop`` (sym.contrib.while_loop) over (iteration number, condition,
    the loop-carried values). Its scan outputs are stacked to ``max_iterations`` steps: they
    are honest only where the number of steps is known at import (the trip count a constant
    and the condition, if any, true and passed through unchanged by the body), as MXNet's
    shapes are known before running; without scan outputs the loop may stop on any
    condition."""
    from ....symbol.contrib import while_loop
    body = n.attr('body')
    n_carried = len(n) - 2
    k = len(body.output) - 1 - n_carried
    trip = int(_scalar(n.const(0, 'trip count'))) if n.has(0) and (
        k or n.is_const(0)) else None
    passes = _passes_condition(body)
    if k:
        if trip is None:
            raise n.error("a Loop with scan outputs needs a trip count: the outputs' length "
                          "must be known at import")
        if n.has(1) and not passes:
            raise n.error("the body computes the loop's condition and the Loop has scan "
                          "outputs: their length would depend on values computed at run "
                          "time, and neomx's shapes are known before running")
        if trip > 1 << 24:
            raise n.error("trip count %d: the scan outputs would hold that many steps" % trip)
    elif trip is None and not n.has(1):
        raise n.error("neither a trip count nor a condition: the loop would not end")
    runs = True
    if n.has(1) and (k or n.is_const(1)) and passes:
        runs = bool(np.asarray(n.const(1, 'condition')).reshape(-1)[0])
    steps = (trip if runs else 0) if trip is not None else (1 << 62)
    counter = _filled(n, (), 0, 'int64')
    flag = n.input(1) if n.has(1) else _filled(n, (), 1, 'bool')
    carried = [n.input(i) for i in range(2, len(n))]
    info = [((), 'int64'), ((), 'bool')] + [(n.shape(i), n.dtype(i)) for i in range(2, len(n))]

    def func(i, c, *vs):
        outs = translate_subgraph(n.g, n, body, 'body',
                                  [(s,) + inf for s, inf in zip((i, c) + vs, info)])
        c2, new, scanned = outs[0], outs[1:1 + n_carried], outs[1 + n_carried:]
        if not n.has(1):        # a for loop: the body's condition is not read
            c2 = c
        elif not _uses(c2, c):
            c2 = _reads(n, c2, c)
        new = [v2 if _uses(v2, v) else _reads(n, v2, v) for v2, v in zip(new, vs)]
        return scanned, [n.op('_plus_scalar', i, scalar=1), c2] + new
    limit = n.input(0) if n.has(0) and trip is None else None

    def condition(i, c, *vs):
        # a trip count known only at run time is a condition of its own
        return c if limit is None else n.op('_npi_logical_and', c, n.op('_npi_less', i, limit))
    outs, finals = _control_flow(n, lambda: while_loop(
        condition, func, [counter, flag] + carried, max_iterations=steps,
        name=n.g._unique(n.name)))
    return list(finals[2:]) + list(outs)


def _passes_condition(body):
    """Whether a Loop body's condition output is its condition input (or an Identity of it)
    or a constant true: then the loop runs as long as it starts."""
    from onnx import helper, numpy_helper
    if len(body.input) < 2 or not body.output:
        return False
    want, got = body.input[1].name, body.output[0].name
    made = {o: nd for nd in body.node for o in nd.output}
    while got in made and made[got].op_type == 'Identity':
        got = made[got].input[0]
    if got in made and made[got].op_type == 'Constant' and made[got].attribute:
        value = helper.get_attribute_value(made[got].attribute[0])
        return hasattr(value, 'dims') and bool(numpy_helper.to_array(value).all())
    return got == want


@converter('GridSample', attributes=('align_corners', 'mode', 'padding_mode'))
def _grid_sample_op(n):
    mode = {'linear': 'bilinear', 'cubic': 'bicubic'}.get(n.attr('mode', 'bilinear'),
                                                          n.attr('mode', 'bilinear'))
    return n.op('_grid_sample', n.input(0), n.input(1), mode=mode,
                padding_mode=n.attr('padding_mode', 'zeros'),
                align_corners=bool(n.attr('align_corners', 0)))


@converter('DeformConv', attributes=('dilations', 'group', 'kernel_shape', 'offset_group',
                                     'pads', 'strides'))
def _deform_conv(n):
    w_shape = n.static_shape(1, 'for DeformConv (the weight)')
    spatial = len(w_shape) - 2
    if spatial != 2:
        raise n.error("MXNet's deformable convolution is 2-d; this one is %d-d" % spatial)
    pads = tuple(n.attr('pads', (0,) * 4))
    if pads[:2] != pads[2:]:
        raise n.unsupported('pads', why="MXNet's deformable convolution pads symmetrically")
    bias = n.input(3)
    attrs = dict(kernel=tuple(n.attr('kernel_shape', w_shape[2:])),
                 stride=tuple(n.attr('strides', (1, 1))),
                 dilate=tuple(n.attr('dilations', (1, 1))), pad=pads[:2],
                 num_filter=w_shape[0], num_group=n.attr('group', 1),
                 num_deformable_group=n.attr('offset_group', 1), no_bias=bias is None)
    if n.has(4):
        return n.op('_contrib_ModulatedDeformableConvolution', n.input(0), n.input(2),
                    n.input(4), n.input(1), bias, **attrs)
    return n.op('_contrib_DeformableConvolution', n.input(0), n.input(2), n.input(1), bias,
                **attrs)


@converter('MaxUnpool', attributes=('kernel_shape', 'pads', 'strides'))
def _max_unpool(n):
    # the values written at their indices (positions in the flattened output) into zeros
    shape = n.static_shape(0, 'for MaxUnpool')
    kernel = n.attr('kernel_shape')
    spatial = len(kernel)
    strides = n.attr('strides', (1,) * spatial)
    pads = n.attr('pads', (0,) * (2 * spatial))
    default = tuple(shape[:2]) + tuple((d - 1) * s + k - pads[i] - pads[i + spatial]
                                       for i, (d, s, k) in enumerate(zip(shape[2:], strides,
                                                                          kernel)))
    out = _ints(n.const(2, 'output_shape')) if n.has(2) else default
    idx = _reshape(n, n.input(1), (-1,))
    if tuple(out) != default:
        # the indices count positions of the default output: moved to the given one's
        plane = int(np.prod(default[2:]))
        rest = n.op('_npi_mod_scalar', idx, scalar=plane)
        moved = n.op('_mul_scalar', n.op('_npi_floor_divide_scalar', idx, scalar=plane),
                     scalar=int(np.prod(out[2:])))
        for a in range(2, len(out)):
            inner = int(np.prod(default[a + 1:]))
            coord = n.op('_npi_floor_divide_scalar', rest, scalar=inner)
            rest = n.op('_npi_mod_scalar', rest, scalar=inner)
            moved = n.op('broadcast_add', moved, n.op('_mul_scalar', coord,
                                                      scalar=int(np.prod(out[a + 1:]))))
        idx = moved
    zeros = _filled(n, (int(np.prod(out)),), 0, n.dtype(0))
    flat = n.op('_scatter_elements', zeros, idx, _reshape(n, n.input(0), (-1,)), axis=0)
    return _reshape(n, flat, out)


@converter('BitShift', attributes=('direction',))
def _bit_shift(n):
    direction = n.attr('direction')
    if direction not in ('LEFT', 'RIGHT'):
        raise n.unsupported('direction')
    return n.op('_npi_bitwise_left_shift' if direction == 'LEFT' else
                '_npi_bitwise_right_shift', n.input(0), n.input(1))
