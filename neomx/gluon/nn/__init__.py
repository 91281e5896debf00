"""Gluon's neural-network layers (``gluon.nn``)."""
from .activations import *  # noqa: F401,F403
from .basic_layers import *  # noqa: F401,F403
from .conv_layers import *  # noqa: F401,F403
from ..block import Block, HybridBlock  # noqa: F401
from ..symbol_block import SymbolBlock  # noqa: F401
