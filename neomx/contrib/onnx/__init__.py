"""``mx.contrib.onnx``: ONNX export (``mx.onnx``); importing ONNX models into neomx is not
provided and fails with an error naming what to use instead."""
from ...base import unavailable
from ...symbol.onnx import export_model  # noqa: F401

__all__ = ['export_model', 'import_model', 'get_model_metadata', 'import_to_gluon']


def _no_import(name):
    return unavailable(name, "mx.contrib.onnx.%s: importing ONNX models is not supported by "
                             "neomx; export_model (mx.onnx) writes ONNX, and onnxruntime runs an "
                             "ONNX model" % name,
                       "Not supported: raises MXNetError (importing ONNX into neomx).")


import_model = _no_import('import_model')
get_model_metadata = _no_import('get_model_metadata')
import_to_gluon = _no_import('import_to_gluon')

# MXNet's names of the functions under their modules' names
export_model_ = export_model
import_model_ = import_model
get_model_metadata_ = get_model_metadata
import_to_gluon_ = import_to_gluon

from . import onnx2mx  # noqa: E402,F401
