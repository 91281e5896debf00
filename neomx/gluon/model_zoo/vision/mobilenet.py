"""MobileNet (Howard et al. 2017) and MobileNetV2 (Sandler et al. 2018) with MXNet 1.9's
layers and parameter names; ``multiplier`` scales the width of every layer.

>>> [type(b).__name__ for b in mobilenet0_25().features][:3]
['Conv2D', 'BatchNorm', 'Activation']
"""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained

__all__ = ['MobileNet', 'MobileNetV2', 'mobilenet1_0', 'mobilenet_v2_1_0', 'mobilenet0_75',
           'mobilenet_v2_0_75', 'mobilenet0_5', 'mobilenet_v2_0_5', 'mobilenet0_25',
           'mobilenet_v2_0_25', 'get_mobilenet', 'get_mobilenet_v2']


class RELU6(HybridBlock):
    """``min(max(x, 0), 6)``."""

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6, name="relu6")


def _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True, relu6=False):
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation('relu'))


def _add_conv_dw(out, dw_channels, channels, stride, relu6=False):
    """A depthwise 3x3 convolution, then a pointwise 1x1 one."""
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1, num_group=dw_channels,
              relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


class LinearBottleneck(HybridBlock):
    """MobileNetV2's inverted residual: expand by ``t`` (1x1), depthwise 3x3, project (1x1,
    no activation); a shortcut when the shape is kept."""

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        with self.name_scope():
            self.out = nn.HybridSequential()
            _add_conv(self.out, in_channels * t, relu6=True)
            _add_conv(self.out, in_channels * t, kernel=3, stride=stride, pad=1,
                      num_group=in_channels * t, relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        if self.use_shortcut:
            out = F.elemwise_add(out, x)
        return out


class MobileNet(HybridBlock):
    """MobileNet with width ``multiplier`` and ``classes`` outputs."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            with self.features.name_scope():
                _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1, stride=2)
                dw_channels = [int(x * multiplier) for x in
                               [32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024]]
                channels = [int(x * multiplier) for x in
                            [64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2]
                strides = [1, 2] * 3 + [1] * 5 + [2, 1]
                for dwc, c, s in zip(dw_channels, channels, strides):
                    _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
                self.features.add(nn.GlobalAvgPool2D())
                self.features.add(nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    """MobileNetV2 with width ``multiplier`` and ``classes`` outputs."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='features_')
            with self.features.name_scope():
                _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1,
                          relu6=True)
                in_channels_group = [int(x * multiplier) for x in
                                     [32] + [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3
                                     + [160] * 3]
                channels_group = [int(x * multiplier) for x in
                                  [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3
                                  + [320]]
                ts = [1] + [6] * 16
                strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
                for in_c, c, t, s in zip(in_channels_group, channels_group, ts, strides):
                    self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t,
                                                       stride=s))
                last_channels = int(1280 * multiplier) if multiplier > 1.0 else 1280
                _add_conv(self.features, last_channels, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix='output_')
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix='pred_'),
                                nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _suffix(multiplier):
    """MXNet's file-name spelling of a multiplier: 1.0, 0.75, 0.5, 0.25."""
    s = '{0:.2f}'.format(multiplier)
    return s[:-1] if s in ('1.00', '0.50') else s


def get_mobilenet(multiplier, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """MobileNet of width ``multiplier``; ``pretrained=True`` loads MXNet's ImageNet weights."""
    net = MobileNet(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, 'mobilenet%s' % _suffix(multiplier), ctx, root)
    return net


def get_mobilenet_v2(multiplier, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """MobileNetV2 of width ``multiplier``; ``pretrained=True`` loads MXNet's ImageNet
    weights."""
    net = MobileNetV2(multiplier, **kwargs)
    if pretrained:
        load_pretrained(net, 'mobilenetv2_%s' % _suffix(multiplier), ctx, root)
    return net


def _variant(get, multiplier, name):
    def make(**kwargs):
        return get(multiplier, **kwargs)
    make.__name__ = name
    make.__doc__ = "%s; arguments as ``%s``." % (name, get.__name__)
    return make


mobilenet1_0 = _variant(get_mobilenet, 1.0, 'mobilenet1_0')
mobilenet0_75 = _variant(get_mobilenet, 0.75, 'mobilenet0_75')
mobilenet0_5 = _variant(get_mobilenet, 0.5, 'mobilenet0_5')
mobilenet0_25 = _variant(get_mobilenet, 0.25, 'mobilenet0_25')
mobilenet_v2_1_0 = _variant(get_mobilenet_v2, 1.0, 'mobilenet_v2_1_0')
mobilenet_v2_0_75 = _variant(get_mobilenet_v2, 0.75, 'mobilenet_v2_0_75')
mobilenet_v2_0_5 = _variant(get_mobilenet_v2, 0.5, 'mobilenet_v2_0_5')
mobilenet_v2_0_25 = _variant(get_mobilenet_v2, 0.25, 'mobilenet_v2_0_25')


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import os  # noqa: E402,F401
from .... import base  # noqa: E402,F401
