"""``GraphProto``: an ONNX graph translated into a Symbol of registry operators.

Each ONNX node goes through its converter in ``_import_helper._convert_map`` (one per ONNX
operator, ``_op_translations.py``), which makes ordinary ``sym.<op>`` nodes; the result is a
Symbol like any other (hybridized, differentiated, exported to ``-symbol.json`` and ONNX).

What MXNet's operators take as attributes (Reshape's shape, Slice's bounds, a reduction's
axes), ONNX may give as input tensors; those must be constants: initializers, ``Constant``
nodes, or values computed from them and from static shapes. The translator folds every node
whose inputs are all constant as it goes (evaluating its converter's operators once, through
the graph interpreter), so ``Shape -> Gather -> Concat -> Reshape`` chains of a model exported
with static shapes become attributes. The constants that remain inputs of operators become
the Symbol's variables, with their values in ``arg_params`` (or ``aux_params`` for the
statistics BatchNorm updates): they are the model's parameters, as in MXNet's importer.

>>> import onnx                                                         # doctest: +SKIP
>>> from neomx.contrib.onnx.onnx2mx.import_onnx import GraphProto       # doctest: +SKIP
>>> model = onnx.load('resnet18.onnx')                                  # doctest: +SKIP
>>> sym, arg_params, aux_params = GraphProto().from_onnx(model.graph, 13)   # doctest: +SKIP
"""
import numpy as np

from .... import ndarray as nd
from .... import symbol
from ....base import MXNetError, string_types  # noqa: F401 (MXNet's module names)

__all__ = ['GraphProto', 'ONNXImportError']

# ONNX TensorProto element types that neomx has (MXNet 1.x's dtypes, plus int16 and bool).
_ONNX_DTYPES = {1: 'float32', 2: 'uint8', 3: 'int8', 5: 'int16', 6: 'int32', 7: 'int64',
                9: 'bool', 10: 'float16', 11: 'float64', 16: 'bfloat16'}
_ONNX_TYPE_NAMES = {4: 'uint16', 8: 'string', 12: 'uint32', 13: 'uint64', 14: 'complex64',
                    15: 'complex128', 17: 'float8e4m3fn', 18: 'float8e4m3fnuz',
                    19: 'float8e5m2', 20: 'float8e5m2fnuz', 21: 'uint4', 22: 'int4',
                    23: 'float4e2m1', 24: 'float8e8m0', 25: 'uint2', 26: 'int2'}


class ONNXImportError(MXNetError, NotImplementedError):
    """An ONNX model that neomx cannot translate: an operator, attribute or data type with no
    counterpart, named with its node and opset. (A NotImplementedError too, as MXNet's
    importer raised.)"""


class NeedsConstant(ONNXImportError):
    """An input that an operator takes as an attribute is computed at run time; ``names``
    are the graph inputs it comes from (a backend that knows their values can bind them)."""

    def __init__(self, message, names):
        super().__init__(message)
        self.names = tuple(names)


def onnx_dtype(elem_type, where):
    """The neomx dtype name of ONNX element type ``elem_type``; ``where`` names the tensor in
    the error for a type MXNet's world lacks."""
    try:
        return _ONNX_DTYPES[elem_type]
    except KeyError:
        raise ONNXImportError("%s: ONNX data type %s has no neomx counterpart (neomx has %s)"
                              % (where, _ONNX_TYPE_NAMES.get(elem_type, elem_type),
                                 ', '.join(sorted(set(_ONNX_DTYPES.values()))))) from None


def _dims(value_info):
    """(shape with None for a dimension not fixed, dtype name or None) of a ValueInfoProto;
    shape None when not even the rank is known."""
    t = value_info.type
    if not t.HasField('tensor_type'):
        return None, None
    tt = t.tensor_type
    dtype = _ONNX_DTYPES.get(tt.elem_type)
    if not tt.HasField('shape'):
        return None, dtype
    return tuple(d.dim_value if d.HasField('dim_value') else None
                 for d in tt.shape.dim), dtype


class GraphProto:
    """MXNet's translator of ONNX graphs into Symbols: ``from_onnx(graph, opset_version)``
    gives ``(sym, arg_params, aux_params)``, ``graph_to_gluon`` a SymbolBlock and
    ``get_graph_metadata`` the inputs' and outputs' names and shapes.

    ``constants`` ({graph input name: array}) gives values to graph inputs that operators need
    as attributes (a Reshape's shape fed as an input): they become constants of the Symbol.
    """

    def __init__(self, constants=None):
        self._nodes = {}        # ONNX tensor name -> Symbol
        self._params = {}       # ONNX tensor name -> numpy value (constants)
        self._num_input = 0
        self._num_param = 0
        self.aux_dict = {}
        self.arg_dict = {}
        self.model_metadata = {}
        self.opset_version = 0
        self._given = dict(constants or {})
        self._info = {}         # ONNX tensor name -> (shape or None, dtype or None)
        self._graph_inputs = set()
        self._names = set()
        self.folded = 0         # nodes evaluated at import (all their inputs constant)
        self.fixed = set()      # constants converters made: not parameters to train

    # -- MXNet's interface --
    def _convert_operator(self, node_name, op_name, attrs, inputs):
        """MXNet's per-node entry point: the Symbol of ONNX operator ``op_name`` with parsed
        ``attrs`` applied to the Symbols ``inputs`` (default opset: the translator's)."""
        from ._import_helper import _convert_map
        names = []
        for i, s in enumerate(inputs):
            name = '__input%d' % i
            self._nodes[name] = s
            names.append(name)
        node = _Node(self, _FakeProto(node_name or op_name.lower(), op_name, names, attrs),
                     self.opset_version or _default_opset())
        if op_name not in _convert_map:
            raise node.error("operator %s is not supported by neomx's ONNX import" % op_name)
        out = _convert_map[op_name](node)
        return out if isinstance(out, symbol.Symbol) else symbol.Group(
            [o for o in out if o is not None])

    def from_onnx(self, graph, opset_version, opsets=None):
        """``(sym, arg_params, aux_params)`` of ONNX ``graph`` (a GraphProto) for the default
        domain's ``opset_version`` (``opsets``: {domain: version} of the other domains)."""
        self.opset_version = opset_version
        self._opsets = dict(opsets or {})
        self._opsets.setdefault('', opset_version)
        self.model_metadata = self.get_graph_metadata(graph)
        self._functions = getattr(self, '_functions', {})
        for init in graph.initializer:
            if not init.name.strip():
                raise ONNXImportError("an initializer of the graph has no name")
            self._params[init.name] = self._parse_array(init)
        for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
            self._info.setdefault(vi.name, _dims(vi))
        for i in graph.input:
            if i.name in self._params:
                continue        # an initializer listed as an input (IR < 4): a parameter
            if i.name in self._given:
                self._params[i.name] = np.asarray(self._given[i.name])
                continue
            shape, dtype = self._info.get(i.name, (None, None))
            if dtype is None:
                if i.type.HasField('tensor_type'):
                    onnx_dtype(i.type.tensor_type.elem_type, "graph input '%s'" % i.name)
                raise ONNXImportError("graph input '%s' is a %s, not a tensor: neomx imports "
                                      "tensors only" % (i.name, i.type.WhichOneof('value')))
            self._graph_inputs.add(i.name)
            self._num_input += 1
            self._nodes[i.name] = symbol.var(i.name, dtype=dtype)
        self._translate(graph.node)
        outs = [self._symbol_of(o.name, 'graph output') for o in graph.output]
        sym = outs[0] if len(outs) == 1 else symbol.Group(outs)
        self._split_params(sym)
        return sym, self.arg_dict, self.aux_dict

    def get_graph_metadata(self, graph):
        """{'input_tensor_data': [(name, shape, ONNX elem type), ...] of the inputs that are
        not initializers, 'output_tensor_data': [(name, shape), ...]} (MXNet's layout: an
        unknown dimension is 0)."""
        params = {t.name for t in graph.initializer}
        inputs = []
        for gi in graph.input:
            if gi.name not in params:
                shape = tuple(d.dim_value for d in gi.type.tensor_type.shape.dim)
                inputs.append((gi.name, shape, gi.type.tensor_type.elem_type))
        outputs = [(go.name, tuple(d.dim_value for d in go.type.tensor_type.shape.dim))
                   for go in graph.output]
        return {'input_tensor_data': inputs, 'output_tensor_data': outputs}

    def graph_to_gluon(self, graph, ctx, opset_version, opsets=None):
        """A SymbolBlock of ``graph`` with its parameters loaded onto ``ctx``."""
        sym, arg_params, aux_params = self.from_onnx(graph, opset_version, opsets)
        from ....gluon import SymbolBlock
        inputs = [symbol.var(n, dtype=self._info[n][1]) for n in self._input_order(graph)]
        net = SymbolBlock(outputs=sym, inputs=inputs)
        params = net.collect_params()
        for name, value in list(arg_params.items()) + list(aux_params.items()):
            if name in params:
                params[name].shape = value.shape
                params[name]._load_init(value, ctx=ctx)
                if name in self.fixed:
                    params[name].grad_req = 'null'
        return net

    def _parse_array(self, tensor_proto):
        """A TensorProto's value as a numpy array (an external-data tensor is read from the
        files beside the model by ``onnx.load``)."""
        from onnx.numpy_helper import to_array
        where = "tensor '%s'" % tensor_proto.name
        onnx_dtype(tensor_proto.data_type, where)
        try:
            return np.asarray(to_array(tensor_proto))
        except Exception as e:      # a tensor whose data does not fit its dims
            raise ONNXImportError("%s: cannot read its data (%s)" % (where, e)) from None

    def _parse_attr(self, attr_proto):
        """A list of AttributeProto as {name: value}: numbers, strings (str), tuples of them,
        numpy arrays for tensors, GraphProto for graphs."""
        from onnx import helper, numpy_helper
        attrs = {}
        for a in attr_proto:
            if a.ref_attr_name:
                raise ONNXImportError("attribute %s refers to a function attribute (%s) outside "
                                      "a function" % (a.name, a.ref_attr_name))
            v = helper.get_attribute_value(a)
            if isinstance(v, bytes):
                v = v.decode('utf-8')
            elif isinstance(v, list):
                v = tuple(x.decode('utf-8') if isinstance(x, bytes) else x for x in v)
                if v and not isinstance(v[0], (int, float, str)):
                    v = tuple(numpy_helper.to_array(x) if hasattr(x, 'data_type') else x
                              for x in v)
            elif hasattr(v, 'data_type') and hasattr(v, 'dims'):
                v = self._parse_array(v)
            attrs[a.name] = v
        return attrs

    # -- translation --
    def _input_order(self, graph):
        return [i.name for i in graph.input if i.name in self._graph_inputs]

    def _translate(self, nodes):
        from ._import_helper import _convert_map
        for proto in nodes:
            domain = proto.domain if proto.domain != 'ai.onnx' else ''
            if (domain, proto.op_type) in self._functions:
                self._inline_function(proto)
                continue
            opset = self._opsets.get(domain)
            node = _Node(self, proto, opset)
            if domain:
                raise node.error("operators of domain '%s' are not supported by neomx's ONNX "
                                 "import (only the default domain ai.onnx)" % domain)
            convert = _convert_map.get(proto.op_type)
            if convert is None:
                from . import _op_translations
                convert = _op_translations.function_body(node)
                if convert is None:
                    raise node.error("operator %s is not supported by neomx's ONNX import"
                                     % proto.op_type)
            if getattr(convert, 'expanded', False):
                convert(node)       # its body binds the node's outputs
                continue
            node.check_attributes(convert)
            self._run(node, convert)

    def _run(self, node, convert):
        folds_on = getattr(convert, 'folds_on', None)
        inputs = [i for k, i in enumerate(node.input_names)
                  if i and (folds_on is None or k in folds_on)]
        fold = (inputs and not getattr(convert, 'random', False)
                and all(i in self._params for i in inputs))
        if fold:
            node.folding = {}
        outs = convert(node)
        if isinstance(outs, (symbol.Symbol, np.ndarray)):
            outs = [outs] if not isinstance(outs, symbol.Symbol) or len(outs) == 1 else list(outs)
        outs = list(outs)
        names = node.output_names
        for i, name in enumerate(names):
            if not name:
                continue
            if i >= len(outs) or outs[i] is None:
                raise node.error("output %d ('%s') is not supported" % (i, name))
        if fold:
            outs = self._evaluate(node, outs)
        for name, out in zip(names, outs):
            if not name:
                continue
            if isinstance(out, symbol.Symbol):
                self._nodes[name] = out
            else:
                self._params[name] = np.asarray(out)

    def _evaluate(self, node, outs):
        """The values of a node's outputs whose inputs are all constants: its operators run
        once through the graph interpreter."""
        import torch
        from ....symbol.graph import Graph, evaluate
        syms = [o for o in outs if isinstance(o, symbol.Symbol)]
        if not syms:
            return outs
        self.folded += 1
        heads = [e for s in syms for e in s._outputs]
        feed = {name: _to_torch(value) for name, value in node.folding.items()}
        with torch.no_grad():
            try:
                values = evaluate(Graph.from_heads(heads), feed, torch.device('cpu'))
            except Exception as e:
                raise node.error("evaluating it on its constant inputs failed: %s" % e) from None
        it = iter(values)
        return [_to_numpy(next(it)) if isinstance(o, symbol.Symbol) else o for o in outs]

    def _symbol_of(self, name, what):
        """The Symbol of tensor ``name`` (a constant becomes a variable, a parameter)."""
        s = self._nodes.get(name)
        if s is not None:
            return s
        if name in self._params:
            value = self._params[name]
            s = symbol.var(name, shape=value.shape, dtype=_np_dtype_name(value, name))
            self._nodes[name] = s
            return s
        raise ONNXImportError("%s '%s' is not produced by any node, initializer or graph "
                              "input" % (what, name))

    def _split_params(self, sym):
        args = set(sym.list_arguments())
        for name in sym.list_inputs():
            if name in self._params:
                _np_dtype_name(self._params[name], name)
                value = to_ndarray(self._params[name])
                (self.arg_dict if name in args else self.aux_dict)[name] = value
                self._num_param += 1

    def _inline_function(self, proto):
        """A node calling a model-local function: its body, with the node's inputs, outputs
        and attributes put in."""
        inline_function(self, proto, self._functions[(proto.domain, proto.op_type)])


    def _unique(self, name):
        base, k = name, 0
        while name in self._names:
            k += 1
            name = '%s_%d' % (base, k)
        self._names.add(name)
        return name

    def _shape_of(self, name):
        value = self._params.get(name)
        if value is not None:
            return tuple(value.shape)
        shape, _ = self._info.get(name, (None, None))
        if shape is not None and all(d is not None for d in shape):
            return shape
        inferred = self._infer(name)
        if inferred is not None and inferred[0] is not None:
            return inferred[0]
        return shape

    def _dtype_of(self, name, node):
        value = self._params.get(name)
        if value is not None:
            return _np_dtype_name(value, name)
        _, dtype = self._info.get(name, (None, None))
        if dtype is not None:
            return dtype
        inferred = self._infer(name)
        if inferred is not None and inferred[1] is not None:
            return inferred[1]
        raise node.error("the dtype of tensor '%s' is unknown" % name)

    def _infer(self, name):
        """(shape, dtype) of a computed tensor from neomx's own inference over the graph built
        so far, the graph inputs' static shapes given; None when it cannot tell."""
        s = self._nodes.get(name)
        if s is None:
            return None
        shape, dtype = self._infer_symbol(s)
        if shape is not None or name not in self._info:
            self._info[name] = (shape, dtype)
        return shape, dtype

    def _infer_symbol(self, s):
        """(shape or None, dtype or None) of Symbol ``s``'s first output."""
        from ....symbol.graph import Graph
        from ....symbol.passes import infer
        from ....util import np_shape
        g = Graph.of(s)
        shapes, dtypes = {}, {}
        for v in g.variables():
            if v.name in self._params:
                shapes[v.name] = self._params[v.name].shape
                dtypes[v.name] = _np_dtype_name(self._params[v.name], v.name)
            elif v.name in self._info:
                shape, dtype = self._info[v.name]
                if shape is not None and all(d is not None for d in shape):
                    shapes[v.name] = shape
                if dtype is not None:
                    dtypes[v.name] = dtype
        try:
            with np_shape(True):
                res = infer(g, shapes=shapes, dtypes=dtypes)
        except MXNetError:
            return None, None
        node, k = s._outputs[0]
        shape = res.shapes[node][k]
        dtype = res.dtypes[node][k]
        if shape is not None and any(d < 0 for d in shape):
            shape = None
        return shape, dtype

    def _sources(self, name):
        """The graph inputs tensor ``name`` is computed from."""
        s = self._nodes.get(name)
        if s is None:
            return []
        return [n for n in s.list_inputs() if n in self._graph_inputs]


def inline_function(importer, proto, fn, opsets=None, defaults=()):
    """Translates the body of FunctionProto ``fn`` called by node ``proto``: formal names
    renamed to the call's tensors (internal ones prefixed by the node's name), attribute
    references resolved from the call or the defaults (the function's, then ``defaults``,
    the operator schema's)."""
    import onnx
    prefix = (proto.name or proto.output[0]) + '/'
    rename = {}
    for formal, actual in zip(fn.input, proto.input):
        rename[formal] = actual
    for formal, actual in zip(fn.output, proto.output):
        rename[formal] = actual
    given = {a.name: a for a in defaults}
    given.update({a.name: a for a in getattr(fn, 'attribute_proto', ())})
    given.update({a.name: a for a in proto.attribute})
    body = []
    for n in fn.node:
        c = onnx.NodeProto()
        c.CopyFrom(n)
        del c.input[:]
        del c.output[:]
        c.input.extend(rename.get(i, prefix + i) if i else '' for i in n.input)
        c.output.extend(rename.get(o, prefix + o) if o else '' for o in n.output)
        c.name = prefix + (n.name or n.output[0])
        del c.attribute[:]
        for a in n.attribute:
            if a.ref_attr_name:
                if a.ref_attr_name in given:
                    b = onnx.AttributeProto()
                    b.CopyFrom(given[a.ref_attr_name])
                    b.name = a.name
                    c.attribute.append(b)
                continue
            if a.type == onnx.AttributeProto.GRAPH:     # a branch reading the body's names
                b = onnx.AttributeProto()
                b.CopyFrom(a)
                _rename_outer(b.g, lambda i: rename.get(i, prefix + i))
                c.attribute.append(b)
                continue
            c.attribute.append(a)
        body.append(c)
    saved = importer._opsets
    declared = {o.domain if o.domain != 'ai.onnx' else '': o.version for o in fn.opset_import}
    importer._opsets = dict(saved, **(declared or opsets or {}))
    try:
        importer._translate(body)
    finally:
        importer._opsets = saved



def _renamed_nodes(graph, rename, prefix):
    """Copies of ``graph``'s nodes reading and writing ``rename``'s names (the others as they
    are), named with ``prefix``; the graphs of their attributes read the renamed outer names."""
    import onnx
    body = []
    for n in graph.node:
        c = onnx.NodeProto()
        c.CopyFrom(n)
        del c.input[:]
        del c.output[:]
        c.input.extend(rename.get(i, i) for i in n.input)
        c.output.extend(rename.get(o, o) for o in n.output)
        c.name = prefix + (n.name or n.output[0])
        for a in c.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                _rename_outer(a.g, lambda i: rename.get(i, i))
        body.append(c)
    return body

def _rename_outer(graph, rename):
    """Renames, in place, the names subgraph ``graph`` (and the subgraphs in it) reads from
    outside itself."""
    import onnx
    inner = {o for n in graph.node for o in n.output} | {t.name for t in graph.initializer} | \
        {i.name for i in graph.input}
    for n in graph.node:
        for k, name in enumerate(n.input):
            if name and name not in inner:
                n.input[k] = rename(name)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                _rename_outer(a.g, lambda x: x if x in inner else rename(x))
    for o in graph.output:
        if o.name not in inner:
            o.name = rename(o.name)


def inline_graph(importer, node, graph):
    """Translates the subgraph ``graph`` (an If's branch) in place of ``node``: the names it
    makes prefixed by the node's name, the outer names it reads kept, its outputs bound to
    the node's."""
    import onnx
    prefix = node.name + '/'
    made = {o for n in graph.node for o in n.output if o} | {t.name for t in graph.initializer}
    rename = {m: prefix + m for m in made}
    for t in graph.initializer:
        importer._params[rename[t.name]] = importer._parse_array(t)
    importer._translate(_renamed_nodes(graph, rename, prefix))
    for formal, actual in zip(graph.output, node.output_names):
        if not actual:
            continue
        source = rename.get(formal.name, formal.name)
        if source in importer._params:
            importer._params[actual] = importer._params[source]
        else:
            importer._nodes[actual] = importer._symbol_of(source, 'output of a branch')


def outer_names(graph):
    """The names subgraph ``graph`` (and the subgraphs in it) reads from outside itself."""
    import onnx
    inner = {o for n in graph.node for o in n.output} | {t.name for t in graph.initializer} | \
        {i.name for i in graph.input}
    out = []
    for n in graph.node:
        names = list(n.input)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                names += outer_names(a.g)
        out += [m for m in names if m and m not in inner and m not in out]
    out += [o.name for o in graph.output if o.name not in inner and o.name not in out]
    return out


def translate_subgraph(importer, node, graph, label, inputs):
    """The Symbols of the outputs of ``graph`` (a loop body, a branch) with its inputs bound
    to ``inputs`` ([(Symbol, shape or None, dtype or None)]): its nodes translated into
    ordinary Symbols (the control-flow builder calling this cuts them into a graph of its
    own), the names it makes prefixed by the node's name and ``label``, the outer names it
    reads kept."""
    import onnx
    prefix = '%s/%s/' % (node.name, label)
    made = {o for n in graph.node for o in n.output if o} | \
        {t.name for t in graph.initializer} | {i.name for i in graph.input}
    rename = {m: prefix + m for m in made}
    for t in graph.initializer:
        importer._params[rename[t.name]] = importer._parse_array(t)
    for vi in list(graph.value_info) + list(graph.output):
        if vi.name in rename:
            importer._info.setdefault(rename[vi.name], _dims(vi))
    if len(inputs) != len(graph.input):
        raise node.error("its %s takes %d inputs; the node gives it %d"
                         % (label, len(graph.input), len(inputs)))
    for vi, (sym, shape, dtype) in zip(graph.input, inputs):
        if sym is None:     # an input the subgraph does not read
            continue
        declared, declared_dtype = _dims(vi)
        if shape is None or any(d is None for d in shape):
            shape = declared if shape is None or (declared is not None and
                                                  len(declared) == len(shape)) else shape
        info = (shape, dtype or declared_dtype)
        importer._nodes[rename[vi.name]] = sym
        importer._info[rename[vi.name]] = info
        importer._info[sym.name] = info     # the variable neomx's inference reads
    importer._translate(_renamed_nodes(graph, rename, prefix))
    return [importer._symbol_of(rename.get(o.name, o.name), 'output of the %s' % label)
            for o in graph.output]


def _default_opset():
    import onnx.defs
    return onnx.defs.onnx_opset_version()


def _np_dtype_name(value, name):
    from ....base import dtype_name
    if value.dtype.name == 'bfloat16':      # ml_dtypes' bfloat16, as onnx reads it
        return 'bfloat16'
    try:
        return dtype_name(value.dtype)
    except TypeError:
        raise ONNXImportError("tensor '%s': dtype %s has no neomx counterpart"
                              % (name, value.dtype)) from None


def _to_numpy(t):
    """A tensor's value as numpy (bfloat16 as ml_dtypes' bfloat16, as onnx reads it)."""
    import torch
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        import ml_dtypes
        return t.float().contiguous().numpy().astype(ml_dtypes.bfloat16)
    return t.contiguous().numpy()


def _to_torch(value):
    import torch
    if value.dtype.name == 'bfloat16':
        return torch.from_numpy(value.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.array(value))     # a copy: writable, 0-d kept


def to_ndarray(value, ctx=None):
    """An NDArray of a numpy array (bfloat16 ones too)."""
    if value.dtype.name == 'bfloat16':
        return nd.array(value.astype(np.float32), ctx=ctx, dtype='float32').astype('bfloat16')
    return nd.array(value, ctx=ctx, dtype=value.dtype)


class _FakeProto:
    """A NodeProto-like record for ``_convert_operator`` calls with parsed attributes."""

    def __init__(self, name, op_type, inputs, attrs):
        self.name = name
        self.op_type = op_type
        self.domain = ''
        self.input = inputs
        self.output = [name]
        self.parsed = attrs


class _Node:
    """One ONNX node as its converter sees it: parsed attributes, inputs as Symbols or
    constants, shapes and dtypes, ``op`` to make registry operators named after the node, and
    errors naming the node, the operator and the opset."""

    def __init__(self, importer, proto, opset):
        self.g = importer
        self.proto = proto
        self.op_type = proto.op_type
        self.opset = opset
        self.name = proto.name or (proto.output[0] if proto.output else proto.op_type)
        self.input_names = list(proto.input)
        self.output_names = list(proto.output)
        parsed = getattr(proto, 'parsed', None)
        self.attrs = parsed if parsed is not None else importer._parse_attr(proto.attribute)
        self.folding = None     # {variable name: value} while the node is being folded
        self._made = 0

    # -- errors --
    def error(self, message):
        return ONNXImportError("ONNX node '%s' (%s, opset %s): %s"
                               % (self.name, self.op_type, self.opset, message))

    def unsupported(self, attr, value=None, why=''):
        if value is None:
            value = self.attrs.get(attr)
        return self.error("attribute %s=%r is not supported%s"
                          % (attr, value, (': ' + why) if why else ''))

    def check_attributes(self, convert):
        known = getattr(convert, 'attributes', None)
        if known is None:
            return
        for a in self.attrs:
            if a not in known:
                raise self.unsupported(a, why='neomx does not know this attribute of %s'
                                       % self.op_type)

    # -- attributes --
    def attr(self, name, default=None):
        return self.attrs.get(name, default)

    # -- inputs --
    def __len__(self):
        return len(self.input_names)

    def has(self, i):
        return i < len(self.input_names) and bool(self.input_names[i])

    def is_const(self, i):
        return self.has(i) and self.input_names[i] in self.g._params

    def input(self, i):
        """Input ``i`` as a Symbol (None when absent)."""
        if not self.has(i):
            return None
        name = self.input_names[i]
        if self.folding is not None and name in self.g._params:
            value = self.g._params[name]
            self.folding[name] = value
            return symbol.var(name, shape=value.shape, dtype=_np_dtype_name(value, name))
        return self.g._symbol_of(name, 'input %d of node %s' % (i, self.name))

    def inputs(self):
        return [self.input(i) for i in range(len(self.input_names))]

    def const(self, i, what=None, default=None):
        """Input ``i``'s value, which the operator needs as an attribute: a numpy array (
        ``default`` when absent); a clear error when it is computed at run time."""
        if not self.has(i):
            return default
        name = self.input_names[i]
        value = self.g._params.get(name)
        if value is not None:
            return value
        sources = self.g._sources(name)
        raise NeedsConstant(
            "ONNX node '%s' (%s, opset %s): input %d%s ('%s') must be a constant (an "
            "initializer, a Constant or computed from them and static shapes): neomx's "
            "operators take it as an attribute, but it is computed at run time from %s"
            % (self.name, self.op_type, self.opset, i, ' (%s)' % what if what else '', name,
               ', '.join("graph input '%s'" % s for s in sources) or
               "values known only while it runs (a loop's step variables)"),
            sources)

    def shape(self, i):
        """Input ``i``'s shape (None entries for dimensions not fixed), or None."""
        if not self.has(i):
            return None
        return self.g._shape_of(self.input_names[i])

    def static_shape(self, i, why):
        """Input ``i``'s shape, which must be fully known."""
        s = self.shape(i)
        if s is None or any(d is None for d in s):
            raise self.error("the shape of input %d ('%s') must be static %s; it is %s"
                             % (i, self.input_names[i], why,
                                'unknown' if s is None else s))
        return s

    def rank(self, i):
        s = self.shape(i)
        if s is None:
            raise self.error("the rank of input %d ('%s') is unknown" % (i, self.input_names[i]))
        return len(s)

    def dtype(self, i):
        """Input ``i``'s dtype name."""
        if not self.has(i):
            return None
        return self.g._dtype_of(self.input_names[i], self)

    def constant(self, value, tag):
        """A Symbol of a constant the converter makes (an interpolation matrix, indices):
        a variable ``<node>/<tag>`` whose value the Symbol's parameters hold, fixed in
        fine-tuning (``GraphProto.fixed``)."""
        name = self.g._unique('%s/%s' % (self.name, tag))
        self.g._params[name] = np.asarray(value)
        self.g.fixed.add(name)
        if self.folding is not None:
            self.folding[name] = self.g._params[name]
            return symbol.var(name, shape=value.shape, dtype=_np_dtype_name(value, name))
        return self.g._symbol_of(name, 'constant')

    # -- making operators --
    def op(self, opname, *args, **attrs):
        """A registry operator applied to Symbols ``args``, named after the node."""
        from ....symbol.symbol import _OPS
        name = self.name if self._made == 0 else '%s_%d' % (self.name, self._made)
        self._made += 1
        try:
            return _OPS[opname](*args, name=self.g._unique(name), **attrs)
        except MXNetError as e:
            raise self.error(str(e)) from None


def __getattr__(name):
    # MXNet's name of the table of converters in this module, loaded when first read (the
    # converters are a large module that ``import neomx`` need not compile)
    if name == 'convert_map':
        from ._import_helper import _convert_map
        return _convert_map
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
