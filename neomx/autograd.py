"""Automatic differentiation with MXNet's interface, on torch autograd.

While recording, operations whose inputs depend on a marked variable run with torch's grad mode
on (on the engine's worker), so torch builds the graph. ``backward`` is itself an engine
operation: it reads the heads and writes the gradient buffers of the variables they depend on,
so it is ordered with everything else and a loss on ``cpu(0)`` and one on ``cpu(1)``
back-propagate at the same time.

>>> import neomx as mx
>>> x = mx.nd.array([1.0, 2.0, 3.0])
>>> x.attach_grad()
>>> with mx.autograd.record():
...     y = (x * x).sum()
>>> y.backward()
>>> x.grad.asnumpy().tolist()
[2.0, 4.0, 6.0]
"""
import contextlib
import warnings
import weakref

import numpy as np

import torch

from . import engine as _engine
from .base import MXNetError, mode
from .ndarray.ndarray import NDArray, Storage, _make, _op, in_array_class
from .ndarray.sparse import zeros as sparse_zeros
from .ndarray.run import (RELEASED, closure, leaf, record_outputs, recording, release,
                          shadow_tensor, store_gradient)
from .ops.layout import dense

__all__ = ['record', 'pause', 'train_mode', 'predict_mode', 'is_recording', 'is_training',
           'set_recording', 'set_training', 'mark_variables', 'backward', 'grad', 'get_symbol',
           'Function', 'NDArray']


def set_recording(is_recording):
    """Sets the recording state; returns the previous one."""
    prev = mode.recording
    mode.recording = bool(is_recording)
    return prev


def set_training(train_mode):
    """Sets the train/predict state; returns the previous one."""
    prev = mode.training
    mode.training = bool(train_mode)
    return prev


def is_recording():
    return mode.recording


def is_training():
    return mode.training


@contextlib.contextmanager
def _scope(recording, training):
    prev_rec, prev_train = mode.recording, mode.training
    if recording is not None:
        mode.recording = recording
    if training is not None:
        mode.training = training
    try:
        yield
    finally:
        mode.recording, mode.training = prev_rec, prev_train


def record(train_mode=True):
    """Records operations for differentiation inside a ``with`` block (in train mode unless
    ``train_mode=False``)."""
    return _scope(True, train_mode)


def pause(train_mode=False):
    """Stops recording inside a ``with`` block."""
    return _scope(False, train_mode)


def train_mode():
    return _scope(None, True)


def predict_mode():
    return _scope(None, False)


def mark_variables(variables, gradients, grad_reqs='write'):
    """Marks ``variables`` for differentiation, with ``gradients`` as their buffers."""
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not len(variables) == len(gradients) == len(grad_reqs):
        raise MXNetError("mark_variables: %d variables, %d gradients and %d grad_reqs"
                         % (len(variables), len(gradients), len(grad_reqs)))
    for x, g, req in zip(variables, gradients, grad_reqs):
        if req not in ('write', 'add', 'null'):
            raise MXNetError("grad_req must be 'write', 'add' or 'null', got %r" % (req,))
        if x._view is not None:
            # A reshaped view may be marked: it shares all of its storage. Views of a part of
            # an array (slices) may not. Telling them apart needs the storage's size.
            x.wait_to_read()
            if x._view != 0 or x._var.tensor.numel() != x.size:
                raise MXNetError("attach_grad: the array is a view of part of another (a "
                                 "slice); mark the array it comes from, or a copy")
        if g.shape != x.shape:
            raise MXNetError("mark_variables: gradient shape %s differs from variable shape %s"
                             % (g.shape, x.shape))
        var = x._var
        var.grad = g if req != 'null' else None     # MXNet: no gradient buffer for 'null'
        var.grad_req = req
        differentiable = req != 'null' and x._dtype in ('float32', 'float64', 'float16', 'bfloat16')
        # MXNet differentiates integer arrays too: through a float64 shadow (ndarray.py)
        integer = req != 'null' and x._dtype in ('int8', 'uint8', 'int16', 'int32', 'int64', 'bool')
        # weakly: a marked variable's set names itself, and a strong reference would be a
        # cycle keeping its tensor and gradient until the garbage collector runs
        var.leaves = frozenset((weakref.ref(var),)) if differentiable or integer else None
        var.parents = None
        var.shadow = True if integer else None

        def fn(var=var, differentiable=differentiable, integer=integer):
            t = dense(var.tensor.detach())
            var.tensor = t.requires_grad_(True) if differentiable else t
            if integer:
                var.shadow = leaf(t)
        _engine.push(fn, [var], [var], x._ctx, '_mark_variable')


def _heads(heads, head_grads):
    if isinstance(heads, NDArray):
        heads = [heads]
    heads = list(heads)
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    if len(head_grads) != len(heads):
        raise MXNetError("backward: %d heads but %d head gradients" % (len(heads), len(head_grads)))
    head_grads = list(head_grads)
    for i, (h, g) in enumerate(zip(heads, head_grads)):
        if g is not None and g.shape != h.shape:
            if g.size <= h.size:
                raise MXNetError("backward: head gradient of shape %s for a head of shape %s"
                                 % (g.shape, h.shape))
            # MXNet reads a larger head gradient's first elements (code written for it may
            # pass one: MXNet's own control-flow tests do); smaller, it reads past its end
            warnings.warn("backward: head gradient of shape %s for a head of shape %s: its "
                          "first %d elements are used, as MXNet does" % (g.shape, h.shape, h.size),
                          stacklevel=3)
            head_grads[i] = g.reshape((-1,))[:h.size].reshape(h.shape)
    leaves = None
    for h in heads:
        lv = h._var.leaves
        if lv:
            leaves = lv if leaves is None else leaves | lv
    if not leaves:
        raise MXNetError("Cannot differentiate node because it is not in a computational graph. "
                         "You need to set is_recording to true or use autograd.record() to save "
                         "computational graphs for backward. If you want to differentiate the same "
                         "graph twice, you need to pass retain_graph=True to backward.")
    return heads, list(head_grads), leaves


def _graph(heads):
    """The Storages of the recorded results that ``heads`` were computed from (the heads'
    own included). Raises when one of them was released by an earlier backward pass."""
    seen = set()        # Storages hash by identity
    stack = [h._var for h in heads]
    nodes = []
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        p = v.parents
        if p is None:
            continue
        if p is RELEASED:
            raise MXNetError("backward: the graph reaches an array whose graph an earlier "
                             "backward() released; pass retain_graph=True to that backward to "
                             "differentiate through it again")
        nodes.append(v)
        stack.extend(p)
    return nodes


def _release(nodes):
    """Releases the graph of ``nodes`` (from ``_graph``) as MXNet's backward does without
    retain_graph: from now on those arrays are constants to later recordings. Returns the
    function the backward operation calls once torch is done, to drop their torch graphs.
    The other results of the operations that made them go too (an RNN's new state beside the
    output a loss was computed from): MXNet frees an operation's node, all its outputs with it,
    so a state carried into the next batch is a constant there."""
    siblings = [s() for v in nodes if v.siblings is not None for s in v.siblings]
    if siblings:
        nodes = list(dict.fromkeys(nodes + [s for s in siblings if s is not None]))
    release(nodes)

    def detach():
        for v in nodes:
            t = v.tensor
            if t is not None and t.requires_grad:
                v.tensor = t.detach()
    return detach


def _head_tensors(heads, head_grads):
    ts, gs = [], []
    for h, g in zip(heads, head_grads):
        if h._var.shadow is not None:       # an integer result: its float64 shadow
            with recording():
                t = shadow_tensor(h)
        elif h._view is not None:
            # A view head (x.reshape(...), a[()]) is cut from its storage here, on the
            # engine's thread where grad mode is off: it must be cut with grad mode on.
            with recording():
                t = h._tensor()
        else:
            t = h._tensor()
        if not t.requires_grad:
            continue    # cut off from the variables (zeros_like, BlockGrad): zero gradient
        ts.append(t)
        gs.append(torch.ones_like(t) if g is None else g._tensor().to(t.dtype))
    return ts, gs


def _materialised(g, like):
    """A gradient as an array can hold it: zeros for none, and torch's ZeroTensor (what it
    gives for a second derivative that is zero, as abs's) made a real one."""
    if g is None:
        return torch.zeros_like(like)
    if g._is_zerotensor():
        return torch.zeros(g.shape, dtype=g.dtype, device=g.device)
    return g


def _explain(exc):
    msg = str(exc)
    if 'modified by an inplace operation' in msg:
        return MXNetError("backward: an array needed to compute the gradient was written in place "
                          "after it was recorded (x[:] = ..., x += ..., out=x); write into a new "
                          "array instead, or record after the write. (%s)" % msg.split('\n')[0])
    if 'backward through the graph a second time' in msg:
        return MXNetError("backward: this graph was already differentiated and freed; pass "
                          "retain_graph=True to the first backward to differentiate it twice")
    return exc


# Called inside each backward operation just before torch differentiates, as ``cb(targets,
# inputs)`` (the Storages of the marked variables receiving gradients, and their leaf tensors):
# the distributed KVStore registers its gradient-ready hooks there, so that gradient reduction
# starts while the backward pass is still running (neomx/kvstore/dist.py).
backward_callbacks = []


try:
    from torch.autograd.graph import _engine_run_backward
except ImportError:  # pragma: no cover - older torch
    _engine_run_backward = None


def _run_backward(ts, gs, retain_graph, inputs):
    # Head gradients are checked when backward is pushed, so torch's own checking (whose first
    # use imports its symbolic-shape machinery and sympy, about a second) can be skipped.
    if _engine_run_backward is None:
        torch.autograd.backward(ts, gs, retain_graph=retain_graph, inputs=inputs)
    else:
        _engine_run_backward(tuple(ts), tuple(gs), retain_graph, False, tuple(inputs),
                             allow_unreachable=True, accumulate_grad=True)


def _run_grad(ts, gs, retain_graph, create_graph, inputs):
    if _engine_run_backward is None:
        return torch.autograd.grad(ts, inputs, gs, retain_graph=retain_graph,
                                   create_graph=create_graph, allow_unused=True)
    return _engine_run_backward(tuple(ts), tuple(gs), retain_graph, create_graph, tuple(inputs),
                                allow_unreachable=True, accumulate_grad=False)


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Back-propagates from ``heads`` into the gradient buffers of the marked variables."""
    heads, head_grads, leaves = _heads(heads, head_grads)
    nodes = _graph(heads)
    leaves = sorted((lv for lv in (r() for r in leaves) if lv is not None), key=id)
    reads = [h._var for h in heads] + [g._var for g in head_grads if g is not None] + leaves
    targets = [lv for lv in leaves if lv.grad_req != 'null' and lv.grad is not None]
    # the buffers and requests as they are now: attach_grad before the operation runs gives
    # later passes new buffers, not this one's gradients
    buffers = [(lv.grad, lv.grad_req) for lv in targets]
    writes = [b._var for b, _ in buffers]
    for lv in targets:
        lv.fresh_grad = True
    detach = None if retain_graph else _release(nodes)

    def fn():
        ts, gs = _head_tensors(heads, head_grads)
        inputs = [lv.tensor if lv.shadow is None else lv.shadow for lv in targets]
        for cb in backward_callbacks:
            cb(targets, inputs)
        try:
            if ts:
                _run_backward(ts, gs, retain_graph, inputs)
        except RuntimeError as exc:
            raise _explain(exc) from exc
        finally:
            if detach is not None:
                detach()
        for t, (buf, req) in zip(inputs, buffers):
            g = _materialised(t.grad, t)
            t.grad = None
            store_gradient(buf, g, req, like=t)
    _engine.push(fn, reads, writes, heads[0]._ctx, '_backward')


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """The gradients of ``heads`` with respect to ``variables`` as new arrays (the variables'
    own buffers are left alone); with ``create_graph`` they can be differentiated again."""
    heads, head_grads, _ = _heads(heads, head_grads)
    single = isinstance(variables, NDArray)
    if single:
        variables = [variables]
    for v in variables:
        if not v._var.leaves or weakref.ref(v._var) not in v._var.leaves:
            raise MXNetError("grad: every variable must be marked with attach_grad() before "
                             "recording")
    if retain_graph is None:
        retain_graph = create_graph
    nodes = _graph(heads)
    # each gradient in its variable's class (mx.np.ndarray for an mx.np.ndarray)
    outs = [in_array_class(_make(Storage(), v._shape, v._dtype, v._ctx), type(v))
            for v in variables]
    if create_graph:
        leaves = frozenset().union(*[v._var.leaves for v in variables])
        # Their graph is torch's gradient graph; what it reaches of the heads' graph is torch's
        # to know, so releasing it releases only these results.
        record_outputs([o._var for o in outs], [v._var for v in variables], leaves)
    detach = None if retain_graph else _release(nodes)
    reads = [h._var for h in heads] + [g._var for g in head_grads if g is not None] + \
        [v._var for v in variables]

    def fn():
        ts, gs = _head_tensors(heads, head_grads)
        # The marked tensors themselves (a variable marked through a reshaped view is its whole
        # storage): a view made now would not be in the graph.
        inputs = [v._var.tensor if v._var.shadow is None else v._var.shadow
                  for v in variables]
        try:
            with recording(create_graph):
                gr = _run_grad(ts, gs, retain_graph, create_graph, inputs) \
                    if ts else [None] * len(inputs)
        except RuntimeError as exc:
            raise _explain(exc) from exc
        finally:
            if detach is not None:
                detach()
        for o, g, t, v in zip(outs, gr, inputs, variables):
            g = _materialised(g, t)
            if v._var.shadow is not None:       # an integer variable's gradient
                g = g.to(v._var.tensor.dtype)
            if g.shape != o._shape:
                with recording(create_graph):     # in the new graph
                    g = g.reshape(o._shape)
            o._var.tensor = g if g.layout is torch.strided else g.to_dense()
    _engine.push(fn, reads, [o._var for o in outs], heads[0]._ctx, '_grad')
    return outs     # a list even for a single variable, as in MXNet


def _ndarray_attach_grad(self, grad_req='write', stype=None):
    """Marks this array as a variable to differentiate: allocates ``self.grad``, of
    storage type ``stype`` (by default this array's)."""
    stype = stype or self.stype
    grad = _op('zeros_like')(self) if stype == self.stype else \
        sparse_zeros(stype, self._shape, self._ctx, self._dtype)
    mark_variables([self], [grad], grad_req)


def _ndarray_backward(self, out_grad=None, retain_graph=False, train_mode=True):
    """Computes the gradients of this array with respect to the marked variables."""
    backward([self], None if out_grad is None else [out_grad], retain_graph, train_mode)


# NDArray's autograd methods (MXNet's), added here, in the layer above the arrays.
for _name, _fn in (('attach_grad', _ndarray_attach_grad), ('backward', _ndarray_backward)):
    _fn.__name__, _fn.__qualname__ = _name, 'NDArray.' + _name
    setattr(NDArray, _name, _fn)
del _name, _fn


def _checked_gradients(func, grads, inputs):
    """The tensors of the gradients a Function's ``backward`` returned, one per input, of its
    shape (one that broadcasts to it is broadcast, as MXNet assigns it); anything else raises
    an MXNetError naming the Function, the input and the shapes."""
    name = type(func).__name__
    if len(grads) != len(inputs):
        raise MXNetError("%s.backward returned %d gradient(s) for %d input(s) of forward"
                         % (name, len(grads), len(inputs)))
    out = []
    for i, (g, x) in enumerate(zip(grads, inputs)):
        if g is not None and not isinstance(g, NDArray):
            raise MXNetError("%s.backward returned a %s as the gradient of input %d: expected "
                             "an NDArray of shape %s" % (name, type(g).__name__, i, x.shape))
        if g is not None and g.shape != x.shape:
            try:
                fits = np.broadcast_shapes(g.shape, x.shape) == x.shape
            except ValueError:
                fits = False
            if not fits:
                raise MXNetError("%s.backward returned a gradient of shape %s for input %d, of "
                                 "shape %s: expected the input's shape" % (name, g.shape, i,
                                                                            x.shape))
        t = None if g is None else g._data().detach()
        out.append(t if t is None or g.shape == x.shape else t.expand(x.shape).contiguous())
    return tuple(out)


class Function:
    """A user-defined differentiable function: subclass with ``forward(self, *inputs)`` and
    ``backward(self, *output_grads)`` on NDArrays; ``save_for_backward`` keeps arrays for
    ``backward`` in ``self.saved_tensors``.
    """

    def __init__(self):
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError

    def __call__(self, *inputs):
        with pause(train_mode=mode.training):
            outputs = self.forward(*inputs)
        single = isinstance(outputs, NDArray)
        outs = [outputs] if single else list(outputs)
        leaves = None
        if mode.recording:
            for x in inputs:
                lv = x._var.leaves
                if lv:
                    leaves = lv if leaves is None else leaves | lv
        if not leaves:
            return outputs
        func = self
        results = [in_array_class(_make(Storage(), o._shape, o._dtype, o._ctx), type(o))
                   for o in outs]
        rec = record_outputs([r._var for r in results], [x._var for x in inputs], leaves)

        class _Bridge(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *tensors):
                return tuple(o._tensor().detach().clone() for o in outs)

            @staticmethod
            def backward(ctx, *gouts):
                from .ndarray.ndarray import from_tensor
                with pause():
                    gin = func.backward(*[in_array_class(from_tensor(g.detach().contiguous(),
                                                                     o._ctx), type(o))
                                          for g, o in zip(gouts, outs)])
                gin = [gin] if isinstance(gin, NDArray) else list(gin)
                return _checked_gradients(func, gin, inputs)

        fn = closure(_Bridge.apply, inputs, results, rec=rec)
        _engine.push(fn, [x._var for x in inputs] + [o._var for o in outs],
                     [r._var for r in results], inputs[0]._ctx, type(self).__name__)
        return results[0] if single else results
