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
from ...base import MXNetError

__all__ = ['init', 'init_trainer', 'scale_loss', 'unscale', 'convert_model', 'convert_symbol',
           'convert_hybrid_block', 'convert_bucketing_module']


def _unsupported(name):
    def fn(*args, **kwargs):
        raise MXNetError("amp.%s: automatic mixed precision is not implemented in neomx; cast "
                         "the model with net.cast('float16') and use an optimizer with "
                         "multi_precision=True instead" % name)
    fn.__name__ = name
    fn.__doc__ = 'Not implemented in neomx: raises MXNetError.'
    return fn


init = _unsupported('init')
init_trainer = _unsupported('init_trainer')
scale_loss = _unsupported('scale_loss')
unscale = _unsupported('unscale')
convert_model = _unsupported('convert_model')
convert_symbol = _unsupported('convert_symbol')
convert_hybrid_block = _unsupported('convert_hybrid_block')
convert_bucketing_module = _unsupported('convert_bucketing_module')
