"""Gluon's containers of computation: ``Block`` and ``HybridBlock``, as in MXNet 1.9.

A Block owns Parameters and child Blocks; assigning either to an attribute registers it.
Names follow MXNet: a block's prefix is its class name and a counter (``dense0_``), children
created inside ``with self.name_scope():`` get the parent's prefix in front
(``hybridsequential0_dense0_``), and parameters are named ``prefix + name``
(``dense0_weight``). ``save_parameters`` uses structural names instead (``0.weight``,
``features.3.bias``), so files do not depend on how many blocks were created before.

A HybridBlock defines ``hybrid_forward(F, x, *args, **params)``: called on NDArrays it runs
with ``F = neomx.nd`` and the parameters' arrays on ``x``'s device; called on Symbols (when a
parent is traced) with ``F = neomx.sym``; after ``hybridize()`` its calls go through the
compiled graph (``neomx.gluon._hybrid``).

>>> import neomx as mx
>>> from neomx.gluon import nn
>>> net = nn.HybridSequential()
>>> with net.name_scope():
...     net.add(nn.Dense(4, in_units=3, activation='relu'), nn.Dense(2, in_units=4))
>>> net.initialize()
>>> net(mx.nd.ones((5, 3))).shape
(5, 2)
>>> sorted(net.collect_params().keys())[:2]
['hybridsequential0_dense0_bias', 'hybridsequential0_dense0_weight']
"""
import json
import os
import re
import threading
import warnings
from collections import OrderedDict, defaultdict

from .. import initializer, ndarray
from ..base import MXNetError, mode
from ..context import current_context
from ..ndarray import NDArray
from ..symbol import name as _name
from ..util import is_np_array
from . import _hybrid
from .parameter import (DeferredInitializationError, Parameter, ParameterDict, ParameterError,
                        ParameterSlots, _EPOCH, data_per_call)

__all__ = ['Block', 'HybridBlock']


class _ExtraParameterError(MXNetError, ValueError):
    """A parameter file holds a name the block does not have (a ValueError, as in MXNet)."""


def _utils():
    # gluon.utils imports gluon.data, whose transforms import this module: import it late.
    from . import utils
    return utils


class _BlockScope:
    """The naming scope of a block: children created inside ``with block.name_scope():``
    get prefixes under the block's, and symbols traced inside are named after it."""
    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """(prefix, ParameterDict) for a new block with class hint ``hint``."""
        current = getattr(_BlockScope._current, 'value', None)
        if current is None:
            if prefix is None:
                # Top-level blocks share the symbol name counters, as in MXNet.
                prefix = _name.current().get(None, hint) + '_'
            if params is None:
                params = ParameterDict(prefix)
            else:
                params = ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = '%s%d_' % (hint, count)
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, 'value', None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, ptype, value, trace):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(ptype, value, trace)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


class Block:
    """The base class of layers and models: subclass it and define ``forward``.

    Child blocks and parameters assigned as attributes are registered; use
    ``with self.name_scope():`` when creating children so their names nest under this
    block's prefix.

    >>> import neomx as mx
    >>> from neomx.gluon import Block, nn
    >>> class Model(Block):
    ...     def __init__(self, **kwargs):
    ...         super(Model, self).__init__(**kwargs)
    ...         with self.name_scope():
    ...             self.dense0 = nn.Dense(20)
    ...             self.dense1 = nn.Dense(20)
    ...     def forward(self, x):
    ...         return mx.nd.relu(self.dense1(mx.nd.relu(self.dense0(x))))
    >>> model = Model()
    >>> model.initialize(ctx=mx.cpu(0))
    >>> model(mx.nd.zeros((10, 10))).shape
    (10, 20)

    Parameters
    ----------
    prefix : str
        The name space of the block (default: class name and a counter).
    params : ParameterDict or None
        Parameters to share (``nn.Dense(20, params=other.collect_params())``).
    """

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ''
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith('_') else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = ParameterSlots()
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        indent = _utils()._indent
        modstr = '\n'.join('  ({key}): {block}'.format(key=key, block=indent(repr(block), 2))
                           for key, block in self.__dict__.items() if isinstance(block, Block))
        return '{name}(\n{modstr}\n)'.format(name=self.__class__.__name__, modstr=modstr)

    def __setattr__(self, name, value):
        """Registers child blocks and parameters."""
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError('Changing attribute type for {name} from {type1} to {type2} is '
                                'not allowed.'.format(name=name, type1=type(existing),
                                                      type2=type(value)))
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise ParameterError("Overriding Parameter attribute %s is not allowed. If you "
                                     "want to share parameters between blocks, please set "
                                     "'params' at Block construction instead." % name)
            self._reg_params[name] = value      # bumps _EPOCH
        super().__setattr__(name, value)

    def _check_container_with_block(self):
        children = set(self._children.values())

        def unregistered(data):
            if isinstance(data, (list, tuple)):
                return any(unregistered(e) for e in data)
            if isinstance(data, dict):
                return any(unregistered(v) for v in data.values())
            return isinstance(data, Block) and data not in children
        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith('__') or
                                                           k == '_children'):
                if unregistered(v):
                    warnings.warn('"{name}" is an unregistered container with Blocks. Note that '
                                  'Blocks inside the list, tuple or dict will not be registered '
                                  'automatically. Make sure to register them using '
                                  'register_child() or switching to nn.Sequential/'
                                  'nn.HybridSequential instead. '
                                  .format(name=self.__class__.__name__ + '.' + k), stacklevel=3)

    def _alias(self):
        return self.__class__.__name__.lower()

    @property
    def prefix(self):
        """The prefix of this block's names (``dense0_``)."""
        return self._prefix

    @property
    def name(self):
        """The prefix without its trailing '_'."""
        return self._name

    def name_scope(self):
        """A ``with`` scope in which new blocks and parameters are named under this block."""
        return self._scope

    @property
    def params(self):
        """This block's own ParameterDict (children's parameters are not in it)."""
        return self._params

    def collect_params(self, select=None):
        """A ParameterDict with the parameters of this block and its children; with
        ``select``, only those whose names match the regular expression
        (``'.*weight|.*bias'``)."""
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        own = self.params
        # Parameters assigned as attributes (Gluon 2: self.w = Parameter('w', ...)) belong to
        # the block too, under their own names.
        extra = {p.name: p for p in self._reg_params.values()
                 if own._params.get(p.name) is not p}
        if extra:
            own = dict(own.items())
            own.update(extra)
        if not select:
            ret.update(own)
        else:
            pattern = re.compile(select)
            ret.update({name: value for name, value in own.items() if pattern.match(name)})
        for cld in self._children.values():
            ret.update(cld.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=''):
        """{structural name: parameter}: attribute names joined by '.' (``0.weight``)."""
        if prefix:
            prefix += '.'
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    # -- parameter files --
    def save_parameters(self, filename, deduplicate=False):
        """Saves the parameters under their structural names (``0.weight``); a parameter on
        several devices is saved once, as the average of its copies, on cpu.
        ``deduplicate`` saves a shared parameter once."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            reverse = {v: k for k, v in params.items()}
            params = {v: k for k, v in reverse.items()}
        ndarray.save(filename, {key: val._reduce() for key, val in params.items()})

    def save(self, prefix):
        """Saves the model's structure to ``<prefix>-model.json`` and its parameters to
        ``<prefix>-model.params`` (MXNet's ``Block.save``): each block is recorded under its
        class name and its place in a depth-first walk, with its name, the names its parent
        gives its children and whether it was hybridized, so that ``load`` can give a model
        built again the same way the names the parameters were saved under."""
        model = {}
        index = [0]

        def walk(blk, structure):
            entry = {'orig_name': blk.name, 'hybridized': bool(getattr(blk, '_active', False))}
            structure[type(blk).__name__.lower() + str(index[0])] = entry
            children = entry['children'] = {}
            for ch_name, child in blk._children.items():
                index[0] += 1
                children[child.name] = ch_name
                walk(child, entry)
        walk(self, model)
        tmp = prefix + '-model.json.tmp'
        with open(tmp, 'w') as f:
            json.dump(model, f)
        os.replace(tmp, prefix + '-model.json')
        self.save_parameters(prefix + '-model.params')

    def load(self, prefix):
        """Loads a model saved with ``save`` (by neomx or MXNet) into this one, built again
        in the same order: blocks take back their saved names, children their saved places,
        hybridized blocks are hybridized again, then the parameters are loaded."""
        with open(prefix + '-model.json') as f:
            model = json.load(f)
        index = [0]

        def walk(blk, structure):
            key = type(blk).__name__.lower() + str(index[0])
            entry = structure.get(key)
            if entry is None:
                raise MXNetError("Block.load: %s-model.json has no block %r here: build the "
                                 "model the way it was built when saved" % (prefix, key))
            old_prefix = blk.params.prefix
            blk._name = entry['orig_name']
            for pname in list(blk.params.keys()):
                param = blk.params._params.pop(pname)
                blk.params._params[blk.name + '_' + pname[len(old_prefix):]] = param
            if entry.get('hybridized') and isinstance(blk, HybridBlock):
                blk.hybridize()
            for child in blk._children.values():
                index[0] += 1
                walk(child, entry)
            renamed = OrderedDict()
            for ch_name, child in blk._children.items():
                renamed[entry['children'].get(child.name, ch_name)] = child
            blk._children = renamed
        walk(self, model)
        self.load_parameters(prefix + '-model.params')

    def save_params(self, filename):
        """Deprecated: saves under prefixed names; use ``save_parameters``."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you "
                      "want load from SymbolBlock later, please use export instead.")
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source='current'):
        """Loads parameters saved by ``save_parameters`` (here or by MXNet 1.x) onto ``ctx``
        (a Context or a list). Files with prefixed names (``save_params``,
        ``collect_params().save``) are loaded with this block's prefix restored.

        Parameters
        ----------
        allow_missing : bool
            Leave parameters missing from the file alone instead of failing.
        ignore_extra : bool
            Ignore names in the file this block does not have instead of failing.
        cast_dtype : bool
            Cast to the parameter's dtype (``dtype_source='current'``) or adopt the file's
            (``'saved'``).
        """
        loaded = ndarray.load(filename)
        if not isinstance(loaded, dict):
            raise MXNetError("load_parameters: %s holds a list of arrays, not named parameters"
                             % filename)
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any('.' in k for k in loaded):
            # A file of prefixed names (save_params / collect_params().save).
            del loaded
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            # A shared parameter needs to be in the file under one of its names only.
            names_of = defaultdict(list)
            for k, v in params.items():
                names_of[v].append(k)
            for name, param in params.items():
                if not any(n in loaded for n in names_of[param]):
                    raise ParameterError(
                        "Parameter '%s' is missing in file '%s', which contains parameters: %s. "
                        "Set allow_missing=True to ignore missing parameters."
                        % (name, filename, _utils()._brief_print_list(loaded.keys())))
        for name in loaded:
            if not ignore_extra and name not in params:
                raise _ExtraParameterError(
                    "Parameter '%s' loaded from file '%s' is not present in ParameterDict, which "
                    "contains parameters %s. Set ignore_extra=True to ignore. "
                    % (name, filename, _utils()._brief_print_list(params.keys())))
            if name in params:
                params[name]._load_init(loaded[name], ctx, cast_dtype=cast_dtype,
                                        dtype_source=dtype_source,
                                        where="file '%s'" % filename)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """Deprecated: use ``load_parameters``."""
        warnings.warn("load_params is deprecated. Please use load_parameters.")
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    # -- structure --
    def register_child(self, block, name=None):
        """Registers ``block`` as a child (attribute assignment does this)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """``hook(block, inputs)`` runs before each ``forward``; returns a HookHandle."""
        handle = _utils().HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """``hook(block, inputs, outputs)`` runs after each ``forward``; returns a
        HookHandle."""
        handle = _utils().HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Calls ``fn(block)`` on every child (recursively), then on this block."""
        for cld in self._children.values():
            cld.apply(fn)
        fn(self)
        return self

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialises the parameters of this block and its children on ``ctx`` (a Context
        or a list: one copy each); ``init`` is used for parameters without their own."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def zero_grad(self):
        """Sets the gradients of every parameter to 0."""
        self.collect_params().zero_grad()

    def hybridize(self, active=True, **kwargs):
        """Hybridizes the HybridBlocks among the children (see ``HybridBlock.hybridize``)."""
        for cld in self._children.values():
            cld.hybridize(active, **kwargs)

    def cast(self, dtype):
        """Casts the parameters of this block and its children to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for _, param in self.params.items():
            param.cast(dtype)

    def register_op_hook(self, callback, monitor_all=False):
        """Installs ``callback`` on the hybridized children."""
        for cld in self._children.values():
            cld.register_op_hook(callback, monitor_all)

    # -- calling --
    def __call__(self, *args):
        """Runs the pre-hooks, ``forward`` and the hooks. Only positional arguments."""
        if self._forward_pre_hooks:
            for hook in list(self._forward_pre_hooks.values()):
                hook(self, args)
        out = self.forward(*args)
        if self._forward_hooks:
            for hook in list(self._forward_hooks.values()):
                hook(self, args, out)
        if is_np_array():
            _check_all_np(out)
        return out

    def forward(self, *args):
        """The computation, on NDArrays; subclasses override it."""
        raise NotImplementedError

    def summary(self, *inputs):
        """Prints each layer's output shape and parameter count for a forward pass on
        ``inputs`` (the block must be initialised and not hybridized)."""
        summary = OrderedDict()
        seen = set()
        hooks = []

        def shape_str(args):
            def shapes(a):
                if isinstance(a, (list, tuple)):
                    return [shapes(i) for i in a]
                return a.shape if isinstance(a, NDArray) else a
            s = shapes(args)
            return str(s)[1:-1] if isinstance(s, list) else str(s)

        def register(block):
            if isinstance(block, HybridBlock) and block._active:
                raise AssertionError('"{}" must not be hybridized to print summary.'
                                     .format(block.name))

            def hook(block, _, outputs):
                key = '%s-%i' % (block.__class__.__name__, len(summary))
                entry = summary[key] = OrderedDict()
                entry['output_shape'] = shape_str(outputs)
                entry['n_params'] = entry['trainable'] = entry['shared'] = 0
                for p in block.params.values():
                    n = p.data().size
                    entry['n_params'] += n
                    entry['trainable'] += 0 if p.grad_req == 'null' else n
                    if p in seen:
                        entry['shared'] += n
                    else:
                        seen.add(p)
            from .nn.basic_layers import HybridSequential, Sequential
            if not isinstance(block, (Sequential, HybridSequential)):
                hooks.append(block.register_forward_hook(hook))

        summary['Input'] = OrderedDict(output_shape=shape_str(inputs), n_params=0, trainable=0,
                                       shared=0)
        try:
            self.apply(register)
            self(*inputs)
            line = '{:>20}  {:>42} {:>15}'
            print('-' * 80)
            print(line.format('Layer (type)', 'Output Shape', 'Param #'))
            print('=' * 80)
            total = trainable = shared = 0
            for layer, entry in summary.items():
                print(line.format(layer, str(entry['output_shape']), entry['n_params']))
                total += entry['n_params']
                trainable += entry['trainable']
                shared += entry['shared']
            print('=' * 80)
            print('Parameters in forward computation graph, duplicate included')
            print('   Total params: ' + str(total))
            print('   Trainable params: ' + str(trainable))
            print('   Non-trainable params: ' + str(total - trainable))
            print('Shared params in forward computation graph: ' + str(shared))
            print('Unique parameters in model: ' + str(total - shared))
            print('-' * 80)
        finally:
            for h in hooks:
                h.detach()


def _check_all_np(out):
    """Under NumPy array semantics a block's outputs must be ``mx.np.ndarray`` (MXNet's
    rule): a legacy NDArray among them is a TypeError."""
    if isinstance(out, NDArray):
        if out.__class__ is NDArray:
            raise TypeError("Block's output ndarrays/symbols must be of type "
                            "`mxnet.numpy.ndarray` or `mxnet.symbol.numpy._Symbol`, while got "
                            "output type %s" % type(out))
    elif isinstance(out, (list, tuple)):
        for o in out:
            _check_all_np(o)


def _input_kinds(args):
    """(has a Symbol, has an NDArray, set of contexts, first context) of nested ``args``.
    (``Symbol``: imported at the end of this module.)"""
    has_sym = has_nd = False
    ctxs = set()
    first = None
    stack = list(args)
    while stack:
        a = stack.pop(0)
        if isinstance(a, NDArray):
            has_nd = True
            ctxs.add(a._ctx)
            if first is None:
                first = a._ctx
        elif isinstance(a, Symbol):
            has_sym = True
        elif isinstance(a, (list, tuple)):
            stack[:0] = list(a)
    return has_sym, has_nd, ctxs, first


_MIXED_INPUTS = ('In HybridBlock, we do not support mixed NDArrays and Symbols types for the '
                 'input. Please check the type of the args.\n')


def _is_current(ctx):
    """Whether ``ctx`` is the current context already (no switch needed)."""
    cur = current_context()
    return cur is ctx or cur == ctx


class DeferredShapeError(MXNetError, ValueError):
    """A deferred initialisation whose parameter shapes cannot be inferred from the inputs:
    a ValueError, as MXNet raises it, and an MXNetError naming the parameter."""


class HybridBlock(Block):
    """A block whose computation, ``hybrid_forward(F, x, *args, **params)``, works on
    NDArrays (``F = neomx.nd``) and on Symbols (``F = neomx.sym``), so ``hybridize()`` can
    compile it into one graph. ``params`` are this block's registered parameters, by
    attribute name.

    >>> import neomx as mx
    >>> from neomx.gluon import HybridBlock, nn
    >>> class Model(HybridBlock):
    ...     def __init__(self, **kwargs):
    ...         super(Model, self).__init__(**kwargs)
    ...         with self.name_scope():
    ...             self.dense0 = nn.Dense(20)
    ...             self.dense1 = nn.Dense(20)
    ...     def hybrid_forward(self, F, x):
    ...         return F.relu(self.dense1(F.relu(self.dense0(x))))
    >>> model = Model()
    >>> model.initialize()
    >>> model(mx.nd.zeros((10, 10))).shape
    (10, 20)
    """
    # The nested structure of the inputs and outputs of the graph a hybridized call traced
    # (``_hybrid.flatten``'s formats), as MXNet keeps them: libraries save them beside an
    # export and give them to the SymbolBlock they import (GluonTS).
    _in_format = None
    _out_format = None

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        # The compiled graphs live in self._hybrid_cache (see _hybrid.py), made on the first
        # hybridized call from _active, _flags and _op_hook.
        self._active = False
        self._flags = []
        self._op_hook = None            # (callback, monitor_all) from register_op_hook
        # Parameter arrays per device for the imperative call, valid while _EPOCH is unchanged.
        self._pcache = {}
        self._pcache_epoch = -1

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def _clear_cached_op(self):
        _hybrid.clear(self)

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError("Children of HybridBlock must also be HybridBlock, but %s has type "
                             "%s. If you are using Sequential, please try HybridSequential "
                             "instead." % (str(block), str(type(block))))
        super().register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active=True, backend=None, clear=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, **kwargs):
        """Turns compilation on (or off, ``active=False``) for this block and its children:
        the next call traces ``hybrid_forward`` into a graph, later calls run it.

        Parameters
        ----------
        active : bool
        backend : str
            Hands the generated function to a backend (``'inductor'`` for torch.compile).
        clear : bool
            Drops graphs traced before.
        static_alloc, static_shape : bool
            Together: CUDA graphs on GPU.

        Other keyword arguments are MXNet's options for a subgraph backend; none applies here.
        """
        self._active = active
        self._flags = [('static_alloc', static_alloc), ('static_shape', static_shape),
                       ('inline_limit', inline_limit)]
        if backend is not None:
            self._flags.append(('backend', backend))
        if forward_bulk_size is not None:
            self._flags.append(('forward_bulk_size', forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(('backward_bulk_size', backward_bulk_size))
        if clear:
            self._clear_cached_op()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn('"{block}" is being hybridized while still having forward hook/'
                          'pre-hook. If "{block}" is a child of HybridBlock, the hooks will not '
                          'take effect.'.format(block=self))
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                          inline_limit=inline_limit, forward_bulk_size=forward_bulk_size,
                          backward_bulk_size=backward_bulk_size)

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)

    def register_op_hook(self, callback, monitor_all=False):
        """Calls ``callback(name, op_name, array)`` after each operator of the hybridized
        block runs: for its outputs (``<node>_output``) and, with ``monitor_all``, first for
        its inputs (``<node>_<input>``); names are bytes, as MXNet hands them over. As in
        MXNet, a block that is not hybridized calls nothing, and the hook goes to this block
        and its direct children.

        >>> import neomx as mx
        >>> net = mx.gluon.nn.Dense(2, prefix='dense0_')
        >>> net.initialize()
        >>> net.hybridize()
        >>> seen = []
        >>> net.register_op_hook(lambda name, op, arr: seen.append((name, op, arr.shape)))
        >>> _ = net(mx.nd.ones((1, 3)))
        >>> mx.nd.waitall()
        >>> seen
        [(b'dense0_fwd_output', b'FullyConnected', (1, 2))]
        """
        for blk in [self] + list(self._children.values()):
            blk._op_hook = (callback, bool(monitor_all))
            blk._clear_cached_op()

    # -- shapes and types of parameters --
    def _trace_graph(self, args):
        """(input names, Graph, flat input arrays) of hybrid_forward traced on ``args``."""
        from ..symbol.graph import Graph
        inputs, out, _ = _hybrid.trace(self, *args)
        flat = [a for a in _hybrid.flatten(list(args), 'input')[0] if a is not None]
        return [i.name for i in inputs], Graph.of(out), flat, out

    def infer_shape(self, *args):
        """Fills the parameter shapes from the input arrays ``args`` (traced through
        ``hybrid_forward`` with Symbols, the operators' rules filling in the parameters).
        A Gluon 2 block whose own parameters wait for deferred initialisation overrides it
        to set their shapes (``self.weight.shape = (self.units, x.shape[-1])``)."""
        if _hybrid.is_gluon2(type(self)):
            unknown = [p.name for p in self._reg_params.values() if p._deferred_init]
            raise MXNetError("%s defines forward() and leaves parameters %s to deferred "
                             "initialisation: override infer_shape(self, *args) to set their "
                             "shapes from the inputs" % (type(self).__name__, ', '.join(unknown)))
        names, graph, flat, _ = self._trace_graph(args)
        _hybrid.infer_param_shapes(self, graph, names, flat)

    def infer_type(self, *args):
        """Sets the parameter dtypes from the input arrays ``args``."""
        names, _, flat, out = self._trace_graph(args)
        arg_types, _, aux_types = out.infer_type_partial(
            **{n: a.dtype for n, a in zip(names, flat)})
        types = dict(zip(out.list_arguments(), arg_types))
        types.update(zip(out.list_auxiliary_states(), aux_types))
        for p in self.collect_params().values():
            t = types.get(p.name)
            if t is not None:
                p.dtype = t

    def _deferred_infer_shape(self, *args):
        try:
            self.infer_shape(*args)
        except Exception as e:
            shapes = ', '.join(str(a.shape) for a in
                               _hybrid.flatten(list(args), 'input')[0] if a is not None)
            # the parameters still waiting for a shape, which the inputs did not give
            waiting = ', '.join('%s %s' % (p.name, p.shape) for p in self.collect_params().values()
                                if p._deferred_init and (not p.shape or
                                                         any(d <= 0 for d in p.shape)))
            raise DeferredShapeError("Deferred initialization failed because shape cannot be "
                                     "inferred. %s (block %s, %sinput shapes %s)"
                                     % (e, self.name, 'parameters of unknown shape %s; ' % waiting
                                        if waiting else '', shapes)) from e

    def _finish_deferred_init(self, args):
        """Deferred initialisation, for every call path: the parameter shapes inferred from
        the inputs ``args`` (``infer_shape``), then the parameters of this block and its
        children initialised."""
        self._deferred_infer_shape(*args)
        for p in self.collect_params().values():
            p._finish_deferred_init()

    def _params_on(self, ctx, args):
        """{attribute name: array on ctx} of this block's parameters, finishing a deferred
        initialisation with the shapes of ``args``; cached until a parameter changes."""
        try:
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        except DeferredInitializationError:
            self._finish_deferred_init(args)
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        if self._pcache_epoch != _EPOCH[0]:
            self._pcache = {}
            self._pcache_epoch = _EPOCH[0]
        if not any(data_per_call(p) for p in self._reg_params.values()):
            self._pcache[ctx] = params
        return params

    def forward(self, x, *args):
        """Runs ``hybrid_forward`` with ``F = neomx.nd`` on NDArrays (through the compiled
        graph once hybridized) or with ``F = neomx.sym`` on Symbols."""
        # An NDArray first is the per-call hot path: no walk over the other inputs.
        ctx = x._ctx if isinstance(x, NDArray) else self._input_context((x,) + args)
        if ctx is None:
            return _hybrid.symbolic_call(self, x, *args)
        if self._active and mode.tracing is None:
            return self._call_compiled(ctx, (x,) + args)
        return self._call_imperatively(ctx, (x,) + args)

    def _input_context(self, inputs):
        """The context of the first NDArray among the nested ``inputs``, or None when they
        are Symbols. Both kinds, neither, or several contexts for a compiled call are errors."""
        has_sym, has_nd, ctxs, first = _input_kinds(inputs)
        if has_sym and has_nd:
            raise ValueError(_MIXED_INPUTS)
        if has_sym:
            return None
        if not has_nd:
            raise ValueError('In HybridBlock, there must be one NDArray or one Symbol in the '
                             'input. Please check the type of the args.\n')
        if len(ctxs) > 1 and self._active and mode.tracing is None:
            raise ValueError('Find multiple contexts in the input, After hybridized, the '
                             'HybridBlock only supports one input context. Find all '
                             'contexts = {}'.format(ctxs))
        return first

    def _call_compiled(self, ctx, inputs):
        """The compiled graph for ``inputs``' signature, traced and compiled on first use."""
        cache = _hybrid.cache_of(self)
        if _is_current(ctx):
            return cache(inputs)
        with ctx:
            return cache(inputs)

    def _call_imperatively(self, ctx, inputs):
        """``hybrid_forward`` with ``F = neomx.nd`` and the parameters on ``ctx``."""
        if len(inputs) > 1 and _input_kinds(inputs[1:])[0]:
            raise ValueError(_MIXED_INPUTS)
        params = self._pcache.get(ctx) if self._pcache_epoch == _EPOCH[0] else None
        if params is None:
            params = self._params_on(ctx, inputs)
        if _is_current(ctx):
            return self.hybrid_forward(ndarray, *inputs, **params)
        with ctx:
            return self.hybrid_forward(ndarray, *inputs, **params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The computation: ``F`` is ``neomx.nd`` or ``neomx.sym``; ``kwargs`` holds the
        parameters by attribute name. Subclasses override it."""
        raise NotImplementedError

    def __call__(self, *args):
        """As ``Block.__call__``. A Gluon 2 block (one defining ``forward(self, x)`` instead
        of ``hybrid_forward``) runs its compiled graph once hybridized, traced by deferred
        compute on its first call; parameters it left to deferred initialisation get their
        shapes from its ``infer_shape(*args)``."""
        if not _hybrid.is_gluon2(type(self)):
            return Block.__call__(self, *args)
        try:
            return self._call_gluon2(args)
        except DeferredInitializationError:
            self._finish_deferred_init(args)
            return self._call_gluon2(args)

    def _call_gluon2(self, args):
        if not self._active or mode.tracing is not None:
            return Block.__call__(self, *args)
        if self._forward_pre_hooks:
            for hook in list(self._forward_pre_hooks.values()):
                hook(self, args)
        out = _hybrid.cache_of(self)(args)
        if self._forward_hooks:
            for hook in list(self._forward_hooks.values()):
                hook(self, args, out)
        return out

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Writes ``path-symbol.json`` and ``path-%04d.params`` for ``SymbolBlock.imports``
        (and MXNet). The block must be hybridized and called once."""
        return _hybrid.export(self, path, epoch, remove_amp_cast)

    def hybridized_code(self):
        """The Python source the hybridized block runs for its latest input signature."""
        return _hybrid.hybridized_code(self)


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import copy  # noqa: E402,F401
from .. import symbol  # noqa: E402,F401
from ..base import mx_real_t  # noqa: E402,F401
from ..symbol import Symbol, load_json  # noqa: E402,F401
from ..symbol import numpy as np_symbol  # noqa: E402,F401
from ..util import np_array, np_shape  # noqa: E402,F401
from .utils import HookHandle  # noqa: E402,F401
from ._hybrid import flatten as _flatten, regroup as _regroup  # noqa: E402,F401


def __getattr__(name):
    # gluon.block.SymbolBlock (MXNet's module holds it); symbol_block.py builds on this module
    if name == 'SymbolBlock':
        from .symbol_block import SymbolBlock
        return SymbolBlock
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
