"""MXNet's test helpers (``mxnet.test_utils``), so test suites written for MXNet run on neomx.

Comparisons accept NDArrays, numpy arrays and numbers alike; tolerances left as None come
from the dtypes compared (looser for float16 than for float64), as in MXNet.

>>> import neomx as mx
>>> from neomx.test_utils import assert_almost_equal, check_numeric_gradient
>>> assert_almost_equal(mx.nd.array([1.0, 2.0]), [1.0, 2.0 + 1e-7])
>>> check_numeric_gradient(lambda x: mx.nd.exp(x) * 2, [[0.5, -1.0]])
"""
import contextlib
import logging  # noqa: F401  (these modules are names that MXNet's test files take from a
import numbers  # noqa: F401   star import of this module)
import os
import sys  # noqa: F401
import time  # noqa: F401
from collections import OrderedDict  # noqa: F401  (a name MXNet's test files expect here)

import numpy as np
import numpy.random as rnd  # noqa: F401
import numpy.testing as npt  # noqa: F401

import neomx as mx  # noqa: F401
from . import test_utils_symbolic as _symbolic
from .base import MXNetError
from .context import Context, current_context, num_gpus
from .io import DataIter as _DataIter
from .ndarray import array  # noqa: F401
from .runtime import Features
from .symbol import Symbol  # noqa: F401
from .util import get_cuda_compute_capability, getenv, setenv, use_np  # noqa: F401
# The Symbol checks live with the symbolic code; MXNet keeps them all in test_utils.
from .test_utils_symbolic import (central_differences, check_consistency,  # noqa: F401
                                  check_symbolic_backward, check_symbolic_forward, numeric_grad,
                                  simple_forward)

# No __all__: as in MXNet, ``from mxnet.test_utils import *`` gives every public name of this
# module, ``mx`` and ``np`` among them, and test files written for MXNet rely on that.

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
    """A random NDArray of ``shape``: standard normal values, or for a sparse ``stype``
    ('csr', 'row_sparse') uniform values of which a fraction ``density`` is non-zero."""
    from . import ndarray as nd
    if stype != 'default':
        return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                                   distribution=distribution, modifier_func=modifier_func,
                                   ctx=ctx)[0]
    arr = nd.array(random_arrays(tuple(shape)), dtype=dtype or default_dtype(),
                   ctx=ctx or default_context())
    return arr if modifier_func is None else modifier_func(arr)


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """(a random array of storage type ``stype``, its parts as numpy arrays: ``(indptr,
    indices, data)`` for csr, ``(data, indices)`` for row_sparse, as MXNet orders them). A
    fraction ``density`` (random when None) of the elements (csr) or rows (row_sparse) is
    stored, with uniform values in [-1, 1) or ``data_init``; ``modifier_func`` maps each stored
    value (a stored value may so become 0, and stays stored); ``rsp_indices`` gives the rows of
    a row_sparse array; ``distribution='powerlaw'`` (csr) fills row i from the left with up to
    2^(i+1) values."""
    from .ndarray import sparse
    if distribution not in (None, 'uniform', 'powerlaw'):
        raise MXNetError("rand_sparse_ndarray: unknown distribution %r (expected 'uniform' or "
                         "'powerlaw')" % (distribution,))
    density = np.random.rand() if density is None else density
    dtype = dtype or default_dtype()
    shape = tuple(int(d) for d in shape)
    ctx = ctx or default_context()

    def values(n, tail=()):
        v = np.random.uniform(-1, 1, size=(n,) + tail) if data_init is None \
            else np.full((n,) + tail, data_init, dtype=np.float64)
        if modifier_func is not None:
            v = np.vectorize(modifier_func, otypes=[np.float64])(v) if v.size else v
        return v.astype(dtype)

    if stype == 'row_sparse':
        if rsp_indices is not None:
            rows = np.unique(np.asarray(rsp_indices, dtype=np.int64))
        else:
            rows = np.nonzero(np.random.rand(shape[0]) < density)[0]
        data = values(len(rows), shape[1:])
        arr = sparse.row_sparse_array((data, rows), shape=shape, ctx=ctx, dtype=dtype)
        return arr, (data, rows)
    if stype != 'csr':
        raise MXNetError("rand_sparse_ndarray: stype must be 'csr' or 'row_sparse', got %r"
                         % (stype,))
    if distribution == 'powerlaw':
        mask = _powerlaw_csr_values(shape, density) != 0
    else:
        mask = np.random.rand(*shape) < density
    rows, cols = np.nonzero(mask)
    data = values(len(rows))
    if distribution == 'powerlaw' and data_init is None and modifier_func is None:
        data = (1 + np.random.uniform(0.001, 2, size=len(rows))).astype(dtype)
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    indices = cols.astype(np.int64)
    arr = sparse.csr_matrix((data, indices, indptr), shape=shape, ctx=ctx, dtype=dtype)
    return arr, (indptr, indices, data)


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=.5, shuffle_csr_indices=False):
    """A random sparse array (``rand_sparse_ndarray``'s, without its parts)."""
    if stype not in ('row_sparse', 'csr'):
        raise AssertionError("Unknown storage type: " + str(stype))
    return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype, data_init=data_init,
                               rsp_indices=rsp_indices, modifier_func=modifier_func)[0]


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None,
                           dtype=None, modifier_func=None, shuffle_csr_indices=False):
    """``create_sparse_array`` where a row_sparse array's rows are ``rsp_indices`` alone (none
    when not given): ``density`` counts for csr only."""
    if stype == 'row_sparse':
        if rsp_indices is not None and len(rsp_indices) > shape[0]:
            raise AssertionError("create_sparse_array_zd: %d row indices for %d rows"
                                 % (len(rsp_indices), shape[0]))
        density, rsp_indices = 0.0, [] if rsp_indices is None else rsp_indices
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density)


def _powerlaw_csr_values(shape, density):
    """Dense values of a csr matrix whose rows fill from the left, row i holding up to 2^(i+1)
    values (MXNet's "powerlaw" test data): ``int(rows * cols * density)`` values in all, first
    one at the start of every row, then the rows in order up to their limit. The values lie in
    (1, 3)."""
    rows, cols = shape
    if not 0 <= density <= 1:
        raise ValueError("rand_sparse_ndarray: density must lie in [0, 1], got %s" % density)
    total = int(rows * cols * density)
    if rows <= 0 or cols <= 0 or total < 2 * rows:
        raise ValueError("rand_sparse_ndarray: a powerlaw csr array of shape %s needs at least "
                         "2 values per row, density %s gives %d" % (tuple(shape), density, total))
    filled = np.zeros(rows, dtype=np.int64)     # values per row, each a run from column 0
    filled[:] = 1                               # total >= 2 * rows: every row gets its first
    left = total - rows
    for r in range(rows):
        extra = min(min(cols, 2 ** (r + 1)) - 1, left)
        filled[r] += extra
        left -= extra
        if left == 0:
            break
    if left:
        raise ValueError("rand_sparse_ndarray: density %s does not fit a powerlaw csr array of "
                         "shape %s" % (density, tuple(shape)))
    values = np.zeros(shape)
    mask = np.arange(cols)[None, :] < filled[:, None]
    values[mask] = 1 + np.random.uniform(0.001, 2, size=int(mask.sum()))
    return values


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
    def objective(arrays):
        outs = runner.forward(arrays, use_forward_train)
        return sum(float((o.astype(np.float64) * w).sum()) for o, w in zip(outs, out_grads))
    return central_differences(objective, [a.astype(np.float64) for a in arrays], wrt, eps)


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



# -- MXNet's remaining helper names ---------------------------------------------------------

_EXACT = (np.bool_, np.int8, np.uint8, np.int32, np.int64)     # compared without tolerance


def default_rtols():
    """The default relative tolerance of each dtype."""
    return {**_RTOL, **{np.dtype(t): 0 for t in _EXACT}}


def default_atols():
    """The default absolute tolerance of each dtype."""
    return {**_ATOL, **{np.dtype(t): 0 for t in _EXACT}}


def default_numeric_eps():
    """The default step of numeric differentiation for each floating-point dtype."""
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def effective_dtype(dat):
    """The dtype whose tolerance applies to ``dat``: its own, except float32 on a GPU that
    computes it in TF32 (compute capability 8.0 and up), which compares like float16."""
    ctx = getattr(dat, 'ctx', None)
    dtype = np.dtype(dat.dtype)
    if dtype == np.float32 and ctx is not None and ctx.device_type == 'gpu':
        try:
            if (get_cuda_compute_capability(ctx) >= 80
                    and os.environ.get('NVIDIA_TF32_OVERRIDE') != '0'):
                return np.dtype(np.float16)
        except (RuntimeError, ValueError):
            pass
    return dtype


def get_tolerance(dat, tol, default_tol):
    """``tol`` when it is a number, else ``tol[dtype]`` (a dict by dtype) or
    ``default_tol[dtype]``, for the effective dtype of ``dat``."""
    if isinstance(tol, (int, float, np.number)):
        return tol
    dtype = effective_dtype(dat)
    return (tol or {}).get(dtype, default_tol.get(dtype, 0))


def get_etol(etol=None):
    """The tolerated fraction of mismatching elements (0 by default)."""
    return 0 if etol is None else etol


def locationError(a, b, index, names, maxError=False):
    """'Location of [maximum ]error: index, a=..., b=...' for a mismatch report."""
    return 'Location of %serror: %s, %s=%.8f, %s=%.8f' % (
        'maximum ' if maxError else '', str(index), names[0], a[index], names[1], b[index])


def checkShapes(a, b):
    """Raises AssertionError unless ``a`` and ``b`` have the same shape."""
    if a.shape != b.shape:
        raise AssertionError('a.shape = %s and b.shape = %s are not equal' % (a.shape, b.shape))


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=('a', 'b'),
                                 equal_nan=False, mismatches=(10, 10)):
    """``assert_almost_equal`` that tolerates a fraction ``etol`` of mismatching elements."""
    etol = get_etol(etol)
    if etol <= 0:
        return assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names,
                                   equal_nan=equal_nan, mismatches=mismatches)
    rtol, atol = get_tols(a, b, rtol, atol)
    an, bn = _np(a), _np(b)
    close = np.isclose(an, bn, rtol=rtol, atol=atol, equal_nan=equal_nan)
    err = 1 - np.count_nonzero(close) / max(close.size, 1)
    if err > etol:
        index, rel = find_max_violation(an, bn, rtol, atol)
        raise AssertionError('Error %f exceeds tolerance rtol=%e, atol=%e, etol=%e (mismatch '
                             '%f%%).\n%s' % (rel, rtol, atol, etol, 100 * err,
                                             locationError(an, bn, index, names, True)))


def same_array(array1, array2):
    """Whether two NDArrays share memory (a write to one shows in the other)."""
    array1[:] += 1
    shared = same(array1.asnumpy(), array2.asnumpy())
    array1[:] -= 1
    return shared and same(array1.asnumpy(), array2.asnumpy())


def same_symbol_structure(sym1, sym2):
    """Whether two Symbols have the same operators node by node."""
    import json
    nodes1 = json.loads(sym1.tojson())['nodes']
    nodes2 = json.loads(sym2.tojson())['nodes']
    return len(nodes1) == len(nodes2) and all(n1['op'] == n2['op']
                                              for n1, n2 in zip(nodes1, nodes2))


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """``assert_almost_equal`` over nested tuples/lists of arrays (None matches anything)."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, (tuple, list)):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def compare_optimizer(opt1, opt2, shape, dtype, w_stype='default', g_stype='default',
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """Runs one update of ``opt1`` and ``opt2`` from the same random weights and gradients and
    compares weights (and states); ``ntensors > 1`` updates a list of weights at once with
    ``opt2`` (``shape`` is then a list of shapes)."""
    import copy
    from . import random as mxrandom
    ctx = default_context()

    def pair(stype, density):
        # (the array opt2 updates, a dense copy for opt1)
        if stype == 'default':
            a = mxrandom.uniform(shape=shape, ctx=ctx, dtype=dtype)
            return a, a.copyto(ctx)
        a = rand_ndarray(shape, stype, density=density, dtype=dtype)
        return a, a.copyto(ctx).tostype('default')

    if ntensors == 1:
        w2, w1 = pair(w_stype, 1)
        g2, g1 = pair(g_stype, None)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(mxrandom.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(mxrandom.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2, g2 = copy.deepcopy(w1), copy.deepcopy(g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """Uniform numpy arrays in [low, high) of the given shapes (always a list)."""
    dtype = dtype or default_dtype()
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random (x, y) with x in [x_low, x_high) and y in [y_low, y_high)."""
    return (np.random.randint(x_low, x_high, dtype=np.int64),
            np.random.randint(y_low, y_high, dtype=np.int64))


def create_2d_tensor(rows, columns, dtype=np.int64):
    """An NDArray of shape (rows, columns) whose row i holds i."""
    from . import ndarray as nd
    return nd.broadcast_to(nd.arange(0, rows, dtype=dtype).reshape(rows, 1),
                           shape=(rows, columns))


def create_vector(size, dtype=np.int64):
    """The NDArray 0, 1, ..., size - 1."""
    from . import ndarray as nd
    return nd.arange(0, size, dtype=dtype)


def get_identity_mat(size):
    """The ``size`` x ``size`` identity matrix as an NDArray."""
    from . import ndarray as nd
    return nd.array(np.eye(size))


def get_identity_mat_batch(size):
    """A batch of two ``size`` x ``size`` identity matrices as an NDArray."""
    from . import ndarray as nd
    return nd.array(np.stack([np.eye(size)] * 2))


def assign_each(the_input, function):
    """``function`` applied to each element of a numpy array (shape and dtype kept)."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function, otypes=[np.asarray(the_input).dtype])(the_input)


def assign_each2(input1, input2, function):
    """``function`` applied to corresponding elements of two numpy arrays of one shape."""
    if np.shape(input1) != np.shape(input2):
        raise ValueError('assign_each2: shapes %s and %s differ'
                         % (np.shape(input1), np.shape(input2)))
    if function is None:
        return np.array(input1)
    return np.vectorize(function, otypes=[np.asarray(input1).dtype])(input1, input2)


def collapse_sum_like(a, shape):
    """``a`` (numpy) summed over the axes that broadcasting a ``shape`` array to it adds or
    stretches, reshaped to ``shape``."""
    if len(a.shape) < len(shape):
        raise ValueError('collapse_sum_like: shape %s has more axes than %s'
                         % (tuple(shape), a.shape))
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s != a.shape[lead + i]]
    return np.sum(a, axis=tuple(axes)).reshape(shape)


# -- matrices with known spectra (for linear-algebra tests) ----------------------------------

def new_orthonormal_matrix_2d(n):
    """A random ``n`` x ``n`` orthonormal matrix."""
    x = np.random.randn(n, n)
    return np.linalg.qr(x.T @ x)[0]


def new_matrix_with_real_eigvals_2d(n):
    """A well-conditioned ``n`` x ``n`` matrix with real eigenvalues in [-10, 10]: Q^-1 D Q
    for a random Householder-like Q of condition number below 3."""
    while True:
        v = np.random.uniform(-1.0, 1.0, (n, 1))
        v /= np.linalg.norm(v)
        q = (np.eye(n) - 2 * v @ v.T) @ np.diag(np.random.uniform(-1.0, 1.0, n))
        if np.linalg.cond(q, 2) < 3:
            break
    return np.linalg.inv(q) @ np.diag(np.random.uniform(-10.0, 10.0, n)) @ q


def new_matrix_with_real_eigvals_nd(shape):
    """A batch of matrices (the last two axes) made by ``new_matrix_with_real_eigvals_2d``."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


def new_sym_matrix_with_real_eigvals_2d(n):
    """A random symmetric ``n`` x ``n`` matrix Q D Q^T with eigenvalues in [-10, 10]."""
    q = new_orthonormal_matrix_2d(n)
    return q @ np.diag(np.random.uniform(-10.0, 10.0, n)) @ q.T


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A batch of symmetric matrices made by ``new_sym_matrix_with_real_eigvals_2d``."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1])
                     for _ in range(n)]).reshape(shape)


# -- statistical checks of random generators -------------------------------------------------

def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equal-probability buckets [(low, high), ...] of the distribution whose
    quantile function is ``ppf``, and their probabilities."""
    if nbuckets <= 0:
        raise ValueError('gen_buckets_probs_with_ppf: nbuckets must be positive, got %r'
                         % (nbuckets,))
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / nbuckets), ppf((i + 1) / nbuckets)) for i in range(nbuckets)]
    return buckets, probs


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Pearson's chi-square test of ``generator(n)`` (n i.i.d. samples) against the expected
    ``probs`` of ``buckets``: (low, high) ranges for a continuous distribution, values for a
    discrete one. Returns (p value, observed counts, expected counts)."""
    from scipy import stats
    if len(probs) != len(buckets):
        raise ValueError('chi_square_check: %d buckets but %d probabilities'
                         % (len(buckets), len(probs)))
    samples = _np(generator(nsamples)).reshape(-1)
    expected = (nsamples * np.array(probs, dtype=np.float64)).astype(np.int64)
    observed = np.zeros(len(buckets), dtype=np.int64)
    if isinstance(buckets[0], (tuple, list)):
        edges = np.array(buckets, dtype=np.float64).reshape(-1)
        if np.any(np.diff(edges) < 0):
            raise ValueError('chi_square_check: buckets must ascend without overlap: %s'
                             % (buckets,))
        ids = np.searchsorted(edges, samples, side='right')
        inside = ids % 2 == 1            # past a low edge and not past its high edge
        np.add.at(observed, ids[inside] // 2, 1)
    else:
        for i, value in enumerate(buckets):
            observed[i] = np.count_nonzero(samples == value)
    _, p = stats.chisquare(f_obs=observed, f_exp=expected * observed.sum() / expected.sum())
    return p, observed, expected


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Runs ``chi_square_check`` ``nrepeat`` times and raises AssertionError unless the share
    of runs with p > ``alpha`` reaches ``success_rate``. Returns the p values."""
    results = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    ps = [r[0] for r in results]
    if np.count_nonzero(np.array(ps) > alpha) < nrepeat * success_rate:
        raise AssertionError('generator test failed: chi-square p=%s, observed=%s, expected=%s,'
                             ' buckets=%s, probs=%s' % (ps, [r[1] for r in results],
                                                       [r[2] for r in results], buckets, probs))
    return ps


def mean_check(generator, mu, sigma, nsamples=1000000):
    """Whether the mean of ``generator(nsamples)`` lies within 3 standard errors of ``mu``."""
    mean = _np(generator(nsamples)).mean()
    bound = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - bound < mean < mu + bound)


def var_check(generator, sigma, nsamples=1000000):
    """Whether the sample variance of ``generator(nsamples)`` lies within 3 standard errors
    of ``sigma ** 2``."""
    var = _np(generator(nsamples)).var(ddof=1)
    bound = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - bound < var < sigma ** 2 + bound)


# -- the running environment -----------------------------------------------------------------

def is_cd_run():
    """Whether this runs as part of a continuous-delivery job (``CD_JOB=1``)."""
    return os.environ.get('CD_JOB', '0') == '1'


def is_aarch64_run():
    """Whether this runs on an aarch64 machine."""
    import platform
    return platform.machine() == 'aarch64'


def has_tvm_ops():
    """Whether operators generated by TVM are built in (never in neomx)."""
    return Features().is_enabled('TVM_OP')


def is_op_runnable():
    """Whether the operators of the current context can run (always, in neomx: it has no
    TVM-only operators)."""
    return True


@contextlib.contextmanager
def discard_stderr():
    """Discards what is written to the process's standard error inside the block."""
    import sys
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    saved = os.dup(fd)
    try:
        with open(os.devnull, 'w') as devnull:
            sys.stderr.flush()
            os.dup2(devnull.fileno(), fd)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, fd)
        os.close(saved)


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ='whole', **kwargs):
    """Seconds per run of a Symbol: forward and backward (``typ='whole'``) or forward only
    (``typ='forward'``), averaged over ``N`` runs after a warm-up. ``location`` gives the
    inputs by name; missing ones are random normal of the shapes in ``kwargs``."""
    import time
    from . import ndarray as nd
    ctx = ctx or default_context()
    if typ not in ('whole', 'forward'):
        raise ValueError("check_speed: typ must be 'whole' or 'forward', got %r" % (typ,))
    grad_req = grad_req or ('write' if typ == 'whole' else 'null')
    exe = sym.simple_bind(ctx=ctx, grad_req=grad_req, **kwargs)
    location = location or {name: np.random.normal(size=arr.shape, scale=1.0)
                            for name, arr in exe.arg_dict.items()}
    for name, value in location.items():
        exe.arg_dict[name][:] = value

    def run():
        exe.forward(is_train=typ == 'whole')
        if typ == 'whole':
            exe.backward(out_grads=[nd.ones_like(o) for o in exe.outputs])
            for g in exe.grad_arrays:
                if g is not None:
                    g.wait_to_read()
        for o in exe.outputs:
            o.wait_to_read()
    run()
    tic = time.time()
    for _ in range(N):
        run()
    return (time.time() - tic) / N


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1e-4, atol=1e-4):
    """Builds the block ``net_builder(prefix='net_')`` four ways (imperative and hybridized,
    with and without autograd), all with the parameters of the first, and checks that outputs
    (and input gradients) agree, and agree with ``numpy_func`` when given."""
    from . import autograd, initializer

    class _Saved(initializer.Initializer):
        def __init__(self, values):
            super().__init__()
            self._values = values

        def _init_weight(self, name, arr):
            arr[()] = self._values[name]

    saved_out, saved_grads, init = None, None, None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net = net_builder(prefix='net_')
            if init is None:
                net.initialize()
            else:
                net.initialize(init)
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if init is None:
                init = _Saved({k: v.data().asnumpy() for k, v in net.collect_params().items()})
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                grads = [x.grad.asnumpy() for x in inputs]
                if saved_grads is None:
                    saved_grads = grads
                else:
                    for g, s in zip(grads, saved_grads):
                        assert_almost_equal(g, s, rtol=rtol, atol=atol)
    if numpy_func is not None:
        assert_almost_equal(saved_out, numpy_func(*[x.asnumpy() for x in data_l]), rtol=rtol,
                            atol=atol)



class DummyIter(_DataIter):
    """An iterator that gives the first batch of ``real_iter`` forever (StopIteration never
    comes): for measuring a training loop's speed without its data loading.

    >>> import neomx as mx
    >>> it = DummyIter(mx.io.NDArrayIter(mx.nd.ones((4, 2)), batch_size=2))
    >>> next(it) is next(it)
    True
    """

    def __init__(self, real_iter):
        super().__init__(real_iter.batch_size)
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        return self.the_batch
