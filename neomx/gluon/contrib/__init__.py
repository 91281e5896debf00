"""Gluon's contrib namespace: the modules written for it are imported when present."""
from importlib.util import find_spec as _find_spec

for _name in ('nn', 'rnn', 'cnn', 'data', 'estimator'):
    if _find_spec(__name__ + '.' + _name) is not None:
        __import__(__name__ + '.' + _name)
del _name
