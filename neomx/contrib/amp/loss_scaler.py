"""The dynamic loss scale of mixed-precision training (MXNet's ``amp.loss_scaler``).

>>> s = LossScaler()
>>> s.loss_scale
65536.0
"""
import logging

from ... import autograd as ag
from ... import ndarray as nd
from ...ndarray import multi_all_finite

__all__ = ['LossScaler']


class LossScaler:
    """A loss scale that starts at 2**16, halves after a step whose gradients overflowed (an
    inf or a NaN: the trainer skips that step) and doubles, up to 2**24, after 2000 steps in
    a row without overflow. ``has_overflow(params)`` checks the parameters' gradients (on
    their first device, as MXNet) and moves the scale for the next step."""

    def __init__(self):
        self._loss_scale = 2.0 ** 16
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = 2.0 ** 24
        self._scale_seq_len = 2000
        self._unskipped = 0

    @property
    def loss_scale(self):
        return self._loss_scale

    def has_overflow(self, params):
        """Whether any gradient of ``params`` (Parameters) holds an inf or a NaN: one engine
        operation per 200 gradients and one wait, for the answer."""
        with ag.pause():
            grads = [p._grad[0] for p in params if p._grad is not None]
            finite = True
            if grads:
                flags = [multi_all_finite(*grads[i:i + 200], num_arrays=len(grads[i:i + 200]))
                         for i in range(0, len(grads), 200)]
                finite = bool(nd.concat(*flags, dim=0).min().asscalar()) if len(flags) > 1 \
                    else bool(flags[0].asscalar())
        overflow = not finite
        self._loss_scale = self._next_loss_scale
        if overflow:
            self._next_loss_scale = self._loss_scale / 2.0
            self._unskipped = 0
            logging.info("AMP: decreasing loss scale to %f", self._next_loss_scale)
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.0)
            logging.info("AMP: increasing loss scale to %f", self._next_loss_scale)
        return overflow
