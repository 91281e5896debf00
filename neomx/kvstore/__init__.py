"""``mx.kv``: key-value stores that sum gradients across devices and hold shared weights.

>>> import neomx as mx
>>> kv = mx.kv.create('device')
>>> kv.init(0, mx.nd.zeros((2,)))
>>> kv.push(0, [mx.nd.ones((2,), ctx=mx.cpu(0)), mx.nd.ones((2,), ctx=mx.cpu(1))])
>>> out = mx.nd.zeros((2,))
>>> kv.pull(0, out=out)
>>> out.asnumpy().tolist()
[2.0, 2.0]
"""
import importlib

from ..base import MXNetError
from .base import KVStore, KVStoreBase, TestStore  # noqa: F401  (registers 'teststore')
from .local import LocalKVStore

__all__ = ['create', 'KVStoreBase', 'KVStore', 'LocalKVStore']

# MXNet's names of the single-process stores, and the kind each behaves as.
_LOCAL_KINDS = {'local': 'local', 'local_update_cpu': 'local', 'local_allreduce_cpu': 'local',
                'device': 'device', 'local_allreduce_device': 'device', 'nccl': 'device'}

# Kinds implemented by other modules of this package: kind prefix -> module name. The module
# registers its classes in ``DIST_KINDS`` when imported.
_PLUGINS = {'dist': 'dist', 'horovod': 'horovod', 'byteps': 'byteps'}
DIST_KINDS = {}


def create(name='local'):
    """A new KVStore of kind ``name``: 'local' (sums in host memory) or 'device' (sums on the
    devices), a class registered with ``KVStoreBase.register``, or a distributed kind
    ('dist_sync', 'dist_device_sync', 'dist_async') when its module is present."""
    if not isinstance(name, str):
        raise TypeError('name must be a string, got %r' % (name,))
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if name in _LOCAL_KINDS:
        return LocalKVStore(_LOCAL_KINDS[name], name)
    for prefix, module in _PLUGINS.items():
        if name.startswith(prefix):
            if name not in DIST_KINDS:
                try:
                    importlib.import_module('.' + module, __name__)
                except ModuleNotFoundError as e:
                    if e.name != __name__ + '.' + module:
                        raise
            if name in DIST_KINDS:
                return DIST_KINDS[name](name)
            raise MXNetError("KVStore type %r (training across processes) is not available in "
                             "this neomx; use 'local' or 'device' to train on the devices of "
                             "one process" % name)
    raise MXNetError("unknown KVStore type %r: expected 'local', 'device', a distributed kind "
                     "('dist_sync', 'dist_device_sync', 'dist_async') or a class registered "
                     "with KVStoreBase.register" % name)
