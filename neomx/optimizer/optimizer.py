"""The update machinery of the optimizers: the ``Optimizer`` base class, its registry, and
the engine operation that runs a rule's kernel over many weights at once.

The rules themselves are in ``sgd.py`` (SGD, NAG, Signum, DCASGD, SGLD, Test), ``adam.py``
(Adam, AdamW, Adamax, Nadam, LAMB) and ``adaptive.py`` (RMSProp, AdaGrad, AdaDelta, Ftrl,
FTML); ``updater.py`` keeps the states per index. MXNet's path ``mxnet.optimizer.optimizer``
names them all, and so do pickled optimizers: this module resolves those names too.

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
import os
import warnings

import numpy as np
import torch

from .. import engine as _engine
from ..base import MXNetError
from ..ndarray import NDArray
from ..ops.layout import keep_channels_last

__all__ = ['Optimizer', 'create', 'register']


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


# weights whose updates go through a float32 master copy under multi_precision
_MASTER_COPIED = frozenset(('float16', 'bfloat16'))

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

    def _rates(self, get_one, get_many, indices):
        """The learning rates (``_get_lr``, ``_get_lrs``) or weight decays of ``indices``, asked
        for as MXNet asks: in lists of at most ``aggregate_num`` indices, one by one when it is
        0. An update here may hold every parameter, and optimizers written for MXNet override
        these methods for its lists (keras-mxnet's ``_get_lrs`` gives ``aggregate_num``
        rates, whatever the indices)."""
        n = self.aggregate_num
        if n <= 0:
            return [get_one(i) for i in indices]
        out = []
        for start in range(0, len(indices), n):
            chunk = indices[start:start + n]
            got = list(get_many(chunk))
            if len(got) < len(chunk):
                raise MXNetError("%s.%s gave %d values for the %d indices %s"
                                 % (type(self).__name__, get_many.__name__, len(got), len(chunk),
                                    list(chunk)))
            out += got[:len(chunk)]
        return out

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
        ``multi_precision`` is on (paired with the state in the order MXNet keeps); a bfloat16
        weight gets one too (MXNet 1.9 updates those in bfloat16, where updates smaller than
        a 256th of the weight are lost)."""
        if self.multi_precision and weight._dtype in _MASTER_COPIED:
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
        """``update``, through the float32 master copy for float16 and bfloat16 weights when
        ``multi_precision`` is on."""
        if self._fusable():
            self._update_fused(index, weight, grad, state, self.multi_precision)
            return
        if isinstance(index, (list, tuple)):
            for i, w, g, s in zip(index, weight, grad, state):
                self.update_multi_precision(i, w, g, s)
            return
        if self.multi_precision and weight._dtype in _MASTER_COPIED:
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
        lrs, wds, extras = self._step_values(indices,
                                             self._rates(self._get_lr, self._get_lrs, indices),
                                             self._rates(self._get_wd, self._get_wds, indices))
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
            if multi_precision and w._dtype in _MASTER_COPIED:
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
        for grp in groups.values():
            self._push(grp, hyper, type(self).__name__ + '_update')

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

    def _push(self, grp, hyper, name):
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
                    wt = master._tensor(write=True)
                    casts.append((w._tensor(write=True), wt))
                    gt = gt.float()
                else:
                    wt = keep_channels_last(w._tensor(write=True), own)
                st = [None if a is None else a._tensor(write=True) for a in own]
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
                if elementwise and self._passes(hyper, dense[1]) > 1:
                    for batch in _cache_batches(ws, gs, ss, *dense):
                        kernel(*batch, hyper)
                elif ws:
                    kernel(ws, gs, ss, *dense, hyper)
                for item in rows:
                    _lazy_update(kernel, hyper, *item)
                for dst, src in casts:
                    dst.copy_(src)
        _engine.push(fn, grp.reads, grp.writes, grp.ctx, name)

    def _passes(self, hyper, wds):
        """How many passes over the weights the kernel makes (more than one, unless a subclass
        knows better): an update of several passes runs on cache-sized batches (see
        ``_cache_batches``); a one-pass update runs on whole tensors, as fewer, larger kernel
        calls."""
        return 2

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


def _moving_average_(avgs, g, decay, one_minus):
    """``avg = decay * avg + one_minus * g``: the first moment of Adam, Adamax, Nadam and
    LAMB. The caller gives ``one_minus`` as its MXNet kernel computes it (in float32 or
    float64), which decides the last bit."""
    torch._foreach_mul_(avgs, decay)
    torch._foreach_add_(avgs, torch._foreach_mul(g, one_minus))


def _moving_square_(avgs, g, decay, one_minus):
    """``avg = decay * avg + (one_minus * g) * g``: the second moment of Adam, Nadam and LAMB,
    RMSProp's and AdaDelta's running mean of squares."""
    sq = torch._foreach_mul(g, one_minus)
    torch._foreach_mul_(sq, g)
    torch._foreach_mul_(avgs, decay)
    torch._foreach_add_(avgs, sq)


def __getattr__(name):
    # mxnet.optimizer.optimizer.SGD (MXNet's module path, and the one pickled optimizers
    # written before the rules moved to their own modules name).
    from .. import optimizer as _package
    if name in _package.__all__:
        return getattr(_package, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
