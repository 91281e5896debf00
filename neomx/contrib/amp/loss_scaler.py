"""The dynamic loss scale of mixed-precision training (MXNet's ``amp.loss_scaler``).

>>> s = LossScaler()
>>> s.loss_scale
65536.0
"""
import logging

import numpy as np

from ... import autograd as ag
from ... import ndarray as nd  # noqa: F401  (MXNet's module holds it)
from ...ndarray import multi_all_finite  # noqa: F401  (MXNet's module holds it)

__all__ = ['LossScaler']


class LossScaler:
    """A loss scale that halves after a step whose gradients overflowed (inf or NaN) and
    doubles, up to 2**24, after 2000 steps in a row without overflow; it starts at 2**16.
    ``has_overflow(params)`` checks the parameters' gradients and moves the scale for the
    next step."""

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
        """Whether any gradient of ``params`` (Parameters) holds an inf or a NaN."""
        with ag.pause():
            grads = [g for p in params if p.grad_req != 'null' for g in p.list_grad()]
            overflow = not all(bool(np.isfinite(g.asnumpy()).all()) for g in grads)
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

