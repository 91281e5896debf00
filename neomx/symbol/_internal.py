"""``sym._internal``: every operator, hidden ones included (``_plus_scalar``, ``_Plus``)."""
from .symbol import make_namespace as _make_namespace

_make_namespace(globals(), include_hidden=True)
