"""The stores of one process: ``local`` (values summed and kept in host memory, on ``cpu(0)``)
and ``device`` (summed on the devices holding the values, each key on one of them, chosen to
balance the bytes each device sums).

Every call moves all of its keys with a few engine operations, whatever their number:

- values on a device other than the key's merge device are first copied into staging
  buffers there, one operation per (source, merge device) pair, on the copy worker of the
  merge device, so the copies overlap computation (host contexts share memory and skip it);
- one operation per merge device sums the values of all its keys;
- a pull copies each stored value into the outputs, one operation per (merge device,
  output device) pair, again on copy workers.

With an optimizer set, the stored value of a key lives on its merge device and the Updater
applies one fused update operation per device.
"""
import numpy as np
import torch

from .. import engine as _engine
from ..base import dtype_torch
from ..context import cpu
from ..ndarray import zeros
from .base import KVStore

__all__ = ['LocalKVStore']


def _out_tensor(arr):
    """The tensor of ``arr`` to write into (allocated if no operation produced it yet)."""
    var = arr._var
    if var.tensor is None and arr._view is None:
        var.tensor = torch.empty(arr.shape, dtype=dtype_torch(arr._dtype),
                                 device=arr.context.torch_device)
    return arr._tensor(write=True)


def _copy_op(pairs, ctx, name, copy):
    """Pushes one operation on ``ctx`` copying each ``(src, dst)`` of ``pairs``."""
    reads = [s._var for s, _ in pairs]
    writes = [d._var for _, d in pairs]

    def fn():
        for s, d in pairs:
            _out_tensor(d).copy_(s._tensor(), non_blocking=True)
    _engine.push(fn, reads, writes, ctx, name, copy=copy)


class LocalKVStore(KVStore):
    """The ``local`` and ``device`` kinds (see the module docstring).

    Distributed kinds subclass this class and override :meth:`_reduce_workers`, which sums
    the merged values of this process with those of the other processes.

    >>> import neomx as mx
    >>> kv = mx.kv.create('device')
    >>> kv.type, kv.rank, kv.num_workers
    ('device', 0, 1)
    """

    def __init__(self, kind='local', name=None):
        super().__init__(kind, name)
        self._store = {}      # key -> the stored value
        self._merge = {}      # key -> the context its values are summed on
        self._load = {}       # context -> bytes of the keys it sums ('device')
        self._merged = {}     # key -> the sum of a push, when an updater consumes it
        self._staging = {}    # (key, source context) -> copy of a value on the merge device
        self._residual = {}   # (key, source context) -> 2-bit compression residual, quantised

    def _has(self, key):
        return key in self._store

    def _shape(self, key):
        return self._store[key].shape

    def _stored(self, keys):
        return [self._store[k] for k in keys]

    def _init(self, keys, values):
        for k, v in zip(keys, values):
            self._store[k] = v.copyto(cpu(0) if self._kind == 'local' else v.context)

    def _assign_merge_contexts(self, keys, lists):
        """Gives each key seen for the first time its merge device: ``cpu(0)`` for 'local';
        for 'device', among the devices of its values, the one summing the fewest bytes so far
        (largest keys first, as MXNet's CommDevice does)."""
        new = [(k, vals) for k, vals in zip(keys, lists) if k not in self._merge]
        new.sort(key=lambda kv: -kv[1][0].size)
        for k, vals in new:
            if self._kind == 'local':
                self._merge[k] = cpu(0)
                continue
            ctxs = []
            for v in vals:
                if v.context not in ctxs:
                    ctxs.append(v.context)
            m = min(ctxs, key=lambda c: self._load.get(c, 0))
            self._load[m] = self._load.get(m, 0) + vals[0].size * np.dtype(vals[0].dtype).itemsize
            self._merge[k] = m

    def _target(self, key, like, ctx):
        """Where the sum of ``key`` goes: the stored value itself without an updater (moved
        to the merge device, as MXNet's store moves), else a merge buffer."""
        table = self._merged if self._updater is not None else self._store
        t = table.get(key)
        if t is None or t.context != ctx:
            # The sum keeps the storage type of what was pushed (row_sparse gradients stay so).
            t = table[key] = zeros(like.shape, ctx, dtype=like.dtype, stype=like.stype)
        return t

    def _staged(self, key, value, ctx):
        buf = self._staging.get((key, value.context))
        if buf is None or buf.context != ctx:
            buf = self._staging[(key, value.context)] = zeros(value.shape, ctx,
                                                              dtype=value.dtype)
        return buf

    def _reduce(self, keys, lists):
        self._assign_merge_contexts(keys, lists)
        by_merge = {}
        merged = []
        for k, vals in zip(keys, lists):
            m = self._merge[k]
            target = self._target(k, vals[0], m)
            merged.append(target)
            by_merge.setdefault(m, []).append((k, target, vals))
        for m, items in by_merge.items():
            self._sum_on(m, items)
        self._reduce_workers(keys, merged)
        if self._updater is not None:
            # The updater needs the weight where the gradient is.
            for k, t in zip(keys, merged):
                if self._store[k].context != t.context:
                    self._store[k] = self._store[k].copyto(t.context)
        return merged

    def _sum_on(self, m, items):
        """Sums the values of each item into its target with one operation on ``m``, after
        copying the values held on other devices into staging buffers on ``m``."""
        if self._compression is not None:
            items = self._quantize(items)
        dev = m.torch_device
        copies = {}
        sources = []
        for k, target, vals in items:
            srcs = []
            for v in vals:
                if v.context.torch_device == dev:
                    srcs.append(v)      # host memory: read in place
                else:
                    buf = self._staged(k, v, m)
                    copies.setdefault(v.context, []).append((v, buf))
                    srcs.append(buf)
            sources.append(srcs)
        for pairs in copies.values():
            _copy_op(pairs, m, '_kvstore_stage', copy=True)
        targets = [t for _, t, _ in items]
        reads = [s._var for srcs in sources for s in srcs]
        writes = [t._var for t in targets]

        def fn():
            ts = [_out_tensor(t) for t in targets]
            torch._foreach_copy_(ts, [srcs[0]._tensor() for srcs in sources])
            width = max(len(srcs) for srcs in sources)
            for j in range(1, width):
                rows = [i for i, srcs in enumerate(sources) if len(srcs) > j]
                torch._foreach_add_([ts[i] for i in rows], [sources[i][j]._tensor() for i in rows])
        _engine.push(fn, reads, writes, m, '_kvstore_reduce')

    def _quantize(self, items):
        """The items with each value replaced by its 2-bit quantisation (see
        ``set_gradient_compression``), computed on the value's device, one operation per
        device."""
        t = self._compression
        by_ctx = {}
        out = []
        for k, target, vals in items:
            qs = []
            for v in vals:
                bufs = self._residual.get((k, v.context))
                if bufs is None:
                    bufs = self._residual[(k, v.context)] = (
                        zeros(v.shape, v.context, dtype=v.dtype),
                        zeros(v.shape, v.context, dtype=v.dtype))
                by_ctx.setdefault(v.context, []).append((v,) + bufs)
                qs.append(bufs[1])
            out.append((k, target, qs))
        for ctx, triples in by_ctx.items():
            def fn(triples=triples):
                for v, r, q in triples:
                    rt, qt = r._tensor(), q._tensor()
                    rt.add_(v._tensor())
                    qt.zero_()
                    qt.masked_fill_(rt >= t, t)
                    qt.masked_fill_(rt <= -t, -t)
                    rt.sub_(qt)
            _engine.push(fn, [v._var for v, _, _ in triples],
                         [a._var for _, r, q in triples for a in (r, q)], ctx, '_kvstore_quantize')
        return out

    def _reduce_workers(self, keys, merged):
        """Sums ``merged`` across the processes of a distributed store; one process: nothing
        to do."""

    def _assign(self, keys, merged):
        for k, t in zip(keys, merged):
            self._store[k] = t

    def _pull(self, keys, out_lists):
        groups = {}
        for k, outs in zip(keys, out_lists):
            src = self._store[k]
            for o in outs:
                groups.setdefault((src.context, o.context), []).append((src, o))
        for (sctx, dctx), pairs in groups.items():
            _copy_op(pairs, dctx, '_kvstore_pull', copy=sctx != dctx)
