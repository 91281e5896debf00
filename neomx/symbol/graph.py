"""The graph IR: plain data, one interpreter.

A graph is a list of ``Node`` in topological order and a list of heads. A node is an
operator application (``op`` a registry entry, its parsed ``attrs``, its ``inputs`` as
``(node, output index)`` pairs in the operator's order, absent optional inputs left out as in
MXNet) or, with ``op`` None, a variable. ``extra`` holds the string attributes MXNet keeps on
nodes (``__shape__``, ``__dtype__``, ``__init__``, ``__lr_mult__``, ``ctx_group``, ...).

>>> import neomx as mx
>>> from neomx.symbol.graph import Graph, evaluate
>>> import torch
>>> s = mx.sym.relu(mx.sym.var('x') * 2)
>>> g = Graph.of(s)
>>> [n.name for n in g.nodes]
['x', '_mulscalar0', 'relu0']
>>> evaluate(g, {'x': torch.tensor([-1.0, 3.0])})[0].tolist()
[0.0, 6.0]
"""
from functools import partial

from ..ops import registry
from ..ops.registry import Op


__all__ = ['Node', 'Graph', 'evaluate', 'kernel_args', 'input_slots', 'Subgraph', 'CACHED_OP',
           'cached_op_node', 'held_graphs']


class Node:
    """An operator application or (``op`` None) a variable; see the module docstring."""
    __slots__ = ('op', 'name', 'attrs', 'inputs', 'extra')

    def __init__(self, op, name, attrs=None, inputs=(), extra=None):
        self.op = op
        self.name = name
        self.attrs = attrs if attrs is not None else {}
        self.inputs = list(inputs)
        self.extra = extra if extra is not None else {}

    @property
    def is_variable(self):
        return self.op is None

    def num_outputs(self):
        return 1 if self.op is None else self.op.num_outputs(self.attrs)

    def output_names(self):
        """MXNet's output names: the variable's own name, else ``<node>_output`` and so on."""
        if self.op is None:
            return [self.name]
        if not self.name:       # an atomic symbol (_gen_atomic_symbol)
            return list(self.op.output_names(self.attrs))
        return ['%s_%s' % (self.name, o) for o in self.op.output_names(self.attrs)]

    def input_names(self):
        """The names of the present inputs (``data``, ``weight``, ... or ``arg0, arg1``)."""
        return list(self.op.input_names(self.attrs, len(self.inputs)))

    def mutated_inputs(self, is_train=True):
        """Indices into ``inputs`` of the inputs this node writes in place (aux states), in
        training or (``is_train`` False) outside it."""
        op = self.op
        if op is None or not op.mutate:
            return ()
        names = self.input_names()
        return tuple(names.index(m) for m in op.mutated(self.attrs, is_train) if m in names)

    def copy(self):
        return Node(self.op, self.name, dict(self.attrs), list(self.inputs), dict(self.extra))

    def __repr__(self):
        return '<Node %s %s>' % ('var' if self.op is None else self.op.name, self.name)


class Graph:
    """Nodes in topological order (inputs before users, in MXNet's depth-first order) and the
    heads, ``(node, output index)`` pairs."""
    __slots__ = ('nodes', 'heads')

    def __init__(self, nodes, heads):
        self.nodes = nodes
        self.heads = heads

    @classmethod
    def of(cls, symbol):
        return cls.from_heads(symbol._outputs)

    @classmethod
    def from_heads(cls, heads):
        """The nodes reachable from ``heads``, depth first with inputs in order (MXNet's
        ``list_arguments`` order); iterative, since deep networks exceed Python's recursion."""
        order, seen = [], set()
        for head, _ in heads:
            if id(head) in seen:
                continue
            stack = [(head, 0)]
            seen.add(id(head))
            while stack:
                node, i = stack.pop()
                if i < len(node.inputs):
                    stack.append((node, i + 1))
                    child = node.inputs[i][0]
                    if id(child) not in seen:
                        seen.add(id(child))
                        stack.append((child, 0))
                else:
                    order.append(node)
        return cls(order, list(heads))

    def variables(self):
        return [n for n in self.nodes if n.op is None]

    def aux_nodes(self, is_train=True):
        """Variables some operator writes in place (BatchNorm's moving statistics); with
        ``is_train`` False, those it writes outside training (none of BatchNorm's)."""
        aux = {}
        for n in self.nodes:
            for i in n.mutated_inputs(is_train):
                src = n.inputs[i][0]
                if src.op is None:
                    aux[id(src)] = src
        return aux

    def arguments(self):
        aux = self.aux_nodes()
        return [n for n in self.nodes if n.op is None and id(n) not in aux]

    def auxiliary(self):
        aux = self.aux_nodes()
        return [n for n in self.nodes if n.op is None and id(n) in aux]


def input_slots(node):
    """(number of kernel inputs, position of each present input): the kernel takes the full
    input list with None for inputs the attributes drop (``bias`` when ``no_bias``)."""
    op = node.op
    n = len(node.inputs)
    if op.variadic or op.drop_inputs is None:
        return n, tuple(range(n))
    full = op.input_names(node.attrs, n, present_only=False)
    present = op.input_names(node.attrs, n)
    return len(full), tuple(full.index(p) for p in present)


def kernel_args(node, values):
    """``values`` (one per input of operator node ``node``, in ``node.inputs`` order) in the
    order its kernel takes them: the full input list, None for the inputs its attributes drop
    (``bias`` when ``no_bias``)."""
    op = node.op
    if op.variadic or op.drop_inputs is None:
        return list(values)
    n, slots = input_slots(node)
    args = [None] * n
    for pos, v in zip(slots, values):
        args[pos] = v
    return args


def _run_kernel(fn, attrs, kw, args):
    out = fn(*args, **attrs, **kw)
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def evaluate(graph, feed, device=None, is_train=False, generator=None, hook=None, kernel=None):
    """Runs ``graph`` on torch tensors: ``feed`` maps variable names to tensors (a variable
    not fed is a folded constant, holding its value); returns the heads' tensors. The one
    interpreter: the generated code (codegen.py) computes the same, compiled.

    ``hook(node, run, args) -> outputs``, when given, runs each operator node: ``run(args)``
    calls the node's kernel on the tensors ``args`` (in the kernel's argument order, see
    ``kernel_args``) and returns its outputs as a tuple. A hook may change the arguments
    before the call and the outputs after it, or note them (an executor's monitor, integer
    gradients: ``cached_op.integer_hook``). ``kernel(op)``, when given, picks the function run
    for an operator (sparse storage: ``ops.sparse.kernel_for``).

    An operator holding graphs (``op.graphs``: a control-flow node's loop body, condition or
    branches, symbol/control_flow.py) gets them as functions of tensors, ``graphs=``, each
    running its graph through this interpreter with the same kernel choice (the code
    generator hands it their generated code instead). A hook sees the node, not the
    operators of its graphs, as MXNet's monitors do."""
    env = {}
    for node in graph.nodes:
        op = node.op
        if op is None:
            t = feed.get(node.name)
            if t is None:
                t = node.extra['__value__'].tensor
            env[node] = (t,)
            continue
        args = kernel_args(node, [env[src][k] for src, k in node.inputs])
        kw = op.kernel_kwargs(device, is_train, generator)
        if op.graphs:       # control flow: its kernel calls its graphs, interpreted alike
            kw['graphs'] = tuple(partial(_interpreter, g, is_train, kernel) for g in op.graphs)
        fn = op.kernel if kernel is None else kernel(op)
        if hook is None:
            env[node] = _run_kernel(fn, node.attrs, kw, args)
        else:
            env[node] = tuple(hook(node, partial(_run_kernel, fn, node.attrs, kw), args))
    return [env[n][k] for n, k in graph.heads]


def _interpreter(graph, is_train, kernel, *tensors, generator=None, device=None):
    """``graph`` run by ``evaluate`` on ``tensors`` (its variables, in ``graph.variables()``
    order): a control-flow kernel's view of a graph it holds, called as generated code is."""
    feed = {v.name: t for v, t in zip(graph.variables(), tensors)}
    return tuple(evaluate(graph, feed, device, is_train, generator, kernel=kernel))


class Subgraph:
    """A graph standing for one node, MXNet's ``_CachedOp``: a hybridized block's graph
    recorded by autograd (``autograd.get_symbol``), or a group of operators a subgraph backend
    made (``Symbol.optimize_for``). Plain data, held in the ``subgraph`` attribute of a node of
    the registered operator ``_CachedOp`` (``CACHED_OP``; ``cached_op_node`` makes one).
    ``graph`` has variables ``input_names``, which the node's inputs feed in that order; graphs
    of at most ``inline_limit`` operators are inlined into a recorded graph instead, and
    running a graph inlines them all (``passes.inline_subgraphs``). (Control-flow nodes hold
    graphs too, in their operator, ``op.graphs``, and run them: symbol/control_flow.py;
    ``held_graphs`` asks of either.)"""
    __slots__ = ('graph', 'input_names', 'inline_limit', 'aux')

    def __init__(self, graph, input_names, inline_limit):
        self.graph = graph
        self.input_names = tuple(input_names)
        self.inline_limit = inline_limit
        aux = {n.name for n in graph.auxiliary()}
        # the inputs its operators write (a BatchNorm's moving statistics): auxiliary states
        self.aux = tuple(n for n in self.input_names if n in aux)

    def output_names(self):
        out = []
        for node, k in self.graph.heads:
            names = node.output_names()
            out.append(names[k] if k < len(names) else '%s_output%d' % (node.name, k))
        return out

    def inline(self, entries, limit=None):
        """The graph's head entries with its variables replaced by ``entries`` ({variable
        name: (node, index)}), or None when it has more than ``inline_limit`` operators
        (``limit`` when given)."""
        ops = [n for n in self.graph.nodes if n.op is not None]
        if len(ops) > (self.inline_limit if limit is None else limit):
            return None
        made = {}
        for n in self.graph.nodes:
            if n.op is None:
                continue
            c = n.copy()
            c.inputs = [(made[id(i)], k) if i.op is not None else
                        entries.get(i.name) or (i.copy(), 0) for i, k in n.inputs]
            made[id(n)] = c
        return [(made[id(n)], k) if n.op is not None else entries.get(n.name) or (n.copy(), 0)
                for n, k in self.graph.heads]


class _CachedOpEntry(Op):
    """The registry's ``_CachedOp``: inputs, outputs and written inputs are those of the
    ``Subgraph`` in the node's ``subgraph`` attribute (which MXNet's JSON writes as the node's
    ``"subgraphs"``, not as an attribute); its kernel runs the subgraph (``evaluate``)."""

    def input_names(self, attrs, num_inputs=None, present_only=True):
        return attrs['subgraph'].input_names

    def num_outputs(self, attrs):
        return len(attrs['subgraph'].graph.heads)

    def output_names(self, attrs):
        return tuple(attrs['subgraph'].output_names())

    def mutated(self, attrs, is_train=True):
        sub = attrs['subgraph']
        if is_train:
            return sub.aux
        written = {n.name for n in sub.graph.aux_nodes(False).values()}
        return tuple(n for n in sub.aux if n in written)

    def format_attrs(self, attrs):
        return {}


def _run_subgraph(*inputs, subgraph):
    """The graph of ``subgraph`` on ``inputs`` (one per variable, in its order)."""
    return tuple(evaluate(subgraph.graph, dict(zip(subgraph.input_names, inputs))))


CACHED_OP = _CachedOpEntry('_CachedOp', _run_subgraph, inputs=(),
                           attrs={'subgraph': registry.Any()}, num_outputs=None)
CACHED_OP.mutate = CACHED_OP.mutated       # written inputs depend on the subgraph
registry.add(CACHED_OP)


def cached_op_node(subgraph, name, inputs=(), extra=None):
    """A ``_CachedOp`` node standing for ``subgraph`` (a ``Subgraph``), reading ``inputs``."""
    return Node(CACHED_OP, name, {'subgraph': subgraph}, inputs, extra)


def held_graphs(node):
    """The graphs ``node`` holds, which symbol JSON writes as its ``"subgraphs"``: a
    ``_CachedOp`` node's subgraph (data in its ``subgraph`` attribute, which its kernel runs), a
    control-flow node's body, condition or branches (its operator's ``graphs``, which its
    kernel calls as functions: ``evaluate``), the graph describing a fused node of MXNet's
    subgraph backends (its ``subgraph`` attribute: ``_sg_mkldnn_conv``); () for other nodes
    and variables."""
    op = node.op
    if op is None:
        return ()
    if op is CACHED_OP:
        return (node.attrs['subgraph'].graph,)
    held = node.attrs.get('subgraph')
    if isinstance(held, Graph):     # a fused node's description (ops/quantization.py)
        return (held,)
    return op.graphs
