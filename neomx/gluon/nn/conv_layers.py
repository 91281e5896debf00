"""Convolution, transposed convolution and pooling layers (1-d, 2-d and 3-d)."""
from ...base import MXNetError, numeric_types
from ...ops import registry
from ..block import HybridBlock
from .activations import Activation

__all__ = ['Conv1D', 'Conv2D', 'Conv3D', 'Conv1DTranspose', 'Conv2DTranspose',
           'Conv3DTranspose', 'MaxPool1D', 'MaxPool2D', 'MaxPool3D', 'AvgPool1D', 'AvgPool2D',
           'AvgPool3D', 'GlobalMaxPool1D', 'GlobalMaxPool2D', 'GlobalMaxPool3D',
           'GlobalAvgPool1D', 'GlobalAvgPool2D', 'GlobalAvgPool3D', 'ReflectionPad2D']


def _tuple(value, n, what):
    if isinstance(value, numeric_types):
        return (value,) * n
    value = tuple(value)
    if len(value) != n:
        raise MXNetError("%s must be a number or a list of %d ints, got %r" % (what, n, value))
    return value


def _param_shapes(op_name, kwargs, in_channels, layout):
    """(weight shape, bias shape) from the operator's fill rule, 0 for the unknown input
    channels."""
    op = registry.get(op_name)
    dshape = [0] * (len(kwargs['kernel']) + 2)
    dshape[layout.find('N')] = 1
    dshape[layout.find('C')] = in_channels
    shapes = op.fill(op.parse_attrs(kwargs), [tuple(dshape), None, None])
    return shapes[1], shapes[2]


class _Conv(HybridBlock):
    """Convolution (``op_name='Convolution'``) or its transpose (``'Deconvolution'``)."""

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', op_name='Convolution', adj=None, prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            n = len(kernel_size)
            self._op_name = op_name
            self._kwargs = {
                'kernel': kernel_size, 'stride': _tuple(strides, n, 'strides'),
                'dilate': _tuple(dilation, n, 'dilation'), 'pad': _tuple(padding, n, 'padding'),
                'num_filter': channels, 'num_group': groups, 'no_bias': not use_bias,
                'layout': layout}
            if adj is not None:
                self._kwargs['adj'] = adj
            wshape, bshape = _param_shapes(op_name, self._kwargs, in_channels, layout)
            self.weight = self.params.get('weight', shape=wshape, init=weight_initializer,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get('bias', shape=bshape, init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            if activation is not None:
                self.act = Activation(activation, prefix=activation + '_')
            else:
                self.act = None

    def hybrid_forward(self, F, x, weight, bias=None):
        if bias is None:
            act = getattr(F, self._op_name)(x, weight, name='fwd', **self._kwargs)
        else:
            act = getattr(F, self._op_name)(x, weight, bias, name='fwd', **self._kwargs)
        if self.act is not None:
            act = self.act(act)
        return act

    def _alias(self):
        return 'conv'

    def __repr__(self):
        s = '{name}({mapping}, kernel_size={kernel}, stride={stride}'
        n = len(self._kwargs['kernel'])
        if self._kwargs['pad'] != (0,) * n:
            s += ', padding={pad}'
        if self._kwargs['dilate'] != (1,) * n:
            s += ', dilation={dilate}'
        if hasattr(self, 'out_pad') and self.out_pad != (0,) * n:
            s += ', output_padding={out_pad}'.format(out_pad=self.out_pad)
        if self._kwargs['num_group'] != 1:
            s += ', groups={num_group}'
        if self.bias is None:
            s += ', bias=False'
        if self.act:
            s += ', {}'.format(self.act)
        s += ')'
        shape = self.weight.shape
        return s.format(name=self.__class__.__name__,
                        mapping='{0} -> {1}'.format(shape[1] if shape[1] else None, shape[0]),
                        **self._kwargs)


def _conv_init(self, n, layouts, transpose, channels, kernel_size, strides, padding, dilation,
               groups, layout, activation, use_bias, weight_initializer, bias_initializer,
               in_channels, output_padding, kwargs):
    if layout not in layouts:
        raise MXNetError("Only supports %s layout for now, got %r"
                         % (' and '.join(repr(x) for x in layouts), layout))
    kernel_size = _tuple(kernel_size, n, 'kernel_size')
    op_name = kwargs.pop('op_name', 'Deconvolution' if transpose else 'Convolution')
    adj = _tuple(output_padding, n, 'output_padding') if transpose else None
    _Conv.__init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                   in_channels, activation, use_bias, weight_initializer, bias_initializer,
                   op_name=op_name, adj=adj, **kwargs)
    if transpose:
        self.outpad = adj


def _conv_class(n, layouts):
    """``__init__`` of Conv{n}D, with MXNet's argument order."""
    def __init__(self, channels, kernel_size, strides=(1,) * n, padding=(0,) * n,
                 dilation=(1,) * n, groups=1, layout=layouts[0], activation=None,
                 use_bias=True, weight_initializer=None, bias_initializer='zeros',
                 in_channels=0, **kwargs):
        _conv_init(self, n, layouts, False, channels, kernel_size, strides, padding, dilation,
                   groups, layout, activation, use_bias, weight_initializer, bias_initializer,
                   in_channels, None, kwargs)
    return __init__


def _conv_transpose_class(n, layouts):
    """``__init__`` of Conv{n}DTranspose (output_padding comes before dilation)."""
    def __init__(self, channels, kernel_size, strides=(1,) * n, padding=(0,) * n,
                 output_padding=(0,) * n, dilation=(1,) * n, groups=1, layout=layouts[0],
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        _conv_init(self, n, layouts, True, channels, kernel_size, strides, padding, dilation,
                   groups, layout, activation, use_bias, weight_initializer, bias_initializer,
                   in_channels, output_padding, kwargs)
    return __init__


class Conv1D(_Conv):
    """1-d convolution over (batch, channels, width) inputs.

    Parameters: channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
    layout='NCW', activation=None, use_bias=True, weight_initializer=None,
    bias_initializer='zeros', in_channels=0 (inferred at the first forward pass).
    """
    __init__ = _conv_class(1, ('NCW',))


class Conv2D(_Conv):
    """2-d convolution over (batch, channels, height, width) inputs (or NHWC).

    >>> import neomx as mx
    >>> conv = mx.gluon.nn.Conv2D(8, kernel_size=3, padding=1, in_channels=3)
    >>> conv.initialize()
    >>> conv(mx.nd.ones((1, 3, 5, 5))).shape
    (1, 8, 5, 5)
    """
    __init__ = _conv_class(2, ('NCHW', 'NHWC'))


class Conv3D(_Conv):
    """3-d convolution over (batch, channels, depth, height, width) inputs."""
    __init__ = _conv_class(3, ('NCDHW', 'NDHWC'))


class Conv1DTranspose(_Conv):
    """1-d transposed convolution (``output_padding`` adds to one side of the output)."""
    __init__ = _conv_transpose_class(1, ('NCW',))


class Conv2DTranspose(_Conv):
    """2-d transposed convolution (``output_padding`` adds to one side of the output).

    >>> import neomx as mx
    >>> up = mx.gluon.nn.Conv2DTranspose(4, kernel_size=2, strides=2, in_channels=3)
    >>> up.initialize()
    >>> up(mx.nd.ones((1, 3, 5, 5))).shape
    (1, 4, 10, 10)
    """
    __init__ = _conv_transpose_class(2, ('NCHW', 'NHWC'))


class Conv3DTranspose(_Conv):
    """3-d transposed convolution."""
    __init__ = _conv_transpose_class(3, ('NCDHW', 'NDHWC'))


_L1, _L2, _L3 = ('NCW', 'NWC'), ('NCHW', 'NHWC'), ('NCDHW', 'NDHWC')


class _Pooling(HybridBlock):
    """Pooling with MXNet's attributes (``ceil_mode`` is pooling_convention 'full')."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        if strides is None:
            strides = pool_size
        n = len(pool_size)
        self._kwargs = {
            'kernel': pool_size, 'stride': _tuple(strides, n, 'strides'),
            'pad': _tuple(padding, n, 'padding'), 'global_pool': global_pool,
            'pool_type': pool_type, 'layout': layout,
            'pooling_convention': 'full' if ceil_mode else 'valid'}
        if count_include_pad is not None:
            self._kwargs['count_include_pad'] = count_include_pad

    def _alias(self):
        return 'pool'

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name='fwd', **self._kwargs)

    def __repr__(self):
        s = '{name}(size={kernel}, stride={stride}, padding={pad}, ceil_mode={ceil_mode}'
        s += ', global_pool={global_pool}, pool_type={pool_type}, layout={layout})'
        return s.format(name=self.__class__.__name__,
                        ceil_mode=self._kwargs['pooling_convention'] == 'full', **self._kwargs)


def _pool_init(self, n, layouts, pool_type, pool_size, strides, padding, layout, ceil_mode,
               count_include_pad, kwargs):
    if layout not in layouts:
        raise MXNetError("Only %s layouts are valid for %dD Pooling, got %r"
                         % (' and '.join(layouts), n, layout))
    _Pooling.__init__(self, _tuple(pool_size, n, 'pool_size'), strides, padding, ceil_mode, False,
                      pool_type, layout, count_include_pad, **kwargs)


def _global_pool_class(n, layouts, pool_type):
    def __init__(self, layout=layouts[0], **kwargs):
        if layout not in layouts:
            raise MXNetError("Only %s layouts are valid for %dD Pooling, got %r"
                             % (' and '.join(layouts), n, layout))
        _Pooling.__init__(self, (1,) * n, None, 0, True, True, pool_type, layout, **kwargs)
    return __init__



class MaxPool1D(_Pooling):
    """Max pooling over width: pool_size=2, strides=pool_size, padding=0, layout='NCW',
    ceil_mode=False."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False,
                 **kwargs):
        _pool_init(self, 1, _L1, 'max', pool_size, strides, padding, layout, ceil_mode,
                   None, kwargs)


class MaxPool2D(_Pooling):
    """Max pooling over height and width.

    >>> import neomx as mx
    >>> mx.gluon.nn.MaxPool2D()(mx.nd.ones((1, 1, 4, 4))).shape
    (1, 1, 2, 2)
    """

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout='NCHW',
                 ceil_mode=False, **kwargs):
        _pool_init(self, 2, _L2, 'max', pool_size, strides, padding, layout, ceil_mode,
                   None, kwargs)


class MaxPool3D(_Pooling):
    """Max pooling over depth, height and width."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCDHW', **kwargs):
        _pool_init(self, 3, _L3, 'max', pool_size, strides, padding, layout, ceil_mode,
                   None, kwargs)


class AvgPool1D(_Pooling):
    """Average pooling over width (``count_include_pad`` counts padded positions)."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False,
                 count_include_pad=True, **kwargs):
        _pool_init(self, 1, _L1, 'avg', pool_size, strides, padding, layout, ceil_mode,
                   count_include_pad, kwargs)


class AvgPool2D(_Pooling):
    """Average pooling over height and width."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCHW', count_include_pad=True, **kwargs):
        _pool_init(self, 2, _L2, 'avg', pool_size, strides, padding, layout, ceil_mode,
                   count_include_pad, kwargs)


class AvgPool3D(_Pooling):
    """Average pooling over depth, height and width."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCDHW', count_include_pad=True, **kwargs):
        _pool_init(self, 3, _L3, 'avg', pool_size, strides, padding, layout, ceil_mode,
                   count_include_pad, kwargs)


class GlobalMaxPool1D(_Pooling):
    """The maximum over the whole width: (N, C, W) -> (N, C, 1)."""
    __init__ = _global_pool_class(1, _L1, 'max')


class GlobalMaxPool2D(_Pooling):
    """The maximum over each feature map: (N, C, H, W) -> (N, C, 1, 1)."""
    __init__ = _global_pool_class(2, _L2, 'max')


class GlobalMaxPool3D(_Pooling):
    """The maximum over each 3-d feature map."""
    __init__ = _global_pool_class(3, _L3, 'max')


class GlobalAvgPool1D(_Pooling):
    """The mean over the whole width."""
    __init__ = _global_pool_class(1, _L1, 'avg')


class GlobalAvgPool2D(_Pooling):
    """The mean over each feature map: (N, C, H, W) -> (N, C, 1, 1)."""
    __init__ = _global_pool_class(2, _L2, 'avg')


class GlobalAvgPool3D(_Pooling):
    """The mean over each 3-d feature map."""
    __init__ = _global_pool_class(3, _L3, 'avg')


class ReflectionPad2D(HybridBlock):
    """Pads height and width by reflection (``padding`` on each side, or MXNet's 8-tuple of
    pad_width)."""

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, numeric_types):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        if len(padding) != 8:
            raise MXNetError("ReflectionPad2D: padding must be a number or 8 values, got %r"
                             % (padding,))
        self._padding = padding

    def hybrid_forward(self, F, x):
        return F.pad(x, mode='reflect', pad_width=self._padding)


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from ... import symbol  # noqa: E402,F401
from ...util import is_np_array  # noqa: E402,F401
