"""``import_to_gluon``: not supported (see ``mx.contrib.onnx``)."""
from .. import import_to_gluon  # noqa: F401
from .import_onnx import GraphProto  # noqa: F401
