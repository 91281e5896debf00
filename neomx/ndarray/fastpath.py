"""The hot path of tiny operations: ``x + 1``, ``x * y``, ``nd.relu(x)``, ``nd.dot(x, w)`` on
plain arrays, in autograd's recording or not, in one place, behind one entry point, ``call``.

The first call of a kind (operator, input shapes and dtypes, and the number of ``x + 1``)
infers its output and remembers a ``Plan``; later calls of that kind look it up in one
dictionary, make the output array and hand the kernel to ``run.plain``, which runs it at once
(a tiny operation on a CPU whose inputs have nothing pending and need no autograd:
``Engine.run_now``) or pushes it; while autograd records, an operation on recorded arrays or
marked variables is recorded as the general path records it, its inference taken from the
plan (the book's RNN from scratch records some 300 such operations a batch); an in-place
one (``x += y``, ``x *= 2``: ``call``'s ``out``) writes into its array as the general path's
``out=`` does. Inputs may be whole arrays or views of a part of one (``x[i]``: a DataLoader's
worker transforms each sample of a batch-shaped array so). Everything else (integer arrays
autograd follows, sparse arrays, tracing, ``out=`` of another shape or dtype, several
outputs, generators) takes ``invoke``'s general path. The module installs
``call`` as ``ndarray._fast_call``, which ``invoke`` and the arithmetic methods try first. Any
change here must keep ``tests/test_ops_elemwise.py``'s "same bits on every call" test passing.

>>> import neomx as mx
>>> x = mx.nd.ones((2,))
>>> (x + 1).asnumpy().tolist()
[2.0, 2.0]
>>> (x + 1).asnumpy().tolist()      # the same kind: its plan is remembered
[2.0, 2.0]
"""
import torch

from .. import engine as _engines
from ..base import dtype_torch, mode, user_line
from ..engine import push
from ..ops import amp as _amp
from ..ops.elemwise import scalar_tensor
from ..ops.registry import ShapeError
from . import ndarray as _ndarray
from .ndarray import Storage, _check_results, _new, _shape_error
from .run import (INTEGERS, closure, merge_leaves, plain, record_outputs, recorded_op,
                  run_out)

__all__ = ['Plan', 'call']

_FLOATS = frozenset(('float32', 'float64', 'float16', 'bfloat16'))
_EMPTY = {}
# A heavy operation without a cost rule counts as more work than any threshold: never inline.
_UNKNOWN_WORK = float('inf')


class Plan:
    """What the fast path remembers of one kind of call: the output's shape and dtype, the
    operation's work (for the engine's inline threshold), the kernel, and the extra positional
    argument the kernel takes after the input tensors (the number of ``x + 1``: a 0-dim tensor
    of the array's dtype for ``kernel.on_floats``, else a float; None for none)."""
    __slots__ = ('shape', 'dtype', 'work', 'kernel', 'arg')

    def __init__(self, shape, dtype, work, kernel, arg):
        self.shape = shape
        self.dtype = dtype
        self.work = work
        self.kernel = kernel
        self.arg = arg

    def __repr__(self):
        return 'Plan(shape=%r, dtype=%r, work=%r, kernel=%s, arg=%r)' % (
            self.shape, self.dtype, self.work, getattr(self.kernel, '__name__', self.kernel),
            self.arg)


# (op, shape, dtype), (op, shape, shape, dtype, dtype) or (op, number, shape, dtype) -> Plan,
# for operators whose attributes leave the output's shape, dtype and work alone; with the
# attributes' values, (op, values, shape, dtype, shape or None, dtype or None), for the
# others. Cleared when the mixed precision table changes (amp.init).
_PLANS = {}
# The plan of a kind of call that mixed precision changes (its inputs' casts, a loss output's
# grad_scale): it takes invoke's general path, which applies them.
_GENERAL = object()


def call(op, a, b=None, number=None, attrs=_EMPTY, where=None, out=None):
    """``op`` on the plain array ``a`` and, if given, the array ``b`` on its device or the
    ``number`` (a scalar operator's ``scalar``), with the parsed ``attrs``: its output array,
    or None when the call is not one for this path (the caller takes ``invoke``'s). ``where``,
    the user's line, is found only when needed. ``out``: a dense array of the result's shape
    and dtype on the same device to write the result into (``x += y``, ``x *= 2``), outside
    autograd's graph; it is returned."""
    if a._sparse or mode.tracing is not None:
        return None
    if b is not None and (b._sparse or not (a._ctx is b._ctx or a._ctx == b._ctx)):
        return None
    # While autograd records, an operation reading a recorded array or a marked variable is
    # recorded (``recorded``); one reading neither runs as outside autograd.
    leaves = None
    if mode.recording:
        # run.merge_leaves of one or two Storages, inlined (a frame per operation)
        if b is None:
            reads = (a._var,)
            leaves = a._var.leaves
        else:
            reads = (a._var, b._var)
            leaves = a._var.leaves
            lv = b._var.leaves
            if lv and lv is not leaves:
                leaves = merge_leaves(reads) if leaves else lv
    if number is not None:
        key = (op, number, a._shape, a._dtype)
    elif attrs and op.infer_attrs != ():
        # the attributes' values, in the operator's order (attrs are canonical): argmax(axis=1)
        key = (op, tuple(attrs.values()), a._shape, a._dtype,
               None if b is None else b._shape, None if b is None else b._dtype)
    elif b is None:
        key = (op, a._shape, a._dtype)
    else:
        key = (op, a._shape, b._shape, a._dtype, b._dtype)
    try:
        plan = _PLANS.get(key)
    except TypeError:   # an unhashable attribute value (a list): planned at every call
        plan = key = None
    if plan is None:
        if not op.simple:
            return None
        plan = _plan(op, a, b, number, attrs, where)
        # 0.0 and -0.0 are one key but not one multiplier: zero is planned at every call.
        if key is not None and (number is None or number):
            if len(_PLANS) >= 4096:
                _PLANS.clear()
            _PLANS[key] = plan
    if plan is _GENERAL:
        return None
    if out is not None:
        return _into(op, plan, a, b, number, attrs, leaves, out)
    if leaves:
        return _recorded(op, plan, a, b, number, attrs, reads, leaves)
    out = _output(a, plan)
    kernel = plan.kernel
    plain(kernel, plan.arg, attrs if kernel is op.kernel else _EMPTY, a, b, out._var, a._ctx,
          plan.work, op.name)
    return out


def _output(a, plan):
    """The new array of a call's result, of ``a``'s class and device."""
    out = _new(a.__class__)
    out._var = Storage()
    out._shape = plan.shape
    out._dtype = plan.dtype
    out._ctx = a._ctx
    out._view = None
    return out


_TORCH_FUNCTION = type(torch.add)


def _into(op, plan, a, b, number, attrs, leaves, out):
    """``call`` writing into ``out``: the general path's operation into an existing array
    (``run.closure`` with ``into``) without its inference, which the plan holds. A write
    autograd forbids (a recorded input, or ``out`` in a graph, while recording: the general
    path raises), another shape or dtype (the general path casts or raises) and sparse
    targets take the general path (None)."""
    if (leaves or out._sparse or out._shape != plan.shape or out._dtype != plan.dtype or
            not (out._ctx is a._ctx or out._ctx == a._ctx) or
            (mode.recording and out._var.leaves)):
        return None
    if b is None:
        ins, reads = (a,), (a._var,)
    else:
        ins, reads = (a, b), (a._var, b._var)
    ov = out._var
    if type(plan.kernel) is _TORCH_FUNCTION and (a is out or a._var is not ov) and (
            b is None or b is out or b._var is not ov):
        # torch's function on floats (torch.add, torch.mul: builtins, which take out=) writes
        # the result itself: one pass over the memory instead of a result and its copy
        # (``g *= s`` on 263k floats, ten in a row: 19.6 instead of 62.9 us a call); not where
        # an input overlaps ``out`` other than wholly (torch refuses)
        fn = run_out(plan.kernel, a, b, plan.arg, out)
    else:
        if number is not None:
            attrs = {'scalar': float(number)}      # as the general path parses it
        fn = closure(op.kernel, ins, (out,), attrs, into=True)
    # skip: call and call's caller (an in-place method, invoke) are neomx's
    push(fn, reads, (ov,), a._ctx, op.name, work=plan.work, skip=2)
    return out


def _recorded(op, plan, a, b, number, attrs, reads, leaves):
    """``call`` of a recorded operation: the general path's recorded operation (``invoke``:
    ``record_outputs``, then ``run.closure`` of the operator's kernel, with its attributes as
    parsed) without its inference, which the plan holds. Integer arrays, which autograd follows
    through float64 shadows (``run.shadowed``), take the general path (None). ``reads``:
    the inputs' Storages."""
    # run.shadowed, inlined (a frame is a sixth of this function's cost)
    if plan.dtype in INTEGERS:
        return None
    for v in reads:
        if v.shadow is not None:
            return None
    out = _new(a.__class__)         # _output, inlined
    out._var = ov = Storage()
    out._shape = plan.shape
    out._dtype = plan.dtype
    out._ctx = a._ctx
    out._view = None
    if number is not None:
        attrs = {'scalar': float(number)}      # as the general path parses it
    ins = (a,) if b is None else (a, b)
    rec = record_outputs((ov,), reads, leaves, (op, attrs, ins))
    # The plan's torch function where it takes the inputs alone (no number), unless the
    # operator's gradient is MXNet's own (its kernel is then a torch Function): one frame less
    kernel = op.kernel
    kw = attrs
    if plan.arg is None and op.grad is None:
        kernel = plan.kernel
        if kernel is not op.kernel:
            kw = _EMPTY     # on_floats: the tensors alone
    # The engine's push without the module's wrapper (a frame); skip: this function, call and
    # call's caller (a method, nd.<op>, invoke) are neomx's
    _engines._engine.push(recorded_op(kernel, ins, ov, kw, None if rec is True else rec),
                          reads, (ov,), a._ctx, op.name, work=plan.work, skip=3)
    return out


def _plan(op, a, b, number, attrs, where):
    """Infers the Plan of a call, raising MXNetError (naming the operator, the inputs and the
    user's line) for inputs that do not fit. On floating-point inputs the kernel is
    ``kernel.on_floats`` when the operator has one: the torch function it calls there, taking
    the input tensors (and the number as a 0-dim tensor) positionally."""
    if number is not None:
        attrs = {'scalar': float(number)}
    if b is None:
        shapes, dtypes = (a._shape,), (a._dtype,)
    else:
        shapes, dtypes = (a._shape, b._shape), (a._dtype, b._dtype)
    table = _amp.table
    if table is not None and (table.casts(op, attrs, dtypes) is not None or
                              _amp.mxnet_name(op) in table.conditional or
                              table.scale_loss_output(op, attrs) is not attrs):
        # (a plan is not per attribute value, and a conditional operator's casts are; a loss
        # output's grad_scale follows the loss scale, which the general path applies)
        return _GENERAL
    try:
        (oshape,), (odtype,) = op.infer(attrs, shapes, dtypes)
    except ShapeError as e:
        raise _shape_error(op, e, attrs, shapes, dtypes, where or user_line()) from None
    _check_results(op, attrs, (oshape,), (odtype,), a._ctx, where or user_line())
    work = op.work(attrs, shapes, (oshape,))
    kernel = op.kernel
    on_floats = getattr(kernel, 'on_floats', None)
    floats = all(d in _FLOATS for d in dtypes)
    arg = None
    if number is not None:
        if on_floats is not None and floats:
            kernel = on_floats
            arg = scalar_tensor(number, dtype_torch(a._dtype))
        else:
            arg = float(number)
    elif on_floats is not None and floats and not attrs:
        kernel = on_floats
    elif floats and hasattr(kernel, 'on_floats_for'):
        kernel = kernel.on_floats_for(attrs, shapes) or kernel
    return Plan(oshape, odtype, _UNKNOWN_WORK if work is None else work, kernel, arg)


_ndarray._fast_call = call     # invoke and the arithmetic methods try it first
