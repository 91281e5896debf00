"""Reductions (sum, mean, prod, max, min, nansum, nanprod, argmax, argmin, norm, moments) and
softmin.

MXNet 1.x has no 0-d arrays: reducing every axis gives shape (1,). A reduction keeps the
input's dtype (an int32 mean truncates); argmax/argmin return indices in the input's dtype.
"""
import ast

import torch

from ..base import dtype_torch
from .registry import Attr, Axis, Bool, DType, Enum, FloatOrNone, Int, IntOrNone, ShapeError, \
    Shape, register


def reduce_axes(ndim, axis, exclude):
    """The sorted axes a reduction over ``axis`` (None or () for all; negative counts from the
    end) reduces; with ``exclude``, the axes not listed."""
    if axis is None or axis == ():
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    norm = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ShapeError("axis %d is out of range for an array of %d dims" % (a, ndim))
        norm.append(a % ndim)
    if len(set(norm)) != len(norm):
        raise ShapeError("axis %s has duplicates" % (axis,))
    if exclude:
        return tuple(k for k in range(ndim) if k not in norm)
    return tuple(sorted(norm))


def reduced_shape(shape, axes, keepdims):
    """The shape left by reducing ``axes`` of ``shape``: (1,) when nothing is left."""
    if keepdims:
        return tuple(1 if k in axes else d for k, d in enumerate(shape))
    return tuple(d for k, d in enumerate(shape) if k not in axes) or (1,)


def _reduce_rule(attrs, shapes, dtypes):
    # An explicit rule: inferring on 'meta' tensors would import torch's compiler stack
    # (seconds) the first time a reduction is used.
    shape = shapes[0]
    axes = reduce_axes(len(shape), attrs['axis'], attrs.get('exclude', False))
    if not axes:
        return (shape,), (dtypes[0],)
    dtype = attrs.get('out_dtype') or dtypes[0]
    return (reduced_shape(shape, axes, attrs['keepdims']),), (dtype,)


def _finish(out, dtype):
    if out.dim() == 0:
        out = out.reshape(1)
    return out if out.dtype == dtype else out.to(dtype)


def _reducer(f, name):
    def kernel(data, axis, keepdims, exclude):
        axes = reduce_axes(data.dim(), axis, exclude)
        if not axes:
            return data.clone()
        return _finish(f(data, axes, keepdims), data.dtype)
    kernel.__name__ = name
    kernel.__doc__ = ("The %s over ``axis`` (every axis when None; the others with "
                      "``exclude``), keeping reduced axes as 1 with ``keepdims``." % name)
    return kernel


def _sum(x, axes, keepdims):
    return torch.sum(x, dim=axes, keepdim=keepdims)


def _mean(x, axes, keepdims):
    if x.is_floating_point():
        return torch.mean(x, dim=axes, keepdim=keepdims)
    n = 1
    for a in axes:
        n *= x.shape[a]
    return torch.div(torch.sum(x, dim=axes, keepdim=keepdims), n, rounding_mode='trunc')


def _prod(x, axes, keepdims):
    for a in sorted(axes, reverse=True):    # torch.prod takes one axis at a time
        x = torch.prod(x, dim=a, keepdim=keepdims)
    return x


def _nansum(x, axes, keepdims):
    if not x.is_floating_point():
        return _sum(x, axes, keepdims)
    return torch.nansum(x, dim=axes, keepdim=keepdims)


def _nanprod(x, axes, keepdims):
    if x.is_floating_point():
        x = torch.nan_to_num(x, nan=1.0, posinf=float('inf'), neginf=float('-inf'))
    return _prod(x, axes, keepdims)


def _extreme_grad(inputs, outputs, out_grads, axis, keepdims, exclude):
    # MXNet gives the full gradient to every element equal to the extreme (ties included);
    # torch would share it among them.
    x, = inputs
    axes = reduce_axes(x.dim(), axis, exclude)
    out, g = outputs, out_grads[0]
    if not keepdims and axes:
        shape = [1 if k in axes else d for k, d in enumerate(x.shape)]
        out, g = out.reshape(shape), g.reshape(shape)
    return ((x == out).to(g.dtype) * g,)


_REDUCE_ATTRS = {'axis': Axis(None), 'keepdims': Bool(False), 'exclude': Bool(False)}
for _name, _f, _aliases in (('sum', _sum, ('sum_axis',)), ('mean', _mean, ()),
                            ('prod', _prod, ()), ('nansum', _nansum, ()),
                            ('nanprod', _nanprod, ())):
    register(_name, attrs=_REDUCE_ATTRS, aliases=_aliases, infer=_reduce_rule)(_reducer(_f, _name))

# MXNet's sum of squares (a kernel of its own there for row_sparse inputs; the same values)
register('_square_sum', attrs=_REDUCE_ATTRS, infer=_reduce_rule)(
    _reducer(lambda x, axes, keepdims: torch.sum(x * x, dim=axes, keepdim=keepdims),
             '_square_sum'))


def _extreme_rule(attrs, shapes, dtypes):
    """A reduction's rule, refusing an empty axis: it has no largest or smallest element."""
    shape = shapes[0]
    for a in reduce_axes(len(shape), attrs['axis'], attrs['exclude']):
        if shape[a] == 0:
            raise ShapeError("cannot take the max or min over axis %d of size 0 (shape %s)"
                             % (a, tuple(shape)))
    return _reduce_rule(attrs, shapes, dtypes)


register('max', attrs=_REDUCE_ATTRS, aliases=('max_axis',), grad=_extreme_grad,
         infer=_extreme_rule)(
    _reducer(lambda x, axes, k: torch.amax(x, dim=axes, keepdim=k), 'max'))
register('min', attrs=_REDUCE_ATTRS, aliases=('min_axis',), grad=_extreme_grad,
         infer=_extreme_rule)(
    _reducer(lambda x, axes, k: torch.amin(x, dim=axes, keepdim=k), 'min'))


def _arg(f, name):
    def kernel(data, axis, keepdims):
        if axis is None:
            out = f(data.reshape(-1), 0, False)
            out = out.reshape((1,) * data.dim()) if keepdims else out.reshape(1)
        else:
            if not -data.dim() <= axis < data.dim():
                raise ShapeError("axis %d is out of range for an array of %d dims"
                                 % (axis, data.dim()))
            out = f(data, axis % data.dim(), keepdims)
            if out.dim() == 0:
                out = out.reshape(1)
        return out.to(data.dtype)    # MXNet returns indices in the input's dtype
    kernel.__name__ = name
    kernel.__doc__ = ("The index of the %s value along ``axis`` (of the flattened array when "
                      "None), in the input's dtype." % name[3:])
    return kernel


def _arg_rule(attrs, shapes, dtypes):
    shape, axis = shapes[0], attrs['axis']
    if axis is None:
        return (((1,) * len(shape) if attrs['keepdims'] else (1,)),), (dtypes[0],)
    axes = reduce_axes(len(shape), axis, False)
    return (reduced_shape(shape, axes, attrs['keepdims']),), (dtypes[0],)


_ARG_ATTRS = {'axis': IntOrNone(None), 'keepdims': Bool(False)}
_argmax = _arg(lambda x, a, k: torch.argmax(x, dim=a, keepdim=k), 'argmax')
register('argmax', attrs=_ARG_ATTRS, infer=_arg_rule)(_argmax)
register('argmin', attrs=_ARG_ATTRS, infer=_arg_rule)(
    _arg(lambda x, a, k: torch.argmin(x, dim=a, keepdim=k), 'argmin'))


def _argmax_channel(data):
    """argmax along axis 1, as MXNet's argmax_channel."""
    return _argmax(data, 1 if data.dim() > 1 else 0, False)


register('argmax_channel')(_argmax_channel)


def _norm_rule(attrs, shapes, dtypes):
    if attrs['ord'] not in (1, 2):
        raise ShapeError("norm supports ord=1 and ord=2 only, got ord=%d" % attrs['ord'])
    return _reduce_rule(attrs, shapes, dtypes)


def _norm(data, ord, axis, out_dtype, keepdims):
    """The L1 or L2 norm over ``axis`` (the whole array when None)."""
    if ord not in (1, 2):
        raise ShapeError("norm supports ord=1 and ord=2 only, got ord=%d" % ord)
    axes = reduce_axes(data.dim(), axis, False)
    x = data if data.is_floating_point() else data.double()
    out = torch.linalg.vector_norm(x, ord, dim=axes, keepdim=keepdims)
    return _finish(out, dtype_torch(out_dtype) if out_dtype else data.dtype)


register('norm', infer=_norm_rule,
         attrs={'ord': Int(2), 'axis': Axis(None),
                'out_dtype': Enum('float16', 'float32', 'float64', 'int32', 'int64', 'int8',
                                  default=None),
                'keepdims': Bool(False)})(_norm)


def _moments(data, axes, keepdims):
    """Mean and (population) variance over ``axes``."""
    if not axes:
        raise ShapeError("moments needs axes (give every axis for global moments)")
    dims = reduce_axes(data.dim(), axes, False)
    var, mean = torch.var_mean(data, dim=dims, keepdim=keepdims, correction=0)
    return _finish(mean, data.dtype), _finish(var, data.dtype)


def _moments_rule(attrs, shapes, dtypes):
    if not attrs['axes']:
        raise ShapeError("moments needs axes (give every axis for global moments)")
    shape = reduced_shape(shapes[0], reduce_axes(len(shapes[0]), attrs['axes'], False),
                          attrs['keepdims'])
    return (shape, shape), (dtypes[0], dtypes[0])


register('moments', num_outputs=2, output_names=('mean', 'var'), infer=_moments_rule,
         attrs={'axes': Shape(None), 'keepdims': Bool(False)})(_moments)


def _softmin(data, axis, temperature, dtype, use_length):
    """softmax(-data / temperature) along ``axis``."""
    if use_length:
        raise ShapeError("softmin: use_length=True is not supported")
    x = -data if temperature in (None, 1.0) else data / -temperature
    out = torch.softmax(x, dim=axis % max(data.dim(), 1))
    return out if dtype is None else out.to(dtype_torch(dtype))


def _softmin_rule(attrs, shapes, dtypes):
    if attrs['use_length']:
        raise ShapeError("softmin: use_length=True is not supported")
    reduce_axes(len(shapes[0]), attrs['axis'], False)     # checks the axis
    return (shapes[0],), (attrs['dtype'] or dtypes[0],)


register('softmin', infer=_softmin_rule,
         attrs={'axis': Int(-1), 'temperature': FloatOrNone(None), 'dtype': DType(None),
                'use_length': Bool(False)})(_softmin)


def _cumsum(a, axis, dtype):
    """Running sums along ``axis`` (of the flattened array when None)."""
    x, dim = (a.reshape(-1), 0) if axis is None else (a, axis)
    if not -max(x.dim(), 1) <= dim < max(x.dim(), 1):
        raise ShapeError("axis %d is out of range for an array of %d dims" % (dim, a.dim()))
    want = dtype_torch(dtype) if dtype else (torch.int64 if a.dtype == torch.bool else a.dtype)
    if want == torch.float16 and x.shape[dim] > 1 and x.device.type != 'meta':
        # Summed in float16 step by step, as NumPy and MXNet do (torch accumulates in float32,
        # which differs by more than float16's tolerance on longer sums).
        x = x.to(want)
        parts = [x.select(dim, 0)]
        for i in range(1, x.shape[dim]):
            parts.append(parts[-1] + x.select(dim, i))
        return torch.stack(parts, dim)
    if want != a.dtype and want.is_floating_point:
        return torch.cumsum(x.to(want), dim)
    return torch.cumsum(x, dim).to(want)


register('_np_cumsum', aliases=('cumsum',), inputs=('a',),
         attrs={'axis': IntOrNone(None), 'dtype': DType(None)})(_cumsum)


def _all_finite_kernel(*data, init_output=True, num_arrays=1):
    """1 (float32, shape (1,)) when every element of every input is finite, else 0."""
    ok = torch.ones((), dtype=torch.bool, device=data[0].device)
    for d in data:
        ok = ok & torch.isfinite(d).all()
    return ok.reshape(1).to(torch.float32)


_FINITE_RULE = dict(infer=lambda a, s, d: (((1,),), ('float32',)), infer_attrs=())
register('all_finite', attrs={'init_output': Bool(True)}, **_FINITE_RULE)(
    lambda data, init_output: _all_finite_kernel(data))
register('multi_all_finite', inputs=('*data',), key_var_num_args='num_arrays',
         attrs={'num_arrays': Int(1), 'init_output': Bool(True)}, **_FINITE_RULE)(
    _all_finite_kernel)


def _multi_sum_sq(*data, num_arrays=1):
    """The sum of squares of each input, as one float32 vector."""
    return torch.stack([(d.float() * d.float()).sum() for d in data])


register('multi_sum_sq', inputs=('*data',), key_var_num_args='num_arrays',
         attrs={'num_arrays': Int(1)},
         infer=lambda a, s, d: (((len(s),),), ('float32',)), infer_attrs=())(_multi_sum_sq)


def _histogram(data, bins=None, bin_cnt=None, range=None):
    """Counts (int64) of ``data`` in ``bin_cnt`` equal bins over ``range``, or between the
    edges ``bins``; returns (counts, edges). The last bin includes its right edge."""
    if bins is not None:
        edges = bins.to(data.dtype)
    else:
        if bin_cnt is None or range is None:
            raise ShapeError("histogram needs bins, or bin_cnt and range")
        # MXNet's edges, (low * (n - i) + high * i) / n in double: the middle edge of a
        # symmetric range is exactly 0 (linspace's is not)
        i = torch.arange(bin_cnt + 1, dtype=torch.float64, device=data.device)
        edges = ((range[0] * (bin_cnt - i) + range[1] * i) / bin_cnt).to(data.dtype)
    n = edges.shape[0] - 1
    if data.device.type == 'meta':
        return torch.empty((n,), dtype=torch.int64, device='meta'), edges.clone()
    x = data.reshape(-1)
    which = torch.bucketize(x, edges, right=True) - 1
    which = torch.where(x == edges[-1], torch.full_like(which, n - 1), which)
    keep = (which >= 0) & (which < n)
    counts = torch.bincount(which[keep], minlength=n)
    return counts, edges.clone()


def _histogram_rule(attrs, shapes, dtypes):
    if len(shapes) > 1 and shapes[1] is not None:
        if len(shapes[1]) != 1 or shapes[1][0] < 2:
            raise ShapeError("bins must be 1-d with at least 2 edges, got %s" % (shapes[1],))
        n = shapes[1][0] - 1
    else:
        if attrs['bin_cnt'] is None or attrs['range'] is None:
            raise ShapeError("histogram needs bins, or bin_cnt and range")
        n = attrs['bin_cnt']
    return ((n,), (n + 1,)), ('int64', dtypes[0])


class _Range(Attr):
    """A (low, high) pair of numbers, or None."""
    kind = '(low, high) pair'

    def parse(self, value):
        if isinstance(value, str):
            value = None if value.strip() == 'None' else ast.literal_eval(value.strip())
        if value is None:
            return None
        low, high = value
        return float(low), float(high)


register('_histogram', inputs=('data', 'bins'), num_outputs=2, infer=_histogram_rule,
         drop_inputs=lambda attrs: ('bins',) if attrs['bin_cnt'] is not None else (),
         attrs={'bin_cnt': IntOrNone(None), 'range': _Range(None)})(_histogram)
