"""``mx.operator``: operators written in Python, and what the registry can tell about operators.

``CustomOp``, ``CustomOpProp`` and ``register`` are MXNet's custom-operator interface (see
``neomx/ndarray/custom.py``); ``NumpyOp`` and ``NDArrayOp`` are its older interface, run
through the same ``Custom`` operator.

>>> import neomx as mx
>>> 'Activation' in mx.operator.get_all_registered_operators()
True
>>> mx.operator.get_operator_arguments('Activation').names
['data', 'act_type']
"""
import collections
import ctypes
import itertools

import numpy as np

from .base import (MXNetError, NDArrayHandle, OpHandle, c_str, check_call, mx_float, mx_int,
                   mx_uint, py_str)
from .ndarray.ndarray import NDArray
from .ndarray.custom import CustomOp, CustomOpProp, register
from .ops import registry as _registry

__all__ = ['CustomOp', 'CustomOpProp', 'register', 'PythonOp', 'NumpyOp', 'NDArrayOp',
           'get_all_registered_operators', 'get_operator_arguments', 'OperatorArguments',
           # what MXNet's module also gives ``from mxnet.operator import *`` (its C interface:
           # code casting the arrays of a monitor callback with ctypes)
           'ctypes', 'NDArray', 'NDArrayHandle', 'OpHandle', 'c_str', 'check_call', 'py_str',
           'mx_float', 'mx_int', 'mx_uint']


def get_all_registered_operators():
    """The names (and aliases) of every registered operator."""
    return sorted(_registry.all_ops())


OperatorArguments = collections.namedtuple('OperatorArguments', ['narg', 'names', 'types'])


def get_operator_arguments(op_name):
    """(number of arguments, their names, their types) of operator ``op_name``: its inputs,
    then its attributes, described as MXNet describes them."""
    op = _registry.get(op_name)
    names, types = [], []
    for i in op.inputs:
        names.append(i.lstrip('*'))
        types.append('NDArray-or-Symbol[]' if i.startswith('*') else 'NDArray-or-Symbol')
    for name, parser in op.attrs.items():
        names.append(name)
        types.append(_describe(parser))
    return OperatorArguments(len(names), names, types)


_KINDS = {_registry.Int: 'int', _registry.IntOrNone: 'int or None', _registry.Float: 'float',
          _registry.FloatOrNone: 'float or None', _registry.Bool: 'boolean',
          _registry.Str: 'string', _registry.Shape: 'Shape(tuple)',
          _registry.Axis: 'Shape or None', _registry.DType: 'dtype'}


def _describe(parser):
    if isinstance(parser, _registry.Enum):
        kind = '{%s}' % ', '.join(repr(c) for c in sorted(parser.choices))
        sep = ','
    else:
        kind = _KINDS.get(type(parser), 'string')
        sep = ', '
    if parser.default is _registry.REQUIRED:
        return kind + ', required'
    default = parser.default
    if isinstance(default, bool):
        shown = str(int(default))
    elif isinstance(default, tuple):
        shown = '[%s]' % ','.join(str(d) for d in default)
    elif isinstance(default, str):
        shown = repr(default)
    else:
        shown = str(default)
    return '%s%soptional, default=%s' % (kind, sep, shown)


# -- the older interface: NumpyOp and NDArrayOp ------------------------------------------

class PythonOp:
    """Base of the older Python operators: ``get_symbol(*inputs)`` applies one."""
    _ids = itertools.count()

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad
        self._op_type = None

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """A Symbol applying this operator to the Symbols ``args``."""
        from . import symbol
        if self._op_type is None:
            self._op_type = '_%s%d' % (type(self).__name__.lower(), next(PythonOp._ids))
            register(self._op_type)(_legacy_prop(self))
        return symbol.Custom(*args, op_type=self._op_type, **kwargs)

    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_grad[0]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]] * len(self.list_outputs())

    def list_outputs(self):
        return ['output']

    def list_arguments(self):
        return ['data']

    def need_top_grad(self):
        return self.need_top_grad_


class NumpyOp(PythonOp):
    """An older Python operator computing on NumPy arrays: ``forward(in_data, out_data)`` and
    ``backward(out_grad, in_data, out_data, in_grad)`` write into the given arrays."""
    _numpy = True


class NDArrayOp(PythonOp):
    """An older Python operator computing on NDArrays (as ``NumpyOp``, without the copies)."""
    _numpy = False

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = []
        if self.need_top_grad():
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps


def _legacy_prop(legacy):
    """A CustomOpProp running the older operator ``legacy``."""

    class _Op(CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            outs = _run(lambda i, o: legacy.forward(in_data=i, out_data=o), in_data, out_data)
            for dst, r, src in zip(out_data, req, outs):
                self.assign(dst, r, src)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            grads = _run(lambda g, i, o, ig: legacy.backward(out_grad=g, in_data=i, out_data=o,
                                                             in_grad=ig),
                         out_grad, in_data, out_data, in_grad)
            for dst, r, src in zip(in_grad, req, grads):
                self.assign(dst, r, src)

    def _run(fn, *groups):
        # NumPy operators see copies and write the last group; NDArray operators the arrays.
        if getattr(legacy, '_numpy', False):
            copies = [[a.asnumpy() for a in g] for g in groups]
            fn(*copies)
            return copies[-1]
        fn(*groups)
        return groups[-1]

    class _Prop(CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=legacy.need_top_grad())

        def list_arguments(self):
            return legacy.list_arguments()

        def list_outputs(self):
            return legacy.list_outputs()

        def infer_shape(self, in_shape):
            ret = legacy.infer_shape(in_shape)
            if len(ret) not in (2, 3):
                raise MXNetError("%s.infer_shape must return 2 lists" % type(legacy).__name__)
            return ret[0], ret[1], []

        def infer_type(self, in_type):
            return in_type, [np.float32 if not in_type else in_type[0]] * \
                len(self.list_outputs()), []

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return _Op()

    _Prop.__name__ = type(legacy).__name__ + 'Prop'
    return _Prop
