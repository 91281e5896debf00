"""The Updater: the state of each weight index, applied through an optimizer, as a KVStore
or a Trainer uses it.
"""
import pickle

from ..ndarray import NDArray

__all__ = ['Updater', 'get_updater']


class Updater:
    """Keeps the state of each weight index and applies ``optimizer`` to it:
    ``updater(index, grad, weight)`` (one index or lists of them).

    >>> import neomx as mx
    >>> upd = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=1.0))
    >>> w = mx.nd.ones((2,))
    >>> upd(0, mx.nd.ones((2,)), w)
    >>> w.asnumpy().tolist()
    [0.0, 0.0]
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight):
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), list(grad), list(weight)
        else:
            indices, grads, weights = [index], [grad], [weight]
        opt = self.optimizer
        if weights:
            opt._set_current_context(weights[0].context.device_id)
        states = self.states
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                idx = indices[i] = idx.decode()
            if idx not in states:
                states[idx] = opt.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                states[idx] = self.sync_state_context(states[idx], weights[i].context)
                self.states_synced[idx] = True
        if opt._fusable():
            # One call: the optimizer pushes one operation per device for all of them.
            opt.update_multi_precision(indices, weights, grads, [states[i] for i in indices])
        elif self.aggregate_updates:
            by_dtype = {}
            for i, w, g in zip(indices, weights, grads):
                by_dtype.setdefault(w.dtype, []).append((i, w, g))
            n = opt.aggregate_num
            for group in by_dtype.values():
                for start in range(0, len(group), n):
                    idx, ws, gs = zip(*group[start:start + n])
                    opt.update_multi_precision(list(idx), list(ws), list(gs),
                                               [states[i] for i in idx])
        else:
            for i, w, g in zip(indices, weights, grads):
                opt.update_multi_precision(i, w, g, states[i])

    def sync_state_context(self, state, context):
        """``state`` (an array or a nesting of them) on ``context``."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states):
        """Loads states pickled by :meth:`get_states` (with or without the optimizer)."""
        states = pickle.loads(states)
        if isinstance(states, tuple) and len(states) == 2:
            self.states, self.optimizer = states
        else:
            self.states = states
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer=False):
        """The states pickled (with the optimizer when ``dump_optimizer``): waits for them."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer):
    """An :class:`Updater` for ``optimizer``."""
    return Updater(optimizer)
