"""Reductions: sum, mean, prod, max, min, nansum, nanprod, argmax, argmin, norm.

MXNet 1.x has no 0-d arrays: reducing every axis gives shape (1,).
"""
import torch

from .registry import Axis, Bool, Enum, Int, IntOrNone, ShapeError, register


def reduce_axes(ndim, axis, exclude):
    if axis is None or axis == ():
        axes = tuple(range(ndim))
        return () if exclude and axis is not None else axes
    axes = axis if isinstance(axis, tuple) else (axis,)
    norm = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ShapeError("axis %d is out of range for %d dims" % (a, ndim))
        norm.append(a % ndim)
    if exclude:
        return tuple(k for k in range(ndim) if k not in norm)
    return tuple(sorted(set(norm)))


def _finish(out, keepdims):
    return out.reshape(1) if out.dim() == 0 else out


def _reducer(f):
    def kernel(data, axis, keepdims, exclude):
        axes = reduce_axes(data.dim(), axis, exclude)
        if not axes:
            return data.clone()
        return _finish(f(data, axes, keepdims), keepdims)
    return kernel


def _sum(x, axes, keepdims):
    return torch.sum(x, dim=axes, keepdim=keepdims)


def _mean(x, axes, keepdims):
    return torch.mean(x, dim=axes, keepdim=keepdims) if x.is_floating_point() else \
        torch.div(torch.sum(x, dim=axes, keepdim=keepdims), _count(x, axes), rounding_mode='trunc')


def _count(x, axes):
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def _multi(f):
    def g(x, axes, keepdims):
        out = x
        for a in sorted(axes, reverse=True):
            out = f(out, a, keepdims)
        return out
    return g


_prod = _multi(lambda x, a, k: torch.prod(x, dim=a, keepdim=k))
_max = _multi(lambda x, a, k: torch.amax(x, dim=a, keepdim=k))
_min = _multi(lambda x, a, k: torch.amin(x, dim=a, keepdim=k))
_nanprod = _multi(lambda x, a, k: torch.prod(torch.nan_to_num(x, nan=1.0), dim=a, keepdim=k))


def _nansum(x, axes, keepdims):
    return torch.nansum(x, dim=axes, keepdim=keepdims)


def _keep_dtype(f):
    def g(x, axes, keepdims):
        r = f(x, axes, keepdims)
        return r if r.dtype == x.dtype else r.to(x.dtype)
    return g


_REDUCE_ATTRS = {'axis': Axis(None), 'keepdims': Bool(False), 'exclude': Bool(False)}
for _name, _f, _aliases in (('sum', _sum, ('sum_axis',)), ('mean', _mean, ()),
                            ('prod', _prod, ()), ('max', _max, ('max_axis',)),
                            ('min', _min, ('min_axis',)), ('nansum', _nansum, ()),
                            ('nanprod', _nanprod, ())):
    register(_name, fluent=True, attrs=_REDUCE_ATTRS, aliases=_aliases)(_reducer(_keep_dtype(_f)))


def _arg(f):
    def kernel(data, axis, keepdims):
        if axis is None:
            out = f(data.reshape(-1), 0, False)
            out = out.reshape((1,) * data.dim()) if keepdims else out.reshape(1)
        else:
            out = f(data, axis % data.dim(), keepdims)
            if out.dim() == 0:
                out = out.reshape(1)
        # MXNet returns the indices in the input's (floating) dtype.
        return out.to(data.dtype if data.is_floating_point() else torch.float32)
    return kernel


register('argmax', fluent=True, attrs={'axis': IntOrNone(None), 'keepdims': Bool(False)})(
    _arg(lambda x, a, k: torch.argmax(x, dim=a, keepdim=k)))
register('argmin', fluent=True, attrs={'axis': IntOrNone(None), 'keepdims': Bool(False)})(
    _arg(lambda x, a, k: torch.argmin(x, dim=a, keepdim=k)))


def _argmax_channel(data):
    return _arg(lambda x, a, k: torch.argmax(x, dim=a, keepdim=k))(data, -1, False)


register('argmax_channel')(_argmax_channel)


def _norm(data, ord, axis, out_dtype, keepdims):
    axes = reduce_axes(data.dim(), axis, False)
    if ord == 2:
        out = torch.sqrt(torch.sum(data * data, dim=axes, keepdim=keepdims))
    else:
        out = torch.sum(torch.abs(data), dim=axes, keepdim=keepdims)
    return _finish(out, keepdims)


register('norm', fluent=True,
         attrs={'ord': Int(2), 'axis': Axis(None), 'out_dtype': Enum('float16', 'float32', 'float64',
                                                                    'int32', 'int64', 'int8',
                                                                    default=None),
                'keepdims': Bool(False)})(_norm)
