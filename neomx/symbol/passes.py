"""Graph passes: shape and dtype inference, dead code elimination, common subexpression
elimination and constant folding.

Each pass takes a ``Graph`` and returns a new one (or, for inference, a table); nodes of the
input graph are never modified, so the Symbols a graph came from stay as they were.

>>> import neomx as mx
>>> from neomx.symbol.graph import Graph
>>> from neomx.symbol import passes
>>> x = mx.sym.var('x')
>>> g = Graph.of(mx.sym.Group([mx.sym.exp(x) + mx.sym.exp(x)]))
>>> len(g.nodes), len(passes.eliminate_common_subexpressions(g).nodes)
(4, 3)
"""
import ast
import math

import torch

from ..base import MXNetError, dtype_name
from ..ops import amp as amp_table
from ..ops.elemwise import broadcast_rule, partial_broadcast_shapes
from ..ops.registry import ShapeError
from ..ops.shape import partial_reshape_shapes, reshape_rule
from ..util import is_np_shape
from . import amp
from .graph import CACHED_OP, Graph, Node, evaluate, held_graphs, input_slots, kernel_args

__all__ = ['infer', 'Inferred', 'eliminate_dead_code', 'eliminate_common_subexpressions',
           'fold_constants', 'optimize', 'prepare', 'known', 'settle_creation_shapes']


# -- shape and dtype inference ----------------------------------------------------------------

def known(shape):
    """A shape with every dimension known (MXNet 1.x: 0 means unknown; under NumPy shape
    semantics 0 is a size and -1 means unknown)."""
    if shape is None:
        return False
    if is_np_shape():
        return all(d >= 0 for d in shape)
    return all(d > 0 for d in shape)


def _parse_shape(text):
    value = ast.literal_eval(text) if isinstance(text, str) else text
    # a negative dimension (NumPy shape semantics' -1) is an unknown one
    return (max(value, 0),) if isinstance(value, int) else tuple(max(int(d), 0) for d in value)


def _merge(node_name, provided, inferred):
    """Two descriptions of one shape, 0 for unknown dims; raises when they disagree."""
    if is_np_shape():
        if provided is None:
            return tuple(inferred)
        if inferred is None:
            return tuple(provided)
        if len(provided) != len(inferred) or any(a >= 0 and b >= 0 and a != b
                                                 for a, b in zip(provided, inferred)):
            raise MXNetError("Error in operator %s: Shape inconsistent, Provided = %s, "
                             "inferred shape=%s" % (node_name, _fmt(provided), _fmt(inferred)))
        return tuple(b if a < 0 else a for a, b in zip(provided, inferred))
    if provided is None or len(provided) == 0:
        return tuple(inferred)
    if inferred is None or len(inferred) == 0:
        return tuple(provided)
    if len(provided) != len(inferred) or any(a and b and a != b
                                             for a, b in zip(provided, inferred)):
        raise MXNetError("Error in operator %s: Shape inconsistent, Provided = %s, inferred "
                         "shape=%s" % (node_name, _fmt(provided), _fmt(inferred)))
    return tuple(a or b for a, b in zip(provided, inferred))


def _fmt(shape):
    return '[' + ','.join(str(d) for d in shape) + ']'


class Inferred:
    """Per node: ``shapes[node]`` and ``dtypes[node]``, lists with one entry per output (None
    where unknown; shapes may have 0 for an unknown dimension); ``counts[node]``, the number of
    tensors the kernel returns when it is more than the node's outputs (hidden outputs)."""
    __slots__ = ('shapes', 'dtypes', 'counts', 'revisit')

    def __init__(self):
        self.shapes = {}
        self.dtypes = {}
        self.counts = {}
        self.revisit = False    # an operator's output shape was learned from its consumer

    def shape(self, entry):
        return self.shapes[entry[0]][entry[1]]

    def dtype(self, entry):
        return self.dtypes[entry[0]][entry[1]]


# Binary operators whose inputs and output all have one shape: an unknown input takes the
# known one's shape (MXNet infers backwards through them).
def _same_shape_binary(op):
    name = op.name
    return (op.inputs == ('lhs', 'rhs') and not name.startswith(('broadcast_', '_npi_'))
            and 'dot' not in name and 'like' not in name)


def infer(graph, shapes=None, dtypes=None):
    """Infers every node's output shapes and dtypes from the given variable ``shapes`` and
    ``dtypes`` (by name) and the variables' ``__shape__``/``__dtype__`` attributes; parameter
    shapes are filled by the operators' ``fill`` rules. Unknown stays None (or 0 in a dim);
    inconsistent information raises an error naming the operator."""
    shapes = shapes or {}
    dtypes = dtypes or {}
    res = Inferred()
    S, D = res.shapes, res.dtypes
    _infer_forward(graph, res, shapes, dtypes)
    # Shapes known only downstream (a weight reshaped and concatenated into the packed
    # parameters of RNN) reach their variables backwards; then forward again, as MXNet does.
    for _ in range(4):
        if not _needs_backward(graph, S) or not _infer_backward(graph, S):
            break
        _infer_forward(graph, res, None, None)
    if res.revisit:
        # An output shape a consumer gave is checked against what its operator makes of its
        # inputs, as MXNet infers every operator (V + x where transpose(V) meets x).
        res.revisit = False
        _infer_forward(graph, res, None, None)
    return res


def inline_subgraphs(graph):
    """``graph`` with every ``_CachedOp`` node (``graph.Subgraph``: a recorded block, a
    backend's partition) replaced by its operators, the graph it stands for; ``graph`` itself
    when it has none. Run before a graph is inferred, compiled or run."""
    while any(n.op is CACHED_OP for n in graph.nodes):
        made = {}
        for n in graph.nodes:
            if n.op is None:
                made[id(n)] = [(n, 0)]
            elif n.op is CACHED_OP:
                sub = n.attrs['subgraph']
                entries = {nm: made[id(src)][k] for nm, (src, k) in zip(sub.input_names, n.inputs)}
                made[id(n)] = sub.inline(entries, limit=math.inf)
            else:
                c = n.copy()
                c.inputs = [made[id(src)][k] for src, k in n.inputs]
                made[id(n)] = [(c, i) for i in range(n.num_outputs())]
        graph = Graph.from_heads([made[id(n)][k] for n, k in graph.heads])
    return graph


def infer_stypes(graph, stypes):
    """The storage type of each node's outputs, ``{node: [stype, ...]}``, from those of the
    variables (``stypes``: name -> 'default', 'csr' or 'row_sparse'; 'default' for the
    others), by MXNet's storage-type rules (``ops/sparse.py``). Graphs compute on dense
    tensors; these say which storage type their outputs take."""
    from ..ops.sparse import rule_of
    out = {}
    for node in graph.nodes:
        if node.op is None:
            out[node] = [stypes.get(node.name) or 'default']
            continue
        ins = tuple(out[src][k] for src, k in node.inputs)
        rule = rule_of(node.op.name)
        res = rule(node.attrs, ins) if rule is not None else None
        out[node] = list(res) if res else ['default'] * node.num_outputs()
    return out


def gradient_stypes(graph, stypes):
    """{variable name: storage type of its gradient} where MXNet makes it sparse: a variable
    read by one operator whose gradient for it is sparse (``ops.sparse.GRAD_RULES``:
    Embedding with sparse_grad, SparseEmbedding, dot of a csr matrix). The others' are
    'default'."""
    from ..ops.sparse import GRAD_RULES
    forward = infer_stypes(graph, stypes)
    readers = {}
    for node in graph.nodes:
        for i, (src, _) in enumerate(node.inputs):
            if src.op is None:
                readers.setdefault(src.name, []).append((node, i))
    out = {}
    for name, uses in readers.items():
        if len(uses) != 1:
            continue
        node, i = uses[0]
        rule = GRAD_RULES.get(node.op.name)
        res = rule(node.attrs, [forward[s][k] for s, k in node.inputs]) if rule else None
        if res and i < len(res) and res[i] != 'default':
            out[name] = res[i]
    return out


def _infer_forward(graph, res, shapes, dtypes):
    """The forward sweep; with ``shapes`` None, variables keep what they have."""
    S, D = res.shapes, res.dtypes
    for node in graph.nodes:
        if node.op is None:
            if shapes is None:
                continue
            if '__value__' in node.extra:       # a folded constant
                t = node.extra['__value__'].tensor
                S[node], D[node] = [tuple(t.shape)], [dtype_name(t.dtype)]
                continue
            s = shapes.get(node.name)
            if s is None and '__shape__' in node.extra:     # a given shape overrides it
                s = _parse_shape(node.extra['__shape__'])
            d = dtypes.get(node.name)
            if d is None and '__dtype__' in node.extra:
                d = dtype_name(int(node.extra['__dtype__']))
            S[node] = [None if s is None else tuple(s)]
            D[node] = [None if d is None else dtype_name(d)]
            continue
        _infer_node(node, S, D, res)


def _needs_backward(graph, S):
    return any(not known(s) for n in graph.nodes for s in S[n])


def _infer_backward(graph, S):
    """One backward sweep: what a node knows of its inputs (its ``fill`` rule, or its ``back``
    rule from known output shapes) is merged into the variables it reads and passed on to the
    nodes computing its other inputs. Returns whether a variable learned something."""
    want = {}           # (id(node), output) -> the shape its consumers know
    changed = False
    for node in reversed(graph.nodes):
        op = node.op
        if op is None:
            continue
        if want:
            for k, s in enumerate(S[node]):
                w = want.get((id(node), k))
                if w is not None and _either(node.name, s, w) != s:
                    S[node][k] = _either(node.name, s, w)
                    changed = True
        same = len(node.inputs) == 2 and _same_shape_binary(op)
        unary = len(node.inputs) == 1 and node.num_outputs() == 1
        if op.fill is None and op.back is None and not same and not unary:
            continue
        in_s = [S[src][k] if src.op is None else _either(node.name, S[src][k],
                                                         want.get((id(src), k)))
                for src, k in node.inputs]
        if all(known(s) for s in in_s):
            continue
        _, slots = input_slots(node)
        full = kernel_args(node, in_s)
        if op.fill is not None:
            full = list(op.fill(node.attrs, full))
        outs = S[node]
        if any(o is not None and len(o) for o in outs):
            if op.back is not None:
                full = list(op.back(node.attrs, full, outs))
            elif same:      # the inputs of a same-shape binary operator have its output's shape
                full = [_either(node.name, f, outs[0]) for f in full]
            elif (unary and outs[0] and (not in_s[0] or len(in_s[0]) == len(outs[0]))
                  and _keeps_shape(node, outs[0])):
                # (only for an input of the output's rank: Flatten keeps a 2-d shape, not a
                # 4-d one)
                full = [_either(node.name, f, outs[0]) for f in full]
        for (src, k), pos in zip(node.inputs, slots):
            f = full[pos]
            if f is None or len(f) == 0:
                continue
            if src.op is None:
                merged = _merge(node.name, S[src][k], f)
                if merged != S[src][k]:
                    S[src][k] = merged
                    changed = True
            else:
                want[(id(src), k)] = _either(node.name, want.get((id(src), k)), f)
    return changed


def _keeps_shape(node, shape):
    """Whether one-input ``node`` gives its input's shape back for inputs of ``shape``'s rank
    (Cast, relu, ...): then its input has its output's shape."""
    probes = [tuple(d or 7 for d in shape), tuple((d or 7) + 4 for d in shape)]
    for p in probes:
        try:
            (o,), _ = node.op.infer(node.attrs, (p,), ('float32',))
        except (MXNetError, RuntimeError, ValueError, TypeError, IndexError):
            return False
        if tuple(o) != p:
            return False
    return True


def _either(node_name, a, b):
    """``_merge`` where either side may be None."""
    if a is None:
        return None if b is None else tuple(b)
    if b is None:
        return tuple(a)
    return _merge(node_name, a, b)


def _infer_node(node, S, D, res):
    op = node.op
    ins = node.inputs
    in_s = [S[src][k] for src, k in ins]
    in_d = [D[src][k] for src, k in ins]
    # dtypes: inputs of unknown type take the type of the first known one (the data's)
    first = next((d for d in in_d if d is not None), None)
    if first is not None:
        for i, d in enumerate(in_d):
            if d is None:
                in_d[i] = first
                src, k = ins[i]
                if src.op is None:
                    D[src][k] = first
    # shapes: the operator's fill rule, then backwards through same-shape binary operators
    if op.fill is not None:
        _, slots = input_slots(node)
        filled = op.fill(node.attrs, kernel_args(node, in_s))
        for i, pos in enumerate(slots):
            f = filled[pos]
            if f is not None and len(f) > 0:
                in_s[i] = _merge(node.name, in_s[i], f)
    elif len(ins) == 2 and _same_shape_binary(op):
        a, b = in_s
        if a and b and len(a) == len(b) and not (known(a) and known(b)):
            in_s[0] = in_s[1] = _merge(node.name, a, b)     # what each knows of the shape
        elif known(a) and not known(b):
            in_s[1] = _merge(node.name, b, a)
        elif known(b) and not known(a):
            in_s[0] = _merge(node.name, a, b)
        elif a and not b:       # an input of unknown rank takes what the other knows
            in_s[1] = tuple(a)
        elif b and not a:
            in_s[0] = tuple(b)
    for (src, k), s in zip(ins, in_s):
        if s is None:
            continue
        if src.op is None:
            S[src][k] = s
        elif S[src][k] != s:
            S[src][k] = _either(node.name, S[src][k], s)
            res.revisit = True
    nout = node.num_outputs()
    if 'dtype' in node.attrs and node.attrs['dtype'] is not None:
        dflt = dtype_name(node.attrs['dtype'])
    else:
        dflt = first if ins else 'float32'
    D[node] = [dflt] * nout
    prev = S.get(node)          # from an earlier sweep: what the backward sweep learned
    S[node] = prev if prev is not None else [None] * nout
    if not ins and _unknown_creation(node):
        return
    if not all(known(s) for s in in_s):
        if prev is None:
            partial = _probe(node, in_s, in_d)
            if partial is not None:
                S[node] = partial
        return
    # shapes rarely depend on dtypes: unknown ones are taken as float32 for the shape rule
    full_s = kernel_args(node, in_s)
    full_d = kernel_args(node, [d or 'float32' for d in in_d])
    try:
        out_s, out_d = op.infer(node.attrs, tuple(full_s), tuple(full_d))
    except ShapeError as e:
        raise MXNetError("Error in operator %s: %s; inputs %s"
                         % (node.name, e, ', '.join('%s=%s' % (nm, s) for nm, s in
                                                    zip(node.input_names(), in_s)))) from None
    for (src, k), s in zip(ins, in_s):
        if src.op is not None:
            S[src][k] = _either(node.name, S[src][k], s)
    if len(out_s) > nout:
        res.counts[node] = len(out_s)
    out_s = [tuple(s) for s in out_s][:nout] + [None] * (nout - len(out_s))
    S[node] = out_s if prev is None else [_either(node.name, p, s)
                                          for p, s in zip(prev, out_s)]
    if all(d is not None for d in in_d):
        D[node] = list(out_d)[:nout] + [None] * (nout - len(out_d))


def _probe(node, in_s, in_d):
    """Partial output shapes of a node whose inputs have known ranks but unknown (0)
    dimensions, as MXNet's partial inference gives them: the rule is run with the unknown
    dimensions set to two different sizes, and the output dimensions that differ are unknown
    (0); a result that does not depend on them (a full reduction's (1,)) is known, as in
    MXNet. Rules with a partial form (``_PARTIAL_RULES``) say it themselves. None when that
    cannot be said."""
    if (not in_s or any(s is None or len(s) == 0 for s in in_s)
            or node.op.name in _NEEDS_KNOWN_INPUTS):
        return None
    partial = _PARTIAL_RULES.get(getattr(node.op, '_infer', None))
    if partial is not None:
        try:
            out = partial(node.attrs, in_s, -1 if is_np_shape() else 0)
        except ShapeError as e:
            raise MXNetError("Error in operator %s: %s" % (node.name, e)) from None
        return None if all(known(s) for s in out) else [tuple(s) for s in out]
    full_d = kernel_args(node, [d or 'float32' for d in in_d])
    runs = []
    for size in (7, 11):
        full_s = kernel_args(node, [tuple(x if x > 0 else size for x in s) for s in in_s])
        try:
            out_s, _ = node.op.infer(node.attrs, tuple(full_s), tuple(full_d))
        except (MXNetError, RuntimeError, ValueError, TypeError, IndexError, ZeroDivisionError):
            return None
        runs.append(out_s)
    nout = node.num_outputs()
    a, b = runs
    if len(a) < nout or any(len(x) != len(y) for x, y in zip(a, b)):
        return None
    out = [[x if x == y else 0 for x, y in zip(sa, sb)] for sa, sb in zip(a, b)][:nout]
    if node.op.name in _SLICES:     # an axis cut from an unknown one is unknown (clamped
        for i, d in enumerate(in_s[0]):     # bounds make it look fixed)
            if d <= 0 and i < len(out[0]):
                out[0][i] = 0
    return [tuple(s) for s in out]


_SLICES = ('slice', 'slice_axis')
# Shape rules with a partial form, where a probe giving an unknown dimension one size
# everywhere fails or says too much (it does not broadcast against a known one, it does not
# divide a reshape's known sizes): the form says what is known, as MXNet's rule does.
_PARTIAL_RULES = {broadcast_rule: partial_broadcast_shapes, reshape_rule: partial_reshape_shapes}
# Operators whose output MXNet leaves unknown until every input shape is known.
_NEEDS_KNOWN_INPUTS = ('where',)


def _unknown_creation(node):
    """A creation operator given no shape (outside NumPy shape semantics): its shape is to
    be inferred from its consumers, as MXNet does (``sym.random.randn() + x``)."""
    return (node.op.creation and isinstance(node.attrs.get('shape'), tuple)
            and len(node.attrs['shape']) == 0 and not is_np_shape())


def settle_creation_shapes(graph, inferred):
    """Creation operators given a shape with unknown (0) dimensions (a begin state
    ``zeros((0, hidden))``) take the shape inference found for them: a new graph."""
    subst, nodes = {}, []
    for node in graph.nodes:
        new = node
        op = node.op
        if (op is not None and op.creation and isinstance(node.attrs.get('shape'), tuple) and
                (not known(node.attrs['shape']) or _unknown_creation(node))
                and known(inferred.shapes[node][0])):
            new = node.copy()
            new.attrs['shape'] = tuple(inferred.shapes[node][0])
        ins = [(subst.get(id(src), src), k) for src, k in node.inputs]
        if ins != node.inputs:
            new = new.copy() if new is node else new
            new.inputs = ins
        if new is not node:
            subst[id(node)] = new
        nodes.append(new)
    if not subst:
        return graph
    return Graph(nodes, [(subst.get(id(n), n), k) for n, k in graph.heads])


# -- dead code elimination --------------------------------------------------------------------

def eliminate_dead_code(graph):
    """Keeps the nodes the heads depend on (in the same order)."""
    live = {id(n) for n in Graph.from_heads(graph.heads).nodes}
    return Graph([n for n in graph.nodes if id(n) in live], list(graph.heads))


# -- common subexpression elimination ----------------------------------------------------------

def _attr_key(attrs):
    try:
        key = tuple(sorted(attrs.items()))
        hash(key)
        return key
    except TypeError:
        return None


def eliminate_common_subexpressions(graph):
    """Merges nodes applying one operator with equal attributes to the same inputs. Random
    operators, operators that write their inputs and nodes holding graphs (``held_graphs``:
    control flow, whose operators differ by their graphs; ``_CachedOp``) are never merged."""
    replace = {}        # id(old node) -> node to use instead
    seen = {}
    nodes = []
    for node in graph.nodes:
        new_inputs = [(replace.get(id(src), src), k) for src, k in node.inputs]
        if new_inputs != node.inputs:
            n2 = node.copy()
            n2.inputs = new_inputs
        else:
            n2 = node
        if node.op is not None and not (node.op.rng or node.op.mutate or node.op.creation
                                        or held_graphs(node)):
            akey = _attr_key(node.attrs)
            if akey is not None:
                key = (node.op.name, akey, tuple((id(s), k) for s, k in new_inputs))
                other = seen.get(key)
                if other is not None:
                    replace[id(node)] = other
                    continue
                seen[key] = n2
        if n2 is not node:
            replace[id(node)] = n2
        nodes.append(n2)
    heads = [(replace.get(id(n), n), k) for n, k in graph.heads]
    return Graph(nodes, heads)


# -- constant folding ----------------------------------------------------------------------

class Constant:
    """A tensor computed once when the graph is compiled (a folded subgraph's value)."""
    __slots__ = ('tensor',)

    def __init__(self, tensor):
        self.tensor = tensor


def fold_constants(graph, device=None, is_train=False):
    """Evaluates, once, the nodes that depend on no variable and draw no random numbers
    (``F.ones(shape)``, arithmetic on it); each of their outputs becomes a variable named
    ``_const<i>`` carrying a ``Constant`` in ``extra['__value__']``."""
    values = {}     # id(constant node) -> tensor
    subst = {}      # (id(old node), output) -> (new node, output)
    nodes = []
    for node in graph.nodes:
        ins = [subst.get((id(s), k), (s, k)) for s, k in node.inputs]
        if (node.op is not None and not node.op.rng and not node.op.mutate
                and all(id(s) in values for s, _ in ins)):
            feeds = [Node(None, '_in%d' % i) for i in range(len(ins))]
            sub = Node(node.op, node.name, node.attrs, [(f, 0) for f in feeds])
            g = Graph(feeds + [sub], [(sub, i) for i in range(sub.num_outputs())])
            with torch.no_grad():
                outs = evaluate(g, {f.name: values[id(s)] for f, (s, _) in zip(feeds, ins)},
                                device, is_train)
            for i, v in enumerate(outs):
                c = Node(None, '_const%d' % len(values), extra={'__value__': Constant(v)})
                values[id(c)] = v
                subst[(id(node), i)] = (c, 0)
                nodes.append(c)
            continue
        if ins != node.inputs:
            n2 = node.copy()
            n2.inputs = ins
            for k in range(node.num_outputs()):
                subst[(id(node), k)] = (n2, k)
            node = n2
        nodes.append(node)
    heads = [subst.get((id(n), k), (n, k)) for n, k in graph.heads]
    return eliminate_dead_code(Graph(nodes, heads))


def prepare(graph, input_names, shapes, dtypes, device=None, is_train=False, cse=True,
            name='forward'):
    """(graph, its ``Inferred``): ``graph`` made ready for the code generator, for inputs
    ``input_names`` of ``shapes`` and ``dtypes`` (lists, in that order): subgraphs inlined,
    shapes inferred (each output's must be known; the error names ``name``), creation
    shapes settled, the passes of ``optimize`` run, and shapes inferred again. Under mixed
    precision (``amp.init``) the listed operators read their inputs through ``amp_cast`` /
    ``amp_multicast`` nodes (``amp.with_casts``); those that change no dtype are dropped once
    the dtypes are known, so that the generated code shows the casts that run."""
    graph = amp.with_casts(inline_subgraphs(graph))
    known_shapes = dict(zip(input_names, shapes))
    known_dtypes = dict(zip(input_names, dtypes))
    inferred = infer(graph, known_shapes, known_dtypes)
    for node, k in graph.heads:
        if not known(inferred.shapes[node][k]):
            raise MXNetError("%s: cannot infer the shape of output %s from inputs %s"
                             % (name, node.output_names()[k],
                                ', '.join('%s=%s' % kv for kv in known_shapes.items())))
    graph = settle_creation_shapes(graph, inferred)
    graph = optimize(graph, device, is_train, cse)
    inferred = infer(graph, known_shapes, known_dtypes)
    if amp_table.table is not None:
        graph = amp.drop_noop_casts(graph, inferred)
        inferred = infer(graph, known_shapes, known_dtypes)
    return graph, inferred


def optimize(graph, device=None, is_train=False, cse=True):
    """The passes run on a hybridized graph, in order (common subexpressions merged unless
    ``cse`` is false: MXNet's MXNET_ELIMINATE_COMMON_EXPR=0)."""
    graph = eliminate_dead_code(graph)
    graph = fold_constants(graph, device, is_train)
    return eliminate_common_subexpressions(graph) if cse else graph


def copy_repeated_heads(graph):
    """The graph with each head after the first that repeats an output replaced by a
    ``_copy`` of it, as MXNet keeps every output of a graph a distinct array."""
    from ..ops import registry
    seen, heads, nodes = set(), [], list(graph.nodes)
    for node, k in graph.heads:
        if (id(node), k) in seen:
            copy = Node(registry.get('_copy'), '%s_%d_copy' % (node.name, k), {}, [(node, k)])
            nodes.append(copy)
            heads.append((copy, 0))
        else:
            seen.add((id(node), k))
            heads.append((node, k))
    return Graph(nodes, heads)

