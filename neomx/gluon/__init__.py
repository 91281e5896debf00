"""Gluon: blocks, parameters, layers, losses, the Trainer, data loading and the model zoo."""
from .parameter import *  # noqa: F401,F403
from .block import *  # noqa: F401,F403
from . import nn, loss, utils  # noqa: F401
from .symbol_block import SymbolBlock  # noqa: F401
from .trainer import *  # noqa: F401,F403
from . import data, model_zoo, rnn, contrib  # noqa: F401
