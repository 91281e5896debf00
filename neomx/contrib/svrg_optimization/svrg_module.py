"""``SVRGModule``: not implemented in neomx; making one raises MXNetError. Train with
``mx.mod.Module`` or a Gluon ``Trainer`` instead."""
import logging  # noqa: F401
import time  # noqa: F401

from ...base import MXNetError
from ...module import Module


class SVRGModule(Module):
    """MXNet's Module trained with SVRG (full gradients every ``update_freq`` epochs): not
    implemented in neomx."""

    def __init__(self, *args, **kwargs):  # pylint: disable=super-init-not-called
        raise MXNetError("mx.contrib.svrg_optimization.SVRGModule: SVRG training is not "
                         "implemented in neomx; train with mx.mod.Module or a Gluon Trainer")

import neomx as mx  # noqa: E402,F401  (MXNet's module holds ``mx``)
