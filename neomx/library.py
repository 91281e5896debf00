"""``mx.library``: MXNet's loader of C++ extension libraries (custom operators, subgraph
partitioners and graph passes compiled against MXNet's ``lib_api.h``). neomx has no C++
library to load them into: ``load`` checks the path as MXNet does, then raises an MXNetError
saying so. Python's equivalents are ``mx.operator.register`` (custom operators) and
``neomx.symbol.subgraph.register_backend`` (partitioners).

>>> import neomx as mx
>>> mx.library.load('/nonexistent/libcustom.so')
Traceback (most recent call last):
  ...
neomx.base.MXNetError: load path /nonexistent/libcustom.so does NOT exist
"""
import os

from .base import MXNetError

__all__ = ['load', 'compiled_with_gcc_cxx11_abi']


def load(path, verbose=True):
    """Raises MXNetError: for a path that does not exist, is not absolute or is not a
    library file (``.so``, ``.dll``), as MXNet does; else because neomx cannot load it."""
    if not os.path.exists(path):
        raise MXNetError("load path %s does NOT exist" % path)
    if not os.path.isabs(path):
        raise MXNetError("load path %s is not an absolute path" % path)
    if os.path.splitext(path)[1] not in ('.so', '.dll'):
        raise MXNetError("load path %s is NOT a library file" % path)
    raise MXNetError("mx.library.load(%r): neomx cannot load MXNet C++ extension libraries "
                     "(their operators, partitioners and passes are compiled against MXNet's "
                     "C API); register Python custom operators with mx.operator.register and "
                     "subgraph backends with neomx.symbol.subgraph.register_backend" % path)


def compiled_with_gcc_cxx11_abi():
    """Whether the library extensions must use the C++11 ABI: neomx's torch's answer."""
    import torch
    return bool(torch.compiled_with_cxx11_abi())
