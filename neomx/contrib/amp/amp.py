"""Automatic mixed precision (AMP): not implemented in neomx. Each function raises an
MXNetError saying so; to train in float16, cast the model (``net.cast('float16')``) and use an
optimizer with ``multi_precision=True``.

>>> import neomx as mx
>>> from neomx.contrib.amp import amp
>>> amp.init()
Traceback (most recent call last):
...
neomx.base.MXNetError: amp.init: automatic mixed precision is not implemented in neomx; cast the model with net.cast('float16') and use an optimizer with multi_precision=True instead
"""
from ...base import unavailable

__all__ = ['init', 'init_trainer', 'scale_loss', 'unscale', 'convert_model', 'convert_symbol',
           'convert_hybrid_block', 'convert_bucketing_module', 'list_lp16_ops', 'list_fp32_ops',
           'list_lp16_fp32_ops', 'list_conditional_fp32_ops', 'list_widest_type_cast',
           'list_loss_output_functions', 'list_lp16_use_fp32_params']


def _unsupported(name):
    return unavailable(name, "amp.%s: automatic mixed precision is not implemented in neomx; "
                             "cast the model with net.cast('float16') and use an optimizer with "
                             "multi_precision=True instead" % name,
                       'Not implemented in neomx: raises MXNetError.')


init = _unsupported('init')
init_trainer = _unsupported('init_trainer')
scale_loss = _unsupported('scale_loss')
unscale = _unsupported('unscale')
convert_model = _unsupported('convert_model')
convert_symbol = _unsupported('convert_symbol')
convert_hybrid_block = _unsupported('convert_hybrid_block')
convert_bucketing_module = _unsupported('convert_bucketing_module')
list_lp16_ops = _unsupported('list_lp16_ops')
list_fp32_ops = _unsupported('list_fp32_ops')
list_lp16_fp32_ops = _unsupported('list_lp16_fp32_ops')
list_conditional_fp32_ops = _unsupported('list_conditional_fp32_ops')
list_widest_type_cast = _unsupported('list_widest_type_cast')
list_loss_output_functions = _unsupported('list_loss_output_functions')
list_lp16_use_fp32_params = _unsupported('list_lp16_use_fp32_params')

# Whether amp.init() has run: never, here (libraries read it to choose their float16 path).
_amp_initialized = False


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import contextlib  # noqa: E402,F401
import logging  # noqa: E402,F401

import numpy as np  # noqa: E402,F401

from ... import base, ndarray, optimizer as opt, symbol  # noqa: E402,F401
from ...base import NDArrayHandle, SymbolHandle, check_call, mx_uint  # noqa: E402,F401
from ...context import gpu  # noqa: E402,F401
from ...gluon import trainer  # noqa: E402,F401
from ...module import BucketingModule  # noqa: E402,F401
from ...ndarray import NDArray, array  # noqa: E402,F401
from ...symbol import Symbol  # noqa: E402,F401
from ...symbol import contrib as symbol_contrib  # noqa: E402,F401
from . import lists  # noqa: E402,F401
from .loss_scaler import LossScaler  # noqa: E402,F401
bfloat16 = np.dtype([('bfloat16', np.uint16)])
