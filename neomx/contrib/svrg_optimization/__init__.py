"""MXNet's SVRG optimization (``SVRGModule``, stochastic variance reduced gradients over the
Module API): not implemented in neomx; making an ``SVRGModule`` raises an error saying so."""
from . import svrg_module, svrg_optimizer  # noqa: F401
