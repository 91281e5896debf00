"""Contrib layers: concurrent containers, identity, sparse embedding, synchronized batch
normalisation and pixel shuffling."""
from . import basic_layers
from .basic_layers import *  # noqa: F401,F403

__all__ = basic_layers.__all__
