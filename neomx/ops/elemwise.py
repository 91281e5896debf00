"""Elementwise operators: binary (broadcasting and same-shape), with a scalar, and unary.

MXNet's rules kept here: the two inputs of a binary operator must have the same dtype; a
scalar takes the dtype of the array (``int32_array * 1.5`` multiplies by 1); comparisons
return 0/1 in the input's dtype.
"""
import math

import torch

from ..base import dtype_torch
from .registry import Bool, DType, Float, Int, ShapeError, get, register, same_as_input

# -- shape rules --------------------------------------------------------------------------


def broadcast_shape(op, a, b):
    if a == b:
        return a
    n = max(len(a), len(b))
    a2 = (1,) * (n - len(a)) + tuple(a)
    b2 = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a2, b2):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ShapeError("shapes %s and %s cannot be broadcast together" % (tuple(a), tuple(b)))
    return tuple(out)


def partial_broadcast_shape(a, b, unknown):
    """The broadcast of two shapes some of whose dimensions are ``unknown`` (0, or -1 under
    NumPy shape semantics), as MXNet's partial inference gives it: a dimension is unknown
    where the two differ and one is unknown (a 1 against an unknown one too)."""
    n = max(len(a), len(b))
    a2 = (1,) * (n - len(a)) + tuple(a)
    b2 = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a2, b2):
        if x == y:
            out.append(x)
        elif x == unknown or y == unknown:
            out.append(unknown)
        elif x == 1 or y == 1:
            out.append(y if x == 1 else x)
        else:
            raise ShapeError("shapes %s and %s cannot be broadcast together" % (tuple(a), tuple(b)))
    return tuple(out)


def partial_broadcast_shapes(attrs, shapes, unknown):
    """A broadcasting operator's output for inputs with ``unknown`` dimensions."""
    return (partial_broadcast_shape(shapes[0], shapes[1], unknown),)


def _same_dtype(op, dtypes):
    if dtypes[0] != dtypes[1]:
        raise ShapeError("inputs have different dtypes %s and %s; cast one with astype first"
                         % (dtypes[0], dtypes[1]))


def broadcast_rule(attrs, shapes, dtypes):
    _same_dtype(None, dtypes)
    return (broadcast_shape(None, shapes[0], shapes[1]),), (dtypes[0],)


def _elemwise_rule(attrs, shapes, dtypes):
    _same_dtype(None, dtypes)
    if shapes[0] != shapes[1]:
        raise ShapeError("shapes %s and %s differ (an elementwise operator needs equal shapes; "
                         "the broadcast_* operators broadcast)" % (shapes[0], shapes[1]))
    return (shapes[0],), (dtypes[0],)


def _as_dtype(r, like):
    return r if r.dtype == like.dtype else r.to(like.dtype)


def _idiv(a, b):
    if a.is_floating_point():
        return torch.div(a, b)
    return torch.div(a, b, rounding_mode='trunc')


def _mod(a, b):
    # MXNet's mod takes the sign of the divisor (Python's %) and gives 0 for a zero divisor,
    # where torch gives nan (floats) or raises (integers).
    zero = b == 0
    return torch.remainder(a, torch.where(zero, torch.ones_like(b), b)).masked_fill(zero, 0)


def _pow(base, exp):
    """torch.pow, with MXNet's rule for integers raised to negative powers (which torch
    refuses): computed in floating point and truncated, so 2 ** -1 is 0 and (-1) ** -3 is -1."""
    t = base if isinstance(base, torch.Tensor) else exp
    if t.is_floating_point() or t.dtype == torch.bool:
        return torch.pow(base, exp)
    negative = bool((exp < 0).any()) if isinstance(exp, torch.Tensor) else exp < 0
    if not negative:
        return torch.pow(base, exp)
    return torch.pow(base.double() if isinstance(base, torch.Tensor) else float(base),
                     exp.double() if isinstance(exp, torch.Tensor) else float(exp)).to(t.dtype)


# Binary maths shared by the array-array and the array-scalar forms.
_BINARY = {
    'add': (torch.add, ('_plus', '_Plus', '_add')),
    'sub': (torch.sub, ('_minus', '_Minus', '_sub')),
    'mul': (torch.mul, ('_mul', '_Mul')),
    'div': (_idiv, ('_div', '_Div')),
    'mod': (_mod, ('_mod', '_Mod')),
    'power': (_pow, ('_power', '_Power')),
    'maximum': (torch.maximum, ('_maximum', '_Maximum')),
    'minimum': (torch.minimum, ('_minimum', '_Minimum')),
    'hypot': (torch.hypot, ('_hypot', '_Hypot')),
}
_COMPARE = {
    'equal': torch.eq, 'not_equal': torch.ne, 'greater': torch.gt, 'greater_equal': torch.ge,
    'lesser': torch.lt, 'lesser_equal': torch.le,
    'logical_and': torch.logical_and, 'logical_or': torch.logical_or,
    'logical_xor': torch.logical_xor,
}


# ``kernel.on_floats``: the torch function a kernel calls when its inputs are floating point
# (where the kernel adds nothing to it), taking the input tensors, and a scalar operand as a
# 0-dim tensor of their dtype, positionally. The fast path of tiny operations
# (``ndarray.fastpath``) calls it and saves a Python frame. A kernel with attributes may have
# ``kernel.on_floats_for(attrs, shapes)`` instead: that torch function for those attributes
# and input shapes (taking the input tensors alone), or None (``linalg``'s dot: torch.mm).


# MXNet's elementwise maximum and minimum hand the whole gradient to one side: to lhs where
# lhs >= rhs (maximum) or lhs <= rhs (minimum), else to rhs, and to neither where a NaN makes
# both comparisons false. (torch's, as MXNet's broadcast_maximum, splits a tie in halves.)
_ELEM_GRADS = {
    'maximum': lambda inputs, outputs, out_grads: _one_side(inputs, out_grads, torch.ge,
                                                            torch.lt),
    'minimum': lambda inputs, outputs, out_grads: _one_side(inputs, out_grads, torch.le,
                                                            torch.gt),
}


def _one_side(inputs, out_grads, to_lhs, to_rhs):
    lhs, rhs = inputs
    g = out_grads[0]
    return g * to_lhs(lhs, rhs).to(g.dtype), g * to_rhs(lhs, rhs).to(g.dtype)


def _register_binary(name, f, elem_aliases):
    def bk(lhs, rhs):
        return f(lhs, rhs)
    bk.__doc__ = "Elementwise %s of two arrays with broadcasting." % name
    bk.on_floats = f
    aliases = {'add': ('broadcast_plus',), 'sub': ('broadcast_minus',)}.get(name, ())
    register('broadcast_' + name, inputs=('lhs', 'rhs'), infer=broadcast_rule, infer_attrs=(),
             aliases=aliases)(bk)

    def ek(lhs, rhs):
        return f(lhs, rhs)
    ek.__doc__ = "Elementwise %s of two arrays of the same shape." % name
    ek.on_floats = f
    register('elemwise_' + name if name in ('add', 'sub', 'mul', 'div') else '_elemwise_' + name,
             inputs=('lhs', 'rhs'), infer=_elemwise_rule, infer_attrs=(),
             aliases=elem_aliases, grad=_ELEM_GRADS.get(name))(ek)


for _name, (_f, _aliases) in _BINARY.items():
    _register_binary(_name, _f, _aliases)


def _register_compare(name, f):
    def bk(lhs, rhs):
        return f(lhs, rhs).to(lhs.dtype)
    bk.__doc__ = "Elementwise ``%s`` with broadcasting: 1 where true, 0 elsewhere." % name
    register('broadcast_' + name, inputs=('lhs', 'rhs'), infer=broadcast_rule, infer_attrs=())(bk)

    def ek(lhs, rhs):
        return f(lhs, rhs).to(lhs.dtype)
    register('_' + name, inputs=('lhs', 'rhs'), infer=_elemwise_rule, infer_attrs=(),
             aliases=('_' + ''.join(p.capitalize() for p in name.split('_')),))(ek)


for _name, _f in _COMPARE.items():
    _register_compare(_name, _f)


# -- with a scalar ------------------------------------------------------------------------

def _scalar(data, scalar):
    """The scalar in the array's dtype, as MXNet casts it."""
    if data.is_floating_point():
        return scalar
    if data.dtype == torch.bool:
        return bool(scalar)
    return int(scalar)


# A scalar meeting a floating-point array becomes a 0-dim tensor of the array's dtype (on the
# CPU: torch takes 0-dim CPU tensors with arrays on any device). That is MXNet's rule, the
# scalar cast to the array's dtype first: given a Python number, torch computes a float16
# array times 0.1 with 0.1 in float32 and half the elements come out one unit apart from
# MXNet's. And ATen adds a 0-dim tensor in half the time it takes to wrap a Python number.
_SCALAR_TENSORS = {}


def scalar_tensor(value, dtype):
    """``value`` as a 0-dim CPU tensor of the torch ``dtype``, cached."""
    # 0.0 and -0.0 are equal keys but not the same multiplier.
    key = (value, dtype) if value else (value, dtype, math.copysign(1.0, value))
    t = _SCALAR_TENSORS.get(key)
    if t is None:
        if len(_SCALAR_TENSORS) >= 512:
            _SCALAR_TENSORS.clear()
        t = _SCALAR_TENSORS[key] = torch.tensor(value, dtype=dtype)
    return t


def _register_scalar(name, f, aliases=(), tensor_scalar=False):
    if tensor_scalar:
        def k(data, scalar):
            if data.is_floating_point():
                return f(data, scalar_tensor(scalar, data.dtype))
            return _as_dtype(f(data, _scalar(data, scalar)), data)
        k.on_floats = f
    else:
        def k(data, scalar):
            return _as_dtype(f(data, _scalar(data, scalar)), data)
    k.__doc__ = "Elementwise ``%s`` of an array and a scalar." % name
    register(name, inputs=('data',), attrs={'scalar': Float(1.0)}, infer=same_as_input,
             infer_attrs=(), aliases=aliases)(k)


_register_scalar('_plus_scalar', torch.add, ('_PlusScalar',), True)
_register_scalar('_minus_scalar', torch.sub, ('_MinusScalar',), True)
_register_scalar('_rminus_scalar', lambda x, s: torch.sub(s, x) if isinstance(s, bool) else
                 torch.rsub(x, s), ('_RMinusScalar',), True)
_register_scalar('_mul_scalar', torch.mul, ('_MulScalar',), True)
_register_scalar('_div_scalar', _idiv, ('_DivScalar',), True)
_register_scalar('_rdiv_scalar', lambda x, s: s / x if x.is_floating_point() else
                 _idiv(torch.full_like(x, s), x), ('_RDivScalar',), True)
_register_scalar('_mod_scalar', lambda x, s: torch.remainder(x, s) if s else torch.zeros_like(x),
                 ('_ModScalar',))
_register_scalar('_rmod_scalar', lambda x, s: _mod(torch.full_like(x, s), x), ('_RModScalar',))
# MXNet gives integer mod a zero gradient (ndarray.py's integer shadows leave such results out
# of the graph; mx.np's mod and floor division are flagged in numpy.py)
for _n in ('broadcast_mod', '_elemwise_mod', '_mod_scalar', '_rmod_scalar'):
    get(_n).kernel.int_no_grad = True
# MXNet's scatter operators: on a sparse array they touch the stored entries only (see
# ops/sparse.py); on a dense one they are the plain operators
_register_scalar('_scatter_plus_scalar', torch.add, (), True)
_register_scalar('_scatter_minus_scalar', torch.sub, (), True)


@register('_scatter_elemwise_div', inputs=('lhs', 'rhs'), infer=_elemwise_rule, infer_attrs=())
def _scatter_elemwise_div(lhs, rhs):
    return _idiv(lhs, rhs)



_register_scalar('_power_scalar', _pow, ('_PowerScalar',))
_register_scalar('_rpower_scalar', lambda x, s: _pow(s, x), ('_RPowerScalar',))
_register_scalar('_maximum_scalar', lambda x, s: torch.clamp(x, min=s), ('_MaximumScalar',))
_register_scalar('_minimum_scalar', lambda x, s: torch.clamp(x, max=s), ('_MinimumScalar',))
_register_scalar('_hypot_scalar', lambda x, s: torch.hypot(x, torch.full_like(x, s)),
                 ('_HypotScalar',))
# torch's logical_* take no Python scalar: compare with the scalar's truth value instead.
_LOGICAL_SCALAR = {
    'logical_and': lambda x, s: (x != 0) & bool(s),
    'logical_or': lambda x, s: (x != 0) | bool(s),
    'logical_xor': lambda x, s: (x != 0) ^ bool(s),
}
for _name, _f in _COMPARE.items():
    _register_scalar('_%s_scalar' % _name, _LOGICAL_SCALAR.get(_name, _f),
                     ('_%sScalar' % ''.join(p.capitalize() for p in _name.split('_')),))


# -- unary ---------------------------------------------------------------------------------

def _unary(f, name):
    def k(data):
        r = f(data)
        # MXNet computes integer inputs in floating point and casts back (truncating):
        # exp(int32 [1, 2]) is int32 [2, 7].
        return r if r.dtype == data.dtype else r.to(data.dtype)
    k.__name__ = name
    k.__doc__ = "Elementwise %s." % name
    k.on_floats = f
    return k


def _rcbrt(x):
    return 1.0 / _cbrt(x)


def _cbrt(x):
    return torch.sign(x) * torch.pow(torch.abs(x), 1.0 / 3)


def _round_half_away(x):
    # MXNet's round rounds halves away from zero; torch.round rounds them to even.
    return torch.sign(x) * torch.floor(torch.abs(x) + 0.5)


def _integral(f):
    """Rounding ``f`` that leaves integer arrays alone (not through float32, which would
    change integers above 2**24)."""
    def k(x):
        return f(x) if x.is_floating_point() else x.clone()
    k.__name__ = f.__name__
    return k


def _rint(x):
    # MXNet's rint takes the floor on ties (rint(-0.5) = -1, rint(1.5) = 1).
    lo, hi = torch.floor(x), torch.ceil(x)
    return torch.where(x - lo <= hi - x, lo, hi)


def _logical_not(x):
    return torch.logical_not(x).to(x.dtype)


def _gamma(x):
    if not x.is_floating_point():
        # Gamma of an integer is an integer: round exp(lgamma) before the cast truncates it.
        return torch.round(_gamma(x.double()))
    fl = torch.floor(x)
    # Gamma is negative on (-2k-1, -2k) and has poles at 0, -1, -2, ... (nan, as MXNet).
    sign = torch.where((x < 0) & (fl.remainder(2) == 1), -1.0, 1.0).to(x.dtype)
    out = torch.exp(torch.lgamma(x)) * sign
    # MXNet: inf at 0, nan at the negative integers
    return out.masked_fill((x < 0) & (x == fl), float('nan')).masked_fill(x == 0, float('inf'))


def _digamma(x):
    # MXNet's digamma is +inf at its poles, 0, -1, -2, ... (torch's is -inf at 0, nan below)
    return torch.digamma(x).masked_fill((x <= 0) & (x == torch.floor(x)), float('inf'))


# Gradients written out where torch's differ from MXNet's at the poles: cbrt's at 0 (torch's
# goes through |x| and gives nan), gamma's and gammaln's at 0, -1, -2, ... (``outputs`` is
# the one output tensor)
_UNARY_GRADS = {
    'cbrt': lambda inputs, outputs, out_grads: (out_grads[0] / (3 * outputs * outputs),),
    'gamma': lambda inputs, outputs, out_grads: (out_grads[0] * outputs *
                                                 _digamma(inputs[0]),),
    'gammaln': lambda inputs, outputs, out_grads: (out_grads[0] * _digamma(inputs[0]),),
}


_UNARY = {
    'abs': torch.abs, 'sign': torch.sign, 'negative': torch.neg, 'exp': torch.exp,
    'expm1': torch.expm1, 'log': torch.log, 'log1p': torch.log1p, 'log2': torch.log2,
    'log10': torch.log10, 'sqrt': torch.sqrt, 'rsqrt': torch.rsqrt, 'cbrt': _cbrt,
    'rcbrt': _rcbrt, 'square': torch.square, 'reciprocal': torch.reciprocal, 'sin': torch.sin,
    'cos': torch.cos, 'tan': torch.tan, 'arcsin': torch.asin, 'arccos': torch.acos,
    'arctan': torch.atan, 'sinh': torch.sinh, 'cosh': torch.cosh, 'tanh': torch.tanh,
    'arcsinh': torch.asinh, 'arccosh': torch.acosh, 'arctanh': torch.atanh,
    'degrees': torch.rad2deg, 'radians': torch.deg2rad, 'floor': _integral(torch.floor),
    'ceil': _integral(torch.ceil), 'round': _integral(_round_half_away),
    'rint': _integral(_rint), 'fix': _integral(torch.trunc), 'trunc': _integral(torch.trunc),
    'relu': torch.relu, 'sigmoid': torch.sigmoid, 'softsign': torch.nn.functional.softsign,
    'erf': torch.erf, 'erfinv': torch.erfinv, 'gamma': _gamma, 'gammaln': torch.lgamma,
    'logical_not': _logical_not,
    # Not in MXNet 1.9's nd namespace (only as Activation types); kept for MXNet 2 scripts.
    'softrelu': torch.nn.functional.softplus, 'log_sigmoid': torch.nn.functional.logsigmoid,
    'mish': torch.nn.functional.mish,
}

for _name, _f in _UNARY.items():
    register(_name, inputs=('data',), infer=same_as_input, infer_attrs=(),
             grad=_UNARY_GRADS.get(_name))(_unary(_f, _name))


def _hard_sigmoid(data, alpha, beta):
    """``clip(alpha * x + beta, 0, 1)``."""
    return torch.clamp(data * alpha + beta, 0.0, 1.0)


register('hard_sigmoid', infer=same_as_input, infer_attrs=(),
         attrs={'alpha': Float(0.2), 'beta': Float(0.5)})(_hard_sigmoid)


def _copy(data):
    return data.clone()


register('_copy', inputs=('data',), infer=same_as_input, infer_attrs=(),
         aliases=('identity',))(_copy)


def _identity_with_attr_like_rhs(lhs, rhs):
    """``lhs``, whose shape is declared equal to ``rhs``'s: shape inference carries either
    one's shape to the other (MXNet's constraint for a parameter computed from another);
    only ``lhs`` gets a gradient."""
    return lhs.clone()


def _same_as_rhs(attrs, shapes, out_shapes=None):
    lhs, rhs = shapes
    if out_shapes is not None and out_shapes[0]:
        lhs = lhs or out_shapes[0]
    known = lhs if lhs and all(lhs) else rhs
    return [lhs or known, rhs or known]


register('_identity_with_attr_like_rhs', inputs=('lhs', 'rhs'), infer=same_as_input,
         infer_attrs=(), fill=_same_as_rhs, back=_same_as_rhs)(_identity_with_attr_like_rhs)


def _detach(data):
    return data.detach()


register('_detach', inputs=('data',), infer=same_as_input, infer_attrs=(), view=True)(_detach)


def _block_grad(data):
    """Passes ``data`` forward and stops the gradient."""
    return data.detach()


register('BlockGrad', inputs=('data',), infer=same_as_input, infer_attrs=(), view=True,
         aliases=('stop_gradient',))(_block_grad)
get('BlockGrad').stops_gradient = True


def _zeros_like(data):
    return torch.zeros_like(data)


def _ones_like(data):
    return torch.ones_like(data)


register('zeros_like', inputs=('data',), infer=same_as_input, infer_attrs=())(_zeros_like)
register('ones_like', inputs=('data',), infer=same_as_input, infer_attrs=())(_ones_like)


def _clip(data, a_min, a_max):
    return torch.clamp(data, _scalar(data, a_min), _scalar(data, a_max))


register('clip', inputs=('data',), attrs={'a_min': Float(), 'a_max': Float()},
         infer=same_as_input, infer_attrs=())(_clip)


def _add_n(*args, num_args=0):
    """The elementwise sum of the inputs."""
    out = args[0]
    for a in args[1:]:
        out = out + a
    return out if len(args) > 1 else out.clone()


def _add_n_rule(attrs, shapes, dtypes):
    for s, d in zip(shapes[1:], dtypes[1:]):
        if s != shapes[0] or d != dtypes[0]:
            raise ShapeError("add_n needs inputs of one shape and dtype, got %s" %
                             ', '.join('%s %s' % sd for sd in zip(shapes, dtypes)))
    return (shapes[0],), (dtypes[0],)


register('add_n', inputs=('*args',), attrs={'num_args': Int(0)}, infer=_add_n_rule,
         infer_attrs=(), key_var_num_args='num_args', aliases=('ElementWiseSum', '_sum'))(_add_n)


def _smooth_l1(data, scalar):
    s2 = scalar * scalar
    a = torch.abs(data)
    return torch.where(a < 1.0 / s2, 0.5 * s2 * data * data, a - 0.5 / s2)


register('smooth_l1', inputs=('data',), attrs={'scalar': Float(1.0)}, infer=same_as_input,
         infer_attrs=())(_smooth_l1)


# -- mixed precision ---------------------------------------------------------------------------

_FLOAT_WIDTH = {'float16': 0, 'bfloat16': 0, 'float32': 1, 'float64': 2}


def _amp_cast(data, dtype):
    """``data`` in ``dtype`` (integers are left alone, as MXNet's amp_cast)."""
    if not data.is_floating_point():
        return data.clone()
    return data.to(dtype_torch(dtype), copy=True)


register('amp_cast', attrs={'dtype': DType()},
         infer=lambda a, s, d: ((s[0],), (a['dtype'] if d[0] in _FLOAT_WIDTH else d[0],)))(
    _amp_cast)


def _multicast_dtype(attrs, dtypes):
    floats = [d for d in dtypes if d in _FLOAT_WIDTH]
    if not floats:
        return None
    pick = min if attrs['cast_narrow'] else max
    return pick(floats, key=lambda d: _FLOAT_WIDTH[d])


def _amp_multicast(*data, num_outputs, cast_narrow):
    """Every input in the widest float dtype among them (the narrowest with ``cast_narrow``)."""
    names = [str(d.dtype).replace('torch.', '') for d in data]
    target = _multicast_dtype({'cast_narrow': cast_narrow}, names)
    return tuple(d.to(dtype_torch(target), copy=True) if target and d.is_floating_point()
                 else d.clone() for d in data)


def _amp_multicast_rule(attrs, shapes, dtypes):
    target = _multicast_dtype(attrs, dtypes)
    return tuple(shapes), tuple(target if target and d in _FLOAT_WIDTH else d for d in dtypes)


register('amp_multicast', inputs=('*data',), key_var_num_args='num_outputs',
         num_outputs=lambda attrs: attrs['num_outputs'], infer=_amp_multicast_rule,
         attrs={'num_outputs': Int(1), 'cast_narrow': Bool(False)})(_amp_multicast)
