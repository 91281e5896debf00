"""``nd.contrib``: operators registered as ``_contrib_<name>``, and a few composites.

>>> import neomx as mx
>>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])
>>> mx.nd.contrib.boolean_mask(x, mx.nd.array([1, 0, 1])).asnumpy().tolist()
[[1.0, 2.0], [5.0, 6.0]]
"""
import numpy as np

from ..base import MXNetError, _as_list, flatten, regroup
from ..ops import registry as _registry
from .ndarray import _op as _nd_op

__all__ = ['foreach', 'while_loop', 'cond', 'boolean_mask', 'isnan', 'isinf', 'isfinite',
           'rand_zipfian', 'BatchNormWithReLU',
           'getnnz', 'dgl_csr_neighbor_uniform_sample', 'dgl_csr_neighbor_non_uniform_sample',
           'dgl_graph_compact', 'dgl_subgraph', 'dgl_adjacency', 'edge_id', 'adamw_update',
           'mp_adamw_update', 'multi_adamw_update', 'multi_mp_adamw_update']


_op = _nd_op


def boolean_mask(data, index, axis=0, out=None):
    """The slices of ``data`` along ``axis`` where the 1-d ``index`` is nonzero.

    The result's shape depends on the values of ``index``, so this waits for them (as
    MXNet's operator does); gradients flow to the selected slices.
    """
    if index.ndim != 1 or not -data.ndim <= axis < data.ndim or \
            index.shape[0] != data.shape[axis]:
        raise MXNetError("boolean_mask: index of shape %s does not fit axis %d of data %s "
                         "(expected a 1-d index of that axis' length)"
                         % (index.shape, axis, data.shape))
    from .creation import array
    keep = np.flatnonzero(index.asnumpy())
    return _op('take')(data, array(keep, ctx=data.context, dtype='int64'), axis=axis, out=out)


def isnan(data):
    """1 where ``data`` is NaN, else 0 (in ``data``'s dtype)."""
    return data != data


def isinf(data):
    """1 where ``data`` is +inf or -inf, else 0."""
    return data.abs() == np.inf


def isfinite(data):
    """1 where ``data`` is neither NaN nor infinite, else 0."""
    return (data == data) * (data.abs() != np.inf)


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Draws ``num_sampled`` classes (with replacement) from the Zipfian distribution over
    [0, range_max), P(c) = log((c + 2) / (c + 1)) / log(range_max + 1): (the classes,
    int64; the expected count of each of ``true_classes`` in such a draw; the expected count
    of each drawn class), as for a sampled softmax's correction."""
    from ..context import current_context
    from .random import uniform
    ctx = ctx or current_context()
    log_range = np.log(range_max + 1)
    u = uniform(0, log_range, shape=(num_sampled,), dtype='float64', ctx=ctx)
    sampled = (u.exp() - 1).astype('int64') % range_max
    return (sampled, _expected_count(true_classes.as_in_context(ctx), log_range, num_sampled),
            _expected_count(sampled, log_range, num_sampled))


def _expected_count(classes, log_range, num_sampled):
    c = classes.astype('float64')
    return ((c + 2.0) / (c + 1.0)).log() * (num_sampled / log_range)


def BatchNormWithReLU(data, gamma, beta, moving_mean, moving_var, **kwargs):
    """``BatchNorm`` (same arguments) followed by a ReLU: MXNet 1.9.1's fused MKL-DNN
    operator, here the two operators."""
    from . import relu
    out = _op('BatchNorm')(data, gamma, beta, moving_mean, moving_var, **kwargs)
    if isinstance(out, (list, tuple)):
        return [relu(out[0])] + list(out[1:])
    return relu(out)


def getnnz(data, axis=None):
    """The number of stored values of a CSR array (int64): in all (shape (1,)) or, with
    ``axis=1``, per row (MXNet 1.9.1 has no ``axis=0``)."""
    from .creation import array
    if getattr(data, 'stype', 'default') != 'csr':
        raise MXNetError("getnnz: expected a CSR array (stype 'csr'), got stype %r"
                         % getattr(data, 'stype', 'default'))
    if axis not in (None, 1, -1):
        raise MXNetError("getnnz with axis = %s is not supported (None or 1)" % (axis,))
    stored = data.indptr.asnumpy().astype(np.int64)
    counts = np.array([stored[-1]]) if axis is None else np.diff(stored)
    return array(counts, ctx=data.context, dtype='int64')


# -- control flow: Python loops over arrays, recorded by autograd step by step (in graphs,
# sym.contrib's nodes hold the functions' graphs: symbol/control_flow.py) ---------------------

def _array_leaf(x):
    """``base.flatten``'s leaf test for arrays."""
    from .ndarray import NDArray
    return 0 if isinstance(x, NDArray) else None


def _scalar(value, type_, what):
    if hasattr(value, 'asscalar'):
        if value.size != 1:
            raise ValueError("Cannot convert %s to python %s: an array of shape %s, not one "
                             "element" % (what, type_.__name__, value.shape))
        value = value.asscalar()
    try:
        return type_(value)
    except (TypeError, ValueError):
        raise ValueError("Cannot convert %s to python %s" % (what, type_.__name__)) from None


def foreach(body, data, init_states):
    """``body`` run on each slice of ``data`` (an array or a nested list of arrays) along
    axis 0: ``out, states = body(data_slice, states)`` from ``init_states``; returns (the
    outputs stacked, nested as ``body`` gives them; the last states).

    >>> import neomx as mx
    >>> outs, states = mx.nd.contrib.foreach(lambda x, s: (x + s[0], [s[0] + x]),
    ...                                      mx.nd.array([[1, 2], [3, 4]]), [mx.nd.zeros(2)])
    >>> outs.asnumpy().tolist(), states[0].asnumpy().tolist()
    ([[1.0, 2.0], [4.0, 6.0]], [4.0, 6.0])
    """
    from .ndarray import NDArray
    flatten(data, _array_leaf, 'foreach input')
    flatten(init_states, _array_leaf, 'foreach states')
    single = isinstance(data, NDArray)
    steps = data.shape[0] if single else data[0].shape[0]
    states, outputs, out_fmt = init_states, [], None
    for i in range(steps):
        outs, states = body(data[i] if single else [d[i] for d in data], states)
        outs, out_fmt = flatten(outs, _array_leaf, 'foreach output')
        outputs.append(outs)
    if out_fmt is None:
        return [], states
    stack = _op('stack')
    return regroup([stack(*o) for o in zip(*outputs)], out_fmt), states


def while_loop(cond, func, loop_vars, max_iterations=None):
    """While ``cond(*loop_vars)`` is true (a one-element array) and at most
    ``max_iterations`` times: ``step_output, loop_vars = func(*loop_vars)``. Returns (the
    step outputs stacked along a new axis 0 of length ``max_iterations``, zeros after the
    last step, or [] when no step ran; the final loop variables).

    >>> import neomx as mx
    >>> outs, (i, s) = mx.nd.contrib.while_loop(
    ...     lambda i, s: i <= 3, lambda i, s: ([i + s], [i + 1, s + i]),
    ...     [mx.nd.array([1]), mx.nd.array([0])], max_iterations=5)
    >>> outs[0].asnumpy().ravel().tolist(), s.asnumpy().tolist()
    ([1.0, 3.0, 6.0, 0.0, 0.0], [6.0])
    """
    from .ndarray import NDArray
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = _scalar(max_iterations, int, "max_iteration")
    if len(loop_vars) == 0:
        raise ValueError("loop_vars should contain at least one element")
    single = isinstance(loop_vars, NDArray)
    loop_vars = list(_as_list(loop_vars))
    steps, outputs, out_fmt = 0, [], None
    while steps < max_iterations and _scalar(cond(*loop_vars), bool, "Return value of cond"):
        step, new = func(*loop_vars)
        step = [] if step is None else (list(step) if isinstance(step, tuple) else step)
        new = [] if new is None else (list(new) if isinstance(new, tuple) else new)
        new = list(_as_list(new))
        if len(new) != len(loop_vars):
            raise ValueError("The length of loop_vars should be consistent during the loop")
        loop_vars = new
        step, out_fmt = flatten(step, _array_leaf, 'while output')
        if outputs and len(step) != len(outputs[0]):
            raise ValueError("Number of elements in step_output should be the same in each "
                             "step")
        outputs.append(step)
        steps += 1
    stacked = []
    for i, items in enumerate(zip(*outputs), 1):
        if any(x.shape != items[0].shape for x in items):
            raise ValueError("\n".join(
                ["Shapes of %d-th elements in step_outputs are inconsistent, which are:" % i] +
                ["  Step %d, shape is %s" % (j, str(x.shape)) for j, x in enumerate(items)]))
        out = _op('stack')(*items)
        if steps < max_iterations:      # MXNet leaves the rest undefined; here zeros
            from .creation import zeros
            pad = zeros((max_iterations - steps,) + items[0].shape, ctx=out.context,
                        dtype=out.dtype)
            out = _op('concat')(out, pad, dim=0)
        stacked.append(out)
    if out_fmt is not None:
        stacked = regroup(stacked, out_fmt)
    return stacked, (loop_vars[0] if single else loop_vars)


def cond(pred, then_func, else_func):
    """``then_func()`` if ``pred`` (a one-element array) is true, else ``else_func()``.

    >>> import neomx as mx
    >>> x = mx.nd.array([2.0])
    >>> mx.nd.contrib.cond(x > 1, lambda: x * 10, lambda: x).asnumpy().tolist()
    [20.0]
    """
    return then_func() if _scalar(pred, bool, "pred") else else_func()


# -- AdamW: MXNet's contrib update operators and their multi-tensor forms --------------------

def _scale_array(rescale_grad, like):
    from .creation import full
    from .ndarray import NDArray
    if isinstance(rescale_grad, NDArray):
        return rescale_grad.as_in_context(like.context)
    return full((1,), rescale_grad, ctx=like.context, dtype='float32')


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """AdamW's step (``_contrib_adamw_update``; see ops/optimizer.py); ``rescale_grad`` is
    an array or a number, and a value of 0, inf or NaN skips the step."""
    return _op('_contrib_adamw_update')(
        weight, grad, mean, var, _scale_array(rescale_grad, weight), lr=lr, eta=eta,
        beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient, out=out)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                    beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None,
                    **kwargs):
    """``adamw_update`` on the float32 master copy ``weight32`` of a low-precision weight."""
    return _op('_contrib_mp_adamw_update')(
        weight, grad, mean, var, weight32, _scale_array(rescale_grad, weight), lr=lr, eta=eta,
        beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient, out=out)


def _multi_adamw(where, weights, grads, means, vars_, masters, rescale_grad, out, lrs, wds,
                 etas, beta1, beta2, epsilon, clip_gradient):
    """One engine operation stepping every weight of the lists (the multi-tensor update)."""
    import torch
    from .. import engine as _engine
    n = len(weights)
    lists = [grads, means, vars_] + ([masters] if masters is not None else [])
    if any(len(x) != n for x in lists) or not (len(lrs) == len(wds) == len(etas) == n):
        raise MXNetError("%s: expected %d weights, gradients, means, vars%s, lrs, wds and etas; "
                         "got %s" % (where, n, ', weights32' if masters is not None else '',
                                     [len(x) for x in lists] + [len(lrs), len(wds), len(etas)]))
    targets = list(weights) if out is None else \
        (list(out) if isinstance(out, (list, tuple)) else [out])
    if len(targets) != n:
        raise MXNetError("%s: %d weights but out= has %d arrays" % (where, n, len(targets)))
    scale = _scale_array(rescale_grad, weights[0])
    from ..ops.optimizer import adamw_step
    kept = list(masters) if masters is not None else []
    reads = [a._var for a in list(weights) + list(grads) + [scale]]
    writes = [a._var for a in list(means) + list(vars_) + kept + targets]

    def fn():
        s = scale._tensor()
        with torch.no_grad():
            for i in range(n):
                src = masters[i] if masters is not None else weights[i]
                new = adamw_step(src._tensor(), grads[i]._tensor(), means[i]._tensor(True),
                                 vars_[i]._tensor(True), s, lrs[i], etas[i], beta1, beta2,
                                 epsilon, wds[i], clip_gradient)
                if masters is not None:
                    masters[i]._tensor(True).copy_(new)
                targets[i]._tensor(True).copy_(new)
    _engine.push(fn, reads, writes, weights[0].context, where)
    return targets


def multi_adamw_update(weights, grads, mean, var, rescale_grad, out=None, lrs=(), wds=(),
                       etas=(), beta1=0.9, beta2=0.999, epsilon=1e-8, clip_gradient=-1,
                       name=None, size=0, **kwargs):
    """``adamw_update`` of every weight of the lists ``weights`` (with ``grads``, ``mean``,
    ``var``, and per-weight ``lrs``, ``wds``, ``etas``) in one operation."""
    return _multi_adamw('multi_adamw_update', weights, grads, mean, var, None, rescale_grad,
                        out, lrs, wds, etas, beta1, beta2, epsilon, clip_gradient)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, out=None, lrs=(),
                          wds=(), etas=(), beta1=0.9, beta2=0.999, epsilon=1e-8,
                          clip_gradient=-1, name=None, size=0, **kwargs):
    """``multi_adamw_update`` on float32 master copies ``weights32`` of the weights."""
    return _multi_adamw('multi_mp_adamw_update', weights, grads, mean, var, weights32,
                        rescale_grad, out, lrs, wds, etas, beta1, beta2, epsilon, clip_gradient)


# -- DGL's graph operators on CSR adjacency matrices (values: edge ids) ----------------------
# They run on the host, on the stored parts, as MXNet's CPU kernels do; samplers draw from
# the device's generator (mx.random.seed).

def _csr_parts(csr, where):
    if getattr(csr, 'stype', None) != 'csr':
        raise MXNetError("%s: expected a csr graph (CSRNDArray), got storage type %r"
                         % (where, getattr(csr, 'stype', type(csr).__name__)))
    t = csr._sparse_now()
    return (t.crow_indices().cpu().numpy(), t.col_indices().cpu().numpy(),
            t.values().cpu().numpy())


def _csr_array(indptr, indices, data, shape, ctx):
    from .sparse import csr_matrix
    return csr_matrix((np.asarray(data), np.asarray(indices, dtype=np.int64),
                       np.asarray(indptr, dtype=np.int64)), shape=shape, ctx=ctx,
                      dtype=np.asarray(data).dtype)


def _sample_neighbors(graph, seeds, num_hops, num_neighbor, max_vertices, prob, gen):
    """Breadth-first from ``seeds``: each vertex reached before the last hop keeps
    ``num_neighbor`` of its edges (all when it has no more; drawn uniformly, or by ``prob``
    of the neighbor, without replacement); the neighbors join up to ``max_vertices``
    vertices. Returns ({vertex: hop}, {vertex: [(neighbor, edge id)]})."""
    import collections
    import torch
    indptr, indices, data = graph
    hop, kept, queue = {}, {}, collections.deque()
    for v in seeds:
        if v not in hop and len(hop) < max_vertices:
            hop[v] = 0
            queue.append(v)
    while queue:
        v = queue.popleft()
        if hop[v] >= num_hops:
            continue
        lo, hi = int(indptr[v]), int(indptr[v + 1])
        pick = np.arange(lo, hi)
        if hi - lo > num_neighbor:
            if prob is None:
                chosen = torch.randperm(hi - lo, generator=gen)[:num_neighbor].numpy()
            else:
                w = torch.as_tensor(prob[indices[lo:hi]], dtype=torch.float64)
                chosen = torch.multinomial(w, num_neighbor, replacement=False,
                                           generator=gen).numpy()
            pick = np.sort(lo + chosen)
        kept[v] = [(int(indices[e]), data[e]) for e in pick]
        for u, _ in kept[v]:
            if u not in hop and len(hop) < max_vertices:
                hop[u] = hop[v] + 1
                queue.append(u)
    return hop, kept


def _neighbor_sample(where, csr, prob, seed_arrays, num_hops, num_neighbor, max_num_vertices):
    from ..ndarray.ndarray import rng_var
    from .creation import array
    graph = _csr_parts(csr, where)
    ctx = csr.context
    gen = rng_var(ctx).generator
    csr.wait_to_read()
    p = None if prob is None else prob.asnumpy()
    ids, csrs, probs, layers = [], [], [], []
    for seeds in seed_arrays:
        hop, kept = _sample_neighbors(graph, [int(v) for v in seeds.asnumpy().ravel()],
                                      num_hops, num_neighbor, max_num_vertices, p, gen)
        vertices = sorted(hop)
        n = len(vertices)
        ids.append(array(vertices + [0] * (max_num_vertices - n) + [n], ctx=ctx,
                         dtype='int64'))
        layers.append(array([hop[v] for v in vertices] + [0] * (max_num_vertices - n),
                            ctx=ctx, dtype='int64'))
        if p is not None:
            probs.append(array([p[v] for v in vertices] + [0] * (max_num_vertices - n),
                               ctx=ctx, dtype='float32'))
        indptr, indices, data = [0], [], []
        for v in vertices + [None] * (max_num_vertices - n):
            for u, e in (kept.get(v, ()) if v is not None else ()):
                if u in hop:
                    indices.append(u)
                    data.append(e)
            indptr.append(len(indices))
        csrs.append(_csr_array(indptr, indices, np.asarray(data, dtype=graph[2].dtype),
                               (max_num_vertices, csr.shape[1]), ctx))
    return ids + csrs + (probs if p is not None else []) + layers


def dgl_csr_neighbor_uniform_sample(csr_matrix, *seed_arrays, num_args=None, num_hops=1,
                                    num_neighbor=2, max_num_vertices=100):
    """Samples a subgraph around each array of seed vertices of the csr graph
    ``csr_matrix``: ``num_hops`` breadth-first hops keeping ``num_neighbor`` uniformly drawn
    edges per vertex, at most ``max_num_vertices`` vertices. Returns, for each seed array,
    the sorted vertex ids (padded, the count last: ``max_num_vertices + 1`` int64), then for
    each a csr matrix of the kept edges (row i: the i-th vertex; columns: vertex ids; values:
    edge ids), then for each the hop at which each vertex was reached."""
    return _neighbor_sample('dgl_csr_neighbor_uniform_sample', csr_matrix, None, seed_arrays,
                            int(num_hops), int(num_neighbor), int(max_num_vertices))


def dgl_csr_neighbor_non_uniform_sample(csr_matrix, probability, *seed_arrays, num_args=None,
                                        num_hops=1, num_neighbor=2, max_num_vertices=100):
    """``dgl_csr_neighbor_uniform_sample`` drawing each vertex's neighbors with probability
    proportional to ``probability[neighbor]``; it returns, after the csr matrices, each
    sampled vertex's probability (float32) for each seed array."""
    return _neighbor_sample('dgl_csr_neighbor_non_uniform_sample', csr_matrix, probability,
                            seed_arrays, int(num_hops), int(num_neighbor),
                            int(max_num_vertices))


def dgl_graph_compact(*graph_data, graph_sizes=None, return_mapping=False):
    """Compacts sampled subgraphs (``graph_data``: csr matrices, then their vertex-id arrays):
    the first ``graph_sizes[i]`` rows, and the columns renumbered from vertex ids to
    positions in the vertex-id array; values are new edge ids (0, 1, ...), and with
    ``return_mapping`` a second matrix holds the original ones."""
    k = len(graph_data) // 2
    sizes = graph_sizes if isinstance(graph_sizes, (list, tuple)) else (graph_sizes,)
    if len(graph_data) != 2 * k or len(sizes) != k:
        raise MXNetError("dgl_graph_compact: expected k csr graphs, k vertex-id arrays and k "
                         "graph_sizes, got %d arrays and %s" % (len(graph_data), graph_sizes))
    out = []
    for csr, vids, size in zip(graph_data[:k], graph_data[k:], sizes):
        size = int(np.asarray(size).ravel()[0])
        indptr, indices, data = _csr_parts(csr, 'dgl_graph_compact')
        ids = vids.asnumpy()[:size]
        end = int(indptr[size])
        cols = np.searchsorted(ids, indices[:end])
        shape, ctx = (size, size), csr.context
        new = _csr_array(indptr[:size + 1], cols, np.arange(end, dtype=data.dtype), shape, ctx)
        out.append(new)
        if return_mapping:
            out.append(_csr_array(indptr[:size + 1], cols, data[:end], shape, ctx))
    return out[0] if len(out) == 1 else out


def dgl_subgraph(graph, *data, return_mapping=False):
    """The subgraphs of csr graph ``graph`` induced by each array of vertex ids in ``data``
    (sorted): row and column i stand for the i-th vertex; values are new edge ids (0, 1, ...),
    and with ``return_mapping`` a second matrix holds the original edge ids."""
    indptr, indices, values = _csr_parts(graph, 'dgl_subgraph')
    out, ctx = [], graph.context
    for vids in data:
        v = vids.asnumpy().astype(np.int64).ravel()
        if np.any(v[1:] < v[:-1]):
            raise MXNetError("dgl_subgraph: the vertex ids must be sorted, got %s"
                             % v.tolist())
        pos = {int(x): i for i, x in enumerate(v)}
        sub_ptr, sub_cols, orig = [0], [], []
        for x in v:
            for e in range(int(indptr[x]), int(indptr[x + 1])):
                j = pos.get(int(indices[e]))
                if j is not None:
                    sub_cols.append(j)
                    orig.append(values[e])
            sub_ptr.append(len(sub_cols))
        shape = (len(v), len(v))
        out.append(_csr_array(sub_ptr, sub_cols, np.arange(len(orig), dtype=values.dtype),
                              shape, ctx))
        if return_mapping:
            out.append(_csr_array(sub_ptr, sub_cols, np.asarray(orig, dtype=values.dtype),
                                  shape, ctx))
    return out[0] if len(out) == 1 else out


def dgl_adjacency(data):
    """The csr graph ``data`` with every stored value 1 (float32): its adjacency matrix."""
    indptr, indices, values = _csr_parts(data, 'dgl_adjacency')
    return _csr_array(indptr, indices, np.ones(len(values), dtype=np.float32), data.shape,
                      data.context)


def edge_id(data, u, v):
    """``data[u[i], v[i]]`` (the edge id) where the csr graph ``data`` stores an edge from
    u[i] to v[i], else -1; in ``data``'s dtype."""
    from .creation import array
    indptr, indices, values = _csr_parts(data, 'edge_id')
    us, vs = u.asnumpy().astype(np.int64).ravel(), v.asnumpy().astype(np.int64).ravel()
    out = np.full(len(us), -1, dtype=values.dtype)
    for i, (a, b) in enumerate(zip(us, vs)):
        lo, hi = int(indptr[a]), int(indptr[a + 1])
        j = lo + np.searchsorted(indices[lo:hi], b)
        if j < hi and indices[j] == b:
            out[i] = values[j]
    return array(out, ctx=data.context, dtype=values.dtype)


def __getattr__(name):
    full = '_contrib_' + name
    if _registry.exists(full):
        return _nd_op(full)
    from ..ops.contrib import UNAVAILABLE, unavailable
    if name in UNAVAILABLE:
        return unavailable(name, 'nd.contrib')
    raise AttributeError("neomx.nd.contrib has no operator %r" % name)
