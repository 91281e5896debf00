"""MXNet's SVRG optimization: ``SVRGModule`` (stochastic variance reduced gradients over the
Module API) and the optimizers behind it."""
from . import svrg_module, svrg_optimizer  # noqa: F401
from .svrg_module import SVRGModule  # noqa: F401
