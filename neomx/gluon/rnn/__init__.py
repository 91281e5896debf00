"""Recurrent neural networks: cells (one step, ``unroll`` over a sequence) and the fused
layers RNN, LSTM and GRU."""
from .rnn_cell import *  # noqa: F401,F403
from .rnn_layer import *  # noqa: F401,F403
