"""``mx.contrib.sym``: the contrib operators (``mx.sym.contrib``)."""
from ..symbol import contrib as _contrib


def __getattr__(name):
    return getattr(_contrib, name)
