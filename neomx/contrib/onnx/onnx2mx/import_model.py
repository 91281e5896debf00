"""``import_model`` and ``get_model_metadata``: not supported (see ``mx.contrib.onnx``)."""
from .. import get_model_metadata, import_model  # noqa: F401
from .import_onnx import GraphProto  # noqa: F401
