"""SymbolBlock: a Gluon block made of a Symbol (a graph exported by ``HybridBlock.export``,
by MXNet 1.x, or built with ``mx.sym``), with a Parameter for every argument and auxiliary
state that is not an input.

>>> import neomx as mx
>>> from neomx.gluon import nn, SymbolBlock
>>> net = nn.HybridSequential()
>>> net.add(nn.Dense(4, in_units=3))
>>> net.initialize()
>>> net.hybridize()
>>> y = net(mx.nd.ones((2, 3)))
>>> files = net.export('/tmp/doc_net')
>>> back = SymbolBlock.imports('/tmp/doc_net-symbol.json', ['data'], '/tmp/doc_net-0000.params')
>>> bool((back(mx.nd.ones((2, 3))) == y).asnumpy().all())
True
"""
import copy

import numpy as np

from ..base import MXNetError
from ..ndarray import NDArray
from .. import symbol as _symbol
from ..symbol import Symbol
from . import _hybrid
from .block import HybridBlock
from .parameter import ParameterDict

__all__ = ['SymbolBlock']


def _common_prefix(names):
    if not names:
        return ''
    prefix = names[0]
    for s in names:
        i = 0
        while i < len(prefix) and i < len(s) and prefix[i] == s[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


class SymbolBlock(HybridBlock):
    """A block computing ``outputs`` (a Symbol or a list of them) from the variables
    ``inputs``; the other variables of the graph become its parameters (``params`` to share
    existing ones). Always runs through the compiled graph."""
    _graph_given = True     # hybridized from its graph, never by deferred compute

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock from a ``-symbol.json`` file (neomx's or MXNet's) and, optionally, a
        ``.params`` file (keys ``arg:name``/``aux:name``) loaded onto ``ctx``."""
        sym = _symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [_symbol.var(i, dtype='float32') for i in input_names]
        else:
            inputs = [_symbol.var(i) for i in input_names]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                      cast_dtype=True, dtype_source='saved')
        return ret

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ''
        self._params = ParameterDict('', params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _hybrid.flatten(inputs, 'input')
        out, self._out_format = _hybrid.flatten(outputs, 'output')
        names = []
        for s in syms:
            if s is None or len(s.get_internals().list_outputs()) != 1:
                raise MXNetError("SymbolBlock: input symbols must be variables, but %s is an "
                                 "output of operators" % (s,))
            names.append(s.name)
        out = _symbol.Group(out) if len(out) > 1 else out[0]
        for name, attrs in out.attr_dict().items():
            if attrs.get('__storage_type__') == '1':       # row_sparse
                raise AssertionError("SymbolBlock doesn't support Parameter '%s' because its "
                                     "storage type is 'row_sparse'." % name)
        arg_params = out.list_arguments()
        aux_params = out.list_auxiliary_states()
        arg_types, aux_types = self._param_types(syms, out)
        for name, t in zip(arg_params, arg_types):
            if name not in names:
                self.params.get(name, allow_deferred_init=True, dtype=t)
        for name, t in zip(aux_params, aux_types):
            if name not in names:
                self.params.get(name, grad_req='null', allow_deferred_init=True, dtype=t)
        self._cached_graph = syms, out
        self._input_names = names
        cut = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {k[cut:]: v for k, v in self._params.items()}

    @staticmethod
    def _param_types(inputs, out):
        """The dtypes of the arguments and auxiliary states: float32 inputs unless the input
        variables say otherwise, and what inference gives from there."""
        given = {}
        for s in inputs:
            d = s.attr('__dtype__')
            given[s.name] = int(d) if d is not None else 'float32'
        from ..base import dtype_name
        given = {k: dtype_name(v) for k, v in given.items()}
        arg_t, _, aux_t = out.infer_type_partial(**given)
        fix = lambda ts: [np.float32 if t is None else t for t in ts]  # noqa: E731
        return fix(arg_t), fix(aux_t)

    def __repr__(self):
        syms, out = self._cached_graph
        return '%s(\n%s : %d -> %d\n)' % (type(self).__name__, out, len(syms),
                                          len(out.list_outputs()))

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name in ('_in_format', '_out_format') and hasattr(self, '_cached_graph'):
            # the nesting of the inputs and outputs given after import (GluonTS restores the
            # exported block's): the next call traces with it
            self._clear_cached_op()

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            with x.context:
                return _hybrid.call_cached_op(self, x, *args)
        if not isinstance(x, Symbol):
            raise MXNetError("SymbolBlock requires the first argument to forward be either "
                             "Symbol or NDArray, but got %s" % type(x).__name__)
        return self._compose(x, *args)

    def _compose(self, *args):
        flat, fmt = _hybrid.flatten(list(args), 'input')
        if fmt != self._in_format:
            raise MXNetError("SymbolBlock: invalid input format %s (expected %s)"
                             % (fmt, self._in_format))
        ret = copy.copy(self._cached_graph[1])
        ret._compose(**{k: v for k, v in zip(self._input_names, flat)})
        if self._out_format == 0:
            return ret
        return _hybrid.regroup(list(ret), self._out_format)

    def hybrid_forward(self, F, *args, **params):
        # Traced with F = neomx.symbol: the stored graph with the inputs put in; the
        # parameters are the graph's own variables, named as the Parameters are.
        return self._compose(*args)

    def hybridize(self, active=True, **kwargs):
        # A SymbolBlock always runs compiled; the flags (static_alloc, backend) still apply.
        super().hybridize(True, **kwargs)
