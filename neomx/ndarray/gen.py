"""Generates ``nd.<name>`` functions from the operator registry.

Calling convention, as MXNet's generated functions: the inputs come first (positionally or by
name, None for an absent optional input), then the attributes in their declared order or by
name; ``out=`` writes the result into an existing array, ``ctx=`` places a creation op.
"""
from ..base import MXNetError
from ..context import Context
from ..ops import registry
from . import fastpath
from .ndarray import NDArray, invoke

__all__ = ['nd_function', 'bind_args', 'parse_ctx']


def parse_ctx(ctx):
    if ctx is None or isinstance(ctx, Context):
        return ctx
    if isinstance(ctx, str):
        s = ctx.strip()
        if s.endswith(')') and '(' in s:
            kind, _, rest = s.partition('(')
            return Context(kind, int(rest[:-1] or 0))
        return Context(s, 0)
    raise MXNetError("ctx must be a Context such as mx.cpu(0), got %r" % (ctx,))


def bind_args(op, args, kwargs, array_type=NDArray):
    """Splits a call's arguments into (inputs in the op's full input order, attribute kwargs);
    inputs are instances of ``array_type`` (``Symbol`` for ``sym.<name>``)."""
    if op.bind_inputs is not None:     # inputs named by the attributes (Custom)
        return op.bind_inputs(args, kwargs, array_type)
    if op.variadic:
        base = [n for n in op.inputs if not n.startswith('*')]
        inputs = [kwargs.pop(n) if n in kwargs else None for n in base]
        star = next(n for n in op.inputs if n.startswith('*'))[1:]
        rest = list(args)
        if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
            rest = list(rest[0])
        if star in kwargs and isinstance(kwargs[star], (list, tuple)):
            rest = list(kwargs.pop(star))
        inputs = rest if not base else inputs + rest
        key = op.key_var_num_args
        if key is not None and key in op.attrs:
            n = kwargs.get(key)
            if n is None:
                kwargs[key] = len(inputs)
            elif int(n) != len(inputs):
                raise MXNetError("%s: %s=%s but %d inputs were given" % (op.name, key, n, len(inputs)))
    else:
        names = op.inputs
        n = len(names)
        inputs = [None] * n
        extra = ()
        for i, a in enumerate(args):
            if i < n and (a is None or isinstance(a, array_type)):
                inputs[i] = a
            else:
                extra = args[i:]
                if i < n and any(isinstance(b, array_type) for b in extra):
                    raise MXNetError("%s: input %s must be an %s, got %s"
                                     % (op.name, names[i], array_type.__name__,
                                        type(a).__name__))
                break
        if extra:
            attr_names = list(op.attrs)
            if len(extra) > len(attr_names):
                raise MXNetError("%s: too many positional arguments (%d inputs and %d attributes "
                                 "expected)" % (op.name, n, len(attr_names)))
            for name, value in zip(attr_names, extra):
                if name in kwargs:
                    raise MXNetError("%s: attribute %s given twice" % (op.name, name))
                kwargs[name] = value
        for i, name in enumerate(names):
            if name in kwargs:
                inputs[i] = kwargs.pop(name)
    for i, x in enumerate(inputs):
        if x is not None and not isinstance(x, array_type):
            raise MXNetError("%s: input %d must be an %s, got %s"
                             % (op.name, i, array_type.__name__, type(x).__name__))
    return inputs, kwargs


def nd_function(op):
    """The imperative function of ``op``."""
    parse = op.parse_attrs
    n_inputs = -1 if op.variadic else len(op.inputs)
    try:
        defaults = parse({})    # shared by the calls that give only inputs: never mutated
    except MXNetError:          # a required attribute
        defaults = None
        n_inputs = -1

    # One array input and no attributes given (nd.relu(x)): the fast path of tiny operations.
    fast = op.simple and n_inputs == 1
    # The attributes given by name, as (name, value) pairs in the call's order -> parsed: a
    # layer's call (F.FullyConnected(x, weight, bias, num_hidden=4, ...), F.Convolution(...,
    # **self._kwargs)) parses its attributes once, not at every call. (Not for operators
    # binding their inputs themselves or taking any number of them.)
    parsed = {}
    memo = op.bind_inputs is None and not op.variadic
    n_in = len(op.inputs)
    simple1 = op.simple and n_in == 1

    def fn(*args, out=None, name=None, ctx=None, **kwargs):
        if len(args) == n_inputs and not kwargs and out is None and ctx is None:
            if fast and args[0].__class__ is NDArray:
                r = fastpath.call(op, args[0], None, None, defaults)
                if r is not None:
                    return r
            for a in args:
                if a.__class__ is not NDArray:
                    break
            else:   # the common call, nd.relu(x): inputs only, all arrays
                return invoke(op, args, defaults)
        key = None
        if memo and out is None and ctx is None and (kwargs or len(args) > n_in):
            # inputs positionally (arrays, None for an absent one), attributes after them
            # (nd.one_hot(x, 10)) or by name
            ins = args
            pos = ()
            if len(args) > n_in:
                ins, pos = args[:n_in], args[n_in:]
                for a in pos:
                    if isinstance(a, NDArray):      # an input after all: bind_args decides
                        ins = None
                        break
            # a float zero: 0, 0.0 and -0.0 are one key but not one value (a_min=-0.0)
            for v in pos:
                if isinstance(v, float) and v == 0:
                    ins = None
                    break
            else:
                for v in kwargs.values():
                    if isinstance(v, float) and v == 0:
                        ins = None
                        break
            if ins is not None:
                key = (pos, tuple(kwargs.items()))
                try:
                    attrs = parsed[key]
                except KeyError:
                    pass
                except TypeError:   # an unhashable value (a list): parsed at every call
                    key = None
                else:
                    if simple1 and len(ins) == 1 and ins[0].__class__ is NDArray:
                        r = fastpath.call(op, ins[0], None, None, attrs)   # Activation, one_hot
                        if r is not None:
                            return r
                    for a in ins:
                        if a.__class__ is not NDArray and a is not None and \
                                not isinstance(a, NDArray):
                            break
                    else:
                        if len(ins) < n_in:
                            ins += (None,) * (n_in - len(ins))
                        return invoke(op, ins, attrs)
        inputs, attr_kw = bind_args(op, args, kwargs)
        attrs = parse(attr_kw)
        # no input given by name
        if key is not None and len(attr_kw) == len(key[0]) + len(key[1]):
            if len(parsed) >= 256:
                parsed.clear()
            parsed[key] = attrs
        return invoke(op, inputs, attrs, out=out, ctx=parse_ctx(ctx))

    fn.__name__ = op.name
    fn.__qualname__ = op.name
    fn.__doc__ = op.__doc__
    fn.op = op
    return fn


def make_namespace(target, include_hidden=False):
    """Adds every registered operator to the dict ``target`` (a module's globals)."""
    for name, op in registry.all_ops().items():
        if name.startswith('_') and not include_hidden:
            continue
        if name not in target:
            target[name] = nd_function(op)
    return target
