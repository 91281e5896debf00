"""MXNet's ONNX importer (``mx.contrib.onnx.onnx2mx``): ``import_model``, ``import_to_gluon``
and ``get_model_metadata``, and the translator ``import_onnx.GraphProto`` with its table of
converters (``_import_helper._convert_map``)."""
from . import import_model, import_onnx, import_to_gluon  # noqa: F401
