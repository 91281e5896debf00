"""The recorded computation of an array as a Symbol: ``autograd.get_symbol`` (defined here,
where Symbols are, and installed in ``neomx.autograd`` by ``neomx.symbol``)."""
import weakref

from ..base import MXNetError
from .graph import CACHED_OP, Graph, Node, cached_op_node
from .symbol import Symbol

__all__ = ['get_symbol']


def get_symbol(x):
    """The recorded computation of ``x`` as a Symbol: each operator recorded since the marked
    variables, which become variables ``var0``, ``var1``, ... (arrays outside the graph become
    variables too, as in MXNet).

    >>> import neomx as mx
    >>> x = mx.nd.ones((1,))
    >>> x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = x * x + 1
    >>> mx.autograd.get_symbol(y).list_arguments()
    ['var0']
    """
    made, calls = {}, {}

    def entry(a):
        v = a._var
        key = (id(v), a._view, a._shape)
        if key in made:
            return made[key]
        recipe = v.recipe if v.leaves else None
        if v.leaves and a._view is not None and v.parents is not None:
            raise MXNetError("autograd.get_symbol: the recorded graph reads a view (a slice or "
                             "reshape) of a computed array, which a Symbol cannot express")
        if recipe is None:
            if v.leaves and v.parents is not None:
                raise MXNetError("autograd.get_symbol: the recorded graph holds an "
                                 "autograd.Function, which has no Symbol")
            e = (Node(None, 'var' if v.leaves and weakref.ref(v) in v.leaves else 'null'), 0)
        else:
            op, attrs, inputs, k = recipe
            if op is CACHED_OP:
                e = subgraph(attrs['subgraph'], inputs)[k]
            else:
                node = Node(op, 'node', attrs)
                node.inputs = [entry(i) for i in inputs if i is not None]
                e = (node, k)
        made[key] = e
        return e

    def subgraph(sub, inputs):
        """A hybridized block's call: its operators inlined, or one _CachedOp node."""
        heads = calls.get(id(inputs))
        if heads is None:
            entries = dict(zip(sub.input_names, (entry(i) for i in inputs)))
            heads = sub.inline(entries)
            if heads is None:
                node = cached_op_node(sub, 'node', [entries[n] for n in sub.input_names])
                heads = [(node, j) for j in range(node.num_outputs())]
            calls[id(inputs)] = heads
        return heads

    if not x._var.leaves:
        raise MXNetError("autograd.get_symbol: the array is not in a computational graph (it "
                         "was not computed from marked variables inside autograd.record())")
    head = entry(x)
    n_vars = n_ops = 0
    for node in Graph.from_heads([head]).nodes:     # numbered in MXNet's order
        if node.op is None:
            node.name += str(n_vars)
            n_vars += 1
        else:
            node.name = 'node_%d' % n_ops
            n_ops += 1
    return Symbol([head])
