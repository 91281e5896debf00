"""``mx.optimizer``: weight-update rules (SGD, Adam, ...), their registry and the Updater.

``optimizer.py`` is the machinery (the ``Optimizer`` base class, ``register``/``create``,
one engine operation per device and update); the rules are in ``sgd.py``, ``adam.py`` and
``adaptive.py`` by family; ``updater.py`` keeps the states of a KVStore or a Trainer.

>>> import neomx as mx
>>> opt = mx.optimizer.create('sgd', learning_rate=0.1, momentum=0.9)
>>> type(opt).__name__
'SGD'
"""
from .optimizer import Optimizer, create, register
from .sgd import SGD, ccSGD, NAG, Signum, DCASGD, SGLD, Test
from .adam import Adam, AdamW, Adamax, Nadam, LAMB
from .adaptive import RMSProp, AdaGrad, AdaDelta, Ftrl, FTML
from .updater import Updater, get_updater
from . import contrib

__all__ = ['Optimizer', 'SGD', 'ccSGD', 'NAG', 'Signum', 'Adam', 'AdamW', 'Adamax', 'Nadam',
           'RMSProp', 'AdaGrad', 'AdaDelta', 'Ftrl', 'FTML', 'LAMB', 'DCASGD', 'SGLD', 'Test',
           'Updater', 'create', 'get_updater', 'register', 'contrib']
