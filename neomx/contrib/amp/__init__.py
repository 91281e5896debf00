"""``mx.contrib.amp``: automatic mixed precision, as MXNet 1.9's (see ``amp.py``)."""
from . import amp
from . import lists, loss_scaler
from .amp import (bfloat16, convert_bucketing_module, convert_hybrid_block, convert_model,
                  convert_symbol, init, init_trainer, list_conditional_fp32_ops, list_fp32_ops,
                  list_loss_output_functions, list_lp16_fp32_ops, list_lp16_ops,
                  list_lp16_use_fp32_params, list_widest_type_cast, scale_loss, unscale)
from .loss_scaler import LossScaler

__all__ = ['amp', 'init', 'init_trainer', 'scale_loss', 'unscale', 'convert_model',
           'convert_symbol', 'convert_hybrid_block', 'convert_bucketing_module', 'LossScaler',
           'list_lp16_ops', 'list_fp32_ops', 'list_lp16_fp32_ops', 'list_conditional_fp32_ops',
           'list_widest_type_cast', 'list_loss_output_functions', 'list_lp16_use_fp32_params',
           'bfloat16']
