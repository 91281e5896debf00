"""MXNet's symbolic test helpers: check a Symbol's forward and backward against expected
values, against finite differences, and across devices and dtypes.

>>> import numpy as np
>>> import neomx as mx
>>> from neomx.test_utils_symbolic import check_symbolic_forward, check_numeric_gradient
>>> x = mx.sym.var('x')
>>> _ = check_symbolic_forward(x * 2, [np.ones((2, 2))], [np.full((2, 2), 2.0)])
>>> check_numeric_gradient(mx.sym.tanh(x), [np.random.rand(2, 3)], dtype=np.float64)
"""
import numpy as np

from . import ndarray as _nd
from .context import current_context
from .ndarray import NDArray
from .symbol import var as _var

__all__ = ['simple_forward', 'check_symbolic_forward', 'check_symbolic_backward',
           'check_numeric_gradient', 'numeric_grad', 'central_differences', 'check_consistency']


def central_differences(objective, arrays, wrt, step):
    """The numeric gradient, the one every check of neomx uses (``check_numeric_gradient``
    for Symbols and functions, ``numeric_grad``, the op tests' ``check_op``): the derivatives
    of ``objective(arrays) -> float`` with respect to ``arrays[i]`` for each ``i`` in ``wrt``,
    as ``(f(x + step) - f(x - step)) / (2 * step)`` element by element, in float64.

    ``objective`` is given the arrays with the ones in ``wrt`` as float64 copies, one element
    moved; the others are passed as they are.

    >>> import numpy as np
    >>> [g] = central_differences(lambda a: float((a[0] ** 2).sum()), [np.array([1., 2.])],
    ...                           [0], 1e-3)
    >>> np.round(g, 6).tolist()
    [2.0, 4.0]
    """
    arrays = list(arrays)
    for i in wrt:
        arrays[i] = np.array(arrays[i], dtype=np.float64, order='C')
    grads = []
    for i in wrt:
        flat = arrays[i].reshape(-1)            # a view (row-major): moving it moves arrays[i]
        g = np.zeros(flat.size)
        for j in range(flat.size):
            old = flat[j]
            flat[j] = old + step
            up = objective(arrays)
            flat[j] = old - step
            down = objective(arrays)
            flat[j] = old
            g[j] = (up - down) / (2 * step)
        grads.append(g.reshape(arrays[i].shape))
    return grads


def _default_ctx():
    try:
        from .test_utils import default_context
        return default_context()
    except ImportError:
        return current_context()


def _assert_close(a, b, rtol, atol, names=('a', 'b'), equal_nan=False):
    """neomx.test_utils.assert_almost_equal (MXNet's messages) on arrays or NDArrays."""
    try:
        from .test_utils import assert_almost_equal
    except ImportError:     # pragma: no cover - test_utils is part of the package
        assert_almost_equal = None
    if assert_almost_equal is not None:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan)
        return
    a = a.asnumpy() if isinstance(a, NDArray) else np.asarray(a)
    b = b.asnumpy() if isinstance(b, NDArray) else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=1e-5 if rtol is None else rtol,
                               atol=1e-20 if atol is None else atol, equal_nan=equal_nan,
                               err_msg='%s vs %s' % names)


def _array(v, ctx, dtype):
    if isinstance(v, NDArray):
        return v.as_in_context(ctx) if dtype == 'asnumpy' else v.astype(dtype).as_in_context(ctx)
    v = np.asarray(v)
    return _nd.array(v, ctx=ctx, dtype=v.dtype if dtype == 'asnumpy' else dtype)


def _parse_location(sym, location, ctx, dtype=np.float32):
    """{argument name: NDArray} from a list (``list_arguments`` order) or a dict."""
    names = sym.list_arguments()
    if isinstance(location, dict):
        if set(location) != set(names):
            raise ValueError("Symbol arguments and keys of the given location do not match."
                             "symbol args:%s, location.keys():%s"
                             % (str(set(names)), str(set(location))))
    else:
        location = dict(zip(names, location))
    return {k: _array(v, ctx, dtype) for k, v in sorted(location.items())}


def _parse_aux_states(sym, aux_states, ctx, dtype=np.float32):
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        if set(aux_states) != set(names):
            raise ValueError("Symbol aux_states names and given aux_states do not match."
                             "symbol aux_names:%s, aux_states.keys:%s"
                             % (str(set(names)), str(set(aux_states))))
    else:
        aux_states = dict(zip(names, aux_states))
    return {k: _array(v, ctx, dtype) for k, v in aux_states.items()}


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """The symbol's outputs (numpy; one array or a list) for numpy ``inputs`` by name."""
    ctx = ctx or _default_ctx()
    exe = sym.bind(ctx, args={k: _nd.array(v, ctx=ctx) for k, v in inputs.items()})
    exe.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=np.float32):
    """Asserts the forward outputs of ``sym`` at ``location`` equal ``expected`` (a list in
    ``list_outputs`` order, or a dict); returns the outputs."""
    ctx = ctx or _default_ctx()
    location = _parse_location(sym, location, ctx, dtype)
    aux = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    exe = sym.bind(ctx, args=location, aux_states=aux)
    outputs = exe.forward(is_train=False)
    for name, expect, out in zip(sym.list_outputs(), expected, outputs):
        _assert_close(expect, out, rtol, atol, ('EXPECTED_%s' % name, 'FORWARD_%s' % name),
                      equal_nan)
    return outputs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req='write', ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=np.float32):
    """Asserts the gradients of ``sym`` at ``location`` for head gradients ``out_grads``
    equal ``expected`` (list in ``list_arguments`` order, or dict); with ``grad_req='add'``
    the gradient arrays start from random values that must be kept and added to."""
    ctx = ctx or _default_ctx()
    location = _parse_location(sym, location, ctx, dtype)
    aux = _parse_aux_states(sym, aux_states, ctx, dtype)
    names = sym.list_arguments()
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(names, expected))
    start = {k: np.random.normal(size=np.shape(v)) for k, v in sorted(expected.items())}
    grads = {k: _array(v, ctx, np.asarray(expected[k]).dtype if dtype == 'asnumpy' else dtype)
             for k, v in start.items()}
    for k, st in (grad_stypes or {}).items():
        if k in grads and st != 'default':
            grads[k] = grads[k].tostype(st)
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in names}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(names, grad_req))
    exe = sym.bind(ctx, args=location, args_grad=grads, aux_states=aux, grad_req=grad_req)
    exe.forward(is_train=True)
    if isinstance(out_grads, dict):
        out_grads = [out_grads[k] for k in sym.list_outputs()]
    if out_grads is not None:
        out_grads = [_array(g, ctx, dtype) if g is not None else None for g in out_grads]
    exe.backward(out_grads)
    for name in expected:
        req = grad_req.get(name, 'null')
        got = grads[name]
        if req == 'write':
            _assert_close(expected[name], got, rtol, atol,
                          ('EXPECTED_%s' % name, 'BACKWARD_%s' % name), equal_nan)
        elif req == 'add':
            _assert_close(expected[name], got.asnumpy() - start[name], rtol, atol,
                          ('EXPECTED_%s' % name, 'BACKWARD_%s' % name), equal_nan)
        elif req == 'null':
            _assert_close(start[name], got, rtol, atol,
                          ('EXPECTED_%s' % name, 'BACKWARD_%s' % name), equal_nan)
        else:
            raise ValueError("Invalid grad_req %s for argument %s" % (req, name))
    return grads


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=np.float32):
    """Central-difference gradients of ``sum(outputs[0])`` with respect to each array in
    ``location`` (numpy, by name) through ``executor``."""
    for k, v in location.items():
        executor.arg_dict[k][:] = _nd.array(v, ctx=executor.arg_dict[k].context,
                                            dtype=executor.arg_dict[k].dtype)
    grads = {}
    for k, v in location.items():
        dst = executor.arg_dict[k]

        def objective(arrays):
            if aux_states is not None:
                for ak, av in aux_states.items():
                    executor.aux_dict[ak][:] = _nd.array(av, dtype=executor.aux_dict[ak].dtype)
            dst[:] = _nd.array(arrays[0], dtype=dst.dtype)
            out = executor.forward(is_train=use_forward_train)[0]
            return out.asnumpy().astype(np.float64).sum()
        # MXNet's steps of eps / 2 either side
        [grads[k]] = central_differences(objective, [v], [0], eps / 2)
        dst[:] = _nd.array(np.asarray(v, dtype=np.float64), dtype=dst.dtype)
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=np.float32):
    """Asserts the symbolic gradient of ``sum(sym * random projection)`` equals finite
    differences, for the arguments in ``grad_nodes`` (all by default)."""
    ctx = ctx or _default_ctx()
    location = _parse_location(sym, location, ctx, dtype)
    loc_np = {k: v.asnumpy() for k, v in location.items()}
    aux = _parse_aux_states(sym, aux_states, ctx, dtype)
    aux_np = None if aux is None else {k: v.asnumpy() for k, v in aux.items()}
    if grad_nodes is None:
        grad_req = {k: 'write' for k in sym.list_arguments()}
    elif isinstance(grad_nodes, dict):
        grad_req = dict(grad_nodes)
    else:
        grad_req = {k: 'write' for k in grad_nodes}
    _, out_shape, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    proj = _var('__random_proj')
    out = sym * proj
    proj_np = np.random.rand(*out_shape[0]) + 0.1   # not too small: precision
    location['__random_proj'] = _nd.array(proj_np, ctx=ctx, dtype=dtype)
    start = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in grad_req}
    grads = {k: _nd.array(v, ctx=ctx, dtype=dtype) for k, v in start.items()}
    req = dict(grad_req, __random_proj='null')
    exe = out.bind(ctx, args=location, args_grad=grads, grad_req=req, aux_states=aux)
    exe.forward(is_train=True)
    exe.backward()
    eps = numeric_eps if numeric_eps is not None else (1e-4 if dtype == np.float64 else 1e-3)
    numeric = numeric_grad(exe, {k: v for k, v in loc_np.items()}, aux_np, eps,
                           use_forward_train, dtype)
    default_rtol = 1e-2 if dtype != np.float64 else 1e-4
    for name, r in grad_req.items():
        got = grads[name].asnumpy()
        if r == 'write':
            _assert_close(numeric[name], got, rtol or default_rtol, atol,
                          ('NUMERICAL_%s' % name, 'BACKWARD_%s' % name))
        elif r == 'add':
            _assert_close(numeric[name], got - start[name], rtol or default_rtol, atol,
                          ('NUMERICAL_%s' % name, 'BACKWARD_%s' % name))
        elif r == 'null':
            _assert_close(start[name], got, rtol or default_rtol, atol,
                          ('NUMERICAL_%s' % name, 'BACKWARD_%s' % name))
        else:
            raise ValueError("Invalid grad_req %s for argument %s" % (r, name))


_TOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5}


def check_consistency(sym, ctx_list, scale=1.0, grad_req='write', arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True,
                      ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """Runs ``sym`` (or one symbol per entry) on each ``ctx_list`` entry (``{'ctx': ...,
    '<input>': shape, 'type_dict': {...}}``) with the same random arguments and asserts the
    outputs and gradients agree with the most precise run; returns the ground truth."""
    assert len(ctx_list) > 1
    syms = [sym] * len(ctx_list) if not isinstance(sym, (list, tuple)) else list(sym)
    out_names = syms[0].list_outputs()
    arg_names = syms[0].list_arguments()
    exes = []
    for s, spec in zip(syms, ctx_list):
        spec = dict(spec)
        ctx = spec.pop('ctx')
        type_dict = spec.pop('type_dict', None)
        exes.append(s.simple_bind(ctx, grad_req=grad_req, type_dict=type_dict, **spec))
    arg_params = dict(arg_params or {})
    aux_params = dict(aux_params or {})
    for n in sorted(arg_names):
        if n not in arg_params:
            shape = exes[0].arg_dict[n].shape
            arg_params[n] = (np.random.uniform(-0.92 * scale, 0.92 * scale, shape) if use_uniform
                             else np.random.normal(size=shape, scale=scale)).astype(rand_type)
    for n in exes[0].aux_dict:
        aux_params.setdefault(n, 0)
    for exe in exes:
        for n, arr in exe.arg_dict.items():
            arr[:] = _nd.array(arg_params[n], dtype=arr.dtype)
        for n, arr in exe.aux_dict.items():
            arr[:] = aux_params[n]
    dtypes = [np.dtype(exe.arg_arrays[0].dtype) if exe.arg_arrays else np.dtype(np.float32)
              for exe in exes]
    gt_idx = int(np.argmax([d.itemsize for d in dtypes]))
    for exe in exes:
        exe.forward(is_train=False)
    gt = ground_truth
    if gt is None:
        gt = {n: o.asnumpy() for n, o in zip(out_names, exes[gt_idx].outputs)}
    for i, exe in enumerate(exes):
        if i == gt_idx and ground_truth is None:
            continue
        tol = _TOL.get(dtypes[i], 1e-4)
        for n, o in zip(out_names, exe.outputs):
            _check(o.asnumpy(), gt[n], rtol or tol, atol or tol, n, raise_on_err, equal_nan)
    if grad_req != 'null':
        for exe in exes:
            exe.forward(is_train=True)
            exe.backward([_nd.ones(o.shape, o.context, o.dtype) for o in exe.outputs])
        if ground_truth is None:
            gt.update({n: g.asnumpy() for n, g in exes[gt_idx].grad_dict.items()})
        for i, exe in enumerate(exes):
            if i == gt_idx and ground_truth is None:
                continue
            tol = _TOL.get(dtypes[i], 1e-4)
            for n, g in exe.grad_dict.items():
                if n in gt:
                    _check(g.asnumpy(), gt[n], rtol or tol, atol or tol, n, raise_on_err,
                           equal_nan)
    return gt


def _check(a, b, rtol, atol, name, raise_on_err, equal_nan):
    try:
        np.testing.assert_allclose(a.astype(np.float64), np.asarray(b, dtype=np.float64),
                                   rtol=rtol, atol=atol, equal_nan=equal_nan,
                                   err_msg='check_consistency: %s' % name)
    except AssertionError:
        if raise_on_err:
            raise
        print('Predict Err: %s' % name)
