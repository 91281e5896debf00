"""Running a kernel on arrays' storages: the one way, for every caller.

An operator pushed by ``invoke`` or by the fast path, a compiled graph (``CachedOp``,
``Executor``), autograd's ``backward`` and ``grad``: each is an engine operation whose
closure is built here, from these pieces:

- ``tensors``: what a kernel reads of its input arrays: the storage's tensor, cut to the
  array's view; while recording, the inputs outside the graph detached (``record_outputs``
  names them) and integer arrays' float64 shadows (MXNet differentiates integer arrays too);
- ``recording``: the one grad-mode switch. The engine runs operations with torch's grad mode
  off; a recorded one turns it on before it cuts its inputs' views and off once its results
  are stored, so that torch records the graph, casts and copies included (the commonest
  recorded operation, ``recorded_op``, does the same inline: a frame less per operation);
- storing results: a new array takes its tensor (a copy where the kernel may return a view of
  an input: MXNet's operators never do), an ``out=`` target is written in place, an integer
  result keeps its float result as its shadow, and a gradient goes into its buffer as its
  ``grad_req`` says (``store_gradient``);
- ``record_outputs``: autograd's graph as the arrays hold it (which marked variables a result
  depends on, which recorded results it was computed from).

``closure(fn, inputs, outs, kw, rec)`` builds the operation running ``fn(*tensors, **kw)``
into ``outs``; ``plain`` runs a tiny operator on plain arrays at once or pushes it (the fast
path's execution). A per-operator input cast (mixed precision: ``closure``'s ``casts``) is
made in ``tensors``, where every kernel's inputs are made (see DEVELOPERS.md, "Running a
kernel on arrays").

>>> import neomx as mx
>>> from neomx.ndarray import run
>>> from neomx.ndarray.ndarray import empty_like_spec
>>> from neomx import engine
>>> x = mx.nd.array([1.0, -2.0])
>>> y = empty_like_spec((2,), 'float32', x.context)
>>> fn = run.closure(lambda t: t.abs() * 2, [x], [y])
>>> engine.push(fn, [x._var], [y._var], x.context, 'twice_abs')
>>> y.asnumpy().tolist()
[2.0, 4.0]
"""
import weakref
from functools import partial

import torch

from ..base import dtype_torch
from ..engine import NOT_NOW, push, run_now
from ..ops.layout import dense, is_channels_last, is_dense, row_major

__all__ = ['INTEGERS', 'tensors', 'recording', 'closure', 'recorded_op', 'plain', 'record_outputs',
           'merge_leaves', 'shadowed', 'RELEASED', 'release', 'reaches_released',
           'shadow_tensor', 'integer_gradient', 'leaf', 'store_into', 'store_gradient', 'own',
           'Kept', 'register_storage_types']

# dtypes differentiated through a float64 shadow (bool arrays too: MXNet differentiates them
# like integers)
INTEGERS = frozenset(('int8', 'uint8', 'int16', 'int32', 'int64', 'bool'))
_EMPTY = {}


# -- the grad-mode switch ---------------------------------------------------------------------

is_grad_enabled = torch.is_grad_enabled
set_grad_enabled = torch._C._set_grad_enabled
Tensor = torch.Tensor


class recording:
    """``with recording(on):`` runs its block with torch's grad mode ``on`` (default True) and
    then puts it back: the one grad-mode switch. Engine operations run with grad mode off (see
    the engine's workers); a recorded kernel, the gradient computation of
    ``autograd.grad(create_graph=True)`` and a copy of a recorded array turn it on."""
    __slots__ = ('on', 'prev')

    def __init__(self, on=True):
        self.on = on

    def __enter__(self):
        self.prev = torch.is_grad_enabled()
        torch._C._set_grad_enabled(self.on)

    def __exit__(self, *exc):
        torch._C._set_grad_enabled(self.prev)


# -- storage types other than dense ---------------------------------------------------------------

class _StorageTypes:
    """How an operation reads and stores arrays in their own storage types (csr, row_sparse),
    for closures built with ``stypes``: registered by the layer that defines them
    (``ndarray/sparse.py``, with ``register_storage_types``), since this module knows dense
    storage only."""
    read = None         # read(x) -> the tensor of array x in its storage type
    store = None        # store(o, r, into) -> None: result r into array o, in o's storage type


def register_storage_types(read, store):
    """Installs the storage-type hook: ``read(x)``, the tensor an operation reads of array
    ``x`` (a sparse tensor for a sparse array, the dense one else); ``store(o, r, into)``,
    which stores the kernel's result ``r`` into array ``o`` converted to ``o``'s storage type
    (``into``: ``o`` is an existing array, written in place)."""
    _StorageTypes.read = staticmethod(read)
    _StorageTypes.store = staticmethod(store)


# -- what a kernel reads ------------------------------------------------------------------------

def tensors(inputs, params=(), rec=False, shadows=False, casts=None, stypes=False):
    """The tensors a kernel reads of NDArrays ``inputs`` (None for an absent input), then of
    the Vars ``params`` (whole arrays' storages, which a compiled graph's caller keeps). With
    ``rec`` from ``record_outputs`` (positions, not True), the inputs outside the graph are
    detached, so that a released graph is never reached again; with ``shadows``, integer
    arrays autograd follows give their float64 shadows; ``casts`` (torch dtypes or None, one
    per input: mixed precision's, from ``ops.amp.table``) converts the inputs it names. Called
    inside the engine operation (and, recording, under ``recording()``, so that the views cut
    and the casts made here are in the graph: a gradient flows back through a cast in the
    input's dtype). With ``stypes``, each array is read in its own storage type (the
    registered ``read``: a sparse array's sparse tensor)."""
    if stypes:
        read = _StorageTypes.read
        return [None if x is None else read(x) for x in inputs]
    if shadows:
        ts = [None if x is None else
              (shadow_tensor(x) if x._var.shadow is not None else x._tensor())
              for x in inputs]
        if params:
            ts += [v.tensor if v.shadow is None else v.shadow for v in params]
    else:
        ts = [None if x is None else (x._var.tensor if x._view is None else x._tensor())
              for x in inputs]
        if params:
            ts += [v.tensor for v in params]
    if rec is not True and rec:
        for i in rec:
            ts[i] = ts[i].detach()
    if casts is not None:
        for i, c in enumerate(casts):
            if c is not None and ts[i] is not None:
                ts[i] = ts[i].to(c)
    return ts


def shadow_tensor(x):
    """The float64 copy autograd follows for integer array ``x`` (a view of it for a view)."""
    t = x._var.shadow
    if x._view is None:
        return t
    return t.as_strided(x._shape, row_major(x._shape), t.storage_offset() + x._view)


def integer_gradient(shadow):
    """``shadow``, the float shadow of an integer result, with the gradient reaching it made
    whole: in MXNet an integer array's gradient has its dtype, so a fractional gradient
    flowing back into an integer value is truncated there."""
    if shadow.requires_grad:
        shadow.register_hook(torch.trunc)
    return shadow


def leaf(t):
    """A fresh autograd leaf of tensor ``t``: detached, requiring grad; an integer tensor's is
    its float64 shadow."""
    if not (t.is_floating_point() or t.is_complex()):
        t = t.double()
    return t.detach().requires_grad_()


# -- how results are stored ---------------------------------------------------------------------

def own(r):
    """Makes a kernel result safe to keep as storage: row-major and sharing memory with no
    input (MXNet's operators never return views)."""
    if r._base is not None or not is_dense(r):
        if r.requires_grad:
            # after a recording kernel has turned grad mode off again: the copy must stay in
            # the graph, or gradients through views (transpose, slices) are lost
            with recording():
                return r.clone(memory_format=torch.contiguous_format)
        return r.clone(memory_format=torch.contiguous_format)
    return r


def _store_shadowed(outs, rs, view):
    """Results of a kernel run on shadows into the arrays ``outs``: an integer array takes the
    float result as its shadow (None when the result is not float) and its integer value, a
    float array its value in its dtype (with grad mode on: the casts are in the graph)."""
    if isinstance(rs, torch.Tensor):
        rs = (rs,)
    for o, r in zip(outs, rs):
        if view:
            r = own(r)
        v = o._var
        want = dtype_torch(o._dtype)
        if o._dtype in INTEGERS:
            v.shadow = integer_gradient(r) if r.is_floating_point() else None
            v.tensor = r.detach().to(want)
        else:
            v.tensor = r if r.dtype == want else r.to(want)


def store_into(target, value):
    """Writes tensor ``value`` into NDArray ``target``'s storage (in place, as views and
    ``out=`` require; a storage nothing has written yet takes the value)."""
    var = target._var
    if target._view is None and var.tensor is None:
        var.tensor = dense(value.to(dtype_torch(target._dtype)))
        return
    dst = target._tensor(write=True)
    if value.requires_grad and torch.is_grad_enabled():
        dst.copy_(value)
    else:
        with recording(False):
            dst.copy_(value)


def store_gradient(buf, g, req, like=None):
    """Writes gradient ``g`` into the array ``buf`` as ``req`` says ('add' adds to it, else it
    is replaced), reshaped to the buffer's shape (a variable marked through a reshaped view)
    and cast to its dtype (an integer variable's gradient comes from its float shadow). A
    gradient of a weight stored channels-last (``like``, see ops.layout.keep_channels_last)
    stays channels-last; the others are row-major (a sparse gradient: see below)."""
    var = buf._var
    if g.shape != buf._shape:
        g = g.reshape(buf._shape)
    want = dtype_torch(buf._dtype)
    if g.dtype != want:
        g = g.to(want)
    if g.layout is not torch.strided:
        # a sparse gradient (Embedding's with sparse_grad): a sparse buffer keeps it sparse
        # (its storage converts it), a dense one gets its dense form
        if req == 'add':
            var.tensor = var.tensor + g
        else:
            var.tensor = g if buf._sparse else g.to_dense()
    elif req == 'add':
        var.tensor = buf._tensor() + g if buf._view is not None else var.tensor + g
    elif like is not None and is_channels_last(like) and is_channels_last(g):
        var.tensor = g
    else:
        var.tensor = dense(g)


# -- autograd's graph on the arrays -------------------------------------------------------------

# ``Storage.parents`` of a recorded result whose graph a backward pass without retain_graph
# released: as in MXNet, it is a constant to later recordings, and a graph still reaching it
# cannot be differentiated.
RELEASED = ('released',)
# How many times a graph was released: a recorded result found not to reach a released one
# keeps the count it was found at (``Storage.alive_at``), so each is looked at once per release.
_RELEASES = [0]


def release(vars_):
    """Releases the recorded Storages ``vars_`` (a backward pass without retain_graph): they
    become constants to later recordings, and a graph reaching one cannot be differentiated.
    The input arrays an operator read (``recipe``, for get_symbol) go with their graph."""
    _RELEASES[0] += 1
    _mark_released(vars_)


def _mark_released(vars_):
    for v in vars_:
        v.leaves = None
        v.parents = RELEASED
        v.recipe = None


def reaches_released(v):
    """Whether the graph of the recorded Storage ``v`` reaches a released one: it was computed
    from a result an earlier backward pass released (a moving average updated from each
    batch's mean), so it can never be differentiated."""
    now = _RELEASES[0]
    seen, stack, walked = set(), [v], []
    while stack:
        u = stack.pop()
        if u.alive_at == now or id(u) in seen:
            continue
        p = u.parents
        if p is RELEASED:
            return True
        seen.add(id(u))
        walked.append(u)
        if p:
            stack.extend(p)
    for u in walked:
        u.alive_at = now
    return False


def record_outputs(out_vars, in_vars, leaves, recipe=None):
    """Marks the Storages ``out_vars`` as recorded results, depending on ``leaves``, of the
    inputs whose Storages are ``in_vars`` (None for an absent input); ``recipe`` is
    ``(operator, attributes, input NDArrays)`` where an operator made them (for
    ``autograd.get_symbol``). Returns the ``rec`` that ``tensors`` and ``closure`` take: True,
    or the positions of the inputs outside the graph, whose tensors are cut off from any old
    graph.

    Results computed from a recorded result whose graph reaches a released one are released
    at once, all their inputs cut: as in MXNet, their graph cannot be differentiated, and it
    is not kept. Held on, a value carried from batch to batch and updated from each batch's
    recorded results (the moving statistics of a batch normalisation written out by hand)
    would keep every batch's graph alive."""
    # one pass over the inputs, in tuples built by hand: a comprehension's frame cost more
    # than the rest of the bookkeeping of a recorded operation of one or two inputs
    parents = outside = ()
    i = 0
    for v in in_vars:
        if v is not None:
            if getattr(v, 'leaves', None):
                parents += (v,)
            else:
                outside += (i,)
        i += 1
    now = _RELEASES[0]
    if now:
        for p in parents:
            if p.alive_at != now and reaches_released(p):
                _mark_released(out_vars)    # new: nothing found alive can reach them
                return tuple(i for i, v in enumerate(in_vars) if v is not None) or True
    siblings = tuple(weakref.ref(v) for v in out_vars) if len(out_vars) > 1 else None
    k = 0
    for v in out_vars:
        v.leaves = leaves
        v.parents = parents
        v.siblings = siblings
        v.recipe = None if recipe is None else recipe + (k,)
        v.alive_at = now
        k += 1
    return outside or True


def merge_leaves(vars_):
    """The marked variables (weak references) the Storages ``vars_`` depend on, or None."""
    leaves = None
    for v in vars_:
        lv = getattr(v, 'leaves', None)
        if lv:
            if leaves is None or leaves is lv:
                leaves = lv
            elif not lv <= leaves:      # a new set only for new leaves
                leaves = lv if leaves <= lv else leaves | lv
    return leaves


def shadowed(reads, out_dtypes):
    """Whether a recorded operation reading the Vars ``reads`` into outputs of ``out_dtypes``
    runs on float64 shadows: it reads an integer array autograd follows or makes an integer
    array."""
    for v in reads:
        if getattr(v, 'shadow', None) is not None:
            return True
    for d in out_dtypes:
        if d in INTEGERS:
            return True
    return False


# -- the operation ------------------------------------------------------------------------------

class Kept:
    """A graph that the caller keeps for its own backward pass (``Executor``): the inputs at
    ``diff`` positions become fresh leaves (``leaf``), those at ``moved`` positions are moved to
    ``device``, the kernel runs with grad mode ``record``; the results are stored detached, and
    the leaves (``inputs``) and results (``outputs``) stay here for the backward pass."""
    __slots__ = ('diff', 'moved', 'device', 'record', 'inputs', 'outputs')

    def __init__(self, diff, moved, device, record):
        self.diff = diff
        self.moved = moved
        self.device = device
        self.record = record
        self.inputs = self.outputs = None

    def feed(self, ts):
        """The tensors the kernel reads of the inputs' tensors ``ts``."""
        dev = self.device
        fed, leaves = [], []
        for t, d, m in zip(ts, self.diff, self.moved):
            if d:
                t = leaf(t)
                leaves.append(t)
            fed.append(t.to(dev) if m else t)
        self.inputs = leaves
        return fed


def closure(fn, inputs, outs, kw=_EMPTY, rec=False, view=False, params=(), into=False,
            shadows=False, kept=None, casts=None, stypes=False):
    """The engine operation running ``fn(*tensors, **kw)`` on NDArrays ``inputs`` (then the
    Vars ``params``) into NDArrays ``outs``:

    - ``rec``: from ``record_outputs`` (False: not recorded): ``fn`` runs with grad mode on;
    - ``view``: ``fn`` may return views of its inputs (copied, ``own``);
    - ``into``: ``outs`` are existing arrays, written in place (``out=``);
    - ``shadows``: recorded on integer arrays (``shadowed``): ``fn`` runs on float64 shadows
      and integer results keep theirs. A kernel whose integer gradient MXNet defines as zero
      (``kernel.int_no_grad``: mod, floor division) runs plainly instead, its integer results
      cut from the graph;
    - ``kept``: a ``Kept`` graph for the caller's backward pass (no ``rec``);
    - ``casts``: the dtype (a name, or None: as it is) each input is cast to before ``fn``
      reads it (mixed precision: ``ops.amp.CastTable.casts``);
    - ``stypes``: ``fn`` reads each input in its storage type (a sparse array's sparse tensor)
      and each result is stored in its array's storage type, through the hook the sparse
      layer registers (``register_storage_types``); not recorded (while autograd records,
      operators on sparse arrays compute on dense forms, as dense operators).
    """
    # Each case's operation is made by a function of its own, which holds only what that
    # operation needs: inner functions here would make every call allocate the cells of all
    # of them (a seventh of a recorded push's cost).
    if stypes:
        return _run_stored(fn, inputs, outs, kw, into)
    if casts is not None:
        casts = tuple(None if c is None else dtype_torch(c) for c in casts)
    if shadows:
        if getattr(fn, 'int_no_grad', False) and all(o._dtype in INTEGERS for o in outs):
            shadows = rec = False
        else:
            for o in outs:
                if o._dtype in INTEGERS:
                    o._var.shadow = True     # until the operation makes it
            return _run_shadowed(fn, inputs, outs, kw, rec, view, params, casts)
    if kept is not None:
        return _run_kept(fn, inputs, outs, kw, params, casts, kept)
    if into:
        return _run_into(fn, inputs, outs, kw, rec, params, casts)
    if len(outs) == 1:
        ov = outs[0]._var
        present = True      # every input given (a generator here costs 0.4 us a call)
        for x in inputs:
            if x is None:
                present = False
                break
        if present and not (params or view) and casts is None:
            if len(inputs) == 1 and not rec:
                return _run1(fn, inputs[0], ov, kw)
            if rec:
                return recorded_op(fn, inputs, ov, kw, None if rec is True else rec)
        return _run_one(fn, inputs, ov, kw, rec, view, params, casts)
    return _run_n(fn, inputs, [o._var for o in outs], kw, rec, view, params, casts)


def _compute(fn, inputs, params, kw, rec, casts):
    """``fn`` on the inputs' tensors, in grad mode when recorded."""
    if rec:
        with recording():
            return fn(*tensors(inputs, params, rec, casts=casts), **kw)
    return fn(*tensors(inputs, params, casts=casts), **kw)


def _run_stored(fn, inputs, outs, kw, into):
    store = _StorageTypes.store

    def run_stored():
        rs = fn(*tensors(inputs, stypes=True), **kw)
        for o, r in zip(outs, (rs,) if isinstance(rs, torch.Tensor) else rs):
            store(o, r, into)
    return run_stored


def _run_shadowed(fn, inputs, outs, kw, rec, view, params, casts):
    def run_shadowed():
        with recording():
            _store_shadowed(outs, fn(*tensors(inputs, params, rec, True, casts), **kw), view)
    return run_shadowed


def _run_kept(fn, inputs, outs, kw, params, casts, kept):
    def run_kept():
        ts = kept.feed(tensors(inputs, params, casts=casts))
        with recording(kept.record):
            rs = fn(*ts, **kw)
        for o, r in zip(outs, rs):
            r = r.detach()
            want = dtype_torch(o._dtype)
            o._var.tensor = r if r.dtype == want else r.to(want)
        kept.outputs = rs
    return run_kept


def _run_into(fn, inputs, outs, kw, rec, params, casts):
    def run_into():
        rs = _compute(fn, inputs, params, kw, rec, casts)
        for t, r in zip(outs, (rs,) if isinstance(rs, torch.Tensor) else rs):
            store_into(t, r)
    return run_into


def _run1(fn, x, ov, kw):
    def run1():
        r = fn(x._var.tensor if x._view is None else x._tensor(), **kw)
        ov.tensor = r if r.__class__ is not tuple else r[0]
    return run1


def recorded_op(fn, inputs, ov, kw, cut):
    """``closure(fn, inputs, outs, kw, rec)`` of the commonest recorded operation: every input
    present, one result (its Storage ``ov``), no params, views kept, casts or shadows; ``cut``:
    the inputs outside the graph (``rec`` unless it is True), or None. The fast path, which
    knows its operations are such, builds them here without ``closure``'s tests."""
    # A partial of a module function, not an inner function: made in C, without a frame of
    # its own (some 300 of these a batch of the book's RNN)
    return partial(_run_recorded, fn, inputs, ov, kw, cut)


def _run_recorded(fn, inputs, ov, kw, cut):
    # _compute() and tensors() in one frame: 2.4 us of a recorded ``x + y``'s 6.6
    # (NaiveEngine) went to the frames.
    prev = is_grad_enabled()
    set_grad_enabled(True)      # recording(), inlined
    try:
        if len(inputs) == 2:    # a binary operator's, without a comprehension's frame
            x, y = inputs
            ts = [x._var.tensor if x._view is None else x._tensor(),
                  y._var.tensor if y._view is None else y._tensor()]
        else:
            ts = [x._var.tensor if x._view is None else x._tensor() for x in inputs]
        if cut is not None:
            for i in cut:
                t = ts[i]
                if t.requires_grad:     # only a tensor in a graph can reach one
                    ts[i] = t.detach()
        r = fn(*ts, **kw) if kw else fn(*ts)
    finally:
        set_grad_enabled(prev)
    ov.tensor = r if r.__class__ is Tensor else (
        r[0] if isinstance(r, (tuple, list)) else r)     # as run_one takes it


def _run_one(fn, inputs, ov, kw, rec, view, params, casts):
    def run_one():
        r = _compute(fn, inputs, params, kw, rec, casts)
        if isinstance(r, (tuple, list)):
            r = r[0]
        ov.tensor = own(r) if view else r
    return run_one


def _run_n(fn, inputs, ovs, kw, rec, view, params, casts):
    def run_n():
        rs = _compute(fn, inputs, params, kw, rec, casts)
        for v, r in zip(ovs, rs):
            v.tensor = own(r) if view else r
    return run_n


def run_out(kernel, a, b, arg, out):
    """The operation writing ``kernel(a, b)`` (``kernel(a, arg)`` when ``b`` is None) into the
    existing array ``out`` through the torch function ``kernel``'s ``out=``
    (``fastpath.Plan.kernel``), outside autograd: an input is ``out`` itself or does not share
    its storage."""
    def run_out():
        ta = a._var.tensor if a._view is None else a._tensor()
        tb = arg if b is None else (b._var.tensor if b._view is None else b._tensor())
        dst = out._tensor(write=True)
        if dst is None:             # nothing has written the array yet
            store_into(out, kernel(ta, tb))
        else:
            kernel(ta, tb, out=dst)
    return run_out


def plain(kernel, arg, attrs, a, b, var, ctx, work, name):
    """Runs ``kernel`` on plain arrays ``a`` (and ``b`` unless None) into the new Storage
    ``var``: ``kernel(ta, tb, **attrs)``, or ``kernel(ta, arg)`` with a number's argument
    (``fastpath.Plan.arg``). An operation whose inputs need no autograd is offered to
    ``engine.run_now``, which runs a tiny one on a CPU at once in this thread when nothing is
    pending on its inputs; anything else is pushed. The fast path's execution, kept lean: no
    closure and no tuple where the operation runs at once. An input that is a view (``x[i]``)
    gives the kernel its part of the storage's tensor; one of a storage laid out otherwise than
    row-major is cut inside a pushed operation (``NDArray._tensor``)."""
    if a._view is not None or (b is not None and b._view is not None):
        return _plain_views(kernel, arg, attrs, a, b, var, ctx, work, name)
    av = a._var
    # The fast path checks that the inputs need no autograd (a kernel on a marked variable
    # would record a graph here); engine.run_now the rest. The output is new: nobody else
    # sees it before it is returned.
    t = av.tensor
    if t is not None and not t.requires_grad:
        if b is not None:
            bv = b._var
            u = bv.tensor
            if u is None or u.requires_grad:
                r = NOT_NOW
            elif attrs:
                r = run_now(partial(kernel, **attrs), t, u, av, bv, var, ctx, name, work)
            else:
                r = run_now(kernel, t, u, av, bv, var, ctx, name, work)
        elif arg is not None:
            r = run_now(kernel, t, arg, av, None, var, ctx, name, work)
        elif attrs:
            r = run_now(partial(kernel, **attrs), t, None, av, None, var, ctx, name, work)
        else:
            r = run_now(kernel, t, None, av, None, var, ctx, name, work)
        if r is not NOT_NOW:
            var.tensor = r
            return
    if b is None:
        reads = (av,)
        if arg is not None:
            def fn():
                var.tensor = kernel(av.tensor, arg)
        else:
            def fn():
                var.tensor = kernel(av.tensor, **attrs)
    else:
        bv = b._var
        reads = (av, bv)

        def fn():
            var.tensor = kernel(av.tensor, bv.tensor, **attrs)
    push(fn, reads, (var,), ctx, name, work=work)


def _part(x):
    """The tensor of plain array ``x`` if it can be cut outside an operation: None while it is
    pending or needs autograd, or for a view of a storage that is not row-major."""
    t = x._var.tensor
    if t is None or t.requires_grad:
        return None
    if x._view is None:
        return t
    return x._view_of(t) if t.is_contiguous() else None


def _plain_views(kernel, arg, attrs, a, b, var, ctx, work, name):
    """``plain`` where an input is a view."""
    if attrs:
        kernel = partial(kernel, **attrs)
    t = _part(a)
    u = arg if b is None else _part(b)
    if t is not None and (u is not None or (b is None and arg is None)):
        r = run_now(kernel, t, u, a._var, None if b is None else b._var, var, ctx, name, work)
        if r is not NOT_NOW:
            var.tensor = r
            return
    if b is None:
        reads = (a._var,)
        if arg is not None:
            def fn():
                var.tensor = kernel(a._tensor(), arg)
        else:
            def fn():
                var.tensor = kernel(a._tensor())
    else:
        reads = (a._var, b._var)

        def fn():
            var.tensor = kernel(a._tensor(), b._tensor())
    push(fn, reads, (var,), ctx, name, work=work)
