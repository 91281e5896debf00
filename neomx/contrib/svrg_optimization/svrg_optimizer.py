"""The optimizers behind ``SVRGModule``.

``_SVRGOptimizer`` wraps the optimizer a user asks for: parameters whose names (from
``param_idx2name``) contain ``'full'`` are the full-gradient slots SVRGModule keeps in the
KVStore, and are set to what is pushed (``_AssignmentOptimizer``); the others take the wrapped
optimizer's step.

>>> import neomx as mx
>>> opt = _SVRGOptimizer('sgd', learning_rate=1.0, param_idx2name={0: 'w', 1: 'w_full'})
>>> kv = mx.kv.create('local')
>>> kv.set_optimizer(opt)
>>> kv.init(0, mx.nd.zeros(2)); kv.init(1, mx.nd.zeros(2))
>>> kv.push(0, mx.nd.ones(2)); kv.push(1, mx.nd.ones(2) * 5)
>>> w, full = mx.nd.empty(2), mx.nd.empty(2)
>>> kv.pull(0, w); kv.pull(1, full)
>>> w.asnumpy().tolist(), full.asnumpy().tolist()
([-1.0, -1.0], [5.0, 5.0])
"""
from ...base import MXNetError
from ... import optimizer as _opt

__all__ = ['_SVRGOptimizer', '_AssignmentOptimizer']

# The keyword arguments of the Optimizer base class (the wrapper takes these for itself).
_BASE_PARAMS = ('rescale_grad', 'param_idx2name', 'wd', 'clip_gradient', 'learning_rate',
                'lr_scheduler', 'sym', 'begin_num_update', 'multi_precision', 'param_dict')


@_opt.register
class _AssignmentOptimizer(_opt.Optimizer):
    """Sets the weight to the pushed gradient (SVRGModule's full gradients in a KVStore)."""

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        weight[:] = grad


@_opt.register
class _SVRGOptimizer(_opt.Optimizer):
    """``default_optimizer`` (a name or an Optimizer) for the parameters, assignment for the
    full-gradient slots (names containing 'full')."""

    def __init__(self, default_optimizer, **kwargs):
        super().__init__(**{k: v for k, v in kwargs.items() if k in _BASE_PARAMS})
        if isinstance(default_optimizer, str):
            self.default_opt = _opt.create(default_optimizer, **kwargs)
        else:
            self.default_opt = default_optimizer
        self.aux_opt = _opt.create(_AssignmentOptimizer.__name__)

    def _name_of(self, index):
        if index in self.idx2name.values():     # a KVStore's string keys
            return index
        name = self.idx2name.get(index)
        if name is None:
            raise MXNetError("_SVRGOptimizer: no parameter name for index %r (param_idx2name "
                             "has %s)" % (index, sorted(self.idx2name)))
        return name

    def _for(self, index):
        return self.aux_opt if 'full' in self._name_of(index) else self.default_opt

    def create_state(self, index, weight):
        return self._for(index).create_state(index, weight)

    def update(self, index, weight, grad, state):
        self._for(index).update(index, weight, grad, state)

import neomx as mx  # noqa: E402,F401  (MXNet's module holds ``mx``)
