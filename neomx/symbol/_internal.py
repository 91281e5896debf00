"""``sym._internal``: every operator, hidden ones included (``_plus_scalar``, ``_Plus``)."""
from .subgraph import cached_op as _CachedOp  # noqa: F401 (a graph as one node)
from .symbol import make_namespace as _make_namespace

_make_namespace(globals(), include_hidden=True)
