"""The autograd API of MXNet 0.x (``mx.contrib.autograd``), on ``mx.autograd``.

>>> import neomx as mx
>>> x = mx.nd.array([1., 2.])
>>> grads, loss = grad_and_loss(lambda x: (x * x).sum())(x)
>>> grads[0].asnumpy().tolist()
[2.0, 4.0]
"""
import functools

from .. import autograd as _ag
from .. import ndarray as nd

__all__ = ['set_is_training', 'train_section', 'test_section', 'mark_variables', 'backward',
           'compute_gradient', 'grad_and_loss', 'grad', 'TrainingStateScope']


def set_is_training(is_train):
    """Turns recording and training mode on or off; returns the previous state."""
    prev = _ag.is_training()
    _ag.set_recording(is_train)
    _ag.set_training(is_train)
    return prev


class TrainingStateScope:
    """A scope recording (``enter_state`` True) or not, restoring the previous state on
    exit."""

    def __init__(self, enter_state):
        self._enter_state = enter_state
        self._prev = None

    def __enter__(self):
        self._prev = (_ag.is_recording(), _ag.is_training())
        _ag.set_recording(self._enter_state)
        _ag.set_training(self._enter_state)

    def __exit__(self, *exc):
        _ag.set_recording(self._prev[0])
        _ag.set_training(self._prev[1])


def train_section():
    """A scope in which operations are recorded for gradients (training mode)."""
    return TrainingStateScope(True)


def test_section():
    """A scope in which nothing is recorded (inference)."""
    return TrainingStateScope(False)


mark_variables = _ag.mark_variables


def backward(outputs, out_grads=None, retain_graph=False):
    """Computes the gradients of ``outputs`` with respect to the marked variables."""
    _ag.backward(outputs, head_grads=out_grads, retain_graph=retain_graph)


def compute_gradient(outputs):
    """``backward(outputs)`` (deprecated name)."""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """Wraps ``func`` to return ``(gradients of its inputs, its output)``; ``argnum`` picks
    the inputs (an int or a list)."""
    @functools.wraps(func)
    def wrapped(*args):
        variables = list(args)
        if argnum is not None:
            picks = argnum if isinstance(argnum, list) else [argnum]
            variables = [args[i] for i in picks]
        for x in variables:
            if not isinstance(x, nd.NDArray):
                raise TypeError("type of autograd input should NDArray.")
        grads = [nd.zeros_like(x) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        backward([outputs] if isinstance(outputs, nd.NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func, argnum=None):
    """Wraps ``func`` to return the gradients of its inputs."""
    grad_with_loss = grad_and_loss(func, argnum)

    @functools.wraps(grad_with_loss)
    def wrapped(*args):
        return grad_with_loss(*args)[0]
    return wrapped


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import ctypes  # noqa: E402,F401
from ..base import NDArrayHandle, check_call, mx_uint, string_types  # noqa: E402,F401
from ..ndarray import NDArray, array, zeros_like  # noqa: E402,F401
