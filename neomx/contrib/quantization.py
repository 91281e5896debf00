"""``mx.contrib.quantization``: MXNet's INT8 graph quantization, which rewrites graphs to its
MKL-DNN / cuDNN quantized operators. neomx runs graphs MXNet quantized (the operators of
``ops/quantization.py``: quantize_v2, dequantize, requantize, quantized pooling and flatten,
the fused ``_sg_mkldnn_conv``; GluonCV's ``*_int8`` models), but does not quantize graphs
itself: each function here exists and raises an error naming the alternative when called."""
from ..base import unavailable

__all__ = ['quantize_model', 'quantize_model_mkldnn', 'quantize_graph', 'quantize_net',
           'quantize_net_v2', 'calib_graph', 'combine_histogram']


def _unsupported(name):
    return unavailable(name, "mx.contrib.quantization.%s: INT8 quantization of a graph into "
                             "MXNet's quantized operators is not supported by neomx (it runs "
                             "graphs MXNet quantized); export the model to ONNX (mx.onnx) and "
                             "quantize it with onnxruntime, or use float16 "
                             "(block.cast('float16'))" % name,
                       "Not supported: raises MXNetError (neomx does not quantize graphs).")


quantize_model = _unsupported('quantize_model')
quantize_model_mkldnn = _unsupported('quantize_model_mkldnn')
quantize_graph = _unsupported('quantize_graph')
quantize_net = _unsupported('quantize_net')
quantize_net_v2 = _unsupported('quantize_net_v2')
calib_graph = _unsupported('calib_graph')
combine_histogram = _unsupported('combine_histogram')


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import ctypes  # noqa: E402,F401
import logging  # noqa: E402,F401
import os  # noqa: E402,F401
import shutil  # noqa: E402,F401
import warnings  # noqa: E402,F401

import numpy as np  # noqa: E402,F401

from .. import ndarray  # noqa: E402,F401
from ..base import (NDArrayHandle, SymbolHandle, c_str, check_call, mx_uint,  # noqa: E402,F401
                    py_str)
from ..context import Context, cpu  # noqa: E402,F401
from ..io import DataBatch, DataDesc, DataIter  # noqa: E402,F401
from ..module import Module  # noqa: E402,F401
from ..ndarray import NDArray  # noqa: E402,F401
from ..ndarray import load as nd_load, save as nd_save  # noqa: E402,F401
from ..symbol import Symbol, load as sym_load  # noqa: E402,F401
