"""VGG (Simonyan and Zisserman 2014, "Very Deep Convolutional Networks for Large-Scale Image
Recognition"), with MXNet 1.9's layers, initializers and parameter names.

>>> net = vgg11(classes=10)
>>> len(net.features)   # 8 convolutions with ReLU, 5 poolings, 2 dense layers with dropout
25
"""
from ....context import cpu
from ....initializer import Xavier
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained

__all__ = ['VGG', 'vgg11', 'vgg13', 'vgg16', 'vgg19', 'vgg11_bn', 'vgg13_bn', 'vgg16_bn',
           'vgg19_bn', 'get_vgg']


class VGG(HybridBlock):
    """``layers[i]`` 3x3 convolutions of ``filters[i]`` channels, then 2x2 max pooling, per
    stage; two dense layers of 4096 with dropout; ``classes`` outputs. ``batch_norm`` adds
    batch normalisation after each convolution."""

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(filters):
            raise ValueError("VGG: layers and filters must have the same length, got %d and %d"
                             % (len(layers), len(filters)))
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation='relu', weight_initializer='normal',
                                           bias_initializer='zeros'))
                self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer='normal', bias_initializer='zeros')

    def _make_features(self, layers, filters, batch_norm):
        featurizer = nn.HybridSequential(prefix='')
        for i, num in enumerate(layers):
            for _ in range(num):
                featurizer.add(nn.Conv2D(filters[i], kernel_size=3, padding=1,
                                         weight_initializer=Xavier(rnd_type='gaussian',
                                                                   factor_type='out',
                                                                   magnitude=2),
                                         bias_initializer='zeros'))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation('relu'))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """VGG with ``num_layers`` (11, 13, 16, 19) layers; ``batch_norm=True`` for the _bn
    variants; ``pretrained=True`` loads MXNet's ImageNet weights from ``root``."""
    if num_layers not in vgg_spec:
        raise ValueError("Invalid number of layers: %d. Options are %s"
                         % (num_layers, sorted(vgg_spec)))
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        suffix = '_bn' if kwargs.get('batch_norm') else ''
        load_pretrained(net, 'vgg%d%s' % (num_layers, suffix), ctx, root)
    return net


def _variant(num_layers, batch_norm):
    def make(**kwargs):
        if batch_norm:
            kwargs['batch_norm'] = True
        return get_vgg(num_layers, **kwargs)
    make.__name__ = 'vgg%d%s' % (num_layers, '_bn' if batch_norm else '')
    make.__doc__ = ("VGG-%d%s; arguments as ``get_vgg``."
                    % (num_layers, ' with batch normalisation' if batch_norm else ''))
    return make


vgg11, vgg13, vgg16, vgg19 = (_variant(n, False) for n in (11, 13, 16, 19))
vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn = (_variant(n, True) for n in (11, 13, 16, 19))


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import os  # noqa: E402,F401
from .... import base  # noqa: E402,F401
