"""What the code generator knows of operators besides their kernels, by operator name.

- ``LOWER[name](attrs, in_shapes, in_dtypes)`` gives ``(format string over the input
  expressions, {name: object it uses})`` calling torch directly for these attributes and
  inputs, or None to call the kernel;
- ``IN_PLACE[name](attrs)`` gives a format string computing the operator in place on its one
  input (``{0}``), or None;
- ``UNREAD_OUTPUT``: the operators whose first output is a tensor of their own (or a view,
  which the generated code checks for) that their backward pass does not read. An in-place
  operator may overwrite such an output when it is the output's only reader
  (``codegen._overwrites``); a wrong entry makes the backward pass fail on a modified saved
  tensor.

>>> from neomx.symbol.lowering import IN_PLACE
>>> IN_PLACE['relu']({})
'torch.relu_({0})'
"""
import weakref

import torch
import torch.nn.functional as F

__all__ = ['LOWER', 'IN_PLACE', 'UNREAD_OUTPUT', 'linear']

_TRANSPOSED = {}    # id(weight) -> (weakref to it, its version, its contiguous transpose)


def _transposed(w):
    key = id(w)
    e = _TRANSPOSED.get(key)
    if e is None or e[0]() is not w or e[1] != w._version:
        def forget(ref, key=key):
            if _TRANSPOSED.get(key, (None,))[0] is ref:
                del _TRANSPOSED[key]
        e = _TRANSPOSED[key] = (weakref.ref(w, forget), w._version, w.t().contiguous())
    return e[2]


def linear(x, w, b):
    """``x @ w.T + b`` for generated code. For a few rows outside autograd it multiplies by a
    cached contiguous transpose of the weight (made again whenever the weight is written),
    which BLAS runs much faster than a transposed view for matrix-vector products."""
    if x.shape[0] <= 8 and w.numel() <= 1 << 21 and not torch.is_grad_enabled():
        wt = _transposed(w)
        return torch.mm(x, wt) if b is None else torch.addmm(b, x, wt)
    return F.linear(x, w, b)


def _fully_connected(attrs, shapes, dtypes):
    data = shapes[0]
    if data is None or len(data) != 2 or (len(shapes) > 2 and shapes[2] is not None
                                          and len(shapes[2]) != 1):
        return None
    return '_linear({0}, {1}, %s)' % ('None' if attrs['no_bias'] else '{2}'), {'_linear': linear}


_ACT_CALLS = {'relu': 'torch.relu({0})', 'sigmoid': 'torch.sigmoid({0})',
              'tanh': 'torch.tanh({0})', 'softrelu': 'torch.nn.functional.softplus({0})'}


def _activation(attrs, shapes, dtypes):
    call = _ACT_CALLS.get(attrs['act_type'])
    return None if call is None else (call, {})


LOWER = {'FullyConnected': _fully_connected, 'Activation': _activation}

IN_PLACE = {
    'relu': lambda attrs: 'torch.relu_({0})',
    'Activation': lambda attrs: 'torch.relu_({0})' if attrs['act_type'] == 'relu' else None,
}

# Convolution, FullyConnected and BatchNorm save their inputs, not their output; add and
# subtract save nothing.
UNREAD_OUTPUT = frozenset(('Convolution', 'FullyConnected', 'BatchNorm', 'BatchNorm_v1',
                           'broadcast_add', 'broadcast_sub', 'elemwise_add', 'elemwise_sub'))
