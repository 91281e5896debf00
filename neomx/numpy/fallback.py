"""NumPy functions neomx computes with NumPy itself, as MXNet's ``mx.np.fallback`` does: the
array arguments are copied to the host, NumPy runs, and array results come back as
``mx.np.ndarray`` on the device of the first array argument. They wait for their inputs and
are not differentiable.
"""
import functools

import numpy as onp

from ..ndarray.ndarray import NDArray

__all__ = ['fallback', 'alltrue', 'sometrue', 'apply_along_axis', 'apply_over_axes',
           'argpartition', 'partition', 'choose', 'compress', 'corrcoef', 'correlate', 'cov',
           'digitize', 'extract', 'histogram2d', 'histogram_bin_edges', 'histogramdd', 'i0',
           'in1d', 'isin', 'intersect1d', 'lexsort', 'min_scalar_type', 'nanargmax',
           'nanargmin', 'nancumprod', 'nancumsum', 'nanmedian', 'nanpercentile',
           'nanquantile', 'nanstd', 'nanvar', 'nanmean', 'packbits', 'unpackbits', 'piecewise',
           'poly', 'polyadd', 'polydiv', 'polyfit', 'polyint', 'polymul', 'polysub', 'polyder',
           'roots', 'select', 'setdiff1d', 'setxor1d', 'union1d', 'trapz', 'trim_zeros',
           'tril_indices_from', 'triu_indices_from', 'unwrap', 'vander', 'convolve',
           'genfromtxt', 'product', 'cumproduct', 'fill_diagonal', 'mirr', 'npv', 'pv', 'ppmt',
           'rate', 'flatiter', 'iscomplexobj', 'isrealobj', 'iscomplex', 'isreal',
           'shape_like']


def _to_host(x):
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, (list, tuple)):
        conv = [_to_host(v) for v in x]
        return type(x)(conv) if isinstance(x, tuple) else conv
    return x


def _first_ctx(args, kwargs):
    for x in list(args) + list(kwargs.values()):
        if isinstance(x, NDArray):
            return x._ctx
        if isinstance(x, (list, tuple)):
            for v in x:
                if isinstance(v, NDArray):
                    return v._ctx
    return None


def _to_device(r, ctx):
    from .multiarray import array
    if isinstance(r, onp.ndarray):
        if r.dtype.kind in 'OUSc':
            return r
        return array(r, dtype=r.dtype if r.dtype != onp.float64 or True else None, ctx=ctx)
    if isinstance(r, tuple):
        return tuple(_to_device(v, ctx) for v in r)
    if isinstance(r, list):
        return [_to_device(v, ctx) for v in r]
    return r


def fallback(name):
    """``numpy.<name>`` on neomx arrays (see the module docstring)."""
    func = getattr(onp, name)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        ctx = _first_ctx(args, kwargs)
        r = func(*[_to_host(a) for a in args], **{k: _to_host(v) for k, v in kwargs.items()})
        return _to_device(r, ctx)
    wrapper.__doc__ = "NumPy's ``%s``, computed by NumPy on the host." % name
    return wrapper


def _optional(name, alt=None):
    if hasattr(onp, name):
        return fallback(name)
    if alt is not None and hasattr(onp, alt):
        return fallback(alt)

    def missing(*args, **kwargs):
        raise NotImplementedError("numpy %s has no %s" % (onp.__version__, name))
    return missing


alltrue = _optional('all')
sometrue = _optional('any')
apply_along_axis = fallback('apply_along_axis')
apply_over_axes = fallback('apply_over_axes')
argpartition = fallback('argpartition')
partition = fallback('partition')
choose = fallback('choose')
compress = fallback('compress')
corrcoef = fallback('corrcoef')
correlate = fallback('correlate')
convolve = fallback('convolve')
cov = fallback('cov')
digitize = fallback('digitize')
extract = fallback('extract')
histogram2d = fallback('histogram2d')
histogram_bin_edges = fallback('histogram_bin_edges')
histogramdd = fallback('histogramdd')
i0 = fallback('i0')
in1d = _optional('in1d', 'isin')
isin = fallback('isin')
intersect1d = fallback('intersect1d')
lexsort = fallback('lexsort')
min_scalar_type = onp.min_scalar_type
nanargmax = fallback('nanargmax')
nanargmin = fallback('nanargmin')
nancumprod = fallback('nancumprod')
nancumsum = fallback('nancumsum')
nanmedian = fallback('nanmedian')
nanpercentile = fallback('nanpercentile')
nanquantile = fallback('nanquantile')
nanstd = fallback('nanstd')
nanvar = fallback('nanvar')
nanmean = fallback('nanmean')
packbits = fallback('packbits')
unpackbits = fallback('unpackbits')
piecewise = fallback('piecewise')
poly = fallback('poly')
polyadd = fallback('polyadd')
polydiv = fallback('polydiv')
polyfit = fallback('polyfit')
polyint = fallback('polyint')
polymul = fallback('polymul')
polysub = fallback('polysub')
polyder = fallback('polyder')
roots = fallback('roots')
select = fallback('select')
setdiff1d = fallback('setdiff1d')
setxor1d = fallback('setxor1d')
union1d = fallback('union1d')
trapz = _optional('trapz', 'trapezoid')
trim_zeros = fallback('trim_zeros')
tril_indices_from = fallback('tril_indices_from')
triu_indices_from = fallback('triu_indices_from')
unwrap = fallback('unwrap')
vander = fallback('vander')
genfromtxt = fallback('genfromtxt')
product = _optional('prod')
cumproduct = _optional('cumprod')
fill_diagonal = fallback('fill_diagonal')
iscomplexobj = onp.iscomplexobj
isrealobj = onp.isrealobj
iscomplex = fallback('iscomplex')
isreal = fallback('isreal')


def _financial(name):
    def missing(*args, **kwargs):
        raise NotImplementedError("%s: NumPy's financial functions moved to the numpy_financial "
                                  "package, which neomx does not depend on" % name)
    return missing


mirr = _financial('mirr')
npv = _financial('npv')
pv = _financial('pv')
ppmt = _financial('ppmt')
rate = _financial('rate')
flatiter = onp.flatiter


def shape_like(a):
    return onp.shape(_to_host(a))
