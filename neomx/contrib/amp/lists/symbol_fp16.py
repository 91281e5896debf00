"""MXNet's AMP tables for float16, under MXNet's names (see ``ops/amp_lists.py``)."""
from ....ops.amp_lists import FP16_CONDITIONAL_FP32_FUNCS as CONDITIONAL_FP32_FUNCS
from ....ops.amp_lists import FP16_FP32_FUNCS, FP16_FUNCS
from ....ops.amp_lists import FP16_FP32_ONLY_FUNCS as FP32_FUNCS
from ....ops.amp_lists import FP16_LOSS_OUTPUT_FUNCTIONS as LOSS_OUTPUT_FUNCTIONS
from ....ops.amp_lists import FP16_WIDEST_TYPE_CASTS as WIDEST_TYPE_CASTS

__all__ = ['FP16_FUNCS', 'FP16_FP32_FUNCS', 'FP32_FUNCS', 'CONDITIONAL_FP32_FUNCS',
           'WIDEST_TYPE_CASTS', 'LOSS_OUTPUT_FUNCTIONS']
