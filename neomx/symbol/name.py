"""Automatic names for symbols: ``fullyconnected0``, ``dense0_fwd`` (MXNet's ``mx.name``).

A name given by the user is kept; otherwise the current manager makes one from a hint (the
operator's name in lower case) and a counter per hint. Gluon's name scopes enter a ``Prefix``
so the nodes a block creates are named after it.

>>> import neomx as mx
>>> data = mx.sym.var('data')
>>> with mx.sym.name.Prefix('mynet_'):
...     net = mx.sym.FullyConnected(data, num_hidden=10, name='fc1')
>>> net.list_arguments()
['data', 'mynet_fc1_weight', 'mynet_fc1_bias']
"""
import threading

from ..base import ClassPropertyMeta, classproperty

__all__ = ['NameManager', 'Prefix', 'current']


class NameManager(metaclass=ClassPropertyMeta):
    """Makes names from hints with a counter per hint; ``with NameManager():`` starts fresh
    counters. ``NameManager.current`` is this thread's manager."""
    _current = threading.local()

    @classproperty
    def current(cls):
        return current()

    @current.setter
    def current(cls, manager):
        NameManager._current.value = manager

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """``name`` if given, else ``hint`` followed by the next number for that hint."""
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return '%s%d' % (hint, n)

    def __enter__(self):
        self._old_manager = current()
        NameManager._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        NameManager._current.value = self._old_manager


class Prefix(NameManager):
    """A name manager that puts ``prefix`` before every name, given or made."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


def current():
    """The name manager in use in this thread."""
    try:
        return NameManager._current.value
    except AttributeError:
        m = NameManager._current.value = NameManager()
        return m
