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
from . import autograd
from . import random

__all__ = ['MXNetError', 'Context', 'cpu', 'gpu', 'cpu_pinned', 'current_context', 'num_gpus',
           'engine', 'ndarray', 'nd', 'autograd', 'random', 'context', 'base', '__version__']
