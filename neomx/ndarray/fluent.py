"""NDArray methods that call operators (``x.sum(axis=1)`` is ``nd.sum(x, axis=1)``)."""
from ..ops import registry
from .gen import nd_function

# MXNet 1.9's fluent methods, each the operator of the same name with the array first.
FLUENT = (
    'abs', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh', 'argmax',
    'argmax_channel', 'argmin', 'argsort', 'broadcast_axes', 'broadcast_like', 'broadcast_to',
    'cbrt', 'ceil', 'clip', 'cos', 'cosh', 'degrees', 'depth_to_space', 'diag', 'exp',
    'expand_dims',
    'expm1', 'fix', 'flatten', 'flip', 'floor', 'log', 'log10', 'log1p', 'log2', 'log_sigmoid',
    'log_softmax', 'max', 'mean', 'min', 'mish', 'nanprod', 'nansum', 'norm', 'one_hot',
    'ones_like', 'pad', 'pick', 'prod', 'radians', 'rcbrt', 'reciprocal', 'relu', 'repeat',
    'reshape_like', 'rint', 'round', 'rsqrt', 'shape_array', 'sigmoid', 'sign', 'sin', 'sinh',
    'size_array', 'slice', 'slice_axis', 'slice_like', 'softmax', 'softmin', 'sort',
    'space_to_depth', 'split', 'sqrt', 'square', 'squeeze', 'sum', 'swapaxes', 'take', 'tan',
    'tanh', 'tile', 'topk', 'transpose', 'trunc', 'zeros_like',
)


def _method(fn, name):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = 'Same as ``nd.%s(self, ...)``.\n\n%s' % (name, fn.__doc__ or '')
    return method


def slice_assign(self, rhs, begin, end, step):
    """Writes ``rhs`` into the slice ``begin:end:step`` of this array, in place; returns it."""
    return nd_function(registry.get('_slice_assign'))(self, rhs, begin, end, step, out=self)


def slice_assign_scalar(self, value, begin, end, step):
    """Sets the slice ``begin:end:step`` of this array to ``value``, in place; returns it."""
    return nd_function(registry.get('_slice_assign_scalar'))(self, value, begin, end, step,
                                                             out=self)


def split_v2(self, *args, **kwargs):
    """Same as ``nd.split_v2(self, ...)``."""
    from .creation import split_v2 as f
    return f(self, *args, **kwargs)


def add_fluent_methods(cls):
    """Adds the fluent methods whose operators are registered."""
    for name in FLUENT:
        if hasattr(cls, name) or not registry.exists(name):
            continue
        setattr(cls, name, _method(nd_function(registry.get(name)), name))
    for f in (slice_assign, slice_assign_scalar, split_v2):
        if not hasattr(cls, f.__name__):
            setattr(cls, f.__name__, f)
