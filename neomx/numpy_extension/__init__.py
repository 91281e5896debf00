"""``mx.npx`` (``mx.numpy_extension``): the operators MXNet adds to NumPy's interface (neural
network layers, ``pick``, ``sequence_mask``, ``one_hot``, ...) and the switches of NumPy
semantics.

>>> from neomx import np, npx
>>> npx.set_np()
>>> npx.is_np_array()
True
>>> npx.relu(np.array([-1.0, 2.0]))
array([0., 2.])
>>> npx.reset_np()
"""
from ..context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus, gpu_memory_info
from ..util import is_np_shape, is_np_array, set_np, reset_np, get_cuda_compute_capability
from ..ndarray import waitall
from ._op import *  # noqa: F401,F403
from ._op import __all__ as _op_all
from . import random  # noqa: F401
from .utils import save, load

__all__ = list(_op_all) + ['set_np', 'reset_np', 'is_np_array', 'is_np_shape', 'waitall',
                           'random', 'save', 'load', 'Context', 'cpu', 'gpu', 'cpu_pinned',
                           'current_context', 'num_gpus', 'gpu_memory_info',
                           'get_cuda_compute_capability']


def _install():
    # nd.npx (F.npx in a hybrid_forward called on arrays) is this module
    import sys
    from .. import ndarray
    ndarray.npx = sys.modules[__name__]


_install()
