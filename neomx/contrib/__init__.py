"""``mx.contrib``: text (vocabularies and embeddings), the contrib operators (``nd`` and
``sym``), the old autograd API, ``DataLoaderIter``, ONNX, quantization and TensorBoard."""
from . import text
from . import autograd
from . import io
from . import ndarray
from . import ndarray as nd
from . import symbol
from . import symbol as sym
from . import onnx
from . import quantization
from . import quantization as quant
from . import tensorboard
