"""The optimizers behind ``SVRGModule``: not implemented in neomx (see ``svrg_module``)."""
import neomx as mx  # noqa: F401  (MXNet's module holds ``mx``)
