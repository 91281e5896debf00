"""``mx.nd``: the imperative array API. Every registered operator is here as ``nd.<name>``."""
from . import ndarray as _ndarray_mod
from . import fastpath  # noqa: F401  (installs the fast path of tiny operations)
from .ndarray import NDArray, waitall
from .creation import *  # noqa: F401,F403
from .creation import __all__ as _creation_all
from . import random
from .gen import make_namespace as _make_namespace
from .indexing import getitem as _getitem  # noqa: F401  (registers the indexing operators)
from .utils import save, load, load_frombuffer
from . import contrib, linalg, sparse  # noqa: F401
from .sparse import CSRNDArray, RowSparseNDArray  # noqa: F401
from . import image  # noqa: F401
from . import _internal  # noqa: F401
from . import custom  # noqa: F401  (registers Custom)

_make_namespace(globals())
_make_namespace(_ndarray_mod._OP_FUNCS, include_hidden=True)
from .fluent import add_fluent_methods as _add_fluent  # noqa: E402

_add_fluent(NDArray)
cast_storage = sparse.cast_storage
dot = sparse.dense_or_sparse_dot(dot)  # noqa: F821  (made by _make_namespace)


# nd.CachedOp, nd.np and nd.npx (MXNet's names: F.np in a hybrid_forward called on arrays) are
# added by the layers that define them (neomx.symbol, neomx.numpy, neomx.numpy_extension).

__all__ = ['NDArray', 'waitall', 'random', 'save', 'load', 'load_frombuffer'] + list(_creation_all)
