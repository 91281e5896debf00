"""Symbol: a graph of operators, built by composition, run through a CachedOp.

A Symbol is the list of its outputs, ``(node, output index)`` pairs over the linked nodes of
graph.py. ``sym.<name>`` for every registered operator creates a node (auto-named as MXNet
does, ``fullyconnected0``; missing parameter inputs become variables ``<node>_weight``, ...);
arithmetic creates MXNet's nodes (``a + b`` is ``elemwise_add``, named ``_plus0``).

>>> import neomx as mx
>>> data = mx.sym.var('data')
>>> fc = mx.sym.FullyConnected(data, num_hidden=10, name='fc1')
>>> out = mx.sym.Activation(fc, act_type='relu', name='relu1')
>>> out.list_arguments()
['data', 'fc1_weight', 'fc1_bias']
>>> out.infer_shape(data=(2, 5))
([(2, 5), (10, 5), (10,)], [(2, 10)], [])
"""
import ctypes
import numbers
import warnings

import numpy as np

from .. import atomic
from ..base import MXNetError, NotImplementedForSymbol, dtype_flag, dtype_name, dtype_np
from ..ndarray.fluent import FLUENT
from ..ndarray.gen import bind_args
from ..ops import registry
from ..util import is_np_shape, np_shape
from . import attribute as _attribute
from . import name as _name
from .graph import Graph, Node
from .passes import infer, inline_subgraphs, known

__all__ = ['Symbol', 'var', 'Variable', 'Group', 'load', 'load_json', 'NotImplementedForSymbol',
           'sym_function', 'make_namespace', 'pow', 'power', 'maximum', 'minimum', 'hypot',
           'zeros', 'ones', 'full', 'arange', 'linspace', 'eye', 'split_v2', 'histogram']


def _op_fn(name):
    return _OPS[name]


class Symbol:
    """A symbolic expression: one or more outputs of a graph of operators (see the module
    docstring)."""
    __slots__ = ('_outputs', '__weakref__')

    def __init__(self, outputs):
        if isinstance(outputs, ctypes.c_void_p):     # Symbol(handle), from MXNet's C API
            from ..ndarray.handles import array_of_handle
            outputs = array_of_handle(outputs)._outputs
        self._outputs = tuple(outputs)

    @property
    def handle(self):
        """What stands for MXNet's C handle (``_LIB``'s functions take it, see _capi.py and
        ndarray/handles.py)."""
        from ..ndarray.handles import parameter_of
        return parameter_of(self)

    # -- printing and identity --
    def __repr__(self):
        name = self.name
        if name is None:
            return '<Symbol group [%s]>' % ', '.join(n.name for n, _ in self._outputs)
        return '<Symbol %s>' % name

    __str__ = __repr__
    __hash__ = None     # as MXNet: == builds a comparison node, so Symbols are unhashable

    def __copy__(self):
        return self.__deepcopy__(None)

    def __deepcopy__(self, _):
        """A copy with its own nodes: setting attributes on it leaves this Symbol alone."""
        return Symbol(_copy_graph(self._outputs, {}))

    def __getstate__(self):
        return {'handle': self.tojson(remove_amp_cast=False)}

    def __setstate__(self, state):
        self._outputs = load_json(state['handle'])._outputs

    # -- outputs --
    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index):
        n = len(self._outputs)
        if isinstance(index, slice):
            return Group([self[i] for i in range(*index.indices(n))])
        if isinstance(index, str):
            names = self.list_outputs()
            found = [i for i, nm in enumerate(names) if nm == index]
            if len(found) > 1:
                raise ValueError('There are multiple outputs with name "%s"' % index)
            if not found:
                raise ValueError('Cannot find output that matches name "%s"' % index)
            index = found[0]
        if not isinstance(index, (int, np.integer)):
            raise TypeError('Symbol only support integer index to fetch i-th output')
        if index >= n or index < -n:
            raise IndexError('Symbol has %d outputs, index %d is out of range' % (n, index))
        return Symbol([self._outputs[index]])

    @property
    def name(self):
        """The name of the symbol's node; None for a group of several nodes' outputs."""
        node = self._outputs[0][0]
        if any(n is not node for n, _ in self._outputs):
            return None
        return node.name

    def _node(self, what):
        if len(self._outputs) != 1:
            raise MXNetError("%s: the symbol is a group of %d outputs; take one with s[i]"
                             % (what, len(self._outputs)))
        return self._outputs[0][0]

    # -- attributes --
    def attr(self, key):
        """The string attribute ``key`` of this symbol's node, or None (``lr_mult`` and the
        other hidden keys are found as ``__lr_mult__`` too)."""
        if len(self._outputs) != 1:
            return None
        attrs = _node_attrs(self._outputs[0][0])
        value = attrs.get(key)
        if value is None and key in _HIDDEN_KEYS:
            value = attrs.get('__%s__' % key)
        return value

    def list_attr(self, recursive=False):
        """The attributes of this symbol's node, as strings."""
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been deprecated. "
                                     "Please use attr_dict instead.")
        if len(self._outputs) != 1:
            return {}
        return _with_unhidden(_node_attrs(self._outputs[0][0]))

    def attr_dict(self):
        """{node name: {key: value}} for every node with attributes."""
        out = {}
        for node in Graph.of(self).nodes:
            a = _node_attrs(node)
            if a:
                out[node.name] = _with_unhidden(a)
        return out

    def _set_attr(self, **kwargs):
        """Sets string attributes on this symbol's node(s)."""
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError("Set Attr only accepts string values")
            for node, _ in self._outputs:
                node.extra[key] = value

    # -- structure --
    def get_internals(self):
        """A group of every output of every node, in topological order."""
        return Symbol([(n, i) for n in Graph.of(self).nodes for i in range(n.num_outputs())])

    def get_children(self):
        """A group of the inputs of this symbol's node(s) (each node once); None for a
        variable."""
        nodes = []
        for node, _ in self._outputs:
            if all(node is not n for n in nodes):
                nodes.append(node)
        entries = [e for node in nodes for e in node.inputs]
        return Symbol(entries) if entries else None

    def _gen_atomic_symbol(self):
        """This symbol's operator with its attributes and no inputs (MXNet's atomic symbol,
        from which a graph pass builds new nodes)."""
        node = self._outputs[0][0]
        if any(n is not node for n, _ in self._outputs):
            raise MXNetError("_gen_atomic_symbol: the symbol is a group of several nodes")
        if node.op is None:
            raise MXNetError("_gen_atomic_symbol: %s is a variable, not an operator" % node.name)
        atomic = Node(node.op, '', dict(node.attrs), [], dict(node.extra))
        return Symbol([(atomic, i) for i in range(atomic.num_outputs())])

    def list_outputs(self):
        return [node.output_names()[i] for node, i in self._outputs]

    def list_arguments(self):
        """Names of the inputs that are not auxiliary states, in MXNet's order."""
        return [n.name for n in Graph.of(self).arguments()]

    def list_auxiliary_states(self):
        """Names of the inputs that operators write (BatchNorm's moving statistics)."""
        return [n.name for n in Graph.of(self).auxiliary()]

    def list_inputs(self):
        return [n.name for n in Graph.of(self).variables()]

    # -- inference --
    def _known(self, graph, args, kwargs, what):
        if args and kwargs:
            raise ValueError('Can only specify known argument %ss either by positional or '
                             'kwargs way.' % what)
        names = [n.name for n in graph.arguments()]
        if args:
            return {nm: v for nm, v in zip(names, args) if v is not None}
        inputs = {n.name for n in graph.variables()}
        for k in kwargs:
            if k not in inputs:
                raise MXNetError("infer_%s: keyword argument name %s not found. Candidate "
                                 "arguments: %s" % (what, k, ', '.join(sorted(inputs))))
        return dict(kwargs)

    def _infer(self, args, kwargs, what):
        g = inline_subgraphs(Graph.of(self))
        given = self._known(g, args, kwargs, what)
        if what == 'shape':
            for k, v in given.items():
                if not isinstance(v, tuple):
                    raise TypeError("Arguments need to be shapes (tuple), but '%s' is %s."
                                    % (k, type(v)))
            # NumPy shape semantics: -1 is an unknown dimension and 0 a size. Shapes with
            # unknown dimensions are inferred with MXNet 1.x's convention (0 unknown) and
            # given back with -1.
            unknowns = is_np_shape() and (
                any(d < 0 for v in given.values() for d in v) or
                any('-1' in n.extra.get('__shape__', '') for n in g.variables()))
            if unknowns:
                given = {k: tuple(0 if d < 0 else d for d in v) for k, v in given.items()}
                with np_shape(False):
                    res = infer(g, shapes=given)
            else:
                res = infer(g, shapes=given)
        else:
            unknowns = False
            res = infer(g, dtypes={k: dtype_name(v) for k, v in given.items()})
        table = res.shapes if what == 'shape' else res.dtypes
        arg, out, aux = ([table[n][0] for n in g.arguments()],
                         [table[n][i] for n, i in g.heads],
                         [table[n][0] for n in g.auxiliary()])
        if unknowns:
            arg, out, aux = ([None if s is None else tuple(-1 if d == 0 else d for d in s)
                              for s in lst] for lst in (arg, out, aux))
        return arg, out, aux, g

    def infer_shape(self, *args, **kwargs):
        """(argument shapes, output shapes, auxiliary shapes) from the shapes of some
        arguments; (None, None, None) with a warning when they do not determine all.

        >>> import neomx as mx
        >>> c = mx.sym.var('a') + mx.sym.var('b')
        >>> c.infer_shape(a=(3, 3))
        ([(3, 3), (3, 3)], [(3, 3)], [])
        """
        arg, out, aux, g = self._infer(args, kwargs, 'shape')
        if all(known(s) for s in arg + out + aux):
            return arg, out, aux
        unknown = ['%s: %s' % (n.name, s or ()) for n, s in zip(g.arguments(), arg)
                   if not known(s)][:10]
        warnings.warn("Cannot decide shape for the following arguments (0s in shape means "
                      "unknown dimensions). Consider providing them as input:\n\t"
                      + "\n\t".join(unknown), stacklevel=2)
        return None, None, None

    def infer_shape_partial(self, *args, **kwargs):
        """As ``infer_shape`` but returns what it could infer: ``()`` for an unknown shape
        and 0 for an unknown dimension."""
        arg, out, aux, _ = self._infer(args, kwargs, 'shape')
        if is_np_shape():       # an unknown shape is None under NumPy shape semantics
            return arg, out, aux
        fix = lambda lst: [() if s is None else s for s in lst]  # noqa: E731
        return fix(arg), fix(out), fix(aux)

    def infer_type(self, *args, **kwargs):
        """(argument dtypes, output dtypes, auxiliary dtypes) as numpy types from the dtypes
        of some arguments; (None, None, None) with a warning when they do not determine all.
        """
        arg, out, aux, g = self._infer(args, kwargs, 'type')
        if any(d is None for d in arg + out + aux):
            unknown = ['%s: None' % n.name for n, d in zip(g.arguments(), arg) if d is None][:10]
            warnings.warn("Cannot decide type for the following arguments. Consider providing "
                          "them as input:\n\t" + "\n\t".join(unknown), stacklevel=2)
            return None, None, None
        np_ = lambda lst: [dtype_np(d) for d in lst]  # noqa: E731
        return np_(arg), np_(out), np_(aux)

    def infer_type_partial(self, *args, **kwargs):
        arg, out, aux, _ = self._infer(args, kwargs, 'type')
        np_ = lambda lst: [None if d is None else dtype_np(d) for d in lst]  # noqa: E731
        return np_(arg), np_(out), np_(aux)

    # -- composition --
    def __call__(self, *args, **kwargs):
        """A copy with some variables replaced by symbols (positionally, in
        ``list_arguments`` order, or by name); ``name=`` renames the head node."""
        s = self.__deepcopy__(None)
        s._compose(*args, **kwargs)
        return s

    def _compose(self, *args, **kwargs):
        name = kwargs.pop('name', None)
        if args and kwargs:
            raise TypeError('compose only accept input Symbols either as positional or keyword '
                            'arguments, not both')
        for v in list(args) + list(kwargs.values()):
            if not isinstance(v, Symbol):
                raise TypeError('Compose expect `Symbol` as arguments')
        g = Graph.of(self)
        if args:
            pairs = dict(zip([n.name for n in g.arguments()], args))
        else:
            pairs = kwargs
        subst = {}
        for node in g.variables():
            s = pairs.get(node.name)
            if s is not None:
                if len(s._outputs) != 1:
                    raise MXNetError("compose: argument %s is a group of %d outputs, single "
                                     "value is required" % (node.name, len(s._outputs)))
                subst[id(node)] = s._outputs[0]
        for node in g.nodes:
            node.inputs = [subst.get(id(src), (src, k)) for src, k in node.inputs]
        self._outputs = tuple(subst.get(id(n), (n, k)) for n, k in self._outputs)
        if name and len(self._outputs) == 1:
            self._outputs[0][0].name = name

    # -- serialisation --
    def tojson(self, remove_amp_cast=True):
        """The symbol in MXNet's ``-symbol.json`` format; without its mixed-precision casts
        (``amp_cast``, ``amp_multicast``) unless ``remove_amp_cast`` is false, as MXNet."""
        from .amp import remove_amp_cast as strip
        from .json import dumps
        return dumps(strip(self._outputs) if remove_amp_cast else self._outputs)

    def save(self, fname, remove_amp_cast=True):
        """Writes ``tojson(remove_amp_cast)`` to ``fname`` (atomically)."""
        from .amp import remove_amp_cast as strip
        from .json import save
        save(strip(self._outputs) if remove_amp_cast else self._outputs, fname)

    def debug_str(self):
        """A listing of the graph, in MXNet's layout."""
        g = Graph.of(self)
        lines = ['Symbol Outputs:']
        for i, (n, k) in enumerate(self._outputs):
            lines.append('\toutput[%d]=%s(%d)' % (i, n.name, k))
        for n in g.nodes:
            if n.op is None:
                lines.append('Variable:%s' % n.name)
                continue
            lines.append('--------------------')
            lines.append('Op:%s, Name=%s' % (n.op.name, n.name))
            lines.append('Inputs:')
            for i, (src, k) in enumerate(n.inputs):
                lines.append('\targ[%d]=%s(%d) version=0' % (i, src.name, k))
            attrs = _node_attrs(n)
            if attrs:
                lines.append('Attrs:')
                lines.extend('\t%s=%s' % kv for kv in attrs.items())
        return '\n'.join(lines) + '\n'

    # -- execution --
    def bind(self, ctx, args, args_grad=None, grad_req='write', aux_states=None,
             group2ctx=None, shared_exec=None):
        """An Executor running this symbol on the given arrays (partitioned first by the
        subgraph backend ``MXNET_SUBGRAPH_BACKEND`` names, as in MXNet)."""
        from .executor import Executor
        return Executor(self._for_env_backend(), ctx, args, args_grad, grad_req, aux_states)

    def _for_env_backend(self):
        from .subgraph import env_backend
        backend = env_backend()
        return self if backend is None else self.optimize_for(backend)

    def optimize_for(self, backend, args=None, aux=None, ctx=None, shape_dict=None,
                     type_dict=None, stype_dict=None, skip_infer=False, **kwargs):
        """This symbol partitioned by subgraph backend ``backend`` (see symbol/subgraph.py):
        the nodes it selects, grouped into ``_CachedOp`` nodes. ``args``/``aux`` (arrays by
        name or in order), the shape, type and storage-type dicts and backend options
        (``dedup_subgraph``, ...) are accepted as MXNet takes them; neomx's backends select
        nodes by their operator and attributes alone, so they leave the result unchanged.

        >>> import neomx as mx
        >>> from neomx.base import _LIB, c_str, c_str_array, mx_uint, check_call
        >>> y = mx.sym.sin(mx.sym.exp(mx.sym.var('x')))
        >>> _ = check_call(_LIB.MXSetSubgraphPropertyOpNamesV2(
        ...     c_str('default'), mx_uint(2), c_str_array(['exp', 'sin'])))
        >>> y.optimize_for('default').get_internals().list_outputs()
        ['x', '_CachedOp0_sin0_output']
        """
        from .subgraph import backend_of, partition
        select = backend_of(backend, 'optimize_for')
        copy = _copy_graph(self._outputs, {})
        return Symbol(partition(copy, select))

    def get_backend_symbol(self, backend):
        """This symbol partitioned by subgraph backend ``backend`` (``optimize_for``)."""
        return self.optimize_for(backend)

    def simple_bind(self, ctx, grad_req='write', type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, force_rebind=False, **kwargs):
        """An Executor with arrays allocated from the shapes in ``kwargs``
        (``force_rebind``, a hint to MXNet's memory planner, changes nothing here)."""
        from .executor import simple_bind
        return simple_bind(self._for_env_backend(), ctx, grad_req, type_dict, kwargs, group2ctx,
                           shared_arg_names, shared_exec, shared_buffer, stype_dict)

    def eval(self, ctx=None, **kwargs):
        """The outputs (a list of NDArrays) for the arrays in ``kwargs``."""
        from ..context import current_context
        return self.bind(ctx or current_context(), kwargs).forward()

    # -- value-needing calls: not for Symbols --
    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, 'bool')

    __nonzero__ = __bool__

    def wait_to_read(self):
        raise NotImplementedForSymbol(self.wait_to_read, None)

    def asnumpy(self):
        raise NotImplementedForSymbol(self.asnumpy, None)

    def asscalar(self):
        raise NotImplementedForSymbol(self.asscalar, None)

    def copy(self):
        raise NotImplementedForSymbol(self.copy, None)

    def as_in_context(self):
        raise NotImplementedForSymbol(self.as_in_context, None)

    def detach(self):
        raise NotImplementedForSymbol(self.detach, None)

    def backward(self):
        raise NotImplementedForSymbol(self.backward, None)

    def __iadd__(self, other):
        raise NotImplementedForSymbol(self.__iadd__, '+=', other, 1)

    def __isub__(self, other):
        raise NotImplementedForSymbol(self.__isub__, '-=', other)

    def __imul__(self, other):
        raise NotImplementedForSymbol(self.__imul__, '*=', other)

    def __idiv__(self, other):
        raise NotImplementedForSymbol(self.__idiv__, '/=', other)

    def __itruediv__(self, other):
        raise NotImplementedForSymbol(self.__itruediv__, '/=', other)

    # -- arithmetic: MXNet's operators, without broadcasting --
    def _binary(self, other, array_op, scalar_op):
        if isinstance(other, Symbol):
            return _op_fn(array_op)(self, other)
        if isinstance(other, numbers.Number):
            return _op_fn(scalar_op)(self, scalar=other)
        raise TypeError('type %s not supported' % str(type(other)))

    def __add__(self, other):
        return self._binary(other, '_Plus', '_PlusScalar')

    __radd__ = __add__

    def __sub__(self, other):
        return self._binary(other, '_Minus', '_MinusScalar')

    def __rsub__(self, other):
        if isinstance(other, Symbol):
            return other.__sub__(self)
        return self._binary(other, None, '_RMinusScalar')

    def __mul__(self, other):
        return self._binary(other, '_Mul', '_MulScalar')

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._binary(other, '_Div', '_DivScalar')

    def __rtruediv__(self, other):
        if isinstance(other, Symbol):
            return other.__truediv__(self)
        return self._binary(other, None, '_RDivScalar')

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __mod__(self, other):
        return self._binary(other, '_Mod', '_ModScalar')

    def __rmod__(self, other):
        if isinstance(other, Symbol):
            return other.__mod__(self)
        return self._binary(other, None, '_RModScalar')

    def __pow__(self, other):
        return self._binary(other, '_Power', '_PowerScalar')

    def __rpow__(self, other):
        if isinstance(other, Symbol):
            return other.__pow__(self)
        return self._binary(other, None, '_rpower_scalar')

    def __neg__(self):
        return self.__mul__(-1.0)

    def __abs__(self):
        return _op_fn('abs')(self)

    def __eq__(self, other):
        return self._binary(other, '_equal', '_equal_scalar')

    def __ne__(self, other):
        return self._binary(other, '_not_equal', '_not_equal_scalar')

    def __gt__(self, other):
        return self._binary(other, '_greater', '_greater_scalar')

    def __ge__(self, other):
        return self._binary(other, '_greater_equal', '_greater_equal_scalar')

    def __lt__(self, other):
        return self._binary(other, '_lesser', '_lesser_scalar')

    def __le__(self, other):
        return self._binary(other, '_lesser_equal', '_lesser_equal_scalar')

    # -- fluent methods (x.reshape(...) is sym.reshape(x, ...)) --
    def reshape(self, *args, **kwargs):
        if args and 'shape' not in kwargs and not isinstance(args[0], Symbol):
            shape = args[0] if len(args) == 1 else args
            return _op_fn('reshape')(self, shape=shape, **kwargs)
        return _op_fn('reshape')(self, *args, **kwargs)

    def astype(self, dtype, **kwargs):
        return _op_fn('Cast')(self, dtype=dtype, **kwargs)

    def as_nd_ndarray(self):
        return self

    def as_np_ndarray(self):
        """This symbol with NumPy's operators and methods (symbol/numpy.py)."""
        from .numpy import _Symbol
        return _Symbol(self._outputs)


def _with_unhidden(attrs):
    """``attrs`` with each hidden ``__lr_mult__``-style key also under its plain name, as
    MXNet lists them."""
    for k in _HIDDEN_KEYS:
        hidden = '__%s__' % k
        if hidden in attrs and k not in attrs:
            attrs[k] = attrs[hidden]
    return attrs


def _hide(attrs):
    """``attrs`` with the hidden keys (``lr_mult``, ...) stored as ``__lr_mult__``."""
    for k in _HIDDEN_KEYS:
        if k in attrs:
            attrs['__%s__' % k] = attrs.pop(k)
    return attrs


def _node_attrs(node):
    """A node's attributes as MXNet's strings (operator attributes, then the others)."""
    out = {} if node.op is None else node.op.format_attrs(node.attrs)
    for k, v in node.extra.items():
        if not k.startswith('__value'):
            out[k] = v
    return out


def _copy_graph(outputs, memo):
    nodes = Graph.from_heads(outputs).nodes
    for n in nodes:
        c = n.copy()
        c.inputs = [(memo[id(s)], k) for s, k in n.inputs]
        memo[id(n)] = c
    return [(memo[id(n)], k) for n, k in outputs]


def _fluent(name):
    def method(self, *args, **kwargs):
        return _op_fn(name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = 'Same as ``sym.%s(self, ...)``.' % name
    return method


# -- creating nodes --------------------------------------------------------------------------

def _entry(sym, op, input_name):
    if len(sym._outputs) != 1:
        raise MXNetError("%s: argument %s is a group of %d outputs, single value is required"
                         % (op.name, input_name, len(sym._outputs)))
    return sym._outputs[0]


# Attributes an operator sets on the variables given for its inputs (when they lack them),
# as MXNet's FSetInputVarAttrOnCompose: PReLU's slope starts at 0.25.
_INPUT_VAR_ATTRS = {'LeakyReLU': {'gamma': {'__init__': '["Constant", {"value": 0.25}]'}}}

# Keyword arguments of any operator that MXNet keeps as hidden ``__key__`` attributes.
_HIDDEN_KEYS = ('ctx_group', 'lr_mult', 'wd_mult', 'force_mirroring', 'mirror_stage',
                'profiler_scope')


def _create(op, hint, args, kwargs, name, attr):
    kwargs = dict(kwargs)
    extra = {k: str(kwargs.pop(k)) for k in [k for k in kwargs if k.startswith('__')]}
    for k in _HIDDEN_KEYS:
        if k in kwargs:
            extra['__%s__' % k] = str(kwargs.pop(k))
    inputs, attr_kw = bind_args(op, list(args), kwargs, Symbol)
    attrs = op.parse_attrs(attr_kw)
    name = _name.current().get(name, hint)
    extra.update(_hide(_attribute.current().get(attr)))
    present = op.input_names(attrs, len(inputs))
    if op.variadic:
        entries = [_entry(s, op, nm) for s, nm in zip(inputs, present)]
    else:
        full = op.input_names(attrs, len(inputs), present_only=False)
        entries = []
        for nm in present:
            s = inputs[full.index(nm)]
            if s is None:       # MXNet creates the missing argument as a variable, which
                # takes the node's attributes (ctx_group, lr_mult, ...) with it
                entries.append((Node(None, '%s_%s' % (name, nm), extra=dict(extra)), 0))
            else:
                entries.append(_entry(s, op, nm))
    for nm, value in _INPUT_VAR_ATTRS.get(op.name, {}).items():
        if nm in present:
            var_node = entries[present.index(nm)][0]
            if var_node.op is None:
                for k, v in value.items():
                    var_node.extra.setdefault(k, v)
    node = Node(op, name, attrs, entries, extra)
    return Symbol([(node, i) for i in range(node.num_outputs())])


def sym_function(op, fname=None):
    """The symbolic function of ``op`` under the name ``fname`` (auto names use its lower
    case, as MXNet's generated functions do)."""
    fname = fname or op.name
    hint = fname.lower()

    def fn(*args, name=None, attr=None, **kwargs):
        return _create(op, hint, args, kwargs, name, attr)

    fn.__name__ = fname
    fn.__qualname__ = fname
    fn.__doc__ = op.__doc__
    fn.op = op
    return fn


class _Ops(dict):
    """Every operator name (and alias) to its symbolic function, made on first use."""

    def __missing__(self, name):
        f = self[name] = sym_function(registry.get(name), name)
        return f


_OPS = _Ops()


def make_namespace(target, include_hidden=False, prefix=''):
    """Adds ``sym.<name>`` for every registered operator (names starting with ``prefix``,
    which is dropped) to the dict ``target``."""
    for name in registry.all_ops():
        if prefix:
            if not name.startswith(prefix):
                continue
            short = name[len(prefix):]
        else:
            short = name
            if name.startswith('_') and not include_hidden:
                continue
        if short not in target:
            target[short] = _OPS[name]
    return target


def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
        stype=None, profiler_scope=None, **kwargs):
    """A variable: an input or a parameter of a graph. ``shape`` (0 for an unknown dimension),
    ``dtype``, ``init``, ``lr_mult`` and ``wd_mult`` are kept as MXNet's ``__shape__``, ...
    attributes; other attributes must be named ``__like_this__``.

    >>> import neomx as mx
    >>> w = mx.sym.var('w', shape=(3, 4), dtype='float16')
    >>> w.attr('__shape__'), w.attr('__dtype__')
    ('(3, 4)', '2')
    """
    if not isinstance(name, str):
        raise TypeError('Expect a string for variable `name`')
    extra = _hide(_attribute.current().get(attr))
    if shape is not None:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        extra['__shape__'] = str(shape)
    if lr_mult is not None:
        extra['__lr_mult__'] = str(lr_mult)
    if wd_mult is not None:
        extra['__wd_mult__'] = str(wd_mult)
    if dtype is not None:
        extra['__dtype__'] = str(dtype_flag(dtype))
    if init is not None:
        extra['__init__'] = init if isinstance(init, str) else (
            init.dumps() if hasattr(init, 'dumps') else str(init))
    if stype is not None:
        extra['__storage_type__'] = str({'default': 0, 'row_sparse': 1, 'csr': 2}.get(stype, 0))
    if profiler_scope is not None:
        extra['__profiler_scope__'] = profiler_scope
    for k, v in kwargs.items():
        if k.startswith('__') and k.endswith('__'):
            extra[k] = str(v)
        else:
            raise ValueError('Attribute name=%s is not supported. Additional attributes must '
                             'start and end with double underscores, e.g, __yourattr__' % k)
    return Symbol([(Node(None, name, extra=extra), 0)])


Variable = var


def Group(symbols, create_fn=Symbol):
    """One symbol whose outputs are those of ``symbols``, in order."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError('Expected a list of symbols as input')
    return create_fn([e for s in symbols for e in s._outputs])


def load_json(json_str):
    """A Symbol from MXNet's JSON (``tojson()``, or a ``-symbol.json`` file's text)."""
    from .json import loads
    return Symbol(loads(json_str))


def load(fname):
    """A Symbol from a ``-symbol.json`` file (written by neomx or by MXNet)."""
    if not isinstance(fname, str):
        raise TypeError('fname needs to be string')
    try:
        raw = atomic.read(fname)
    except OSError as e:
        raise MXNetError("load: cannot read %s: %s" % (fname, e.strerror or e)) from None
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError as e:
        raise MXNetError("load: %s is not a symbol JSON file (not UTF-8 text: byte %d)"
                         % (fname, e.start)) from None
    from .json import loads
    return Symbol(loads(text, fname))


# -- functions of MXNet's symbol module that are not single operators ----------------------

def _scalar_or_sym(name, array_op, scalar_op, rscalar_op, left, right):
    if isinstance(left, Symbol) and isinstance(right, Symbol):
        return _op_fn(array_op)(left, right)
    if isinstance(left, Symbol) and isinstance(right, numbers.Number):
        return _op_fn(scalar_op)(left, scalar=right)
    if isinstance(left, numbers.Number) and isinstance(right, Symbol):
        return _op_fn(rscalar_op)(right, scalar=left)
    if isinstance(left, numbers.Number) and isinstance(right, numbers.Number):
        return None
    raise TypeError('%s: types (%s, %s) not supported' % (name, type(left).__name__,
                                                          type(right).__name__))


def pow(base, exp):  # noqa: A001 - MXNet's name
    """``base ** exp`` for symbols and numbers."""
    r = _scalar_or_sym('pow', '_Power', '_PowerScalar', '_rpower_scalar', base, exp)
    return base ** exp if r is None else r


power = pow


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False, name=None):
    """``ary`` split along ``axis`` into ``indices_or_sections`` equal parts (an int) or at the
    given indices (a tuple), as ``numpy.split``; a Symbol of several outputs."""
    if isinstance(indices_or_sections, int):
        if indices_or_sections <= 0:
            raise MXNetError("split_v2: sections must be positive, got %d" % indices_or_sections)
        return _op_fn('_split_v2')(ary, indices=(), axis=axis, squeeze_axis=squeeze_axis,
                                   sections=indices_or_sections, name=name)
    if not isinstance(indices_or_sections, (tuple, list)):
        raise MXNetError("split_v2: indices_or_sections must be an int or a tuple, got %r"
                         % (indices_or_sections,))
    return _op_fn('_split_v2')(ary, indices=(0,) + tuple(indices_or_sections), axis=axis,
                               squeeze_axis=squeeze_axis, name=name)


def histogram(a, bins=10, range=None, name=None):  # noqa: A002 - MXNet's name
    """(counts, bin edges) of ``a``: ``bins`` equal bins over ``range`` (required here: the
    data's values are not known), or the edges in the Symbol ``bins``."""
    if isinstance(bins, Symbol):
        return _op_fn('_histogram')(a, bins, name=name)
    if range is None:
        raise MXNetError("histogram: a symbolic histogram with a number of bins needs range=")
    return _op_fn('_histogram')(a, bin_cnt=bins, range=range, name=name)


def maximum(left, right):
    r = _scalar_or_sym('maximum', '_Maximum', '_MaximumScalar', '_MaximumScalar', left, right)
    return (left if left > right else right) if r is None else r


def minimum(left, right):
    r = _scalar_or_sym('minimum', '_Minimum', '_MinimumScalar', '_MinimumScalar', left, right)
    return (left if left < right else right) if r is None else r


def hypot(left, right):
    r = _scalar_or_sym('hypot', 'broadcast_hypot', '_HypotScalar', '_HypotScalar', left, right)
    return float(np.hypot(left, right)) if r is None else r


def _creation(opname, hint, name=None, **attrs):
    attrs = {k: v for k, v in attrs.items() if v is not None}
    return _create(registry.get(opname), hint, (), attrs, name, None)


def zeros(shape, dtype=None, **kwargs):
    """A symbol of zeros (``_zeros``)."""
    return _creation('_zeros', '_zeros', shape=shape, dtype=dtype, **kwargs)


def ones(shape, dtype=None, **kwargs):
    return _creation('_ones', '_ones', shape=shape, dtype=dtype, **kwargs)


def full(shape, val, dtype=None, **kwargs):
    return _creation('_full', '_full', shape=shape, value=val, dtype=dtype, **kwargs)


def eye(N, M=0, k=0, dtype=None, **kwargs):
    return _creation('_eye', '_eye', N=N, M=M, k=k, dtype=dtype, **kwargs)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    return _creation('_arange', '_arange', name=name, start=start, stop=stop, step=step,
                     repeat=repeat, infer_range=infer_range, dtype=dtype)


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    return _creation('_linspace', '_linspace', name=name, start=start, stop=stop, num=num,
                     endpoint=endpoint, dtype=dtype)


for _name_ in FLUENT + ('zeros_like', 'ones_like', 'broadcast_axes', 'flatten'):
    if not hasattr(Symbol, _name_):
        setattr(Symbol, _name_, _fluent(_name_))
del _name_
