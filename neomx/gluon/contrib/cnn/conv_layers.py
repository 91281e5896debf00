"""Deformable convolution layers: a convolution whose taps are moved by offsets that a second,
ordinary convolution computes from the same input (Dai et al. 2017); the modulated version
also weighs each tap by a sigmoid mask (Zhu et al. 2018). Only 2-d, NCHW.

>>> import neomx as mx
>>> net = DeformableConvolution(4, kernel_size=3, padding=1)
>>> net.initialize()
>>> net(mx.nd.ones((1, 2, 5, 6))).shape
(1, 4, 5, 6)
"""
from ....base import numeric_types
from ...block import HybridBlock
from ...nn import Activation

__all__ = ['DeformableConvolution', 'ModulatedDeformableConvolution']


def _tuple2(v):
    return (v,) * 2 if isinstance(v, numeric_types) else tuple(v)


class _DeformableBase(HybridBlock):
    _op = None
    _offset_per_tap = 2

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout='NCHW', use_bias=True,
                 in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer='zeros', offset_weight_initializer='zeros',
                 offset_bias_initializer='zeros', offset_use_bias=True, op_name=None, adj=None,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        if layout != 'NCHW':
            raise ValueError("%s: only the NCHW layout is supported, got %r"
                             % (type(self).__name__, layout))
        kernel = _tuple2(kernel_size)
        if len(kernel) != 2:
            raise ValueError("%s: kernel_size must have 2 values, got %s"
                             % (type(self).__name__, kernel_size))
        geometry = {'kernel': kernel, 'stride': _tuple2(strides), 'dilate': _tuple2(dilation),
                    'pad': _tuple2(padding), 'num_group': groups, 'layout': layout}
        taps = kernel[0] * kernel[1] * num_deformable_group
        self._channels, self._in_channels = channels, in_channels
        self._op_name = op_name or self._op
        self._offset_split = 2 * taps
        self._kwargs_offset = dict(geometry, num_filter=self._offset_per_tap * taps,
                                   no_bias=not offset_use_bias)
        self._kwargs_deformable_conv = dict(geometry, num_filter=channels,
                                            num_deformable_group=num_deformable_group,
                                            no_bias=not use_bias)
        if adj:
            self._kwargs_offset['adj'] = adj
            self._kwargs_deformable_conv['adj'] = adj
        c_in = in_channels // groups if in_channels else 0
        with self.name_scope():
            self.offset_weight = self.params.get(
                'offset_weight', shape=(self._offset_per_tap * taps, c_in) + kernel,
                init=offset_weight_initializer, allow_deferred_init=True)
            self.offset_bias = self.params.get(
                'offset_bias', shape=(self._offset_per_tap * taps,),
                init=offset_bias_initializer, allow_deferred_init=True) \
                if offset_use_bias else None
            self.deformable_conv_weight = self.params.get(
                'deformable_conv_weight', shape=(channels, c_in) + kernel,
                init=weight_initializer, allow_deferred_init=True)
            self.deformable_conv_bias = self.params.get(
                'deformable_conv_bias', shape=(channels,), init=bias_initializer,
                allow_deferred_init=True) if use_bias else None
            self.act = Activation(activation, prefix=activation + '_') if activation else None

    def _offsets(self, F, x, offset_weight, offset_bias):
        if offset_bias is None:
            return F.Convolution(x, offset_weight, cudnn_off=True, **self._kwargs_offset)
        return F.Convolution(x, offset_weight, offset_bias, cudnn_off=True,
                             **self._kwargs_offset)

    def _finish(self, out):
        return self.act(out) if self.act is not None else out

    def __repr__(self):
        k = self._kwargs_deformable_conv
        shape = self.deformable_conv_weight.shape
        return '{name}({mapping}, kernel_size={kernel}, stride={stride}, padding={pad}' \
               ', dilation={dilate}, groups={num_group}{bias}{act})'.format(
                   name=type(self).__name__,
                   mapping='{0} -> {1}'.format(shape[1] if shape[1] else None, shape[0]),
                   bias=', bias=False' if k['no_bias'] else '',
                   act=', {}'.format(self.act) if self.act is not None else '', **k)


class DeformableConvolution(_DeformableBase):
    """2-d deformable convolution (v1): ``channels`` filters of ``kernel_size``, the taps moved
    by offsets computed from the input by a convolution of the same geometry (its weights,
    ``offset_weight``, start at zero: an ordinary convolution at first).

    Parameters follow ``nn.Conv2D`` (``strides``, ``padding``, ``dilation``, ``groups``,
    ``use_bias``, ``in_channels``, ``activation``, initializers), and
    ``num_deformable_group`` (channel groups with their own offsets), ``offset_use_bias``,
    ``offset_weight_initializer``, ``offset_bias_initializer``.
    """
    _op = 'DeformableConvolution'

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset = self._offsets(F, x, offset_weight, offset_bias)
        inputs = dict(data=x, offset=offset, weight=deformable_conv_weight)
        if deformable_conv_bias is not None:
            inputs['bias'] = deformable_conv_bias
        return self._finish(F.contrib.DeformableConvolution(
            name='fwd', **inputs, **self._kwargs_deformable_conv))


class ModulatedDeformableConvolution(_DeformableBase):
    """2-d modulated deformable convolution (v2): as ``DeformableConvolution``, each tap also
    weighted by a mask in (0, 2): twice the sigmoid of more channels of the offset convolution
    (1 at the start)."""
    _op = 'ModulatedDeformableConvolution'
    _offset_per_tap = 3

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        both = self._offsets(F, x, offset_weight, offset_bias)
        offset = F.slice_axis(both, axis=1, begin=0, end=self._offset_split)
        mask = F.sigmoid(F.slice_axis(both, axis=1, begin=self._offset_split, end=None)) * 2
        inputs = dict(data=x, offset=offset, mask=mask, weight=deformable_conv_weight)
        if deformable_conv_bias is not None:
            inputs['bias'] = deformable_conv_bias
        return self._finish(F.contrib.ModulatedDeformableConvolution(
            name='fwd', **inputs, **self._kwargs_deformable_conv))


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from .... import symbol  # noqa: E402,F401
