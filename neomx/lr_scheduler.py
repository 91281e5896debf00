"""Learning-rate schedules: the learning rate as a function of the number of updates.

An optimizer calls its scheduler with ``num_update``, the largest number of updates applied to
any one weight so far, and uses the value returned. Every scheduler can begin with a warm-up of
``warmup_steps`` updates, rising linearly from ``warmup_begin_lr`` to ``base_lr`` (or staying at
``warmup_begin_lr`` with ``warmup_mode='constant'``).

>>> import neomx as mx
>>> sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
>>> [sched(n) for n in (1, 2, 3, 5)]
[1.0, 1.0, 0.5, 0.25]
>>> opt = mx.optimizer.SGD(lr_scheduler=mx.lr_scheduler.PolyScheduler(10, base_lr=1.0))
>>> opt.learning_rate
1.0
"""
import logging
from math import cos, pi

__all__ = ['LRScheduler', 'FactorScheduler', 'MultiFactorScheduler', 'PolyScheduler',
           'CosineScheduler']


class LRScheduler:
    """Base class of the schedulers: holds ``base_lr`` and the warm-up.

    Subclasses define ``__call__(num_update)``; values for ``num_update < warmup_steps`` come
    from :meth:`get_warmup_lr`.
    """

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        if not isinstance(warmup_steps, int):
            raise TypeError("warmup_steps must be an int, got %r" % (warmup_steps,))
        if warmup_begin_lr > base_lr:
            raise ValueError("Base lr has to be higher than warmup_begin_lr (base_lr=%r, "
                             "warmup_begin_lr=%r)" % (base_lr, warmup_begin_lr))
        if warmup_steps < 0:
            raise ValueError("Warmup steps has to be positive or 0, got %d" % warmup_steps)
        if warmup_mode not in ('linear', 'constant'):
            raise ValueError("Supports only linear and constant modes of warmup, got %r"
                             % (warmup_mode,))
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        """The learning rate at update ``num_update`` of the warm-up."""
        if num_update >= self.warmup_steps:
            raise ValueError("get_warmup_lr: update %d is past the %d warm-up steps"
                             % (num_update, self.warmup_steps))
        if self.warmup_mode == 'linear':
            increase = (self.warmup_final_lr - self.warmup_begin_lr) \
                * float(num_update) / float(self.warmup_steps)
            return self.warmup_begin_lr + increase
        return self.warmup_begin_lr

    def __call__(self, num_update):
        """The learning rate after ``num_update`` updates (the most any weight has had)."""
        raise NotImplementedError("%s must define __call__(num_update)" % type(self).__name__)


class FactorScheduler(LRScheduler):
    """Multiplies the learning rate by ``factor`` every ``step`` updates, down to
    ``stop_factor_lr``: ``base_lr * factor ** floor((num_update - 1) / step)``.

    >>> import neomx as mx
    >>> s = mx.lr_scheduler.FactorScheduler(step=10, factor=0.1, base_lr=1.0)
    >>> s(10), round(s(11), 6)
    (1.0, 0.1)
    """

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round, got %r"
                             % (step,))
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce, got %r"
                             % (factor,))
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # A loop, not a test: training resumed at a later update jumps several steps at once.
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                logging.info("Update[%d]: now learning rate arrived at %0.5e, will not "
                             "change in the future", num_update, self.base_lr)
            else:
                logging.info("Update[%d]: Change learning rate to %0.5e",
                             num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiplies the learning rate by ``factor`` after each update count in the increasing
    list ``step``.

    >>> import neomx as mx
    >>> s = mx.lr_scheduler.MultiFactorScheduler(step=[2, 4], factor=0.5, base_lr=1.0)
    >>> [s(n) for n in (2, 3, 5)]
    [1.0, 0.5, 0.25]
    """

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or len(step) < 1:
            raise TypeError("step must be a non-empty list of update counts, got %r" % (step,))
        for i, s in enumerate(step):
            if i != 0 and step[i] <= step[i - 1]:
                raise ValueError("Schedule step must be an increasing integer list, got %r"
                                 % (step,))
            if s < 1:
                raise ValueError("Schedule step must be greater or equal than 1 round, got %r"
                                 % (step,))
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce, got %r"
                             % (factor,))
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            logging.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
        return self.base_lr


class _DecayScheduler(LRScheduler):
    """Decay from ``base_lr`` to ``final_lr`` over the ``max_update - warmup_steps`` updates
    after the warm-up, along a curve from 1 to 0 given by ``_curve(elapsed, span)``."""

    def __init__(self, max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                 warmup_mode):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(max_update, int):
            raise TypeError("max_update must be an int, got %r" % (max_update,))
        if max_update < 1:
            raise ValueError("maximum number of updates must be strictly positive, got %d"
                             % max_update)
        self.base_lr_orig = self.base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * \
                self._curve(num_update - self.warmup_steps, self.max_steps)
        return self.base_lr


class PolyScheduler(_DecayScheduler):
    """Polynomial decay to ``final_lr`` over ``max_update`` updates (after the warm-up):
    ``final_lr + (base_lr - final_lr) * (1 - n / max_steps) ** pwr``.

    >>> import neomx as mx
    >>> s = mx.lr_scheduler.PolyScheduler(max_update=10, base_lr=1.0, pwr=1)
    >>> s(5), s(10), s(20)
    (0.5, 0.0, 0.0)
    """

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)
        self.power = pwr

    def _curve(self, elapsed, span):
        return pow(1 - float(elapsed) / float(span), self.power)


class CosineScheduler(_DecayScheduler):
    """Cosine decay to ``final_lr`` over ``max_update`` updates (after the warm-up):
    ``final_lr + (base_lr - final_lr) * (1 + cos(pi * n / max_steps)) / 2``.

    >>> import neomx as mx
    >>> s = mx.lr_scheduler.CosineScheduler(max_update=10, base_lr=1.0)
    >>> s(0), round(s(5), 6), s(10)
    (1.0, 0.5, 0.0)
    """

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)

    def _curve(self, elapsed, span):
        return (1 + cos(pi * elapsed / span)) / 2
