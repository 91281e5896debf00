"""ResNet V1 (He et al. 2015, "Deep Residual Learning for Image Recognition") and V2 (He et al.
2016, "Identity Mappings in Deep Residual Networks"), with MXNet 1.9's layer structure, block
names and parameter names, so that its ``.params`` files load.

>>> import neomx as mx
>>> net = resnet18_v1(classes=10, thumbnail=True)
>>> net.initialize()
>>> net(mx.nd.zeros((1, 3, 32, 32))).shape
(1, 10)
"""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained

__all__ = ['ResNetV1', 'ResNetV2', 'BasicBlockV1', 'BasicBlockV2', 'BottleneckV1',
           'BottleneckV2', 'resnet18_v1', 'resnet34_v1', 'resnet50_v1', 'resnet101_v1',
           'resnet152_v1', 'resnet18_v2', 'resnet34_v2', 'resnet50_v2', 'resnet101_v2',
           'resnet152_v2', 'get_resnet']


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _shortcut_v1(channels, stride, in_channels):
    shortcut = nn.HybridSequential(prefix='')
    shortcut.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                           in_channels=in_channels))
    shortcut.add(nn.BatchNorm())
    return shortcut


class BasicBlockV1(HybridBlock):
    """Two 3x3 convolutions with batch norm; ``relu(body(x) + shortcut(x))`` (ResNet-18/34 V1).
    ``downsample`` adds a 1x1 convolution to the shortcut when the shape changes."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix='')
        self.body.add(_conv3x3(channels, stride, in_channels))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation('relu'))
        self.body.add(_conv3x3(channels, 1, channels))
        self.body.add(nn.BatchNorm())
        self.downsample = _shortcut_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(residual + self.body(x), act_type='relu')


class BottleneckV1(HybridBlock):
    """1x1, 3x3, 1x1 convolutions with batch norm (ResNet-50/101/152 V1)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix='')
        self.body.add(nn.Conv2D(channels // 4, kernel_size=1, strides=stride))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation('relu'))
        self.body.add(_conv3x3(channels // 4, 1, channels // 4))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation('relu'))
        self.body.add(nn.Conv2D(channels, kernel_size=1, strides=1))
        self.body.add(nn.BatchNorm())
        self.downsample = _shortcut_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(self.body(x) + residual, act_type='relu')


class BasicBlockV2(HybridBlock):
    """Pre-activation basic block: batch norm and ReLU before each 3x3 convolution."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)
                           if downsample else None)

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type='relu')
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = F.Activation(self.bn2(x), act_type='relu')
        return self.conv2(x) + residual


class BottleneckV2(HybridBlock):
    """Pre-activation bottleneck block."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(channels // 4, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels // 4, stride, channels // 4)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)
                           if downsample else None)

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type='relu')
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = self.conv2(F.Activation(self.bn2(x), act_type='relu'))
        x = self.conv3(F.Activation(self.bn3(x), act_type='relu'))
        return x + residual


def _stem(features, channels, thumbnail):
    """The first layers: a 3x3 convolution for small (thumbnail, 32x32) images, else the 7x7 /
    2 convolution and 3x3 / 2 max pooling for 224x224 images."""
    if thumbnail:
        features.add(_conv3x3(channels, 1, 0))
    else:
        features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False))
        features.add(nn.BatchNorm())
        features.add(nn.Activation('relu'))
        features.add(nn.MaxPool2D(3, 2, 1))


def _make_layer(block, layers, channels, stride, stage_index, in_channels):
    layer = nn.HybridSequential(prefix='stage%d_' % stage_index)
    with layer.name_scope():
        layer.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                        prefix=''))
        for _ in range(layers - 1):
            layer.add(block(channels, 1, False, in_channels=channels, prefix=''))
    return layer


class ResNetV1(HybridBlock):
    """ResNet V1: ``block`` (BasicBlockV1 or BottleneckV1) repeated ``layers[i]`` times in stage
    ``i``, with ``channels[i + 1]`` channels (``channels[0]`` for the stem).

    Parameters: block, layers, channels, classes=1000, thumbnail=False (a 3x3 stem without
    pooling, for 32x32 images)."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(channels) - 1:
            raise ValueError("ResNetV1: channels needs one entry more than layers, got %d and %d"
                             % (len(channels), len(layers)))
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            _stem(self.features, channels[0], thumbnail)
            for i, num_layer in enumerate(layers):
                stride = 1 if i == 0 else 2
                self.features.add(_make_layer(block, num_layer, channels[i + 1], stride, i + 1,
                                              in_channels=channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class ResNetV2(HybridBlock):
    """ResNet V2 (pre-activation); parameters as ``ResNetV1`` with BasicBlockV2 or
    BottleneckV2."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(channels) - 1:
            raise ValueError("ResNetV2: channels needs one entry more than layers, got %d and %d"
                             % (len(channels), len(layers)))
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            # Normalises the input images: the network sees data of mean 0, variance 1.
            self.features.add(nn.BatchNorm(scale=False, center=False))
            _stem(self.features, channels[0], thumbnail)
            in_channels = channels[0]
            for i, num_layer in enumerate(layers):
                stride = 1 if i == 0 else 2
                self.features.add(_make_layer(block, num_layer, channels[i + 1], stride, i + 1,
                                              in_channels=in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation('relu'))
            self.features.add(nn.GlobalAvgPool2D())
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


resnet_spec = {18: ('basic_block', [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ('basic_block', [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ('bottle_neck', [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ('bottle_neck', [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ('bottle_neck', [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{'basic_block': BasicBlockV1, 'bottle_neck': BottleneckV1},
                         {'basic_block': BasicBlockV2, 'bottle_neck': BottleneckV2}]


def get_resnet(version, num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """ResNet ``version`` (1 or 2) with ``num_layers`` (18, 34, 50, 101, 152) layers;
    ``pretrained=True`` loads MXNet's ImageNet weights from ``root`` (default
    ``$MXNET_HOME/models``) onto ``ctx``. Other arguments (``classes``, ``thumbnail``) go to
    the network."""
    if num_layers not in resnet_spec:
        raise ValueError("Invalid number of layers: %d. Options are %s"
                         % (num_layers, sorted(resnet_spec)))
    if version not in (1, 2):
        raise ValueError("Invalid resnet version: %d. Options are 1 and 2." % version)
    block_type, layers, channels = resnet_spec[num_layers]
    block = resnet_block_versions[version - 1][block_type]
    net = resnet_net_versions[version - 1](block, layers, channels, **kwargs)
    if pretrained:
        load_pretrained(net, 'resnet%d_v%d' % (num_layers, version), ctx, root)
    return net


def _variant(version, num_layers):
    def make(**kwargs):
        return get_resnet(version, num_layers, **kwargs)
    make.__name__ = 'resnet%d_v%d' % (num_layers, version)
    make.__doc__ = ("ResNet-%d V%d; arguments as ``get_resnet`` (pretrained, ctx, root, classes, "
                    "thumbnail)." % (num_layers, version))
    return make


resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1, resnet152_v1 = (
    _variant(1, n) for n in (18, 34, 50, 101, 152))
resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2 = (
    _variant(2, n) for n in (18, 34, 50, 101, 152))


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import os  # noqa: E402,F401
from .... import base  # noqa: E402,F401
from ....util import is_np_array  # noqa: E402,F401
