"""AlexNet (Krizhevsky et al. 2012, "ImageNet Classification with Deep Convolutional Neural
Networks"), one-tower variant, with MXNet 1.9's layers and parameter names.

>>> net = alexnet(classes=10)
>>> [type(b).__name__ for b in net.features][:2]
['Conv2D', 'MaxPool2D']
"""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import load_pretrained

__all__ = ['AlexNet', 'alexnet']


class AlexNet(HybridBlock):
    """Five convolutions and three dense layers for 224x224 images, ``classes`` outputs."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            with self.features.name_scope():
                self.features.add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2,
                                            activation='relu'))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Conv2D(192, kernel_size=5, padding=2, activation='relu'))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                for channels in (384, 256, 256):
                    self.features.add(nn.Conv2D(channels, kernel_size=3, padding=1,
                                                activation='relu'))
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2))
                self.features.add(nn.Flatten())
                for _ in range(2):
                    self.features.add(nn.Dense(4096, activation='relu'))
                    self.features.add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=cpu(), root=None, **kwargs):
    """AlexNet; ``pretrained=True`` loads MXNet's ImageNet weights from ``root`` (default
    ``$MXNET_HOME/models``) onto ``ctx``."""
    net = AlexNet(**kwargs)
    if pretrained:
        load_pretrained(net, 'alexnet', ctx, root)
    return net


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import os  # noqa: E402,F401
from .... import base  # noqa: E402,F401
