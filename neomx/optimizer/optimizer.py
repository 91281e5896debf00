"""Optimizers with MXNet 1.9's interface and numerics, updating arrays in place on the engine.

An optimizer turns (weight, gradient, state) into a new weight. The built-in ones write each
rule once, as torch ``_foreach`` maths over lists of tensors (``_kernel``); ``update`` accepts
one index or a list of them and pushes *one* engine operation per device, reading the
gradients and writing the weights and states. A Trainer step therefore costs one operation per
device, whatever the number of parameters, and stays asynchronous and ordered with the
forward and backward passes around it. The arithmetic follows MXNet's kernels (the same
expressions in the same order, with MXNet's float32 scalars), so results agree with MXNet 1.9.1
to float32 rounding.

Subclasses written against MXNet's API (overriding ``create_state`` and ``update`` with ``nd``
operations) work as they do in MXNet.

>>> import neomx as mx
>>> opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
>>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
>>> state = opt.create_state(0, w)
>>> opt.update(0, w, g, state)
>>> w.asnumpy().tolist()
[0.8999999761581421, 0.8999999761581421]
"""
import functools
import math
import os
import pickle
import warnings

import numpy as np
import torch

from .. import engine as _engine
from ..base import MXNetError
from ..ndarray import NDArray, zeros
from ..ndarray.ndarray import user_line

__all__ = ['Optimizer', 'SGD', 'ccSGD', 'NAG', 'Signum', 'Adam', 'AdamW', 'Adamax', 'Nadam',
           'RMSProp', 'AdaGrad', 'AdaDelta', 'Ftrl', 'FTML', 'LAMB', 'DCASGD', 'SGLD', 'Test',
           'Updater', 'create', 'get_updater', 'register']


# The scalar helpers are memoised: the same few learning rates come back at every step, and
# numpy scalar arithmetic costs a microsecond a call.
@functools.lru_cache(maxsize=4096)
def _f32(x):
    """``x`` as MXNet's kernels see it: their parameters are float32."""
    return float(np.float32(x))


@functools.lru_cache(maxsize=4096)
def _mul32(*xs):
    """A product of scalars computed in float32, as in MXNet's kernels (``lr * wd``)."""
    r = np.float32(xs[0])
    for x in xs[1:]:
        r = r * np.float32(x)
    return float(r)


@functools.lru_cache(maxsize=4096)
def _sub32(a, b):
    return float(np.float32(a) - np.float32(b))


def _aggregate_size(default):
    value = os.environ.get('MXNET_OPTIMIZER_AGGREGATION_SIZE')
    return int(value) if value not in (None, '') else default


class Optimizer:
    """The base class of the optimizers: learning rate (or ``lr_scheduler``), weight decay,
    gradient rescaling and clipping, per-parameter multipliers and update counts.

    Parameters are MXNet's: ``rescale_grad`` multiplies each gradient (``1/batch_size`` in a
    Trainer); ``clip_gradient`` clips it to ``[-clip_gradient, clip_gradient]``;
    ``learning_rate`` (0.01 unless given or taken from ``lr_scheduler``); ``wd`` the L2 weight
    decay; ``param_idx2name`` names the indices (weight decay is then 0 for names not ending
    in ``_weight`` or ``_gamma``); ``param_dict`` maps indices to gluon Parameters whose
    ``lr_mult``/``wd_mult`` apply; ``multi_precision`` keeps a float32 master copy of float16
    weights; ``begin_num_update`` starts the update count.

    >>> import neomx as mx
    >>> opt = mx.optimizer.create('adam', learning_rate=0.1)
    >>> opt.learning_rate
    0.1
    """
    opt_registry = {}
    _kernel = None          # built-in optimizers define their update as _kernel (see SGD)
    _elementwise = True     # whether the kernel may run on chunks of the tensors

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0., clip_gradient=None,
                 learning_rate=None, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None:
            if lr_scheduler.base_lr != learning_rate:
                print(UserWarning("learning rate from ``lr_scheduler`` has been overwritten by "
                                  "``learning_rate`` in optimizer."))
                lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError("param_idx2name should be a dict of param indexes to names, got %s"
                            % type(param_idx2name).__name__)
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.allow_np_array = False
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry -----------------------------------------------------------------------
    @staticmethod
    def register(klass):
        """Registers an optimizer class under its lower-cased name, for :func:`create`.

        >>> import neomx as mx
        >>> @mx.optimizer.Optimizer.register
        ... class MyOptimizer(mx.optimizer.Optimizer):
        ...     pass
        >>> type(mx.optimizer.create('myoptimizer')).__name__
        'MyOptimizer'
        """
        if not isinstance(klass, type):
            raise TypeError("Optimizer.register expects a class, got %r" % (klass,))
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn('WARNING: New optimizer %s.%s is overriding existing optimizer %s.%s'
                          % (klass.__module__, klass.__name__, old.__module__, old.__name__))
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An optimizer of the registered (case-insensitive) ``name`` with ``kwargs``."""
        cls = Optimizer.opt_registry.get(name.lower())
        if cls is None:
            raise ValueError('Cannot find optimizer %s (registered: %s)'
                             % (name, ', '.join(sorted(Optimizer.opt_registry))))
        return cls(**kwargs)

    # -- learning rate and multipliers ----------------------------------------------------
    @property
    def learning_rate(self):
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        """Sets the learning rate; an error when an ``lr_scheduler`` sets it instead."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of "
                              "the optimizer only when the LRScheduler of the optimizer is "
                              "undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale):
        """[DEPRECATED] Use set_lr_mult instead."""
        raise DeprecationWarning("set_lr_scale is deprecated: use set_lr_mult")

    def set_lr_mult(self, args_lr_mult):
        """Sets learning-rate multipliers by parameter name or index (names need ``sym`` or
        ``param_idx2name``)."""
        self.lr_mult = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and '__lr_mult__' in attr[name]:
                    self.lr_mult[name] = float(attr[name]['__lr_mult__'])
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Sets weight-decay multipliers by parameter name or index. Parameters named in
        ``param_idx2name`` whose names do not end in ``_weight`` or ``_gamma`` get 0."""
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not (n.endswith('_weight') or n.endswith('_gamma')):
                self.wd_mult[n] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and '__wd_mult__' in attr[name]:
                    self.wd_mult[name] = float(attr[name]['__wd_mult__'])
        self.wd_mult.update(args_wd_mult)

    def _set_current_context(self, device_id):
        """Selects the update counts of device ``device_id`` (each device's copy of a weight
        counts its own updates)."""
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index):
        """Counts one more update of ``index`` (or of each index of a list)."""
        if not isinstance(index, (list, tuple)):
            index = [index]
        counts = self._index_update_count
        for idx in index:
            n = counts.get(idx, self.begin_num_update) + 1
            counts[idx] = n
            if n > self.num_update:
                self.num_update = n

    def _get_lrs(self, indices):
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        return self._scaled(lr, indices, 'lr_mult', self.lr_mult)

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        return self._scaled(self.wd, indices, 'wd_mult', self.wd_mult)

    def _scaled(self, base, indices, attr, table):
        """``base`` times each index's multiplier: its Parameter's, else the table's by index,
        else by name (MXNet's order of precedence)."""
        out = [base] * len(indices)
        for i, index in enumerate(indices):
            if index in self.param_dict:
                out[i] *= getattr(self.param_dict[index], attr)
            elif index in table:
                out[i] *= table[index]
            elif index in self.idx2name:
                out[i] *= table.get(self.idx2name[index], 1.0)
        return out

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    # -- states ---------------------------------------------------------------------------
    def create_state(self, index, weight):
        """The auxiliary state of a weight (momentum, moments, ...), or None."""
        return None

    # MXNet keeps a multi-precision state as (float32 master, state); SGD as (state, master).
    _master_first = True
    _fp16_warning = ("Accumulating with float16 in optimizer can lead to poor accuracy or slow "
                     "convergence. Consider using multi_precision=True option of the optimizer")

    def create_state_multi_precision(self, index, weight):
        """``create_state``, plus a float32 master copy of a float16 weight when
        ``multi_precision`` is on (paired with the state in the order MXNet keeps)."""
        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            state = self.create_state(index, master)
            return (master, state) if self._master_first else (state, master)
        if weight.dtype == np.float16 and not self.multi_precision:
            warnings.warn(self._fp16_warning)
        return self.create_state(index, weight)

    def _split_mp_state(self, state):
        """(float32 master copy, the optimizer's own state) of a multi-precision state."""
        return (state[0], state[1]) if self._master_first else (state[1], state[0])

    # -- updates --------------------------------------------------------------------------
    def update(self, index, weight, grad, state):
        """Updates ``weight`` in place from ``grad`` and ``state``. ``index`` (and the arrays)
        may also be lists, updated together."""
        if self._kernel is None:
            raise NotImplementedError("%s must define update(index, weight, grad, state)"
                                      % type(self).__name__)
        self._update_fused(index, weight, grad, state, False)

    def update_multi_precision(self, index, weight, grad, state):
        """``update``, through the float32 master copy for float16 weights when
        ``multi_precision`` is on."""
        if self._fusable():
            self._update_fused(index, weight, grad, state, self.multi_precision)
            return
        if isinstance(index, (list, tuple)):
            for i, w, g, s in zip(index, weight, grad, state):
                self.update_multi_precision(i, w, g, s)
            return
        if self.multi_precision and weight.dtype == np.float16:
            master, own = self._split_mp_state(state)
            self.update(index, master, grad.astype(np.float32), own)
            weight[:] = master.astype(weight.dtype)
        else:
            self.update(index, weight, grad, state)

    def _fusable(self):
        """Whether updates may go through ``_kernel`` in one operation per device: true for
        the built-in optimizers, false once a subclass overrides ``update``."""
        cls = type(self)
        return (self._kernel is not None and cls.update is Optimizer.update
                and cls.update_multi_precision is Optimizer.update_multi_precision)

    def _hyper(self):
        """The scalars a kernel uses, read when the update is pushed (so that changing them
        later does not reach updates already queued)."""
        clip = self.clip_gradient
        return {'rescale_grad': _f32(self.rescale_grad),
                # MXNet passes clip_gradient to its kernels only when truthy, and the kernels
                # clip only when it is >= 0.
                'clip': _f32(clip) if clip and clip >= 0 else None,
                'momentum': _f32(getattr(self, 'momentum', 0.0))}

    def _step_values(self, indices, lrs, wds):
        """Per-index values known at push time: (lrs, wds, extras). Optimizers with bias
        corrections adjust the learning rates here."""
        return lrs, wds, [None] * len(indices)

    def _update_fused(self, index, weight, grad, state, multi_precision):
        if isinstance(index, (list, tuple)):
            indices, weights, grads, states = index, weight, grad, state
        else:
            indices, weights, grads, states = [index], [weight], [grad], [state]
        if not (len(indices) == len(weights) == len(grads) == len(states)):
            raise MXNetError("%s.update: %d indices, %d weights, %d gradients and %d states"
                             % (type(self).__name__, len(indices), len(weights), len(grads),
                                len(states)))
        self._update_count(indices)
        lrs, wds, extras = self._step_values(indices, self._get_lrs(indices),
                                             self._get_wds(indices))
        # One pass over the parameters (this runs at every step): check them and sort them by
        # device into the lists of one engine operation each.
        groups = {}
        for k, w in enumerate(weights):
            g, s = grads[k], states[k]
            if not (isinstance(w, NDArray) and isinstance(g, NDArray)):
                self._bad_argument(indices[k], w, g, 'types')
            key = w._ctx.key
            if g._ctx.key != key or w._shape != g._shape:
                self._bad_argument(indices[k], w, g, 'grad')
            grp = groups.get(key)
            if grp is None:
                grp = groups[key] = _Group(w._ctx)
            master = None
            if multi_precision and w._dtype == 'float16':
                master, s = self._split_mp_state(s)
                if master._ctx.key != key:
                    self._bad_argument(indices[k], w, master, 'master copy')
                grp.writes.append(master._var)
            if s is None:
                own = ()
            elif isinstance(s, NDArray):
                own = (s,)
            else:
                own = tuple(s)
            for a in own:
                if a is not None:
                    if a._ctx.key != key:
                        self._bad_argument(indices[k], w, a, 'state')
                    grp.writes.append(a._var)
            grp.reads.append(g._var)
            grp.writes.append(w._var)
            grp.items.append((w, g, master, own))
            grp.lrs.append(lrs[k])
            grp.wds.append(wds[k])
            grp.extras.append(extras[k])
        hyper = self._hyper()
        where = user_line()
        for grp in groups.values():
            self._push(grp, hyper, type(self).__name__ + '_update', where)

    def _bad_argument(self, idx, w, other, what):
        name = type(self).__name__
        if what == 'types':
            raise MXNetError("%s.update: weight and gradient of index %r must be NDArrays, got %s "
                             "and %s" % (name, idx, type(w).__name__, type(other).__name__))
        if what == 'grad' and other.context == w.context:
            raise MXNetError("%s.update: the weight of index %r has shape %s but its gradient "
                             "has shape %s" % (name, idx, w.shape, other.shape))
        raise MXNetError("%s.update: the weight of index %r is on %s but its %s is on %s%s"
                         % (name, idx, w.context, 'gradient' if what == 'grad' else what,
                            other.context,
                            ' (use one Updater per device)' if what == 'state' else ''))

    def _push(self, grp, hyper, name, where):
        """One engine operation running ``_kernel`` on the parameters of ``grp``."""
        items, lrs, wds, extras = grp.items, grp.lrs, grp.wds, grp.extras
        kernel = self._kernel
        elementwise = self._elementwise
        lazy = [elementwise and self._lazy_rows() and g.stype == 'row_sparse'
                for _, g, _, _ in items]
        any_lazy = any(lazy)

        def fn():
            ws, gs, ss, casts, rows = [], [], [], [], []
            dense = ([], [], []) if any_lazy else (lrs, wds, extras)
            for k, (w, g, master, own) in enumerate(items):
                gt = g._tensor()
                if master is not None:
                    wt = master._tensor()
                    casts.append((w._tensor(), wt))
                    gt = gt.float()
                else:
                    wt = w._tensor()
                st = [None if a is None else a._tensor() for a in own]
                if lazy[k]:
                    rows.append((wt, gt, st, lrs[k], wds[k], extras[k]))
                    continue
                ws.append(wt)
                gs.append(gt)
                ss.append(st)
                if any_lazy:
                    for lst, v in zip(dense, (lrs[k], wds[k], extras[k])):
                        lst.append(v)
            with torch.no_grad():
                if elementwise:
                    for batch in _cache_batches(ws, gs, ss, *dense):
                        kernel(*batch, hyper)
                else:
                    kernel(ws, gs, ss, lrs, wds, extras, hyper)
                for item in rows:
                    _lazy_update(kernel, hyper, *item)
                for dst, src in casts:
                    dst.copy_(src)
        _engine.current().push(fn, grp.reads, grp.writes, grp.ctx, name, where)

    def _lazy_rows(self):
        """Whether a row_sparse gradient updates only its stored rows (weights and states of
        the other rows are left as they are): MXNet's ``lazy_update``."""
        return False

    # -- pickling: the Parameters of param_dict stay with the Trainer -----------------------
    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop('param_dict', None)
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}


register = Optimizer.register
create = Optimizer.create_optimizer

class _Group:
    """The parameters of one update on one device: one engine operation."""
    __slots__ = ('ctx', 'items', 'lrs', 'wds', 'extras', 'reads', 'writes')

    def __init__(self, ctx):
        self.ctx = ctx
        self.items, self.lrs, self.wds, self.extras = [], [], [], []
        self.reads, self.writes = [], []


# Elements per kernel call. A kernel makes a dozen passes over its tensors; on a CPU, tensors
# of one batch stay in the cache between passes, which halves the time of an update of large
# weights. Kernels are elementwise, so batches of flat chunks give the same results. 2^18 rather
# than 2^16: a quarter of the calls (each a dispatch and a wake-up of the intra-op threads) for
# the same passes. Updating AlexNet's 42M weights takes 0.8-0.95x the CPU time on one thread
# (SGD and Adam), 0.5-0.85x the time on two; from 2^20 on it gets slower again (the batch
# leaves the cache).
_BATCH = 1 << 18


def _cache_batches(ws, gs, ss, lrs, wds, extras):
    """Splits the kernel's arguments into batches of about ``_BATCH`` elements: small tensors
    are grouped, large ones cut into flat chunks (views: the kernel writes through them).
    GPU tensors go in one batch (a kernel launch per pass, caches do not matter)."""
    if ws and ws[0].is_cuda:
        yield ws, gs, ss, lrs, wds, extras
        return
    batch = [], [], [], [], [], []
    size = 0
    for i, w in enumerate(ws):
        n = w.numel()
        if n > _BATCH and w.is_contiguous() and gs[i].is_contiguous() and \
                all(s is None or s.is_contiguous() for s in ss[i]):
            flat_w, flat_g = w.view(-1), gs[i].view(-1)
            flat_s = [None if s is None else s.view(-1) for s in ss[i]]
            for a in range(0, n, _BATCH):
                b = min(a + _BATCH, n)
                yield ([flat_w[a:b]], [flat_g[a:b]],
                       [[None if s is None else s[a:b] for s in flat_s]],
                       [lrs[i]], [wds[i]], [extras[i]])
            continue
        batch[0].append(w)
        batch[1].append(gs[i])
        batch[2].append(ss[i])
        batch[3].append(lrs[i])
        batch[4].append(wds[i])
        batch[5].append(extras[i])
        size += n
        if size >= _BATCH:
            yield batch
            batch = [], [], [], [], [], []
            size = 0
    if batch[0]:
        yield batch


def _lazy_update(kernel, hyper, wt, gt, st, lr, wd, extra):
    """``kernel`` on the rows of the weight and states where the gradient has a stored row
    (a non-zero one, see nd.sparse): MXNet's lazy update of a row_sparse gradient."""
    rows = torch.nonzero(gt.reshape(gt.shape[0], -1).ne(0).any(dim=1)).reshape(-1)
    if not rows.numel():
        return
    w_rows = wt[rows]
    s_rows = [None if s is None else s[rows] for s in st]
    kernel([w_rows], [gt[rows]], [s_rows], [lr], [wd], [extra], hyper)
    wt[rows] = w_rows
    for s, r in zip(st, s_rows):
        if s is not None:
            s[rows] = r


# -- building blocks of the kernels (lists of tensors in, lists out) -----------------------

def _clip_(ts, bound):
    torch._foreach_clamp_min_(ts, -bound)
    torch._foreach_clamp_max_(ts, bound)
    return ts


def _rescaled(gs, h):
    """clip(rescale_grad * grad)."""
    g = torch._foreach_mul(gs, h['rescale_grad'])
    return g if h['clip'] is None else _clip_(g, h['clip'])


def _rescaled_wd(gs, ws, wds, h, clip=True):
    """clip(rescale_grad * grad + wd * weight): the gradient of Adam, RMSProp and FTML."""
    g = torch._foreach_mul(gs, h['rescale_grad'])
    if any(wds):
        torch._foreach_add_(g, torch._foreach_mul(ws, wds))
    if clip and h['clip'] is not None:
        _clip_(g, h['clip'])
    return g


def _lr_grad(gs, lrs, h):
    """The step of an SGD-like kernel: ``lr * clip(rescale_grad * grad)`` with clipping and
    ``(lr * rescale_grad) * grad`` without, as MXNet's kernels associate them."""
    if h['clip'] is None:
        return torch._foreach_mul(gs, [_mul32(lr, h['rescale_grad']) for lr in lrs])
    g = _rescaled(gs, h)
    torch._foreach_mul_(g, lrs)
    return g


def _states(ss, i):
    return [s[i] for s in ss]


def _python_clip(g, clip):
    """The clipping of MXNet's optimizers written in Python (AdaGrad, AdaDelta, Adamax, Nadam):
    applied whenever ``clip_gradient`` is not None."""
    return g if clip is None else _clip_(g, _f32(clip))


# -- the optimizers ----------------------------------------------------------------------

@register
class SGD(Optimizer):
    """Stochastic gradient descent with momentum and weight decay::

        mom = momentum * mom - lr * wd * weight - lr * clip(rescale_grad * grad)
        weight = weight + mom

    (with ``momentum=0`` there is no state and ``weight -= lr * (wd * weight + grad)``).
    With ``lazy_update``, a row_sparse gradient updates only its stored rows (and their
    momentum).

    >>> import neomx as mx
    >>> opt = mx.optimizer.SGD(learning_rate=0.5)
    >>> w = mx.nd.ones((2,))
    >>> opt.update(0, w, mx.nd.ones((2,)), None)
    >>> w.asnumpy().tolist()
    [0.5, 0.5]
    """

    _master_first = False
    _fp16_warning = ("Accumulating with float16 in optimizer can lead to poor accuracy or slow "
                     "convergence. Consider using multi_precision=True option of the SGD "
                     "optimizer")

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = _aggregate_size(4)

    def _lazy_rows(self):
        return self.lazy_update

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return zeros(weight.shape, weight.context, dtype=weight.dtype)
        return None

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        # MXNet's multi_sgd(_mom)_update, which its SGD uses for every dense update.
        step = _lr_grad(gs, lrs, h)
        lrwds = [_mul32(lr, wd) for lr, wd in zip(lrs, wds)]
        if h['momentum'] > 0:
            moms = _states(ss, 0)
            torch._foreach_mul_(moms, h['momentum'])
            if any(lrwds):
                torch._foreach_sub_(moms, torch._foreach_mul(ws, lrwds))
            torch._foreach_sub_(moms, step)
            torch._foreach_add_(ws, moms)
        else:
            if any(lrwds):
                torch._foreach_add_(step, torch._foreach_mul(ws, lrwds))
            torch._foreach_sub_(ws, step)


@register
class ccSGD(SGD):  # noqa: N801  (MXNet's name)
    """[DEPRECATED] The same as :class:`SGD`."""


def _sgd_plain(ws, gs, lrs, wds, h):
    """MXNet's sgd_update: ``(1 - lr * wd) * weight - lr * clip(rescale_grad * grad)``."""
    step = _lr_grad(gs, lrs, h)
    decay = [_sub32(1.0, _mul32(lr, wd)) for lr, wd in zip(lrs, wds)]
    if any(d != 1.0 for d in decay):
        torch._foreach_mul_(ws, decay)
    torch._foreach_sub_(ws, step)


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient::

        mom = momentum * mom
        weight = weight - mom + (momentum + 1) * (mom - lr * (g + wd * weight))
        mom = mom - lr * (g + wd * weight)

    with ``g = clip(rescale_grad * grad)``. As in MXNet, the last line sees the updated
    weight (MXNet's kernel writes the weight in place before reading it again).
    """

    _master_first = False     # (momentum, float32 master), as SGD and MXNet's NAG keep it
    _fp16_warning = SGD._fp16_warning.replace('SGD', 'NAG')

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    create_state = SGD.create_state

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        m = h['momentum']
        if not m > 0:
            return _sgd_plain(ws, gs, lrs, wds, h)
        g = _rescaled(gs, h)
        moms = _states(ss, 0)
        torch._foreach_mul_(moms, m)

        def lr_term():   # lr * (g + wd * weight)
            t = torch._foreach_add(g, torch._foreach_mul(ws, wds)) if any(wds) else \
                torch._foreach_add(g, 0.0)
            torch._foreach_mul_(t, lrs)
            return t
        inner = torch._foreach_sub(moms, lr_term())
        torch._foreach_mul_(inner, _f32(np.float32(m) + np.float32(1)))
        torch._foreach_sub_(ws, moms)
        torch._foreach_add_(ws, inner)
        torch._foreach_sub_(moms, lr_term())


@register
class Signum(Optimizer):
    """signSGD and Signum: steps of fixed size in the sign of the gradient (``momentum=0``)
    or of its moving average::

        mom = momentum * mom - (1 - momentum) * (wd * weight + clip(rescale_grad * grad))
        weight = (1 - lr * wd_lh) * weight + lr * sign(mom)
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        if self.momentum != 0.0:
            return zeros(weight.shape, weight.context, dtype=weight.dtype)
        return None

    def _hyper(self):
        h = super()._hyper()
        h['wd_lh'] = _f32(self.wd_lh) if self.wd_lh else 0.0
        return h

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        m = h['momentum']
        if not m > 0:
            # signsgd_update ignores rescale_grad and clip_gradient.
            decay = [_sub32(1.0, _mul32(lr, wd)) for lr, wd in zip(lrs, wds)]
            sign = torch._foreach_sign(gs)
            torch._foreach_mul_(sign, lrs)
            torch._foreach_mul_(ws, decay)
            torch._foreach_sub_(ws, sign)
            return
        one_m = _sub32(1.0, m)
        moms = _states(ss, 0)
        torch._foreach_mul_(moms, m)
        coef = [_mul32(one_m, wd) for wd in wds]
        if any(coef):
            torch._foreach_sub_(moms, torch._foreach_mul(ws, coef))
        if h['clip'] is None:
            g = torch._foreach_mul(gs, _mul32(one_m, h['rescale_grad']))
        else:
            g = torch._foreach_mul(_rescaled(gs, h), one_m)
        torch._foreach_sub_(moms, g)
        if h['wd_lh']:
            torch._foreach_mul_(ws, [_sub32(1.0, _mul32(lr, h['wd_lh'])) for lr in lrs])
        sign = torch._foreach_sign(moms)
        torch._foreach_mul_(sign, lrs)
        torch._foreach_add_(ws, sign)


@register
class Adam(Optimizer):
    """Adam, with MXNet's bias correction folded into the learning rate::

        g = clip(rescale_grad * grad + wd * weight)
        mean = beta1 * mean + (1 - beta1) * g
        var = beta2 * var + (1 - beta2) * g * g
        weight -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * mean / (sqrt(var) + epsilon)

    >>> import neomx as mx
    >>> opt = mx.optimizer.Adam(learning_rate=0.1)
    >>> w = mx.nd.zeros((1,))
    >>> opt.update(0, w, mx.nd.ones((1,)), opt.create_state(0, w))
    >>> round(float(w.asscalar()), 4)
    -0.1
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def _lazy_rows(self):
        return self.lazy_update

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype),   # mean
                zeros(weight.shape, weight.context, dtype=weight.dtype))   # variance

    def _hyper(self):
        h = super()._hyper()
        h.update(beta1=_f32(self.beta1), beta2=_f32(self.beta2), epsilon=_f32(self.epsilon))
        return h

    def _step_values(self, indices, lrs, wds):
        counts = self._index_update_count
        out = []
        for idx, lr in zip(indices, lrs):
            t = counts[idx]
            out.append(lr * math.sqrt(1. - self.beta2 ** t) / (1. - self.beta1 ** t))
        return out, wds, [None] * len(indices)

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _rescaled_wd(gs, ws, wds, h)
        _adam_step(ws, g, ss, lrs, h)


def _adam_step(ws, g, ss, lrs, h):
    """The moment updates and the step of Adam, for a prepared gradient ``g``."""
    means, variances = _states(ss, 0), _states(ss, 1)
    torch._foreach_mul_(means, h['beta1'])
    torch._foreach_add_(means, torch._foreach_mul(g, _sub32(1.0, h['beta1'])))
    torch._foreach_mul_(variances, h['beta2'])
    sq = torch._foreach_mul(g, _sub32(1.0, h['beta2']))
    torch._foreach_mul_(sq, g)
    torch._foreach_add_(variances, sq)
    denom = torch._foreach_sqrt(variances)
    torch._foreach_add_(denom, h['epsilon'])
    # w + (-1) * (step / denom): the same rounding as w - step / denom, one pass fewer.
    torch._foreach_addcdiv_(ws, torch._foreach_mul(means, [_f32(lr) for lr in lrs]), denom,
                            value=-1.0)


@register
class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): the weight shrinks by
    ``lr * wd * weight`` before the Adam step, and ``wd`` stays out of the moments. Not in
    MXNet 1.9's registry (which has the ``adamw_update`` operator only); here for convenience.

    >>> import neomx as mx
    >>> opt = mx.optimizer.create('adamw', learning_rate=0.1, wd=0.5)
    >>> w = mx.nd.ones((1,))
    >>> opt.update(0, w, mx.nd.zeros((1,)), opt.create_state(0, w))
    >>> round(float(w.asscalar()), 4)
    0.95
    """

    def _step_values(self, indices, lrs, wds):
        decays = [lr * wd for lr, wd in zip(lrs, wds)]
        lrs, wds, _ = super()._step_values(indices, lrs, wds)
        return lrs, wds, decays

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _rescaled(gs, h)
        if any(extras):
            torch._foreach_mul_(ws, [_sub32(1.0, d) for d in extras])
        _adam_step(ws, g, ss, lrs, h)


@register
class Adamax(Optimizer):
    """AdaMax, Adam with the infinity norm::

        g = clip(rescale_grad * grad + wd * weight)
        m = beta1 * m + (1 - beta1) * g
        u = maximum(beta2 * u, abs(g))
        weight -= lr / (1 - beta1**t) * m / u
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    create_state = Adam.create_state

    def _hyper(self):
        h = super()._hyper()
        h.update(beta1=_f32(self.beta1), one_b1=_f32(1. - self.beta1), beta2=_f32(self.beta2),
                 clip_py=self.clip_gradient)
        return h

    def _step_values(self, indices, lrs, wds):
        counts = self._index_update_count
        return ([lr / (1. - self.beta1 ** counts[idx]) for idx, lr in zip(indices, lrs)], wds,
                [None] * len(indices))

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _python_clip(_rescaled_wd(gs, ws, wds, h, clip=False), h['clip_py'])
        m, u = _states(ss, 0), _states(ss, 1)
        torch._foreach_mul_(m, h['beta1'])
        torch._foreach_add_(m, torch._foreach_mul(g, h['one_b1']))
        torch._foreach_mul_(u, h['beta2'])
        torch._foreach_maximum_(u, torch._foreach_abs(g))
        torch._foreach_addcdiv_(ws, torch._foreach_mul(m, [_f32(lr) for lr in lrs]), u,
                                value=-1.0)


@register
class Nadam(Optimizer):
    """Adam with Nesterov momentum (Dozat), with MXNet's momentum schedule (``m_schedule`` is
    kept by the optimizer and advances at every update of any weight, as in MXNet)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    create_state = Adam.create_state

    def _hyper(self):
        h = super()._hyper()
        h.update(beta1=_f32(self.beta1), one_b1=_f32(1. - self.beta1), beta2=_f32(self.beta2),
                 one_b2=_f32(1. - self.beta2), epsilon=_f32(self.epsilon),
                 clip_py=self.clip_gradient)
        return h

    def _step_values(self, indices, lrs, wds):
        counts = self._index_update_count
        extras = []
        for idx in indices:
            t = counts[idx]
            mom_t = self.beta1 * (1. - 0.5 * pow(0.96, t * self.schedule_decay))
            mom_t1 = self.beta1 * (1. - 0.5 * pow(0.96, (t + 1) * self.schedule_decay))
            self.m_schedule = self.m_schedule * mom_t
            m_schedule_next = self.m_schedule * mom_t1
            extras.append((mom_t, mom_t1, self.m_schedule, m_schedule_next,
                           pow(self.beta2, t)))
        return lrs, wds, extras

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _python_clip(_rescaled_wd(gs, ws, wds, h, clip=False), h['clip_py'])
        m, v = _states(ss, 0), _states(ss, 1)
        torch._foreach_mul_(m, h['beta1'])
        torch._foreach_add_(m, torch._foreach_mul(g, h['one_b1']))
        torch._foreach_mul_(v, h['beta2'])
        sq = torch._foreach_mul(g, h['one_b2'])
        torch._foreach_mul_(sq, g)
        torch._foreach_add_(v, sq)
        e = list(zip(*extras))
        mom_t, mom_t1, sched, sched_next, beta2_t = e
        g_prime = torch._foreach_div(g, [_f32(1. - s) for s in sched])
        m_prime = torch._foreach_div(m, [_f32(1. - s) for s in sched_next])
        v_prime = torch._foreach_div(v, [_f32(1. - b) for b in beta2_t])
        m_bar = torch._foreach_mul(g_prime, [_f32(1. - x) for x in mom_t])
        torch._foreach_add_(m_bar, torch._foreach_mul(m_prime, [_f32(x) for x in mom_t1]))
        denom = torch._foreach_sqrt(v_prime)
        torch._foreach_add_(denom, h['epsilon'])
        torch._foreach_addcdiv_(ws, torch._foreach_mul(m_bar, [_f32(lr) for lr in lrs]), denom,
                                value=-1.0)


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton's (``centered=False``)::

        g = clip(rescale_grad * grad + wd * weight)
        n = (1 - gamma1) * g * g + gamma1 * n
        weight -= lr * g / sqrt(n + epsilon)

    or Graves's (``centered=True``)::

        n = (1 - gamma1) * g * g + gamma1 * n
        gm = (1 - gamma1) * g + gamma1 * gm
        delta = gamma2 * delta - lr * g / sqrt(n - gm * gm + epsilon)
        weight += delta

    with the weight clipped to ``[-clip_weights, clip_weights]`` when ``clip_weights`` is set.
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        n = 3 if self.centered else 1
        return tuple(zeros(weight.shape, weight.context) for _ in range(n))

    def _hyper(self):
        h = super()._hyper()
        cw = self.clip_weights
        h.update(gamma1=_f32(self.gamma1), gamma2=_f32(self.gamma2), epsilon=_f32(self.epsilon),
                 centered=self.centered, clip_weights=_f32(cw) if cw and cw >= 0 else None)
        return h

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _rescaled_wd(gs, ws, wds, h)
        one_g1 = _sub32(1.0, h['gamma1'])
        n = _states(ss, 0)
        sq = torch._foreach_mul(g, one_g1)
        torch._foreach_mul_(sq, g)
        torch._foreach_mul_(n, h['gamma1'])
        torch._foreach_add_(n, sq)
        if h['centered']:
            gm, delta = _states(ss, 1), _states(ss, 2)
            torch._foreach_mul_(gm, h['gamma1'])
            torch._foreach_add_(gm, torch._foreach_mul(g, one_g1))
            denom = torch._foreach_mul(gm, gm)
            torch._foreach_sub_(denom, n)
            torch._foreach_neg_(denom)
            torch._foreach_add_(denom, h['epsilon'])
            torch._foreach_sqrt_(denom)
            torch._foreach_mul_(delta, h['gamma2'])
            torch._foreach_addcdiv_(delta, torch._foreach_mul(g, [_f32(lr) for lr in lrs]),
                                    denom, value=-1.0)
            torch._foreach_add_(ws, delta)
        else:
            denom = torch._foreach_add(n, h['epsilon'])
            torch._foreach_sqrt_(denom)
            step = torch._foreach_div(g, denom)
            torch._foreach_mul_(step, [_f32(lr) for lr in lrs])
            torch._foreach_sub_(ws, step)
        if h['clip_weights'] is not None:
            _clip_(ws, h['clip_weights'])


@register
class AdaGrad(Optimizer):
    """AdaGrad::

        g = clip(rescale_grad * grad)
        history += g * g
        weight += (g / sqrt(history + eps) + wd * weight) * -lr
    """

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context)   # history (float32, as in MXNet)

    def _lazy_rows(self):
        return True     # MXNet's sparse adagrad_update: the gradient's rows only

    def _hyper(self):
        h = super()._hyper()
        h.update(clip_py=self.clip_gradient, eps=_f32(self.float_stable_eps))
        return h

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _python_clip(torch._foreach_mul(gs, h['rescale_grad']), h['clip_py'])
        history = _states(ss, 0)
        torch._foreach_add_(history, torch._foreach_mul(g, g))
        denom = torch._foreach_add(history, h['eps'])
        torch._foreach_sqrt_(denom)
        step = torch._foreach_div(g, denom)
        if any(wds):
            torch._foreach_add_(step, torch._foreach_mul(ws, [_f32(wd) for wd in wds]))
        torch._foreach_mul_(step, [_f32(-lr) for lr in lrs])
        torch._foreach_add_(ws, step)


@register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler); uses no learning rate::

        g = clip(rescale_grad * grad)
        acc_g = rho * acc_g + (1 - rho) * g * g
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta * delta
        weight -= delta + wd * weight

    Unlike MXNet, the gradient array itself is left unscaled.
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context),    # accumulated g
                zeros(weight.shape, weight.context))    # accumulated delta

    def _hyper(self):
        h = super()._hyper()
        h.update(clip_py=self.clip_gradient, rho=_f32(self.rho),
                 one_rho=_f32(1. - self.rho), epsilon=_f32(self.epsilon))
        return h

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _python_clip(torch._foreach_mul(gs, h['rescale_grad']), h['clip_py'])
        acc_g, acc_delta = _states(ss, 0), _states(ss, 1)
        torch._foreach_mul_(acc_g, h['rho'])
        sq = torch._foreach_mul(g, h['one_rho'])
        torch._foreach_mul_(sq, g)
        torch._foreach_add_(acc_g, sq)
        delta = torch._foreach_add(acc_delta, h['epsilon'])
        torch._foreach_sqrt_(delta)
        denom = torch._foreach_add(acc_g, h['epsilon'])
        torch._foreach_sqrt_(denom)
        torch._foreach_div_(delta, denom)
        torch._foreach_mul_(delta, g)
        torch._foreach_mul_(acc_delta, h['rho'])
        sq = torch._foreach_mul(delta, h['one_rho'])
        torch._foreach_mul_(sq, delta)
        torch._foreach_add_(acc_delta, sq)
        if any(wds):
            torch._foreach_add_(delta, torch._foreach_mul(ws, [_f32(wd) for wd in wds]))
        torch._foreach_sub_(ws, delta)


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al.)::

        g = clip(rescale_grad * grad)
        z += g - (sqrt(n + g * g) - sqrt(n)) * weight / lr
        n += g * g
        weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (abs(z) > lamda1)
    """

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context),    # z
                zeros(weight.shape, weight.context))    # n

    def _lazy_rows(self):
        return True     # MXNet's ftrl_update on a row_sparse gradient: its rows only

    def _hyper(self):
        h = super()._hyper()
        h.update(lamda1=_f32(self.lamda1), beta=_f32(self.beta))
        return h

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        lrs = [_f32(lr) for lr in lrs]
        g = _rescaled(gs, h)
        z, n = _states(ss, 0), _states(ss, 1)
        sq = torch._foreach_mul(g, g)
        grown = torch._foreach_add(n, sq)
        torch._foreach_sqrt_(grown)
        torch._foreach_sub_(grown, torch._foreach_sqrt(n))
        torch._foreach_mul_(grown, ws)
        torch._foreach_div_(grown, lrs)
        torch._foreach_add_(z, torch._foreach_sub(g, grown))
        torch._foreach_add_(n, sq)
        lam = h['lamda1']
        for w, zi, ni, lr, wd in zip(ws, z, n, lrs, wds):
            num = torch.sign(zi) * lam - zi
            den = (h['beta'] + torch.sqrt(ni)) / lr + _f32(wd)
            w.copy_(num / den * (zi.abs() > lam).to(w.dtype))


@register
class FTML(Optimizer):
    """FTML, Follow the Moving Leader (Zheng & Kwok)::

        g = clip(rescale_grad * grad + wd * weight)
        v = beta2 * v + (1 - beta2) * g * g
        d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)
        z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight
        d = d_t
        weight = -z / d_t
    """

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return tuple(zeros(weight.shape, weight.context, dtype=weight.dtype) for _ in range(3))

    def _hyper(self):
        h = super()._hyper()
        h.update(beta1=_f32(self.beta1), beta2=_f32(self.beta2), epsilon=_f32(self.epsilon))
        return h

    def _step_values(self, indices, lrs, wds):
        counts = self._index_update_count
        return lrs, wds, [counts[idx] for idx in indices]

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _rescaled_wd(gs, ws, wds, h)
        b1, b2 = np.float32(h['beta1']), np.float32(h['beta2'])
        d, v, z = _states(ss, 0), _states(ss, 1), _states(ss, 2)
        torch._foreach_mul_(v, float(b2))
        sq = torch._foreach_mul(g, g)
        torch._foreach_mul_(sq, float(np.float32(1) - b2))
        torch._foreach_add_(v, sq)
        for k, t in enumerate(extras):
            t = np.float32(t)
            coef1 = np.float32(1) - b1 ** t
            coef2 = np.float32(1) - b2 ** t
            d_t = torch.sqrt(v[k] / float(coef2)) + h['epsilon']
            d_t.mul_(float(coef1 / np.float32(lrs[k])))
            zk = z[k]
            zk.mul_(float(b1))
            zk.add_(g[k] * float(np.float32(1) - b1))
            zk.sub_((d_t - d[k] * float(b1)) * ws[k])
            d[k].copy_(d_t)
            ws[k].copy_(-zk / d_t)


@register
class LAMB(Optimizer):
    """LAMB (You et al.): Adam's step scaled per tensor by the trust ratio
    ``||weight|| / ||step||``, as MXNet's multi-tensor ``multi_lamb_update``::

        g = clip(rescale_grad * grad)
        mean = beta1 * mean + (1 - beta1) * g
        var = beta2 * var + (1 - beta2) * g * g
        step = mean_hat / (sqrt(var_hat) + epsilon) + wd * weight   (bias-corrected hats)
        r1 = ||weight|| clipped to [lower_bound, upper_bound]; r2 = ||step||
        weight -= lr * (r1 / r2 if r1 and r2 else 1) * step
    """
    _elementwise = False     # the norms need whole tensors

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, _aggregate_size(45)))

    create_state = Adam.create_state

    def _hyper(self):
        h = super()._hyper()
        h.update(beta1=_f32(self.beta1), beta2=_f32(self.beta2),
                 one_b1=_sub32(1.0, self.beta1), one_b2=_sub32(1.0, self.beta2),
                 epsilon=_f32(self.epsilon), bias_correction=self.bias_correction,
                 lower=_f32(self.lower_bound) if self.lower_bound else None,
                 upper=_f32(self.upper_bound) if self.upper_bound else None)
        return h

    def _step_values(self, indices, lrs, wds):
        counts = self._index_update_count
        return lrs, wds, [counts[idx] for idx in indices]

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        g = _rescaled(gs, h)
        means, variances = _states(ss, 0), _states(ss, 1)
        torch._foreach_mul_(means, h['beta1'])
        torch._foreach_add_(means, torch._foreach_mul(g, h['one_b1']))
        torch._foreach_mul_(variances, h['beta2'])
        sq = torch._foreach_mul(g, h['one_b2'])
        torch._foreach_mul_(sq, g)
        torch._foreach_add_(variances, sq)
        if h['bias_correction']:
            one = np.float32(1)
            b1, b2 = np.float32(h['beta1']), np.float32(h['beta2'])
            mean_hat = torch._foreach_div(means, [float(one - b1 ** np.float32(t))
                                                  for t in extras])
            denom = torch._foreach_div(variances, [float(one - b2 ** np.float32(t))
                                                   for t in extras])
        else:
            mean_hat, denom = means, torch._foreach_mul(variances, 1.0)
        torch._foreach_sqrt_(denom)
        torch._foreach_add_(denom, h['epsilon'])
        step = torch._foreach_div(mean_hat, denom)
        if any(wds):
            torch._foreach_add_(step, torch._foreach_mul(ws, [_f32(wd) for wd in wds]))
        for w, st, lr in zip(ws, step, lrs):
            r1 = w.float().square().sum().sqrt()
            r2 = st.float().square().sum().sqrt()
            if h['lower'] is not None:
                r1 = torch.clamp(r1, min=h['lower'])
            if h['upper'] is not None:
                r1 = torch.clamp(r1, max=h['upper'])
            ratio = torch.where((r1 == 0) | (r2 == 0), torch.ones_like(r1), r1 / r2)
            w.sub_(st * (ratio * _f32(lr)).to(w.dtype))


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al.)::

        g = clip(rescale_grad * grad)
        mom = momentum * mom - lr * (g + wd * weight + lamda * g * g * (weight - previous))
        previous = weight
        weight += mom
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        mom = None if self.momentum == 0.0 else zeros(weight.shape, weight.context,
                                                       dtype=weight.dtype)
        return (mom, weight.copy())

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = grad.clip(-self.clip_gradient, self.clip_gradient)
        mom, previous = state
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous))
        if mom is not None:
            mom[:] *= self.momentum
            mom[:] += step
        else:
            mom = step
        previous[:] = weight
        weight[:] += mom


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics: an SGD step of half the learning rate plus
    Gaussian noise of variance ``lr`` (drawn from the device's generator)."""

    def update(self, index, weight, grad, state):
        from ..ndarray import random as _random
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = grad.clip(-self.clip_gradient, self.clip_gradient)
        weight[:] += -lr / 2 * (grad + wd * weight)
        weight[:] += _random.normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                                    ctx=weight.context)


@register
class Test(Optimizer):
    """The test optimizer of MXNet: ``weight += rescale_grad * grad`` and the state copies the
    weight."""

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context)

    def _update_count(self, index):
        """MXNet's Test optimizer does not count its updates."""

    def _kernel(self, ws, gs, ss, lrs, wds, extras, h):
        torch._foreach_add_(ws, torch._foreach_mul(gs, h['rescale_grad']))
        torch._foreach_copy_(_states(ss, 0), ws)


# -- the Updater: states per index, as a KVStore or a Trainer uses them ---------------------

class Updater:
    """Keeps the state of each weight index and applies ``optimizer`` to it:
    ``updater(index, grad, weight)`` (one index or lists of them).

    >>> import neomx as mx
    >>> upd = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=1.0))
    >>> w = mx.nd.ones((2,))
    >>> upd(0, mx.nd.ones((2,)), w)
    >>> w.asnumpy().tolist()
    [0.0, 0.0]
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight):
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), list(grad), list(weight)
        else:
            indices, grads, weights = [index], [grad], [weight]
        opt = self.optimizer
        if weights:
            opt._set_current_context(weights[0].context.device_id)
        states = self.states
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                idx = indices[i] = idx.decode()
            if idx not in states:
                states[idx] = opt.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                states[idx] = self.sync_state_context(states[idx], weights[i].context)
                self.states_synced[idx] = True
        if opt._fusable():
            # One call: the optimizer pushes one operation per device for all of them.
            opt.update_multi_precision(indices, weights, grads, [states[i] for i in indices])
        elif self.aggregate_updates:
            by_dtype = {}
            for i, w, g in zip(indices, weights, grads):
                by_dtype.setdefault(w.dtype, []).append((i, w, g))
            n = opt.aggregate_num
            for group in by_dtype.values():
                for start in range(0, len(group), n):
                    idx, ws, gs = zip(*group[start:start + n])
                    opt.update_multi_precision(list(idx), list(ws), list(gs),
                                               [states[i] for i in idx])
        else:
            for i, w, g in zip(indices, weights, grads):
                opt.update_multi_precision(i, w, g, states[i])

    def sync_state_context(self, state, context):
        """``state`` (an array or a nesting of them) on ``context``."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states):
        """Loads states pickled by :meth:`get_states` (with or without the optimizer)."""
        states = pickle.loads(states)
        if isinstance(states, tuple) and len(states) == 2:
            self.states, self.optimizer = states
        else:
            self.states = states
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer=False):
        """The states pickled (with the optimizer when ``dump_optimizer``): waits for them."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer):
    """An :class:`Updater` for ``optimizer``."""
    return Updater(optimizer)
