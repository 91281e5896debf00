"""Contrib recurrent cells: variational dropout and the projected LSTM cell.

>>> import neomx as mx
>>> cell = mx.gluon.contrib.rnn.LSTMPCell(8, 4, input_size=3)
>>> cell.initialize()
>>> out, (r, c) = cell(mx.nd.ones((2, 3)), cell.begin_state(batch_size=2))
>>> out.shape, c.shape
((2, 4), (2, 8))
"""
from ...rnn.rnn_cell import (_TENSORS, BidirectionalCell, HybridRecurrentCell, ModifierCell,
                             _format_sequence, _get_begin_state,
                             _mask_sequence_variable_length)
from ....base import MXNetError

__all__ = ['VariationalDropoutCell', 'LSTMPCell', 'dynamic_unroll']


class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal and Ghahramani 2016) around ``base_cell``: one dropout mask
    per sequence, shared by all its steps, for the inputs, the first state (h) and the
    outputs, each with its own rate. The masks are drawn at the first step and kept until
    ``reset()`` (``unroll`` resets).

    Parameters
    ----------
    base_cell : RecurrentCell
    drop_inputs, drop_states, drop_outputs : float, default 0
    """

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        if drop_states and isinstance(base_cell, BidirectionalCell):
            raise MXNetError("VariationalDropoutCell: a BidirectionalCell does not support "
                             "state dropout; wrap the cells inside it instead")
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _alias(self):
        return 'vardrop'

    def reset(self):
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    @staticmethod
    def _mask(F, like, p):
        return F.Dropout(F.ones_like(like), p=p)

    def hybrid_forward(self, F, inputs, states):
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = self._mask(F, states[0], self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = self._mask(F, inputs, self.drop_inputs)
        if self.drop_states:        # only h, always the first state
            states = [states[0] * self.drop_states_mask] + list(states[1:])
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        output, states = self.base_cell(inputs, states)
        if self.drop_outputs:
            if self.drop_outputs_mask is None:
                self.drop_outputs_mask = self._mask(F, output, self.drop_outputs)
            output = output * self.drop_outputs_mask
        return output, states

    def __repr__(self):
        return '%s(p_out = %s, p_state = %s)' % (type(self).__name__, self.drop_outputs,
                                                 self.drop_states)

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None,
               valid_length=None):
        """As ``RecurrentCell.unroll``; without state dropout the input and output masks are
        applied to the whole sequence at once (one Dropout sharing its mask along time)."""
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length=valid_length)
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        outputs, states = self.base_cell.unroll(length, inputs, states, layout,
                                                merge_outputs=True, valid_length=valid_length)
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        merge = isinstance(outputs, _TENSORS) if merge_outputs is None else merge_outputs
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge)
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge)
        return outputs, states


class LSTMPCell(HybridRecurrentCell):
    r"""A long short-term memory cell with a projection (Sak et al. 2014): the LSTM's h is
    projected to ``r_t = W_hr h_t`` (``projection_size``), which is the output and the
    recurrent state. States: [r (projection_size), c (hidden_size)].

    Parameters
    ----------
    hidden_size : int
    projection_size : int
    i2h_weight_initializer, h2h_weight_initializer, h2r_weight_initializer : Initializer
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    input_size : int, default 0 (inferred)
    prefix : str, default 'lstmp<i>_'
    params : ParameterDict or None
    """

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', input_size=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._projection_size = projection_size
        n = 4 * hidden_size
        for name, shape, init in (
                ('i2h_weight', (n, input_size), i2h_weight_initializer),
                ('h2h_weight', (n, projection_size), h2h_weight_initializer),
                ('h2r_weight', (projection_size, hidden_size), h2r_weight_initializer),
                ('i2h_bias', (n,), i2h_bias_initializer),
                ('h2h_bias', (n,), h2h_bias_initializer)):
            setattr(self, name, self.params.get(name, shape=shape, init=init,
                                                allow_deferred_init=True))

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size, self._projection_size), '__layout__': 'NC'},
                {'shape': (batch_size, self._hidden_size), '__layout__': 'NC'}]

    def _alias(self):
        return 'lstmp'

    def __repr__(self):
        shape = self.i2h_weight.shape
        return '%s(%s -> %d -> %d)' % (type(self).__name__, shape[1] or None, shape[0],
                                       self.h2r_weight.shape[0])

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias,
                       h2h_bias):
        prefix = 't%d_' % self._counter
        n = 4 * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n,
                               name=prefix + 'i2h')
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias, num_hidden=n,
                               name=prefix + 'h2h')
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, name=prefix + 'slice')
        i = F.Activation(gates[0], act_type='sigmoid', name=prefix + 'i')
        f = F.Activation(gates[1], act_type='sigmoid', name=prefix + 'f')
        g = F.Activation(gates[2], act_type='tanh', name=prefix + 'c')
        o = F.Activation(gates[3], act_type='sigmoid', name=prefix + 'o')
        c = F.elemwise_add(f * states[1], i * g, name=prefix + 'state')
        h = F.elemwise_mul(o, F.Activation(c, act_type='tanh'), name=prefix + 'hidden')
        r = F.FullyConnected(data=h, num_hidden=self._projection_size, weight=h2r_weight,
                             no_bias=True, name=prefix + 'out')
        return r, [r, c]


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout='TNC',
                   valid_length=None):
    """Runs ``cell`` over the sequence ``inputs`` (an array or Symbol in ``layout``, 'TNC' or
    'NTC') from ``begin_state`` as one ``foreach`` loop (hybridized: one graph node, whatever
    the sequence length); returns ``(outputs, states)`` as ``cell.unroll(...,
    merge_outputs=True)`` does: outputs past a sequence's ``valid_length`` are zero and the
    states are those of its last valid step. ``drop_inputs`` / ``drop_outputs`` apply dropout
    to the inputs and outputs, one mask for every step."""
    from .... import ndarray, symbol
    if layout not in ('TNC', 'NTC'):
        raise MXNetError("dynamic_unroll: layout must be 'TNC' or 'NTC', got %r" % (layout,))
    axis = layout.find('T')
    F = symbol if isinstance(inputs, symbol.Symbol) or (
        isinstance(inputs, (list, tuple)) and isinstance(inputs[0], symbol.Symbol)) else ndarray
    if isinstance(inputs, (list, tuple)):
        inputs = F.stack(*inputs, axis=axis)
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(axis,))
    if axis:
        inputs = F.swapaxes(inputs, dim1=0, dim2=axis)      # steps along axis 0
    states = list(begin_state)
    if valid_length is None:
        body = cell
    else:
        states.append(F.zeros((1,)))        # the step's number

        def body(x, carried):
            old, step = carried[:-1], carried[-1]
            out, new = cell(x, old)
            live = F.broadcast_greater(valid_length, step)
            return out, [F.where(live, n, o) for n, o in zip(new, old)] + [step + 1]
    outputs, states = F.contrib.foreach(body, inputs, states)
    if valid_length is not None:
        outputs = F.SequenceMask(outputs, sequence_length=valid_length,
                                 use_sequence_length=True, axis=0)
        states = states[:-1]
    if axis:
        outputs = F.swapaxes(outputs, dim1=0, dim2=axis)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(axis,))
    return outputs, states


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from ....base import _as_list  # noqa: E402,F401
from ...rnn.rnn_cell import SequentialRNNCell, tensor_types  # noqa: E402,F401
