"""``mx.sym.sparse``: the operators MXNet lists for sparse storage types: ``_sparse_<name>``
as ``<name>`` (``retain``), and every other operator of ``mx.sym`` under its own name (their
storage-type rules are those of ``mx.nd.sparse``).

>>> import neomx as mx
>>> mx.sym.sparse.dot is mx.sym.dot
True
>>> mx.sym.sparse.retain(mx.sym.var('x'), mx.sym.var('i')).list_arguments()
['x', 'i']
"""


def __getattr__(name):
    if name.startswith('_'):
        raise AttributeError(name)
    from .. import symbol
    from .symbol import _OPS
    f = _OPS.get('_sparse_' + name) or getattr(symbol, name, None)
    if f is None or not hasattr(f, 'op'):
        raise AttributeError("module 'neomx.symbol.sparse' has no operator %r" % (name,))
    return f
