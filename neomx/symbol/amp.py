"""Mixed precision in graphs: the passes that insert (and remove) ``amp_cast`` and
``amp_multicast`` nodes, from the one table of ``ops/amp.py``.

- ``reduce_precision``: MXNet 1.9.1's conversion of a float32 graph (``amp.convert_symbol``,
  ``convert_model``, ``convert_hybrid_block``). It walks the graph in order and knows, for
  each value, whether it is in the target type (float16/bfloat16), in float32 or unknown
  (a graph input, a value no rule settled): an operator that runs in the target type gets its
  inputs cast to it, one that runs in float32 gets its low-precision inputs cast back, an
  operator needing one type for its inputs gets an ``amp_multicast`` when their types are not
  all known, and the outputs come back in float32. Casts of one value are shared, and the node
  names are MXNet's (``fc1_output_amp_cast_float32``), so that the ``-symbol.json`` written is
  MXNet's.
- ``insert_casts``: what ``amp.init`` does to graphs traced afterwards (hybridized blocks): as
  MXNet's wrapped ``sym.<op>`` functions, every float input of a listed operator gets a cast
  (``amp_multicast`` for the operators needing one type), float32 to float32 included: those
  that change nothing are dropped when the graph is compiled (``drop_noop_casts``), where the
  dtypes are known, so that the generated code shows the casts that run.
- ``remove_amp_cast``: the graph without them (``tojson``/``save``/``export`` by default) but
  for the casts that are graph outputs, as MXNet removes them.

>>> import neomx as mx
>>> from neomx.ops.amp import CastTable
>>> from neomx.symbol.amp import reduce_precision
>>> fc = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=4, name='fc')
>>> out, _ = reduce_precision(mx.sym.exp(fc, name='e')._outputs, CastTable('bfloat16'))
>>> [n.name for n, _ in out][0], [n.name for n in mx.sym.Symbol(out).get_internals()][:3]
('e', ['x', 'x_amp_cast_bfloat16', 'fc_weight'])
"""
from ..ops import amp as amp_table
from ..ops import registry
from ..ops.amp import CONDITIONAL, FLOATS, FP32, LOW, WIDEST, mxnet_name
from .graph import Graph, Node
from .monitor_names import monitor_names

__all__ = ['reduce_precision', 'insert_casts', 'with_casts', 'remove_amp_cast', 'drop_noop_casts',
           'partial_dtypes', 'CAST_OPS']

CAST_OPS = ('amp_cast', 'amp_multicast')

# How MXNet 1.9.1's dtype rules (FInferType) answer when only an operator's first input has a
# known type, where that is not "every input and output take it" (checked against MXNet
# 1.9.1): BatchNorm's parameters and statistics are float32; the *_like operators and where
# say nothing until every input is known; the rest give outputs of fixed types.
_PARAMS_FP32 = frozenset(('BatchNorm', 'BatchNorm_v1', '_contrib_SyncBatchNorm',
                          'BatchNormWithReLU'))
_NEEDS_ALL = frozenset(('reshape_like', 'broadcast_like', 'slice_like', 'where', '_copyto'))
_FIXED_OUTPUT = {'shape_array': 'int64', 'size_array': 'int64', '_contrib_getnnz': 'int64',
                 '_contrib_index_array': 'int64', 'all_finite': 'float32',
                 'multi_all_finite': 'float32', 'argsort': 'float32', 'topk': 'float32'}


def partial_dtypes(node, first):
    """(input dtypes, output dtypes) of operator node ``node`` when its first input is of
    dtype ``first`` and the others unknown, as MXNet's rules give them (None where unknown),
    or None when the rule cannot say."""
    op = node.op
    name = mxnet_name(op)
    n_in, n_out = len(node.inputs), node.num_outputs()
    if name in _NEEDS_ALL:
        return None
    if name in _PARAMS_FP32:
        return [first] + ['float32'] * (n_in - 1), [first] + ['float32'] * (n_out - 1)
    out = _FIXED_OUTPUT.get(name)
    if out is None and 'dtype' in node.attrs:
        out = node.attrs['dtype']
    if out is None and name.startswith(('_sample_', '_random_')):
        out = 'float32'
    return [first] * n_in, [out or first] * n_out


def _output_suffix(node, k):
    """MXNet's suffix for output ``k`` of ``node`` in the names of the casts it inserts:
    empty for a variable, ``_<output name>`` where the operator names its outputs, else
    ``_<k>``."""
    if node.op is None:
        return ''
    name = monitor_names(node)[1][k]
    return name[len(node.name):]


def _cast_node(src, k, dtype, name):
    return Node(registry.get('amp_cast'), name, {'dtype': dtype}, [(src, k)])


def _multicast_node(entries, name):
    return Node(registry.get('amp_multicast'), name,
                {'num_outputs': len(entries), 'cast_narrow': False}, list(entries))


def reduce_precision(heads, table, data_names=None, cast_optional_params=False):
    """The heads of a copy of the graph of ``heads`` with MXNet's casts for ``table``
    (``ops.amp.CastTable``; its ``excluded`` node names stay float32); see the module
    docstring. With ``cast_optional_params``, parameters (the graph inputs not in
    ``data_names``) that a low-precision operator reads are read as they are, to be stored in
    the target type: returns (heads, the names of those inputs)."""
    graph = Graph.from_heads(heads)
    target = table.target
    data_names = set(data_names or ())
    mirror = {}         # id(old node) -> new node
    low = {}            # (id(old node), output) -> new entry of that value in the target type
    full = {}           # (id(old node), output) -> new entry of that value in float32

    def entry(src, k):
        return (mirror[id(src)], k)

    def cast(src, k, dtype, into, consumer):
        made = (_cast_node(mirror[id(src)], k, dtype,
                           '%s%s_amp_cast_%s' % (src.name, _output_suffix(src, k), dtype)), 0)
        into[(id(src), k)] = made
        if consumer is not None:
            consumer.inputs.append(made)
        return made

    for old in graph.nodes:
        new = old.copy()
        new.inputs = []
        mirror[id(old)] = new
        if old.op is None:
            if old.name in table.excluded:
                full[(id(old), 0)] = (new, 0)
            continue
        kind = table.kind_of(old.op, old.attrs)
        excluded = old.name in table.excluded
        mutable = set(old.mutated_inputs())
        if kind == FP32 or excluded:
            for k in range(old.num_outputs()):
                full[(id(old), k)] = (new, k)
            for src, k in old.inputs:
                if (id(src), k) in full:
                    new.inputs.append(full[(id(src), k)])
                elif src.op is None:
                    new.inputs.append(entry(src, k))
                else:
                    cast(src, k, 'float32', full, new)
        elif kind == LOW:
            in_types, out_types = (partial_dtypes(old, target) or
                                   ([target] * len(old.inputs), [target] * old.num_outputs()))
            for k, t in enumerate(out_types):
                if t == target:
                    low[(id(old), k)] = (new, k)
                elif t == 'float32':
                    full[(id(old), k)] = (new, k)
            for i, (src, k) in enumerate(old.inputs):
                key = (id(src), k)
                if key in low:
                    new.inputs.append(low[key])
                elif ((cast_optional_params and src.op is None and src.name not in data_names)
                      or i in mutable or in_types[i] not in (target, None)):
                    new.inputs.append(entry(src, k))
                    if cast_optional_params and src.op is None:
                        low[key] = entry(src, k)
                else:
                    cast(src, k, target, low, new)
        elif kind == WIDEST:
            keys = [(id(src), k) for src, k in old.inputs]
            if any(key not in low and key not in full for key in keys):
                src, k = old.inputs[0]
                mc = _multicast_node([entry(s, j) for s, j in old.inputs],
                                     '%s%s_amp_multicast' % (src.name, _output_suffix(src, k)))
                new.inputs = [(mc, i) for i in range(len(old.inputs))]
            else:
                want = 'float32' if any(key in full for key in keys) else target
                into = full if want == 'float32' else low
                for k in range(old.num_outputs()):
                    into[(id(old), k)] = (new, k)
                for (src, k), key in zip(old.inputs, keys):
                    if key in into:
                        new.inputs.append(into[key])
                    else:
                        cast(src, k, want, into, new)
        elif kind == CONDITIONAL:
            for k in range(old.num_outputs()):
                full[(id(old), k)] = (new, k)
            for i, (src, k) in enumerate(old.inputs):
                if (id(src), k) in full:
                    new.inputs.append(full[(id(src), k)])
                elif i in mutable:
                    new.inputs.append(entry(src, k))
                else:
                    cast(src, k, 'float32', full, new)
        else:
            if old.inputs:
                key = (id(old.inputs[0][0]), old.inputs[0][1])
                first = target if key in low else 'float32' if key in full else None
                types = first and partial_dtypes(old, first)
                if types:
                    for k, t in enumerate(types[1]):
                        if t == target:
                            low[(id(old), k)] = (new, k)
                        elif t == 'float32':
                            full[(id(old), k)] = (new, k)
            new.inputs = [entry(src, k) for src, k in old.inputs]
    out = []
    for node, k in graph.heads:
        key = (id(node), k)
        out.append(full[key] if key in full else cast(node, k, 'float32', full, None))
    stored_low = {n.name for n in graph.nodes if n.op is None and (id(n), 0) in low}
    return out, stored_low


def insert_casts(heads, table):
    """The heads of a copy of the graph of ``heads`` in which each listed operator reads its
    float inputs through casts, as MXNet's ``sym.<op>`` functions wrapped by ``amp.init`` make
    them: an ``amp_cast`` to the target type for each input of a low-precision operator (but
    the auxiliary states and the inputs it keeps in float32), to float32 for a float32
    operator's, one ``amp_multicast`` over the inputs of an operator needing one type."""
    graph = Graph.from_heads(heads)
    made = {}
    for old in graph.nodes:
        new = old.copy()
        made[id(old)] = new
        if old.op is None:
            continue
        new.inputs = [(made[id(src)], k) for src, k in old.inputs]
        kind = table.kind(old.op, old.attrs)
        if kind is None or not new.inputs:
            continue
        if kind == WIDEST:
            if len(new.inputs) > 1:
                mc = _multicast_node(new.inputs, '%s_amp_multicast' % old.name)
                new.inputs = [(mc, i) for i in range(len(new.inputs))]
            continue
        dtype = table.target if kind == LOW else 'float32'
        skip = set(old.mutated_inputs())
        if kind == LOW:
            keep = table.fp32_params.get(mxnet_name(old.op), ())
            names = old.input_names()
            skip |= {i for i, nm in enumerate(names) if ('' if nm == 'data' else nm) in keep}
        new.inputs = [e if i in skip else
                      (_cast_node(e[0], e[1], dtype, '%s_amp_cast%d' % (old.name, i)), 0)
                      for i, e in enumerate(new.inputs)]
    return [(made[id(n)], k) for n, k in graph.heads]


def with_casts(graph):
    """``graph`` (a Graph) as it runs under the table in force (``ops.amp.table``, set by
    ``amp.init``): with ``insert_casts``'s casts, or itself when none is in force."""
    table = amp_table.table
    if table is None:
        return graph
    return Graph.from_heads(insert_casts(graph.heads, table))


def remove_amp_cast(heads):
    """The heads of a copy of the graph of ``heads`` in which no operator reads an
    ``amp_cast`` or ``amp_multicast`` node (it reads what the cast reads, through any chain
    of them); a cast that is itself a graph output stays, as in MXNet. ``heads`` itself when
    the graph has none."""
    graph = Graph.from_heads(heads)
    if not any(n.op is not None and n.op.name in CAST_OPS for n in graph.nodes):
        return list(heads)
    made = {}           # id(old node) -> its copy
    through = {}        # (id(old cast), output) -> the entry it stands for

    def source(src, k):
        return through.get((id(src), k)) or (made[id(src)], k)

    for old in graph.nodes:
        new = made[id(old)] = old.copy()
        new.inputs = [source(src, k) for src, k in old.inputs]
        if old.op is not None and old.op.name in CAST_OPS:
            for k, entry in enumerate(new.inputs):
                through[(id(old), k)] = entry
    return [(made[id(n)], k) for n, k in heads]


def drop_noop_casts(graph, inferred):
    """``graph`` (a Graph whose dtypes ``inferred`` holds) without the casts that change no
    dtype: an ``amp_cast`` of a value already of its dtype (or not a float), an
    ``amp_multicast`` of values of one dtype. Graph outputs stay (their kernels copy)."""
    heads = {id(n) for n, _ in graph.heads}
    subst = {}
    nodes = []
    for node in graph.nodes:
        ins = [subst.get((id(s), k), (s, k)) for s, k in node.inputs]
        op = node.op
        if op is not None and op.name in CAST_OPS and id(node) not in heads:
            dtypes = [inferred.dtypes[s][k] for s, k in node.inputs]
            if op.name == 'amp_cast':
                noop = dtypes[0] == node.attrs['dtype'] or dtypes[0] not in FLOATS
            else:
                noop = len(set(dtypes)) == 1
            if noop and all(d is not None for d in dtypes):
                for k, e in enumerate(ins):
                    subst[(id(node), k)] = e
                continue
        if ins != node.inputs:
            orig, node = node, node.copy()
            node.inputs = ins
            for k in range(node.num_outputs()):
                subst[(id(orig), k)] = (node, k)
        nodes.append(node)
    return Graph(nodes, [subst.get((id(n), k), (n, k)) for n, k in graph.heads])
