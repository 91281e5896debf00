"""ONNX export (optional extra ``onnx``: ``pip install neomx[onnx]``).

The graph is compiled for the given input shapes in predict mode (codegen.py) and the
generated function, whose every line is a torch call, is traced by torch's ONNX exporter;
the parameters become the model's initializers. So every operator neomx can run exports,
with no per-operator converter table to keep in step with the registry.

``export_model`` has MXNet 1.9's signature (``mx.onnx.export_model``): a Symbol or a
``-symbol.json`` file, and a dict of arrays or a ``.params`` file. ``export_block`` exports a
hybridized block directly. ``get_operator_support`` and ``mx2onnx`` are MXNet's other names
of ``mx.onnx``; importing ONNX models is ``mx.contrib.onnx.import_model``.

>>> import numpy as np, neomx as mx                                     # doctest: +SKIP
>>> from neomx.symbol.onnx import export_model                          # doctest: +SKIP
>>> export_model('net-symbol.json', 'net-0000.params', [(1, 3, 224, 224)], np.float32,
...              'net.onnx')                                            # doctest: +SKIP
'net.onnx'
"""
import sys
import warnings

import numpy as np

from .. import atomic
from ..base import MXNetError, dtype_name
from ..context import cpu
from .cached_op import compile_program
from .graph import Graph

__all__ = ['export_model', 'export_block', 'get_operator_support', 'mx2onnx']


def _require():
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise MXNetError("ONNX export needs the 'onnx' package: pip install neomx[onnx] "
                         "(or pip install onnx onnxruntime)") from None


def _opset_range():
    from torch.onnx import _constants
    return _constants.ONNX_MIN_OPSET, _constants.ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET


def get_operator_support(opset_version=None):
    """The operators ``export_model`` can write for ONNX opset ``opset_version`` (the newest
    torch's exporter writes by default), sorted; ``[]`` for an opset it cannot write.

    neomx's export traces the torch calls of the operators' kernels, so it has no table of
    its own: every registered operator is listed, and one whose torch calls have no ONNX form
    at that opset fails in ``export_model`` with torch.onnx's error naming the call.

    >>> import neomx as mx
    >>> 'Convolution' in mx.onnx.get_operator_support(13)
    True
    >>> mx.onnx.get_operator_support(6)
    []
    """
    lo, hi = _opset_range()
    if opset_version is None:
        opset_version = hi
    if not lo <= opset_version <= hi:
        return []
    from ..ops import registry
    return sorted({op.name for op in registry.all_ops().values()})


def _load_params(params):
    from .. import ndarray as nd
    if isinstance(params, str):
        params = nd.load(params)
    out = {}
    for k, v in params.items():
        if k.startswith('arg:') or k.startswith('aux:'):
            k = k[4:]
        out[k] = v
    return out


def export_model(sym, params, in_shapes=None, in_types=np.float32,
                 onnx_file_path='model.onnx', verbose=False, dynamic=False,
                 dynamic_input_shapes=None, run_shape_inference=False, input_type=None,
                 input_shape=None, opset_version=13):
    """Writes the ONNX model of ``sym`` with parameter values ``params`` for inputs of
    ``in_shapes`` (one per input that is not a parameter, in ``list_inputs`` order) and
    ``in_types``; returns ``onnx_file_path``. With ``dynamic`` the first axis of every
    input and output is left free (the batch size)."""
    _require()
    from .symbol import Symbol, load
    if isinstance(sym, str):
        sym = load(sym)
    if not isinstance(sym, Symbol):
        raise MXNetError("export_model: sym must be a Symbol or a -symbol.json file name")
    params = _load_params(params)
    in_shapes = in_shapes if in_shapes is not None else input_shape
    in_types = input_type if input_type is not None else in_types
    graph = Graph.of(sym)
    data_names = [n.name for n in graph.variables() if n.name not in params]
    if in_shapes is None or len(in_shapes) != len(data_names):
        raise MXNetError("export_model: the graph has %d data inputs (%s) but in_shapes gives "
                         "%s" % (len(data_names), ', '.join(data_names), in_shapes))
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(data_names)
    types = [dtype_name(t) for t in in_types]
    param_names = [n.name for n in graph.variables() if n.name in params]
    arrays = [params[n] for n in param_names]
    return _export(graph, data_names, [tuple(s) for s in in_shapes], types, param_names, arrays,
                   sym.list_outputs(), onnx_file_path, dynamic, verbose, opset_version)


def export_block(block, onnx_file_path, *example_inputs, dynamic=False, verbose=False,
                 opset_version=13):
    """Writes the ONNX model of a hybridized ``block`` (run once) for inputs shaped like
    ``example_inputs`` (NDArrays; the last inputs it was called with by default)."""
    _require()
    c = block.__dict__.get('_hybrid_cache')
    if c is None or not c.graphs:
        raise MXNetError("export_block: call block.hybridize() and run it once first")
    names, graph, _, _, sym = (c.graphs.get(False) or next(iter(c.graphs.values())))[:5]
    if not example_inputs:
        example = c.last.data_specs
    else:
        example = [(a.shape, a._dtype) for a in example_inputs]
    params = dict(block.collect_params().items())
    param_names = [n.name for n in graph.variables() if n.name in params]
    arrays = [params[n]._reduce() for n in param_names]
    return _export(graph, names, [s for s, _ in example], [d for _, d in example], param_names,
                   arrays, sym.list_outputs(), onnx_file_path, dynamic, verbose, opset_version)


_SYMBOLICS = []


def _register_symbolics():
    """ONNX forms of torch calls that kernels make and torch's exporter has none for (once):
    ``take_along_dim`` (``_npi_take_along_axis``) is GatherElements, a stable ``sort``
    (``argsort``, ``sort``) is TopK over the whole axis, which ONNX defines as stable, the
    hyperbolic functions and ``isposinf``/``isneginf`` are ONNX's operators of those names,
    ``expm1`` is Exp minus 1."""
    if _SYMBOLICS:
        return
    from torch.onnx import register_custom_op_symbolic, symbolic_helper as sh

    def take_along_dim(g, self, indices, dim):
        return g.op('GatherElements', self, indices, axis_i=sh._get_const(dim, 'i', 'dim'))

    def sort(g, self, *args):
        # aten::sort(self, dim, descending) or aten::sort.stable(self, stable, dim, descending)
        if len(args) == 3:
            _, dim, descending = args
        else:
            dim, descending = args[:2]
        dim = sh._get_const(dim, 'i', 'dim')
        descending = sh._get_const(descending, 'b', 'descending')
        size = g.op('Gather', g.op('Shape', self),
                    g.op('Constant', value_t=torch.tensor([dim], dtype=torch.int64)), axis_i=0)
        return g.op('TopK', self, size, axis_i=dim, largest_i=int(bool(descending)),
                    sorted_i=1, outputs=2)

    def unary(onnx_op, **attrs):
        return lambda g, self: g.op(onnx_op, self, **attrs)

    def expm1(g, self):
        one = sh._if_scalar_type_as(torch.tensor(1.0), self)
        return g.op('Sub', g.op('Exp', self), g.op('Constant', value_t=one))

    import torch
    for opset in range(7, _opset_range()[1] + 1):
        register_custom_op_symbolic('aten::take_along_dim', take_along_dim, opset)
        register_custom_op_symbolic('aten::expm1', expm1, opset)
        if opset >= 9:
            for name in ('sinh', 'cosh', 'asinh', 'acosh', 'atanh'):
                register_custom_op_symbolic('aten::' + name, unary(name.capitalize()), opset)
        if opset >= 10:
            register_custom_op_symbolic('aten::sort', sort, opset)
            register_custom_op_symbolic('aten::isposinf', unary('IsInf', detect_negative_i=0),
                                        opset)
            register_custom_op_symbolic('aten::isneginf', unary('IsInf', detect_positive_i=0),
                                        opset)
    _SYMBOLICS.append(True)


def _export(graph, data_names, shapes, types, param_names, arrays, output_names, path, dynamic,
            verbose, opset_version):
    import torch
    _register_symbolics()
    ctx = cpu()
    prog = compile_program(graph, data_names + param_names,
                           list(shapes) + [a.shape for a in arrays],
                           list(types) + [a._dtype for a in arrays], ctx, False,
                           name='onnx_export')
    fn = prog.code.fn
    tensors = [a._data().detach().cpu().clone() for a in arrays]

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            for i, t in enumerate(tensors):
                self.register_buffer('p%d' % i, t)

        def forward(self, *xs):
            ps = [getattr(self, 'p%d' % i) for i in range(len(tensors))]
            return fn(*xs, *ps, device=torch.device('cpu'))

    from ..base import dtype_torch
    # zeros to trace with, ones for integers (an integer division by zero raises)
    dummy = tuple((torch.zeros if dtype_torch(t).is_floating_point else torch.ones)(
        s, dtype=dtype_torch(t)) for s, t in zip(shapes, types))
    # torch names the graph's inputs and outputs only with names it accepts as identifiers
    # of its own ('0', an ONNX model's input name, is not): placeholders, renamed afterwards
    ins = ['input_%d' % i for i in range(len(data_names))]
    outs = ['output_%d' % i for i in range(len(output_names))]
    dyn = None
    if dynamic:
        dyn = {n: {0: 'batch'} for n in ins + outs}
    with atomic.replacing(path) as tmp, warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with torch.no_grad():
            torch.onnx.export(Model(), dummy, tmp, input_names=ins, output_names=outs,
                              dynamic_axes=dyn, opset_version=opset_version, verbose=verbose,
                              dynamo=False)
        _rename_io(tmp, dict(zip(ins + outs, list(data_names) + list(output_names))))
    return path


def _rename_io(path, names):
    """Renames the inputs and outputs of the ONNX model file ``path`` (in place)."""
    import onnx
    model = onnx.load(path)
    g = model.graph
    for v in list(g.input) + list(g.output) + list(g.value_info):
        v.name = names.get(v.name, v.name)
    for node in g.node:
        node.input[:] = [names.get(i, i) for i in node.input]
        node.output[:] = [names.get(o, o) for o in node.output]
    onnx.save(model, path)


# MXNet's exporter package (``mx.onnx.mx2onnx``): here the exporter is this module.
mx2onnx = sys.modules[__name__]
