"""NumPy-style symbols (MXNet's ``mx.sym.np._Symbol``): what ``hybrid_forward(F, x)`` sees
when a block on ``mx.np.ndarray`` is traced with ``F = mx.sym`` (for ``infer_shape``). The
functions of ``mx.np`` / ``mx.npx`` (``F.np.dot``, ``F.npx.relu``) build graph nodes when
given these symbols, and the symbols' operators and methods are NumPy's (``x.dot(w)``,
``(y ** 2).sum()``), as on ``mx.np.ndarray``.

>>> import neomx as mx
>>> x = mx.sym.var('x').as_np_ndarray()
>>> y = mx.np.dot(x, x.T).sum()
>>> y.infer_shape(x=(2, 3))[1]
[()]
"""
from ..base import MXNetError
from . import attribute as _attribute
from . import name as _name
from .graph import Node
from .symbol import Symbol

__all__ = ['_Symbol', 'apply']


def apply(op, inputs, attrs):
    """The node of registry operator ``op`` (parsed ``attrs``) on Symbols ``inputs`` (None for
    an absent optional one): a ``_Symbol``, or a list of them for several outputs."""
    entries = []
    for s in inputs:
        if s is None:
            continue
        if len(s._outputs) != 1:
            raise MXNetError("%s: an input is a group of %d outputs, single value is required"
                             % (op.name, len(s._outputs)))
        entries.append(s._outputs[0])
    name = _name.current().get(None, op.name.lower().lstrip('_') or op.name)
    node = Node(op, name, dict(attrs), entries, _attribute.current().get(None))
    n = node.num_outputs()
    if n == 1:
        return _Symbol([(node, 0)])
    return [_Symbol([(node, i)]) for i in range(n)]


def _np():
    from .. import numpy
    return numpy


def _method(name):
    def method(self, *args, **kwargs):
        return getattr(_np(), name)(self, *args, **kwargs)
    method.__name__ = name
    return method


def _binary(name, reflected=False):
    def method(self, other):
        f = getattr(_np(), name)
        return f(other, self) if reflected else f(self, other)
    method.__name__ = name
    return method


class _Symbol(Symbol):
    """A Symbol with NumPy's operators and methods (see the module docstring)."""
    __slots__ = ()

    def as_np_ndarray(self):
        return self

    def as_nd_ndarray(self):
        return Symbol(self._outputs)

    def __getitem__(self, key):
        if isinstance(key, (int, str)) and len(self._outputs) > 1:
            return _Symbol(Symbol.__getitem__(self, key)._outputs)
        from ..numpy.indexing import symbolic_getitem
        return symbolic_getitem(self, key)

    def __iter__(self):
        return (self[i] for i in range(len(self._outputs)))

    @property
    def T(self):
        return _np().transpose(self)

    def astype(self, dtype, **kwargs):
        return _np().multiarray._invoke('_npi_astype', (self,), dtype=dtype)

    def reshape(self, *shape, **kwargs):
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        return _np().reshape(self, shape)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = axes[0]
        return _np().transpose(self, axes or None)

    __add__ = _binary('add')
    __radd__ = _binary('add', True)
    __sub__ = _binary('subtract')
    __rsub__ = _binary('subtract', True)
    __mul__ = _binary('multiply')
    __rmul__ = _binary('multiply', True)
    __truediv__ = _binary('true_divide')
    __rtruediv__ = _binary('true_divide', True)
    __mod__ = _binary('mod')
    __rmod__ = _binary('mod', True)
    __pow__ = _binary('power')
    __rpow__ = _binary('power', True)
    __matmul__ = _binary('matmul')
    __eq__ = _binary('equal')
    __ne__ = _binary('not_equal')
    __lt__ = _binary('less')
    __le__ = _binary('less_equal')
    __gt__ = _binary('greater')
    __ge__ = _binary('greater_equal')
    __hash__ = None

    def __neg__(self):
        return _np().negative(self)

    def __abs__(self):
        return _np().absolute(self)


for _n in ('dot', 'sum', 'mean', 'max', 'min', 'prod', 'std', 'var', 'argmax', 'argmin', 'all',
           'any', 'squeeze', 'swapaxes', 'flatten', 'clip', 'cumsum', 'repeat', 'tile',
           'expand_dims', 'split', 'sqrt', 'exp', 'log', 'abs'):
    setattr(_Symbol, _n, _method(_n))
_Symbol.flatten = lambda self, order='C': _np().reshape(self, (-1,))
