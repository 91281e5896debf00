"""Deferred compute: a graph recorded from operators as they run.

While ``mode.tracing`` holds a ``Trace``, every operator pushed through ``invoke`` runs as
usual and is also recorded as a graph node whose inputs are the nodes that produced its
input arrays. A Gluon block written in the Gluon 2 style (``forward(self, x)`` with
``mx.np`` / ``mx.npx`` calls, or ``hybrid_forward`` on ``mx.np.ndarray``) is hybridized this
way: one run on real inputs gives the same graph IR as tracing ``hybrid_forward`` with
Symbols, and from there the same passes, code generation, CachedOp and ``export``.

Arrays met in the trace that no recorded operator produced are the block's inputs (added
with ``add_input``), its parameters (found by ``resolve``), or constants captured from
outside, which become constant nodes holding their current value.

>>> import neomx as mx
>>> from neomx.base import mode
>>> from neomx.symbol.deferred import Trace
>>> x = mx.np.ones((2,))
>>> t = Trace()
>>> t.add_input(x, 'data')
>>> mode.tracing = t
>>> y = mx.np.exp(x) * 2
>>> mode.tracing = None
>>> t.symbol([y]).list_arguments()
['data']
"""
from ..base import MXNetError
from . import name as _name
from .graph import Node
from .passes import Constant
from .symbol import Symbol

__all__ = ['Trace', 'NullTrace']


def _engine_wait(array):
    from .. import engine
    engine.wait_for_var(array._var)


class NullTrace:
    """A trace that records nothing: a block whose graph depends on values runs its
    ``forward`` imperatively with this as ``mode.tracing`` (children skip their compiled
    graphs too)."""
    values_read = False
    functional = False      # writes into out= happen, as outside a trace

    def record(self, op, inputs, attrs, result):
        pass

    def alias(self, array, other):
        pass


class Trace:
    """The recording of one deferred-compute run (see the module docstring).

    ``resolve(array)`` (optional) names an array that is none of the recorded ones: it
    returns a variable name (a parameter's) or None for a constant."""

    functional = True       # a write into out= records a new value (see ndarray._traced)

    def __init__(self, resolve=None):
        self.entries = {}       # id(array) -> (node, output index)
        self.keep = []          # arrays seen: alive until the trace ends, so ids stay unique
        self.resolve = resolve
        self.variables = {}     # name -> variable node
        self.by_storage = {}    # (id(storage Var), view offset, shape) -> entry
        self.constants = 0
        # Set when the run read array values (asnumpy, item, a boolean index, np.unique...):
        # then the graph may hold only for these values, and the block runs imperatively.
        self.values_read = False

    def add_input(self, array, name):
        """Marks ``array`` as the graph input ``name``."""
        node = self.variables.get(name)
        if node is None:
            node = self.variables[name] = Node(None, name)
        self._add(array, (node, 0))

    def _add(self, array, entry):
        self.entries[id(array)] = entry
        self.by_storage[(id(array._var), array._view, array._shape)] = entry
        self.keep.append(array)

    def entry(self, array):
        """The graph entry that stands for ``array``."""
        e = self.entries.get(id(array))
        if e is not None:
            return e
        # Another object over the same storage and shape (as_nd_ndarray, as_np_ndarray)
        e = self.by_storage.get((id(array._var), array._view, array._shape))
        if e is not None:
            self.entries[id(array)] = e
            self.keep.append(array)
            return e
        name = self.resolve(array) if self.resolve is not None else None
        if name is not None:
            self.add_input(array, name)
            return self.entries[id(array)]
        # A constant captured from outside the block: its value now, baked into the graph.
        _engine_wait(array)
        node = Node(None, '_dc_const%d' % self.constants,
                    extra={'__value__': Constant(array._tensor().detach().clone())})
        self.constants += 1
        self._add(array, (node, 0))
        return self.entries[id(array)]

    def record(self, op, inputs, attrs, result):
        """Adds the application of ``op`` to ``inputs`` (arrays, None for absent optional
        ones) giving ``result`` (an array or a list of them)."""
        entries = [self.entry(x) for x in inputs if x is not None]
        name = _name.current().get(None, op.name.lower().lstrip('_') or op.name)
        node = Node(op, name, dict(attrs), entries)
        outs = result if isinstance(result, (list, tuple)) else [result]
        for k, o in enumerate(outs):
            self._add(o, (node, k))

    def alias(self, array, other):
        """From here on, ``array`` stands for the value ``other`` has (a write into it)."""
        e = self.entries.get(id(other))
        if e is not None:
            self._add(array, e)

    def symbol(self, outputs):
        """The Symbol of the recorded graph with ``outputs`` (arrays) as its heads."""
        heads = []
        for o in outputs:
            if id(o) not in self.entries:
                raise MXNetError("deferred compute: an output of the block was not computed by "
                                 "neomx operators from its inputs (got a %s of shape %s)"
                                 % (type(o).__name__, getattr(o, 'shape', '?')))
            heads.append(self.entries[id(o)])
        return Symbol(heads)
