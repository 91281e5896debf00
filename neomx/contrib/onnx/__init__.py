"""``mx.contrib.onnx``: ONNX import (``import_model``, ``import_to_gluon``,
``get_model_metadata``; the optional extra ``onnx``) and export (``export_model``, as
``mx.onnx``)."""
from ...symbol.onnx import export_model  # noqa: F401
from .onnx2mx.import_model import get_model_metadata, import_model  # noqa: F401
from .onnx2mx.import_to_gluon import import_to_gluon  # noqa: F401

__all__ = ['export_model', 'import_model', 'get_model_metadata', 'import_to_gluon']

# MXNet's names of the functions under their modules' names
export_model_ = export_model
import_model_ = import_model
get_model_metadata_ = get_model_metadata
import_to_gluon_ = import_to_gluon

from . import onnx2mx  # noqa: E402,F401
