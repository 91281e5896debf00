"""The one helper that checks an operator: its forward against a reference (torch or NumPy)
and its gradient against a numeric gradient (central differences in float64).

    check_op(lambda x: nd.exp(x), np.exp, [np.random.randn(3, 4)])
"""
import numpy as np

import neomx as mx
from neomx import autograd, nd
from neomx.ops.layout import is_channels_last, is_dense
from neomx.test_utils import central_differences


def _as_list(out):
    if isinstance(out, (list, tuple)):
        return list(out)
    return [out]


def _run(fn, arrays, ctx, dtype):
    xs = [nd.array(a, ctx=ctx, dtype=a.dtype if a.dtype.kind in 'iub' else dtype) for a in arrays]
    return xs, _as_list(fn(*xs))


def numeric_grad(fn, arrays, weights, ctx, eps=1e-4, wrt=None):
    """d/dx_i of sum_k sum(out_k * weights_k) for the floating-point inputs (in ``wrt`` when
    given; None for the others), by neomx.test_utils.central_differences."""
    wrt = [i for i, a in enumerate(arrays)
           if a.dtype.kind not in 'iub' and (wrt is None or i in wrt)]

    def objective(args):
        _, outs = _run(fn, args, ctx, 'float64')
        return sum(float((o.asnumpy().astype(np.float64) * w).sum())
                   for o, w in zip(outs, weights))
    grads = [None] * len(arrays)
    for i, g in zip(wrt, central_differences(objective, arrays, wrt, eps)):
        grads[i] = g
    return grads


def check_op(fn, ref, arrays, ctx=None, grad=True, rtol=1e-4, atol=1e-5, grad_rtol=1e-3,
             grad_atol=1e-4, wrt=None, dtype='float32', eps=1e-4, check_dtype=True):
    """Checks ``fn`` (NDArrays -> NDArray or list) against ``ref`` (numpy arrays -> numpy
    array or list) on ``arrays``; with ``grad``, checks neomx's gradient of a random weighted
    sum of the outputs against the numeric one. Returns the neomx outputs as numpy arrays."""
    ctx = ctx or mx.cpu()
    arrays = [np.asarray(a) for a in arrays]
    xs, outs = _run(fn, arrays, ctx, dtype)
    expected = _as_list(ref(*[a.astype(dtype) if a.dtype.kind == 'f' else a for a in arrays]))
    assert len(outs) == len(expected), 'got %d outputs, reference has %d' % (len(outs), len(expected))
    got = [o.asnumpy() for o in outs]
    for k, o in enumerate(outs):
        # torch picks kernels by strides (see neomx.ops.layout): a result is stored row-major,
        # or channels-last from the convolution family's CPU kernels
        o.wait_to_read()
        t = o._var.tensor
        assert is_dense(t) or is_channels_last(t), \
            'output %d: strides %s, neither row-major nor channels-last' % (k, t.stride())
    for k, (g, e) in enumerate(zip(got, expected)):
        e = np.asarray(e)
        assert g.shape == e.shape, 'output %d: shape %s, reference %s' % (k, g.shape, e.shape)
        np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol,
                                   err_msg='output %d differs from the reference' % k)
    if not grad:
        return got
    rng = np.random.RandomState(0)
    weights = [rng.uniform(0.5, 1.5, size=g.shape) for g in got]
    xs64 = [nd.array(a, ctx=ctx, dtype=a.dtype if a.dtype.kind in 'iub' else 'float64')
            for a in arrays]
    diff = [i for i, a in enumerate(arrays) if a.dtype.kind == 'f' and (wrt is None or i in wrt)]
    for i in diff:
        xs64[i].attach_grad()
    with autograd.record():
        outs64 = _as_list(fn(*xs64))
        total = None
        for o, w in zip(outs64, weights):
            term = (o * nd.array(w, ctx=ctx, dtype='float64')).sum()
            total = term if total is None else total + term
    total.backward()
    expected_grads = numeric_grad(fn, arrays, weights, ctx, eps, wrt=diff)
    for i in diff:
        g = xs64[i].grad._data()
        assert is_dense(g), 'gradient of input %d: strides %s, not row-major' % (i, g.stride())
        np.testing.assert_allclose(xs64[i].grad.asnumpy(), expected_grads[i], rtol=grad_rtol,
                                   atol=grad_atol,
                                   err_msg='gradient of input %d differs from the numeric one' % i)
    return got
