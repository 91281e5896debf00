"""``mx.sym``: symbolic graphs. Every registered operator is here as ``sym.<name>``.

>>> import neomx as mx
>>> x = mx.sym.var('x')
>>> y = mx.sym.relu(x * 2 + 1)
>>> y.eval(x=mx.nd.array([-1.0, 1.0]))[0].asnumpy().tolist()
[0.0, 3.0]
"""
from . import name, attribute
from .attribute import AttrScope
from .name import NameManager, Prefix
from .symbol import (Symbol, var, Variable, Group, load, load_json, NotImplementedForSymbol,
                     pow, power, maximum, minimum, hypot, zeros, ones, full, arange, linspace,
                     eye, split_v2, histogram, make_namespace as _make_namespace)
from . import _internal, contrib, linalg, random, sparse  # noqa: F401
from . import image  # noqa: F401
from .cached_op import CachedOp
from .executor import Executor
from .recorded import get_symbol as _get_symbol
from .. import autograd as _autograd, ndarray as _ndarray

# Names MXNet gives the layers below that are defined here: autograd.get_symbol (its result is
# a Symbol) and nd.CachedOp.
_autograd.get_symbol = _get_symbol
_ndarray.CachedOp = CachedOp

_make_namespace(globals())

__all__ = ['Symbol', 'var', 'Variable', 'Group', 'load', 'load_json', 'AttrScope',
           'NameManager', 'Prefix', 'pow', 'power', 'maximum', 'minimum', 'hypot', 'zeros',
           'ones', 'full', 'arange', 'linspace', 'eye', 'split_v2', 'histogram', 'name', 'attribute', 'random', 'contrib',
           'linalg', 'sparse', 'CachedOp', 'Executor']


def _OPS_BY_NAME(name):
    """``sym.<name>`` for registry operator ``name`` (hidden ones included)."""
    from .symbol import _op_fn
    return _op_fn(name)


def __getattr__(name):
    # sym.np / sym.npx: the NumPy interface's functions, which build nodes on mx.np symbols
    # (F.np.dot in a hybrid_forward traced with F = sym).
    if name == 'np':
        from .. import numpy
        return numpy
    if name == 'npx':
        from .. import numpy_extension
        return numpy_extension
    raise AttributeError("module 'neomx.symbol' has no attribute %r" % (name,))
