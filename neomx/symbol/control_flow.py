"""Control flow in graphs: ``foreach``, ``while_loop`` and ``cond`` (``sym.contrib``).

A control-flow node's operator holds the graphs it runs, ``op.graphs``: ``_foreach`` its
loop body, ``_while_loop`` the condition and the body, ``_cond`` the predicate and the two
branches, as MXNet's nodes of those names hold them (the node's ``"subgraphs"`` in symbol
JSON, written and read as MXNet 1.9 does). The node's inputs are what the graphs read,
values they close over included; its attributes say which graph input each one feeds
(the ``*_locs``).

Its kernel is the loop, or the branch, in Python, calling the graphs as functions of
tensors: ``graph.evaluate`` hands it interpreters of them and the code generator their
generated code, so a body runs through the one interpreter or the one code generator like
any graph, and torch autograd differentiates through the loop as through any kernel. Shapes
and dtypes are inferred through the graphs, both ways.

A node is built from Python functions as MXNet builds it: the function runs once, on new
variables, inside ``AttrScope(__subgraph_name__=<unique name>)``; the nodes it makes carry
that name, and what they read from outside it (values the function closes over) becomes a
variable of the graph named after that value's output, fed by the value itself (``_cut``).

>>> import neomx as mx
>>> step = lambda x, states: (x * 2 + states[0], [states[0] + x])
>>> outs, states = mx.sym.contrib.foreach(step, mx.sym.var('data'), [mx.sym.var('s')])
>>> ex = mx.sym.Group([outs] + states).bind(mx.cpu(), {'data': mx.nd.array([1, 2, 3]),
...                                                     's': mx.nd.array([10])})
>>> [o.asnumpy().ravel().tolist() for o in ex.forward()]
[[12.0, 15.0, 19.0], [16.0]]
"""
import ast

import torch

from ..base import MXNetError, flatten, regroup
from ..ops.registry import REQUIRED, Attr, Int, Op, ShapeError
from . import attribute as _attribute
from . import name as _name
from .graph import Graph, Node

__all__ = ['foreach', 'while_loop', 'cond', 'make_op', 'ControlFlowError']


class ControlFlowError(MXNetError, AssertionError):
    """A loop or branch that cannot be built as given (an input its graph does not use, outputs
    of differing structure). An AssertionError too, as MXNet 1.9 raises these."""


# -- the operators --------------------------------------------------------------------------

class Locs(Attr):
    """Positions in an input list, as MXNet writes them: ``[0, 2]``."""
    kind = 'list of integers'

    def parse(self, value):
        if isinstance(value, str):
            value = ast.literal_eval(value.strip())
        if isinstance(value, int):
            value = (value,)
        return tuple(int(v) for v in value)

    def format(self, value):
        return '[%s]' % ', '.join(str(v) for v in value)


class Flow(Op):
    """The operator of one control-flow node: a registry-like entry holding ``graphs`` (each
    read through its variables, ``graph.variables()`` order, MXNet's ``list_inputs``). The
    subclasses say how the node's inputs feed the graphs (``feeds``) and how the graphs'
    results make the node's outputs (``kernel``, ``outputs``)."""
    labels = ()         # a name for each graph (generated code names its functions so)
    branches = True     # the kernel reads a value (a condition) to choose what runs

    def __init__(self, name, kernel, graphs, attrs):
        self.graphs = tuple(graphs)
        self.graph_inputs = tuple(tuple(v.name for v in g.variables()) for g in self.graphs)
        inner = [n.op for g in self.graphs for n in g.nodes if n.op is not None]
        # whether what runs depends on values read on the host (a captured CUDA graph, which
        # replays one path, cannot hold it)
        self.reads_values = self.branches or any(getattr(op, 'reads_values', False)
                                                 for op in inner)
        super().__init__(name, kernel, inputs=('*data',), attrs=attrs,
                         num_outputs=lambda a: a['num_outputs'], infer=self._infer,
                         fill=self._fill, heavy=True, rng=any(op.rng for op in inner))

    def kernel_kwargs(self, device, is_train, generator):
        # the graphs' functions take them (train/predict mode is baked into them)
        return {'generator': generator, 'device': device}

    def input_names(self, attrs, num_inputs=None, present_only=True):
        if num_inputs is None:
            num_inputs = attrs['num_args'] - len(self.graphs)
        return tuple('data%d' % i for i in range(num_inputs))

    def feeds(self, attrs):
        """For each graph, the node input feeding each of its variables."""
        raise NotImplementedError

    # -- shapes and dtypes --
    def step_shape(self, attrs, i, shape):
        """The shape graph inputs fed by node input ``i`` of ``shape`` have (foreach: a
        slice)."""
        return shape

    def node_shape(self, attrs, i, shape, known):
        """Node input ``i``'s shape from a graph input's ``shape`` (``known``: what the node
        input has)."""
        return shape

    def carried(self, attrs):
        """(node input, graph, head) of each value carried from step to step: a loop state
        has the shape of the body's result for it."""
        return ()

    def inner_specs(self, attrs, shapes, dtypes):
        """For each graph, (shapes, dtypes) of its variables when the node's inputs have
        ``shapes`` and ``dtypes`` (None where unknown)."""
        out = []
        for feed in self.feeds(attrs):
            out.append(([None if shapes[i] is None else self.step_shape(attrs, i, shapes[i])
                         for i in feed], [dtypes[i] for i in feed]))
        return out

    def _inferred(self, attrs, shapes, dtypes):
        from .passes import infer
        res = []
        for g, names, (s, d) in zip(self.graphs, self.graph_inputs,
                                    self.inner_specs(attrs, shapes, dtypes)):
            res.append(infer(g, {n: x for n, x in zip(names, s) if x is not None},
                             {n: x for n, x in zip(names, d) if x is not None}))
        return res

    def _fill(self, attrs, shapes):
        """The node inputs' shapes as far as the graphs tell them (a weight a loop body's
        FullyConnected reads, a state the body adds to a slice)."""
        from .passes import _either
        shapes = list(shapes)
        for _ in range(2):      # a state learned from the body's result for it, then again
            res = self._inferred(attrs, shapes, [None] * len(shapes))
            for g, feed, r in zip(self.graphs, self.feeds(attrs), res):
                for v, i in zip(g.variables(), feed):
                    s = r.shapes[v][0]
                    if s:
                        shapes[i] = _either(self.name, shapes[i],
                                            self.node_shape(attrs, i, s, shapes[i]))
            for i, gi, k in self.carried(attrs):
                node, j = self.graphs[gi].heads[k]
                s = res[gi].shapes[node][j]
                if s and shapes[i] is None:
                    shapes[i] = tuple(s)
        return shapes

    def _infer(self, attrs, shapes, dtypes):
        res = self._inferred(attrs, shapes, dtypes)
        heads = []
        for g, r, label in zip(self.graphs, res, self.labels):
            hs = []
            for node, k in g.heads:
                s, d = r.shapes[node][k], r.dtypes[node][k]
                if s is None:
                    raise ShapeError("cannot infer the shape of %s's output %s"
                                     % (label, node.output_names()[k]))
                hs.append((tuple(s), d or 'float32'))
            heads.append(hs)
        for i, gi, k in self.carried(attrs):
            s, d = heads[gi][k]
            if s != tuple(shapes[i]) or d != dtypes[i]:
                raise ShapeError("the loop's state %d is %s %s on entry but the %s gives %s %s"
                                 % (i, tuple(shapes[i]), dtypes[i], self.labels[gi], s, d))
        out = self.outputs(attrs, shapes, heads)
        return [s for s, _ in out], [d for _, d in out]

    def outputs(self, attrs, shapes, heads):
        """(shape, dtype) of each output from the graphs' heads' ``heads``."""
        raise NotImplementedError


def _truth(what, t):
    """The truth of a condition's one-element result."""
    if t.numel() != 1:
        raise MXNetError("%s: the condition gave an array of shape %s; expected one element"
                         % (what, tuple(t.shape)))
    return bool(t.reshape(()))


def _result(outs):
    """A kernel's results as kernels give them: one tensor alone, several as a tuple."""
    outs = tuple(outs)
    return outs[0] if len(outs) == 1 else outs


def _on_meta(fn, args):
    """The results of graph function ``fn`` as meta tensors (their shapes and dtypes), for
    outputs of loops that ran no step."""
    return fn(*[a.to('meta') for a in args], device=torch.device('meta'))


class Foreach(Flow):
    """``_foreach``: the body runs on each slice of the data along axis 0, with the states
    it gives back. Node inputs: data, then states, then the values the body closes over;
    outputs: the stacked step outputs (``num_out_data``), then the last states."""
    labels = ('body',)
    branches = False    # as many steps as the data has rows

    def feeds(self, attrs):
        locs = attrs['in_data_locs'] + attrs['in_state_locs'] + attrs['remain_locs']
        feed = [0] * len(locs)
        for i, loc in enumerate(locs):
            feed[loc] = i
        return [feed]

    def step_shape(self, attrs, i, shape):
        if i < len(attrs['in_data_locs']):
            return tuple(shape[1:]) or (1,)     # a 1-d array's slices have shape (1,)
        return shape

    def node_shape(self, attrs, i, shape, known):
        if i >= len(attrs['in_data_locs']):
            return shape
        if known is not None and len(known) == 1:      # 1-d data, slices of shape (1,)
            return known
        return (known[0] if known else 0,) + tuple(shape)

    def carried(self, attrs):
        n_data, n_out = len(attrs['in_data_locs']), attrs['num_out_data']
        return [(n_data + j, 0, n_out + j) for j in range(len(attrs['in_state_locs']))]

    def outputs(self, attrs, shapes, heads):
        steps = shapes[0][0]
        n_out = attrs['num_out_data']
        return [((steps,) + s, d) for s, d in heads[0][:n_out]] + heads[0][n_out:]


def _foreach(*inputs, graphs, generator=None, device=None, in_data_locs, in_state_locs,
             remain_locs, num_args, num_out_data, num_outputs):
    """The kernel of ``_foreach``: ``graphs[0]`` run on each slice of the data inputs."""
    body, = graphs
    n_data, n_states = len(in_data_locs), len(in_state_locs)
    data, states = inputs[:n_data], inputs[n_data:n_data + n_states]
    args = [None] * (n_data + n_states + len(remain_locs))
    for loc, t in zip(remain_locs, inputs[n_data + n_states:]):
        args[loc] = t
    steps = data[0].shape[0]
    if any(d.shape[0] != steps for d in data):
        raise MXNetError("foreach: the data arrays have different lengths %s on axis 0"
                         % [d.shape[0] for d in data])
    # a 1-d array's slices have shape (1,), as MXNet 1.x has no 0-d arrays
    data = [d.reshape(-1, 1) if d.dim() == 1 else d for d in data]
    outs = []
    for t in range(steps):
        for loc, d in zip(in_data_locs, data):
            args[loc] = d[t]
        for loc, s in zip(in_state_locs, states):
            args[loc] = s
        res = body(*args, generator=generator, device=device)
        outs.append(res[:num_out_data])
        states = res[num_out_data:]
    if not steps:
        for loc, d in zip(in_data_locs, data):
            args[loc] = d[:1].sum(0)
        for loc, s in zip(in_state_locs, states):
            args[loc] = s
        shapes = _on_meta(body, args)[:num_out_data]
        stacked = [torch.empty((0,) + tuple(m.shape), dtype=m.dtype, device=data[0].device)
                   for m in shapes]
        return _result(tuple(stacked) + tuple(s.clone() for s in states))
    return _result(tuple(torch.stack(o) for o in zip(*outs)) + tuple(states))


class WhileLoop(Flow):
    """``_while_loop``: the body runs while the condition holds, at most ``max_iterations``
    times. Node inputs: what the two graphs read (``cond_input_locs``, ``func_input_locs``
    say which node input feeds each of their variables), the loop variables among them
    (``func_var_locs``: which body variable each one is); outputs: the step outputs
    stacked to ``max_iterations`` (zeros past the last step; ``num_out_data`` of them),
    then the loop variables' final values."""
    labels = ('cond', 'func')

    def feeds(self, attrs):
        return [attrs['cond_input_locs'], attrs['func_input_locs']]

    def carried(self, attrs):
        func = attrs['func_input_locs']
        n_out = attrs['num_out_data']
        return [(func[j], 1, n_out + i) for i, j in enumerate(attrs['func_var_locs'])]

    def outputs(self, attrs, shapes, heads):
        n_out = attrs['num_out_data']
        steps = attrs['max_iterations']
        return [((steps,) + s, d) for s, d in heads[1][:n_out]] + heads[1][n_out:]


def _while_loop(*inputs, graphs, generator=None, device=None, cond_input_locs,
                func_input_locs, func_var_locs, max_iterations, num_args, num_out_data,
                num_outputs):
    """The kernel of ``_while_loop``: ``graphs[1]`` run while ``graphs[0]`` gives true."""
    cond_fn, func = graphs
    values = list(inputs)
    var_at = [func_input_locs[j] for j in func_var_locs]   # node input of each loop var
    outs, steps = [], 0
    while steps < max_iterations and _truth('while_loop', cond_fn(
            *[values[i] for i in cond_input_locs], generator=generator, device=device)[0]):
        res = func(*[values[i] for i in func_input_locs], generator=generator, device=device)
        outs.append(res[:num_out_data])
        for i, v in zip(var_at, res[num_out_data:]):
            values[i] = v
        steps += 1
    if steps:
        stacked = [torch.stack(o) for o in zip(*outs)]
    else:
        stacked = [torch.empty((0,) + tuple(m.shape), dtype=m.dtype, device=inputs[0].device)
                   for m in _on_meta(func, [values[i] for i in func_input_locs])[:num_out_data]]
    if steps < max_iterations:      # MXNet leaves the rest undefined; here zeros
        stacked = [torch.cat([s, s.new_zeros((max_iterations - steps,) + s.shape[1:])])
                   for s in stacked]
    final = [values[i] for i in var_at]
    if not steps:
        final = [v.clone() for v in final]
    return _result(tuple(stacked) + tuple(final))


class Cond(Flow):
    """``_cond``: the ``then`` graph or the ``else`` graph, as the predicate graph says.
    Node inputs: what the three graphs read (``cond_input_locs``, ``then_input_locs``,
    ``else_input_locs``); outputs: the branch's."""
    labels = ('pred', 'then', 'else')

    def feeds(self, attrs):
        return [attrs['cond_input_locs'], attrs['then_input_locs'], attrs['else_input_locs']]

    def outputs(self, attrs, shapes, heads):
        if [s for s, _ in heads[1]] != [s for s, _ in heads[2]]:
            raise ShapeError("the then-branch gives shapes %s and the else-branch %s"
                             % ([s for s, _ in heads[1]], [s for s, _ in heads[2]]))
        return heads[1]


def _cond(*inputs, graphs, generator=None, device=None, cond_input_locs, then_input_locs,
          else_input_locs, num_args, num_outputs):
    """The kernel of ``_cond``: ``graphs[1]`` or ``graphs[2]`` as ``graphs[0]`` says."""
    pred, then, other = graphs
    # (a Python branch, not torch.cond: compiled by hybridize(backend='inductor'), torch.cond
    # needs branches free of side effects, and kernels keep caches such as scalar_tensor's;
    # dynamo breaks the graph at the branch instead)
    if _truth('cond', pred(*[inputs[i] for i in cond_input_locs], generator=generator,
                           device=device)[0]):
        branch, locs = then, then_input_locs
    else:
        branch, locs = other, else_input_locs
    out = branch(*[inputs[i] for i in locs], generator=generator, device=device)
    # a branch may give back what it was given: the node's outputs are new arrays
    ins = {id(t) for t in inputs}
    return _result(o.clone() if id(o) in ins else o for o in out)


_KINDS = {
    '_foreach': (Foreach, _foreach, {
        'in_data_locs': Locs(), 'in_state_locs': Locs(), 'num_args': Int(),
        'num_out_data': Int(), 'num_outputs': Int(), 'remain_locs': Locs()}),
    '_while_loop': (WhileLoop, _while_loop, {
        'cond_input_locs': Locs(), 'func_input_locs': Locs(), 'func_var_locs': Locs(),
        'max_iterations': Int(), 'num_args': Int(), 'num_out_data': Int(),
        'num_outputs': Int()}),
    '_cond': (Cond, _cond, {
        'cond_input_locs': Locs(), 'else_input_locs': Locs(), 'num_args': Int(),
        'num_outputs': Int(), 'then_input_locs': Locs()}),
}
for _spec in _KINDS.values():
    assert all(a.default is REQUIRED for a in _spec[2].values())


def make_op(name, graphs):
    """The operator of a control-flow node ``name`` (``_foreach``, ``_while_loop``, ``_cond``)
    holding ``graphs`` (symbol JSON's reader makes them so)."""
    cls, kernel, attrs = _KINDS[name]
    if len(graphs) != len(cls.labels):
        raise MXNetError("%s: expected %d subgraphs (%s), got %d"
                         % (name, len(cls.labels), ', '.join(cls.labels), len(graphs)))
    return cls(name, kernel, graphs, attrs)


def is_control_flow(name):
    return name in _KINDS


# -- building nodes from Python functions ----------------------------------------------------

def _symbol():
    from . import symbol
    return symbol


def _leaf(x):
    """flatten's leaf test for Symbols: 0 for one output, n for a group of n."""
    if isinstance(x, _symbol().Symbol):
        n = len(x._outputs)
        return n if n > 1 else 0
    return None


def _entry(sym, what):
    if len(sym._outputs) != 1:
        raise MXNetError("%s: a symbol of %d outputs where one value is expected"
                         % (what, len(sym._outputs)))
    return sym._outputs[0]


def _subgraph_name(name):
    """A name for a graph made in this scope: the enclosing graph's name, '$', ``name`` and a
    count per such name (``AttrScope._subgraph_names``), as MXNet names them."""
    outer = _attribute.current()._attr.get('__subgraph_name__', '')
    if outer:
        name = outer + '$' + name
    counts = _attribute.AttrScope._subgraph_names
    counts[name] += 1
    return name + str(counts[name] - 1)


def _step_var(sym, what):
    """The variable standing for ``sym`` inside a graph: named ``<node>-<output>``, which no
    value cut from outside is named."""
    node, k = _entry(sym, what)
    return _symbol().var('%s-%d' % (node.name, k))


def _in_scope(node, scope):
    return node.extra.get('__subgraph_name__') == scope


def _own_outputs(groups, scope):
    """The graph's head symbols: each given symbol, or an identity of it where it is a
    variable, was made outside ``scope``, or (``groups``: lists that must be distinct from
    the earlier ones) is one of an earlier list's (MXNet's rule: a graph's outputs are
    operators of its own, not its inputs)."""
    sym = _symbol()
    everything = [s for g in groups for s in g]
    inputs = {n.name for n in Graph.from_heads(
        [_entry(s, 'control flow output') for s in everything]).variables()}
    out, names = [], set()
    for g in groups:
        mine = []
        for s in g:
            node, _ = _entry(s, 'control flow output')
            if node.name in inputs or node.name in names or not _in_scope(node, scope):
                s = sym._op_fn('identity')(s)
            mine.append(s)
        out.append(mine)
        names |= {s.name for s in g}
    return [s for g in out for s in g]


def _cut(heads, scope):
    """(graph, {variable name: outer entry}): copies of the nodes made in ``scope`` that
    ``heads`` (symbols made there) reach, an input read from outside the scope becoming a
    variable named after that entry's output (one per entry), which the entry feeds."""
    entries = [_entry(h, 'control flow output') for h in heads]
    order, seen = [], set()
    for head, _ in entries:
        if id(head) in seen:
            continue
        seen.add(id(head))
        stack = [(head, 0)]
        while stack:
            node, i = stack.pop()
            if i < len(node.inputs):
                stack.append((node, i + 1))
                src = node.inputs[i][0]
                if id(src) not in seen and _in_scope(src, scope):
                    seen.add(id(src))
                    stack.append((src, 0))
            else:
                order.append(node)
    copies, cut, outer = {}, {}, {}
    for n in order:
        c = Node(n.op, n.name, dict(n.attrs), extra=dict(n.extra))
        for src, k in n.inputs:
            if id(src) in copies:
                c.inputs.append((copies[id(src)], k))
                continue
            v = cut.get((id(src), k))
            if v is None:
                v = cut[(id(src), k)] = Node(None, src.output_names()[k])
                outer[v.name] = (src, k)
            c.inputs.append((v, 0))
        copies[id(n)] = c
    graph = Graph.from_heads([(copies[id(n)], k) for n, k in entries])
    names = [v.name for v in graph.variables()]
    if len(set(names)) != len(names):
        raise ControlFlowError("The inputs of the subgraph don't have unique names: %s"
                               % names)
    return graph, outer


def _node(kind, graphs, inputs, **attrs):
    """A ``kind`` node holding ``graphs``, reading the entries ``inputs``: its outputs as a
    list of single-output symbols."""
    sym = _symbol()
    op = make_op(kind, graphs)
    attrs = op.parse_attrs(dict(attrs, num_args=len(inputs) + len(graphs)))
    extra = sym._hide(_attribute.current().get(None))
    node = Node(op, _name.current().get(None, kind), attrs, inputs, extra)
    return [sym.Symbol([(node, i)]) for i in range(node.num_outputs())]


def _copy_var(node):
    """A variable made inside a graph (a parameter its function created), copied for the
    outer graph, which feeds it."""
    return (Node(None, node.name, extra=dict(node.extra)), 0)


def foreach(body, data, init_states, name='foreach'):
    """``body`` run on each slice of ``data`` (a Symbol or nested list of them) along axis
    0: ``out, states = body(data_slice, states)``, starting from ``init_states``; returns
    (the outputs stacked, the last states), nested as ``body`` gives them. A graph node,
    ``_foreach``, holding ``body``'s graph.

    >>> import neomx as mx
    >>> outs, states = mx.sym.contrib.foreach(
    ...     lambda x, s: (x + s[0], [s[0] * 2]), mx.sym.var('data'), [mx.sym.var('s')])
    >>> outs.infer_shape(data=(5, 3))[1]
    [(5, 3)]
    """
    sym = _symbol()
    flat_data, data_fmt = flatten(data, _leaf, 'foreach input')
    flat_states, state_fmt = flatten(init_states, _leaf, 'foreach states')
    if not flat_data:
        raise MXNetError("foreach: data must be a Symbol or a non-empty list of Symbols")
    scope = _subgraph_name(name)
    with _attribute.AttrScope(__subgraph_name__=scope):
        data_vars = [_step_var(s, 'foreach input') for s in flat_data]
        state_vars = [_step_var(s, 'foreach states') for s in flat_states]
        outs, states = body(regroup(data_vars, data_fmt), regroup(state_vars, state_fmt))
        flat_out, out_fmt = flatten(outs, _leaf, 'foreach output')
        flat_new, new_fmt = flatten(states, _leaf, 'foreach loop_vars')
        if new_fmt != state_fmt:
            raise ControlFlowError("foreach: the body gives states nested as %s, but the "
                                   "initial states are nested as %s" % (new_fmt, state_fmt))
        heads = _own_outputs([flat_out, flat_new], scope)
    graph, outer = _cut(heads, scope)
    names = [v.name for v in graph.variables()]
    data_names = [v.name for v in data_vars]
    state_names = [v.name for v in state_vars]

    def locs(wanted, what):
        missing = [n for n in wanted if n not in names]
        if missing:
            raise ControlFlowError("foreach: the %s arrays have to be used in the loop body "
                                   "(%s is not)" % (what, missing[0]))
        return [names.index(n) for n in wanted]
    in_data_locs = locs(data_names, 'data')
    in_state_locs = locs(state_names, 'state')
    inputs = [_entry(s, 'foreach input') for s in flat_data + flat_states]
    remain_locs = []
    for i, (nm, v) in enumerate(zip(names, graph.variables())):
        if nm in outer:
            inputs.append(outer[nm])
        elif nm in data_names or nm in state_names:
            continue
        else:
            inputs.append(_copy_var(v))
        remain_locs.append(i)
    res = _node('_foreach', [graph], inputs, num_outputs=len(heads),
                num_out_data=len(flat_out), in_state_locs=in_state_locs,
                in_data_locs=in_data_locs, remain_locs=remain_locs)
    return (regroup(res[:len(flat_out)], out_fmt), regroup(res[len(flat_out):], state_fmt))


def _as_step_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, tuple) else x


def _max_iterations(value):
    if value is None:
        raise ValueError("max_iterations should be specified")
    if hasattr(value, 'asscalar'):
        value = value.asscalar()
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError("Cannot convert max_iteration to python int") from None


def while_loop(cond, func, loop_vars, max_iterations=None, name='while_loop'):
    """A loop: while ``cond(*loop_vars)`` is true (one-element Symbol) and at most
    ``max_iterations`` times, ``step_output, loop_vars = func(*loop_vars)``. Returns (the
    step outputs stacked, of length ``max_iterations``: zeros after the last step; the final
    loop variables, nested as ``loop_vars``). A graph node, ``_while_loop``, holding both
    functions' graphs.

    >>> import neomx as mx
    >>> outs, (i, s) = mx.sym.contrib.while_loop(
    ...     lambda i, s: i <= 5, lambda i, s: ([i + s], [i + 1, s + i]),
    ...     [mx.sym.var('i'), mx.sym.var('s')], max_iterations=10)
    >>> ex = mx.sym.Group(outs + [i, s]).bind(mx.cpu(), {'i': mx.nd.array([1]),
    ...                                                  's': mx.nd.array([0])})
    >>> [o.asnumpy().ravel().tolist() for o in ex.forward()][1:]
    [[6.0], [15.0]]
    """
    max_iterations = _max_iterations(max_iterations)
    flat_vars, var_fmt = flatten(loop_vars, _leaf, 'while loop_vars')
    if not flat_vars:
        raise ValueError("loop_vars should contain at least one element")

    def build(label, fn):
        """(graph, cut values, number of step outputs, output format)."""
        scope = _subgraph_name(name + '_' + label)
        with _attribute.AttrScope(__subgraph_name__=scope):
            new = regroup([_step_var(v, 'while loop_vars') for v in flat_vars], var_fmt)
            new = new if isinstance(new, list) else [new]
            if label == 'cond':
                result = fn(*new)
                if not isinstance(result, _symbol().Symbol):
                    raise ValueError("Return of cond must be a Symbol")
                outs, out_fmt, nxt = [], None, [result]
            else:
                step, nxt = fn(*new)
                outs, out_fmt = flatten(_as_step_list(step), _leaf, 'while output')
                nxt, _ = flatten(_as_step_list(nxt), _leaf, 'while loop_vars')
                if len(nxt) != len(flat_vars):
                    raise ValueError("The number of loop_vars should be consistent during "
                                     "the loop")
            heads = _own_outputs([outs + nxt], scope)
        graph, outer = _cut(heads, scope)
        return graph, outer, len(outs), out_fmt

    cond_g, cond_cut, _, _ = build('cond', cond)
    func_g, func_cut, n_out, out_fmt = build('func', func)
    var_entries = {'%s-%d' % (n.name, k): i for i, (n, k) in
                   enumerate(_entry(v, 'while loop_vars') for v in flat_vars)}
    inputs, loc_of = [], {}

    def place(key, entry):
        if key not in loc_of:
            loc_of[key] = len(inputs)
            inputs.append(entry)
        return loc_of[key]
    all_locs = []
    for gi, (g, cut) in enumerate(((cond_g, cond_cut), (func_g, func_cut))):
        locs = []
        for v in g.variables():
            if v.name in var_entries:       # a loop variable: one input for both graphs
                i = var_entries[v.name]
                locs.append(place(('var', i), _entry(flat_vars[i], 'while loop_vars')))
            elif v.name in cut:             # a value closed over: one per graph, as MXNet
                locs.append(place(('cut', gi, v.name), cut[v.name]))
            else:
                locs.append(place(('copy', gi, v.name), _copy_var(v)))
        all_locs.append(locs)
    func_names = [v.name for v in func_g.variables()]
    func_var_locs = []
    for i, v in enumerate(flat_vars):
        node, k = _entry(v, 'while loop_vars')
        nm = '%s-%d' % (node.name, k)
        if nm not in func_names:
            raise ValueError("The %d-th loop_var doesn't involve into the computation"
                             % (i + 1))
        func_var_locs.append(func_names.index(nm))
    res = _node('_while_loop', [cond_g, func_g], inputs, max_iterations=max_iterations,
                cond_input_locs=all_locs[0], func_input_locs=all_locs[1],
                func_var_locs=func_var_locs, num_out_data=n_out,
                num_outputs=n_out + len(flat_vars))
    outputs = regroup(res[:n_out], out_fmt) if out_fmt is not None else []
    return outputs, regroup(res[n_out:], var_fmt)


def cond(pred, then_func, else_func, name='cond'):
    """``then_func()`` if ``pred`` (a one-element Symbol) is true, else ``else_func()``; both
    give Symbols nested alike, of the same shapes. A graph node, ``_cond``, holding the
    predicate's and both functions' graphs.

    >>> import neomx as mx
    >>> a = mx.sym.var('a')
    >>> out = mx.sym.contrib.cond(a.sum() > 0, lambda: a * 2, lambda: a - 1)
    >>> out.eval(a=mx.nd.array([-3, 1]))[0].asnumpy().tolist()
    [-4.0, 0.0]
    """
    if not isinstance(pred, _symbol().Symbol):
        raise MXNetError("cond: pred must be a Symbol, got %s" % type(pred).__name__)

    def build(label, fn):
        scope = _subgraph_name(name + '_' + label)
        with _attribute.AttrScope(__subgraph_name__=scope):
            outs, fmt = flatten(fn(), _leaf, 'cond outputs')
            heads = _own_outputs([outs], scope)
        graph, outer = _cut(heads, scope)
        return graph, outer, len(outs), fmt

    pred_g, pred_cut, n_pred, _ = build('pred', lambda: pred)
    if n_pred != 1:
        raise ValueError("pred should always be a single output")
    then_g, then_cut, n_then, then_fmt = build('then', then_func)
    else_g, else_cut, n_else, _ = build('else', else_func)
    if n_then != n_else:
        raise ValueError("Number of outputs differs between then-branch and else-branch")
    inputs, all_locs = [], []
    for g, cut in ((pred_g, pred_cut), (then_g, then_cut), (else_g, else_cut)):
        # MXNet reuses an input whose node bears a variable's name (an outer variable read
        # by several graphs) and gives each graph its own copy of other values
        by_name = {e[0].name: i for i, e in enumerate(inputs)}
        locs = []
        for v in g.variables():
            if v.name in by_name:
                locs.append(by_name[v.name])
                continue
            locs.append(len(inputs))
            inputs.append(cut[v.name] if v.name in cut else _copy_var(v))
        all_locs.append(locs)
    res = _node('_cond', [pred_g, then_g, else_g], inputs, cond_input_locs=all_locs[0],
                then_input_locs=all_locs[1], else_input_locs=all_locs[2],
                num_outputs=n_then)
    return regroup(res, then_fmt)
