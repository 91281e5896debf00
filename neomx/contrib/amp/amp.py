"""Automatic mixed precision (AMP), as MXNet 1.9's ``mx.contrib.amp``.

Training: ``amp.init()`` puts MXNet's tables in force (``ops/amp.py``: which operators run in
float16 or bfloat16, which in float32, which in the widest type of their inputs), for the
rest of the process: every operator call casts its inputs as they say (``nd.*``, ``mx.np``,
Gluon blocks), and graphs (hybridized blocks, ``CachedOp``, executors) read them through
``amp_cast``/``amp_multicast`` nodes, which ``hybridized_code()`` shows: a graph compiled
before ``amp.init`` is compiled again with them at its next call. Gradients
flow back through the casts; the parameters stay float32 (the optimizer updates them in
float32).
``amp.init_trainer(trainer)`` gives the trainer a dynamic loss scale (``LossScaler``) and
``amp.scale_loss`` scales the loss for the backward pass; the trainer then divides the
gradients by the scale and skips the steps whose gradients overflowed::

    amp.init('bfloat16')
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    amp.init_trainer(trainer)
    with autograd.record():
        loss = loss_fn(net(x), y)
        with amp.scale_loss(loss, trainer) as scaled:
            autograd.backward(scaled)
    trainer.step(batch_size)

Inference: ``convert_symbol``, ``convert_model`` (Module's symbol and parameters),
``convert_hybrid_block`` and ``convert_bucketing_module`` rewrite a float32 model into a mixed
precision one with MXNet's ``amp_cast``/``amp_multicast`` nodes (``symbol/amp.py``): the graph
MXNet 1.9.1 makes, node for node, which ``tojson(remove_amp_cast=False)`` and
``export(..., remove_amp_cast=False)`` write and ``sym.load``/``SymbolBlock.imports`` read.

>>> import neomx as mx
>>> from neomx.contrib import amp
>>> fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc')
>>> net = amp.convert_symbol(mx.sym.softmax(fc, name='out'), target_dtype='bfloat16')
>>> net.get_internals().list_outputs()      # doctest: +NORMALIZE_WHITESPACE
['data', 'data_amp_cast_bfloat16_output', 'fc_weight', 'fc_weight_amp_cast_bfloat16_output',
 'fc_bias', 'fc_bias_amp_cast_bfloat16_output', 'fc_output',
 'fc_output_amp_cast_float32_output', 'out_output']
"""
import contextlib
import logging

import numpy as np

from ... import optimizer as opt
from ...base import bfloat16, dtype_flag, dtype_name
from ...context import gpu
from ...gluon import trainer
from ...module import BucketingModule
from ...ndarray import fastpath
from ...ops import amp as _table
from ...symbol import Symbol
from ...symbol import amp as _passes
from . import lists
from .loss_scaler import LossScaler

__all__ = ['init', 'init_trainer', 'scale_loss', 'unscale', 'convert_model',
           'convert_hybrid_block', 'list_lp16_ops', 'list_fp32_ops', 'list_lp16_fp32_ops',
           'list_conditional_fp32_ops', 'list_widest_type_cast', 'list_loss_output_functions',
           'list_lp16_use_fp32_params', 'convert_symbol', 'convert_bucketing_module',
           'bfloat16']

# Whether amp.init() has run (libraries read it: GluonNLP's attention cells choose their
# float16 path by it)
_amp_initialized = False
_amp_loss_scale_initialized = False
_loss_scaler = None


def _target(target_dtype, what):
    """'float16' or 'bfloat16' for the ways MXNet spells them (``np.float16``, ``bfloat16``)."""
    if isinstance(target_dtype, np.dtype) and target_dtype == bfloat16:
        return 'bfloat16'
    if isinstance(target_dtype, str) and target_dtype in ('float16', 'bfloat16'):
        return target_dtype
    if target_dtype is np.float16 or (isinstance(target_dtype, np.dtype)
                                      and target_dtype == np.float16):
        return 'float16'
    raise AssertionError(what)


# -- training -----------------------------------------------------------------------------

def init(target_dtype='float16', target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None):
    """Turns AMP on for the rest of the process (a second call changes nothing, as in MXNet):
    operators of ``target_precision_ops`` (default: MXNet's list for ``target_dtype``) run in
    ``target_dtype``, those of ``fp32_ops`` in float32, those of ``conditional_fp32_ops``
    (``(operator, attribute, [values])``) in float32 for those attribute values."""
    global _amp_initialized, _loss_scaler
    if _amp_initialized:
        return
    target = _target(target_dtype,
                     "AMP currently supports only float16 or bfloat16 as a target_dtype")
    table = _table.CastTable(target, low=target_precision_ops, fp32=fp32_ops,
                             conditional=conditional_fp32_ops)
    _amp_initialized = True
    logging.info("Using AMP")
    _loss_scaler = LossScaler()
    table.loss_scaler = _loss_scaler
    _activate(table)


def _activate(table):
    """Puts ``table`` (None: none) in force for operator calls and graphs compiled from now
    on; the fast path's plans, made for the table before, are forgotten."""
    _table.activate(table)
    fastpath._PLANS.clear()


def _deinit():
    """Turns AMP off again (for tests: MXNet has no way back)."""
    global _amp_initialized, _amp_loss_scale_initialized, _loss_scaler
    _activate(None)
    _amp_initialized = _amp_loss_scale_initialized = False
    _loss_scaler = None


def init_trainer(optimizer_or_trainer):
    """Gives a Gluon ``Trainer`` the dynamic loss scale: the first trainer shares the one
    ``init`` made (which scales imperative loss outputs' gradients), later ones get their
    own."""
    global _amp_loss_scale_initialized
    assert _amp_initialized, "AMP not initialized, did you forget to call amp.init()?"
    if not _amp_loss_scale_initialized:
        _amp_loss_scale_initialized = True
        loss_scaler = _loss_scaler
    else:
        loss_scaler = LossScaler()
    if isinstance(optimizer_or_trainer, trainer.Trainer):
        optimizer_or_trainer._amp_loss_scaler = loss_scaler
        optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale
    elif isinstance(optimizer_or_trainer, opt.Optimizer):
        raise TypeError("AMP is currently only compatible with Gluon Trainer")
    else:
        raise TypeError("optimizer_or_trainer should be a Gluon Trainer or an optimizer, "
                        "instead is %s" % type(optimizer_or_trainer))


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """Yields ``loss`` (an NDArray or a list of them) times the loss scale, for the backward
    pass, and sets the trainer to divide the gradients by it."""
    scaler = getattr(optimizer_or_trainer, '_amp_loss_scaler', None)
    assert scaler is not None, \
        'Loss scaler is not initialized, did you forget to call amp.init_trainer()?'
    optimizer_or_trainer._scale = (optimizer_or_trainer._amp_original_scale /
                                   scaler.loss_scale)
    if isinstance(loss, (list, tuple)):
        yield [x * scaler.loss_scale for x in loss]
    else:
        yield scaler.loss_scale * loss


def unscale(optimizer_or_trainer):
    """Divides the gradients by the loss scale now (to clip or read them before ``step``),
    and sets the trainer's scale back to 1."""
    if isinstance(optimizer_or_trainer, trainer.Trainer):
        scale = optimizer_or_trainer._scale
        for p in optimizer_or_trainer._params:
            if p._grad is not None:
                for g in p._grad:
                    g[:] *= scale
        optimizer_or_trainer._scale = 1.
    elif isinstance(optimizer_or_trainer, opt.Optimizer):
        raise TypeError("AMP is currently only compatible with Gluon Trainer")
    else:
        raise TypeError("optimizer_or_trainer should be a Gluon Trainer or an optimizer, "
                        "instead is %s" % type(optimizer_or_trainer))


# -- the lists ------------------------------------------------------------------------------

def _lists(target_dtype):
    return _table.default_lists(_target(target_dtype, "not supported type"))


def list_lp16_ops(target_dtype):
    """MXNet's operators that AMP runs in ``target_dtype`` (float16 or bfloat16)."""
    return _lists(target_dtype)['low']


def list_fp32_ops(target_dtype):
    """MXNet's operators that AMP runs in float32."""
    return _lists(target_dtype)['fp32']


def list_lp16_fp32_ops(target_dtype):
    """MXNet's operators that run in either type, as their inputs come."""
    return _lists(target_dtype)['low_fp32']


def list_conditional_fp32_ops(target_dtype):
    """``(operator, attribute, [values])``: float32 for those attribute values."""
    return _lists(target_dtype)['conditional']


def list_widest_type_cast(target_dtype):
    """MXNet's operators whose inputs are cast to the widest float type among them."""
    return _lists(target_dtype)['widest']


def list_loss_output_functions(target_dtype):
    """The loss outputs whose gradient the loss scale multiplies (imperatively)."""
    return _lists(target_dtype)['loss_outputs']


def list_lp16_use_fp32_params(target_dtype):
    """{operator: [input names]} kept in float32 when it runs in bfloat16; None for
    float16."""
    return _lists(target_dtype)['fp32_params']


# -- converting models --------------------------------------------------------------------

def convert_symbol(sym, target_dtype="float16", target_dtype_ops=None, fp32_ops=None,
                   conditional_fp32_ops=None, excluded_sym_names=None, data_names=None,
                   cast_optional_params=False):
    """The float32 network ``sym`` with MXNet's cast layers for ``target_dtype`` ('float16'
    or 'bfloat16'): the lists (MXNet's by default) say which operators run in it; nodes named
    in ``excluded_sym_names`` stay float32. ``data_names`` are the network's data inputs
    (default: the inputs without a ``__dtype__``); with ``cast_optional_params`` the other
    inputs, parameters, are marked (``__dtype__``) to be stored in the type they are read in,
    rather than cast at each run."""
    assert isinstance(sym, Symbol), "First argument to convert_symbol should be Symbol"
    assert target_dtype in ('float16', 'bfloat16'), \
        "Only target_dtype float16 and bfloat16 are supported currently"
    defaults = _table.default_lists(target_dtype)
    if target_dtype_ops is not None:
        assert isinstance(target_dtype_ops, list), "target_dtype_ops should be a list of strs"
    else:
        target_dtype_ops = defaults['low']
    if fp32_ops is not None:
        assert isinstance(fp32_ops, list), "fp32_ops should be a list of strs"
    else:
        fp32_ops = defaults['fp32']
    if conditional_fp32_ops is not None:
        assert isinstance(conditional_fp32_ops, list), "conditional_fp32_ops should be a list"
    else:
        conditional_fp32_ops = defaults['conditional']
    for c in conditional_fp32_ops:
        assert (isinstance(c[0], str) and isinstance(c[1], str) and isinstance(c[2], list)), \
            "conditional_fp32_ops should be a list of (str, str, list of str)"
    if excluded_sym_names is not None:
        assert isinstance(excluded_sym_names, list), \
            "excluded_sym_names should be a list of strs"
    else:
        excluded_sym_names = []
    conditional_names = [c[0] for c in conditional_fp32_ops]
    for (a, an), (b, bn) in (((target_dtype_ops, 'target_dtype_ops'), (fp32_ops, 'fp32_ops')),
                             ((target_dtype_ops, 'target_dtype_ops'),
                              (conditional_names, 'conditional_fp32_ops')),
                             ((fp32_ops, 'fp32_ops'),
                              (conditional_names, 'conditional_fp32_ops'))):
        common = set(a) & set(b)
        assert not common, "Ops cannot be in two or more lists. Common ops in %s and %s %s" \
            % (an, bn, common)
    known = set(defaults['low'] + defaults['fp32'] + defaults['low_fp32'] +
                [c[0] for c in defaults['conditional']])
    illegal = set(target_dtype_ops + fp32_ops + conditional_names) - known
    assert not illegal, (
        "Can only choose ops from one of the four lists for lp16_ops and fp32_ops: "
        "amp.list_lp16_ops(target_dtype), amp.list_fp32_ops(target_dtype), "
        "amp.list_lp16_fp32_ops(target_dtype), amp.list_conditional_fp32_ops(target_dtype); "
        "op %s not in any of them" % illegal)
    table = _table.CastTable(target_dtype, low=target_dtype_ops, fp32=fp32_ops,
                             conditional=conditional_fp32_ops, excluded=excluded_sym_names)
    if data_names is None:
        attrs = sym.attr_dict()
        data_names = [n for n in sym.list_inputs() if '__dtype__' not in attrs.get(n, {})]
    heads, stored_low = _passes.reduce_precision(sym._outputs, table, data_names,
                                                 cast_optional_params)
    out = Symbol(heads)
    if cast_optional_params:
        data = set(data_names)
        flag = {'float32': '0', target_dtype: str(dtype_flag(target_dtype))}
        for node, _ in out.get_internals()._outputs:
            if node.op is None and node.name not in data:
                node.extra['__dtype__'] = flag[target_dtype if node.name in stored_low
                                               else 'float32']
    return out


def _cast_params(sym, params, names):
    """``params`` with each array of ``names`` in the dtype its variable's ``__dtype__``
    says."""
    attrs = sym.attr_dict()
    for name in names:
        flag = attrs.get(name, {}).get('__dtype__')
        if name in params and flag is not None and flag != '-1':
            dtype = dtype_name(int(flag))
            if params[name]._dtype != dtype:
                params[name] = params[name].astype(dtype)
    return params


def convert_model(sym, arg_params, aux_params, target_dtype="float16", target_dtype_ops=None,
                  fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                  cast_optional_params=False):
    """A Module's float32 model (``sym``, ``arg_params``, ``aux_params``) in mixed precision:
    ``(converted symbol, arg_params, aux_params)``, the parameters cast where the symbol
    stores them in ``target_dtype`` (``cast_optional_params``). See ``convert_symbol``."""
    if excluded_sym_names is None:
        excluded_sym_names = []
    assert target_dtype in ('float16', 'bfloat16'), \
        "Only target_dtype float16 and bfloat16 are supported currently"
    assert isinstance(sym, Symbol), "First argument to convert_model should be Symbol"
    assert isinstance(arg_params, dict), \
        "Second argument to convert_model should be a dict of name to ndarray"
    assert isinstance(aux_params, dict), \
        "Third argument to convert_model should be a dict of name to ndarray"
    param_names = list(arg_params) + list(aux_params)
    data_names = [n for n in sym.list_inputs() if n not in set(param_names)]
    sym = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, data_names, cast_optional_params)
    _cast_params(sym, arg_params, sym.list_arguments())
    _cast_params(sym, aux_params, sym.list_auxiliary_states())
    return sym, arg_params, aux_params


def convert_hybrid_block(block, target_dtype="float16", target_dtype_ops=None, fp32_ops=None,
                         conditional_fp32_ops=None, excluded_sym_names=None, ctx=gpu(0),
                         cast_optional_params=False):
    """A SymbolBlock computing the hybridized (and run once) ``block`` in mixed precision,
    with its parameters loaded onto ``ctx``. See ``convert_symbol``."""
    from ...gluon import HybridBlock, SymbolBlock
    from ...symbol import var
    assert isinstance(block, HybridBlock), "block input should be a HybridBlock"
    cache = block.__dict__.get('_hybrid_cache')
    if getattr(block, '_graph_given', False):
        inputs, sym = block._cached_graph
    elif cache is not None and cache.graphs:
        names, _, _, _, sym = (cache.graphs.get(False) or next(iter(cache.graphs.values())))[:5]
        inputs = [var(n) for n in names]
    else:
        raise RuntimeError("Please first call block.hybridize() and then run forward with this "
                           "block at least once before calling export.")
    converted = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops,
                               conditional_fp32_ops, excluded_sym_names,
                               data_names=[i.name for i in inputs],
                               cast_optional_params=cast_optional_params)
    arg_names = set(converted.list_arguments())
    aux_names = set(converted.list_auxiliary_states())
    arrays, args, auxs = {}, {}, {}
    for name, param in block.collect_params().items():
        if name in arg_names:
            args[name] = param._reduce()
        elif name in aux_names:
            auxs[name] = param._reduce()
    _cast_params(converted, args, arg_names)
    _cast_params(converted, auxs, aux_names)
    arrays.update(('arg:%s' % k, v) for k, v in args.items())
    arrays.update(('aux:%s' % k, v) for k, v in auxs.items())
    ret = SymbolBlock(converted, inputs)
    for key, param in ret.collect_params().items():
        for kind in ('arg', 'aux'):
            value = arrays.get('%s:%s' % (kind, key))
            if value is not None and param.dtype != value.dtype:
                param.cast(value.dtype)
    ret.collect_params().load_dict(arrays, ctx=ctx)
    return ret


def convert_bucketing_module(bucketing_mod, target_dtype="float16", target_dtype_ops=None,
                             fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                             cast_optional_params=False):
    """A BucketingModule whose buckets' symbols are converted (``convert_model``), with the
    current module's parameters."""
    assert isinstance(bucketing_mod, BucketingModule), \
        "module should be instance of bucketing module"
    assert len(bucketing_mod._buckets) > 0, "Bucketing Module should not be empty"
    assert bucketing_mod.params_initialized, \
        "bucketing_mod params should be initialized for mixed precision conversion"
    arg_params = bucketing_mod._curr_module._arg_params
    aux_params = bucketing_mod._curr_module._aux_params
    sym_dict = {}
    for key, val in bucketing_mod._buckets.items():
        sym_dict[key], arg_params, aux_params = convert_model(
            val._symbol, arg_params, aux_params, target_dtype=target_dtype,
            target_dtype_ops=target_dtype_ops, fp32_ops=fp32_ops,
            conditional_fp32_ops=conditional_fp32_ops, excluded_sym_names=excluded_sym_names,
            cast_optional_params=cast_optional_params)
    return BucketingModule.load_dict(
        sym_dict, sym_gen=bucketing_mod._sym_gen, arg_params=arg_params,
        aux_params=aux_params, default_bucket_key=bucketing_mod._default_bucket_key,
        logger=bucketing_mod.logger, context=bucketing_mod._context,
        work_load_list=bucketing_mod._work_load_list,
        fixed_param_names=bucketing_mod._fixed_param_names,
        state_names=bucketing_mod._state_names, group2ctxs=bucketing_mod._group2ctxs,
        compression_params=bucketing_mod._compression_params)

# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from ... import base, ndarray, symbol  # noqa: E402,F401
from ...base import NDArrayHandle, SymbolHandle, check_call, mx_uint  # noqa: E402,F401
from ...ndarray import NDArray, array  # noqa: E402,F401
from ...symbol import contrib as symbol_contrib  # noqa: E402,F401
