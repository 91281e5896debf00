"""The subgraph API: backends that partition a graph, ``Symbol.optimize_for(backend)``.

A backend selects operator nodes; ``partition`` groups the selected nodes that are connected
(without making a cycle) and replaces each group by one ``_CachedOp`` node holding it as a
subgraph, as MXNet's partitioner does (its JSON writes the group under ``"subgraphs"``).
neomx's backends compile nothing of their own: a ``_CachedOp`` node runs its subgraph's
operators as the graph's own (executors, CachedOp and hybridized blocks inline it,
``passes.inline_subgraphs``), so a partitioned graph computes what the original does.

MXNet's two test backends are here: ``'default'`` and ``'default_v2'`` select the operators
named with ``_LIB.MXSetSubgraphPropertyOpNames`` (or ``...V2``). ``register_backend`` adds a
backend selecting nodes by a Python function; backends living in C++ libraries
(``mx.library.load``) cannot be loaded.

>>> import neomx as mx
>>> from neomx.symbol import subgraph
>>> x = mx.sym.var('x')
>>> y = mx.sym.cos(mx.sym.sin(mx.sym.exp(x)))
>>> subgraph.register_backend('trig', lambda node: node.op.name in ('sin', 'cos'))
>>> p = y.optimize_for('trig')
>>> [n for n in p.get_internals().list_outputs()]
['x', 'exp0_output', '_CachedOp0_cos0_output']
"""
import math
import os

from ..base import MXNetError
from .graph import Graph, Node, Subgraph, cached_op_node

__all__ = ['register_backend', 'has_backend', 'backends', 'set_op_names', 'remove_op_names',
           'partition', 'partition_by_names']

# backend name -> function(node) -> bool
_BACKENDS = {}
# the operator names of MXNet's test backends ('default', 'default_v2')
_OP_NAMES = {}


def register_backend(name, select):
    """Registers backend ``name``: ``select(node)`` says whether an operator node (``node.op``
    its registry entry, ``node.attrs`` its attributes) goes into a subgraph."""
    if not callable(select):
        raise MXNetError("register_backend(%r): select must be a function of a node" % (name,))
    _BACKENDS[name] = select


def has_backend(name):
    return name in _BACKENDS


def backends():
    return sorted(_BACKENDS)


def _names_of(op):
    return {op.name} | set(getattr(op, 'aliases', ()))


def set_op_names(backend, names):
    """The operators MXNet's test backend ``backend`` selects (``MXSetSubgraphPropertyOpNames``)."""
    _OP_NAMES[backend] = set(names)


def remove_op_names(backend):
    _OP_NAMES.pop(backend, None)


def _by_names(backend):
    def select(node):
        return bool(_names_of(node.op) & _OP_NAMES.get(backend, set()))
    return select


for _b in ('default', 'default_v2'):
    register_backend(_b, _by_names(_b))


def backend_of(name, where):
    select = _BACKENDS.get(name)
    if select is None:
        raise MXNetError("%s: unknown subgraph backend %r; registered: %s (backends of C++ "
                         "libraries cannot be loaded by neomx)" % (where, name,
                                                                   ', '.join(backends())))
    return select


def env_backend():
    """The backend ``MXNET_SUBGRAPH_BACKEND`` names for bind and simple_bind, if registered."""
    name = os.environ.get('MXNET_SUBGRAPH_BACKEND')
    return name if name and name in _BACKENDS else None


def partition(heads, select):
    """The heads of a graph in which the nodes ``select`` picks are grouped into ``_CachedOp``
    nodes: a selected node joins the group of a selected input unless another of its inputs
    depends on that group (which would make a cycle). The graph of ``heads`` is rewired:
    give a copy (``Symbol.optimize_for`` does)."""
    graph = Graph.from_heads(heads)
    group, deps, members = {}, {}, []
    for n in graph.nodes:
        upstream = set()
        for src, _ in n.inputs:
            upstream |= deps[id(src)]
            if id(src) in group:
                upstream.add(group[id(src)])
        if n.op is not None and select(n):
            chosen = None
            for src, _ in n.inputs:
                g = group.get(id(src))
                if g is not None and all(group.get(id(s)) == g or g not in deps[id(s)]
                                         for s, _ in n.inputs):
                    chosen = g
                    break
            if chosen is None:
                chosen = len(members)
                members.append([])
            group[id(n)] = chosen
            members[chosen].append(n)
        deps[id(n)] = frozenset(upstream)
    if not members:
        return list(heads)
    # each group's inputs (entries read from outside) and outputs (entries read outside)
    outer_reads = [(src, k) for n in graph.nodes if id(n) not in group for src, k in n.inputs]
    outer_reads += list(heads)
    made = {}       # (id(node), k) -> new entry
    for gid, nodes in enumerate(members):
        mine = {id(n) for n in nodes}
        inputs = []
        for n in nodes:
            for src, k in n.inputs:
                if id(src) not in mine and (src, k) not in inputs:
                    inputs.append((src, k))
        outputs = []
        for src, k in outer_reads:
            if id(src) in mine and (src, k) not in outputs:
                outputs.append((src, k))
        for n in graph.nodes:
            if id(n) in group and group[id(n)] != gid:
                for src, k in n.inputs:
                    if id(src) in mine and (src, k) not in outputs:
                        outputs.append((src, k))
        sub, inputs = _subgraph(nodes, inputs, outputs, made)
        node = cached_op_node(sub, '_CachedOp%d' % gid, inputs)
        for i, (src, k) in enumerate(outputs):
            made[(id(src), k)] = (node, i)
    # rewire: every reader of a group's output reads the _CachedOp node instead
    subs = {id(e[0]): e[0] for e in made.values()}
    for node in list(subs.values()) + [n for n in graph.nodes if id(n) not in group]:
        node.inputs = [made.get((id(s), k), (s, k)) for s, k in node.inputs]
    return [made.get((id(n), k), (n, k)) for n, k in heads]


def _subgraph(nodes, inputs, outputs, made):
    """(a Subgraph computing ``outputs`` of ``nodes`` from entries among ``inputs``,
    the entries it reads in the order of its variables, as MXNet orders a subgraph's
    inputs). Its variables are named after the entries they stand for (an earlier group's
    output, for an entry ``made`` maps to one)."""
    variables = {}
    for src, k in inputs:
        node, i = made.get((id(src), k), (src, k))
        variables[(id(src), k)] = Node(None, '%s0' % node.output_names()[i])
    copies = {}
    for n in nodes:
        c = Node(n.op, n.name, dict(n.attrs), extra=dict(n.extra))
        c.inputs = [(copies[id(s)], k) if id(s) in copies else (variables[(id(s), k)], 0)
                    for s, k in n.inputs]
        copies[id(n)] = c
    heads = [(copies[id(s)], k) for s, k in outputs]
    inner = Graph.from_heads(heads)
    entry_of = {id(v): e for e, v in zip(inputs, (variables[(id(s), k)] for s, k in inputs))}
    order = inner.variables()
    return (Subgraph(inner, [v.name for v in order], math.inf),
            [entry_of[id(v)] for v in order])


def cached_op(*args, subgraph=None, name=None, **kwargs):
    """``sym._internal._CachedOp``: a node running the graph of JSON text ``subgraph`` on the
    symbols ``args`` (one per variable of that graph, in its ``list_inputs`` order)."""
    from . import name as _name
    from .json import _load_doc, _parse
    from .symbol import Symbol
    if subgraph is None:
        raise MXNetError("_CachedOp: the subgraph= attribute (a graph's JSON) is required")
    if kwargs:
        raise MXNetError("_CachedOp: unknown arguments %s" % sorted(kwargs))
    graph = Graph.from_heads(_load_doc(_parse(subgraph, '_CachedOp'), '_CachedOp: subgraph'))
    names = [v.name for v in graph.variables()]
    if len(args) != len(names) or not all(isinstance(a, Symbol) and len(a._outputs) == 1
                                          for a in args):
        raise MXNetError("_CachedOp: expected one symbol for each of the subgraph's inputs %s, "
                         "got %d arguments" % (names, len(args)))
    node = cached_op_node(Subgraph(graph, names, math.inf),
                          _name.current().get(name, '_cachedop'), [a._outputs[0] for a in args])
    return Symbol([(node, i) for i in range(node.num_outputs())])


def partition_by_names(heads, names):
    """``partition`` selecting the operators named ``names`` (``MXBuildSubgraphByOpNames``)."""
    names = set(names)
    return partition(heads, lambda node: bool(_names_of(node.op) & names))
