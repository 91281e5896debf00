"""Custom operators written in Python: MXNet's ``CustomOp``/``CustomOpProp`` and the ``Custom``
operator that runs them.

A custom operator is a pair of classes registered under a name: the property
(``CustomOpProp``: argument, output and auxiliary-state names, shape and dtype rules) and the
operator it creates (``CustomOp``: ``forward`` and ``backward`` on NDArrays). ``nd.Custom(...,
op_type=name)`` and ``sym.Custom(..., op_type=name)`` apply it. It is one registry entry,
``Custom``, whose inputs, outputs and rules come from the property of its ``op_type``; so it
runs on the engine like any operator (asynchronously, its errors raised at the next
synchronisation), inside hybridized blocks and bound executors, and in exported graphs
(``"op": "Custom"`` with ``op_type`` among its attributes).

The body runs on the device's worker thread: the NDArray operations it calls run at once, in
that thread (an operation pushed by a running operation), on arrays wrapping the operator's
tensors. Under autograd the operator is one torch ``Function`` whose backward calls the
user's ``backward``.

>>> import neomx as mx
>>> class Twice(mx.operator.CustomOp):
...     def forward(self, is_train, req, in_data, out_data, aux):
...         self.assign(out_data[0], req[0], in_data[0] * 2)
...     def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
...         self.assign(in_grad[0], req[0], out_grad[0] * 2)
>>> @mx.operator.register('twice_doc')
... class TwiceProp(mx.operator.CustomOpProp):
...     def create_operator(self, ctx, shapes, dtypes):
...         return Twice()
>>> mx.nd.Custom(mx.nd.array([1.0, 2.0]), op_type='twice_doc').asnumpy().tolist()
[2.0, 4.0]
"""
import threading

import numpy as np
import torch

from ..base import MXNetError, dtype_flag, dtype_name, dtype_np, dtype_torch, mode
from ..engine.engine import _local as _engine_local
from ..ops import registry
from ..ops.registry import ShapeError
from .ndarray import array_class, from_tensor, in_array_class

__all__ = ['CustomOp', 'CustomOpProp', 'register', 'registered', 'get_prop']


class CustomOp:
    """The computation of a custom operator: override ``forward`` and ``backward``."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Writes ``out_data`` (NDArrays) from ``in_data``; ``req[i]`` says how ('write',
        'add', 'null', 'inplace'): ``self.assign`` follows it."""

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Writes ``in_grad`` from ``out_grad``, ``in_data`` and ``out_data``."""

    def assign(self, dst, req, src):
        """``dst[:] = src`` for 'write' and 'inplace', ``dst[:] += src`` for 'add', nothing for
        'null'."""
        if req == 'null':
            return
        if req in ('write', 'inplace'):
            dst[:] = src
        elif req == 'add':
            dst[:] += src
        else:
            raise MXNetError("CustomOp.assign: req must be 'null', 'write', 'inplace' or 'add', "
                             "got %r" % (req,))


class CustomOpProp:
    """The description of a custom operator: names, shapes, dtypes, and ``create_operator``.
    The constructor receives the operator's attributes as strings (as MXNet passes them).
    ``need_top_grad=False`` says the backward does not use the output gradients (a loss)."""

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """(argument shapes, output shapes[, auxiliary shapes]): by default every output has
        the first argument's shape."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """(argument dtypes, output dtypes[, auxiliary dtypes]): by default the first
        argument's."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        for i, stype in enumerate(in_stype):
            if stype != 'default':
                raise MXNetError("custom operator: input %d has storage type %r; neomx arrays "
                                 "are dense ('default')" % (i, stype))
        return (in_stype, ['default'] * len(self.list_outputs()),
                ['default'] * len(self.list_auxiliary_states()))

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        return (['default'] * len(ograd_stype), ['default'] * len(in_stype),
                ['default'] * len(out_stype), ['default'] * len(igrad_stype),
                ['default'] * len(aux_stype))

    def list_outputs(self):
        return ['output']

    def list_arguments(self):
        return ['data']

    def list_auxiliary_states(self):
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return CustomOp()


# -- the registry of property classes ---------------------------------------------------

_PROPS = {}         # op_type -> CustomOpProp subclass
_INSTANCES = {}     # (op_type, attribute items) -> property instance
_OPERATORS = {}     # (property key, device, shapes, dtypes) -> CustomOp instance
_ARRAY_CLASS = {}   # name -> the class of the arrays its body gets
_lock = threading.Lock()


def register(reg_name):
    """Class decorator registering a ``CustomOpProp`` subclass as custom operator
    ``reg_name`` (a later registration under the same name replaces it, as in MXNet)."""
    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise MXNetError("mx.operator.register(%r): expected a subclass of CustomOpProp, "
                             "got %r" % (reg_name, prop_cls))
        with _lock:
            _PROPS[reg_name] = prop_cls
            # The operator's body gets arrays of the class in force where it is registered
            # (mx.np.ndarray under NumPy semantics), as in MXNet.
            _ARRAY_CLASS[reg_name] = array_class()
            for key in [k for k in _INSTANCES if k[0] == reg_name]:
                del _INSTANCES[key]
            for key in [k for k in _OPERATORS if k[0][0] == reg_name]:
                del _OPERATORS[key]
        return prop_cls
    return do_register


def registered():
    """The names of the registered custom operators."""
    return sorted(_PROPS)


def get_prop(attrs):
    """The property instance of canonical Custom attributes (``op_type`` and the others)."""
    key = _key(attrs)
    prop = _INSTANCES.get(key)
    if prop is None:
        op_type = attrs['op_type']
        cls = _PROPS.get(op_type)
        if cls is None:
            raise MXNetError("Custom: no custom operator is registered as op_type=%r "
                             "(registered: %s); register its CustomOpProp with "
                             "@mx.operator.register(%r)"
                             % (op_type, ', '.join(sorted(_PROPS)) or 'none', op_type))
        kwargs = {k: v for k, v in attrs.items() if k != 'op_type'}
        try:
            prop = cls(**kwargs)
        except TypeError as e:
            raise MXNetError("Custom %s: %s(%s) failed: %s"
                             % (op_type, cls.__name__, ', '.join('%s=%r' % kv for kv in
                                                                 kwargs.items()), e)) from None
        _INSTANCES[key] = prop
    return prop


def _key(attrs):
    return (attrs['op_type'], tuple(sorted((k, v) for k, v in attrs.items() if k != 'op_type')))


def _names(prop):
    return list(prop.list_arguments()), list(prop.list_outputs()), \
        list(prop.list_auxiliary_states())


# -- shape and dtype rules --------------------------------------------------------------

def _split3(ret, what, op_type):
    if len(ret) == 2:
        return list(ret[0]), list(ret[1]), []
    if len(ret) == 3:
        return list(ret[0]), list(ret[1]), list(ret[2])
    raise MXNetError("Custom %s: %s must return 2 or 3 lists, got %d" % (op_type, what, len(ret)))


def _shape(s):
    return tuple(int(d) for d in s)


def _infer(attrs, shapes, dtypes):
    prop = get_prop(attrs)
    op_type = attrs['op_type']
    args, outs, auxs = _names(prop)
    n = len(args)
    if len(shapes) != n + len(auxs):
        raise ShapeError("Custom %s takes %d inputs (%s), got %d"
                         % (op_type, n + len(auxs), ', '.join(args + auxs), len(shapes)))
    try:
        ishape, oshape, ashape = _split3(prop.infer_shape([list(s) for s in shapes[:n]]),
                                         'infer_shape', op_type)
    except MXNetError:
        raise
    except Exception as e:
        raise ShapeError("Custom %s: infer_shape failed: %s: %s"
                         % (op_type, type(e).__name__, e)) from None
    if len(oshape) != len(outs):
        raise ShapeError("Custom %s: infer_shape gave %d output shapes for outputs %s"
                         % (op_type, len(oshape), outs))
    for i, (given, want) in enumerate(zip(shapes, list(ishape) + list(ashape))):
        if given is not None and _shape(want) != tuple(given):
            raise ShapeError("Custom %s: input %s has shape %s but infer_shape expects %s"
                             % (op_type, (args + auxs)[i], tuple(given), _shape(want)))
    in_types = [dtype_np(d or 'float32') for d in dtypes[:n]]
    try:
        _, otype, _ = _split3(prop.infer_type(in_types), 'infer_type', op_type)
    except IndexError:          # the default rule on an operator without inputs
        otype = [np.float32] * len(outs)
    return [_shape(s) for s in oshape], [dtype_name(t) for t in otype]


def _fill(attrs, shapes):
    """Argument and auxiliary shapes from the property's infer_shape, where it can say them
    from what is known (``()`` stands for an unknown shape, as in MXNet)."""
    prop = get_prop(attrs)
    args, _, auxs = _names(prop)
    n = len(args)
    known = [list(s) if s is not None and all(s) else [] for s in shapes[:n]]
    try:
        ishape, _, ashape = _split3(prop.infer_shape(known), 'infer_shape', attrs['op_type'])
    except Exception:
        return shapes
    filled = list(ishape) + list(ashape)
    if len(filled) != len(shapes):
        return shapes
    return [s if (s is not None and all(s)) or not f else _shape(f)
            for s, f in zip(shapes, filled)]


# -- running ------------------------------------------------------------------------------

class _Inline:
    """Runs the user's code as the body of the operation being executed: NDArray operations it
    pushes run at once, in this thread (on the arrays wrapping this operation's tensors), and
    are not recorded."""

    def __init__(self, is_train):
        self.is_train = is_train

    def __enter__(self):
        self.saved = (_engine_local.in_worker, mode.recording, mode.training,
                      torch.is_grad_enabled())
        _engine_local.in_worker = True
        mode.recording = False
        mode.training = self.is_train
        torch.set_grad_enabled(False)

    def __exit__(self, *exc):
        _engine_local.in_worker, mode.recording, mode.training, grad = self.saved
        torch.set_grad_enabled(grad)


def _profiled(name):
    """The profiler's record of the user's Python code (imported late: the profiler sits
    above the arrays)."""
    from ..profiler import custom_operator_scope
    return custom_operator_scope(name)


def _wrap(tensors, cls, detach=True):
    return [in_array_class(from_tensor(t.detach() if detach else t), cls) for t in tensors]


def _results(arrays):
    out = []
    for a in arrays:
        a.wait_to_read()        # raises what failed inside the body
        out.append(a._tensor())
    return out


def _operator(prop, attrs, tensors):
    key = (_key(attrs), str(tensors[0].device) if tensors else 'cpu',
           tuple(tuple(t.shape) for t in tensors), tuple(t.dtype for t in tensors))
    op = _OPERATORS.get(key)
    if op is None:
        from .ndarray import _ctx_of_tensor
        from ..context import current_context
        ctx = _ctx_of_tensor(tensors[0]) if tensors else current_context()
        op = prop.create_operator(ctx, [list(t.shape) for t in tensors],
                                  [dtype_flag(dtype_name(t.dtype)) for t in tensors])
        if len(_OPERATORS) > 1024:
            _OPERATORS.clear()
        _OPERATORS[key] = op
    return op


def _forward(state, tensors):
    """Runs the user's forward on ``tensors`` (arguments then auxiliary states); returns the
    output tensors."""
    attrs, is_train, out_shapes, out_dtypes, n = state
    prop = get_prop(attrs)
    op = _operator(prop, attrs, tensors)
    device = tensors[0].device if tensors else None
    cls = _ARRAY_CLASS.get(attrs['op_type'])
    with _Inline(is_train), _profiled(attrs['op_type']):
        in_data = _wrap(tensors[:n], cls)
        aux = _wrap(tensors[n:], cls, detach=False)      # written in place
        out_data = _wrap([torch.zeros(s, dtype=dtype_torch(d), device=device)
                          for s, d in zip(out_shapes, out_dtypes)], cls)
        op.forward(is_train=is_train, req=['write'] * len(out_data), in_data=in_data,
                   out_data=out_data, aux=aux)
        outs = _results(out_data)
        _results(aux)
    return outs


def _backward(state, tensors, outs, out_grads, needs):
    attrs, is_train, _, _, n = state
    prop = get_prop(attrs)
    op = _operator(prop, attrs, tensors)
    cls = _ARRAY_CLASS.get(attrs['op_type'])
    with _Inline(is_train), _profiled('_backward_' + attrs['op_type']):
        in_data = _wrap(tensors[:n], cls)
        aux = _wrap(tensors[n:], cls, detach=False)
        out_data = _wrap(outs, cls)
        out_grad = _wrap([g if g is not None else torch.zeros_like(o)
                          for g, o in zip(out_grads, outs)], cls)
        in_grad = _wrap([torch.zeros_like(t) for t in tensors[:n]], cls)
        op.backward(req=['write' if k else 'null' for k in needs[:n]], out_grad=out_grad,
                    in_data=in_data, out_data=out_data, in_grad=in_grad, aux=aux)
        grads = _results(in_grad)
        _results(aux)
    return grads


class _Function(torch.autograd.Function):
    """A custom operator under autograd: its backward is the user's."""

    @staticmethod
    def forward(ctx, state, *tensors):
        outs = _forward(state, tensors)
        ctx.state = state
        ctx.save_for_backward(*tensors, *outs)
        ctx.n_in = len(tensors)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *out_grads):
        saved = ctx.saved_tensors
        tensors, outs = saved[:ctx.n_in], saved[ctx.n_in:]
        needs = ctx.needs_input_grad[1:]
        n = ctx.state[4]
        grads = _backward(ctx.state, tensors, outs, out_grads, needs)
        return (None,) + tuple(g if k else None for g, k in zip(grads, needs[:n])) + \
            (None,) * (len(tensors) - n)


def _custom(*tensors, op_type, is_train=False, **kwargs):
    attrs = dict(kwargs, op_type=op_type)
    prop = get_prop(attrs)
    n = len(prop.list_arguments())
    (out_shapes, out_dtypes) = _infer_cached(attrs, tensors)
    state = (attrs, bool(is_train), out_shapes, out_dtypes, n)
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors[:n]):
        outs = _Function.apply(state, *tensors)
    else:
        outs = _forward(state, tensors)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _infer_cached(attrs, tensors):
    shapes = tuple(tuple(t.shape) for t in tensors)
    dtypes = tuple(dtype_name(t.dtype) for t in tensors)
    out_s, out_d = _CUSTOM.infer(attrs, shapes, dtypes)
    return out_s, out_d


class _CustomEntry(registry.Op):
    """The ``Custom`` registry entry: any attributes (kept as strings, given to the
    property's constructor), and inputs, outputs and rules that the property of ``op_type``
    says."""

    def parse_attrs(self, kwargs):
        if 'op_type' not in kwargs:
            raise MXNetError("Custom: required attribute 'op_type' is missing (the name a "
                             "CustomOpProp was registered under)")
        out = {'op_type': str(kwargs['op_type'])}
        for k, v in kwargs.items():
            if k != 'op_type':
                out[k] = v if isinstance(v, str) else str(v)
        return out

    def format_attrs(self, attrs):
        return dict(attrs)

    def accepts_attr(self, name):
        return not name.startswith('__')

    def input_names(self, attrs, num_inputs=None, present_only=True):
        args, _, auxs = _names(get_prop(attrs))
        return tuple(args + auxs)

    def num_outputs(self, attrs):
        return len(get_prop(attrs).list_outputs())

    def output_names(self, attrs):
        return tuple(get_prop(attrs).list_outputs())

    def mutated(self, attrs, is_train=True):
        return tuple(get_prop(attrs).list_auxiliary_states())

    def bind_inputs(self, args, kwargs, array_type):
        """(inputs in the property's order, attribute kwargs) of a call: inputs are given
        positionally or by their names in ``list_arguments``/``list_auxiliary_states``."""
        named = {k: kwargs.pop(k) for k in [k for k, v in kwargs.items()
                                            if isinstance(v, array_type)]}
        attrs = self.parse_attrs(kwargs)
        names = self.input_names(attrs)
        inputs = list(args) + [None] * max(0, len(names) - len(args))
        if len(args) > len(names):
            raise MXNetError("Custom %s: %d inputs given, it takes %d (%s)"
                             % (attrs['op_type'], len(args), len(names), ', '.join(names)))
        for k, v in named.items():
            if k not in names:
                raise MXNetError("Custom %s: no input named %r (inputs: %s)"
                                 % (attrs['op_type'], k, ', '.join(names)))
            inputs[names.index(k)] = v
        for i, x in enumerate(inputs):
            if x is not None and not isinstance(x, array_type):
                raise MXNetError("Custom %s: input %s must be an %s, got %s"
                                 % (attrs['op_type'], names[i], array_type.__name__,
                                    type(x).__name__))
        return inputs, kwargs


_CUSTOM = _CustomEntry('Custom', _custom, inputs=(), attrs={'op_type': registry.Str()},
                       num_outputs=None, infer=_infer, fill=_fill, train=True, heavy=True,
                       doc="Applies the custom operator registered as ``op_type`` (see "
                           "``mx.operator.register``).")
_CUSTOM.mutate = _CUSTOM.mutated     # auxiliary states are written in place
registry.add(_CUSTOM)
