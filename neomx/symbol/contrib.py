"""``sym.contrib``: operators registered as ``_contrib_<name>``, and composites."""
import math

from ..ops import registry as _registry
from .symbol import _OPS

__all__ = ['rand_zipfian']


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


def __getattr__(name):
    full = '_contrib_' + name
    if _registry.exists(full):
        return _OPS[full]
    raise AttributeError("neomx.sym.contrib has no operator %r" % name)
