"""MXNet's ONNX importer (``mx.contrib.onnx.onnx2mx``): not supported by neomx; its functions
and ``GraphProto`` raise an error saying so when called."""
from . import import_model, import_onnx, import_to_gluon  # noqa: F401
