"""``mx.contrib.amp``: MXNet's automatic mixed precision, which neomx does not implement yet
(every call says so); importing it works, as code written for MXNet imports it up front."""
from . import amp
from . import lists, loss_scaler
from .amp import (convert_hybrid_block, convert_model, convert_symbol, init, init_trainer,
                  list_conditional_fp32_ops, list_fp32_ops, list_loss_output_functions,
                  list_lp16_fp32_ops, list_lp16_ops, list_lp16_use_fp32_params,
                  list_widest_type_cast, scale_loss, unscale)

__all__ = ['amp', 'init', 'init_trainer', 'scale_loss', 'unscale', 'convert_model',
           'convert_symbol', 'convert_hybrid_block']
