"""The operators of MXNet's NumPy interface (``mx.np``, ``mx.npx``), under MXNet's names
(``_npi_add``, ``_np_sum``, ``_npx_relu``, ...), so a hybridized NumPy-style block exports the
graph MXNet would.

MXNet's NumPy rules kept here, where they differ from the legacy operators:

- arrays may be 0-d, and a full reduction gives shape ``()``;
- two arrays of different dtypes are promoted (bool < integers < floats; ``int8`` with
  ``uint8`` gives ``int32``), where legacy operators refuse them;
- an array with a Python number keeps the array's dtype (the number is cast to it first, so
  ``int32_array + 1.5`` adds 1); a bool array with a number gives ``int64``;
- true division of integers gives ``float32`` (MXNet's default float), as does ``mean``;
- comparisons give ``bool``.
"""
import ast
import math

import torch

from ..base import dtype_name, dtype_torch
from .elemwise import _mod, _pow, scalar_tensor
from .reduce import reduce_axes
from .shape import _reshape_back
from .registry import Attr, Bool, DType, Float, Int, ShapeError, Str, register
from .registry import get as _get_op

__all__ = ['Lit', 'promote', 'result_dtype', 'np_register']


class Lit(Attr):
    """Any Python literal (numbers, strings, None, tuples of them), canonical and hashable:
    lists become tuples. In symbol JSON it is its ``repr``, read back with ``literal_eval``."""
    kind = 'Python literal'

    def parse(self, value):
        if isinstance(value, str):
            try:
                value = ast.literal_eval(value.strip())
            except (ValueError, SyntaxError):
                return value
        return _canonical(value)

    def format(self, value):
        return repr(value)


def _canonical(value):
    if isinstance(value, (list, tuple)):
        return tuple(_canonical(v) for v in value)
    if hasattr(value, 'item') and not isinstance(value, torch.Tensor):     # numpy scalars
        return value.item()
    return value


def np_register(name, inputs=('a',), view=False, **spec):
    """``register`` with the defaults of this module: attributes are ``Lit`` unless given as
    parsers (``{'axis': None}`` declares ``axis`` with default None)."""
    attrs = {k: (v if isinstance(v, Attr) else Lit(v)) for k, v in spec.pop('attrs', {}).items()}
    return register(name, inputs=inputs, attrs=attrs, view=view, **spec)


# -- dtypes -----------------------------------------------------------------------------------

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def promote(a, b):
    """The dtype of an arithmetic result of torch dtypes ``a`` and ``b``, MXNet's rule."""
    if a == b:
        return a
    if {a, b} == {torch.int8, torch.uint8}:
        return torch.int32
    return torch.promote_types(a, b)


def result_dtype(*dtypes):
    """``promote`` over dtype names; the name of the result."""
    t = dtype_torch(dtypes[0])
    for d in dtypes[1:]:
        t = promote(t, dtype_torch(d))
    return dtype_name(t)


def _promoted(a, b):
    t = promote(a.dtype, b.dtype)
    return (a if a.dtype == t else a.to(t)), (b if b.dtype == t else b.to(t))


def _bshape(a, b):
    try:
        return tuple(torch.broadcast_shapes(a, b))
    except RuntimeError:
        raise ShapeError("operands could not be broadcast together with shapes %s %s"
                         % (tuple(a), tuple(b))) from None


# -- binary -----------------------------------------------------------------------------------

def _true_divide(a, b):
    if not a.is_floating_point() and not b.is_floating_point():
        a, b = a.to(torch.float32), b.to(torch.float32)
    return torch.true_divide(*_promoted(a, b))


def _floor_divide(a, b):
    a, b = _promoted(a, b)
    if a.is_floating_point():
        return torch.floor(a / b)
    zero = b == 0
    return torch.where(zero, torch.zeros_like(a),
                       torch.div(a, torch.where(zero, torch.ones_like(b), b),
                                 rounding_mode='floor'))


def _logical(f):
    return lambda a, b: f(a != 0 if a.dtype != torch.bool else a,
                          b != 0 if b.dtype != torch.bool else b)


def _bitwise(f):
    def k(a, b):
        a, b = _promoted(a, b)
        return f(a, b)
    return k


def _shift(left):
    """NumPy's left_shift / right_shift (MXNet 2's bitwise_left_shift / bitwise_right_shift)
    with the result of a shift by a negative count or by the width or more defined as ONNX's
    BitShift does: 0, or -1 for a negative value shifted right."""
    def k(a, b):
        a, b = _promoted(a, b)
        bits = torch.iinfo(a.dtype).bits if a.dtype != torch.bool else 8
        out = (b < 0) | (b >= bits)
        count = b.clamp(0, bits - 1)
        if left:
            r = torch.bitwise_left_shift(a, count)
            return torch.where(out, torch.zeros_like(r), r)
        r = torch.bitwise_right_shift(a, count)
        fill = (torch.where(a < 0, -torch.ones_like(r), torch.zeros_like(r))
                if a.dtype.is_signed else torch.zeros_like(r))
        return torch.where(out, fill, r)
    k.__name__ = 'bitwise_left_shift' if left else 'bitwise_right_shift'
    return k


def _arctan2(a, b):
    a, b = _promoted(a, b)
    if not a.is_floating_point():
        a, b = a.to(torch.float32), b.to(torch.float32)
    return torch.atan2(a, b)


def _float_binary(f):
    def k(a, b):
        a, b = _promoted(a, b)
        if not a.is_floating_point():
            a, b = a.to(torch.float32), b.to(torch.float32)
        return f(a, b)
    return k


def _ldexp(a, b):
    a = a if a.is_floating_point() else a.to(torch.float32)
    return a * torch.pow(2.0, b.to(a.dtype))


def _lcm(a, b):
    return torch.lcm(*_promoted(a, b))


def _gcd(a, b):
    return torch.gcd(*_promoted(a, b))


# name: (kernel on promoted or raw tensors, result kind). 'same': the promoted dtype.
_ARITH = {
    'add': torch.add, 'subtract': torch.sub, 'multiply': torch.mul, 'mod': _mod,
    'power': _pow, 'maximum': torch.maximum, 'minimum': torch.minimum,
    'fmax': torch.fmax, 'fmin': torch.fmin, 'fmod': torch.fmod,
}
_COMPARE = {
    'equal': torch.eq, 'not_equal': torch.ne, 'greater': torch.gt, 'greater_equal': torch.ge,
    'less': torch.lt, 'less_equal': torch.le,
}
_OTHER = {
    'true_divide': _true_divide, 'floor_divide': _floor_divide,
    'logical_and': _logical(torch.logical_and), 'logical_or': _logical(torch.logical_or),
    'logical_xor': _logical(torch.logical_xor),
    'bitwise_and': _bitwise(torch.bitwise_and), 'bitwise_or': _bitwise(torch.bitwise_or),
    'bitwise_xor': _bitwise(torch.bitwise_xor), 'arctan2': _arctan2,
    'bitwise_left_shift': _shift(True), 'bitwise_right_shift': _shift(False),
    'hypot': _float_binary(torch.hypot), 'copysign': _float_binary(torch.copysign),
    'ldexp': _ldexp, 'lcm': _lcm, 'gcd': _gcd,
}


def _arith_kernel(f):
    def k(lhs, rhs):
        if lhs.dtype == torch.bool and rhs.dtype == torch.bool and f in (torch.add, torch.sub,
                                                                          torch.mul):
            # NumPy: bool + bool is logical or, bool * bool logical and.
            return (torch.logical_or if f is torch.add else torch.logical_and)(lhs, rhs) \
                if f is not torch.sub else torch.logical_xor(lhs, rhs)
        a, b = _promoted(lhs, rhs)
        return f(a, b)
    return k


def _compare_kernel(f):
    def k(lhs, rhs):
        return f(*_promoted(lhs, rhs))
    return k


def _binary_rule(kind):
    def rule(attrs, shapes, dtypes):
        shape = _bshape(shapes[0], shapes[1])
        if kind == 'bool':
            return (shape,), ('bool',)
        d = result_dtype(dtypes[0], dtypes[1])
        if kind == 'float' and d not in ('float16', 'float32', 'float64', 'bfloat16'):
            d = 'float32'
        return (shape,), (d,)
    return rule


for _n, _f in _ARITH.items():
    register('_npi_' + _n, inputs=('lhs', 'rhs'), infer=_binary_rule('same'),
             infer_attrs=())(_arith_kernel(_f))
for _n, _f in _COMPARE.items():
    register('_npi_' + _n, inputs=('lhs', 'rhs'), infer=_binary_rule('bool'),
             infer_attrs=())(_compare_kernel(_f))
for _n, _f in _OTHER.items():
    _kind = ('bool' if _n.startswith('logical') else
             'float' if _n in ('true_divide', 'arctan2', 'hypot', 'copysign', 'ldexp') else 'same')
    register('_npi_' + _n, inputs=('lhs', 'rhs'), infer=_binary_rule(_kind),
             infer_attrs=())(_f)


# -- with a scalar ------------------------------------------------------------------------------

def _scalar_operand(x, scalar):
    """(array, scalar) as MXNet computes them: floating-point arrays take the scalar in their
    dtype (a 0-d tensor); integer arrays take it truncated to an integer; a bool array becomes
    int64."""
    if x.is_floating_point():
        return x, scalar_tensor(float(scalar), x.dtype)
    if x.dtype == torch.bool:
        x = x.to(torch.int64)
    return x, int(scalar)


def _scalar_kernel(f, reverse):
    def k(data, scalar, is_int=True):
        x, s = _scalar_operand(data, scalar)
        if isinstance(s, int) and f in (torch.maximum, torch.minimum, torch.fmax, torch.fmin,
                                        torch.fmod, _mod, _pow, torch.sub):
            s = torch.tensor(s, dtype=x.dtype)
        r = f(s, x) if reverse else f(x, s)
        return r if r.dtype == x.dtype else r.to(x.dtype)
    return k


def _scalar_compare(f):
    def k(data, scalar, is_int=True):
        x, s = _scalar_operand(data, scalar)
        return f(x, s)
    return k


def _true_divide_scalar(reverse):
    def k(data, scalar, is_int=True):
        x = data if data.is_floating_point() else data.to(torch.float32)
        s = scalar_tensor(float(scalar), x.dtype)
        return torch.true_divide(s, x) if reverse else torch.true_divide(x, s)
    return k


def _floor_divide_scalar(reverse):
    def k(data, scalar, is_int=True):
        x, s = _scalar_operand(data, scalar)
        s = torch.tensor(s, dtype=x.dtype) if not isinstance(s, torch.Tensor) else s
        return _floor_divide(s, x) if reverse else _floor_divide(x, s)
    return k


def _scalar_rule(kind):
    def rule(attrs, shapes, dtypes):
        d = dtypes[0]
        if kind == 'bool':
            d = 'bool'
        elif kind == 'float':
            d = d if d in ('float16', 'float32', 'float64', 'bfloat16') else 'float32'
        elif d == 'bool':
            d = 'int64'
        return (shapes[0],), (d,)
    return rule


_SCALAR_ATTRS = {'scalar': Float(1.0), 'is_int': Bool(True)}
_NONCOMMUTATIVE = ('subtract', 'mod', 'power', 'fmod')


def _reg_scalar(name, kernel, kind):
    register(name, inputs=('data',), attrs=_SCALAR_ATTRS, infer=_scalar_rule(kind),
             infer_attrs=())(kernel)


for _n, _f in _ARITH.items():
    _reg_scalar('_npi_%s_scalar' % _n, _scalar_kernel(_f, False), 'same')
    if _n in _NONCOMMUTATIVE:
        _reg_scalar('_npi_r%s_scalar' % _n, _scalar_kernel(_f, True), 'same')
for _n, _f in _COMPARE.items():
    _reg_scalar('_npi_%s_scalar' % _n, _scalar_compare(_f), 'bool')
_reg_scalar('_npi_true_divide_scalar', _true_divide_scalar(False), 'float')
_reg_scalar('_npi_rtrue_divide_scalar', _true_divide_scalar(True), 'float')
_reg_scalar('_npi_floor_divide_scalar', _floor_divide_scalar(False), 'same')
_reg_scalar('_npi_rfloor_divide_scalar', _floor_divide_scalar(True), 'same')
for _n in ('logical_and', 'logical_or', 'logical_xor'):
    _reg_scalar('_npi_%s_scalar' % _n,
                (lambda f: lambda data, scalar, is_int=True: f(data != 0, bool(scalar)))(
                    {'logical_and': torch.logical_and, 'logical_or': torch.logical_or,
                     'logical_xor': torch.logical_xor}[_n]), 'bool')
for _n, _f in (('bitwise_and', torch.bitwise_and), ('bitwise_or', torch.bitwise_or),
               ('bitwise_xor', torch.bitwise_xor)):
    _reg_scalar('_npi_%s_scalar' % _n,
                (lambda f: lambda data, scalar, is_int=True:
                 f(data, torch.tensor(int(scalar) if data.dtype != torch.bool else bool(scalar),
                                      dtype=data.dtype)))(_f), 'same')
for _n, _f, _rev in (('arctan2', torch.atan2, False), ('rarctan2', torch.atan2, True),
                     ('hypot', torch.hypot, False), ('copysign', torch.copysign, False),
                     ('rcopysign', torch.copysign, True)):
    def _k(data, scalar, is_int=True, _f=_f, _rev=_rev):
        x = data if data.is_floating_point() else data.to(torch.float32)
        s = torch.full_like(x, float(scalar))
        return _f(s, x) if _rev else _f(x, s)
    _reg_scalar('_npi_%s_scalar' % _n, _k, 'float')


# -- unary ------------------------------------------------------------------------------------

def _float_unary(f):
    """NumPy's float functions: integer inputs compute in float32 (MXNet's default float)."""
    def k(x):
        if not x.is_floating_point():
            x = x.to(torch.float32)
        return f(x)
    return k


def _same_unary(f):
    def k(x):
        r = f(x)
        return r if r.dtype == x.dtype else r.to(x.dtype)
    return k


def _round_half_even(x, decimals=0):
    """NumPy's around: halves to even; negative ``decimals`` round to tens, hundreds..."""
    if not x.is_floating_point():
        if decimals >= 0:
            return x.clone()
        f = 10.0 ** (-decimals)
        return (torch.round(x.double() / f) * f).to(x.dtype)
    if decimals < 0:
        f = 10.0 ** (-decimals)
        return torch.round(x / f) * f
    return torch.round(x, decimals=decimals)


def _np_sign(x):
    return torch.sign(x) if x.dtype != torch.bool else x.clone()


def _np_abs(x):
    return torch.abs(x) if x.dtype != torch.bool else x.clone()


def _np_rint(x):
    return torch.round(x) if x.is_floating_point() else x.clone()


def _np_cbrt(x):
    return torch.sign(x) * torch.pow(torch.abs(x), 1.0 / 3)


def _np_gamma(x):
    from .elemwise import _gamma
    return _gamma(x)


def _np_square(x):
    return torch.square(x) if x.dtype != torch.bool else x.clone()


_FLOAT_UNARY = {
    'exp': torch.exp, 'expm1': torch.expm1, 'log': torch.log, 'log1p': torch.log1p,
    'log2': torch.log2, 'log10': torch.log10, 'sqrt': torch.sqrt, 'cbrt': _np_cbrt,
    'sin': torch.sin, 'cos': torch.cos, 'tan': torch.tan, 'arcsin': torch.asin,
    'arccos': torch.acos, 'arctan': torch.atan, 'sinh': torch.sinh, 'cosh': torch.cosh,
    'tanh': torch.tanh, 'arcsinh': torch.asinh, 'arccosh': torch.acosh, 'arctanh': torch.atanh,
    'degrees': torch.rad2deg, 'radians': torch.deg2rad, 'reciprocal': torch.reciprocal,
    'rad2deg': torch.rad2deg, 'deg2rad': torch.deg2rad,
}
_SAME_UNARY = {
    'negative': torch.neg, 'absolute': _np_abs, 'sign': _np_sign, 'square': _np_square,
    'rint': _np_rint, 'fix': torch.trunc, 'trunc': torch.trunc, 'floor': torch.floor,
    'ceil': torch.ceil,
}
_FLOOR_LIKE = ('fix', 'trunc', 'floor', 'ceil', 'negative')


def _unary_rule(kind):
    def rule(attrs, shapes, dtypes):
        d = dtypes[0]
        if kind == 'float' and d not in ('float16', 'float32', 'float64', 'bfloat16'):
            d = 'float32'
        elif kind == 'bool':
            d = 'bool'
        return (shapes[0],), (d,)
    return rule


for _n, _f in _FLOAT_UNARY.items():
    register('_npi_' + _n, inputs=('x',), infer=_unary_rule('float'), infer_attrs=())(
        _float_unary(_f))
for _n, _f in _SAME_UNARY.items():
    if _n in _FLOOR_LIKE:
        _f = (lambda f: lambda x: f(x) if x.is_floating_point() or f is torch.neg else x.clone())(_f)
    register('_npi_' + _n, inputs=('x',), infer=_unary_rule('same'), infer_attrs=())(
        _same_unary(_f))
for _n, _f in (('logical_not', torch.logical_not), ('isnan', torch.isnan),
               ('isinf', torch.isinf), ('isfinite', torch.isfinite),
               ('isposinf', torch.isposinf), ('isneginf', torch.isneginf),
               ('signbit', torch.signbit)):
    register('_npi_' + _n, inputs=('x',), infer=_unary_rule('bool'), infer_attrs=())(_f)
register('_npi_bitwise_not', inputs=('x',), infer=_unary_rule('same'), infer_attrs=())(
    lambda x: torch.bitwise_not(x))
register('_npi_around', inputs=('x',), attrs={'decimals': Int(0)}, infer=_unary_rule('same'),
         infer_attrs=())(_round_half_even)


# -- npx activations and friends (same dtype, same shape) -------------------------------------

def _npx_relu(x):
    return torch.relu(x)


def _npx_sigmoid(x):
    return torch.sigmoid(x)


register('_npx_relu', inputs=('data',), infer=_unary_rule('same'), infer_attrs=())(_npx_relu)
register('_npx_sigmoid', inputs=('data',), infer=_unary_rule('same'), infer_attrs=())(
    _npx_sigmoid)


# -- creation ---------------------------------------------------------------------------------

def _np_shape(shape):
    if shape is None:
        return ()
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(d) for d in shape)


def _check_shape(shape):
    for d in shape:
        if d < 0:
            raise ShapeError("negative dimensions are not allowed: shape %s" % (shape,))
    return shape


def _creation_rule(attrs, shapes, dtypes):
    shape = _check_shape(_np_shape(attrs['shape']))
    return (shape,), (attrs.get('dtype') or 'float32',)


_NP_CREATE = {'shape': Lit(()), 'ctx': Str(''), 'dtype': DType('float32')}


def _np_zeros(shape, ctx, dtype, device):
    return torch.zeros(_np_shape(shape), dtype=dtype_torch(dtype), device=device)


def _np_ones(shape, ctx, dtype, device):
    return torch.ones(_np_shape(shape), dtype=dtype_torch(dtype), device=device)


def _np_full(shape, ctx, dtype, value, device):
    return torch.full(_np_shape(shape), value, dtype=dtype_torch(dtype), device=device)


def _np_empty(shape, ctx, dtype, device):
    return torch.empty(_np_shape(shape), dtype=dtype_torch(dtype), device=device)


register('_npi_zeros', inputs=(), attrs=_NP_CREATE, creation=True, infer=_creation_rule)(
    _np_zeros)
register('_npi_ones', inputs=(), attrs=_NP_CREATE, creation=True, infer=_creation_rule)(
    _np_ones)
register('_npi_empty', inputs=(), attrs=_NP_CREATE, creation=True, infer=_creation_rule)(
    _np_empty)
register('_npi_full', inputs=(), attrs=dict(_NP_CREATE, value=Lit(0.0)), creation=True,
         infer=_creation_rule)(_np_full)


def _arange_count(start, stop, step):
    if stop is None:
        start, stop = 0.0, start
    if step == 0:
        raise ShapeError("arange: step must not be 0")
    return max(int(math.ceil((stop - start) / step)), 0), start


def _np_arange_rule(attrs, shapes, dtypes):
    n, _ = _arange_count(attrs['start'], attrs['stop'], attrs['step'])
    return ((n,),), (attrs['dtype'] or 'float32',)


def _np_arange(start, stop, step, ctx, dtype, device):
    n, start = _arange_count(start, stop, step)
    if device.type == 'meta':
        return torch.empty((n,), dtype=dtype_torch(dtype), device=device)
    r = torch.arange(n, dtype=torch.float64, device=device) * step + start
    return r.to(dtype_torch(dtype))


register('_npi_arange', inputs=(), creation=True, infer=_np_arange_rule,
         attrs={'start': Float(0.0), 'stop': Lit(None), 'step': Float(1.0), 'ctx': Str(''),
                'dtype': DType('float32')})(_np_arange)


def _np_eye(N, M, k, ctx, dtype, device):
    M = N if M is None else M
    out = torch.zeros((N, M), dtype=dtype_torch(dtype), device=device)
    if device.type != 'meta' and N and M:
        out.diagonal(k).fill_(1)
    return out


def _eye_rule(attrs, shapes, dtypes):
    shape = (attrs['N'], attrs['N'] if attrs['M'] is None else attrs['M'])
    if shape[0] < 0 or shape[1] < 0:
        raise ShapeError("eye: negative dimensions are not allowed: N=%d, M=%d" % shape)
    return (shape,), (attrs['dtype'] or 'float32',)


register('_npi_eye', inputs=(), creation=True, infer=_eye_rule,
         attrs={'N': Int(), 'M': Lit(None), 'k': Int(0), 'ctx': Str(''),
                'dtype': DType('float32')})(_np_eye)


def _np_linspace(start, stop, num, endpoint, ctx, dtype, device):
    if device.type == 'meta':
        return torch.empty((num,), dtype=dtype_torch(dtype), device=device)
    # NumPy's formula (start + i * step, the last value set to stop), so that values landing
    # on integers stay exact: torch.linspace interpolates from both ends
    div = (num - 1) if endpoint else num
    r = torch.arange(num, dtype=torch.float64, device=device)
    if div == 0:
        r = r * (stop - start) + start
    else:
        step = (stop - start) / div
        r = (r * step if step != 0 else r / div * (stop - start)) + start
    if endpoint and num > 1:
        r[-1] = stop
    out = dtype_torch(dtype)
    if not out.is_floating_point:
        r = r.floor()       # NumPy 2 rounds towards -inf for integer dtypes (1.x truncated)
    return r.to(out)


register('_npi_linspace', inputs=(), creation=True,
         infer=lambda a, s, d: (((a['num'],),), (a['dtype'] or 'float32',)),
         attrs={'start': Float(), 'stop': Float(), 'num': Int(50), 'endpoint': Bool(True),
                'ctx': Str(''), 'dtype': DType('float32')})(_np_linspace)


def _full_like(a, fill_value, dtype):
    return torch.full(a.shape, fill_value, dtype=dtype_torch(dtype) if dtype else a.dtype,
                      device=a.device)


register('_npi_full_like', inputs=('a',), attrs={'fill_value': Lit(0.0), 'dtype': DType(None)},
         infer=lambda a, s, d: ((s[0],), (a['dtype'] or d[0],)))(_full_like)


# -- reductions ---------------------------------------------------------------------------------

def _axes(ndim, axis):
    """The axes a NumPy reduction over ``axis`` reduces: all for None, none for ()."""
    if axis is None:
        return tuple(range(ndim))
    if axis == ():
        return ()
    return reduce_axes(ndim, axis, False)


def _red_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if k in axes else d for k, d in enumerate(shape))
    return tuple(d for k, d in enumerate(shape) if k not in axes)


def _sum_dtype(d):
    return 'int64' if d == 'bool' else d


def _mean_dtype(d):
    return d if d in ('float16', 'float32', 'float64', 'bfloat16') else 'float32'


_RED_DTYPE = {'sum': _sum_dtype, 'prod': _sum_dtype, 'mean': _mean_dtype, 'max': None,
              'min': None, 'std': _mean_dtype, 'var': _mean_dtype}


def _reduce_rule(kind):
    def rule(attrs, shapes, dtypes):
        shape = shapes[0]
        axes = _axes(len(shape), attrs['axis'])
        if kind in ('max', 'min') and any(shape[a] == 0 for a in axes) and \
                attrs.get('initial') is None:
            raise ShapeError("zero-size array to reduction operation %s which has no identity"
                             % kind)
        d = attrs.get('dtype') or (_RED_DTYPE[kind] or (lambda d: d))(dtypes[0])
        return (_red_shape(shape, axes, attrs['keepdims']),), (d,)
    return rule


def _acc(t, src):
    """The dtype a sum into ``t`` accumulates in (MXNet's and NumPy's: float16 in float32,
    a float result of float64 data in float64)."""
    if t == torch.float16 or t == torch.bfloat16:
        return torch.float32
    if t.is_floating_point and src == torch.float64:
        return torch.float64
    return t


def _sum_kernel(a, axis, dtype, keepdims, initial):
    axes = _axes(a.dim(), axis)
    t = dtype_torch(dtype) if dtype else (torch.int64 if a.dtype == torch.bool else a.dtype)
    acc = _acc(t, a.dtype)
    if a.requires_grad and torch.is_grad_enabled() and not t.is_floating_point:
        # recorded into an integer result: the float sum is the shadow autograd follows
        # (ndarray.py casts it), as MXNet differentiates integer sums
        r = torch.sum(a.double(), dim=axes, keepdim=keepdims) if axes else a.double()
    else:
        r = (torch.sum(a, dim=axes, keepdim=keepdims, dtype=acc).to(t) if axes
             else a.to(t, copy=True))
    if initial is not None:
        r = r + initial
    return r


def _prod_kernel(a, axis, dtype, keepdims, initial):
    axes = _axes(a.dim(), axis)
    t = dtype_torch(dtype) if dtype else (torch.int64 if a.dtype == torch.bool else a.dtype)
    r = a.to(t)
    for ax in sorted(axes, reverse=True):
        r = torch.prod(r, dim=ax, keepdim=keepdims)
    if not axes:
        r = r.clone()
    if initial is not None:
        r = r * initial
    return r


def _mean_kernel(a, axis, dtype, keepdims):
    axes = _axes(a.dim(), axis)
    t = dtype_torch(dtype) if dtype else (a.dtype if a.is_floating_point() else torch.float32)
    if not axes:
        if a.requires_grad and torch.is_grad_enabled() and not t.is_floating_point:
            return a.double()       # the shadow of the integer result (see _sum_kernel)
        return a.to(t, copy=True)
    if t.is_floating_point:
        # accumulated in the wider of the data's and the result's float (float16 in float32)
        acc = torch.promote_types(a.dtype, t) if a.is_floating_point() else t
        acc = torch.float32 if acc == torch.float16 else acc
        return torch.mean(a.to(acc), dim=axes, keepdim=keepdims).to(t)
    # an integer result: the mean in float64, truncated (NumPy's astype); recorded, the
    # float mean is the shadow autograd follows (ndarray.py casts it)
    if a.requires_grad and torch.is_grad_enabled():
        return torch.mean(a.to(torch.float64), dim=axes, keepdim=keepdims)
    # NumPy sums in the integer dtype (wrapping around), then divides
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    total = torch.sum(a.to(t), dim=axes, keepdim=keepdims).to(t)
    return (total.double() / n).to(t)


def _moment_kernel(name):
    def k(a, axis, dtype, ddof, keepdims):
        axes = _axes(a.dim(), axis)
        t = dtype_torch(dtype) if dtype else (a.dtype if a.is_floating_point()
                                              else torch.float32)
        x = a.to(t)
        n = 1
        for ax in axes:
            n *= x.shape[ax]
        # NumPy's formula, sum((x - mean)**2) / (n - ddof): 0/0 is nan, as NumPy gives
        if axes:
            mean = torch.mean(x, dim=axes, keepdim=True)
            sq = torch.sum((x - mean) ** 2, dim=axes, keepdim=keepdims)
        else:
            sq = torch.zeros_like(x)
        v = sq / float(n - ddof) if n - ddof != 0 else sq / torch.zeros((), dtype=t)
        return v if name == 'var' else torch.sqrt(v)
    return k


def _minmax_kernel(f):
    def k(a, axis, keepdims, initial):
        axes = _axes(a.dim(), axis)
        if not axes:
            r = a.clone()
        elif a.numel() == 0:
            raise ValueError("zero-size array to reduction operation which has no identity")
        else:
            r = f(a, dim=axes, keepdim=keepdims)
        if initial is not None:
            r = (torch.clamp(r, min=initial) if f is torch.amax else torch.clamp(r, max=initial))
        return r
    return k


_RED = {'axis': Lit(None), 'dtype': DType(None), 'keepdims': Bool(False)}
register('_np_sum', inputs=('a',), attrs=dict(_RED, initial=Lit(None)),
         infer=_reduce_rule('sum'))(_sum_kernel)
register('_np_prod', inputs=('a',), attrs=dict(_RED, initial=Lit(None)),
         infer=_reduce_rule('prod'))(_prod_kernel)
register('_npi_mean', inputs=('a',), attrs=_RED, infer=_reduce_rule('mean'))(_mean_kernel)
register('_npi_std', inputs=('a',), attrs=dict(_RED, ddof=Int(0)),
         infer=_reduce_rule('std'))(_moment_kernel('std'))
register('_npi_var', inputs=('a',), attrs=dict(_RED, ddof=Int(0)),
         infer=_reduce_rule('var'))(_moment_kernel('var'))
_MM = {'axis': Lit(None), 'keepdims': Bool(False), 'initial': Lit(None)}
register('_np_max', inputs=('a',), attrs=_MM, infer=_reduce_rule('max'))(
    _minmax_kernel(torch.amax))
register('_np_min', inputs=('a',), attrs=_MM, infer=_reduce_rule('min'))(
    _minmax_kernel(torch.amin))


def _logic_red(f):
    def k(a, axis, keepdims):
        axes = _axes(a.dim(), axis)
        x = a != 0 if a.dtype != torch.bool else a
        if not axes:
            return x.clone()
        r = x
        for ax in sorted(axes, reverse=True):
            r = f(r, dim=ax, keepdim=keepdims)
        return r
    return k


def _logic_rule(attrs, shapes, dtypes):
    axes = _axes(len(shapes[0]), attrs['axis'])
    return (_red_shape(shapes[0], axes, attrs['keepdims']),), ('bool',)


register('_np_all', inputs=('a',), attrs={'axis': Lit(None), 'keepdims': Bool(False)},
         infer=_logic_rule)(_logic_red(torch.all))
register('_np_any', inputs=('a',), attrs={'axis': Lit(None), 'keepdims': Bool(False)},
         infer=_logic_rule)(_logic_red(torch.any))


def _arg_kernel(f):
    def k(data, axis, keepdims):
        if data.dim() == 0:
            return torch.zeros((), dtype=torch.int64, device=data.device)
        if axis is None:
            r = f(data.reshape(-1))
            return r.reshape((1,) * data.dim()) if keepdims else r
        return f(data, dim=axis, keepdim=keepdims)
    return k


def _arg_rule(attrs, shapes, dtypes):
    shape = shapes[0]
    axis = attrs['axis']
    if not shape:
        if axis not in (None, 0, -1):
            raise ShapeError("axis %s is out of bounds for array of dimension 0" % (axis,))
        return ((),), ('int64',)
    axes = _axes(len(shape), axis)
    if any(shape[a] == 0 for a in axes) or (axis is None and 0 in shape):
        raise ShapeError("attempt to get argmax/argmin of an empty sequence")
    return (_red_shape(shape, axes, attrs['keepdims']),), ('int64',)


register('_npi_argmax', inputs=('data',), attrs={'axis': Lit(None), 'keepdims': Bool(False)},
         infer=_arg_rule)(_arg_kernel(torch.argmax))
register('_npi_argmin', inputs=('data',), attrs={'axis': Lit(None), 'keepdims': Bool(False)},
         infer=_arg_rule)(_arg_kernel(torch.argmin))


# -- shapes -----------------------------------------------------------------------------------

def np_reshape_target(src, newshape, name='reshape'):
    """NumPy's reshape target: one -1 is inferred; the sizes must match."""
    newshape = _np_shape(newshape)
    size = math.prod(src)
    unknown = [i for i, d in enumerate(newshape) if d == -1]
    if len(unknown) > 1 or any(d < -1 for d in newshape):
        raise ShapeError("%s: can only specify one unknown dimension (-1), got %s"
                         % (name, newshape))
    if unknown:
        rest = math.prod(d for d in newshape if d != -1)
        if rest == 0 or size % rest:
            raise ShapeError("%s: cannot reshape array of size %d into shape %s"
                             % (name, size, newshape))
        newshape = tuple(size // rest if d == -1 else d for d in newshape)
    if math.prod(newshape) != size:
        raise ShapeError("%s: cannot reshape array of size %d into shape %s"
                         % (name, size, newshape))
    return newshape


def _reshape_rule(attrs, shapes, dtypes):
    return (np_reshape_target(shapes[0], attrs['newshape']),), (dtypes[0],)


def _np_reshape(a, newshape, order='C'):
    return a.reshape(np_reshape_target(tuple(a.shape), newshape))


register('_np_reshape', inputs=('a',), attrs={'newshape': Lit(()), 'order': Str('C')},
         infer=_reshape_rule, view=True, back=_reshape_back)(_np_reshape)


def _transpose_axes(ndim, axes):
    if axes is None or axes == ():
        return tuple(reversed(range(ndim)))
    axes = tuple(a % ndim if -ndim <= a < ndim else a for a in axes)
    if sorted(axes) != list(range(ndim)):
        raise ShapeError("transpose: axes %s don't match an array of %d dims" % (axes, ndim))
    return axes


def _np_transpose(a, axes):
    return a.permute(_transpose_axes(a.dim(), axes))


register('_np_transpose', inputs=('a',), attrs={'axes': Lit(None)}, view=True,
         infer=lambda at, s, d: ((tuple(s[0][i] for i in _transpose_axes(len(s[0]),
                                                                           at['axes'])),),
                                 (d[0],)))(_np_transpose)


def _np_squeeze(a, axis):
    if a.dim() == 0 and axis in (0, -1, (0,), (-1,), ()):
        return a.clone()
    if axis is None:
        return a.reshape(tuple(d for d in a.shape if d != 1))
    axes = reduce_axes(a.dim(), axis, False)
    for ax in axes:
        if a.shape[ax] != 1:
            raise ShapeError("squeeze: cannot select an axis to squeeze out which has size "
                             "not equal to one (axis %d of shape %s)" % (ax, tuple(a.shape)))
    return a.reshape(tuple(d for k, d in enumerate(a.shape) if k not in axes))


register('_np_squeeze', inputs=('a',), attrs={'axis': Lit(None)}, view=True)(_np_squeeze)


def _np_expand_dims(a, axis):
    axes = axis if isinstance(axis, tuple) else (axis,)
    n = a.dim() + len(axes)
    axes = sorted(ax % n if -n <= ax < n else _bad_axis(ax, n) for ax in axes)
    shape = list(a.shape)
    for ax in axes:
        shape.insert(ax, 1)
    return a.reshape(shape)


def _bad_axis(ax, n):
    raise ShapeError("axis %d is out of bounds for an array of dimension %d" % (ax, n))


register('_npi_expand_dims', inputs=('a',), attrs={'axis': Lit(0)}, view=True)(
    _np_expand_dims)


def _np_concat(*data, axis, dim=None, num_args=None):
    if axis is None:
        return torch.cat([d.reshape(-1) for d in data])
    if data and data[0].dim() == 0:
        raise ShapeError("zero-dimensional arrays cannot be concatenated")
    t = data[0].dtype
    for d in data[1:]:
        t = promote(t, d.dtype)
    return torch.cat([d.to(t) for d in data], dim=axis)


register('_npi_concatenate', inputs=('*data',), key_var_num_args='num_args',
         attrs={'num_args': Int(1), 'axis': Lit(0)})(_np_concat)


def _np_stack(*data, axis, num_args=None):
    t = data[0].dtype
    for d in data[1:]:
        t = promote(t, d.dtype)
    return torch.stack([d.to(t) for d in data], dim=axis)


register('_npi_stack', inputs=('*data',), key_var_num_args='num_args',
         attrs={'num_args': Int(1), 'axis': Int(0)})(_np_stack)


def _split_points(size, indices_or_sections, name='split', exact=True):
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise ShapeError("%s: number sections must be larger than 0" % name)
        if exact and size % n:
            raise ShapeError("array split does not result in an equal division")
        q, r = divmod(size, n)
        sizes = [q + 1] * r + [q] * (n - r)
        pts, acc = [], 0
        for s in sizes[:-1]:
            acc += s
            pts.append(acc)
        return pts
    return [int(i) for i in indices_or_sections]


def _np_split(a, indices_or_sections, axis, exact):
    size = a.shape[axis]
    pts = _split_points(size, indices_or_sections, exact=exact)
    bounds = [0] + [min(max(p if p >= 0 else p + size, 0), size) for p in pts] + [size]
    outs = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        outs.append(a.narrow(axis, lo, max(hi - lo, 0)))
    return tuple(outs) if len(outs) > 1 else outs[0]    # one output: a tensor, not a tuple


def _split_count(attrs):
    ios = attrs['indices_or_sections']
    return ios if isinstance(ios, int) else len(ios) + 1


register('_npi_split', inputs=('a',), view=True, num_outputs=_split_count,
         attrs={'indices_or_sections': Lit(1), 'axis': Int(0), 'exact': Bool(True)})(_np_split)


def _np_copy(a):
    return a.clone()


register('_np_copy', inputs=('a',), infer=_unary_rule('same'), infer_attrs=())(_np_copy)


def _astype(data, dtype, copy=True):
    t = dtype_torch(dtype)
    if data.requires_grad and torch.is_grad_enabled() and not t.is_floating_point:
        return data.double()        # the shadow of the integer result (see _sum_kernel)
    return data.to(t, copy=True)


register('_npi_astype', inputs=('data',), attrs={'dtype': DType('float32'), 'copy': Bool(True)},
         infer=lambda a, s, d: ((s[0],), (a['dtype'],)))(_astype)


# -- products ---------------------------------------------------------------------------------

def _np_dot(a, b):
    a, b = _promoted(a, b)
    if a.dim() == 0 or b.dim() == 0:
        return a * b
    if b.dim() == 1:
        return torch.matmul(a, b) if a.dim() >= 1 else a * b
    if a.dim() <= 2 and b.dim() == 2:
        return torch.matmul(a, b)
    return torch.tensordot(a, b, dims=([a.dim() - 1], [b.dim() - 2]))


def _dot_cost(attrs, shapes, out_shapes):
    a = shapes[0]
    return math.prod(out_shapes[0]) * (a[-1] if a else 1)


def _dot_fill(attrs, shapes):
    """Fills the contracted dimension of one operand from the other (0 is unknown): what
    deferred initialisation needs for ``x.dot(w)`` with ``w`` of shape (0, n)."""
    a, b = shapes
    if not a or not b:
        return shapes
    a, b = list(a), list(b)
    kb = len(b) - 2 if len(b) >= 2 else 0
    if a[-1] == 0 and b[kb]:
        a[-1] = b[kb]
    elif b[kb] == 0 and a[-1]:
        b[kb] = a[-1]
    return [tuple(a), tuple(b)]


register('_np_dot', inputs=('a', 'b'), cost=_dot_cost, fill=_dot_fill)(_np_dot)


def _np_matmul(a, b):
    if a.dim() == 0 or b.dim() == 0:
        raise ShapeError("matmul: input operand does not have enough dimensions")
    return torch.matmul(*_promoted(a, b))


register('_npi_matmul', inputs=('a', 'b'), cost=_dot_cost)(_np_matmul)


# -- arrangement --------------------------------------------------------------------------------

def _norm_ax(ax, ndim, name='axis'):
    if not -ndim <= ax < max(ndim, 1):
        raise ShapeError("%s %d is out of bounds for array of dimension %d" % (name, ax, ndim))
    return ax % max(ndim, 1)


def _swapaxes(a, dim1, dim2):
    return a.transpose(_norm_ax(dim1, a.dim()), _norm_ax(dim2, a.dim()))


np_register('_npi_swapaxes', view=True, attrs={'dim1': Int(0), 'dim2': Int(0)})(_swapaxes)


def _moveaxis(a, source, destination):
    src = source if isinstance(source, tuple) else (source,)
    dst = destination if isinstance(destination, tuple) else (destination,)
    if len(src) != len(dst):
        raise ShapeError("moveaxis: `source` and `destination` arguments must have the same "
                         "number of elements")
    src = tuple(_norm_ax(s, a.dim(), 'source') for s in src)
    dst = tuple(_norm_ax(d, a.dim(), 'destination') for d in dst)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError("moveaxis: repeated axis")
    return torch.movedim(a, src, dst)


np_register('_np_moveaxis', view=True, attrs={'source': Lit(0), 'destination': Lit(0)})(
    _moveaxis)


def _repeat(a, repeats, axis):
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    if isinstance(repeats, tuple):
        reps = torch.tensor(repeats, dtype=torch.long, device=a.device)
        if a.device.type == 'meta':
            n = sum(repeats) if len(repeats) > 1 else repeats[0] * a.shape[axis]
            shape = list(a.shape)
            shape[axis] = n
            return a.new_empty(shape)
        return torch.repeat_interleave(a, reps if len(repeats) > 1 else repeats[0], dim=axis)
    if repeats < 0:
        raise ShapeError("repeat: negative dimensions are not allowed")
    return torch.repeat_interleave(a, repeats, dim=axis)


np_register('_np_repeat', attrs={'repeats': Lit(1), 'axis': Lit(None)})(_repeat)


def _tile(a, reps):
    reps = reps if isinstance(reps, tuple) else (reps,)
    if a.dim() > len(reps):
        reps = (1,) * (a.dim() - len(reps)) + tuple(reps)
    return a.repeat(tuple(reps)) if a.dim() <= len(reps) and a.dim() else \
        a.reshape((1,) * len(reps)).repeat(reps) if not a.dim() else a.repeat(reps)


def _tile_full(a, reps):
    reps = reps if isinstance(reps, tuple) else (reps,)
    if any(r < 0 for r in reps):
        raise ShapeError("tile: negative reps %s" % (reps,))
    n = builtins_max(a.dim(), len(reps))
    a = a.reshape((1,) * (n - a.dim()) + tuple(a.shape))
    reps = (1,) * (n - len(reps)) + tuple(reps)
    return a.repeat(reps)


import builtins as _builtins  # noqa: E402
builtins_max = _builtins.max
np_register('_npi_tile', attrs={'reps': Lit(())})(_tile_full)


def _broadcast_to(a, shape):
    shape = _np_shape(shape)
    if -2 in shape:     # MXNet: -2 keeps the input's dimension (aligned from the right)
        lead = len(shape) - a.dim()
        shape = tuple(a.shape[i - lead] if d == -2 and i >= lead else d
                      for i, d in enumerate(shape))
    try:
        return a.expand(shape) if a.dim() <= len(shape) else _bad_bcast(a, shape)
    except RuntimeError:
        _bad_bcast(a, shape)


def _bad_bcast(a, shape):
    raise ShapeError("operands could not be broadcast together with remapped shapes "
                     "[original->remapped]: %s and requested shape %s" % (tuple(a.shape), shape))


np_register('_npi_broadcast_to', view=True, attrs={'shape': Lit(())})(_broadcast_to)


def _flip(a, axis):
    if axis is None:
        axis = tuple(range(a.dim()))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return torch.flip(a, tuple(_norm_ax(x, a.dim()) for x in axes))


np_register('_npi_flip', attrs={'axis': Lit(None)})(_flip)


def _roll(a, shift, axis):
    if isinstance(axis, tuple) and not isinstance(shift, tuple):
        shift = (shift,) * len(axis)      # one shift for every axis, as NumPy
    if axis is None:
        return torch.roll(a.reshape(-1), shift if not isinstance(shift, tuple) else
                          _builtins.sum(shift)).reshape(a.shape)
    return torch.roll(a, shift, axis)


np_register('_np_roll', attrs={'shift': Lit(0), 'axis': Lit(None)})(_roll)


def _rot90(a, k, axes):
    if a.dim() < 2:
        raise ShapeError("rot90: the array must have at least 2 dimensions")
    return torch.rot90(a, k, axes)


np_register('_npi_rot90', attrs={'k': Int(1), 'axes': Lit((0, 1))})(_rot90)


def _tri(a, k, lower):
    if a.dim() == 1:
        a = a.expand(a.shape[0], a.shape[0])
    return torch.tril(a, k) if lower else torch.triu(a, k)


np_register('_npi_tril', attrs={'k': Int(0), 'lower': Bool(True)})(_tri)


def _diag(a, k):
    if a.dim() == 1:
        return torch.diag(a, k)
    if a.dim() != 2:
        raise ShapeError("diag: input must be 1- or 2-d")
    return torch.diagonal(a, k).clone()


np_register('_np_diag', attrs={'k': Int(0)})(_diag)


def _diagflat(a, k):
    return torch.diag(a.reshape(-1), k)


np_register('_np_diagflat', attrs={'k': Int(0)})(_diagflat)


def _diagonal(a, offset, axis1, axis2):
    if a.dim() < 2:
        raise ShapeError("diagonal requires an array of at least two dimensions")
    return torch.diagonal(a, offset, _norm_ax(axis1, a.dim()), _norm_ax(axis2, a.dim()))


np_register('_np_diagonal', view=True, attrs={'offset': Int(0), 'axis1': Int(0),
                                              'axis2': Int(1)})(_diagonal)


def _trace(a, offset, axis1, axis2):
    if a.dim() < 2:
        raise ShapeError("trace requires an array of at least two dimensions")
    return torch.diagonal(a, offset, _norm_ax(axis1, a.dim()), _norm_ax(axis2, a.dim())).sum(-1)


np_register('_np_trace', attrs={'offset': Int(0), 'axis1': Int(0), 'axis2': Int(1)})(_trace)


def _take(a, indices, axis, mode):
    idx = indices.long()
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    axis = _norm_ax(axis, a.dim())
    n = a.shape[axis]
    if mode == 'clip':
        idx = idx.clamp(0, n - 1)
    elif mode == 'wrap':
        idx = idx.remainder(n) if n else idx
    elif a.device.type != 'meta' and idx.numel() and (bool((idx >= n).any()) or
                                                     bool((idx < -n).any())):
        raise IndexError("take: index out of bounds for axis %d with size %d" % (axis, n))
    else:
        idx = torch.where(idx < 0, idx + n, idx)
    out = torch.index_select(a, axis, idx.reshape(-1))
    return out.reshape(tuple(a.shape[:axis]) + tuple(idx.shape) + tuple(a.shape[axis + 1:]))


np_register('_npi_take', inputs=('a', 'indices'), attrs={'axis': Lit(None),
                                                         'mode': Str('raise')})(_take)


def _take_along_axis(arr, indices, axis):
    if axis is None:
        return torch.take_along_dim(arr.reshape(-1), indices.long().reshape(-1))
    return torch.take_along_dim(arr, indices.long(), dim=axis)


np_register('_npi_take_along_axis', inputs=('arr', 'indices'),
            attrs={'axis': Lit(-1)})(_take_along_axis)


def _where(condition, x, y):
    c = condition if condition.dtype == torch.bool else condition != 0
    x, y = _promoted(x, y)
    return torch.where(c, x, y)


np_register('_npi_where', inputs=('condition', 'x', 'y'))(_where)


def _where_scalar(condition, y, scalar, lscalar):
    c = condition if condition.dtype == torch.bool else condition != 0
    s = torch.tensor(scalar, dtype=y.dtype if y.is_floating_point() else
                     (torch.float32 if isinstance(scalar, float) and scalar != int(scalar)
                      else y.dtype), device=y.device)
    y = y.to(s.dtype)
    return torch.where(c, s, y) if lscalar else torch.where(c, y, s)


np_register('_npi_where_scalar', inputs=('condition', 'y'),
            attrs={'scalar': Lit(0.0), 'lscalar': Bool(True)})(_where_scalar)


def _where_scalar2(condition, x, y, dtype):
    c = condition if condition.dtype == torch.bool else condition != 0
    t = dtype_torch(dtype)
    return torch.where(c, torch.tensor(x, dtype=t, device=c.device),
                       torch.tensor(y, dtype=t, device=c.device))


np_register('_npi_where_scalar2', inputs=('condition',),
            attrs={'x': Lit(0.0), 'y': Lit(0.0), 'dtype': DType('float32')})(_where_scalar2)


def _clip(a, a_min, a_max):
    if a_min is None and a_max is None:
        raise ShapeError("clip: One of max or min must be given")
    if a.dtype == torch.bool:
        return a.clone()
    if not a.is_floating_point():
        a_min = None if a_min is None else int(math.floor(a_min)) if a_min == a_min else None
        a_max = None if a_max is None else int(math.floor(a_max)) if a_max == a_max else None
        # bounds beyond the dtype's range bound nothing (torch would wrap -120 to uint8 136)
        info = torch.iinfo(a.dtype)
        a_min = None if a_min is None or a_min <= info.min else min(a_min, info.max)
        a_max = None if a_max is None or a_max >= info.max else max(a_max, info.min)
        if a_min is None and a_max is None:
            return a.clone()
    return torch.clamp(a, a_min, a_max)


np_register('_npi_clip', attrs={'a_min': Lit(None), 'a_max': Lit(None)})(_clip)


def _clip_arrays(a, lo, hi):
    return torch.minimum(torch.maximum(a, lo.to(a.dtype)), hi.to(a.dtype))


np_register('_npi_clip_arrays', inputs=('a', 'lo', 'hi'))(_clip_arrays)


def _cumsum(a, axis, dtype):
    t = dtype_torch(dtype) if dtype else (torch.int64 if a.dtype == torch.bool else a.dtype)
    if axis is None:
        return torch.cumsum(a.reshape(-1), 0, dtype=t)
    return torch.cumsum(a, _norm_ax(axis, a.dim()), dtype=t)


# _np_cumsum is in reduce.py (legacy nd.cumsum is the same operator).


def _cumprod(a, axis, dtype):
    t = dtype_torch(dtype) if dtype else (torch.int64 if a.dtype == torch.bool else a.dtype)
    if axis is None:
        return torch.cumprod(a.reshape(-1), 0, dtype=t)
    return torch.cumprod(a, _norm_ax(axis, a.dim()), dtype=t)


np_register('_npi_cumprod', attrs={'axis': Lit(None), 'dtype': DType(None)})(_cumprod)


def _sort(a, axis, descending):
    if axis is None:
        a, axis = a.reshape(-1), 0
    return torch.sort(a, dim=axis, descending=descending, stable=True)[0]


def _argsort(a, axis, descending, dtype):
    if axis is None:
        a, axis = a.reshape(-1), 0
    return torch.sort(a, dim=axis, descending=descending, stable=True)[1].to(dtype_torch(dtype))


np_register('_npi_sort', attrs={'axis': Lit(-1), 'descending': Bool(False)})(_sort)
np_register('_npi_argsort', attrs={'axis': Lit(-1), 'descending': Bool(False),
                                   'dtype': DType('int64')})(_argsort)


def _diff(a, n, axis):
    for _ in range(n):
        a = torch.diff(a, dim=axis)
    return a if n else a.clone()


np_register('_npi_diff', attrs={'n': Int(1), 'axis': Int(-1)})(_diff)


def _atleast(a, ndim):
    if a.dim() >= ndim:
        return a
    if ndim == 1:
        return a.reshape(1)
    if ndim == 2:
        return a.reshape((1,) * (2 - a.dim()) + tuple(a.shape))
    if a.dim() == 0:
        return a.reshape(1, 1, 1)
    if a.dim() == 1:
        return a.reshape(1, a.shape[0], 1)
    return a.reshape(tuple(a.shape) + (1,))


np_register('_npi_atleast_nd', view=True, attrs={'ndim': Int(1)})(_atleast)


def _pad(a, pad_width, mode, constant_values, reflect_type):
    import torch.nn.functional as F
    pw = pad_width
    if isinstance(pw, int):
        pw = ((pw, pw),) * a.dim()
    elif isinstance(pw, tuple) and pw and isinstance(pw[0], int):
        pw = (pw if len(pw) == 2 else (pw[0], pw[0]),) * a.dim()
    elif len(pw) == 1:
        pw = (tuple(pw[0]) if len(pw[0]) == 2 else (pw[0][0], pw[0][0]),) * a.dim()
    flat = []
    for lo, hi in reversed(pw):
        flat += [int(lo), int(hi)]
    if mode == 'constant':
        return F.pad(a, flat, value=constant_values)
    if mode in ('reflect', 'symmetric', 'edge', 'wrap'):
        return _pad_by_index(a, pw, mode)
    if mode in ('maximum', 'minimum', 'mean', 'median'):
        return _pad_numpy(a, pw, mode)
    raise ShapeError("pad: mode %r is not supported" % (mode,))


def _pad_by_index(a, pw, mode):
    """Padding that repeats elements (reflect, symmetric, edge, wrap): NumPy's pad of the
    indices along each axis, gathered, so any pad width works and gradients flow."""
    import numpy as onp
    out = a
    for ax, (lo, hi) in enumerate(pw):
        if lo == 0 and hi == 0:
            continue
        n = out.shape[ax]
        if n == 0:
            raise ShapeError("pad: can't extend empty axis %d using modes other than "
                             "'constant'" % ax)
        idx = onp.pad(onp.arange(n), (int(lo), int(hi)), mode=mode)
        out = torch.index_select(out, ax, torch.as_tensor(idx, device=out.device))
    return out


def _pad_numpy(a, pw, mode):
    import numpy as onp
    if a.device.type == 'meta':
        shape = tuple(d + lo + hi for d, (lo, hi) in zip(a.shape, pw))
        return a.new_empty(shape)
    return torch.from_numpy(onp.pad(a.detach().cpu().numpy(), pw, mode=mode).copy()).to(a.device)


np_register('_npi_pad', attrs={'pad_width': Lit(0), 'mode': Str('constant'),
                               'constant_values': Lit(0), 'reflect_type': Str('even')})(_pad)


def _nan_to_num(a, copy, nan, posinf, neginf):
    if not a.is_floating_point():
        return a.clone()
    return torch.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)


np_register('_npi_nan_to_num', attrs={'copy': Bool(True), 'nan': Float(0.0),
                                      'posinf': Lit(None), 'neginf': Lit(None)})(_nan_to_num)


def _tensordot(a, b, a_axes, b_axes):
    a, b = _promoted(a, b)
    return torch.tensordot(a, b, dims=(list(a_axes), list(b_axes)))


np_register('_npi_tensordot', inputs=('a', 'b'), attrs={'a_axes': Lit(()), 'b_axes': Lit(())},
            cost=lambda at, s, o: math.prod(o[0]) * math.prod(s[0][i] for i in at['a_axes']))(
    _tensordot)


def _tensordot_int_axes(a, b, axes):
    """``tensordot`` over the last ``axes`` axes of ``a`` and the first of ``b``."""
    a, b = _promoted(a, b)
    return torch.tensordot(a, b, dims=([a.dim() - axes + i for i in range(axes)],
                                       list(range(axes))))


np_register('_npi_tensordot_int_axes', inputs=('a', 'b'), attrs={'axes': Int(2)})(
    _tensordot_int_axes)


def _inner(a, b):
    a, b = _promoted(a, b)
    if a.dim() == 0 or b.dim() == 0:
        return a * b
    return torch.inner(a, b)


np_register('_npi_inner', inputs=('a', 'b'))(_inner)


def _outer(a, b):
    a, b = _promoted(a, b)
    return torch.outer(a.reshape(-1), b.reshape(-1))


np_register('_npi_outer', inputs=('a', 'b'))(_outer)


def _vdot(a, b):
    a, b = _promoted(a, b)
    return torch.dot(a.reshape(-1), b.reshape(-1))


np_register('_npi_vdot', inputs=('a', 'b'))(_vdot)


def _kron(a, b):
    return torch.kron(*_promoted(a, b))


np_register('_npi_kron', inputs=('a', 'b'))(_kron)


def _cross(a, b, axisa, axisb, axisc):
    a, b = _promoted(a, b)
    a, b = a.movedim(axisa, -1), b.movedim(axisb, -1)
    if a.shape[-1] == 2:
        a = torch.nn.functional.pad(a, [0, 1])
    if b.shape[-1] == 2:
        b = torch.nn.functional.pad(b, [0, 1])
    a, b = torch.broadcast_tensors(a, b)
    return torch.linalg.cross(a, b, dim=-1).movedim(-1, axisc)


np_register('_npi_cross', inputs=('a', 'b'),
            attrs={'axisa': Int(-1), 'axisb': Int(-1), 'axisc': Int(-1)})(_cross)


def _einsum(*operands, subscripts, num_args=None, optimize=0):
    t = operands[0].dtype
    for o in operands[1:]:
        t = promote(t, o.dtype)
    return torch.einsum(subscripts, *[o.to(t) for o in operands])


np_register('_npi_einsum', inputs=('*operands',), key_var_num_args='num_args',
            attrs={'num_args': Int(1), 'subscripts': Str(''), 'optimize': Int(0)})(_einsum)


def _polyval(p, x):
    p, x = _promoted(p, x)
    out = torch.zeros_like(x)
    for i in range(p.shape[0]):
        out = out * x + p[i]
    return out


np_register('_npi_polyval', inputs=('p', 'x'))(_polyval)


def _ediff1d(a, to_end=None, to_begin=None, to_end_scalar=None, to_begin_scalar=None):
    d = a.reshape(-1)
    d = d[1:] - d[:-1]
    parts = []
    if to_begin is not None:
        parts.append(to_begin.reshape(-1).to(d.dtype))
    elif to_begin_scalar is not None:
        parts.append(torch.tensor([to_begin_scalar], dtype=d.dtype, device=d.device))
    parts.append(d)
    if to_end is not None:
        parts.append(to_end.reshape(-1).to(d.dtype))
    elif to_end_scalar is not None:
        parts.append(torch.tensor([to_end_scalar], dtype=d.dtype, device=d.device))
    return torch.cat(parts) if len(parts) > 1 else d.clone()


def _ediff_drop(attrs):
    return ()


np_register('_npi_ediff1d', inputs=('a', 'to_end', 'to_begin'),
            attrs={'to_end_scalar': Lit(None), 'to_begin_scalar': Lit(None)})(_ediff1d)


def _indices(dimensions, dtype, ctx, device):
    grids = torch.meshgrid(*[torch.arange(d, device=device) for d in dimensions],
                           indexing='ij')
    if not dimensions:
        return torch.zeros((0,), dtype=dtype_torch(dtype), device=device)
    return torch.stack(grids).to(dtype_torch(dtype))


np_register('_npi_indices', inputs=(), creation=True,
            attrs={'dimensions': Lit(()), 'dtype': DType('int32'), 'ctx': Str('')})(_indices)


def _insert_scalar(arr, values, obj, axis):
    return _insert_impl(arr, values, obj, axis)


def _insert_impl(arr, values, obj, axis):
    import numpy as onp
    if arr.device.type == 'meta':
        a = onp.zeros(tuple(arr.shape))
        v = onp.zeros(tuple(values.shape))
        r = onp.insert(a, obj if not isinstance(obj, tuple) else list(obj), v, axis=axis)
        return arr.new_empty(r.shape)
    a = arr.detach().cpu().numpy()
    v = values.detach().cpu().numpy()
    r = onp.insert(a, obj if not isinstance(obj, tuple) else list(obj), v, axis=axis)
    return torch.from_numpy(onp.ascontiguousarray(r)).to(arr.device)


np_register('_npi_insert', inputs=('arr', 'values'),
            attrs={'obj': Lit(0), 'axis': Lit(None)})(_insert_scalar)


def _delete(arr, obj, axis, index_array=False):
    """``arr`` without the entries ``obj`` (an integer, or a tuple of them: MXNet ignores the
    ones out of [0, n) in an index array) along ``axis`` (of the flattened array when None)."""
    if axis is None:
        arr, axis = arr.reshape(-1), 0
    axis = _norm_ax(axis, arr.dim())
    n = arr.shape[axis]
    keep = [True] * n
    if index_array:
        for i in obj:
            if 0 <= i < n:
                keep[i] = False
    else:
        if not -n <= obj < n:
            raise ShapeError("index %d is out of bounds for axis %d with size %d"
                             % (obj, axis, n))
        keep[obj % n] = False
    idx = torch.tensor([i for i in range(n) if keep[i]], dtype=torch.long, device=arr.device)
    return torch.index_select(arr, axis, idx)


np_register('_npi_delete', inputs=('arr',), attrs={'obj': Lit(0), 'axis': Lit(None),
                                                  'index_array': Bool(False)})(_delete)


def _resize(a, new_shape):
    shape = _np_shape(new_shape)
    n = math.prod(shape)
    flat = a.reshape(-1)
    if flat.numel() == 0:
        return torch.zeros(shape, dtype=a.dtype, device=a.device)
    reps = -(-n // flat.numel())
    return flat.repeat(reps)[:n].reshape(shape)


np_register('_npi_resize', attrs={'new_shape': Lit(())})(_resize)


def _windows(kind):
    def k(M, dtype, ctx, device):
        t = dtype_torch(dtype)
        if M < 1:
            return torch.zeros((0,), dtype=t, device=device)
        if M == 1:
            return torch.ones((1,), dtype=t, device=device)
        n = torch.arange(M, dtype=torch.float64, device=device)
        x = 2 * math.pi * n / (M - 1)
        if kind == 'hanning':
            w = 0.5 - 0.5 * torch.cos(x)
        elif kind == 'hamming':
            w = 0.54 - 0.46 * torch.cos(x)
        else:
            w = 0.42 - 0.5 * torch.cos(x) + 0.08 * torch.cos(2 * x)
        return w.to(t)
    return k


for _n in ('hanning', 'hamming', 'blackman'):
    np_register('_npi_' + _n, inputs=(), creation=True,
                attrs={'M': Int(0), 'dtype': DType('float32'), 'ctx': Str('')})(_windows(_n))


def _bincount(data, weights=None, minlength=0, has_weights=False):
    n = builtins_max(int(data.max()) + 1 if data.numel() else 0, minlength)
    return torch.bincount(data.long(), weights, minlength=n)


def _interp(x, xp, fp, left=None, right=None, period=None):
    import numpy as onp
    r = onp.interp(x.detach().cpu().numpy(), xp.detach().cpu().numpy(),
                   fp.detach().cpu().numpy(), left, right, period)
    return torch.from_numpy(onp.asarray(r, dtype=onp.float64)).to(x.device)


def _round_any(a, decimals):
    return _round_half_even(a, decimals)


np_register('_npi_round', attrs={'decimals': Int(0)})(_round_any)


def _meshgrid_one(*xs, indexing, num_args=None, index=0):
    return torch.meshgrid(*[x.reshape(-1) for x in xs], indexing=indexing)[index].clone()


def _meshgrid(*xs, indexing, num_args=None, sparse=False):
    outs = torch.meshgrid(*[x.reshape(-1) for x in xs], indexing=indexing)
    return tuple(o.clone() for o in outs) if len(outs) > 1 else outs[0].clone()


np_register('_npi_meshgrid', inputs=('*xs',), key_var_num_args='num_args',
            num_outputs=lambda at: at['num_args'],
            attrs={'num_args': Int(1), 'indexing': Str('xy'), 'sparse': Bool(False)})(_meshgrid)


def _unravel_index(indices, shape):
    idx = indices.long()
    out = []
    for d in reversed(shape):
        out.append(idx % d)
        idx = torch.div(idx, d, rounding_mode='floor')
    return torch.stack(list(reversed(out)))


np_register('_npi_unravel_index', inputs=('indices',), attrs={'shape': Lit(())})(
    _unravel_index)


def _average(a, weights=None, axis=None, returned=False, weighted=True):
    if weights is None:
        w = torch.ones_like(a, dtype=a.dtype if a.is_floating_point() else torch.float32)
    else:
        w = weights
        if w.shape != a.shape:
            shape = [1] * a.dim()
            shape[axis if isinstance(axis, int) else axis[0]] = w.shape[0]
            w = w.reshape(shape)
        w = w.to(promote(a.dtype, w.dtype))
    x = a.to(w.dtype) if a.dtype != w.dtype else a
    if not x.is_floating_point():
        x, w = x.to(torch.float32), w.to(torch.float32)
    axes = _axes(a.dim(), axis)
    wsum = torch.sum(torch.broadcast_to(w, x.shape), dim=axes)
    avg = torch.sum(x * w, dim=axes) / wsum
    return avg, wsum


np_register('_npi_average', inputs=('a', 'weights'), num_outputs=2,
            attrs={'axis': Lit(None), 'returned': Bool(False), 'weighted': Bool(True)})(
    _average)


def _percentile(a, q, axis, interpolation, keepdims):
    # float64 stays float64; every other dtype (float16 included) gives float32, as in MXNet
    x = a if a.dtype in (torch.float64, torch.float32) else a.to(torch.float32)
    qq = q.to(x.dtype) / 100.0
    if axis is None:
        r = torch.quantile(x.reshape(-1), qq, interpolation=interpolation)
        if keepdims:
            r = r.reshape(tuple(qq.shape) + (1,) * a.dim())
        return r
    if isinstance(axis, tuple):
        axes = [ax % a.dim() for ax in axis]
        rest = [d for d in range(a.dim()) if d not in axes]
        xt = x.permute(rest + axes).reshape([x.shape[d] for d in rest] + [-1])
        r = torch.quantile(xt, qq, dim=-1, interpolation=interpolation)
        if keepdims:
            shape = list(r.shape[:qq.dim()]) + [1 if d in axes else x.shape[d]
                                               for d in range(a.dim())]
            r = r.reshape(shape)
        return r
    return torch.quantile(x, qq, dim=axis, keepdim=keepdims, interpolation=interpolation)


np_register('_npi_percentile', inputs=('a', 'q'),
            attrs={'axis': Lit(None), 'interpolation': Str('linear'),
                   'keepdims': Bool(False)})(_percentile)


# -- npx ----------------------------------------------------------------------------------------

def npx_reshape_target(src, newshape, reverse=False):
    """The shape ``npx.reshape`` gives: NumPy's -1 plus MXNet's codes -2 (copy a dimension),
    -3 (skip a dimension of size 1), -4 (copy the remaining ones), -5 (merge two) and -6
    (split one into the next two entries)."""
    src = tuple(src)
    target = tuple(newshape)
    if reverse:
        src, target = src[::-1], target[::-1]
    out, i, j, unknown = [], 0, 0, -1
    while j < len(target):
        d = target[j]
        if d == -1:
            unknown = len(out)
            out.append(-1)
            i += 1
        elif d == -2:
            out.append(src[i])
            i += 1
        elif d == -3:
            if src[i] != 1:
                raise ShapeError("npx.reshape: -3 skips a dimension of size 1 only, got %d at "
                                 "input axis %d" % (src[i], i))
            i += 1
        elif d == -4:
            out.extend(src[i:])
            i = len(src)
        elif d == -5:
            out.append(src[i] * src[i + 1])
            i += 2
        elif d == -6:
            a, b = target[j + 1], target[j + 2]
            if a == -1:
                a = src[i] // b
            if b == -1:
                b = src[i] // a
            if a * b != src[i]:
                raise ShapeError("npx.reshape: -6 splits %d into %d and %d" % (src[i], a, b))
            out.extend([a, b])
            i += 1
            j += 2
        elif d >= 0:
            out.append(d)
            i += 1
        else:
            raise ShapeError("npx.reshape: invalid code %d in %s" % (d, newshape))
        j += 1
    if unknown >= 0:
        known = math.prod(x for k, x in enumerate(out) if k != unknown)
        total = math.prod(src)
        if known == 0 or total % known:
            raise ShapeError("npx.reshape: cannot reshape %s into %s" % (src, newshape))
        out[unknown] = total // known
    if reverse:
        out = out[::-1]
    if math.prod(out) != math.prod(src):
        raise ShapeError("npx.reshape: cannot reshape array of shape %s into %s"
                         % (src[::-1] if reverse else src, newshape))
    return tuple(out)


def _npx_reshape(a, newshape, reverse, order='C'):
    return a.reshape(npx_reshape_target(a.shape, newshape, reverse))


register('_npx_reshape', inputs=('a',), view=True,
         attrs={'newshape': Lit(()), 'reverse': Bool(False), 'order': Str('C')},
         infer=lambda at, s, d: ((npx_reshape_target(s[0], at['newshape'], at['reverse']),),
                                 (d[0],)))(_npx_reshape)


def _constraint_check(x, msg):
    if x.device.type != 'meta' and not bool(torch.all(x)):
        raise ValueError(msg)
    return torch.ones((), dtype=torch.bool, device=x.device)


register('_npx_constraint_check', inputs=('input',), attrs={'msg': Str('')},
         infer=lambda at, s, d: (((),), ('bool',)))(_constraint_check)


def _npx_softmax_len(data, length, axis, temperature, dtype, use_length):
    x = data if temperature is None else data / temperature
    t = dtype_torch(dtype) if dtype else data.dtype
    if use_length and length is not None:
        n = x.shape[axis]
        idx = torch.arange(n, device=x.device).reshape([-1 if k == axis % x.dim() else 1
                                                        for k in range(x.dim())])
        lshape = list(x.shape)
        lshape[axis] = 1
        mask = idx < length.reshape(lshape).to(idx.dtype)
        x = x.masked_fill(~mask, float('-inf'))
        r = torch.softmax(x, axis, dtype=t)
        return torch.where(mask, r, torch.zeros((), dtype=t, device=x.device))
    return torch.softmax(x, axis, dtype=t)


def _arange_like(data, start, step, repeat, axis, ctx=''):
    n = data.numel() if axis is None else data.shape[axis]
    count = -(-n // repeat)
    r = start + step * torch.arange(count, dtype=torch.float64, device=data.device)
    r = r.repeat_interleave(repeat)[:n].to(data.dtype)
    return r.reshape(data.shape) if axis is None else r


register('_npx_arange_like', inputs=('data',),
         attrs={'start': Float(0.0), 'step': Float(1.0), 'repeat': Int(1), 'ctx': Str(''),
                'axis': Lit(None)})(_arange_like)


def _npx_nonzero(a):
    return torch.nonzero(a)


def _shape_array(data):
    return torch.tensor(tuple(data.shape), dtype=torch.int64, device=data.device)


register('_npi_shape_array', inputs=('data',),
         infer=lambda at, s, d: (((len(s[0]),),), ('int64',)))(_shape_array)


# MXNet gives integer mod and floor division a zero gradient (ndarray.py's integer shadows
# leave their results out of the graph).
for _n in ('_npi_mod', '_npi_mod_scalar', '_npi_rmod_scalar', '_npi_fmod', '_npi_fmod_scalar',
           '_npi_rfmod_scalar', '_npi_floor_divide', '_npi_floor_divide_scalar',
           '_npi_rfloor_divide_scalar'):
    _get_op(_n).kernel.int_no_grad = True


# -- boolean mask assignment (np._internal) ---------------------------------------------------

def _mask_key(mask, start_axis):
    return (slice(None),) * start_axis + (mask,)


def _boolean_mask_assign_scalar(data, mask, value, start_axis):
    out = data.clone()
    out[_mask_key(mask.bool(), start_axis)] = value
    return out


def _boolean_mask_assign_tensor(data, mask, value, start_axis):
    out = data.clone()
    key = _mask_key(mask.bool(), start_axis)
    target = out[key]
    v = value.to(out.dtype)
    if v.dim() > target.dim():
        v = v.reshape(v.shape[v.dim() - target.dim():]) if v.numel() == target.numel() or \
            all(d == 1 for d in v.shape[:v.dim() - target.dim()]) else v
    # the value may hold the selected count on start_axis or broadcast to it
    out[key] = torch.broadcast_to(v, target.shape) if v.shape != target.shape else v
    return out


np_register('_npi_boolean_mask_assign_scalar', inputs=('data', 'mask'), infer=_unary_rule('same'),
            attrs={'value': Lit(0.0), 'start_axis': Int(0)})(_boolean_mask_assign_scalar)
np_register('_npi_boolean_mask_assign_tensor', inputs=('data', 'mask', 'value'),
            infer=_unary_rule('same'), attrs={'start_axis': Int(0)})(_boolean_mask_assign_tensor)
