"""``GraphProto``, MXNet's ONNX graph translator: not supported (see ``mx.contrib.onnx``)."""
from .... import ndarray as nd  # noqa: F401
from .... import symbol  # noqa: F401
from ....base import MXNetError, string_types  # noqa: F401


class GraphProto:
    """MXNet's translator of ONNX graphs into Symbols; importing ONNX is not supported by
    neomx, and making one raises MXNetError."""

    def __init__(self, *args, **kwargs):
        raise MXNetError("mx.contrib.onnx.onnx2mx.GraphProto: importing ONNX models is not "
                         "supported by neomx; export_model (mx.onnx) writes ONNX, and "
                         "onnxruntime runs an ONNX model")


class _Translations(dict):
    """MXNet's table of ONNX operator translators: reading it raises, as importing ONNX is
    not supported."""

    def _fail(self, *args):
        raise MXNetError("mx.contrib.onnx.onnx2mx.import_onnx.convert_map: importing ONNX "
                         "models is not supported by neomx")

    __getitem__ = __iter__ = __len__ = __contains__ = get = keys = items = values = _fail


convert_map = _Translations()
