"""MXNet's tables of which operators AMP runs in float16 / bfloat16 and which in float32.
neomx has no automatic mixed precision (see ``amp``): reading a table raises an error saying
so."""
from . import symbol_bf16, symbol_fp16  # noqa: F401
