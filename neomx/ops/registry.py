"""The operator registry: one entry per operator.

An entry holds everything neomx knows about an operator: its MXNet names, its inputs, its
attributes (parsed from Python values or from the strings of MXNet's symbol JSON), the kernel
(a function of torch tensors), how to infer output shapes and dtypes, which inputs it mutates,
whether it draws random numbers or depends on train mode, and its gradient when torch's is not
the one MXNet defines. ``nd.<name>`` and ``sym.<name>`` are generated from these entries.

>>> from neomx.ops import registry, Int
>>> @registry.register('my_scale', attrs={'factor': Int(2)})
... def my_scale(data, factor):
...     return data * factor
"""
import ast
import functools
from math import prod

import torch

from ..base import MXNetError, dtype_name, dtype_torch

__all__ = ['Op', 'register', 'get', 'exists', 'all_ops', 'REQUIRED', 'Attr', 'Int', 'Float',
           'Bool', 'Str', 'Enum', 'Shape', 'IntOrNone', 'FloatOrNone', 'DType', 'Axis', 'Any',
           'ShapeError', 'add']

REQUIRED = object()


class ShapeError(MXNetError):
    """Raised by shape and dtype inference."""


# -- attribute parsers --------------------------------------------------------------------

class Attr:
    """An attribute: a default (or ``REQUIRED``) and a parser accepting Python values and the
    strings MXNet writes in symbol JSON."""
    kind = 'any'

    def __init__(self, default=REQUIRED):
        self.default = default

    def parse(self, value):
        return value

    def format(self, value):
        return str(value)

    def __call__(self, op, name, value):
        if value is None and self.default is None:
            return None
        try:
            return self.parse(value)
        except (ValueError, TypeError, SyntaxError):
            raise MXNetError("%s: attribute %s=%r is not a valid %s" % (op, name, value, self.kind)) from None


class Any(Attr):
    pass


class Int(Attr):
    kind = 'integer'

    def parse(self, value):
        if isinstance(value, str):
            value = ast.literal_eval(value.strip())
        if isinstance(value, bool) or int(value) != value:
            raise ValueError(value)
        return int(value)


class IntOrNone(Int):
    kind = 'integer or None'

    def parse(self, value):
        if value is None or value == 'None':
            return None
        return super().parse(value)


class Float(Attr):
    kind = 'number'

    def parse(self, value):
        if isinstance(value, str):
            s = value.strip().lower()
            if s in ('inf', '+inf', 'infinity'):
                return float('inf')
            if s in ('-inf', '-infinity'):
                return float('-inf')
            if s == 'nan':
                return float('nan')
            return float(s)
        return float(value)

    def format(self, value):
        return repr(float(value))


class FloatOrNone(Float):
    kind = 'number or None'

    def parse(self, value):
        if value is None or value == 'None':
            return None
        return super().parse(value)


class Bool(Attr):
    kind = 'boolean'

    def parse(self, value):
        if isinstance(value, str):
            s = value.strip().lower()
            if s in ('true', '1'):
                return True
            if s in ('false', '0'):
                return False
            raise ValueError(value)
        return bool(value)


class Str(Attr):
    kind = 'string'

    def parse(self, value):
        return str(value)


class Enum(Attr):
    def __init__(self, *choices, default=REQUIRED):
        super().__init__(default)
        self.choices = choices
        self.kind = 'one of ' + ', '.join(repr(c) for c in choices)

    def parse(self, value):
        value = str(value)
        if value not in self.choices:
            raise ValueError(value)
        return value


class Shape(Attr):
    """A tuple of integers (``(3, 3)``, ``[3, 3]``, ``'(3, 3)'``, a single int); with
    ``allow_none`` entries may be None (``slice`` bounds)."""
    kind = 'shape'

    def __init__(self, default=REQUIRED, allow_none=False):
        super().__init__(default)
        self.allow_none = allow_none

    def parse(self, value):
        if isinstance(value, str):
            s = value.strip()
            value = ast.literal_eval(s) if s not in ('', '()', '[]') else ()
        if isinstance(value, (int,)) and not isinstance(value, bool):
            return (value,)
        out = []
        for v in value:
            if v is None or v == 'None':
                if not self.allow_none:
                    raise ValueError(value)
                out.append(None)
            else:
                if isinstance(v, bool) or int(v) != v:
                    raise ValueError(value)
                out.append(int(v))
        return tuple(out)

    def format(self, value):
        return '(' + ', '.join(str(v) for v in value) + (',)' if len(value) == 1 else ')')


class Axis(Attr):
    """An axis or a tuple of axes, or None for all."""
    kind = 'axis'

    def parse(self, value):
        if isinstance(value, str):
            s = value.strip()
            value = None if s in ('None', '()', '') else ast.literal_eval(s)
        if value is None:
            return None
        if isinstance(value, (list, tuple)):
            return tuple(int(v) for v in value)
        if isinstance(value, bool) or int(value) != value:
            raise ValueError(value)
        return int(value)

    def format(self, value):
        if isinstance(value, tuple):
            return Shape().format(value)
        return str(value)


class DType(Attr):
    kind = 'dtype'

    def parse(self, value):
        if value is None or value == 'None':
            return None
        return dtype_name(value)


# -- the registry -------------------------------------------------------------------------

_REGISTRY = {}


class Op:
    """One operator: what it is (its names, inputs and attributes, kernel, shape and dtype
    rules, gradient, flags); its fields are the keywords of ``register`` (what each one means:
    DEVELOPERS.md, "Adding an operator"), and every one of them is read somewhere. What other
    parts of neomx know about operators is in their own tables: the code generator's
    (``symbol/lowering.py``), MXNet's monitor names (``symbol/monitor_names.py``)."""
    # ``bind_inputs(args, kwargs, array_type) -> (inputs, attribute kwargs)``: how a call's
    # arguments become inputs, for an entry whose inputs the attributes name (Custom).
    bind_inputs = None
    # MXNet's gradient facts, for executors deciding what to differentiate: an operator whose
    # gradient is zero by definition (BlockGrad), and one MXNet gives no gradient at all (a
    # graph that needs its gradient cannot be bound for training).
    stops_gradient = False
    differentiable = True
    # The graphs a node of the operator holds and runs (a control-flow node's body, condition
    # or branches: symbol/control_flow.py): its kernel takes them as ``graphs=``, functions of
    # tensors (``graph.evaluate``); symbol JSON writes them as the node's "subgraphs".
    graphs = ()

    def __init__(self, name, kernel, inputs=('data',), attrs=None, aliases=(), num_outputs=1,
                 output_names=None, infer=None, infer_attrs=None, fill=None, mutate=(),
                 drop_inputs=None, rng=False, train=False, creation=False, view=False,
                 grad=None, doc=None, key_var_num_args=None, heavy=False, cost=None, back=None):
        self.name = name
        self.kernel = kernel
        self.inputs = (inputs,) if isinstance(inputs, str) else tuple(inputs)
        self.drop_inputs = drop_inputs
        self.infer_attrs = infer_attrs
        self.attrs = dict(attrs or {})
        self.aliases = tuple(aliases)
        self._num_outputs = num_outputs
        self._output_names = output_names
        self._infer = infer
        self.fill = fill
        # ``back(attrs, in_shapes, out_shapes) -> in_shapes``: unknown input dimensions from
        # known outputs (Reshape, Concat), for shape inference running backwards as MXNet's.
        self.back = back
        self.mutate = tuple(mutate)
        self.rng = rng
        self.train = train
        self.creation = creation
        self.view = view
        self.grad = grad
        self.key_var_num_args = key_var_num_args
        self.heavy = heavy      # much more work than its element count says (dot, convolution)
        # ``cost(attrs, in_shapes, out_shapes)``: multiply-adds, for operators whose work is
        # not their element count (see ``work``).
        self.cost = cost
        self.__doc__ = doc or kernel.__doc__
        self._memo = {}
        self.variadic = any(i.startswith('*') for i in self.inputs)
        if grad is not None:
            self.kernel = _with_grad(kernel, grad, name)
        # One output, no generator, train flag, device, mutation or view: the fast path.
        self.simple = (num_outputs == 1 and not (rng or train or creation or mutate or view))

    def __repr__(self):
        return '<Op %s>' % self.name

    def kernel_kwargs(self, device, is_train, generator):
        """The keyword arguments the operator's flags add to a kernel call: ``generator=``
        (``rng``), ``is_train=`` (``train``), ``device=`` (``creation``), with the values
        given; the code generator passes their source expressions."""
        extra = {}
        if self.rng:
            extra['generator'] = generator
        if self.train:
            extra['is_train'] = is_train
        if self.creation:
            extra['device'] = device
        return extra

    # -- attributes --
    def parse_attrs(self, kwargs):
        """Canonical attribute dict from user values or JSON strings; unknown names and missing
        required attributes are errors naming the operator. An operator without attributes
        ignores the names it is given, as MXNet's operators without a parameter struct do
        (``broadcast_maximum(a, b, axis=1)`` runs there)."""
        out = {}
        spec = self.attrs
        if not spec:
            return out
        for key in kwargs:
            if key not in spec:
                raise MXNetError("%s: unknown attribute %r (expected %s)"
                                 % (self.name, key, ', '.join(spec) or 'no attributes'))
        for key, parser in spec.items():
            if key in kwargs:
                out[key] = parser(self.name, key, kwargs[key])
            elif parser.default is REQUIRED:
                raise MXNetError("%s: required attribute %r is missing" % (self.name, key))
            else:
                out[key] = parser.default
        return out

    def accepts_attr(self, name):
        """Whether attribute ``name``, not among the declared ones, is the operator's own
        (``Custom`` takes any); symbol JSON keeps the others as node attributes."""
        return False

    def format_attrs(self, attrs):
        """Attributes as MXNet's JSON strings; defaults are left out as MXNet does."""
        out = {}
        for key, value in attrs.items():
            parser = self.attrs.get(key)
            if parser is None:
                continue
            if parser.default is not REQUIRED and _is_default(value, parser.default):
                continue
            out[key] = 'None' if value is None else parser.format(value)
        return out

    # -- inputs and outputs --
    def input_names(self, attrs, num_inputs=None, present_only=True):
        """Names of the inputs for ``attrs``: with ``present_only``, without those the
        attributes drop (``bias`` when ``no_bias``); a variadic input ``*data`` gives
        ``data0, data1, ...``."""
        names = self.inputs
        if self.variadic:
            base = [n for n in names if not n.startswith('*')]
            star = next(n for n in names if n.startswith('*'))[1:]
            count = (num_inputs if num_inputs is not None else
                     attrs.get(self.key_var_num_args or 'num_args', 0) or 0) - len(base)
            return tuple(base) + tuple('%s%d' % (star, i) for i in range(max(count, 0)))
        if present_only and self.drop_inputs is not None:
            dropped = self.drop_inputs(attrs)
            return tuple(n for n in names if n not in dropped)
        return names

    def num_outputs(self, attrs):
        n = self._num_outputs
        return n(attrs) if callable(n) else n

    def output_names(self, attrs):
        names = self._output_names
        if names is None:
            n = self.num_outputs(attrs)
            return ('output',) if n == 1 else tuple('output%d' % i for i in range(n))
        return tuple(names(attrs) if callable(names) else names)

    def mutated(self, attrs, is_train=True):
        """The inputs the operator writes in place (its auxiliary states); run outside
        training, a train-mode operator (BatchNorm's moving statistics) writes none."""
        if self.train and not is_train:
            return ()
        m = self.mutate
        return m(attrs) if callable(m) else m

    def work(self, attrs, shapes, out_shapes):
        """An estimate of the operation's work for the engine (which decides from it whether
        to wake a worker and how many threads to give the kernel): multiply-adds for operators
        with a cost rule, elements touched for the others, None (large) for heavy operators
        without one."""
        if self.cost is not None:
            return self.cost(attrs, shapes, out_shapes)
        if self.heavy:
            return None
        n = 0
        for s in shapes:
            if s is not None:
                n += prod(s)
        for s in out_shapes:
            n += prod(s)
        return n

    # -- shape and dtype inference --
    def infer(self, attrs, shapes, dtypes):
        """Output shapes and dtype names for inputs of ``shapes`` and ``dtypes`` (names); memoised.
        Raises ShapeError with the operator's own words when the inputs do not fit."""
        ia = self.infer_attrs
        if ia is None:
            key = (tuple(attrs.values()), shapes, dtypes)
        elif ia:
            key = (tuple([attrs[a] for a in ia]), shapes, dtypes)
        else:
            key = (shapes, dtypes)
        memo = self._memo
        try:
            return memo[key]
        except KeyError:
            pass
        except TypeError:   # unhashable attribute values: no memo
            return self._infer_uncached(attrs, shapes, dtypes)
        result = self._infer_uncached(attrs, shapes, dtypes)
        if len(memo) > 4096:
            memo.clear()
        memo[key] = result
        return result

    def _infer_uncached(self, attrs, shapes, dtypes):
        if self._infer is not None:
            out_shapes, out_dtypes = self._infer(attrs, shapes, dtypes)
            return tuple(tuple(s) for s in out_shapes), tuple(out_dtypes)
        return _infer_on_meta(self, attrs, shapes, dtypes)


def _is_default(value, default):
    """Whether an attribute's value is its default as MXNet's JSON writes it: numbers by value
    (1 and 1.0 alike), anything else by value and type (True is not 1)."""
    if isinstance(value, float) or isinstance(default, float):
        return value == default
    return type(value) is type(default) and value == default


def same_as_input(attrs, shapes, dtypes):
    """The shape rule of operators whose one output has their first input's shape and dtype."""
    return (shapes[0],), (dtypes[0],)


def _infer_on_meta(op, attrs, shapes, dtypes):
    """Runs the kernel on 'meta' tensors: shapes and dtypes without computing anything."""
    args = [None if s is None else torch.empty(s, dtype=dtype_torch(d), device='meta')
            for s, d in zip(shapes, dtypes)]
    extra = op.kernel_kwargs(torch.device('meta'), False, None)
    try:
        with torch.no_grad():
            out = op.kernel(*args, **attrs, **extra)
    except MXNetError as e:
        raise ShapeError(str(e)) from None
    except (RuntimeError, ValueError, IndexError, TypeError, NotImplementedError) as e:
        raise ShapeError(str(e).split('\n')[0]) from None
    if isinstance(out, torch.Tensor):
        out = (out,)
    return (tuple(tuple(t.shape) for t in out),
            tuple(_NAMES.get(t.dtype) or dtype_name(t.dtype) for t in out))


_NAMES = {torch.float32: 'float32', torch.float64: 'float64', torch.float16: 'float16',
          torch.int32: 'int32', torch.int64: 'int64', torch.uint8: 'uint8', torch.int8: 'int8',
          torch.bool: 'bool', torch.bfloat16: 'bfloat16', torch.int16: 'int16'}


def _with_grad(kernel, grad, name):
    """Wraps a kernel whose gradient MXNet defines differently from its maths
    (``grad(ctx_saved, out_grads, *inputs, **attrs) -> input grads``) in a torch Function."""

    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, attrs, *inputs):
            out = kernel(*inputs, **attrs)
            ctx.attrs = attrs
            ctx.n_inputs = len(inputs)
            ctx.single = isinstance(out, torch.Tensor)
            # the outputs saved as the inputs are, not held by ctx: a backward pass without
            # retain_graph frees both (held by ctx, they would live as long as the graph does)
            ctx.save_for_backward(*[x if isinstance(x, torch.Tensor) else None for x in inputs],
                                  *((out,) if ctx.single else out))
            return out

        @staticmethod
        def backward(ctx, *out_grads):
            saved = ctx.saved_tensors
            inputs, outs = saved[:ctx.n_inputs], saved[ctx.n_inputs:]
            grads = grad(inputs, outs[0] if ctx.single else outs, out_grads, **ctx.attrs)
            return (None,) + tuple(grads)

    Fn.__name__ = name + 'Function'

    @functools.wraps(kernel)
    def run(*inputs, **attrs):
        if torch.is_grad_enabled() and any(isinstance(x, torch.Tensor) and x.requires_grad
                                           for x in inputs):
            return Fn.apply(attrs, *inputs)
        return kernel(*inputs, **attrs)
    return run


def register(name, **spec):
    """Decorator registering ``kernel`` as operator ``name`` (and ``aliases``)."""
    def wrap(kernel):
        add(Op(name, kernel, **spec))
        return kernel
    return wrap


def add(op):
    """Registers the entry ``op`` (an ``Op``, or a subclass for an operator whose inputs and
    attributes are not fixed, as ``Custom``) under its name and aliases."""
    for n in (op.name,) + op.aliases:
        if n in _REGISTRY:
            raise MXNetError("operator %s is registered twice" % n)
        _REGISTRY[n] = op
    return op


def get(name):
    try:
        return _REGISTRY[name]
    except KeyError:
        raise MXNetError("operator %r is not registered in neomx" % (name,)) from None


def exists(name):
    return name in _REGISTRY


def all_ops():
    """{name: Op} for every name and alias."""
    return dict(_REGISTRY)
