"""``import mxnet`` under ``neomx run``: this module replaces itself with neomx and installs
the alias for ``mxnet.*`` (see neomx/_mxnet_alias.py)."""
import sys

import neomx
from neomx import _mxnet_alias

_mxnet_alias.install()
sys.modules[__name__] = neomx
