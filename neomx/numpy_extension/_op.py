"""The operators of ``mx.npx``. Most are the legacy Gluon operators (``FullyConnected``,
``Convolution``, ``BatchNorm``, ...) taking and giving ``mx.np.ndarray``; the rest have NumPy
semantics of their own (``npx.reshape``'s codes, ``npx.softmax`` with lengths)."""
from ..base import dtype_name
from ..ndarray.gen import bind_args, nd_function, parse_ctx
from ..ndarray.ndarray import NDArray, invoke
from ..ops import registry
from ..numpy.multiarray import _as_np, _invoke, _is_symbol, _np, ndarray

__all__ = ['activation', 'batch_norm', 'convolution', 'deconvolution', 'dropout', 'embedding',
           'fully_connected', 'layer_norm', 'leaky_relu', 'pooling', 'rnn', 'one_hot', 'pick',
           'sequence_mask', 'topk', 'batch_dot', 'batch_flatten', 'gather_nd', 'arange_like',
           'shape_array', 'smooth_l1', 'softmax', 'log_softmax', 'masked_softmax',
           'masked_log_softmax', 'relu', 'sigmoid', 'slice', 'reshape', 'reshape_like', 'cast',
           'constraint_check', 'nonzero', 'erf', 'erfinv', 'gamma', 'gammaln', 'stop_gradient',
           'broadcast_like', 'slice_channel', 'index_add', 'index_update', 'instance_norm',
           'group_norm', 'softmin', 'digamma', 'ctc_loss', 'roi_pooling', 'multibox_prior',
           'multibox_target', 'multibox_detection', 'box_nms', 'box_iou', 'bilinear_sampler',
           'grid_generator', 'spatial_transformer', 'foreach', 'while_loop', 'cond',
           'seed_all', 'interleaved_matmul_selfatt_qk', 'interleaved_matmul_selfatt_valatt',
           'layout_transform']


def _legacy(opname, pyname):
    """``npx.<pyname>``: legacy operator ``opname`` on ndarrays, giving ndarrays."""
    op = registry.get(opname)
    fn_nd = nd_function(op)

    def fn(*args, out=None, name=None, ctx=None, **kwargs):
        if any(_is_symbol(a) for a in list(args) + list(kwargs.values())):
            from ..symbol import _OPS_BY_NAME
            return _OPS_BY_NAME(opname)(*args, name=name, **kwargs).as_np_ndarray()
        args = tuple(a.as_np_ndarray() if isinstance(a, NDArray) and a.__class__ is not
                     ndarray else a for a in args)
        kwargs = {k: (v.as_np_ndarray() if isinstance(v, NDArray) and v.__class__ is not
                      ndarray else v) for k, v in kwargs.items()}
        return _np(fn_nd(*args, out=out, ctx=ctx, **kwargs))
    fn.__name__ = fn.__qualname__ = pyname
    fn.__doc__ = op.__doc__
    fn.op = op
    return fn


def _optional(opname, pyname):
    """``npx.<pyname>`` when operator ``opname`` is registered; None (the name is then left
    out of the module, as MXNet 1.9.1's npx leaves out most of these) otherwise."""
    if registry.exists(opname):
        return _legacy(opname, pyname)
    return None


activation = _legacy('Activation', 'activation')
batch_norm = _legacy('BatchNorm', 'batch_norm')
convolution = _legacy('Convolution', 'convolution')
deconvolution = _legacy('Deconvolution', 'deconvolution')
dropout = _legacy('Dropout', 'dropout')
embedding = _legacy('Embedding', 'embedding')
fully_connected = _legacy('FullyConnected', 'fully_connected')
layer_norm = _legacy('LayerNorm', 'layer_norm')
leaky_relu = _legacy('LeakyReLU', 'leaky_relu')
pooling = _legacy('Pooling', 'pooling')
rnn = _optional('RNN', 'rnn')
one_hot = _legacy('one_hot', 'one_hot')
pick = _legacy('pick', 'pick')
sequence_mask = _legacy('SequenceMask', 'sequence_mask')
topk = _legacy('topk', 'topk')
batch_dot = _legacy('batch_dot', 'batch_dot')
batch_flatten = _legacy('Flatten', 'batch_flatten')
gather_nd = _legacy('gather_nd', 'gather_nd')
smooth_l1 = _legacy('smooth_l1', 'smooth_l1')
log_softmax = _legacy('log_softmax', 'log_softmax')
softmin = _legacy('softmin', 'softmin')
_slice = _legacy('slice', 'slice')


def slice(data, begin, end, step=None, out=None, name=None):  # pylint: disable=redefined-builtin
    """``data[begin[0]:end[0]:step[0], ...]`` (None entries take the defaults)."""
    return _slice(data, begin=tuple(begin), end=tuple(end),
                  step=() if step is None else tuple(step), out=out)
reshape_like = _legacy('reshape_like', 'reshape_like')
broadcast_like = _legacy('broadcast_like', 'broadcast_like')
cast = _legacy('Cast', 'cast')
erf = _legacy('erf', 'erf')
erfinv = _legacy('erfinv', 'erfinv')
gamma = _legacy('gamma', 'gamma')
gammaln = _legacy('gammaln', 'gammaln')
stop_gradient = _legacy('BlockGrad', 'stop_gradient')
slice_channel = _legacy('SliceChannel', 'slice_channel')
instance_norm = _optional('InstanceNorm', 'instance_norm')
group_norm = _optional('GroupNorm', 'group_norm')
digamma = _optional('digamma', 'digamma')
ctc_loss = _optional('CTCLoss', 'ctc_loss')
roi_pooling = _optional('ROIPooling', 'roi_pooling')
multibox_prior = _optional('_contrib_MultiBoxPrior', 'multibox_prior')
multibox_target = _optional('_contrib_MultiBoxTarget', 'multibox_target')
multibox_detection = _optional('_contrib_MultiBoxDetection', 'multibox_detection')
box_nms = _optional('_contrib_box_nms', 'box_nms')
box_iou = _optional('_contrib_box_iou', 'box_iou')
bilinear_sampler = _optional('BilinearSampler', 'bilinear_sampler')
grid_generator = _optional('GridGenerator', 'grid_generator')
spatial_transformer = _optional('SpatialTransformer', 'spatial_transformer')
index_add = _optional('_contrib_index_add', 'index_add')
index_update = _optional('_contrib_index_update', 'index_update')
interleaved_matmul_selfatt_qk = _optional('_contrib_interleaved_matmul_selfatt_qk',
                                          'interleaved_matmul_selfatt_qk')
interleaved_matmul_selfatt_valatt = _optional('_contrib_interleaved_matmul_selfatt_valatt',
                                              'interleaved_matmul_selfatt_valatt')
layout_transform = _optional('_npx_layout_transform', 'layout_transform')
foreach = _optional('_foreach', 'foreach')
while_loop = _optional('_while_loop', 'while_loop')
cond = _optional('_cond', 'cond')


def relu(data, out=None, name=None):
    """``max(data, 0)`` elementwise."""
    return _invoke('_npx_relu', (_as_np(data),), out=out)


def sigmoid(data, out=None, name=None):
    """``1 / (1 + exp(-data))`` elementwise."""
    return _invoke('_npx_sigmoid', (_as_np(data),), out=out)


def softmax(data, length=None, axis=-1, temperature=None, dtype=None, use_length=False,
            out=None, name=None):
    """The softmax along ``axis``; with ``use_length``, over the first ``length`` entries of
    each row only (the rest are 0)."""
    data = _as_np(data)
    if use_length or length is not None:
        op = registry.get('softmax')
        attrs = op.parse_attrs({'axis': axis, 'temperature': temperature, 'dtype': dtype,
                                'use_length': True})
        return _np(invoke(op, (data, _as_np(length)), attrs, out=out))
    op = registry.get('softmax')
    attrs = op.parse_attrs({'axis': axis, 'temperature': temperature, 'dtype': dtype})
    return _np(invoke(op, (data,), attrs, out=out))


def masked_softmax(data, mask, axis=-1, temperature=1.0, normalize=True):
    """The softmax along ``axis`` over the entries where ``mask`` is true (0 elsewhere)."""
    from .. import numpy as np
    data = _as_np(data)
    mask = _as_np(mask)
    x = data / temperature
    neg = np.where(mask, x, -1e18 if data._dtype != 'float16' else -1e4)
    e = np.exp(neg - np.max(neg, axis=axis, keepdims=True)) * mask
    return e / np.maximum(np.sum(e, axis=axis, keepdims=True), 1e-30)


def masked_log_softmax(data, mask, axis=-1, temperature=1.0, normalize=True):
    """The log of ``masked_softmax`` (-inf where ``mask`` is false)."""
    from .. import numpy as np
    r = masked_softmax(data, mask, axis, temperature, normalize)
    return np.where(_as_np(mask), np.log(np.maximum(r, 1e-30)), -np.inf)


def reshape(a, newshape, reverse=False, order='C'):
    """``a`` reshaped with NumPy's -1 and MXNet's codes -2 to -6 (see ``npx_reshape_target``
    in ops/numpy.py)."""
    if isinstance(newshape, int):
        newshape = (newshape,)
    return _invoke('_npx_reshape', (_as_np(a),), newshape=tuple(newshape),
                   reverse=bool(reverse), order=order)


def constraint_check(x, msg='Constraint violated.'):
    """``array(True)`` when every element of ``x`` is true; raises ValueError(msg) otherwise."""
    return _invoke('_npx_constraint_check', (_as_np(x),), msg=msg)


def nonzero(a):
    """The indices of the non-zero elements as a 2-d int64 array, one row per element."""
    from ..numpy._op import argwhere
    if a.ndim == 0:         # a 0-d array counts as one element: shape (n, 1), not (n, 0)
        a = a.reshape(1)
    return argwhere(a)


def arange_like(data, start=0.0, step=1.0, repeat=1, ctx=None, axis=None):
    """``arange`` with the shape of ``data`` (or the length of its ``axis``)."""
    return _invoke('_npx_arange_like', (_as_np(data),), start=start, step=step, repeat=repeat,
                   axis=axis)


def shape_array(data):
    """The shape of ``data`` as an int64 array."""
    return _invoke('_npi_shape_array', (_as_np(data),))


def seed_all(seed):
    from ..ndarray import random as _random
    _random.seed(seed)


# operators this build lacks are absent (AttributeError), not functions that raise
for _name in [n for n in __all__ if globals().get(n, 0) is None]:
    del globals()[_name]
    __all__.remove(_name)
