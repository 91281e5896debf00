"""``mx.rnn``: MXNet 1.x's symbolic recurrent cells, checkpoint helpers for them, and the
bucketing sentence iterator (see ``rnn_cell``, ``rnn``, ``io``)."""
from . import rnn_cell, rnn, io
from .rnn_cell import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .io import *  # noqa: F401,F403
