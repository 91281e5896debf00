"""MXNet's ``-symbol.json`` format: read and written so files move both ways between neomx
and MXNet 1.x.

::

    {"nodes": [{"op": "null", "name": "data", "inputs": []},
               {"op": "FullyConnected", "name": "fc1", "attrs": {"num_hidden": "10"},
                "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}, ...],
     "arg_nodes": [0, 1, 2],            # the variables
     "node_row_ptr": [0, 1, 2, 3, 4],   # first output entry of each node
     "heads": [[3, 0, 0]],              # (node, output, version)
     "attrs": {"mxnet_version": ["int", 10901]}}

Attribute values are strings. Files of older MXNet versions name the attributes ``attr`` or
``param`` instead of ``attrs``; both are read.
"""
import ast
import json
import math

from .. import atomic
from ..base import MXNetError
from ..ops import registry
from ..util import is_np_shape
from .control_flow import is_control_flow, make_op
from .graph import Graph, Node, Subgraph, cached_op_node, held_graphs

__all__ = ['dumps', 'loads', 'save', 'MXNET_VERSION']

MXNET_VERSION = 10901

# Operators neomx registers under another canonical name than MXNet: files use MXNet's.
_MXNET_NAME = {'_elemwise_power': '_power', '_elemwise_mod': '_mod',
               '_elemwise_maximum': '_maximum', '_elemwise_minimum': '_minimum'}


def _attr_strings(node):
    out = {} if node.op is None else node.op.format_attrs(node.attrs)
    for k, v in node.extra.items():
        if not k.startswith('__value'):
            out[k] = str(v)
    return out


def dumps(heads):
    """The JSON text of the graph with ``heads`` (``(node, output)`` pairs)."""
    return _format(_doc(heads))


def _doc(heads, inner=False):
    """The JSON document (a dict) of the graph with ``heads``; a node holding graphs (a
    ``_CachedOp``, a control-flow node) holds theirs under ``"subgraphs"``, without the
    version attribute (``inner``), as MXNet writes them."""
    graph = Graph.from_heads(heads)
    index = {id(n): i for i, n in enumerate(graph.nodes)}
    nodes, row_ptr = [], [0]
    for n in graph.nodes:
        entry = {'op': 'null' if n.op is None else _MXNET_NAME.get(n.op.name, n.op.name),
                 'name': n.name}
        attrs = _attr_strings(n)
        if attrs:
            entry['attrs'] = attrs
        entry['inputs'] = [[index[id(s)], k, 0] for s, k in n.inputs]
        graphs = held_graphs(n)
        if graphs:
            entry['subgraphs'] = [_doc(g.heads, True) for g in graphs]
        nodes.append(entry)
        row_ptr.append(row_ptr[-1] + n.num_outputs())
    doc = {'nodes': nodes,
           'arg_nodes': [i for i, n in enumerate(graph.nodes) if n.op is None],
           'node_row_ptr': row_ptr,
           'heads': [[index[id(n)], k, 0] for n, k in heads],
           'attrs': {'mxnet_version': ['int', MXNET_VERSION]}}
    if is_np_shape():       # as MXNet marks graphs written under NumPy shape semantics
        doc['attrs'] = {'is_np_shape': ['int', 1], 'mxnet_version': ['int', MXNET_VERSION]}
    if inner:
        del doc['attrs']
    return doc


def _format(doc):
    """JSON laid out as MXNet writes it: one node key per line, short lists inline."""
    d = json.dumps

    def obj(o, indent):
        if len(o) <= 1:
            return d(o)
        pad = ' ' * (indent + 2)
        return '{\n' + ',\n'.join('%s%s: %s' % (pad, d(k), d(v)) for k, v in o.items()) + \
            '\n' + ' ' * indent + '}'

    nodes = []
    for n in doc['nodes']:
        lines = ['      %s: %s' % (d(k), obj(v, 6) if k == 'attrs' else d(v)) for k, v in n.items()]
        nodes.append('    {\n' + ',\n'.join(lines) + '\n    }')
    parts = ['  "nodes": [\n' + ',\n'.join(nodes) + '\n  ]']
    parts += ['  %s: %s' % (d(k), d(doc[k])) for k in ('arg_nodes', 'node_row_ptr', 'heads', 'attrs')]
    return '{\n' + ',\n'.join(parts) + '\n}'


def save(heads, fname):
    """Writes the JSON of ``heads`` to ``fname`` through a temporary file (never half
    written)."""
    atomic.write(fname, dumps(heads).encode('utf-8'))


def _node(entry, where, i):
    name = entry.get('name')
    opname = entry.get('op')
    if not isinstance(name, str) or not isinstance(opname, str):
        raise MXNetError("%s: node %d has no 'op' or 'name'" % (where, i))
    raw = entry.get('attrs', entry.get('attr', entry.get('param', {}))) or {}
    if opname == 'null':
        return Node(None, name, extra={k: str(v) for k, v in raw.items()})
    if opname == '_CachedOp':
        return cached_op_node(_subgraph(entry, raw, where, name), name,
                              extra={k: str(v) for k, v in raw.items() if k != 'subgraph'})
    if is_control_flow(opname):
        graphs = [Graph.from_heads(_load_doc(doc, '%s: subgraph %d of node %s'
                                             % (where, j, name)))
                  for j, doc in enumerate(entry.get('subgraphs') or ())]
        try:
            op = make_op(opname, graphs)
        except MXNetError as e:
            raise MXNetError("%s: node %s: %s" % (where, name, e)) from None
    elif not registry.exists(opname):
        raise MXNetError("%s: node %s uses operator %s, which neomx does not have"
                         % (where, name, opname))
    else:
        op = registry.get(opname)
    op_attrs, extra = {}, {}
    if 'subgraph' in op.attrs and entry.get('subgraphs'):
        # a fused node (MXNet's subgraph backends) whose settings its subgraph holds
        op_attrs['subgraph'] = Graph.from_heads(_load_doc(
            entry['subgraphs'][0], '%s: the subgraph of node %s' % (where, name)))
    for k, v in raw.items():
        if k in op.attrs or op.accepts_attr(k):
            op_attrs[k] = v
        elif k.startswith('__') or k in _IGNORED:
            extra[k] = str(v)
        else:
            raise MXNetError("%s: node %s: operator %s has no attribute %r in neomx (value %r)"
                             % (where, name, opname, k, v))
    try:
        attrs = op.parse_attrs(op_attrs)
    except MXNetError as e:
        raise MXNetError("%s: node %s: %s" % (where, name, e)) from None
    return Node(op, name, attrs, extra=extra)


# Attributes MXNet files carry that change nothing here (placement and memory hints).
_IGNORED = {'ctx_group', 'lr_mult', 'wd_mult', 'force_mirroring', 'mirror_stage'}


def _subgraph(entry, raw, where, name):
    """The Subgraph of a ``_CachedOp`` node: its graph from ``"subgraphs"`` (or a
    ``subgraph`` attribute holding JSON text); its variables, in their order, are the node's
    inputs."""
    docs = entry.get('subgraphs')
    if docs:
        doc = docs[0]
    elif 'subgraph' in raw:
        doc = _parse(raw['subgraph'], '%s: node %s' % (where, name))
    else:
        raise MXNetError("%s: node %s (_CachedOp) holds no subgraph" % (where, name))
    heads = _load_doc(doc, '%s: the subgraph of node %s' % (where, name))
    graph = Graph.from_heads(heads)
    return Subgraph(graph, [v.name for v in graph.variables()], math.inf)


def _parse(text, where):
    try:
        return json.loads(text)
    except ValueError as e:
        raise MXNetError("%s: not valid JSON (%s)" % (where, e)) from None


def loads(text, where='symbol JSON'):
    """The heads (``(node, output)`` pairs) of the graph in JSON ``text``; errors name
    ``where`` (the file) and the node."""
    return _load_doc(_parse(text, where), where)


def _load_doc(doc, where):
    if not isinstance(doc, dict) or 'nodes' not in doc or 'heads' not in doc:
        raise MXNetError("%s: not an MXNet symbol file (expected 'nodes' and 'heads')" % where)
    nodes = []
    # A graph written without NumPy shape semantics, read under them: its 0 dimensions are
    # unknown ones, -1 there (MXNet converts them so).
    legacy = is_np_shape() and 'is_np_shape' not in (doc.get('attrs') or {})
    for i, entry in enumerate(doc['nodes']):
        node = _node(entry, where, i)
        if legacy and '__shape__' in node.extra:
            dims = ast.literal_eval(node.extra['__shape__'])
            dims = (dims,) if isinstance(dims, int) else tuple(dims)
            node.extra['__shape__'] = str(tuple(-1 if d == 0 else d for d in dims))
        for inp in entry.get('inputs', []):
            src, k = inp[0], inp[1]
            if not 0 <= src < i:
                raise MXNetError("%s: node %s reads node %d, which does not come before it"
                                 % (where, node.name, src))
            node.inputs.append((nodes[src], k))
        nodes.append(node)
    heads = []
    for h in doc['heads']:
        if not 0 <= h[0] < len(nodes):
            raise MXNetError("%s: head %s names no node" % (where, h))
        heads.append((nodes[h[0]], h[1]))
    return heads
