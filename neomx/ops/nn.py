"""Neural-network operators.

Layers with parameters register a ``fill`` rule: given the input shapes with unknown
dimensions as 0 (a ``Dense`` whose ``in_units`` is not known yet), it returns the shapes with
the parameter shapes filled in. Gluon's deferred initialisation and ``Symbol.infer_shape``
both use it.
"""
import torch
import torch.nn.functional as F

from ..base import dtype_torch
from .registry import Bool, DType, Enum, Float, FloatOrNone, Int, Shape, ShapeError, register


def _known(shape):
    return shape is not None and len(shape) > 0 and all(d > 0 for d in shape)


# -- FullyConnected ---------------------------------------------------------------------------

def _fc_fill(attrs, shapes):
    data = shapes[0]
    n = attrs['num_hidden']
    if data is None or not data:
        return shapes
    if attrs['flatten']:
        k = 1
        for d in data[1:]:
            k *= d
    else:
        k = data[-1]
    out = list(shapes)
    out[1] = (n, k)
    if not attrs['no_bias']:
        out[2] = (n,)
    return out


def _fully_connected(data, weight, bias=None, num_hidden=0, no_bias=False, flatten=True):
    """``data @ weight.T + bias``; with ``flatten`` the data is first reshaped to 2-d."""
    if flatten and data.dim() != 2:
        data = data.reshape(data.shape[0], -1)
    if weight.shape[0] != num_hidden:
        raise ShapeError("weight has shape %s, expected (%d, %d)"
                         % (tuple(weight.shape), num_hidden, data.shape[-1]))
    return F.linear(data, weight, None if no_bias else bias)


register('FullyConnected', inputs=('data', 'weight', 'bias'), heavy=True,
         drop_inputs=lambda attrs: ('bias',) if attrs['no_bias'] else (),
         fill=_fc_fill,
         attrs={'num_hidden': Int(), 'no_bias': Bool(False), 'flatten': Bool(True)})(_fully_connected)


# -- activations -------------------------------------------------------------------------

_ACT = {'relu': torch.relu, 'sigmoid': torch.sigmoid, 'tanh': torch.tanh,
        'softrelu': F.softplus, 'softsign': F.softsign, 'log_sigmoid': F.logsigmoid,
        'mish': F.mish}


def _activation(data, act_type):
    return _ACT[act_type](data)


register('Activation', infer=lambda a, s, d: ((s[0],), (d[0],)),
         attrs={'act_type': Enum(*_ACT)})(_activation)


def _softmax_like(f):
    def kernel(data, axis, temperature, dtype, use_length):
        x = data if temperature in (None, 1.0) else data / temperature
        out = f(x, dim=axis % data.dim())
        return out if dtype is None else out.to(dtype_torch(dtype))
    return kernel


_SOFTMAX = {'axis': Int(-1), 'temperature': FloatOrNone(None), 'dtype': DType(None),
            'use_length': Bool(False)}

register('softmax', fluent=True, attrs=_SOFTMAX)(_softmax_like(torch.softmax))
register('log_softmax', fluent=True, attrs=_SOFTMAX)(_softmax_like(torch.log_softmax))


def _dropout(data, p, mode, axes, cudnn_off, is_train, generator):
    """Zeroes elements with probability ``p`` and scales the rest by 1/(1-p) in training
    (or always with ``mode='always'``); the identity otherwise."""
    if p <= 0 or not (is_train or mode == 'always') or data.device.type == 'meta':
        return data.clone() if data.device.type != 'meta' else torch.empty_like(data)
    shape = list(data.shape)
    for a in axes:
        shape[a] = 1
    keep = torch.empty(shape, dtype=torch.float32, device=data.device)
    keep.uniform_(0, 1, generator=generator)
    mask = (keep >= p).to(data.dtype) / (1.0 - p)
    return data * mask


register('Dropout', rng=True, train=True, infer=lambda a, s, d: ((s[0],), (d[0],)),
         attrs={'p': Float(0.5), 'mode': Enum('training', 'always', default='training'),
                'axes': Shape(()),
                'cudnn_off': Bool(False)})(_dropout)
