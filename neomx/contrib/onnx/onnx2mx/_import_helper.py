"""``_convert_map``: ONNX operator name -> converter (``_op_translations.py``), as MXNet's
importer names its table."""
from ._op_translations import _convert_map  # noqa: F401
