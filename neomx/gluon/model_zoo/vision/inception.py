"""Inception V3 (Szegedy et al. 2015, "Rethinking the Inception Architecture for Computer
Vision") with MXNet 1.9's layers and parameter names; it takes 299x299 images.

>>> type(inception_v3().features[7]).__name__   # the first Inception-A module
'HybridConcatenate'
"""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained

__all__ = ['Inception3', 'inception_v3']


def _make_basic_conv(**kwargs):
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(use_bias=False, **kwargs))
    out.add(nn.BatchNorm(epsilon=0.001))
    out.add(nn.Activation('relu'))
    return out


def _make_branch(use_pool, *conv_settings):
    """An optional 3x3 pooling ('avg' / 1 or 'max' / 2), then convolutions given as
    (channels, kernel_size, strides, padding), None for a default."""
    out = nn.HybridSequential(prefix='')
    if use_pool == 'avg':
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif use_pool == 'max':
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    names = ['channels', 'kernel_size', 'strides', 'padding']
    for setting in conv_settings:
        out.add(_make_basic_conv(**{n: v for n, v in zip(names, setting) if v is not None}))
    return out


def _concat(prefix, *branches):
    out = nn.HybridConcatenate(axis=1, prefix=prefix)
    with out.name_scope():
        for make in branches:
            out.add(make())
    return out


def _make_A(pool_features, prefix):
    return _concat(prefix,
                   lambda: _make_branch(None, (64, 1, None, None)),
                   lambda: _make_branch(None, (48, 1, None, None), (64, 5, None, 2)),
                   lambda: _make_branch(None, (64, 1, None, None), (96, 3, None, 1),
                                        (96, 3, None, 1)),
                   lambda: _make_branch('avg', (pool_features, 1, None, None)))


def _make_B(prefix):
    return _concat(prefix,
                   lambda: _make_branch(None, (384, 3, 2, None)),
                   lambda: _make_branch(None, (64, 1, None, None), (96, 3, None, 1),
                                        (96, 3, 2, None)),
                   lambda: _make_branch('max'))


def _make_C(channels_7x7, prefix):
    c = channels_7x7
    return _concat(prefix,
                   lambda: _make_branch(None, (192, 1, None, None)),
                   lambda: _make_branch(None, (c, 1, None, None), (c, (1, 7), None, (0, 3)),
                                        (192, (7, 1), None, (3, 0))),
                   lambda: _make_branch(None, (c, 1, None, None), (c, (7, 1), None, (3, 0)),
                                        (c, (1, 7), None, (0, 3)), (c, (7, 1), None, (3, 0)),
                                        (192, (1, 7), None, (0, 3))),
                   lambda: _make_branch('avg', (192, 1, None, None)))


def _make_D(prefix):
    return _concat(prefix,
                   lambda: _make_branch(None, (192, 1, None, None), (320, 3, 2, None)),
                   lambda: _make_branch(None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                                        (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
                   lambda: _make_branch('max'))


def _split_branch(*first):
    """Convolutions ``first``, then 1x3 and 3x1 convolutions side by side."""
    out = nn.HybridSequential(prefix='')
    out.add(_make_branch(None, *first))
    split = nn.HybridConcatenate(axis=1, prefix='')
    split.add(_make_branch(None, (384, (1, 3), None, (0, 1))))
    split.add(_make_branch(None, (384, (3, 1), None, (1, 0))))
    out.add(split)
    return out


def _make_E(prefix):
    return _concat(prefix,
                   lambda: _make_branch(None, (320, 1, None, None)),
                   lambda: _split_branch((384, 1, None, None)),
                   lambda: _split_branch((448, 1, None, None), (384, 3, None, 1)),
                   lambda: _make_branch('avg', (192, 1, None, None)))


class Inception3(HybridBlock):
    """Inception V3 with ``classes`` outputs."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(_make_basic_conv(channels=32, kernel_size=3, strides=2))
            self.features.add(_make_basic_conv(channels=32, kernel_size=3))
            self.features.add(_make_basic_conv(channels=64, kernel_size=3, padding=1))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_make_basic_conv(channels=80, kernel_size=1))
            self.features.add(_make_basic_conv(channels=192, kernel_size=3))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
            self.features.add(_make_A(32, 'A1_'))
            self.features.add(_make_A(64, 'A2_'))
            self.features.add(_make_A(64, 'A3_'))
            self.features.add(_make_B('B_'))
            for i, c in enumerate((128, 160, 160, 192)):
                self.features.add(_make_C(c, 'C%d_' % (i + 1)))
            self.features.add(_make_D('D_'))
            self.features.add(_make_E('E1_'))
            self.features.add(_make_E('E2_'))
            self.features.add(nn.AvgPool2D(pool_size=8))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=cpu(), root=None, **kwargs):
    """Inception V3; ``pretrained=True`` loads MXNet's ImageNet weights from ``root`` (default
    ``$MXNET_HOME/models``) onto ``ctx``."""
    net = Inception3(**kwargs)
    if pretrained:
        load_pretrained(net, 'inceptionv3', ctx, root)
    return net


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import os  # noqa: E402,F401
from .... import base  # noqa: E402,F401
from ...contrib.nn import HybridConcurrent, Identity  # noqa: E402,F401


def make_aux(classes):
    """Inception v3's auxiliary classifier head: 5x5 average pooling (stride 3), 1x1 and 5x5
    convolutions (128 and 768 channels, each with batch norm and ReLU) and a Dense of
    ``classes`` outputs."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.AvgPool2D(pool_size=5, strides=3))
    out.add(_make_basic_conv(channels=128, kernel_size=1))
    out.add(_make_basic_conv(channels=768, kernel_size=5))
    out.add(nn.Flatten())
    out.add(nn.Dense(classes))
    return out
