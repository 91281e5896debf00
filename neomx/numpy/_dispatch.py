"""NumPy's dispatch protocols for ``mx.np.ndarray`` (``__array_function__``,
``__array_ufunc__``): a NumPy function or ufunc called on mx.np arrays runs mx.np's function of
that name and gives mx.np arrays, as in MXNet (``onp.concatenate([a, b])`` is
``mx.np.concatenate([a, b])``). Functions outside the lists run in NumPy on host copies, and
their array results come back as mx.np arrays. The lists are MXNet 1.9.1's, less the names the
running NumPy no longer has (NumPy 2 dropped ``sometrue``, ``round_`` and ``product``).

>>> import numpy as onp, neomx as mx
>>> a = mx.np.array([1.0, 2.0])
>>> isinstance(onp.concatenate([a, a]), mx.np.ndarray), onp.exp(a).shape
(True, (2,))
"""
import functools

import numpy as onp

__all__ = ['ARRAY_FUNCTIONS', 'ARRAY_UFUNCS', 'array_function', 'array_ufunc',
           'with_array_function_protocol', 'with_array_ufunc_protocol']

_FUNCTION_NAMES = """
all any sometrue argmin argmax around round round_ argsort sort append broadcast_arrays
broadcast_to clip concatenate copy cumsum diag diagonal diagflat dot expand_dims fix flip flipud
fliplr inner insert max amax mean min amin nonzero ones_like atleast_1d atleast_2d atleast_3d prod
product ravel repeat reshape roll split array_split hsplit vsplit dsplit squeeze stack std sum
swapaxes take tensordot tile transpose unique unravel_index diag_indices_from delete var vdot
vstack column_stack hstack dstack zeros_like linalg.norm linalg.cholesky linalg.inv linalg.solve
linalg.tensorinv linalg.tensorsolve linalg.pinv linalg.eigvals linalg.eig linalg.eigvalsh
linalg.eigh shape trace tril meshgrid outer einsum polyval shares_memory may_share_memory
quantile percentile diff ediff1d resize where full_like bincount empty_like nan_to_num isnan
isfinite isposinf isneginf isinf pad"""
_UFUNC_NAMES = """
abs fabs add arctan2 copysign degrees hypot lcm subtract multiply true_divide negative power mod
matmul absolute rint sign exp log log2 log10 expm1 sqrt square cbrt reciprocal invert bitwise_not
remainder sin cos tan sinh cosh tanh arcsin arccos arctan arcsinh arccosh arctanh maximum minimum
ceil trunc floor bitwise_and bitwise_xor bitwise_or logical_not equal not_equal less less_equal
greater greater_equal"""


def _lookup(module, name):
    for part in name.split('.'):
        module = getattr(module, part, None)
        if module is None:
            return None
    return module


ARRAY_FUNCTIONS = [n for n in _FUNCTION_NAMES.split() if _lookup(onp, n) is not None]
ARRAY_UFUNCS = [n for n in _UFUNC_NAMES.split() if _lookup(onp, n) is not None]
_TABLE = {}


def _mx_of(numpy_fn, names):
    """mx.np's function standing for NumPy function ``numpy_fn`` (None outside ``names``)."""
    if not _TABLE:
        from .. import numpy as mxnp
        for n in ARRAY_FUNCTIONS + ARRAY_UFUNCS:
            _TABLE[_lookup(onp, n)] = (n, _lookup(mxnp, n))
    entry = _TABLE.get(numpy_fn)
    return entry[1] if entry is not None and entry[0] in names else None


def _to_host(x):
    from .multiarray import ndarray
    if isinstance(x, ndarray):
        return x.asnumpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_to_host(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_host(v) for k, v in x.items()}
    return x


def _to_mx(x):
    from .multiarray import array
    if isinstance(x, onp.ndarray):
        return array(x, dtype=x.dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_mx(v) for v in x)
    return x


def _numpy_container(func, result):
    """``result`` (a list or tuple of mx.np's function) in the container NumPy's ``func``
    gives: NumPy 2 returns tuples where NumPy 1 (and MXNet) returned lists (broadcast_arrays,
    meshgrid, atleast_*d of several arrays) and named tuples from eig and eigh."""
    name = getattr(func, '__name__', '')
    if name in ('broadcast_arrays', 'meshgrid', 'atleast_1d', 'atleast_2d', 'atleast_3d') \
            and onp.lib.NumpyVersion(onp.__version__) >= '2.0.0':
        return tuple(result)
    if name in ('eig', 'eigh'):
        kind = getattr(getattr(onp.linalg, '_linalg', None), name.capitalize() + 'Result', None)
        if kind is not None:
            return kind(*result)
    return result


def array_function(func, types, args, kwargs):
    """``__array_function__``: mx.np's function of that name, else NumPy's on host copies."""
    fn = _mx_of(func, ARRAY_FUNCTIONS)
    if fn is not None:
        out = fn(*args, **kwargs)
        return _numpy_container(func, out) if isinstance(out, (list, tuple)) else out
    return _to_mx(func(*_to_host(args), **_to_host(kwargs)))


def array_ufunc(ufunc, method, inputs, kwargs):
    """``__array_ufunc__``: a ufunc called plainly runs mx.np's function of that name; other
    methods (``reduce``, ``at``, ...) and other ufuncs run in NumPy on host copies."""
    fn = _mx_of(ufunc, ARRAY_UFUNCS) if method == '__call__' else None
    if fn is not None and 'out' not in kwargs:
        return fn(*inputs, **kwargs)
    return _to_mx(getattr(ufunc, method)(*_to_host(inputs), **_to_host(kwargs)))


def _protocol_test(what, func):
    @functools.wraps(func)
    def run(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except Exception as e:
            raise RuntimeError('Running function %s with NumPy %s protocol failed with exception '
                               '%s' % (func.__name__, what, e)) from e
    return run


def with_array_function_protocol(func):
    """Runs ``func`` with the array function protocol (always there with NumPy >= 1.17); its
    errors come back as RuntimeError naming it, as MXNet's decorator reports them."""
    return _protocol_test('array function', func)


def with_array_ufunc_protocol(func):
    """``with_array_function_protocol`` for the ufunc protocol."""
    return _protocol_test('array ufunc', func)
