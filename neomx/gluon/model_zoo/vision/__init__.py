"""``gluon.model_zoo.vision``: image classification networks with MXNet 1.9's structure and
parameter names (so MXNet's ``.params`` files load), optionally with its pretrained weights.

>>> net = get_model('resnet18_v1', classes=10)
>>> type(net).__name__
'ResNetV1'
"""
# The modules first: ``alexnet`` is then rebound to the function of that name.
from . import (alexnet as _alexnet, densenet as _densenet, inception as _inception,
               mobilenet as _mobilenet, resnet as _resnet, squeezenet as _squeezenet, vgg as _vgg)
from .alexnet import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .inception import *  # noqa: F401,F403
from .mobilenet import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403

_MODELS = {}
for _module in (_resnet, _vgg, _alexnet, _densenet):
    for _name in _module.__all__:
        if _name.islower() and not _name.startswith('get_'):
            _MODELS[_name] = getattr(_module, _name)
# MobileNets are named with dots, as their weight files: 'mobilenet1.0', 'mobilenetv2_0.75'.
for _m in ('1.0', '0.75', '0.5', '0.25'):
    _MODELS['mobilenet' + _m] = getattr(_mobilenet, 'mobilenet' + _m.replace('.', '_'))
    _MODELS['mobilenetv2_' + _m] = getattr(_mobilenet, 'mobilenet_v2_' + _m.replace('.', '_'))
_MODELS.update({'squeezenet1.0': squeezenet1_0, 'squeezenet1.1': squeezenet1_1,  # noqa: F405
                'inceptionv3': inception_v3})  # noqa: F405


def get_model(name, **kwargs):
    """The network called ``name`` (``'resnet18_v1'``, ``'vgg16_bn'``, ``'alexnet'``,
    ``'densenet121'``, ``'squeezenet1.0'``, ``'inceptionv3'``, ``'mobilenet0.5'``,
    ``'mobilenetv2_1.0'``, ...); keyword arguments (``classes``,
    ``pretrained``, ``ctx``, ``root``, ``thumbnail``, ...) go to its constructor."""
    key = name.lower()
    if key not in _MODELS:
        raise ValueError('Model %s is not supported. Available options are\n\t%s'
                         % (name, '\n\t'.join(sorted(_MODELS))))
    return _MODELS[key](**kwargs)


__all__ = (['get_model'] + _resnet.__all__ + _vgg.__all__ + _alexnet.__all__
           + _mobilenet.__all__ + _densenet.__all__ + _squeezenet.__all__ + _inception.__all__)
