"""Recurrent layers: ``RNN``, ``LSTM`` and ``GRU`` over whole sequences, one fused ``RNN``
operator call each (ATen's fused kernels; cuDNN on GPU).

Parameters are named as in MXNet 1.9 (``lstm0_l0_i2h_weight``, ``lstm0_r1_h2h_bias``, with
``h2r_weight`` for a projection), so ``.params`` files written by MXNet load; they are
flattened and concatenated into the operator's packed vector on each call.

>>> import neomx as mx
>>> layer = mx.gluon.rnn.LSTM(16, num_layers=2, layout='NTC')
>>> layer.initialize()
>>> out, (h, c) = layer(mx.nd.ones((4, 7, 3)), layer.begin_state(batch_size=4))
>>> out.shape, h.shape
((4, 7, 16), (2, 4, 16))
"""
import re

from ... import ndarray, symbol
from ...base import MXNetError
from ...ndarray import NDArray
from ...ndarray.ndarray import in_array_class
from ...ops.rnn import GATES, rnn_param_layout
from ...symbol import Symbol
from ..block import HybridBlock
from . import rnn_cell

__all__ = ['RNN', 'LSTM', 'GRU']

_PARAM = re.compile(r'(l|r)(\d+)_(i2h|h2h|h2r)_(weight|bias)\Z')


class _RNNLayer(HybridBlock):
    """What RNN, LSTM and GRU share (see their docstrings)."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        if layout not in ('TNC', 'NTC'):
            raise MXNetError("Invalid layout %s; must be one of ['TNC' or 'NTC']" % layout)
        self._hidden_size = hidden_size
        self._projection_size = projection_size or None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self._gates = GATES[mode]
        self.skip_states = None
        self._traced_skip = None
        self._layout_names = [n for n, _ in rnn_param_layout(
            mode, input_size, hidden_size, num_layers, bidirectional, self._projection_size)]
        shapes = dict(rnn_param_layout(mode, input_size, hidden_size, num_layers,
                                       bidirectional, self._projection_size))
        inits = {'i2h_weight': i2h_weight_initializer, 'h2h_weight': h2h_weight_initializer,
                 'i2h_bias': i2h_bias_initializer, 'h2h_bias': h2h_bias_initializer,
                 'h2r_weight': h2r_weight_initializer}
        # registered in MXNet's order: per layer and direction i2h, h2h weights, biases, h2r
        for layer in range(num_layers):
            for d in 'lr'[:self._dir]:
                for kind in ('i2h_weight', 'h2h_weight', 'i2h_bias', 'h2h_bias', 'h2r_weight'):
                    name = '%s%d_%s' % (d, layer, kind)
                    if name in shapes:
                        p = self.params.get(name, shape=shapes[name], init=inits[kind],
                                            allow_deferred_init=True, dtype=dtype)
                        setattr(self, name, p)

    def __repr__(self):
        shape = self.l0_i2h_weight.shape
        s = '%s(%s -> %d, %s' % (type(self).__name__, shape[1] or None,
                                 shape[0] // self._gates, self._layout)
        if self._num_layers != 1:
            s += ', num_layers=%d' % self._num_layers
        if self._dropout != 0:
            s += ', dropout=%s' % self._dropout
        if self._dir == 2:
            s += ', bidirectional'
        return s + ')'

    def _collect_params_with_prefix(self, prefix=''):
        """Structural names as MXNet 1.9 writes them for a fused layer (those of the stack of
        cells ``_unfuse`` gives): ``_unfused.0.i2h_weight``, bidirectional
        ``_unfused.0.l_cell.i2h_weight``."""
        if prefix:
            prefix += '.'
        bidirectional = self._dir == 2
        out = {}
        for key, val in self._reg_params.items():
            d, layer, g, t = _PARAM.match(key).groups()
            name = ('_unfused.%s.%s_cell.%s_%s' % (layer, d, g, t) if bidirectional
                    else '_unfused.%s.%s_%s' % (layer, g, t))
            out[prefix + name] = val
        for name, child in self._children.items():
            out.update(child._collect_params_with_prefix(prefix + name))
        return out

    def state_info(self, batch_size=0):
        raise NotImplementedError

    def _unfuse(self):
        """The layer as a HybridSequentialRNNCell of cells sharing its parameters (without
        projection or state clipping)."""
        if self._projection_size:
            raise MXNetError("_unfuse does not support a projection layer")
        if self._lstm_state_clip_min or self._lstm_state_clip_max:
            raise MXNetError("_unfuse does not support state clipping")

        def cell(**kwargs):
            if self._mode.startswith('rnn_'):
                return rnn_cell.RNNCell(self._hidden_size, activation=self._mode[4:], **kwargs)
            kind = rnn_cell.LSTMCell if self._mode == 'lstm' else rnn_cell.GRUCell
            return kind(self._hidden_size, **kwargs)

        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kwargs = {'input_size': ni,
                          'i2h_weight_initializer': self._i2h_weight_initializer,
                          'h2h_weight_initializer': self._h2h_weight_initializer,
                          'i2h_bias_initializer': self._i2h_bias_initializer,
                          'h2h_bias_initializer': self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(cell(prefix='l%d_' % i, **kwargs),
                                                         cell(prefix='r%d_' % i, **kwargs)))
                else:
                    stack.add(cell(prefix='l%d_' % i, **kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = self._hidden_size * self._dir
        return stack

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """The initial states made by ``func`` (``nd.zeros``, ``sym.zeros``, ``sym.var``,
        ...), named ``<prefix>h0_<i>``; ``kwargs`` go to ``func`` (``ctx``, ``dtype``)."""
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            info = dict(info or {}, **kwargs)
            states.append(func(name='%sh0_%d' % (self.prefix, i), **info))
        return in_array_class(states)      # mx.np.ndarray under NumPy semantics

    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        """``layer(inputs)`` gives the outputs; ``layer(inputs, states)`` gives ``(outputs,
        new_states)``; ``sequence_length`` (batch,) with ``use_sequence_length``."""
        self.skip_states = states is None
        if self._traced_skip is not None and self._traced_skip != self.skip_states:
            self._clear_cached_op()     # the outputs differ: trace again
        self._traced_skip = self.skip_states
        if states is None:
            if isinstance(inputs, NDArray):
                batch_size = inputs.shape[self._layout.find('N')]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=symbol.zeros)
        if isinstance(states, (NDArray, Symbol)):
            states = [states]
        if self._use_sequence_length:
            if sequence_length is None:
                raise MXNetError("%s: use_sequence_length=True needs the sequence_length "
                                 "argument" % self.name)
            return super().__call__(inputs, states, sequence_length, **kwargs)
        return super().__call__(inputs, states, **kwargs)

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **kwargs):
        if F is ndarray:
            batch_size = inputs.shape[self._layout.find('N')]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info['shape']:
                    raise ValueError("Invalid recurrent state shape. Expecting %s, got %s."
                                     % (str(info['shape']), str(state.shape)))
        out = self._forward_kernel(F, inputs, states, sequence_length, **kwargs)
        return out[0] if self.skip_states else out

    def _forward_kernel(self, F, inputs, states, sequence_length, **kwargs):
        if self._layout == 'NTC':
            inputs = F.swapaxes(inputs, 0, 1)
        params = F._internal._rnn_param_concat(
            *[kwargs[name].reshape(-1) for name in self._layout_names], dim=0)
        args = dict(zip(('state', 'state_cell'), states))
        if self._use_sequence_length:
            args['sequence_length'] = sequence_length
        rnn = F.RNN(inputs, params, **args, use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, projection_size=self._projection_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2,
                    p=self._dropout, state_outputs=True, mode=self._mode,
                    lstm_state_clip_min=self._lstm_state_clip_min,
                    lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        outputs, states = rnn[0], list(rnn[1:])
        if self._layout == 'NTC':
            outputs = F.swapaxes(outputs, 0, 1)
        return outputs, states


class RNN(_RNNLayer):
    r"""A multi-layer Elman RNN with tanh or ReLU, over whole sequences:
    ``h_t = activation(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` in each layer.

    Parameters
    ----------
    hidden_size : int
    num_layers : int, default 1
    activation : {'relu', 'tanh'}, default 'relu'
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
        Dropout on the outputs of each layer but the last (in training).
    bidirectional : bool, default False
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    input_size : int, default 0 (inferred from the first input)
    dtype : str, default 'float32'

    Inputs: ``data`` (sequence, batch, input) for 'TNC'; ``states`` (optional) of shape
    (num_layers * directions, batch, hidden). Outputs: ``out`` (sequence, batch, directions *
    hidden) and, when states were given, the new states.

    >>> import neomx as mx
    >>> layer = mx.gluon.rnn.RNN(100, 3)
    >>> layer.initialize()
    >>> layer(mx.nd.random.uniform(shape=(5, 3, 10))).shape
    (5, 3, 100)
    """

    def __init__(self, hidden_size, num_layers=1, activation='relu', layout='TNC', dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 dtype='float32', **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, 'rnn_' + activation, None, None, None, None,
                         False, dtype, **kwargs)

    def state_info(self, batch_size=0):
        return [{'shape': (self._num_layers * self._dir, batch_size, self._hidden_size),
                 '__layout__': 'LNC', 'dtype': self._dtype}]


class LSTM(_RNNLayer):
    r"""A multi-layer long short-term memory network over whole sequences (gates as in
    ``LSTMCell``).

    Parameters
    ----------
    hidden_size : int
    num_layers : int, default 1
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
        Dropout on the outputs of each layer but the last (in training).
    bidirectional : bool, default False
    input_size : int, default 0 (inferred from the first input)
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    projection_size : int, optional
        Projects each layer's output h to this size (LSTMP); the hidden state has it too.
    h2r_weight_initializer : Initializer or str
    state_clip_min, state_clip_max : float, optional
        Clip the cell state to this range at every step (both or neither).
    state_clip_nan : bool, default False
        A NaN cell state becomes ``state_clip_min``.
    dtype : str, default 'float32'

    Inputs: ``data``; ``states`` (optional), [h, c] each (num_layers * directions, batch,
    hidden) (h: projection_size). Outputs: ``out`` and, when states were given, [h, c].

    >>> import neomx as mx
    >>> layer = mx.gluon.rnn.LSTM(100, 3)
    >>> layer.initialize()
    >>> h0 = mx.nd.zeros((3, 3, 100))
    >>> out, (h, c) = layer(mx.nd.random.uniform(shape=(5, 3, 10)), [h0, h0])
    >>> out.shape, c.shape
    ((5, 3, 100), (3, 3, 100))
    """

    def __init__(self, hidden_size, num_layers=1, layout='TNC', dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype='float32', **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, 'lstm', projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size=0):
        n = self._num_layers * self._dir
        return [{'shape': (n, batch_size, self._projection_size or self._hidden_size),
                 '__layout__': 'LNC', 'dtype': self._dtype},
                {'shape': (n, batch_size, self._hidden_size), '__layout__': 'LNC',
                 'dtype': self._dtype}]


class GRU(_RNNLayer):
    r"""A multi-layer gated recurrent unit network over whole sequences (cuDNN's variant, as
    ``GRUCell``).

    Parameters
    ----------
    hidden_size : int
    num_layers : int, default 1
    layout : {'TNC', 'NTC'}, default 'TNC'
    dropout : float, default 0
    bidirectional : bool, default False
    input_size : int, default 0 (inferred from the first input)
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    dtype : str, default 'float32'

    >>> import neomx as mx
    >>> layer = mx.gluon.rnn.GRU(100, 3)
    >>> layer.initialize()
    >>> layer(mx.nd.random.uniform(shape=(5, 3, 10))).shape
    (5, 3, 100)
    """

    def __init__(self, hidden_size, num_layers=1, layout='TNC', dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', dtype='float32',
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, 'gru', None, None, None, None, False, dtype,
                         **kwargs)

    def state_info(self, batch_size=0):
        return [{'shape': (self._num_layers * self._dir, batch_size, self._hidden_size),
                 '__layout__': 'LNC', 'dtype': self._dtype}]


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from ...util import is_np_array  # noqa: E402,F401
tensor_types = (Symbol, NDArray)
