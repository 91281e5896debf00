"""MXNet's AMP operator tables for fp16; neomx has no automatic mixed precision, so each
table raises an error saying so when used."""
from ..amp import _unsupported

_TABLES = ('FP16_FUNCS', 'FP16_FP32_FUNCS', 'FP32_FUNCS', 'WIDEST_TYPE_CASTS',
           'CONDITIONAL_FP32_FUNCS', 'LOSS_OUTPUT_FUNCTIONS')


class _Table:
    """An AMP operator table: using it (iterating, testing membership, indexing) raises."""

    def __init__(self, name):
        self._fail = _unsupported('lists.symbol_fp16.' + name)

    def __iter__(self):
        self._fail()

    __contains__ = __len__ = __getitem__ = lambda self, *args: self._fail()


for _name in _TABLES:
    globals()[_name] = _Table(_name)
