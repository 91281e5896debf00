"""The symbolic recurrent cells of MXNet 1.x's ``mx.rnn`` (before Gluon).

A cell builds Symbols: ``output, states = cell(x_t, states)`` for one step and
``cell.unroll(length, inputs)`` for a sequence; its weights are variables in an ``RNNParams``
container, named ``<prefix>i2h_weight`` and so on, shared between cells by passing the
container. ``FusedRNNCell`` is the fused ``RNN`` operator with its packed parameter vector;
``unpack_weights``/``pack_weights`` convert between that vector (or a cell's stacked gates)
and one array per gate, and ``unfuse()`` gives the equivalent stack of cells.

>>> import neomx as mx
>>> cell = mx.rnn.LSTMCell(10, prefix='lstm_')
>>> outputs, states = cell.unroll(3, mx.sym.var('data'), merge_outputs=True)
>>> outputs.infer_shape(data=(2, 3, 4))[1]
[(2, 3, 10)]
"""
import functools
import warnings

from .. import initializer as init
from .. import ndarray, symbol
from ..base import MXNetError, numeric_types

__all__ = ['RNNParams', 'BaseRNNCell', 'RNNCell', 'LSTMCell', 'GRUCell', 'FusedRNNCell',
           'SequentialRNNCell', 'DropoutCell', 'ModifierCell', 'ZoneoutCell', 'ResidualCell',
           'BidirectionalCell', 'BaseConvRNNCell', 'ConvRNNCell', 'ConvLSTMCell',
           'ConvGRUCell']


def _cells_state_info(cells):
    return [info for c in cells for info in c.state_info]


def _cells_begin_state(cells, **kwargs):
    return [s for c in cells for s in c.begin_state(**kwargs)]


def _cells_unpack_weights(cells, args):
    for cell in cells:
        args = cell.unpack_weights(args)
    return args


def _cells_pack_weights(cells, args):
    for cell in cells:
        args = cell.pack_weights(args)
    return args


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """``(inputs, time axis)``: a list of step Symbols (``merge`` False), one Symbol with time
    on ``layout``'s axis (True) or as given (None)."""
    if inputs is None:
        raise MXNetError("unroll(inputs=None) is no longer supported; create the input "
                         "variables outside unroll")
    axis = layout.find('T')
    in_axis = axis if in_layout is None else in_layout.find('T')
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise MXNetError("unroll does not take a grouped symbol as input: convert it "
                                 "to a list with list(inputs), or give one symbol to split")
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1)) if length > 1 else [
                symbol.split(inputs, axis=in_axis, num_outputs=1, squeeze_axis=1)]
    else:
        if length is not None and len(inputs) != length:
            raise MXNetError("unroll: length=%d but %d input steps were given"
                             % (length, len(inputs)))
        if merge is True:
            inputs = symbol.Concat(*[symbol.expand_dims(i, axis=axis) for i in inputs],
                                   dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


class RNNParams:
    """A container of the weight variables of cells, for sharing them: ``get(name)`` makes
    the variable ``prefix + name`` once.

    Parameters
    ----------
    prefix : str
    """

    def __init__(self, prefix=''):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``, created with ``kwargs`` (``init=``, ``shape=``,
        ...) the first time."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """The base class of the symbolic cells.

    Parameters
    ----------
    prefix : str
        Prefix of the names of the cell's variables and nodes.
    params : RNNParams or None
        A container to share weights with other cells.
    """

    def __init__(self, prefix='', params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Resets the step counters before the cell builds another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, '_cells', ()):
            cell.reset()

    def __call__(self, inputs, states):
        """One step: ``(output, new states)``."""
        raise NotImplementedError()

    @property
    def params(self):
        """The cell's RNNParams (handed out: the cell no longer owns it alone)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """``[{'shape': ..., '__layout__': ...}]`` per state (0 for the unknown batch)."""
        raise NotImplementedError()

    @property
    def state_shape(self):
        return [info['shape'] for info in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def begin_state(self, func=symbol.zeros, **kwargs):
        """The initial states, made by ``func`` (``sym.zeros``, ``sym.var``, ...) and named
        ``<prefix>begin_state_<i>``."""
        if self._modified:
            raise MXNetError("After applying modifier cells (e.g. DropoutCell) the base cell "
                             "cannot be called directly. Call the modifier cell instead.")
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name='%sbegin_state_%d' % (self._prefix, self._init_counter),
                               **kwargs))
        return states

    def unpack_weights(self, args):
        """``args`` (name -> NDArray) with the cell's stacked gate weights and biases split
        into one array per gate (``<prefix>i2h_f_weight``, ...)."""
        args = args.copy()
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ('i2h', 'h2h'):
            for kind in ('weight', 'bias'):
                whole = args.pop('%s%s_%s' % (self._prefix, group, kind))
                for j, gate in enumerate(self._gate_names):
                    args['%s%s%s_%s' % (self._prefix, group, gate, kind)] = \
                        whole[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The inverse of ``unpack_weights``."""
        args = args.copy()
        if not self._gate_names:
            return args
        for group in ('i2h', 'h2h'):
            for kind in ('weight', 'bias'):
                parts = [args.pop('%s%s%s_%s' % (self._prefix, group, gate, kind))
                         for gate in self._gate_names]
                args['%s%s_%s' % (self._prefix, group, kind)] = ndarray.concat(*parts, dim=0)
        return args

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        """Steps the cell over ``length`` steps of ``inputs`` (one Symbol with time on
        ``layout``'s axis, or a list of steps); returns ``(outputs, states)``, the outputs one
        Symbol (``merge_outputs``) or a list."""
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for i in range(length):
            out, states = self(inputs[i], states)
            outputs.append(out)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


class RNNCell(BaseRNNCell):
    """An Elman cell: ``activation(W_ih x + b_ih + W_hh h + b_hh)``.

    Parameters
    ----------
    num_hidden : int
    activation : str or callable, default 'tanh'
    prefix : str, default 'rnn_'
    params : RNNParams or None
    """

    def __init__(self, num_hidden, activation='tanh', prefix='rnn_', params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._activation = activation
        self._iW = self.params.get('i2h_weight')
        self._iB = self.params.get('i2h_bias')
        self._hW = self.params.get('h2h_weight')
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return [{'shape': (0, self._num_hidden), '__layout__': 'NC'}]

    @property
    def _gate_names(self):
        return ('',)

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden, name='%si2h' % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden, name='%sh2h' % name)
        out = self._get_activation(i2h + h2h, self._activation, name='%sout' % name)
        return out, [out]


class LSTMCell(BaseRNNCell):
    """A long short-term memory cell (gates i, f, c, o); the forget gate's i2h bias starts at
    ``forget_bias``.

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'lstm_'
    params : RNNParams or None
    forget_bias : float, default 1.0
    """

    def __init__(self, num_hidden, prefix='lstm_', params=None, forget_bias=1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get('i2h_weight')
        self._hW = self.params.get('h2h_weight')
        self._iB = self.params.get('i2h_bias', init=init.LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return [{'shape': (0, self._num_hidden), '__layout__': 'NC'},
                {'shape': (0, self._num_hidden), '__layout__': 'NC'}]

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        n = self._num_hidden * 4
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=n,
                                    name='%si2h' % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=n, name='%sh2h' % name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name='%sslice' % name)
        i = symbol.Activation(gates[0], act_type='sigmoid', name='%si' % name)
        f = symbol.Activation(gates[1], act_type='sigmoid', name='%sf' % name)
        g = symbol.Activation(gates[2], act_type='tanh', name='%sc' % name)
        o = symbol.Activation(gates[3], act_type='sigmoid', name='%so' % name)
        c = symbol._internal._plus(f * states[1], i * g, name='%sstate' % name)
        h = symbol._internal._mul(o, symbol.Activation(c, act_type='tanh'), name='%sout' % name)
        return h, [h, c]


class GRUCell(BaseRNNCell):
    """A gated recurrent unit, cuDNN's variant (gates r, z, o).

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'gru_'
    params : RNNParams or None
    """

    def __init__(self, num_hidden, prefix='gru_', params=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get('i2h_weight')
        self._iB = self.params.get('i2h_bias')
        self._hW = self.params.get('h2h_weight')
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return [{'shape': (0, self._num_hidden), '__layout__': 'NC'}]

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        h = states[0]
        n = self._num_hidden * 3
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB, num_hidden=n,
                                    name='%s_i2h' % name)
        h2h = symbol.FullyConnected(data=h, weight=self._hW, bias=self._hB, num_hidden=n,
                                    name='%s_h2h' % name)
        i_r, i_z, i_n = symbol.SliceChannel(i2h, num_outputs=3, name='%s_i2h_slice' % name)
        h_r, h_z, h_n = symbol.SliceChannel(h2h, num_outputs=3, name='%s_h2h_slice' % name)
        r = symbol.Activation(i_r + h_r, act_type='sigmoid', name='%s_r_act' % name)
        z = symbol.Activation(i_z + h_z, act_type='sigmoid', name='%s_z_act' % name)
        cand = symbol.Activation(i_n + r * h_n, act_type='tanh', name='%s_h_act' % name)
        out = symbol._internal._plus((1. - z) * cand, z * h, name='%sout' % name)
        return out, [out]


class FusedRNNCell(BaseRNNCell):
    """Layers of recurrent cells in one fused ``RNN`` operator over the whole sequence (it
    cannot be stepped); its weights are one packed vector ``<prefix>parameters``.

    Parameters
    ----------
    num_hidden : int
    num_layers : int, default 1
    mode : {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'}, default 'lstm'
    bidirectional : bool, default False
    dropout : float, default 0
        Dropout on the outputs of each layer but the last (in training).
    get_next_state : bool, default False
        Whether ``unroll`` returns the final states.
    forget_bias : float, default 1.0
        Added to the forget gates' biases at initialisation (LSTM).
    prefix : str, default '<mode>_'
    params : RNNParams or None
    """

    def __init__(self, num_hidden, num_layers=1, mode='lstm', bidirectional=False,
                 dropout=0., get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        if prefix is None:
            prefix = '%s_' % mode
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ['l', 'r'] if bidirectional else ['l']
        initializer = init.FusedRNN(None, num_hidden, num_layers, mode, bidirectional,
                                    forget_bias)
        self._parameter = self.params.get('parameters', init=initializer)

    @property
    def state_info(self):
        b = len(self._directions)
        n = 2 if self._mode == 'lstm' else 1
        return [{'shape': (b * self._num_layers, 0, self._num_hidden), '__layout__': 'LNC'}
                for _ in range(n)]

    @property
    def _gate_names(self):
        return init.FUSED_RNN_GATES[self._mode]

    def _layout(self, size):
        """``[(name, shape)]`` of the per-gate pieces in a packed vector of ``size`` elements."""
        return init.fused_rnn_layout(self._prefix, self._mode, self._num_hidden,
                                     self._num_layers, self._bidirectional, size)

    def unpack_weights(self, args):
        args = args.copy()
        arr = args.pop(self._parameter.name)
        flat = arr.reshape((-1,))
        pos = 0
        for name, shape in self._layout(arr.size):
            n = shape[0] * (shape[1] if len(shape) > 1 else 1)
            args[name] = flat[pos:pos + n].reshape(shape).copy()
            pos += n
        return args

    def pack_weights(self, args):
        args = args.copy()
        w0 = args['%sl0_i2h%s_weight' % (self._prefix, self._gate_names[0])]
        b, m = len(self._directions), len(self._gate_names)
        h, L = self._num_hidden, self._num_layers
        size = b * m * h * (w0.shape[1] + h + 2) + (L - 1) * b * m * h * (b * h + h + 2)
        layout = self._layout(size)
        args[self._parameter.name] = ndarray.concat(
            *[args.pop(name).reshape((-1,)) for name, _ in layout], dim=0)
        return args

    def __call__(self, inputs, states):
        raise MXNetError("FusedRNNCell cannot be stepped. Please use unroll")

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for "
                          "faster speed")
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise MXNetError("FusedRNNCell: unsupported layout %s" % layout)
        states = self.begin_state() if begin_state is None else begin_state
        kwargs = {'state': states[0]}
        if self._mode == 'lstm':
            kwargs['state_cell'] = states[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional,
                         p=self._dropout, state_outputs=self._get_next_state, mode=self._mode,
                         name=self._prefix + 'rnn', **kwargs)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            n = 2 if self._mode == 'lstm' else 1
            outputs, states = rnn[0], [rnn[i] for i in range(1, n + 1)]
            for s in states:
                s._set_attr(__layout__='LNC')
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The same network as a SequentialRNNCell of cells (with DropoutCells between the
        layers), named so that ``unpack_weights`` fits it."""
        def cell(prefix):
            if self._mode.startswith('rnn_'):
                return RNNCell(self._num_hidden, activation=self._mode[4:], prefix=prefix)
            kind = LSTMCell if self._mode == 'lstm' else GRUCell
            return kind(self._num_hidden, prefix=prefix)

        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(cell('%sl%d_' % (self._prefix, i)),
                                            cell('%sr%d_' % (self._prefix, i)),
                                            output_prefix='%sbi_l%d_' % (self._prefix, i)))
            else:
                stack.add(cell('%sl%d_' % (self._prefix, i)))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix='%s_dropout%d_' % (self._prefix, i)))
        return stack


class SequentialRNNCell(BaseRNNCell):
    """Cells stacked one on another.

    Parameters
    ----------
    params : RNNParams or None
        Shared by every cell added (then the cells must not have their own).
    """

    def __init__(self, params=None):
        super().__init__(prefix='', params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Appends ``cell``; its output is the next cell's input."""
        self._cells.append(cell)
        if self._override_cell_params:
            if not cell._own_params:
                raise MXNetError("Either specify params for SequentialRNNCell or child cells, "
                                 "not both.")
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        if self._modified:
            raise MXNetError("After applying modifier cells (e.g. ZoneoutCell) the base cell "
                             "cannot be called directly. Call the modifier cell instead.")
        return _cells_begin_state(self._cells, **kwargs)

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def _split(self, states):
        pos = 0
        for cell in self._cells:
            n = len(cell.state_info)
            yield cell, states[pos:pos + n]
            pos += n

    def __call__(self, inputs, states):
        self._counter += 1
        new_states = []
        for cell, own in self._split(states):
            if isinstance(cell, BidirectionalCell):
                raise MXNetError("SequentialRNNCell: a BidirectionalCell cannot be stepped; "
                                 "use unroll")
            inputs, own = cell(inputs, own)
            new_states.extend(own)
        return inputs, new_states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        states = self.begin_state() if begin_state is None else begin_state
        last = len(self._cells) - 1
        new_states = []
        for i, (cell, own) in enumerate(self._split(states)):
            inputs, own = cell.unroll(length, inputs=inputs, begin_state=own, layout=layout,
                                      merge_outputs=merge_outputs if i == last else None)
            new_states.extend(own)
        return inputs, new_states


class DropoutCell(BaseRNNCell):
    """Dropout on the inputs; no states.

    Parameters
    ----------
    dropout : float
    prefix : str, default 'dropout_'
    params : RNNParams or None
    """

    def __init__(self, dropout, prefix='dropout_', params=None):
        super().__init__(prefix, params)
        if not isinstance(dropout, numeric_types):
            raise MXNetError("DropoutCell: dropout must be a number, got %r" % (dropout,))
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """The base class of cells modifying another (``base_cell``), which must then be used
    only through the modifier; the parameters are the base cell's."""

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):
        if self._modified:
            raise MXNetError("After applying modifier cells (e.g. DropoutCell) the base cell "
                             "cannot be called directly. Call the modifier cell instead.")
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(init_sym, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError


class ZoneoutCell(ModifierCell):
    """Zoneout on ``base_cell``: in training, each output and state element keeps its
    previous value with probability ``zoneout_outputs`` / ``zoneout_states``."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, (FusedRNNCell, BidirectionalCell)):
            raise MXNetError("ZoneoutCell: %s cannot be stepped; unfuse it or wrap the cells "
                             "inside it instead" % type(base_cell).__name__)
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        new_output, new_states = self.base_cell(inputs, states)

        def keep_new(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)
        prev = self.prev_output if self.prev_output is not None else symbol.zeros((0, 0))
        output = new_output
        if self.zoneout_outputs != 0.:
            output = symbol.where(keep_new(self.zoneout_outputs, new_output), new_output, prev)
        if self.zoneout_states != 0.:
            new_states = [symbol.where(keep_new(self.zoneout_states, new), new, old)
                          for new, old in zip(new_states, states)]
        self.prev_output = output
        return output, new_states


class ResidualCell(ModifierCell):
    """Adds the input to ``base_cell``'s output (Wu et al. 2016)."""

    def __init__(self, base_cell):
        super().__init__(base_cell)

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        return symbol.elemwise_add(output, inputs, name='%s_plus_residual' % output.name), states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        merge = isinstance(outputs, symbol.Symbol) if merge_outputs is None else merge_outputs
        inputs, _ = _normalize_sequence(length, inputs, layout, merge)
        if merge:
            return symbol.elemwise_add(outputs, inputs,
                                       name='%s_plus_residual' % outputs.name), states
        return [symbol.elemwise_add(o, i, name='%s_plus_residual' % o.name)
                for o, i in zip(outputs, inputs)], states


class BidirectionalCell(BaseRNNCell):
    """``l_cell`` forward and ``r_cell`` backward over the sequence, outputs concatenated
    (only ``unroll``). The states returned are ``[l_states, r_states]``.

    Parameters
    ----------
    l_cell, r_cell : BaseRNNCell
    params : RNNParams or None
    output_prefix : str, default 'bi_'
    """

    def __init__(self, l_cell, r_cell, params=None, output_prefix='bi_'):
        super().__init__('', params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            if not (l_cell._own_params and r_cell._own_params):
                raise MXNetError("Either specify params for BidirectionalCell or child cells, "
                                 "not both.")
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        raise MXNetError("Bidirectional cannot be stepped. Please use unroll")

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):
        if self._modified:
            raise MXNetError("After applying modifier cells (e.g. DropoutCell) the base cell "
                             "cannot be called directly. Call the modifier cell instead.")
        return _cells_begin_state(self._cells, **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        l_cell, r_cell = self._cells
        n_l = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_l],
                                            layout=layout, merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=states[n_l:], layout=layout,
                                            merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = (isinstance(l_outputs, symbol.Symbol) and
                             isinstance(r_outputs, symbol.Symbol))
            if not merge_outputs:
                l_outputs = self._as_steps(l_outputs, axis, length)
                r_outputs = self._as_steps(r_outputs, axis, length)
        if merge_outputs:
            return symbol.Concat(l_outputs, symbol.reverse(r_outputs, axis=axis), dim=2,
                                 name='%sout' % self._output_prefix), [l_states, r_states]
        outputs = [symbol.Concat(l_o, r_o, dim=1, name='%st%d' % (self._output_prefix, i))
                   for i, (l_o, r_o) in enumerate(zip(l_outputs, reversed(r_outputs)))]
        return outputs, [l_states, r_states]

    @staticmethod
    def _as_steps(outputs, axis, length):
        if isinstance(outputs, symbol.Symbol):
            return list(symbol.SliceChannel(outputs, axis=axis, num_outputs=length,
                                            squeeze_axis=1))
        return outputs


class BaseConvRNNCell(BaseRNNCell):
    """The base class of the convolutional cells: an input convolution and a recurrent one
    (padded to keep the state's spatial size), both 2-d."""

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride,
                 i2h_pad, i2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, activation, prefix='',
                 params=None, conv_layout='NCHW'):
        super().__init__(prefix=prefix, params=params)
        if h2h_kernel[0] % 2 != 1 or h2h_kernel[1] % 2 != 1:
            raise MXNetError("Only support odd number, get h2h_kernel= %s" % str(h2h_kernel))
        self._h2h_kernel = h2h_kernel
        self._h2h_pad = (h2h_dilate[0] * (h2h_kernel[0] - 1) // 2,
                         h2h_dilate[1] * (h2h_kernel[1] - 1) // 2)
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel = i2h_kernel
        self._i2h_stride = i2h_stride
        self._i2h_pad = i2h_pad
        self._i2h_dilate = i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        probe = symbol.Convolution(data=symbol.Variable('data'), num_filter=num_hidden,
                                   kernel=i2h_kernel, stride=i2h_stride, pad=i2h_pad,
                                   dilate=i2h_dilate, layout=conv_layout)
        self._state_shape = (0,) + tuple(probe.infer_shape(data=input_shape)[1][0][1:])
        self._iW = self.params.get('i2h_weight', init=i2h_weight_initializer)
        self._hW = self.params.get('h2h_weight', init=h2h_weight_initializer)
        self._iB = self.params.get('i2h_bias', init=i2h_bias_initializer)
        self._hB = self.params.get('h2h_bias', init=h2h_bias_initializer)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        return [{'shape': self._state_shape, '__layout__': self._conv_layout}
                for _ in range(self._num_states)]

    _num_states = 2

    def _conv_forward(self, inputs, states, name):
        n = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(name='%si2h' % name, data=inputs, num_filter=n,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate, weight=self._iW,
                                 bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name='%sh2h' % name, data=states[0], num_filter=n,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                                 bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError("BaseConvRNNCell is abstract class for convolutional RNN")


_LEAKY = functools.partial(symbol.LeakyReLU, act_type='leaky', slope=0.2)


def _conv_defaults(cls, prefix):
    """``__init__`` of a convolutional cell with MXNet's defaults (3x3 kernels, pad 1)."""
    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros', activation=_LEAKY,
                 prefix=prefix, params=None, conv_layout='NCHW'):
        BaseConvRNNCell.__init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate,
                                 i2h_kernel, i2h_stride, i2h_pad, i2h_dilate,
                                 i2h_weight_initializer, h2h_weight_initializer,
                                 i2h_bias_initializer, h2h_bias_initializer, activation,
                                 prefix=prefix, params=params, conv_layout=conv_layout)
    cls.__init__ = __init__
    return cls


class ConvRNNCell(BaseConvRNNCell):
    """A convolutional Elman cell: ``activation(W_i * x + R_i * h + b)``; ``activation``
    defaults to a leaky ReLU of slope 0.2."""
    _num_states = 1

    @property
    def _gate_names(self):
        return ('',)

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        out = self._get_activation(i2h + h2h, self._activation, name='%sout' % name)
        return out, [out]


class ConvLSTMCell(BaseConvRNNCell):
    """A convolutional LSTM cell (Shi et al. 2015)."""

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4,
                                    axis=self._conv_layout.find('C'), name='%sslice' % name)
        i = symbol.Activation(gates[0], act_type='sigmoid', name='%si' % name)
        f = symbol.Activation(gates[1], act_type='sigmoid', name='%sf' % name)
        g = self._get_activation(gates[2], self._activation, name='%sc' % name)
        o = symbol.Activation(gates[3], act_type='sigmoid', name='%so' % name)
        c = symbol._internal._plus(f * states[1], i * g, name='%sstate' % name)
        h = symbol._internal._mul(o, self._get_activation(c, self._activation),
                                  name='%sout' % name)
        return h, [h, c]


class ConvGRUCell(BaseConvRNNCell):
    """A convolutional GRU cell."""
    _num_states = 1

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h, h2h = self._conv_forward(inputs, states, name)
        i_r, i_z, i_n = symbol.SliceChannel(i2h, num_outputs=3, name='%s_i2h_slice' % name)
        h_r, h_z, h_n = symbol.SliceChannel(h2h, num_outputs=3, name='%s_h2h_slice' % name)
        r = symbol.Activation(i_r + h_r, act_type='sigmoid', name='%s_r_act' % name)
        z = symbol.Activation(i_z + h_z, act_type='sigmoid', name='%s_z_act' % name)
        cand = self._get_activation(i_n + r * h_n, self._activation, name='%s_h_act' % name)
        out = symbol._internal._plus((1. - z) * cand, z * states[0], name='%sout' % name)
        return out, [out]


_conv_defaults(ConvRNNCell, 'ConvRNN_')
_conv_defaults(ConvLSTMCell, 'ConvLSTM_')
_conv_defaults(ConvGRUCell, 'ConvGRU_')
