"""neomx: the MXNet 1.x / Gluon programming model on PyTorch's kernels.

>>> import neomx as mx
>>> (mx.nd.ones((2, 2)) * 3).asnumpy().tolist()
[[3.0, 3.0], [3.0, 3.0]]
"""
__version__ = '0.1.0'

from . import base
from .base import MXNetError
from . import context
from .context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus
from . import engine
from . import ops
from . import ndarray
from . import ndarray as nd
from . import _capi  # noqa: F401  (mxnet.base._LIB)
from . import autograd
from . import random
from . import random as rnd
from . import symbol
from . import symbol as sym
from .symbol import AttrScope
from .symbol import name, attribute
from . import profiler
from . import optimizer, lr_scheduler, kvstore, metric
from . import kvstore as kv
from . import initializer
from . import initializer as init
from . import numpy
from . import numpy as np
from . import numpy_extension
from . import numpy_extension as npx
from . import numpy_op_signature  # noqa: F401  (NumPy's signatures on mx.np functions)
from . import recordio
from . import image
from . import image as img
from . import contrib
from . import gluon
from . import io
from . import model, callback, monitor, module
from . import module as mod
from . import monitor as mon
from . import util, runtime
from . import operator
from .util import (is_np_array, is_np_shape, np_array, np_shape, set_np_shape, use_np,
                   use_np_array, use_np_shape)
from . import rnn
from .symbol import onnx
from . import visualization
from . import visualization as viz
from . import library

__all__ = ['MXNetError', 'Context', 'cpu', 'gpu', 'cpu_pinned', 'current_context', 'num_gpus',
           'engine', 'ndarray', 'nd', 'autograd', 'random', 'rnd', 'context', 'base', 'test_utils',
           'symbol', 'sym', 'profiler', 'optimizer', 'lr_scheduler', 'kvstore', 'kv', 'metric',
           'initializer', 'init', 'gluon', 'io', 'model', 'callback', 'monitor', 'mon',
           'module', 'mod', 'rnn', 'onnx', 'util', 'runtime', 'operator', 'is_np_array',
           'is_np_shape', 'np_array', 'np_shape', 'set_np_shape', 'use_np', 'use_np_array',
           'use_np_shape', 'numpy', 'np', 'numpy_extension', 'npx', 'recordio', 'image', 'img',
           'contrib', 'visualization', 'viz', 'library', '__version__']


def __getattr__(name):
    # test_utils imports neomx itself (MXNet's test files take ``mx`` from its star import):
    # loaded at its first use, so that importing neomx does not import it in a cycle
    if name == 'test_utils':
        import importlib
        return importlib.import_module('.test_utils', __name__)
    raise AttributeError("module 'neomx' has no attribute %r" % name)


def _freeze_import_garbage():
    # The engine keeps a few small objects alive per queued operation; with torch's hundreds of
    # thousands of long-lived objects in the heap, every full collection the garbage collector
    # starts then walks all of them. Moving what exists after import into the permanent
    # generation keeps collections proportional to the program's own objects.
    # NEOMX_GC_FREEZE=0 turns this off.
    import gc
    import os
    if os.environ.get('NEOMX_GC_FREEZE', '1') != '0':
        gc.freeze()


_freeze_import_garbage()
