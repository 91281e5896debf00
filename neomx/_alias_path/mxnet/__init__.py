"""``import mxnet`` under ``neomx run``: this module replaces itself with neomx's ``mxnet`` module
(neomx's namespace under MXNet's version) and installs the alias for ``mxnet.*`` (see
neomx/_mxnet_alias.py)."""
import sys

from neomx import _mxnet_alias

_mxnet_alias.install()
sys.modules[__name__] = _mxnet_alias.alias_module()
