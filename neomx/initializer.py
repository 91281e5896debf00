"""Weight initializers (``mx.init``, ``mx.initializer``), as in MXNet 1.9.

An initializer is called with an :class:`InitDesc` (the parameter's name, and its own
initializer in ``attrs['__init__']`` if it has one) and the array to fill in place. Without
a parameter-specific initializer the name decides: ``*weight`` gets the initializer's
``_init_weight``, ``*bias`` and ``*beta`` zeros, ``*gamma`` ones, ``*moving_mean`` /
``*running_mean`` zeros, ``*moving_var`` / ``*running_var`` ones. Random draws use the
generator of the array's device (``mx.random.seed`` makes them reproducible).

>>> import neomx as mx
>>> w = mx.nd.zeros((2, 3))
>>> mx.init.Constant(0.5)(mx.init.InitDesc('fc_weight'), w)
>>> w.asnumpy().tolist()
[[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]
>>> mx.init.create('xavier', magnitude=2).dumps()
'["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 2}]'
"""
import json
import logging
import re
import warnings
from math import sqrt

import numpy as np

from .base import MXNetError
from . import ndarray
from .ndarray import NDArray
from .ndarray import random as _random

__all__ = ['InitDesc', 'Initializer', 'register', 'alias', 'create', 'Load', 'Mixed', 'Zero',
           'One', 'Constant', 'Uniform', 'Normal', 'Orthogonal', 'Xavier', 'MSRAPrelu',
           'Bilinear', 'LSTMBias', 'FusedRNN']


class InitDesc(str):
    """A parameter's name with its attributes (``attrs['__init__']``: its own initializer,
    as an Initializer or a registered name/JSON string) and the global initializer."""

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


# -- registration ---------------------------------------------------------------------------

_REGISTRY = {}


def register(klass):
    """Registers an Initializer subclass under its lower-case class name, so ``create`` and
    ``Parameter(init='name')`` find it.

    >>> import neomx as mx
    >>> @mx.init.register
    ... class Halves(mx.init.Initializer):
    ...     def _init_weight(self, name, arr):
    ...         arr[:] = 0.5
    >>> mx.init.create('halves')
    Halves()
    """
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise MXNetError("register: expected a subclass of Initializer, got %r" % (klass,))
    name = klass.__name__.lower()
    if name in _REGISTRY and _REGISTRY[name] is not klass:
        warnings.warn("New initializer %s.%s is overriding existing initializer %s"
                      % (klass.__module__, klass.__name__, name), UserWarning, stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases):
    """Class decorator registering an Initializer under extra names (``'zeros'``)."""
    def reg(klass):
        for a in aliases:
            _REGISTRY[a.lower()] = klass
        return klass
    return reg


def create(init, **kwargs):
    """An Initializer from an instance (returned as is), a registered name (``'xavier'``,
    ``'zeros'``) with ``kwargs``, or the JSON of ``Initializer.dumps()``."""
    if isinstance(init, Initializer):
        if kwargs:
            raise MXNetError("create: %r is already an Initializer; keyword arguments %s "
                             "cannot be applied" % (init, sorted(kwargs)))
        return init
    if isinstance(init, type) and issubclass(init, Initializer):
        return init(**kwargs)
    if not isinstance(init, str):
        raise MXNetError("create: expected an Initializer or the name of a registered one, "
                         "got %r" % (init,))
    s = init.strip()
    if s.startswith('['):
        name, args = json.loads(s)
        args = dict(args, **kwargs)
    else:
        name, args = s, kwargs
    klass = _REGISTRY.get(name.lower())
    if klass is None:
        raise MXNetError("initializer %r is not registered; registered initializers: %s"
                         % (name, ', '.join(sorted(_REGISTRY))))
    return klass(**args)


# -- the base class -------------------------------------------------------------------------

class Initializer:
    """The base class: subclasses implement ``_init_weight(name, arr)``."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Logs each initialised array's statistic (by default its root mean square)."""
        self._verbose = verbose
        if print_func is None:
            def print_func(x):
                return str((ndarray.norm(x) / sqrt(x.size)).asscalar())
        self._print_func = print_func
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info('Initialized %s as %s: %s', desc, init, self._print_func(arr))

    def dumps(self):
        """``[name, kwargs]`` as JSON: ``create`` rebuilds the initializer from it."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        """Fills ``arr`` (an NDArray, in place) for the parameter described by ``desc``."""
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if not isinstance(arr, NDArray):
            raise MXNetError("initializer %s: %s must be filled into an NDArray, got %s"
                             % (type(self).__name__, desc, type(arr).__name__))
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get('__init__', '')
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, method in _BY_SUFFIX:
            if desc.endswith(suffix):
                getattr(self, method)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name, arr):
        warnings.warn("Calling initializer with init(str, NDArray) has been deprecated; "
                      "please use init(mx.init.InitDesc(...), NDArray) instead.",
                      DeprecationWarning, stacklevel=3)
        if not isinstance(name, str):
            raise TypeError('name must be string')
        if not isinstance(arr, NDArray):
            raise TypeError('arr must be NDArray')
        if name.startswith('upsampling'):
            self._init_bilinear(name, arr)
        elif name.startswith('stn_loc') and name.endswith('weight'):
            self._init_zero(name, arr)
        elif name.startswith('stn_loc') and name.endswith('bias'):
            self._init_loc_bias(name, arr)
        else:
            self(InitDesc(name), arr)

    def _init_bilinear(self, _, arr):
        arr[:] = _bilinear(arr.shape)

    def _init_loc_bias(self, _, arr):
        if arr.shape[0] != 6:
            raise MXNetError("stn_loc bias must have 6 elements, got shape %s" % (arr.shape,))
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    def _init_bias(self, _, arr):
        arr[:] = 0.0

    def _init_gamma(self, _, arr):
        arr[:] = 1.0

    def _init_beta(self, _, arr):
        arr[:] = 0.0

    def _init_weight(self, name, arr):
        raise NotImplementedError("%s must override _init_weight" % type(self).__name__)

    def _init_default(self, name, _):
        raise MXNetError(
            "Unknown initialization pattern for %s. Default initialization is limited to names "
            "ending in 'weight', 'bias', 'gamma' (1.0), 'beta' (0.0), 'moving_mean'/"
            "'running_mean' (0.0) and 'moving_var'/'running_var' (1.0); give the parameter its "
            "own initializer (init=mx.init.*)" % name)

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__,
                           ', '.join('%s=%r' % kv for kv in self._kwargs.items()))


# Name suffixes and the method filling them, longest first where one ends another.
_BY_SUFFIX = [('weight', '_init_weight'), ('bias', '_init_bias'), ('gamma', '_init_gamma'),
              ('beta', '_init_beta'), ('moving_mean', '_init_zero'),
              ('running_mean', '_init_zero'), ('moving_var', '_init_one'),
              ('running_var', '_init_one'), ('moving_inv_var', '_init_zero'),
              ('moving_avg', '_init_zero'), ('min', '_init_zero'), ('max', '_init_one')]


def _bilinear(shape):
    """The weight of a bilinear upsampling kernel (for Deconvolution)."""
    weight = np.zeros(int(np.prod(shape)), dtype='float32')
    f = np.ceil(shape[3] / 2.)
    c = (2 * f - 1 - f % 2) / (2. * f)
    for i in range(weight.size):
        x = i % shape[3]
        y = (i // shape[3]) % shape[2]
        weight[i] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
    return weight.reshape(shape)


# -- composites -----------------------------------------------------------------------------

class Load:
    """Initializes from a dict of arrays or a ``.params`` file (``arg:``/``aux:`` prefixes are
    dropped), falling back to ``default_init`` for names it lacks."""

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            param = ndarray.load(param)
        if not isinstance(param, dict):
            raise MXNetError("Load: expected a dict of arrays or a file of named arrays")
        self.param = {}
        for name, arr in param.items():
            if name.startswith('arg:') or name.startswith('aux:'):
                name = name[4:]
            self.param[name] = arr
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            if arr.shape != self.param[name].shape:
                raise MXNetError("Parameter %s cannot be initialized from loading: shape "
                                 "mismatch, target %s vs loaded %s"
                                 % (name, arr.shape, self.param[name].shape))
            arr[:] = self.param[name]
            if self.verbose:
                logging.info('Initialized %s by loading', name)
        else:
            if self.default_init is None:
                raise MXNetError("Cannot initialize %s: not found in the loaded parameters and "
                                 "no default Initializer is provided" % name)
            self.default_init(name, arr)
            if self.verbose:
                logging.info('Initialized %s by default', name)


class Mixed:
    """Chooses the initializer by the first regular expression matching the name.

    >>> import neomx as mx
    >>> init = mx.init.Mixed(['bias', '.*'], [mx.init.Zero(), mx.init.One()])
    """

    def __init__(self, patterns, initializers):
        if len(patterns) != len(initializers):
            raise MXNetError("Mixed: %d patterns but %d initializers"
                             % (len(patterns), len(initializers)))
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise MXNetError("Parameter name %s did not match any pattern. Consider adding a "
                         "'.*' pattern at the end with a default Initializer." % name)


# -- the initializers -----------------------------------------------------------------------

@register
@alias('zeros')
class Zero(Initializer):
    """Fills with 0."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 0


@register
@alias('ones')
class One(Initializer):
    """Fills with 1."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 1


@register
class Constant(Initializer):
    """Fills with ``value`` (a scalar or an array broadcast to the parameter's shape)."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        value = self.value
        if isinstance(value, NDArray):
            value = value.asnumpy()
        if isinstance(value, (list, tuple, np.ndarray)):
            arr[:] = np.broadcast_to(np.asarray(value, dtype=np.float64), arr.shape)
        else:
            arr[:] = value

    def dumps(self):
        # As MXNet, an array value is kept from here on as a list in _kwargs (what dumps wrote),
        # so that the kwargs themselves are JSON; self.value still fills the arrays.
        val = self._kwargs['value']
        if not np.isscalar(val):
            self._kwargs['value'] = val.tolist() if isinstance(val, np.ndarray) else (
                val.asnumpy().tolist() if isinstance(val, NDArray) else val)
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """Draws from U(-scale, scale).

    >>> import neomx as mx
    >>> w = mx.nd.zeros((100,))
    >>> mx.init.Uniform(0.1)(mx.init.InitDesc('w_weight'), w)
    >>> bool(abs(w).max() <= 0.1)
    True
    """

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _random.uniform(-self.scale, self.scale, arr.shape, out=arr)


@register
class Normal(Initializer):
    """Draws from N(0, sigma^2)."""

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _random.normal(0, self.sigma, arr.shape, out=arr)


@register
class Orthogonal(Initializer):
    """An orthogonal matrix (from the SVD of a random one) times ``scale``; the parameter is
    viewed as (shape[0], prod(shape[1:]))."""

    def __init__(self, scale=1.414, rand_type='uniform'):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        nout = arr.shape[0]
        nin = int(np.prod(arr.shape[1:]))
        ctx = arr.context
        if self.rand_type == 'uniform':
            tmp = _random.uniform(-1.0, 1.0, shape=(nout, nin), ctx=ctx).asnumpy()
        elif self.rand_type == 'normal':
            tmp = _random.normal(0.0, 1.0, shape=(nout, nin), ctx=ctx).asnumpy()
        else:
            raise MXNetError("Orthogonal: rand_type must be 'uniform' or 'normal', got %r"
                             % (self.rand_type,))
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = self.scale * res.reshape(arr.shape)


@register
class Xavier(Initializer):
    """Xavier/Glorot: uniform in [-s, s] or gaussian with std s, where
    ``s = sqrt(magnitude / factor)`` and factor is fan_in, fan_out or their mean
    (fans count the receptive field of convolution weights)."""

    def __init__(self, rnd_type='uniform', factor_type='avg', magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise MXNetError('Xavier initializer cannot be applied to vector {0}. It requires at'
                             ' least 2D.'.format(name))
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        if self.factor_type == 'avg':
            factor = (fan_in + fan_out) / 2.0
        elif self.factor_type == 'in':
            factor = fan_in
        elif self.factor_type == 'out':
            factor = fan_out
        else:
            raise MXNetError("Xavier: factor_type must be 'avg', 'in' or 'out', got %r"
                             % (self.factor_type,))
        scale = np.sqrt(self.magnitude / factor)
        if self.rnd_type == 'uniform':
            _random.uniform(-scale, scale, arr.shape, out=arr)
        elif self.rnd_type == 'gaussian':
            _random.normal(0, scale, arr.shape, out=arr)
        else:
            raise MXNetError("Xavier: rnd_type must be 'uniform' or 'gaussian', got %r"
                             % (self.rnd_type,))


@register
class MSRAPrelu(Xavier):
    """He/MSRA initialisation for PReLU networks: gaussian Xavier with
    ``magnitude = 2 / (1 + slope^2)``."""

    def __init__(self, factor_type='avg', slope=0.25):
        magnitude = 2. / (1 + slope ** 2)
        super().__init__('gaussian', factor_type, magnitude)
        self._kwargs = {'factor_type': factor_type, 'slope': slope}


@register
class Bilinear(Initializer):
    """Bilinear upsampling weights for a Deconvolution."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = _bilinear(arr.shape)


@register
class LSTMBias(Initializer):
    """Zeros, except ``forget_bias`` on the forget gate's quarter of an LSTM bias."""

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        arr[:] = 0.0
        num_hidden = int(arr.shape[0] / 4)
        arr[num_hidden:2 * num_hidden] = self.forget_bias


@register
class FusedRNN(Initializer):
    """Initialises the packed parameter vector of a fused ``RNN`` operator (``mx.rnn``'s
    FusedRNNCell) piece by piece: each gate's weights and biases with ``init`` (the global
    initializer when None), and an LSTM's forget-gate biases to ``forget_bias``.

    Parameters
    ----------
    init : Initializer, JSON string or None
    num_hidden, num_layers, mode, bidirectional : as the FusedRNNCell's
    forget_bias : float, default 1.0
    """

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        if isinstance(init, str):
            init = create(init)
        super().__init__(init=init.dumps() if init is not None else None,
                         num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _init_weight(self, desc, arr):
        flat = arr.reshape((-1,))
        pieces, pos = [], 0
        for name, shape in fused_rnn_layout('', self._mode, self._num_hidden, self._num_layers,
                                            self._bidirectional, arr.size):
            n = int(np.prod(shape))
            piece = flat[pos:pos + n].reshape(shape).copy()
            pos += n
            if self._mode == 'lstm' and name.endswith('_f_bias'):
                piece[:] = self._forget_bias
            elif self._init is None:
                desc.global_init(InitDesc(name, global_init=desc.global_init), piece)
            else:
                self._init(InitDesc(name, global_init=desc.global_init), piece)
            pieces.append(piece.reshape((-1,)))
        arr[:] = ndarray.concat(*pieces, dim=0)


FUSED_RNN_GATES = {'rnn_relu': [''], 'rnn_tanh': [''], 'lstm': ['_i', '_f', '_c', '_o'],
                   'gru': ['_r', '_z', '_o']}


def fused_rnn_layout(prefix, mode, num_hidden, num_layers, bidirectional, size):
    """``[(name, shape)]`` of the per-gate pieces of a fused RNN's packed parameter vector of
    ``size`` elements, in order (MXNet's layout: every weight, then every bias), named as
    ``mx.rnn``'s FusedRNNCell of ``prefix`` names them."""
    gates = FUSED_RNN_GATES[mode]
    directions = ['l', 'r'] if bidirectional else ['l']
    b, m, h, L = len(directions), len(gates), num_hidden, num_layers
    first = size - (L - 1) * b * m * h * (b * h + h + 2)     # = b * m * h * (input + h + 2)
    if first <= 0 or first % (b * m * h):
        raise MXNetError("FusedRNNCell %s: a packed vector of %d elements does not fit "
                         "mode=%s, num_hidden=%d, num_layers=%d, bidirectional=%s"
                         % (prefix, size, mode, h, L, bidirectional))
    num_input = first // (b * m * h) - h - 2
    weights, biases = [], []
    for layer in range(L):
        ni = num_input if layer == 0 else b * h
        for d in directions:
            pre = '%s%s%d_' % (prefix, d, layer)
            weights += [('%si2h%s_weight' % (pre, g), (h, ni)) for g in gates]
            weights += [('%sh2h%s_weight' % (pre, g), (h, h)) for g in gates]
            biases += [('%s%s%s_bias' % (pre, grp, g), (h,))
                       for grp in ('i2h', 'h2h') for g in gates]
    return weights + biases
