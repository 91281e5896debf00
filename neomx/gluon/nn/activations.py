"""Activation layers."""
from ... import initializer
from ...base import MXNetError
from ..block import HybridBlock

__all__ = ['Activation', 'LeakyReLU', 'PReLU', 'ELU', 'SELU', 'Swish', 'GELU']


class Activation(HybridBlock):
    """An activation function by name: 'relu', 'sigmoid', 'tanh', 'softrelu', 'softsign'.

    >>> import neomx as mx
    >>> mx.gluon.nn.Activation('relu')(mx.nd.array([-1, 1])).asnumpy().tolist()
    [0.0, 1.0]
    """

    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name='fwd')

    def __repr__(self):
        return '{name}({_act_type})'.format(name=self.__class__.__name__, **self.__dict__)


class LeakyReLU(HybridBlock):
    """``x`` for positive inputs, ``alpha * x`` otherwise."""

    def __init__(self, alpha, **kwargs):
        if alpha < 0:
            raise MXNetError("Slope coefficient for LeakyReLU must be no less than 0, got %r"
                             % (alpha,))
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='leaky', slope=self._alpha, name='fwd')

    def __repr__(self):
        return '{name}({alpha})'.format(name=self.__class__.__name__, alpha=self._alpha)


class PReLU(HybridBlock):
    """LeakyReLU with a learnt slope (one per channel with ``in_channels``, else shared)."""

    def __init__(self, alpha_initializer=initializer.Constant(0.25), in_channels=1, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get('alpha', shape=(in_channels,), init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, gamma=alpha, act_type='prelu', name='fwd')


class ELU(HybridBlock):
    """``x`` for positive inputs, ``alpha * (exp(x) - 1)`` otherwise."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='elu', slope=self._alpha)


class SELU(HybridBlock):
    """Scaled ELU (self-normalising networks)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='selu', name='fwd')


class GELU(HybridBlock):
    """Gaussian error linear unit, ``x * Phi(x)``."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type='gelu', name='fwd')


class Swish(HybridBlock):
    """``x * sigmoid(beta * x)``."""

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x, name='fwd')


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from ...util import is_np_array  # noqa: E402,F401
