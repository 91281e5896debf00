"""Parameters of Gluon blocks: one copy per device, gradients through autograd, deferred
initialisation for shapes known only at the first forward pass.

A Parameter holds one NDArray per context it was initialised on; each copy is marked for
autograd (``attach_grad``) with a gradient buffer of its own, so a backward pass on a device
fills ``grad(ctx)`` there. A shape with 0 in it is unknown: with ``allow_deferred_init`` the
parameter waits for the first forward pass, which fills the shape in (from the operator's
``fill`` rule) and finishes the initialisation.

>>> import neomx as mx
>>> w = mx.gluon.Parameter('fc_weight', shape=(2, 3), init=mx.init.One())
>>> w.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
>>> [d.context for d in w.list_data()]
[cpu(0), cpu(1)]
>>> w.data(mx.cpu(1)).asnumpy().tolist()
[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
"""
import warnings
from collections import OrderedDict

import numpy as np

from .. import autograd, initializer, ndarray
from ..base import MXNetError, dtype_name
from ..context import Context, cpu, current_context
from ..ndarray import NDArray
from ..ndarray.ndarray import array_class, in_array_class, new_array
from ..util import is_np_shape

__all__ = ['DeferredInitializationError', 'Parameter', 'Constant', 'ParameterDict',
           'tensor_types']

tensor_types = (NDArray,)


class DeferredInitializationError(MXNetError):
    """Raised by ``Parameter.data()`` before a deferred initialisation has happened."""



def _known_or_0(shape, name):
    """``shape`` as a tuple with 0 for each unknown dimension (given as 0, None or -1); a
    dimension below -1 raises a ParameterError naming Parameter ``name`` in the words of
    MXNet's ``shape_is_known`` assertion (``nn.Dense(-3)``)."""
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    for d in shape:
        if d is not None and d < -1:
            raise ParameterError("Parameter '%s' of shape %s: shape dimension size cannot be "
                                 "less than %d, while received %d"
                                 % (name, tuple(shape), -1 if is_np_shape() else 0, d))
    return tuple(int(d) if d is not None and d > 0 else 0 for d in shape)

class ParameterError(MXNetError, AssertionError):
    """A parameter that cannot be loaded, set or retrieved as asked (an AssertionError too,
    as MXNet's checks are assertions)."""


# Bumped whenever a parameter's arrays are replaced (initialisation, cast, grad_req, context
# change) or a block's parameter is replaced by another (ParameterSlots): blocks cache their
# per-device parameter arrays and check this one number.
_EPOCH = [0]


class ParameterSlots(OrderedDict):
    """The parameters of a block or a ParameterDict by name: replacing or removing one (as
    libraries do to wrap a parameter, GluonNLP's weight drop) invalidates the blocks' cached
    parameter arrays."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        _EPOCH[0] += 1

    def __delitem__(self, key):
        super().__delitem__(key)
        _EPOCH[0] += 1


def data_per_call(param):
    """Whether ``param``'s class computes its array at each ``data()`` call (a subclass
    overriding ``data``, as GluonNLP's WeightDropParameter applies dropout there): blocks then
    ask it at every call, as MXNet's do, instead of caching the array."""
    return type(param).data is not Parameter.data


def _utils():
    # gluon.utils imports gluon.data, whose transforms import the blocks: import it late.
    from . import utils
    return utils


def _as_ctx_list(ctx):
    if ctx is None:
        return [current_context()]
    if isinstance(ctx, Context):
        return [ctx]
    ctx = list(ctx)
    for c in ctx:
        if not isinstance(c, Context):
            raise MXNetError("ctx must be a Context or a list of Contexts, got %r" % (c,))
    return ctx


class Parameter:
    """A weight of a Block: a copy per context, a gradient buffer per copy.

    Parameters
    ----------
    name : str
    grad_req : {'write', 'add', 'null'}
        How backward writes the gradient ('add' accumulates until ``zero_grad``).
    shape : int or tuple of int, 0 for a dimension not known yet
    dtype : dtype, default float32
    lr_mult, wd_mult : float
        Multipliers of the learning rate and the weight decay for this parameter.
    init : Initializer or str
        Its own initializer (else the one given to ``initialize``).
    allow_deferred_init : bool
        Whether ``initialize`` may wait for the shape to be known.
    differentiable : bool
        False forces grad_req to 'null'.
    """

    def __init__(self, name, grad_req='write', shape=None, dtype=np.float32, lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=False, differentiable=True,
                 stype='default', grad_stype='default'):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = _known_or_0(shape, name)
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        for what, st in (('stype', stype), ('grad_stype', grad_stype)):
            if st not in ('default', 'row_sparse', 'csr'):
                raise ParameterError("%s for Parameter '%s' must be one of 'default', "
                                     "'row_sparse', or 'csr', but got '%s'" % (what, name, st))
        self._stype = stype
        self._grad_stype = grad_stype

    def __repr__(self):
        return 'Parameter {name} (shape={shape}, dtype={dtype})'.format(
            name=self.name, shape=self.shape, dtype=self.dtype)

    # -- attributes --
    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in ('write', 'add', 'null'):
            raise ParameterError("grad_req must be one of 'write', 'add', or 'null', but got "
                                 "'%s'" % (req,))
        if not self._differentiable:
            req = 'null'
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == 'null' and self._grad is not None:
            self._grad = None
            # Unmark the copies: same arrays, no gradient buffer.
            autograd.mark_variables(self._data, [ndarray.zeros_like(d) for d in self._data],
                                    'null')
            for d in self._data:
                d._var.grad = None
            _EPOCH[0] += 1
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        """The dtype; setting it casts the parameter."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        """The shape, 0 for a dimension not known yet (-1 under NumPy shape semantics,
        ``npx.set_np()``, as in MXNet)."""
        if self._shape is not None and is_np_shape():
            return tuple(d if d > 0 else -1 for d in self._shape)
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        if new_shape is None:
            return
        new_shape = _known_or_0(new_shape, self.name)
        if self._shape is None:
            self._shape = new_shape
            return
        if len(self._shape) != len(new_shape) or not all(
                j in (-1, 0, i) for i, j in zip(new_shape, self._shape)):
            raise ParameterError("Parameter '%s': expected shape %s is incompatible with given "
                                 "shape %s" % (self.name, new_shape, self._shape))
        self._shape = new_shape

    @property
    def stype(self):
        return self._stype

    def _set_trainer(self, trainer):
        """Sets the Trainer updating this parameter (a sparse one has at most one: its
        values live in that Trainer's store)."""
        if self._stype != 'default' and self._trainer and trainer and \
                self._trainer is not trainer:
            raise RuntimeError("Failed to set the trainer for Parameter '%s' because it was "
                               "already set. More than one trainers for a %s Parameter is not "
                               "supported." % (self.name, self._stype))
        self._trainer = trainer

    # -- access --
    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            idx = self._ctx_map.get(ctx)
            if idx is not None:
                return arr_list[idx]
            raise RuntimeError("Parameter '%s' was not initialized on context %s. It was only "
                               "initialized on %s." % (self.name, ctx, self._ctx_list))
        if self._deferred_init:
            raise DeferredInitializationError(
                "Parameter '%s' has not been initialized yet because initialization was "
                "deferred. Actual initialization happens during the first forward pass. "
                "Please pass one batch of data through the network before accessing "
                "Parameters. You can also avoid deferred initialization by specifying in_units, "
                "num_features, etc., for network layers." % (self.name))
        raise RuntimeError("Parameter '%s' has not been initialized. Note that you should "
                           "initialize parameters and create Trainer with "
                           "Block.collect_params() instead of Block.params because the later "
                           "does not include Parameters of nested child Blocks" % (self.name))

    def data(self, ctx=None):
        """The copy on ``ctx`` (the only copy, or the current context's, by default)."""
        if self._stype != 'default':
            self._dense_only('data', ctx)
        data = self._data
        if data is not None:
            if ctx is None:
                if len(data) == 1:
                    return data[0]
                ctx = current_context()
            idx = self._ctx_map.get(ctx)
            if idx is not None:
                return data[idx]
        return self._check_and_get(data, ctx)

    def list_data(self):
        """The copies on every context, in the order of ``list_ctx()``."""
        if self._stype != 'default':
            self._dense_only('list_data', None)
        return self._check_and_get(self._data, list)

    def _dense_only(self, call, ctx):
        raise RuntimeError("Cannot return copies of Parameter '%s' on %s via %s() because its "
                           "storage type is %s. Please use row_sparse_data() instead."
                           % (self.name, 'all contexts' if ctx is None else ctx, call,
                              self._stype))

    def grad(self, ctx=None):
        """The gradient buffer on ``ctx``."""
        if self._data is not None and self._grad is None:
            raise RuntimeError("Cannot get gradient array for Parameter '%s' because "
                               "grad_req='null'" % (self.name))
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        """The gradient buffers on every context."""
        if self._data is not None and self._grad is None:
            raise RuntimeError("Cannot get gradient array for Parameter '%s' because "
                               "grad_req='null'" % (self.name))
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        """The contexts this parameter is (or will be, when deferred) initialised on."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError("Parameter '%s' has not been initialized" % self.name)
        return self._ctx_list

    def row_sparse_data(self, row_id):
        """The rows ``row_id`` of a row_sparse parameter, pulled from its Trainer's store into
        the copy on ``row_id``'s context (the other rows are 0)."""
        return self._row_sparse(row_id, row_id.context if isinstance(row_id, NDArray) else None,
                                'row_sparse_data')

    def list_row_sparse_data(self, row_id):
        """``row_sparse_data`` into the copies on every context."""
        return self._row_sparse(row_id, list, 'list_row_sparse_data')

    def _row_sparse(self, row_id, ctx, call):
        if self._stype != 'row_sparse':
            raise RuntimeError("Cannot return a copy of Parameter %s via %s() because its "
                               "storage type is %s. Please use data() instead."
                               % (self.name, call, self._stype))
        if not isinstance(row_id, NDArray):
            raise TypeError("row_id must have NDArray type, but %s is given" % type(row_id))
        if not self._trainer:
            raise RuntimeError("Cannot get row_sparse data for Parameter '%s' when no Trainer "
                               "is created with it." % self.name)
        results = self._check_and_get(self._data, ctx)
        self._trainer._row_sparse_pull(self, results, row_id)
        return results

    # -- initialisation --
    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(),
                   force_reinit=False):
        """Creates the copies on ``ctx`` (a Context or a list) with ``init``, else the
        parameter's own initializer, else ``default_init``. With an unknown shape and
        ``allow_deferred_init`` it waits for the first forward pass.

        >>> import neomx as mx
        >>> p = mx.gluon.Parameter('w', shape=(2,), init='ones')
        >>> p.initialize()
        >>> p.data().asnumpy().tolist()
        [1.0, 1.0]
        """
        if self._data is not None and not force_reinit:
            warnings.warn("Parameter '%s' is already initialized, ignoring. Set "
                          "force_reinit=True to re-initialize." % self.name, stacklevel=2)
            return
        self._data = self._grad = None
        ctx = _as_ctx_list(ctx)
        if init is None:
            init = default_init if self.init is None else self.init
        if not _utils().shape_is_known(self._shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError("Cannot initialize Parameter '%s' because it has invalid shape: "
                             "%s." % (self.name, str(self.shape)))
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        """Finishes a deferred initialisation once the shape is known."""
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not _utils().shape_is_known(self._shape):
            raise ValueError("Cannot initialize Parameter '%s' because it has invalid shape: "
                             "%s. Please specify in_units, in_channels, etc for `Block`s."
                             % (self.name, str(self.shape)))
        with autograd.pause():
            if data is None:
                # Drawn on cpu(0), then copied to each context: every copy starts equal.
                data = in_array_class(ndarray.zeros(self._shape, dtype=dtype_name(self.dtype),
                                                    ctx=cpu()))
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {'__init__': init}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        """Sets the copies (and gradient buffers) from ``data``."""
        self._ctx_list = list(ctx_list)
        self._ctx_map = {c: i for i, c in enumerate(self._ctx_list)}
        if array_class() is not NDArray:    # under NumPy semantics parameters are mx.np.ndarray
            if self._stype != 'default':
                raise ValueError("mxnet.numpy.zeros does not support stype = %s" % self._stype)
            data = data.as_np_ndarray()
        elif data.stype != self._stype:
            data = data.tostype(self._stype)
        self._data = [data.copyto(c) for c in self._ctx_list]
        _EPOCH[0] += 1
        self._init_grad()

    def _init_grad(self):
        if self.grad_req == 'null':
            self._grad = None
            return
        if array_class() is not NDArray and self._grad_stype != 'default':
            raise ValueError("mxnet.numpy.zeros does not support stype = %s" % self._grad_stype)
        self._grad = in_array_class([ndarray.zeros(d.shape, dtype=d.dtype, ctx=d.context,
                                                   stype=self._grad_stype) for d in self._data])
        autograd.mark_variables(self._data, self._grad, self.grad_req)

    def _reduce(self):
        """The average of the copies, on cpu(0) (what gets saved); all rows of a row_sparse
        parameter, from its Trainer's store."""
        ctx = cpu()
        if self._stype != 'default':
            data = ndarray.zeros(self.shape, stype='row_sparse', ctx=ctx)
            self._trainer._row_sparse_pull(self, data, ndarray.arange(0, self.shape[0], ctx=ctx,
                                                                      dtype='int64'),
                                           full_idx=True)
            return data
        block = self.list_data()
        if len(block) > 1:
            return ndarray.add_n(*(w.copyto(ctx) for w in block)) / len(block)
        return block[0].copyto(ctx)

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source='current', where=None):
        """(Re)initialises from the loaded array ``data`` (read from ``where``, for errors)."""
        if cast_dtype and dtype_source not in ('current', 'saved'):
            raise ParameterError("dtype_source must be 'current' or 'saved', got %r"
                                 % (dtype_source,))
        if data is None:    # a record of ndim 0 (or -1 with np shapes): MXNet's "none" array
            raise ParameterError(
                "Failed loading Parameter '%s' from %s: it holds an empty array (a record of "
                "ndim 0 or -1, with no shape or values); expected an array of shape %s"
                % (self.name, where or 'saved params', str(self.shape)))
        if self.shape:
            if len(self.shape) != len(data.shape) or not all(
                    s in (0, -1, d) for s, d in zip(self.shape, data.shape)):
                raise ParameterError("Failed loading Parameter '%s' from saved params: shape "
                                     "incompatible expected %s vs saved %s"
                                     % (self.name, str(self.shape), str(data.shape)))
            self.shape = tuple(d if s in (0, -1) else s for s, d in zip(self.shape, data.shape))
        if self.dtype is not None:
            mine, saved = dtype_name(self.dtype), data._dtype
            if mine != saved:
                if not cast_dtype:
                    raise ParameterError(
                        "Failed loading Parameter '%s' from saved params: dtype incompatible "
                        "expected %s vs saved %s. Set cast_dtype=True to cast the dtype of "
                        "saved params." % (self.name, mine, saved))
                if dtype_source == 'current':
                    data = data.astype(mine)
                else:
                    self.cast(data.dtype)       # the arrays already made take it too
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                if ctx is not None and set(ctx) != set(self._deferred_init[1]):
                    raise ParameterError("Failed to load Parameter '%s' on %s because it was "
                                         "previous initialized on %s."
                                         % (self.name, str(ctx), str(self.list_ctx())))
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            with autograd.pause():
                self._init_impl(data, ctx)
        else:
            if ctx is not None and set(ctx) != set(self.list_ctx()):
                raise ParameterError("Failed to load Parameter '%s' on %s because it was "
                                     "previous initialized on %s."
                                     % (self.name, str(ctx), str(self.list_ctx())))
            self.set_data(data)
        self._deferred_init = ()

    def reset_ctx(self, ctx):
        """Moves the parameter to ``ctx`` (a Context or a list), keeping its value (the
        average of the current copies)."""
        ctx = _as_ctx_list(ctx)
        if self._data:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError("Cannot reset context for Parameter '%s' because it has not been "
                             "initialized." % self.name)

    def set_data(self, data):
        """Sets the value on every context (before a deferred initialisation: the value it
        will start from)."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise ParameterError("Parameter '%s' has not been initialized" % self.name)
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        if trainer is not None and getattr(trainer, '_kv_initialized', False) and \
                getattr(trainer, '_update_on_kvstore', False):
            if self not in getattr(trainer, '_params_to_init', ()):
                trainer._reset_kvstore()
        for arr in self._data:
            if isinstance(data, NDArray):
                data.copyto(arr)
            else:
                arr[:] = data

    def zero_grad(self):
        """Sets the gradient buffers to 0 (nothing for grad_req='null')."""
        if self._grad is None:
            return
        ndarray.reset_arrays(*self._grad, num_arrays=len(self._grad))

    def var(self):
        """A Symbol variable standing for this parameter (for hybridisation)."""
        if self._var is None:
            from .. import symbol
            self._var = symbol.var(self.name, shape=self._shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult, init=self.init,
                                   stype=self._stype)
        return self._var

    def cast(self, dtype):
        """Casts the copies and gradient buffers to ``dtype``."""
        self._dtype = dtype
        if self._data is None:
            return
        name = dtype_name(dtype)
        with autograd.pause():
            self._data = [d.astype(name) for d in self._data]
            _EPOCH[0] += 1
            if self._grad is None:
                return
            self._grad = [g.astype(name) for g in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)


class Constant(Parameter):
    """A parameter that autograd and the Trainer leave alone (grad_req is always 'null');
    ``set_data`` still changes it.

    >>> import neomx as mx
    >>> c = mx.gluon.Constant('c', [[1, 2], [3, 4]])
    >>> c.initialize()
    >>> c.data().asnumpy().tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """

    def __init__(self, name, value):
        if not isinstance(value, NDArray):
            value = new_array(value)
        self.value = value
        super().__init__(name, grad_req='null', shape=value.shape, dtype=value.dtype,
                         init=initializer.Constant(value.asnumpy()))

    def __repr__(self):
        return 'Constant {name} (shape={shape}, dtype={dtype})'.format(
            name=self.name, shape=self.shape, dtype=self.dtype)

    @property
    def grad_req(self):
        return 'null'

    @grad_req.setter
    def grad_req(self, req):
        if req != 'null':
            warnings.warn('Constant parameter "{}" does not support grad_req other than "null", '
                          'and new value "{}" is ignored.'.format(self.name, req))


class ParameterDict:
    """An ordered dictionary of Parameters, whose ``get`` creates (or, with ``shared``,
    retrieves) a parameter named ``prefix + name``.

    >>> import neomx as mx
    >>> params = mx.gluon.ParameterDict('net_')
    >>> params.get('weight', shape=(2, 2))
    Parameter net_weight (shape=(2, 2), dtype=<class 'numpy.float32'>)
    """

    def __init__(self, prefix='', shared=None):
        self._prefix = prefix
        self._params = ParameterSlots()
        self._shared = shared

    def __repr__(self):
        name = self._prefix + ' ' if self._prefix else ''
        return '{name}(\n{content}\n)'.format(
            name=name, content='\n'.join(_utils()._indent('  {0}'.format(v), 2)
                                          for v in self.values()))

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        """Prepended to the names of the parameters ``get`` creates."""
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._shared._params[name]
        return None

    def get(self, name, **kwargs):
        """The parameter ``prefix + name``: existing (here or in ``shared``) or created with
        ``kwargs``. For an existing one, ``kwargs`` must agree with its attributes (a shape
        may fill in unknown dimensions)."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            existing = getattr(param, k, None)
            if existing is None:
                setattr(param, k, v)
                continue
            if k == 'shape' and v is not None:
                v = (v,) if isinstance(v, int) else tuple(v)
                if len(v) == len(existing):
                    merged, ok = [], True
                    for a, b in zip(v, existing):
                        if a != b and a > 0 and b > 0:
                            ok = False
                            break
                        merged.append(b if a in (0, -1) else a)
                    if ok:
                        param._shape = _known_or_0(merged, param.name)
                        continue
            elif k == 'dtype' and v is not None and dtype_name(v) == dtype_name(existing):
                continue
            if v is not None and v != existing:
                raise ParameterError("Cannot retrieve Parameter '%s' because desired attribute "
                                     "does not match with stored for attribute '%s': desired "
                                     "'%s' vs stored '%s'." % (name, k, str(v), str(existing)))
        return param

    def get_constant(self, name, value=None):
        """The Constant ``prefix + name``, created with ``value`` if it does not exist."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError("No constant named '{}'. Please specify value if you want to "
                               "create a new constant.".format(name))
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise ParameterError("Parameter '{}' already exists but it is not a "
                                     "constant.".format(name))
            if isinstance(value, NDArray):
                value = value.asnumpy()
            value = np.asarray(value)
            if param.shape != value.shape or not (param.value.asnumpy() == value).all():
                raise ParameterError("Constant '{}' already exists but it's value doesn't "
                                     "match new value".format(name))
        return param

    def update(self, other):
        """Adds the parameters of ``other`` (an error if a name maps to another parameter)."""
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise ParameterError("Cannot update self with other because they have "
                                     "different Parameters with the same name '%s'" % k)
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialises every parameter (``init`` is the default for those without their
        own initializer); ``ctx`` is a Context or a list of them."""
        if verbose:
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        """Sets every gradient buffer to 0 (one operation per device)."""
        by_ctx = {}
        for p in self.values():
            if p.grad_req != 'null' and p._grad is not None:
                for g in p._grad:
                    by_ctx.setdefault(g.context, []).append(g)
        for grads in by_ctx.values():
            ndarray.reset_arrays(*grads, num_arrays=len(grads))

    def reset_ctx(self, ctx):
        """Moves every parameter to ``ctx``."""
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self):
        """The contexts the parameters are initialised on."""
        s = set()
        for p in self.values():
            s.update(p.list_ctx())
        return list(s)

    def setattr(self, name, value):
        """Sets attribute ``name`` of every parameter (``setattr('grad_req', 'null')``)."""
        for p in self.values():
            setattr(p, name, value)

    def save(self, filename, strip_prefix=''):
        """Saves the parameters (the average of their copies) under their full names, minus
        ``strip_prefix``."""
        arg_dict = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise ValueError(
                    "Prefix '%s' is to be striped before saving, but Parameter's name '%s' does "
                    "not start with '%s'. this may be due to your Block shares parameters from "
                    "other Blocks or you forgot to use 'with name_scope()' when creating child "
                    "blocks." % (strip_prefix, param.name, strip_prefix))
            arg_dict[param.name[len(strip_prefix):]] = param._reduce()
        ndarray.save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix='', cast_dtype=False, dtype_source='current'):
        """Loads parameters saved by ``save`` (names are prefixed with ``restore_prefix``)."""
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise ParameterError("restore_prefix is '%s' but Parameters name '%s' does "
                                         "not start with '%s'"
                                         % (restore_prefix, name, restore_prefix))
        self.load_dict(ndarray.load(filename), ctx, allow_missing, ignore_extra, restore_prefix,
                       filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix='', filename=None, cast_dtype=False, dtype_source='current'):
        """Loads from a dict of arrays (``arg:``/``aux:`` prefixes are dropped)."""
        lprefix = len(restore_prefix)
        if isinstance(param_dict, dict):
            loaded = [(k[4:] if k.startswith('arg:') or k.startswith('aux:') else k, v)
                      for k, v in param_dict.items()]
        else:
            loaded = param_dict
        arg_dict = {restore_prefix + k: v for k, v in loaded}
        where = "file: %s" % filename if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise ParameterError(
                        "Parameter '%s' is missing in %s, which contains parameters: %s. Please "
                        "make sure source and target networks have the same prefix."
                        % (name[lprefix:], where, _utils()._brief_print_list(arg_dict.keys())))
        for name in arg_dict:
            if name not in self._params:
                if not ignore_extra:
                    raise ParameterError(
                        "Parameter '%s' loaded from %s is not present in ParameterDict, choices "
                        "are: %s. Set ignore_extra to True to ignore. Please make sure source "
                        "and target networks have the same prefix."
                        % (name[lprefix:], where, _utils()._brief_print_list(self._params.keys())))
                continue
            self[name]._load_init(arg_dict[name], ctx, cast_dtype=cast_dtype,
                                  dtype_source=dtype_source, where=where)



# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from .. import context, symbol  # noqa: E402,F401
from ..base import mx_real_t  # noqa: E402,F401
from ..util import is_np_array, is_np_shape  # noqa: E402,F401
from .utils import _brief_print_list, _indent, shape_is_known  # noqa: E402,F401
