"""``import_model`` and ``get_model_metadata`` (``mx.contrib.onnx``): an ONNX file as a Symbol
and its parameters, and the names and shapes of its inputs and outputs.

>>> import neomx as mx                                                  # doctest: +SKIP
>>> sym, arg_params, aux_params = mx.contrib.onnx.import_model('resnet18.onnx')  # doctest: +SKIP
>>> mx.contrib.onnx.get_model_metadata('resnet18.onnx')                 # doctest: +SKIP
{'input_tensor_data': [('input', (1, 3, 224, 224), 1)], 'output_tensor_data': [('output', (1, 1000))]}
"""
from .import_onnx import GraphProto, ONNXImportError

__all__ = ['import_model', 'get_model_metadata']


def _require():
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise ImportError("Onnx and protobuf need to be installed: pip install neomx[onnx] "
                          "(or pip install onnx)") from None


def load(model_file, check=True):
    """The ModelProto of ``model_file`` (a file name, a file object or a ModelProto), checked
    by ONNX's checker (unless not ``check``), with ONNX's shape inference filled in; a file
    that is missing, corrupt or truncated gets an error naming it."""
    _require()
    import onnx
    if isinstance(model_file, onnx.ModelProto):
        model, where = model_file, 'the ONNX model'
    else:
        where = repr(getattr(model_file, 'name', model_file))
        try:
            model = onnx.load_model(model_file)
        except FileNotFoundError as e:
            raise ONNXImportError("ONNX model file %s: %s" % (where, e)) from None
        except Exception as e:      # protobuf's DecodeError and its kin
            raise ONNXImportError("ONNX model file %s is corrupt or truncated: it does not "
                                  "parse as an ONNX ModelProto (%s: %s)"
                                  % (where, type(e).__name__, e)) from None
    if not model.graph.node and not model.graph.output:
        raise ONNXImportError("ONNX model file %s holds no graph (an empty or truncated "
                              "file?)" % where)
    try:
        if check:
            onnx.checker.check_model(model)
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ONNXImportError("ONNX model file %s is not a valid ONNX model (corrupt or "
                              "truncated?): %s" % (where, first)) from None
    try:
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:       # shapes are then inferred by neomx as the graph is built
        pass
    return model


def opsets(model):
    """{domain: version} of a ModelProto's opset imports ('' for ai.onnx)."""
    out = {}
    for o in model.opset_import:
        out['' if o.domain == 'ai.onnx' else o.domain] = o.version
    out.setdefault('', 1)
    return out


def translate(model, constants=None):
    """(GraphProto translator, sym, arg_params, aux_params) of a loaded ModelProto."""
    graph = GraphProto(constants)
    graph._functions = {(f.domain, f.name): f for f in model.functions}
    versions = opsets(model)
    sym, arg_params, aux_params = graph.from_onnx(model.graph, versions[''], versions)
    return graph, sym, arg_params, aux_params


def import_model(model_file):
    """Imports the ONNX model ``model_file`` into a Symbol and its parameters.

    Returns ``(sym, arg_params, aux_params)``: the Symbol (its inputs are the graph's inputs
    that are not initializers), and dicts of NDArrays, the initializers and constants the
    Symbol's operators take as inputs (the aux ones are BatchNorm's running statistics).
    """
    _, sym, arg_params, aux_params = translate(load(model_file))
    return sym, arg_params, aux_params


def get_model_metadata(model_file):
    """The names and shapes of the model's inputs and outputs::

        {'input_tensor_data': [(name, shape, ONNX element type), ...],
         'output_tensor_data': [(name, shape), ...]}
    """
    model = load(model_file)
    return GraphProto().get_graph_metadata(model.graph)
