"""Attribute scopes: string attributes attached to every symbol created inside a ``with``
block (MXNet's ``mx.AttrScope``), e.g. ``ctx_group`` for model parallelism.

>>> import neomx as mx
>>> with mx.sym.AttrScope(ctx_group='dev1'):
...     a = mx.sym.var('a')
>>> a.attr('ctx_group')
'dev1'
"""
import threading
from collections import defaultdict

from ..base import ClassPropertyMeta, MXNetError, classproperty

__all__ = ['AttrScope', 'current']


class AttrScope(metaclass=ClassPropertyMeta):
    """The attributes (strings) given here are set on the symbols created in the scope; nested
    scopes add to the outer ones. ``AttrScope.current`` is this thread's scope.
    ``_subgraph_names`` counts the names given to control-flow graphs (``foreach0``, ...),
    as MXNet's does."""
    _current = threading.local()
    _subgraph_names = defaultdict(int)

    @classproperty
    def current(cls):
        return current()

    @current.setter
    def current(cls, scope):
        AttrScope._current.value = scope

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise MXNetError("AttrScope: attribute %s=%r must be a string" % (key, value))
        self._attr = kwargs
        self._old_scope = None

    def get(self, attr):
        """The scope's attributes updated with ``attr`` (the user's, which win)."""
        if self._attr:
            ret = dict(self._attr)
            if attr:
                ret.update(attr)
            return ret
        return dict(attr) if attr else {}

    def __enter__(self):
        self._old_scope = current()
        attr = dict(self._old_scope._attr)
        attr.update(self._attr)
        self._attr = attr
        AttrScope._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        AttrScope._current.value = self._old_scope


def current():
    """The attribute scope in use in this thread."""
    try:
        return AttrScope._current.value
    except AttributeError:
        s = AttrScope._current.value = AttrScope()
        return s
