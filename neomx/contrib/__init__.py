"""``mx.contrib``: MXNet's experimental namespaces (``contrib.nd``/``contrib.sym`` operators,
``contrib.amp``)."""
from ..ndarray import contrib as ndarray
from ..ndarray import contrib as nd
from ..symbol import contrib as symbol
from ..symbol import contrib as sym
from . import amp

__all__ = ['ndarray', 'nd', 'symbol', 'sym', 'amp']
