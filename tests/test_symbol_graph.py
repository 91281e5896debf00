"""The graph IR: the interpreter against the generated code, and the passes."""
import numpy as np
import torch

import neomx as mx
from neomx.symbol import passes
from neomx.symbol.codegen import generate
from neomx.symbol.graph import Graph, evaluate, kernel_args


def test_interpreter_and_generated_code_agree():
    x, w = mx.sym.var('x'), mx.sym.var('w')
    h = mx.sym.FullyConnected(x, w, num_hidden=4, no_bias=True, name='fc')
    parts = mx.sym.split(mx.sym.tanh(h), num_outputs=2, axis=1)
    out = mx.sym.Group([mx.sym.Concat(parts[1], parts[0] * 2, dim=1), mx.sym.sum(h, axis=0)])
    g = Graph.of(out)
    feed = {'x': torch.randn(3, 5), 'w': torch.randn(4, 5)}
    ref = evaluate(g, feed)
    code = generate(g, ['x', 'w'], name='f')
    got = code.fn(feed['x'], feed['w'])
    assert len(got) == len(ref) == 2
    for a, b in zip(got, ref):
        torch.testing.assert_close(a, b)
    assert 'def f(x, w, generator=None, device=None):' in code.source


def test_interpreter_hook_sees_each_operator_and_may_replace_its_outputs():
    x, w = mx.sym.var('x'), mx.sym.var('w')
    fc = mx.sym.FullyConnected(x, w, num_hidden=2, no_bias=True, name='fc')
    g = Graph.of(mx.sym.relu(fc, name='act'))
    feed = {'x': torch.tensor([[1.0, -2.0]]), 'w': torch.tensor([[1.0, 0.0], [0.0, 1.0]])}
    seen = []

    def hook(node, run, args):
        seen.append((node.name, [None if a is None else tuple(a.shape) for a in args]))
        out = run(args)
        return tuple(-o for o in out) if node.name == 'fc' else out

    (got,) = evaluate(g, feed, hook=hook)
    # the kernel's arguments in its order: FullyConnected's bias absent (no_bias) is None
    assert seen == [('fc', [(1, 2), (2, 2), None]), ('act', [(1, 2)])]
    assert got.tolist() == [[0.0, 2.0]]         # relu(-(x @ w.T))
    assert evaluate(g, feed)[0].tolist() == [[1.0, 0.0]]


def test_kernel_args_orders_a_nodes_values_for_its_kernel():
    x, w, b = mx.sym.var('x'), mx.sym.var('w'), mx.sym.var('b')
    with_bias = Graph.of(mx.sym.FullyConnected(x, w, b, num_hidden=2)).nodes[-1]
    no_bias = Graph.of(mx.sym.FullyConnected(x, w, num_hidden=2, no_bias=True)).nodes[-1]
    assert kernel_args(with_bias, ['x', 'w', 'b']) == ['x', 'w', 'b']
    assert kernel_args(no_bias, ['x', 'w']) == ['x', 'w', None]


def test_generated_code_takes_names_longer_than_a_line():
    # an identifier is never broken across the signature's lines (ONNX graphs name tensors
    # by long paths)
    name = 'model/encoder/layer_0/attention/' * 4 + 'query_weight'
    x = mx.sym.var(name)
    code = generate(Graph.of(mx.sym.relu(x)), [name], name='f')
    assert code.fn(torch.tensor([-1.0, 2.0]))[0].tolist() == [0.0, 2.0]


def test_dead_code_elimination_keeps_what_heads_need():
    x = mx.sym.var('x')
    used = mx.sym.exp(x, name='used')
    unused = mx.sym.log(x, name='unused')
    g = Graph(Graph.of(mx.sym.Group([used, unused])).nodes, [(used._outputs[0][0], 0)])
    assert [n.name for n in passes.eliminate_dead_code(g).nodes] == ['x', 'used']


def test_cse_merges_equal_nodes_but_not_random_ones():
    x = mx.sym.var('x')
    same = mx.sym.exp(x) + mx.sym.exp(x)
    g = passes.eliminate_common_subexpressions(Graph.of(same))
    assert sum(n.op is not None and n.op.name == 'exp' for n in g.nodes) == 1
    rnd = mx.sym.random.uniform(shape=(2,)) + mx.sym.random.uniform(shape=(2,))
    g = passes.eliminate_common_subexpressions(Graph.of(rnd))
    assert sum(n.op is not None and n.op.rng for n in g.nodes) == 2
    diff = mx.sym.sum(x, axis=0) + mx.sym.sum(x, axis=1)     # different attributes: kept
    g = passes.eliminate_common_subexpressions(Graph.of(diff))
    assert sum(n.op is not None and n.op.name == 'sum' for n in g.nodes) == 2


def test_constant_folding_computes_once():
    x = mx.sym.var('x')
    s = x + (mx.sym.ones((3,)) * 2 + 1)
    g = passes.fold_constants(Graph.of(s), torch.device('cpu'))
    consts = [n for n in g.nodes if '__value__' in n.extra]
    assert len(consts) == 1
    assert consts[0].extra['__value__'].tensor.tolist() == [3.0, 3.0, 3.0]
    assert [n.op.name for n in g.nodes if n.op is not None] == ['elemwise_add']
    code = generate(g, ['x'])
    assert code.fn(torch.zeros(3))[0].tolist() == [3.0, 3.0, 3.0]


def test_inference_records_counts_and_constant_shapes():
    x = mx.sym.var('x')
    g = passes.fold_constants(Graph.of(x * mx.sym.ones((2, 2))), torch.device('cpu'))
    res = passes.infer(g, {'x': (2, 2)}, {'x': 'float32'})
    head = g.heads[0][0]
    assert res.shapes[head] == [(2, 2)]
    assert res.dtypes[head] == ['float32']
    np.testing.assert_array_equal(generate(g, ['x']).fn(torch.ones(2, 2))[0].numpy(),
                                  np.ones((2, 2)))


def test_generated_code_frees_intermediates_after_their_last_reader():
    """An intermediate's tensor is released once its last reader has run, not when the
    generated function returns (a hybridized network's activations are reused as they go, as
    in eager code); the outputs are kept."""
    import weakref
    x = mx.sym.var('x')
    a = mx.sym.relu(x * 2, name='a')
    b = mx.sym.exp(a, name='b')
    out = mx.sym.Group([mx.sym.sqrt(b + 1, name='c') * 3, b])
    seen, alive_at = {}, {}

    def hook(node, inputs, outputs):
        for name, ref in seen.items():
            alive_at.setdefault(node.name, {})[name] = ref() is not None
        for t in outputs:
            seen[node.name] = weakref.ref(t)

    g = Graph.of(out)
    code = generate(g, ['x'], hook=hook)
    x_t = torch.rand(3, 4)
    got = code.fn(x_t)
    names = [n.name for n in g.nodes if n.op is not None]
    last = names[-1]
    # by the last operator, relu's input (x * 2) and relu's result are gone; b is an output
    first = names[0]
    assert not alive_at[last][first] and not alive_at[last]['a'], alive_at
    assert alive_at[last]['b']
    expected = np.sqrt(np.exp(np.maximum(x_t.numpy() * 2, 0)) + 1) * 3
    np.testing.assert_allclose(got[0].numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(got[1].numpy(), np.exp(np.maximum(x_t.numpy() * 2, 0)), rtol=1e-6)
