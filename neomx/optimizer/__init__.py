"""``mx.optimizer``: weight-update rules (SGD, Adam, ...), their registry and the Updater.

>>> import neomx as mx
>>> opt = mx.optimizer.create('sgd', learning_rate=0.1, momentum=0.9)
>>> type(opt).__name__
'SGD'
"""
from .optimizer import *  # noqa: F401,F403
from .optimizer import __all__  # noqa: F401
