"""The KVStore interface, its registry, and what every neomx store shares.

``KVStoreBase`` is MXNet's abstract interface (``broadcast``, ``pushpull``, ``set_optimizer``,
``is_capable``, ``save/load_optimizer_states``, ``type``, ``rank``, ``num_workers``) with its
registry of user stores. ``KVStore`` implements the user-facing calls of MXNet's KVStore
(``init``, ``push``, ``pull``, ``pushpull``, ``broadcast``) once: it checks and groups the
keys and values, and hands lists of them to four methods a store kind defines:

- ``_init(keys, values)``: store a copy of each value;
- ``_reduce(keys, value_lists)``: one array per key holding the sum of its values;
- ``_assign(keys, merged)``: make the stored value of each key ``merged`` (no updater);
- ``_pull(keys, out_lists)``: copy each stored value into its outputs.

With an updater (``set_optimizer``), a push runs ``updater(keys, merged, stored)`` instead of
``_assign``. The local kinds live in ``local.py``; the distributed kinds subclass them.
"""
import warnings

from .. import atomic
from ..base import MXNetError
from ..ndarray import NDArray
from ..ndarray.utils import _write_atomic
from ..optimizer import Updater, get_updater

__all__ = ['KVStoreBase', 'KVStore', 'TestStore']


class KVStoreBase:
    """The abstract key-value store of data-parallel training (MXNet's ``KVStoreBase``).

    >>> import neomx as mx
    >>> @mx.kv.KVStoreBase.register
    ... class MyStore(mx.kv.KVStoreBase):
    ...     pass
    >>> type(mx.kv.create('mystore')).__name__
    'MyStore'
    """
    OPTIMIZER = 'optimizer'
    kv_registry = {}

    @staticmethod
    def register(klass):
        """Registers a store class under its lower-cased name, for ``kv.create``."""
        if not isinstance(klass, type):
            raise TypeError("KVStoreBase.register expects a class, got %r" % (klass,))
        name = klass.__name__.lower()
        if name in KVStoreBase.kv_registry:
            old = KVStoreBase.kv_registry[name]
            warnings.warn('WARNING: New kvstore %s.%s is overriding existing kvstore %s.%s'
                          % (klass.__module__, klass.__name__, old.__module__, old.__name__))
        KVStoreBase.kv_registry[name] = klass
        return klass

    def broadcast(self, key, value, out, priority=0):
        """Stores ``value`` under ``key`` and copies it into ``out``."""
        raise NotImplementedError()

    def pushpull(self, key, value, out=None, priority=0):
        """Sums ``value`` into the store and copies the result into ``out`` (or ``value``)."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer):
        raise NotImplementedError()

    def is_capable(self, capability):
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        raise NotImplementedError()

    @property
    def type(self):
        raise NotImplementedError()

    @property
    def rank(self):
        raise NotImplementedError()

    @property
    def num_workers(self):
        raise NotImplementedError()


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A store for testing (MXNet's ``teststore``): sums and copies with plain array
    operations, one key per call, and no optimizer.

    >>> import neomx as mx
    >>> kv = mx.kv.create('teststore')
    >>> vals = [mx.nd.ones((2,)), mx.nd.ones((2,)) * 2]
    >>> kv.pushpull(0, vals)
    >>> vals[0].asnumpy().tolist()
    [3.0, 3.0]
    """

    def broadcast(self, key, value, out, priority=0):
        for o in out if isinstance(out, list) else [out]:
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        if isinstance(value, NDArray):
            if out is not None:
                for o in out if isinstance(out, list) else [out]:
                    o[:] = value
            return
        ctx = value[0].context
        reduced = value[0].as_in_context(ctx).copy()
        for v in value[1:]:
            reduced += v.as_in_context(ctx)
        for o in value if out is None else (out if isinstance(out, list) else [out]):
            o[:] = reduced

    @staticmethod
    def is_capable(capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError('Unknown capability: {}'.format(capability))

    @property
    def type(self):
        return 'teststore'

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1


def _same_array(a, b):
    return a is b or (a._var is b._var and a._view == b._view and a.shape == b.shape)


def _check_key(key):
    if isinstance(key, bool) or not isinstance(key, (int, str)):
        raise MXNetError("KVStore: a key must be an int or a str, got %r" % (key,))
    return isinstance(key, str)


def _key_values(op, key, value, one_per_key=False):
    """``(keys, value_lists)`` from MXNet's call forms: a key with an array or a list of
    arrays, or a list of keys with a list of (lists of) arrays. Repeated keys are merged in
    order of first appearance."""
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(key):
            raise MXNetError("KVStore.%s: %d keys need a list of %d values, got %r"
                             % (op, len(key), len(key), type(value).__name__))
        pairs = list(zip(key, value))
        kinds = {_check_key(k) for k in key}
        if len(kinds) > 1:
            raise MXNetError("KVStore.%s: inconsistent types of keys detected (all int or all "
                             "str): %r" % (op, list(key)))
    else:
        _check_key(key)
        pairs = [(key, value)]
    grouped = {}
    for k, v in pairs:
        vals = [v] if isinstance(v, NDArray) else v
        if not isinstance(vals, (list, tuple)) or not vals or \
                not all(isinstance(x, NDArray) for x in vals):
            raise MXNetError("KVStore.%s: the value of key %r must be an NDArray or a list of "
                             "NDArrays, got %r" % (op, k, v))
        if one_per_key and (len(vals) != 1 or k in grouped):
            raise MXNetError("KVStore.%s: duplicate init of key %r. Please double check if you "
                             "called kv.init or kv.broadcast with this key multiple times"
                             % (op, k))
        grouped.setdefault(k, []).extend(vals)
    return list(grouped), list(grouped.values())


class KVStore(KVStoreBase):
    """MXNet's KVStore calls over the four data-moving methods of a store kind (see the
    module docstring). ``priority`` is accepted and ignored: the engine orders operations by
    their data."""

    def __init__(self, kind, name=None):
        self._kind = kind              # how it behaves: 'local', 'device', 'dist_sync', ...
        self._name = name or kind      # what ``type`` reports (MXNet's aliases included)
        self._updater = None
        self._compression = None

    def __repr__(self):
        return '<KVStore %s>' % self._name

    # -- the calls -----------------------------------------------------------------------
    def init(self, key, value):
        """Stores a copy of ``value`` under ``key`` (or of each value under each key).

        >>> import neomx as mx
        >>> kv = mx.kv.create('local')
        >>> kv.init('w', mx.nd.ones((2,)) * 2)
        >>> out = mx.nd.zeros((2,))
        >>> kv.pull('w', out=out)
        >>> out.asnumpy().tolist()
        [2.0, 2.0]
        """
        keys, vals = _key_values('init', key, value, one_per_key=True)
        self._check_key_type('init', keys)
        for k in keys:
            if self._has(k):
                raise MXNetError("KVStore.init: duplicate init of key %r. Please double check if "
                                 "you called kv.init or kv.broadcast with this key multiple times"
                                 % (k,))
        self._init(keys, [v[0] for v in vals])

    def push(self, key, value, priority=0):
        """Sums the values pushed for each key (one per device, say) and stores the sum, or,
        with an optimizer set, updates the stored value with it.

        >>> import neomx as mx
        >>> kv = mx.kv.create('device')
        >>> kv.init(3, mx.nd.zeros((2,)))
        >>> kv.push(3, [mx.nd.ones((2,), ctx=mx.cpu(0)), mx.nd.ones((2,), ctx=mx.cpu(1))])
        >>> out = mx.nd.zeros((2,))
        >>> kv.pull(3, out=out)
        >>> out.asnumpy().tolist()
        [2.0, 2.0]
        """
        keys, vals = _key_values('push', key, value)
        self._check_key_type('push', keys)
        self._check_inited('push', keys, vals)
        merged = self._reduce(keys, vals)
        if self._updater is None:
            self._assign(keys, merged)
        else:
            self._apply_updater(keys, merged)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copies the stored value of each key into ``out`` (an array or a list of them).
        With ``ignore_sparse`` (the default), sparse outputs are left as they are: pull
        row_sparse values with ``row_sparse_pull``."""
        if out is None:
            raise MXNetError("KVStore.pull: out= is required (the arrays to copy into)")
        keys, outs = _key_values('pull', key, out)
        self._check_key_type('pull', keys)
        self._check_inited('pull', keys, outs)
        if ignore_sparse:
            outs = [[o for o in os_ if o.stype == 'default'] for os_ in outs]
            keys, outs = [k for k, o in zip(keys, outs) if o], [o for o in outs if o]
        if keys:
            self._pull(keys, outs)

    def pushpull(self, key, value, out=None, priority=0):
        """``push`` then ``pull`` into ``out`` (into ``value`` when ``out`` is None): with the
        values of several devices, an allreduce.

        >>> import neomx as mx
        >>> kv = mx.kv.create('device')
        >>> grads = [mx.nd.ones((2,), ctx=mx.cpu(i)) * (i + 1) for i in range(2)]
        >>> kv.init(0, grads[0])
        >>> kv.pushpull(0, grads)
        >>> [g.asnumpy().tolist() for g in grads]
        [[3.0, 3.0], [3.0, 3.0]]
        """
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key, value, out, priority=0):
        """``init(key, value)`` then ``pull(key, out)``; an output that is the value itself is
        left alone (a copy onto itself would only bump its version, which a recorded graph
        reading it would reject)."""
        self.init(key, value)
        keys, vals = _key_values('broadcast', key, value, one_per_key=True)
        _, outs = _key_values('broadcast', key, out)
        outs = [[o for o in os_ if not _same_array(o, v[0])] for os_, v in zip(outs, vals)]
        keys, outs = [k for k, o in zip(keys, outs) if o], [o for o in outs if o]
        if keys:
            self.pull(keys, outs, priority, ignore_sparse=False)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Copies the rows ``row_ids`` of the stored value of each key (a row_sparse array,
        as in MXNet) into the row_sparse arrays ``out`` (the other rows become 0). ``row_ids``
        is an array of row indices (any shape) or a list of them, one per output.

        >>> import neomx as mx
        >>> kv = mx.kv.create('local')
        >>> kv.init('e', mx.nd.ones((3, 2)).tostype('row_sparse'))
        >>> out = mx.nd.zeros((3, 2), stype='row_sparse')
        >>> kv.row_sparse_pull('e', out=out, row_ids=mx.nd.array([0, 2]))
        >>> out.asnumpy()[:, 0].tolist()
        [1.0, 0.0, 1.0]
        """
        if out is None or row_ids is None:
            raise MXNetError("KVStore.row_sparse_pull: out= and row_ids= are required")
        keys, outs = _key_values('row_sparse_pull', key, out)
        self._check_key_type('row_sparse_pull', keys)
        self._check_inited('row_sparse_pull', keys, outs)
        flat_outs = [o for os_ in outs for o in os_]
        for o in flat_outs:
            if o.stype != 'row_sparse':
                raise MXNetError("KVStore.row_sparse_pull: outputs must be row_sparse arrays, "
                                 "got storage type %r (use pull for dense arrays)" % (o.stype,))
        ids = row_ids if isinstance(row_ids, (list, tuple)) else [row_ids]
        ids = [i for x in ids for i in (x if isinstance(x, (list, tuple)) else [x])]
        if len(ids) == 1:
            ids = ids * len(flat_outs)
        if len(ids) != len(flat_outs) or not all(isinstance(i, NDArray) for i in ids):
            raise MXNetError("KVStore.row_sparse_pull: expected one NDArray of row ids per "
                             "output (%d outputs), got %r" % (len(flat_outs), row_ids))
        from ..ndarray.sparse import retain
        it = iter(ids)
        for k, os_ in zip(keys, outs):
            src = self._stored([k])[0]
            for o in os_:
                rid = next(it)
                retain(src.as_in_context(o.context), rid.as_in_context(o.context)).copyto(o)

    def set_gradient_compression(self, compression_params):
        """Quantises pushed values to 2 bits (MXNet's ``{'type': '2bit', 'threshold': t}``,
        t = 0.5 by default): each device adds a value to its residual, sends ``+t`` where the
        residual is at least ``t``, ``-t`` where it is at most ``-t``, 0 elsewhere, and keeps
        the rest in the residual. Not available for 'local', as in MXNet.

        >>> import neomx as mx
        >>> kv = mx.kv.create('device')
        >>> kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})
        >>> kv.init(0, mx.nd.zeros((3,)))
        >>> kv.push(0, mx.nd.array([0.3, 0.6, -0.9]))
        >>> out = mx.nd.zeros((3,))
        >>> kv.pull(0, out=out)
        >>> out.asnumpy().tolist()
        [0.0, 0.5, -0.5]
        """
        if self._kind == 'local':
            raise MXNetError("Gradient compression is not supported for this type of kvstore "
                             "('local')")
        params = dict(compression_params)
        if 'type' not in params:
            raise MXNetError("set_gradient_compression: Required parameter type of string is not "
                             "presented (expected e.g. {'type': '2bit', 'threshold': 0.5})")
        kind = params.pop('type')
        if kind != '2bit':
            raise MXNetError("Unknown type for gradient compression %s (the one type is '2bit')"
                             % (kind,))
        threshold = float(params.pop('threshold', 0.5))
        if not threshold > 0:
            raise MXNetError("set_gradient_compression: threshold must be greater than 0, got %r"
                             % (threshold,))
        if params:
            raise MXNetError("set_gradient_compression: unknown parameters %s (expected type "
                             "and threshold)" % ', '.join(sorted(params)))
        self._compression = threshold

    # -- optimizer on the store -----------------------------------------------------------
    def set_optimizer(self, optimizer):
        """Updates stored values with ``optimizer`` at each push (``update_on_kvstore``).

        >>> import neomx as mx
        >>> kv = mx.kv.create('local')
        >>> kv.init(3, mx.nd.zeros((2,)))
        >>> kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
        >>> kv.push(3, mx.nd.ones((2,)))
        >>> out = mx.nd.zeros((2,))
        >>> kv.pull(3, out=out)
        >>> [round(x, 6) for x in out.asnumpy().tolist()]
        [-0.1, -0.1]
        """
        self._set_updater(get_updater(optimizer))

    def _set_updater(self, updater):
        """Sets ``updater(key, merged, stored)``, run on each push instead of storing the sum."""
        self._updater = updater

    def _apply_updater(self, keys, merged):
        stored = self._stored(keys)
        upd = self._updater
        if isinstance(upd, Updater):
            # One call per device holding the values: one fused update operation each.
            groups = {}
            for k, m, s in zip(keys, merged, stored):
                groups.setdefault(s.context, []).append((k, m, s))
            for items in groups.values():
                ks, ms, ss = zip(*items)
                upd(list(ks), list(ms), list(ss))
        else:
            for k, m, s in zip(keys, merged, stored):
                upd(k, m, s)

    def is_capable(self, capability):
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError('Unknown capability: {}'.format(capability))

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Writes the updater's states (and the optimizer with ``dump_optimizer``) to
        ``fname``, atomically."""
        if self._updater is None:
            raise MXNetError("KVStore.save_optimizer_states: no optimizer is set on this store "
                             "(call set_optimizer first)")
        _write_atomic(fname, self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname):
        if self._updater is None:
            raise MXNetError("KVStore.load_optimizer_states: no optimizer is set on this store "
                             "(call set_optimizer first)")
        self._updater.set_states(atomic.read(fname))

    def _barrier(self):
        """Waits for every worker: with one process there is nothing to wait for."""

    def _send_command_to_servers(self, head, body):
        raise MXNetError("KVStore %r has no servers to send commands to" % self._name)

    @property
    def type(self):
        return self._name

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1

    # -- checks shared by the calls ---------------------------------------------------------
    def _check_key_type(self, op, keys):
        """A store takes int keys or str keys, whichever it was first given (as MXNet's)."""
        is_str = isinstance(keys[0], str)
        known = getattr(self, '_str_keys', None)
        if known is None:
            self._str_keys = is_str
        elif known != is_str:
            raise MXNetError("KVStore.%s: this store uses %s keys, got %r (keys of one store "
                             "are all int or all str)" % (op, 'str' if known else 'int', keys[0]))
    def _check_inited(self, op, keys, lists):
        for k, arrays in zip(keys, lists):
            if not self._has(k):
                raise MXNetError("KVStore.%s: key %r has not been inited (call kv.init or "
                                 "kv.broadcast first)" % (op, k))
            shape = self._shape(k)
            for a in arrays:
                if a.shape != shape:
                    raise MXNetError("KVStore.%s: key %r holds shape %s but an array of shape %s "
                                     "was given" % (op, k, shape, a.shape))

    # -- what a store kind defines --------------------------------------------------------
    def _has(self, key):
        raise NotImplementedError()

    def _shape(self, key):
        raise NotImplementedError()

    def _stored(self, keys):
        raise NotImplementedError()

    def _init(self, keys, values):
        raise NotImplementedError()

    def _reduce(self, keys, value_lists):
        raise NotImplementedError()

    def _assign(self, keys, merged):
        raise NotImplementedError()

    def _pull(self, keys, out_lists):
        raise NotImplementedError()
