"""Gluon: blocks, parameters, layers, losses, the Trainer, data loading and the model zoo.

The modules written alongside this package are imported when they are present.
"""
from importlib.util import find_spec as _find_spec

from .parameter import *  # noqa: F401,F403
from .block import *  # noqa: F401,F403
from . import nn, loss, utils  # noqa: F401

if _find_spec(__name__ + '.symbol_block') is not None:
    from .symbol_block import SymbolBlock  # noqa: F401
if _find_spec(__name__ + '.trainer') is not None:
    from .trainer import *  # noqa: F401,F403
if _find_spec(__name__ + '.data') is not None:
    from . import data  # noqa: F401
if _find_spec(__name__ + '.model_zoo') is not None:
    from . import model_zoo  # noqa: F401
if _find_spec(__name__ + '.rnn') is not None:
    from . import rnn  # noqa: F401
if _find_spec(__name__ + '.contrib') is not None:
    from . import contrib  # noqa: F401
