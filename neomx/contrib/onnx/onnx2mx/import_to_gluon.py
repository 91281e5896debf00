"""``import_to_gluon`` (``mx.contrib.onnx``): an ONNX file as a Gluon SymbolBlock.

>>> import neomx as mx                                                  # doctest: +SKIP
>>> net = mx.contrib.onnx.import_to_gluon('resnet18.onnx', mx.cpu())    # doctest: +SKIP
>>> net.hybridize()                                                     # doctest: +SKIP
"""
from .import_model import load, opsets
from .import_onnx import GraphProto

__all__ = ['import_to_gluon']


def import_to_gluon(model_file, ctx):
    """A SymbolBlock computing the ONNX model ``model_file``, its parameters loaded onto
    ``ctx`` (a Context or a list of them); its inputs are the graph's non-initializer inputs,
    in order."""
    model = load(model_file)
    graph = GraphProto()
    graph._functions = {(f.domain, f.name): f for f in model.functions}
    versions = opsets(model)
    return graph.graph_to_gluon(model.graph, ctx, versions[''], versions)
