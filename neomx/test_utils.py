"""MXNet's test helpers (``mxnet.test_utils``), so test suites written for MXNet run on neomx.

Comparisons accept NDArrays, numpy arrays and numbers alike; tolerances left as None come
from the dtypes compared (looser for float16 than for float64), as in MXNet.

>>> import neomx as mx
>>> from neomx.test_utils import assert_almost_equal, check_numeric_gradient
>>> assert_almost_equal(mx.nd.array([1.0, 2.0]), [1.0, 2.0 + 1e-7])
>>> check_numeric_gradient(lambda x: mx.nd.exp(x) * 2, [[0.5, -1.0]])
"""
import contextlib
import os

import numpy as np

from . import test_utils_symbolic as _symbolic
from .base import MXNetError
from .context import Context, current_context, num_gpus
# The Symbol checks live with the symbolic code; MXNet keeps them all in test_utils.
from .test_utils_symbolic import (check_consistency, check_symbolic_backward,  # noqa: F401
                                  check_symbolic_forward, numeric_grad, simple_forward)

__all__ = ['default_context', 'set_default_context', 'default_dtype', 'get_rtol', 'get_atol',
           'get_tols', 'same', 'almost_equal', 'assert_almost_equal', 'assert_allclose',
           'almost_equal_ignore_nan', 'assert_almost_equal_ignore_nan', 'assert_exception',
           'random_arrays', 'random_sample', 'rand_ndarray', 'rand_shape_2d', 'rand_shape_3d',
           'rand_shape_nd', 'np_reduce', 'find_max_violation', 'check_numeric_gradient',
           'numeric_grad', 'check_symbolic_forward', 'check_symbolic_backward',
           'check_consistency', 'simple_forward', 'environment', 'set_env_var', 'list_gpus',
           'retry']


# -- devices and dtypes -----------------------------------------------------------------------

def default_context():
    """The context tests run on: ``set_default_context``'s, else the current one."""
    return current_context()


def set_default_context(ctx):
    """Makes ``ctx`` the default context of this thread (for tests and for array creation)."""
    if not isinstance(ctx, Context):
        raise MXNetError("set_default_context: expected a Context such as mx.cpu(0), got %r"
                         % (ctx,))
    Context._default.value = ctx


def default_dtype():
    """The dtype of the arrays the random helpers make."""
    return np.float32


def list_gpus():
    """The ids of the GPUs present."""
    return list(range(num_gpus()))


# Tolerances by dtype, as MXNet's defaults.
_RTOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5}
_ATOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20}


def _dtype_of(x):
    dt = getattr(x, 'dtype', None)
    if dt is None:
        return np.dtype(np.float64) if isinstance(x, float) else np.asarray(x).dtype
    return np.dtype(dt)


def _tolerance(x, tol, table):
    if tol is not None:
        return tol
    return table.get(_dtype_of(x), 0.0)


def get_rtol(rtol=None, dtype=np.float32):
    """``rtol``, or the default relative tolerance for ``dtype``."""
    return rtol if rtol is not None else _RTOL.get(np.dtype(dtype), 0.0)


def get_atol(atol=None, dtype=np.float32):
    """``atol``, or the default absolute tolerance for ``dtype``."""
    return atol if atol is not None else _ATOL.get(np.dtype(dtype), 0.0)


def get_tols(x, y, rtol, atol):
    """The (rtol, atol) to compare ``x`` and ``y`` with: the given ones, else the looser of
    the two dtypes' defaults."""
    return (max(_tolerance(x, rtol, _RTOL), _tolerance(y, rtol, _RTOL)),
            max(_tolerance(x, atol, _ATOL), _tolerance(y, atol, _ATOL)))


# -- comparisons --------------------------------------------------------------------------------

def _np(a):
    """A numpy array for an NDArray (waits for it), a number, a list or a numpy array."""
    if hasattr(a, 'asnumpy'):
        return a.asnumpy()
    return np.asarray(a)


def same(a, b):
    """Whether ``a`` and ``b`` hold exactly the same values (and shapes)."""
    return np.array_equal(_np(a), _np(b))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere (shapes broadcast unless
    ``use_broadcast`` is False)."""
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _np(a), _np(b)
    if not use_broadcast and a.shape != b.shape:
        return False
    try:
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    except ValueError:      # shapes that do not broadcast
        return False


def find_max_violation(a, b, rtol=None, atol=None):
    """(index, violation) of the element furthest outside the tolerance: violation is
    ``|a - b| / (atol + rtol * |b|)``, above 1 where the check fails."""
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.broadcast_arrays(_np(a).astype(np.float64), _np(b).astype(np.float64))
    with np.errstate(divide='ignore', invalid='ignore'):
        viol = np.abs(a - b) / (atol + rtol * np.abs(b))
    viol = np.where(np.isnan(a) != np.isnan(b), np.inf, np.nan_to_num(viol, nan=0.0))
    if viol.size == 0:
        return (), 0.0
    index = np.unravel_index(np.argmax(viol), viol.shape)
    return index, float(viol[index])


def assert_almost_equal(a, b, rtol=None, atol=None, names=('a', 'b'), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raises AssertionError, naming the worst element and its values, unless
    ``almost_equal(a, b, ...)``.

    >>> assert_almost_equal([1.0, 2.0], [1.0, 2.00001], rtol=1e-3)
    """
    rtol, atol = get_tols(a, b, rtol, atol)
    an, bn = _np(a), _np(b)
    if an.dtype == np.bool_ and bn.dtype == np.bool_:
        np.testing.assert_equal(an, bn)
        return
    if not use_broadcast and an.shape != bn.shape:
        raise AssertionError("%s has shape %s but %s has shape %s"
                             % (names[0], an.shape, names[1], bn.shape))
    try:
        np.broadcast_shapes(an.shape, bn.shape)
    except ValueError:
        raise AssertionError("%s of shape %s and %s of shape %s cannot be compared"
                             % (names[0], an.shape, names[1], bn.shape)) from None
    if almost_equal(an, bn, rtol, atol, equal_nan=equal_nan):
        return
    index, rel = find_max_violation(an, bn, rtol, atol)
    ab, bb = np.broadcast_arrays(an, bn)
    bad = ~np.isclose(ab, bb, rtol=rtol, atol=atol, equal_nan=equal_nan)
    raise AssertionError(
        "Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %f%%).\n"
        " Location of maximum error: %s, %s=%.8f, %s=%.8f\n %s: %s\n %s: %s"
        % (rel, rtol, atol, 100.0 * bad.sum() / max(bad.size, 1), tuple(int(i) for i in index),
           names[0], float(ab[index]), names[1], float(bb[index]),
           names[0], np.array2string(ab, threshold=mismatches[0] * mismatches[1]),
           names[1], np.array2string(bb, threshold=mismatches[0] * mismatches[1])))


def assert_allclose(actual, desired, rtol=1e-7, atol=0, equal_nan=True, err_msg='',
                    verbose=True):
    """``numpy.testing.assert_allclose`` accepting NDArrays."""
    np.testing.assert_allclose(_np(actual), _np(desired), rtol=rtol, atol=atol,
                               equal_nan=equal_nan, err_msg=err_msg, verbose=verbose)


def _without_nan(a, b):
    a, b = np.copy(_np(a)), np.copy(_np(b))
    nan = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan] = 0
    b[nan] = 0
    return a, b


def almost_equal_ignore_nan(a, b, rtol=None, atol=None):
    """``almost_equal`` ignoring the positions where either side is NaN."""
    return almost_equal(*_without_nan(a, b), rtol=rtol, atol=atol)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=('a', 'b')):
    """``assert_almost_equal`` ignoring the positions where either side is NaN."""
    assert_almost_equal(*_without_nan(a, b), rtol=rtol, atol=atol, names=names)


def assert_exception(f, exception_type, *args, **kwargs):
    """Raises AssertionError unless ``f(*args, **kwargs)`` raises ``exception_type``.

    >>> assert_exception(int, ValueError, 'not a number')
    """
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError("%s did not raise %s" % (getattr(f, '__name__', f),
                                                   exception_type.__name__))


def retry(n):
    """Decorator: runs a (flaky, random) test up to ``n`` times until it passes."""
    if n <= 0:
        raise ValueError("retry: n must be positive, got %r" % (n,))

    def decorate(f):
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if i == n - 1:
                        raise
        wrapper.__name__ = f.__name__
        wrapper.__doc__ = f.__doc__
        return wrapper
    return decorate


# -- random data ---------------------------------------------------------------------------------

def random_arrays(*shapes):
    """Standard normal numpy arrays (float32) of the given shapes; one array for one shape."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0 else
              np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_sample(population, k):
    """``k`` distinct elements of ``population`` in random order."""
    population = list(population)
    idx = np.random.permutation(len(population))[:k]
    return [population[i] for i in idx]


def rand_shape_2d(dim0=10, dim1=10):
    """A random 2-d shape with dims in [1, dim0] and [1, dim1]."""
    return np.random.randint(1, dim0 + 1), np.random.randint(1, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10):
    """A random 3-d shape with dims in [1, dim0], [1, dim1], [1, dim2]."""
    return (np.random.randint(1, dim0 + 1), np.random.randint(1, dim1 + 1),
            np.random.randint(1, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random ``num_dim``-d shape with dims in [1, dim] ([0, dim] with ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in np.random.randint(low, dim + 1, size=num_dim))


def rand_ndarray(shape, stype='default', density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random (standard normal) NDArray of ``shape``; neomx arrays are dense, so ``stype``
    must be 'default'."""
    from . import ndarray as nd
    if stype != 'default':
        raise MXNetError("rand_ndarray: stype %r is not supported; neomx arrays are dense "
                         "('default')" % (stype,))
    arr = nd.array(random_arrays(tuple(shape)), dtype=dtype or default_dtype(),
                   ctx=ctx or default_context())
    return arr if modifier_func is None else modifier_func(arr)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """``numpy_reduce_func`` applied over ``axis`` (an int, a tuple or None) one axis at a
    time, keeping reduced axes with ``keepdims``."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else range(len(dat.shape))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axis:
            shape[i] = 1
        ret = ret.reshape(tuple(shape))
    return ret


# -- gradients -----------------------------------------------------------------------------------

class _FunctionRunner:
    """Runs a Python function of NDArrays: forward, and gradients through autograd."""

    def __init__(self, fn, ctx):
        self.fn, self.ctx = fn, ctx

    def forward(self, arrays, is_train):
        from . import autograd, ndarray as nd
        xs = [nd.array(a, ctx=self.ctx, dtype=a.dtype) for a in arrays]
        with autograd.train_mode() if is_train else autograd.predict_mode():
            return [o.asnumpy() for o in _as_list(self.fn(*xs))]

    def gradients(self, arrays, out_grads, wrt):
        from . import autograd, ndarray as nd
        xs = [nd.array(a, ctx=self.ctx, dtype=a.dtype) for a in arrays]
        for i in wrt:
            xs[i].attach_grad()
        with autograd.record():
            outs = _as_list(self.fn(*xs))
        autograd.backward(outs, [nd.array(g, ctx=self.ctx, dtype=g.dtype) for g in out_grads])
        return [xs[i].grad.asnumpy() for i in wrt]


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _is_symbol(sym):
    return hasattr(sym, 'list_arguments') and hasattr(sym, 'bind')


def _function_runner(fn, location, ctx):
    """(runner, argument names, numpy arrays) for a function of NDArrays and its inputs."""
    if isinstance(location, dict):
        raise MXNetError("location: a dict of arrays needs a Symbol; pass a list for a "
                         "function")
    if not callable(fn):
        raise MXNetError("expected a Symbol or a function of NDArrays, got %s"
                         % type(fn).__name__)
    arrays = [_np(a) for a in location]
    arrays = [a.astype(np.float64) if a.dtype.kind != 'f' else a for a in arrays]
    return (_FunctionRunner(fn, ctx or default_context()),
            ['arg%d' % i for i in range(len(arrays))], arrays)


def _numeric_grad(runner, arrays, out_grads, wrt, eps=1e-4, use_forward_train=True):
    """Central-difference gradients (in float64) of ``sum(out_k * out_grads_k)`` with respect
    to the arrays at the positions ``wrt``."""
    arrays = [a.astype(np.float64) for a in arrays]
    grads = []
    for i in wrt:
        g = np.zeros(arrays[i].shape)
        flat = arrays[i].reshape(-1)
        for j in range(flat.size):
            vals = []
            for delta in (eps, -eps):
                old = flat[j]
                flat[j] = old + delta
                outs = runner.forward(arrays, use_forward_train)
                flat[j] = old
                vals.append(sum(float((o.astype(np.float64) * w).sum())
                                for o, w in zip(outs, out_grads)))
            g.reshape(-1)[j] = (vals[0] - vals[1]) / (2 * eps)
        grads.append(g)
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=None):
    """Compares the gradient neomx computes for ``sym`` with a numeric one (central
    differences), for a random projection of the outputs.

    ``sym`` is a function of NDArrays returning an NDArray or a list of them, checked here
    in ``dtype`` (float64 by default) with ``location`` the list of its inputs and
    ``grad_nodes`` the positions to check (all by default); or a Symbol, checked by
    ``neomx.test_utils_symbolic.check_numeric_gradient`` as MXNet does (float32 by
    default, ``location`` in ``list_arguments()`` order or a dict by name).

    >>> import neomx as mx
    >>> check_numeric_gradient(lambda a, b: a * b + mx.nd.sin(a), [[1.0, 2.0], [3.0, -1.0]])
    """
    if _is_symbol(sym):
        return _symbolic.check_numeric_gradient(
            sym, location, aux_states=aux_states, numeric_eps=numeric_eps, rtol=rtol, atol=atol,
            grad_nodes=grad_nodes, use_forward_train=use_forward_train, ctx=ctx,
            grad_stype_dict=grad_stype_dict, dtype=dtype or np.float32)
    dtype = dtype or np.float64
    runner, names, arrays = _function_runner(sym, location, ctx)
    arrays = [a.astype(dtype) for a in arrays]
    if grad_nodes is None:
        wrt = list(range(len(arrays)))
    else:
        nodes = grad_nodes.keys() if isinstance(grad_nodes, dict) else grad_nodes
        wrt = [int(n) for n in nodes]
    eps = numeric_eps if numeric_eps is not None else (1e-3 if np.dtype(dtype) != np.float64
                                                       else 1e-5)
    rtol = rtol if rtol is not None else 1e-2
    atol = atol if atol is not None else 1e-4
    outs = runner.forward(arrays, use_forward_train)
    rng = np.random.RandomState(0)
    out_grads = [rng.normal(0, 1, size=o.shape).astype(o.dtype) for o in outs]
    analytic = runner.gradients(arrays, out_grads, wrt)
    numeric = _numeric_grad(runner, arrays, out_grads, wrt, eps, use_forward_train)
    for i, a, n in zip(wrt, analytic, numeric):
        assert_almost_equal(a, n, rtol=rtol, atol=atol,
                            names=('GRADIENT of %s' % names[i], 'NUMERICAL of %s' % names[i]))


# -- environment -----------------------------------------------------------------------------------

def set_env_var(key, val, default_val=''):
    """Sets environment variable ``key`` to ``val``; returns its previous value (or
    ``default_val`` when it was unset)."""
    prev = os.environ.get(key, default_val)
    os.environ[key] = val
    return prev


@contextlib.contextmanager
def environment(*args):
    """Sets environment variables inside a ``with`` block and restores them after:
    ``environment('NAME', 'value')`` or ``environment({'A': '1', 'B': None})`` (None unsets).

    >>> with environment('NEOMX_EXAMPLE', '1'):
    ...     os.environ['NEOMX_EXAMPLE']
    '1'
    """
    if len(args) == 2:
        changes = {args[0]: args[1]}
    elif len(args) == 1 and isinstance(args[0], dict):
        changes = dict(args[0])
    else:
        raise ValueError("environment: expected (name, value) or a dict, got %r" % (args,))
    saved = {k: os.environ.get(k) for k in changes}
    try:
        for k, v in changes.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

