"""MXNet's AMP tables for bfloat16, under MXNet's names (see ``ops/amp_lists.py``)."""
from ....ops.amp_lists import BF16_CONDITIONAL_FP32_FUNCS as CONDITIONAL_FP32_FUNCS
from ....ops.amp_lists import BF16_FP32_FUNCS, BF16_FUNCS, BF16_USE_FP32_PARAMS
from ....ops.amp_lists import BF16_FP32_ONLY_FUNCS as FP32_FUNCS
from ....ops.amp_lists import BF16_LOSS_OUTPUT_FUNCTIONS as LOSS_OUTPUT_FUNCTIONS
from ....ops.amp_lists import BF16_WIDEST_TYPE_CASTS as WIDEST_TYPE_CASTS

__all__ = ['BF16_FUNCS', 'BF16_FP32_FUNCS', 'BF16_USE_FP32_PARAMS', 'FP32_FUNCS',
           'CONDITIONAL_FP32_FUNCS', 'WIDEST_TYPE_CASTS', 'LOSS_OUTPUT_FUNCTIONS']
