"""``mx.contrib.nd``: the contrib operators (``mx.nd.contrib``)."""
from ..ndarray.contrib import *  # noqa: F401,F403
from ..ndarray import contrib as _contrib


def __getattr__(name):
    return getattr(_contrib, name)
