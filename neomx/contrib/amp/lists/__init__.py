"""MXNet's tables of which operators AMP runs in float16 / bfloat16 and which in float32
(the data is ``ops/amp_lists.py``, which the operators' casts read)."""
from . import symbol_bf16, symbol_fp16  # noqa: F401
