"""``mx.nd._internal``: every registered operator, the hidden ones (``_plus_scalar``,
``_copyto`` ...) included, as MXNet 1.9 exposes them."""
from .gen import make_namespace as _make_namespace

_make_namespace(globals(), include_hidden=True)
