"""``mx.sym.sparse``: the operators MXNet lists for sparse storage types. neomx keeps every
array dense (see ``mx.nd.sparse``), so each is the operator of the same name in ``mx.sym``.

>>> import neomx as mx
>>> mx.sym.sparse.dot is mx.sym.dot
True
"""


def __getattr__(name):
    if name.startswith('_'):
        raise AttributeError(name)
    from .. import symbol
    f = getattr(symbol, name, None)
    if f is None or not hasattr(f, 'op'):
        raise AttributeError("module 'neomx.symbol.sparse' has no operator %r" % (name,))
    return f
