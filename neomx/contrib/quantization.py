"""``mx.contrib.quantization``: MXNet's INT8 graph quantization, which rewrites graphs to its
MKL-DNN / cuDNN quantized operators. neomx has no quantized operators; each function exists
and raises an error naming the alternative when called."""
from ..base import MXNetError

__all__ = ['quantize_model', 'quantize_model_mkldnn', 'quantize_graph', 'quantize_net',
           'quantize_net_v2', 'calib_graph', 'combine_histogram']


def _unsupported(name):
    def fn(*args, **kwargs):
        raise MXNetError("mx.contrib.quantization.%s: INT8 quantization with MXNet's quantized "
                         "operators is not supported by neomx (its kernels are ATen's); export "
                         "the model to ONNX (mx.onnx) and quantize it with onnxruntime, or use "
                         "float16 (block.cast('float16'))" % name)
    fn.__name__ = name
    fn.__doc__ = "Not supported: raises MXNetError (no quantized operators in neomx)."
    return fn


quantize_model = _unsupported('quantize_model')
quantize_model_mkldnn = _unsupported('quantize_model_mkldnn')
quantize_graph = _unsupported('quantize_graph')
quantize_net = _unsupported('quantize_net')
quantize_net_v2 = _unsupported('quantize_net_v2')
calib_graph = _unsupported('calib_graph')
combine_histogram = _unsupported('combine_histogram')
