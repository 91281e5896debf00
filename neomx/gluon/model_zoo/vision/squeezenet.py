"""SqueezeNet 1.0 and 1.1 (Iandola et al. 2016, "SqueezeNet: AlexNet-level accuracy with 50x
fewer parameters and <0.5MB model size") with MXNet 1.9's layers and parameter names.

>>> [type(b).__name__ for b in squeezenet1_1().features][:3]
['Conv2D', 'Activation', 'MaxPool2D']
"""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained

__all__ = ['SqueezeNet', 'squeezenet1_0', 'squeezenet1_1', 'get_squeezenet']


def _make_fire_conv(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(channels, kernel_size, padding=padding))
    out.add(nn.Activation('relu'))
    return out


def _make_fire(squeeze_channels, expand1x1_channels, expand3x3_channels):
    """A fire module: a 1x1 squeeze convolution, then 1x1 and 3x3 expansions side by side."""
    out = nn.HybridSequential(prefix='')
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = nn.HybridConcatenate(axis=1, prefix='')
    paths.add(_make_fire_conv(expand1x1_channels, 1))
    paths.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


# Per version: the stem (channels, kernel), then the fire modules' squeeze widths, with 'M'
# for a 3x3 / 2 max pooling; each fire module expands to 4x its squeeze width on both paths.
_SPEC = {'1.0': ((96, 7), [16, 16, 32, 'M', 32, 48, 48, 64, 'M', 64]),
         '1.1': ((64, 3), [16, 16, 'M', 32, 32, 'M', 48, 48, 64, 64])}


class SqueezeNet(HybridBlock):
    """SqueezeNet ``version`` '1.0' or '1.1' with ``classes`` outputs (224x224 inputs)."""

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        if version not in _SPEC:
            raise ValueError("Unsupported SqueezeNet version %s: 1.0 or 1.1 expected" % version)
        (stem_channels, stem_kernel), fires = _SPEC[version]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.Conv2D(stem_channels, kernel_size=stem_kernel, strides=2))
            self.features.add(nn.Activation('relu'))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
            for f in fires:
                if f == 'M':
                    self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True))
                else:
                    self.features.add(_make_fire(f, 4 * f, 4 * f))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix='')
            self.output.add(nn.Conv2D(classes, kernel_size=1))
            self.output.add(nn.Activation('relu'))
            self.output.add(nn.AvgPool2D(13))
            self.output.add(nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """SqueezeNet ``version`` ('1.0' or '1.1'); ``pretrained=True`` loads MXNet's ImageNet
    weights from ``root`` (default ``$MXNET_HOME/models``) onto ``ctx``."""
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        load_pretrained(net, 'squeezenet%s' % version, ctx, root)
    return net


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0; arguments as ``get_squeezenet``."""
    return get_squeezenet('1.0', **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1; arguments as ``get_squeezenet``."""
    return get_squeezenet('1.1', **kwargs)


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import os  # noqa: E402,F401
from .... import base  # noqa: E402,F401
from ...contrib.nn import HybridConcurrent, Identity  # noqa: E402,F401
