"""Convolutional recurrent cells (Shi et al. 2015): RNN, LSTM and GRU cells whose
input-to-hidden and hidden-to-hidden transforms are convolutions, in 1, 2 or 3 dimensions.

The hidden state keeps the spatial size of the input convolution's output (the recurrent
convolution is padded to keep it), so ``input_shape`` (the per-sample shape of one step,
channels included, as ``conv_layout`` orders it) fixes the state shape.

>>> import neomx as mx
>>> cell = mx.gluon.contrib.rnn.Conv2DLSTMCell((3, 8, 8), 4, i2h_kernel=3, h2h_kernel=3,
...                                            i2h_pad=1)
>>> cell.initialize()
>>> out, states = cell.unroll(2, mx.nd.ones((5, 2, 3, 8, 8)), merge_outputs=True)
>>> out.shape
(5, 2, 4, 8, 8)
"""
from ....base import MXNetError, numeric_types
from ...rnn.rnn_cell import HybridRecurrentCell

__all__ = ['Conv1DRNNCell', 'Conv2DRNNCell', 'Conv3DRNNCell',
           'Conv1DLSTMCell', 'Conv2DLSTMCell', 'Conv3DLSTMCell',
           'Conv1DGRUCell', 'Conv2DGRUCell', 'Conv3DGRUCell']


def _tuple(value, dims, what):
    if isinstance(value, numeric_types):
        return (int(value),) * dims
    value = tuple(value)
    if len(value) != dims:
        raise MXNetError("For %dD convolution, %s must be an int or a tuple of %d ints, got %s"
                         % (dims, what, dims, value))
    return value


class _BaseConvRNNCell(HybridRecurrentCell):
    """What the convolutional cells share: the convolution settings, the parameter and state
    shapes, and the two convolutions of a step."""
    _gates = 1
    _states = 1

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                 i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout, activation,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_channels = hidden_channels
        self._input_shape = tuple(input_shape)
        self._conv_layout = conv_layout
        self._activation = activation
        self._i2h_kernel = _tuple(i2h_kernel, dims, 'i2h_kernel')
        self._stride = (1,) * dims
        self._i2h_pad = _tuple(i2h_pad, dims, 'i2h_pad')
        self._i2h_dilate = _tuple(i2h_dilate, dims, 'i2h_dilate')
        self._h2h_kernel = _tuple(h2h_kernel, dims, 'h2h_kernel')
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise MXNetError("Only support odd number, get h2h_kernel= %s" % str(h2h_kernel))
        self._h2h_dilate = _tuple(h2h_dilate, dims, 'h2h_dilate')
        # the recurrent convolution keeps the state's spatial size
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate,
                                                               self._h2h_kernel))
        self._channel_axis = conv_layout.find('C')
        last = self._channel_axis != 1
        in_channels = self._input_shape[-1] if last else self._input_shape[0]
        spatial = self._input_shape[:-1] if last else self._input_shape[1:]
        out_spatial = tuple(x + 2 * p - d * (k - 1) if x else 0 for x, k, p, d in
                            zip(spatial, self._i2h_kernel, self._i2h_pad, self._i2h_dilate))
        n = hidden_channels * self._gates
        if last:
            i2h_shape = (n,) + self._i2h_kernel + (in_channels,)
            h2h_shape = (n,) + self._h2h_kernel + (hidden_channels,)
            self._state_shape = out_spatial + (hidden_channels,)
        else:
            i2h_shape = (n, in_channels) + self._i2h_kernel
            h2h_shape = (n, hidden_channels) + self._h2h_kernel
            self._state_shape = (hidden_channels,) + out_spatial
        for name, shape, init in (('i2h_weight', i2h_shape, i2h_weight_initializer),
                                  ('h2h_weight', h2h_shape, h2h_weight_initializer),
                                  ('i2h_bias', (n,), i2h_bias_initializer),
                                  ('h2h_bias', (n,), h2h_bias_initializer)):
            setattr(self, name, self.params.get(name, shape=shape, init=init,
                                                allow_deferred_init=True))

    def state_info(self, batch_size=0):
        return [{'shape': (batch_size,) + self._state_shape, '__layout__': self._conv_layout}
                for _ in range(self._states)]

    def __repr__(self):
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        extra = ', %s' % (self._activation,) if type(self).__name__.endswith('RNNCell') else ''
        return '%s(%s -> %d%s, %s)' % (type(self).__name__, in_channels or None, shape[0],
                                       extra, self._conv_layout)

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                      prefix):
        n = self._hidden_channels * self._gates
        i2h = F.Convolution(data=inputs, num_filter=n, kernel=self._i2h_kernel,
                            stride=self._stride, pad=self._i2h_pad, dilate=self._i2h_dilate,
                            weight=i2h_weight, bias=i2h_bias, layout=self._conv_layout,
                            name=prefix + 'i2h')
        h2h = F.Convolution(data=states[0], num_filter=n, kernel=self._h2h_kernel,
                            dilate=self._h2h_dilate, pad=self._h2h_pad, stride=self._stride,
                            weight=h2h_weight, bias=h2h_bias, layout=self._conv_layout,
                            name=prefix + 'h2h')
        return i2h, h2h


class _ConvRNNCell(_BaseConvRNNCell):
    def _alias(self):
        return 'conv_rnn'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = 't%d_' % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        out = self._get_activation(F, i2h + h2h, self._activation, name=prefix + 'out')
        return out, [out]


class _ConvLSTMCell(_BaseConvRNNCell):
    _gates = 4
    _states = 2

    def _alias(self):
        return 'conv_lstm'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = 't%d_' % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, name=prefix + 'slice',
                               axis=self._channel_axis)
        i = F.Activation(gates[0], act_type='sigmoid', name=prefix + 'i')
        f = F.Activation(gates[1], act_type='sigmoid', name=prefix + 'f')
        g = self._get_activation(F, gates[2], self._activation, name=prefix + 'c')
        o = F.Activation(gates[3], act_type='sigmoid', name=prefix + 'o')
        c = F.elemwise_add(f * states[1], i * g, name=prefix + 'state')
        h = F.elemwise_mul(o, self._get_activation(F, c, self._activation), name=prefix + 'out')
        return h, [h, c]


class _ConvGRUCell(_BaseConvRNNCell):
    _gates = 3

    def _alias(self):
        return 'conv_gru'

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = 't%d_' % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        i_r, i_z, i_n = F.SliceChannel(i2h, num_outputs=3, name=prefix + 'i2h_slice',
                                       axis=self._channel_axis)
        h_r, h_z, h_n = F.SliceChannel(h2h, num_outputs=3, name=prefix + 'h2h_slice',
                                       axis=self._channel_axis)
        r = F.Activation(i_r + h_r, act_type='sigmoid', name=prefix + 'r_act')
        z = F.Activation(i_z + h_z, act_type='sigmoid', name=prefix + 'z_act')
        n = self._get_activation(F, i_n + r * h_n, self._activation, name=prefix + 'h_act')
        out = F.elemwise_add((1. - z) * n, z * states[0], name=prefix + 'out')
        return out, [out]


def _cell(base, dims, layout, doc):
    """A public class: ``base`` in ``dims`` dimensions, with that many-tuple defaults."""
    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel,
                 i2h_pad=(0,) * dims, i2h_dilate=(1,) * dims, h2h_dilate=(1,) * dims,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer='zeros', h2h_bias_initializer='zeros',
                 conv_layout=layout, activation='tanh', prefix=None, params=None):
        base.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                      i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                      i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout,
                      activation, prefix, params)
    kind = {_ConvRNNCell: 'RNN', _ConvLSTMCell: 'LSTM', _ConvGRUCell: 'GRU'}[base]
    name = 'Conv%dD%sCell' % (dims, kind)
    return type(name, (base,), {'__init__': __init__, '__module__': __name__,
                                '__doc__': doc % (dims, kind, layout)})


_DOC = """%dD convolutional %s cell.

    Parameters
    ----------
    input_shape : tuple of int
        The shape of one step of one sample, channels included, ordered as ``conv_layout``
        (for 'NCHW': (C, H, W)).
    hidden_channels : int
    i2h_kernel, h2h_kernel : int or tuple of int
        The kernels of the input and recurrent convolutions (h2h: odd sizes only).
    i2h_pad, i2h_dilate, h2h_dilate : int or tuple of int
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    conv_layout : str, default %r
    activation : str or Block, default 'tanh'
    prefix : str, optional
    params : ParameterDict, optional
    """

Conv1DRNNCell = _cell(_ConvRNNCell, 1, 'NCW', _DOC)
Conv2DRNNCell = _cell(_ConvRNNCell, 2, 'NCHW', _DOC)
Conv3DRNNCell = _cell(_ConvRNNCell, 3, 'NCDHW', _DOC)
Conv1DLSTMCell = _cell(_ConvLSTMCell, 1, 'NCW', _DOC)
Conv2DLSTMCell = _cell(_ConvLSTMCell, 2, 'NCHW', _DOC)
Conv3DLSTMCell = _cell(_ConvLSTMCell, 3, 'NCDHW', _DOC)
Conv1DGRUCell = _cell(_ConvGRUCell, 1, 'NCW', _DOC)
Conv2DGRUCell = _cell(_ConvGRUCell, 2, 'NCHW', _DOC)
Conv3DGRUCell = _cell(_ConvGRUCell, 3, 'NCDHW', _DOC)
