"""Basic layers: containers, Dense, Dropout, normalisation, Embedding, Flatten, Lambda."""
import numpy as np

from ... import ndarray as nd
from ...base import MXNetError
from ..block import Block, HybridBlock, _utils
from .activations import Activation

__all__ = ['Sequential', 'HybridSequential', 'Dense', 'Dropout', 'Embedding', 'BatchNorm',
           'BatchNormReLU', 'InstanceNorm', 'LayerNorm', 'GroupNorm', 'Flatten', 'Lambda', 'HybridLambda',
           'Identity', 'Concatenate', 'HybridConcatenate']


class _Stack:
    """What Sequential and HybridSequential share: add, len, indexing and slicing, repr."""

    def add(self, *blocks):
        """Appends blocks, run in order by ``forward``."""
        for block in blocks:
            self.register_child(block)

    def __repr__(self):
        indent = _utils()._indent
        modstr = '\n'.join('  ({key}): {block}'.format(key=key, block=indent(repr(block), 2))
                           for key, block in self._children.items())
        return '{name}(\n{modstr}\n)'.format(name=self.__class__.__name__, modstr=modstr)

    def __getitem__(self, key):
        """The child at ``key``, or for a slice a new container (same prefix) holding the
        selected children."""
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self):
        return len(self._children)


class Sequential(_Stack, Block):
    """Runs its children one after the other.

    >>> import neomx as mx
    >>> from neomx.gluon import nn
    >>> net = nn.Sequential()
    >>> net.add(nn.Dense(10, activation='relu'), nn.Dense(2))
    >>> net.initialize()
    >>> net(mx.nd.ones((3, 5))).shape
    (3, 2)
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def forward(self, x):
        for block in self._children.values():
            x = block(x)
        return x

    def hybridize(self, active=True, **kwargs):
        """Hybridizes the HybridBlock children (a HybridSequential would compile them into
        one graph)."""
        import warnings
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn("All children of this Sequential layer '%s' are HybridBlocks. Consider "
                          "using HybridSequential for the best performance." % self.prefix,
                          stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_Stack, HybridBlock):
    """Runs its (hybrid) children one after the other; hybridizes into one graph.

    >>> import neomx as mx
    >>> from neomx.gluon import nn
    >>> net = nn.HybridSequential()
    >>> net.add(nn.Dense(10, activation='relu'), nn.Dense(2))
    >>> net.initialize()
    >>> net(mx.nd.ones((3, 5))).shape
    (3, 2)
    >>> len(net), type(net[1:]).__name__
    (2, 'HybridSequential')
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x):
        for block in self._children.values():
            x = block(x)
        return x


class Dense(HybridBlock):
    """A densely connected layer: ``activation(dot(x, weight.T) + bias)``.

    Parameters
    ----------
    units : int
        Output size.
    activation : str
        An ``Activation`` after the product (``'relu'``, ...), none by default.
    use_bias : bool
    flatten : bool
        Flatten the input to (batch, -1) first (else apply to the last axis).
    dtype : str
    weight_initializer, bias_initializer : Initializer or str
    in_units : int
        Input size; 0 infers it at the first forward pass.

    >>> import neomx as mx
    >>> layer = mx.gluon.nn.Dense(4, in_units=3)
    >>> layer
    Dense(3 -> 4, linear)
    """

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype='float32',
                 weight_initializer=None, bias_initializer='zeros', in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get('weight', shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get('bias', shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            if activation is not None:
                self.act = Activation(activation, prefix=activation + '_')
            else:
                self.act = None

    def hybrid_forward(self, F, x, weight, bias=None):
        act = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name='fwd')
        if self.act is not None:
            act = self.act(act)
        return act

    def __repr__(self):
        shape = self.weight.shape
        return '{name}({layout}, {act})'.format(
            name=self.__class__.__name__, act=self.act if self.act else 'linear',
            layout='{0} -> {1}'.format(shape[1] if shape[1] else None, shape[0]))


class Dropout(HybridBlock):
    """Zeroes inputs with probability ``rate`` in training (scaling the rest by
    1/(1-rate)); the identity in prediction. ``axes`` share one mask along them."""

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name='fwd', cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return '{name}(p = {_rate}, axes={_axes})'.format(name=self.__class__.__name__,
                                                         **self.__dict__)


class _Norm(HybridBlock):
    """A normalisation layer with gamma (scale) and beta (center) of ``size`` values."""

    def _scale_shift(self, size, center, scale, beta_initializer, gamma_initializer,
                     frozen_when_off=False):
        """gamma and beta; one that is not learnt has grad_req 'null' (and, with
        ``frozen_when_off`` as BatchNorm does, cannot be made differentiable)."""
        self.gamma = self.params.get('gamma', grad_req='write' if scale else 'null',
                                     shape=(size,), init=gamma_initializer,
                                     allow_deferred_init=True,
                                     differentiable=scale or not frozen_when_off)
        self.beta = self.params.get('beta', grad_req='write' if center else 'null',
                                    shape=(size,), init=beta_initializer,
                                    allow_deferred_init=True,
                                    differentiable=center or not frozen_when_off)

    def __repr__(self):
        s = '{name}({content}'.format(name=self.__class__.__name__, content=', '.join(
            '='.join([k, repr(v)]) for k, v in self._kwargs.items()))
        return s + self._repr_tail()

    def _repr_tail(self):
        return ', in_channels={0})'.format(self.gamma.shape[0])


class BatchNorm(_Norm):
    """Batch normalisation. In training each batch is normalised with its own mean and
    variance (over every axis but ``axis``) and the running statistics are updated
    (``running = running * momentum + batch * (1 - momentum)``); in prediction the running
    statistics are used.

    Parameters
    ----------
    axis : int
        The channel axis (1 for NCHW).
    momentum : float
    epsilon : float
    center, scale : bool
        Learn beta / gamma (else they stay 0 / 1).
    use_global_stats : bool
        Always use the running statistics (a frozen BatchNorm).
    in_channels : int
        0 infers it at the first forward pass.
    """

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer='zeros', gamma_initializer='ones',
                 running_mean_initializer='zeros', running_variance_initializer='ones',
                 in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'axis': axis, 'eps': epsilon, 'momentum': momentum,
                        'fix_gamma': not scale, 'use_global_stats': use_global_stats}
        if in_channels != 0:
            self.in_channels = in_channels
        self._scale_shift(in_channels, center, scale, beta_initializer, gamma_initializer,
                          frozen_when_off=True)
        self.running_mean = self.params.get('running_mean', grad_req='null',
                                            shape=(in_channels,),
                                            init=running_mean_initializer,
                                            allow_deferred_init=True, differentiable=False)
        self.running_var = self.params.get('running_var', grad_req='null',
                                           shape=(in_channels,),
                                           init=running_variance_initializer,
                                           allow_deferred_init=True, differentiable=False)

    def cast(self, dtype):
        # float16 batch statistics lose too much: they stay float32.
        if np.dtype(dtype).name == 'float16':
            dtype = 'float32'
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name='fwd',
                           **self._kwargs)

    def _repr_tail(self):
        c = self.gamma.shape[0]
        return ', in_channels={0})'.format(c if c else None)


class BatchNormReLU(BatchNorm):
    """``BatchNorm`` followed by a ReLU, as one layer (MXNet 1.9.1 runs it as its fused MKL-DNN
    operator ``BatchNormWithReLU``; here it is the two operators). Same parameters as
    ``BatchNorm``.

    >>> import neomx as mx
    >>> layer = BatchNormReLU(in_channels=2)
    >>> layer.initialize()
    >>> layer(mx.nd.array([[-1.0, 2.0]])).asnumpy().tolist()
    [[0.0, 1.9999899864196777]]
    """

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.relu(F.BatchNorm(x, gamma, beta, running_mean, running_var, name='fwd',
                                  **self._kwargs))


class InstanceNorm(_Norm):
    """Normalises each instance and channel over its spatial axes, then scales and
    shifts per channel (``axis`` is the channel axis)."""

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False,
                 beta_initializer='zeros', gamma_initializer='ones', in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'eps': epsilon, 'axis': axis, 'center': center, 'scale': scale}
        self._axis = axis
        self._epsilon = epsilon
        self._scale_shift(in_channels, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name='fwd', eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name='fwd',
                              eps=self._epsilon).swapaxes(1, self._axis)


class LayerNorm(_Norm):
    """Normalises along ``axis`` (the last by default), then scales and shifts."""

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer='zeros', gamma_initializer='ones', in_channels=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {'eps': epsilon, 'axis': axis, 'center': center, 'scale': scale}
        self._axis = axis
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self._scale_shift(in_channels, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)


class GroupNorm(_Norm):
    """Normalises groups of channels (``num_groups`` of them, with every spatial position);
    gamma and beta have one value per group, as in MXNet 1.x."""

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer='zeros', gamma_initializer='ones', prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {'eps': epsilon, 'num_groups': num_groups, 'center': center,
                        'scale': scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self._scale_shift(num_groups, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def _repr_tail(self):
        return ')'


class Embedding(HybridBlock):
    """Maps indices in [0, input_dim) to vectors of ``output_dim`` (rows of ``weight``).

    >>> import neomx as mx
    >>> emb = mx.gluon.nn.Embedding(10, 4)
    >>> emb.initialize()
    >>> emb(mx.nd.array([[1, 2], [3, 4]])).shape
    (2, 2, 4)
    """

    def __init__(self, input_dim, output_dim, dtype='float32', weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        grad_stype = 'row_sparse' if sparse_grad else 'default'
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim, 'dtype': dtype,
                        'sparse_grad': sparse_grad}
        self.weight = self.params.get('weight', shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True, grad_stype=grad_stype)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name='fwd', **self._kwargs)

    def __repr__(self):
        return '{block_name}({input_dim} -> {output_dim}, {dtype})'.format(
            block_name=self.__class__.__name__, **self._kwargs)


class Flatten(HybridBlock):
    """Reshapes (batch, ...) to (batch, -1)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.flatten(x)

    def __repr__(self):
        return self.__class__.__name__


class Identity(HybridBlock):
    """Returns its input (a placeholder in containers)."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x):
        return x


class Lambda(Block):
    """Wraps a function (or the name of an ``nd`` operator) as a Block.

    >>> import neomx as mx
    >>> block = mx.gluon.nn.Lambda(lambda x: x * 2)
    >>> block(mx.nd.ones((1,))).asnumpy().tolist()
    [2.0]
    """

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            if not hasattr(nd, function):
                raise MXNetError("Function name %s is not found in ndarray." % function)
            self._func_impl = getattr(nd, function)
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError("Unrecognized function in lambda: {} of type {}"
                             .format(function, type(function)))

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return '{name}({function})'.format(name=self.__class__.__name__,
                                           function=self._func_impl.__name__)


class HybridLambda(HybridBlock):
    """Wraps ``function(F, x, *args)`` (or the name of an operator in both ``nd`` and
    ``sym``) as a HybridBlock.

    >>> import neomx as mx
    >>> block = mx.gluon.nn.HybridLambda(lambda F, x: F.relu(x))
    >>> block(mx.nd.array([-1, 2])).asnumpy().tolist()
    [0.0, 2.0]
    """

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            from ... import symbol as sym
            if not (hasattr(nd, function) and hasattr(sym, function)):
                raise MXNetError("Function name %s is not found in symbol/ndarray." % function)
            table = {nd: getattr(nd, function), sym: getattr(sym, function)}
            self._func = lambda F, *args: table[F](*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise ValueError("Unrecognized function in lambda: {} of type {}"
                             .format(function, type(function)))

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self):
        return '{name}({function})'.format(name=self.__class__.__name__,
                                           function=self._func_name)


class Concatenate(Sequential):
    """Runs every child on the same input and concatenates their outputs along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcatenate(HybridSequential):
    """Runs every child on the same input and concatenates their outputs along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import warnings  # noqa: E402,F401
from ... import symbol as sym  # noqa: E402,F401
from ...util import is_np_array  # noqa: E402,F401
from ..utils import _indent  # noqa: E402,F401
_BatchNorm = BatchNorm
