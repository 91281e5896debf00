"""``gluon.data.vision``: image datasets and transforms."""
import importlib as _importlib

from .datasets import *  # noqa: F401,F403


def __getattr__(name):
    # ``transforms`` is made of Blocks: imported on first use, since gluon's own modules
    # (parameter, utils) import this package before the Block classes exist.
    if name == 'transforms':
        return _importlib.import_module(__name__ + '.transforms')
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
