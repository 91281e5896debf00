"""Recurrent cells: one time step of a recurrent network, and ``unroll`` over a sequence.

A cell is called as ``output, new_states = cell(x_t, states)`` on NDArrays (or Symbols when a
parent block is traced); ``unroll(length, inputs, begin_state, layout, merge_outputs,
valid_length)`` steps it over a whole sequence, given as one array (``layout`` 'NTC' or 'TNC')
or as a list of steps. Parameter and node names follow MXNet 1.9 (``lstm0_i2h_weight``, the
output of step 2 of cell ``rnn_`` is ``rnn_t2_out``), so symbols and ``.params`` files match.

>>> import neomx as mx
>>> cell = mx.gluon.rnn.LSTMCell(8, input_size=4)
>>> cell.initialize()
>>> out, states = cell.unroll(5, mx.nd.ones((2, 5, 4)), layout='NTC', merge_outputs=True)
>>> out.shape, [s.shape for s in states]
((2, 5, 8), [(2, 8), (2, 8)])
"""
from ... import ndarray, symbol
from ...base import MXNetError, numeric_types
from ...ndarray import NDArray
from ...ndarray.ndarray import in_array_class
from ...symbol import Symbol
from ..block import Block, HybridBlock
from ..utils import _indent

__all__ = ['RecurrentCell', 'HybridRecurrentCell', 'RNNCell', 'LSTMCell', 'GRUCell',
           'SequentialRNNCell', 'HybridSequentialRNNCell', 'DropoutCell', 'ModifierCell',
           'ZoneoutCell', 'ResidualCell', 'BidirectionalCell']

_TENSORS = (NDArray, Symbol)


def _steps(x, n):
    """A split into a list even for one step (split gives a single array then)."""
    return list(x) if isinstance(x, (list, tuple)) else [x] if n == 1 else list(x)


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """``(inputs, time axis, F, batch size)``: ``inputs`` (one array or a list of steps) as a
    list of steps (``merge`` False), one array with time on ``layout``'s axis (True), or as
    they are (None). The batch size is 0 for Symbols."""
    if inputs is None:
        raise MXNetError("unroll: inputs=None is no longer supported; create the input "
                         "variables outside unroll")
    axis, batch_axis = layout.find('T'), layout.find('N')
    in_axis = axis if in_layout is None else in_layout.find('T')
    batch_size = 0
    if isinstance(inputs, Symbol):
        F = symbol
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise MXNetError("unroll does not take a grouped symbol as input: convert it "
                                 "to a list with list(inputs), or give one symbol to split")
            inputs = _steps(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                         squeeze_axis=1), length)
    elif isinstance(inputs, NDArray):
        F = ndarray
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            steps = inputs.shape[in_axis]
            if length is not None and length != steps:
                raise MXNetError("unroll: length=%d but the inputs have %d steps along axis "
                                 "%d (shape %s)" % (length, steps, in_axis, inputs.shape))
            inputs = _steps(ndarray.split(inputs, axis=in_axis, num_outputs=steps,
                                          squeeze_axis=1), steps)
    else:
        if length is not None and len(inputs) != length:
            raise MXNetError("unroll: length=%d but %d input steps were given"
                             % (length, len(inputs)))
        F = symbol if isinstance(inputs[0], Symbol) else ndarray
        if F is ndarray:
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, _TENSORS) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _mask_sequence_variable_length(F, data, length, valid_length, time_axis, merge):
    """Zeroes the steps of each sequence past its valid length."""
    if not isinstance(data, _TENSORS):
        data = F.stack(*data, axis=time_axis)
    out = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                         axis=time_axis)
    if not merge:
        out = _steps(F.split(out, num_outputs=length, axis=time_axis, squeeze_axis=True),
                     length)
    return out


def _reverse_sequences(sequences, unroll_step, valid_length=None):
    """The list of steps reversed; with ``valid_length`` each sequence is reversed within its
    own length (its padding stays at the end)."""
    if valid_length is None:
        return list(reversed(sequences))
    F = symbol if isinstance(sequences[0], Symbol) else ndarray
    rev = F.SequenceReverse(F.stack(*sequences, axis=0), sequence_length=valid_length,
                            use_sequence_length=True)
    return _steps(F.split(rev, axis=0, num_outputs=unroll_step, squeeze_axis=True),
                  unroll_step)


def _get_begin_state(cell, F, begin_state, inputs, batch_size):
    """``begin_state`` or, when None, zeros on the inputs' device."""
    if begin_state is not None:
        return begin_state
    if F is ndarray:
        ctx = inputs.context if isinstance(inputs, NDArray) else inputs[0].context
        with ctx:
            return cell.begin_state(func=F.zeros, batch_size=batch_size)
    return cell.begin_state(func=F.zeros, batch_size=batch_size)


def _cells_state_info(cells, batch_size):
    return [info for c in cells for info in c.state_info(batch_size)]


def _cells_begin_state(cells, **kwargs):
    return [s for c in cells for s in c.begin_state(**kwargs)]


def _check_unmodified(cell):
    if cell._modified:
        raise MXNetError("%s is wrapped by a modifier cell (ZoneoutCell, ResidualCell, ...): "
                         "call the modifier cell instead" % cell.name)


class RecurrentCell(Block):
    """The base class of recurrent cells.

    Parameters
    ----------
    prefix : str
        Prefix of the names of the cell's parameters and symbols.
    params : ParameterDict or None
        Parameters to share with another cell.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Resets the step counters before the cell is used for another sequence."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            if isinstance(cell, RecurrentCell):
                cell.reset()

    def state_info(self, batch_size=0):
        """The shapes (``{'shape': ..., '__layout__': ...}``) of the cell's states."""
        raise NotImplementedError()

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """The initial states made by ``func`` (``nd.zeros``, ``sym.zeros``, ``sym.var``,
        ...), named ``<prefix>begin_state_<i>``; ``kwargs`` go to ``func`` (``dtype``,
        ``ctx``, ...)."""
        _check_unmodified(self)
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info or {}, **kwargs)
            states.append(func(name='%sbegin_state_%d' % (self._prefix, self._init_counter),
                               **info))
        return in_array_class(states)      # mx.np.ndarray under NumPy semantics

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """Steps the cell over ``length`` steps of ``inputs``.

        Parameters
        ----------
        length : int
        inputs : NDArray, Symbol or list of them
            One array with time along ``layout``'s 'T' axis, or a list of steps (batch, ...).
        begin_state : list, optional
            The initial states (default: ``begin_state()``, zeros).
        layout : {'NTC', 'TNC'}
        merge_outputs : bool or None
            True: one array of outputs (time on ``layout``'s axis); False: a list of steps;
            None: whichever is at hand.
        valid_length : NDArray or Symbol (batch,), optional
            Each sequence's length: the outputs past it are 0 and the states returned are
            those of its last valid step.

        Returns
        -------
        outputs, states
        """
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        outputs, history = [], []
        for i in range(length):
            out, states = self(inputs[i], states)
            outputs.append(out)
            if valid_length is not None:
                history.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*steps, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for steps in zip(*history)]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        """``activation`` applied to ``inputs``: a name ('tanh', 'relu', 'sigmoid',
        'softsign' or any Activation act_type), a LeakyReLU block, or a callable."""
        from ..nn import LeakyReLU
        if activation in ('tanh', 'relu', 'sigmoid', 'softsign'):
            return getattr(F, activation)(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return F.LeakyReLU(inputs, act_type='leaky', slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        """One step: ``(output, new_states)``."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell whose step is a ``hybrid_forward``: it can be hybridized."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


class _GatedCell(HybridRecurrentCell):
    """What RNNCell, LSTMCell and GRUCell share: the i2h/h2h weights and biases of ``gates``
    stacked gates, and the ``-> hidden`` repr."""
    _gates = 1
    _states = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        n = self._gates * hidden_size
        for name, shape, init in (
                ('i2h_weight', (n, input_size), i2h_weight_initializer),
                ('h2h_weight', (n, hidden_size), h2h_weight_initializer),
                ('i2h_bias', (n,), i2h_bias_initializer),
                ('h2h_bias', (n,), h2h_bias_initializer)):
            setattr(self, name, self.params.get(name, shape=shape, init=init,
                                                allow_deferred_init=True))

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}
                for _ in range(self._states)]

    def __repr__(self):
        shape = self.i2h_weight.shape
        extra = ', %s' % self._activation if type(self) is RNNCell else ''
        return '%s(%s -> %d%s)' % (type(self).__name__, shape[1] or None, shape[0], extra)

    def _projections(self, F, inputs, h, i2h_weight, h2h_weight, i2h_bias, h2h_bias, prefix):
        n = self._gates * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n,
                               name=prefix + 'i2h')
        h2h = F.FullyConnected(data=h, weight=h2h_weight, bias=h2h_bias, num_hidden=n,
                               name=prefix + 'h2h')
        return i2h, h2h


class RNNCell(_GatedCell):
    r"""An Elman cell: ``h_t = activation(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``.

    Parameters
    ----------
    hidden_size : int
    activation : str or callable, default 'tanh'
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    input_size : int, default 0 (inferred from the first input)
    prefix : str, default 'rnn<i>_'
    params : ParameterDict or None
    """

    def __init__(self, hidden_size, activation='tanh', i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer='zeros',
                 h2h_bias_initializer='zeros', input_size=0, prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation

    def _alias(self):
        return 'rnn'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = 't%d_' % self._counter
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias, prefix)
        out = self._get_activation(F, F.elemwise_add(i2h, h2h, name=prefix + 'plus0'),
                                   self._activation, name=prefix + 'out')
        return out, [out]


class LSTMCell(_GatedCell):
    r"""A long short-term memory cell (gates in cuDNN's order: input, forget, cell, output):

    ``i, f, o = recurrent_activation(.)``, ``g = activation(.)`` of ``W_i x + b_i + W_h h +
    b_h``; ``c_t = f * c_{t-1} + i * g``; ``h_t = o * activation(c_t)``. States: [h, c].

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    input_size : int, default 0 (inferred)
    prefix : str, default 'lstm<i>_'
    params : ParameterDict or None
    activation : str, default 'tanh'
    recurrent_activation : str, default 'sigmoid'
    """
    _gates = 4
    _states = 2

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 prefix=None, params=None, activation='tanh', recurrent_activation='sigmoid'):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def _alias(self):
        return 'lstm'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = 't%d_' % self._counter
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias, prefix)
        gates = F.SliceChannel(F.elemwise_add(i2h, h2h, name=prefix + 'plus0'),
                               num_outputs=4, name=prefix + 'slice')
        act, rec = self._activation, self._recurrent_activation
        i = self._get_activation(F, gates[0], rec, name=prefix + 'i')
        f = self._get_activation(F, gates[1], rec, name=prefix + 'f')
        g = self._get_activation(F, gates[2], act, name=prefix + 'c')
        o = self._get_activation(F, gates[3], rec, name=prefix + 'o')
        c = F.elemwise_add(F.elemwise_mul(f, states[1], name=prefix + 'mul0'),
                           F.elemwise_mul(i, g, name=prefix + 'mul1'), name=prefix + 'state')
        h = F.elemwise_mul(o, F.Activation(c, act_type=act, name=prefix + 'activation0'),
                           name=prefix + 'out')
        return h, [h, c]


class GRUCell(_GatedCell):
    r"""A gated recurrent unit, cuDNN's variant (the reset gate applies after the product):

    ``r, z = sigmoid(W_i x + b_i + W_h h + b_h)`` (their parts); ``n = tanh(W_in x + b_in +
    r * (W_hn h + b_hn))``; ``h_t = (1 - z) * n + z * h_{t-1}``.

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    input_size : int, default 0 (inferred)
    prefix : str, default 'gru<i>_'
    params : ParameterDict or None
    """
    _gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def _alias(self):
        return 'gru'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = 't%d_' % self._counter
        h = states[0]
        i2h, h2h = self._projections(F, inputs, h, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                                     prefix)
        i_r, i_z, i_n = F.SliceChannel(i2h, num_outputs=3, name=prefix + 'i2h_slice')
        h_r, h_z, h_n = F.SliceChannel(h2h, num_outputs=3, name=prefix + 'h2h_slice')
        r = F.Activation(F.elemwise_add(i_r, h_r, name=prefix + 'plus0'), act_type='sigmoid',
                         name=prefix + 'r_act')
        z = F.Activation(F.elemwise_add(i_z, h_z, name=prefix + 'plus1'), act_type='sigmoid',
                         name=prefix + 'z_act')
        n = F.Activation(F.elemwise_add(i_n, F.elemwise_mul(r, h_n, name=prefix + 'mul0'),
                                        name=prefix + 'plus2'),
                         act_type='tanh', name=prefix + 'h_act')
        keep = F.elemwise_sub(F.ones_like(z, name=prefix + 'ones_like0'), z,
                              name=prefix + 'minus0')
        out = F.elemwise_add(F.elemwise_mul(keep, n, name=prefix + 'mul1'),
                             F.elemwise_mul(z, h, name=prefix + 'mul20'), name=prefix + 'out')
        return out, [out]


class _Stack:
    """SequentialRNNCell and HybridSequentialRNNCell: cells stacked, each one's output the
    next one's input; the states are the cells' states one after the other."""

    def __repr__(self):
        return '%s(\n%s\n)' % (type(self).__name__, '\n'.join(
            '(%s): %s' % (i, _indent(repr(m), 2)) for i, m in self._children.items()))

    def add(self, cell):
        """Appends ``cell`` to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        _check_unmodified(self)
        return _cells_begin_state(self._children.values(), **kwargs)

    def _split_states(self, states):
        """The slice of ``states`` of each child, in order."""
        pos = 0
        for cell in self._children.values():
            n = len(cell.state_info())
            yield cell, states[pos:pos + n]
            pos += n

    def __call__(self, inputs, states):
        self._counter += 1
        new_states = []
        for cell, own in self._split_states(states):
            if isinstance(cell, BidirectionalCell):
                raise MXNetError("%s: a BidirectionalCell cannot be stepped; use unroll"
                                 % type(self).__name__)
            inputs, own = cell(inputs, own)
            new_states.extend(own)
        return inputs, new_states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        last = len(self._children) - 1
        new_states = []
        for i, (cell, own) in enumerate(self._split_states(begin_state)):
            inputs, own = cell.unroll(length, inputs=inputs, begin_state=own, layout=layout,
                                      merge_outputs=merge_outputs if i == last else None,
                                      valid_length=valid_length)
            new_states.extend(own)
        return inputs, new_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)


class SequentialRNNCell(_Stack, RecurrentCell):
    """Cells stacked one on another (any cells; see HybridSequentialRNNCell to hybridize).

    >>> import neomx as mx
    >>> stack = mx.gluon.rnn.SequentialRNNCell()
    >>> stack.add(mx.gluon.rnn.LSTMCell(4, input_size=3))
    >>> stack.add(mx.gluon.rnn.GRUCell(5, input_size=4))
    >>> stack.initialize()
    >>> out, states = stack.unroll(2, mx.nd.ones((6, 2, 3)), merge_outputs=True)
    >>> out.shape, len(states)
    ((6, 2, 5), 3)
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, *args, **kwargs):
        raise NotImplementedError


class HybridSequentialRNNCell(_Stack, HybridRecurrentCell):
    """Hybrid cells stacked one on another; hybridizable."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def __call__(self, inputs, states):
        return _Stack.__call__(self, inputs, states)

    def hybrid_forward(self, F, inputs, states):
        return self.__call__(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the inputs (in training); no states.

    Parameters
    ----------
    rate : float
        The fraction of elements dropped.
    axes : tuple of int, default ()
        Axes along which one mask value is shared.
    """

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if not isinstance(rate, numeric_types):
            raise MXNetError("DropoutCell: rate must be a number, got %r" % (rate,))
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return '%s(rate=%s, axes=%s)' % (type(self).__name__, self._rate, self._axes)

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return 'dropout'

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes,
                               name='t%d_fwd' % self._counter)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, _TENSORS):      # the whole sequence at once
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """The base class of cells that modify another (``base_cell``), which must then be used
    only through the modifier. The parameters are the base cell's."""

    def __init__(self, base_cell):
        if base_cell._modified:
            raise MXNetError("Cell %s is already modified. One cell cannot be modified twice"
                             % base_cell.name)
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=symbol.zeros, **kwargs):
        _check_unmodified(self)
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError

    def __repr__(self):
        return '%s(%r)' % (type(self).__name__, self.base_cell)


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al. 2016): in training, each output and state element keeps its
    previous value with probability ``zoneout_outputs`` / ``zoneout_states``."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, BidirectionalCell):
            raise MXNetError("ZoneoutCell: a BidirectionalCell cannot be stepped; wrap the "
                             "cells inside it instead")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return '%s(p_out=%s, p_state=%s, %r)' % (type(self).__name__, self.zoneout_outputs,
                                                 self.zoneout_states, self.base_cell)

    def _alias(self):
        return 'zoneout'

    def reset(self):
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        new_output, new_states = self.base_cell(inputs, states)

        def keep_new(p, like):      # 1 where the new value is taken (everywhere outside training)
            return F.Dropout(F.ones_like(like), p=p)
        prev = self._prev_output if self._prev_output is not None else F.zeros_like(new_output)
        output = new_output
        if self.zoneout_outputs != 0.:
            output = F.where(keep_new(self.zoneout_outputs, new_output), new_output, prev)
        if self.zoneout_states != 0.:
            new_states = [F.where(keep_new(self.zoneout_states, new), new, old)
                          for new, old in zip(new_states, states)]
        self._prev_output = output
        return output, new_states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (Wu et al. 2016)."""

    def __init__(self, base_cell):
        super().__init__(base_cell)

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        return F.elemwise_add(output, inputs, name='t%d_fwd' % self._counter), states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        merge = isinstance(outputs, _TENSORS) if merge_outputs is None else merge_outputs
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, axis, merge)
        if merge:
            return F.elemwise_add(outputs, inputs), states
        return [F.elemwise_add(o, i) for o, i in zip(outputs, inputs)], states


class BidirectionalCell(HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward over the sequence and concatenates
    their outputs (only ``unroll``: it cannot be stepped).

    Parameters
    ----------
    l_cell, r_cell : RecurrentCell
    output_prefix : str, default 'bi_'
        Prefix of the output symbols' names.
    """

    def __init__(self, l_cell, r_cell, output_prefix='bi_'):
        super().__init__(prefix='', params=None)
        self.register_child(l_cell, 'l_cell')
        self.register_child(r_cell, 'r_cell')
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise MXNetError("BidirectionalCell cannot be stepped; use unroll")

    def __repr__(self):
        return '%s(forward=%r, backward=%r)' % (type(self).__name__, self._children['l_cell'],
                                                self._children['r_cell'])

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        _check_unmodified(self)
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = _reverse_sequences(inputs, length, valid_length)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        l_cell, r_cell = self._children.values()
        n_l = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_l],
                                            layout=layout, merge_outputs=merge_outputs,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                            begin_state=states[n_l:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, _TENSORS)
            l_outputs, _, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
            r_outputs, _, _, _ = _format_sequence(None, r_outputs, layout, merge_outputs)
        if merge_outputs:
            if not isinstance(r_outputs, _TENSORS):
                r_outputs = F.stack(*r_outputs, axis=axis)
            outputs = F.concat(l_outputs, r_outputs, dim=2, name='%sout' % self._output_prefix)
        else:
            outputs = [F.concat(l, r, dim=1, name='%st%d' % (self._output_prefix, i))
                       for i, (l, r) in enumerate(zip(l_outputs, r_outputs))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, l_states + r_states


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from ...base import _as_list, string_types  # noqa: E402,F401
from ..nn.activations import LeakyReLU  # noqa: E402,F401
tensor_types = (Symbol, NDArray)
