"""``sym.contrib``: operators registered as ``_contrib_<name>``, composites, and control flow
(``foreach``, ``while_loop``, ``cond``: symbol/control_flow.py)."""
import math

from ..ops import registry as _registry
from .control_flow import cond, foreach, while_loop
from .symbol import _OPS

__all__ = ['rand_zipfian', 'BatchNormWithReLU', 'foreach', 'while_loop', 'cond']


def rand_zipfian(true_classes, num_sampled, range_max):
    """``nd.contrib.rand_zipfian`` as a graph: (sampled classes, expected counts of
    ``true_classes``, expected counts of the sampled classes)."""
    from . import random
    log_range = math.log(range_max + 1)
    u = random.uniform(0, log_range, shape=(num_sampled,), dtype='float64')
    sampled = _OPS['Cast'](_OPS['exp'](u) - 1, dtype='int64') % range_max

    def expected(classes):
        c = _OPS['Cast'](classes, dtype='float64')
        return _OPS['log']((c + 2.0) / (c + 1.0)) * (num_sampled / log_range)
    return sampled, expected(true_classes), expected(sampled)


def BatchNormWithReLU(data, gamma, beta, moving_mean, moving_var, name=None, **kwargs):
    """``BatchNorm`` (same arguments) followed by a ReLU: MXNet 1.9.1's fused MKL-DNN
    operator, here the two operators."""
    out = _OPS['BatchNorm'](data, gamma, beta, moving_mean, moving_var, **kwargs)
    return _OPS['relu'](out, name=name)


def __getattr__(name):
    full = '_contrib_' + name
    if _registry.exists(full):
        return _OPS[full]
    from ..ops.contrib import UNAVAILABLE, unavailable
    if name in UNAVAILABLE:
        return unavailable(name, 'sym.contrib')
    raise AttributeError("neomx.sym.contrib has no operator %r" % name)
