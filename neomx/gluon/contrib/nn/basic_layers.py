"""Contrib layers of ``gluon.contrib.nn``.

>>> import neomx as mx
>>> net = HybridConcurrent(axis=1)
>>> net.add(mx.gluon.nn.Dense(3, in_units=2), Identity())
>>> net.initialize()
>>> net(mx.nd.ones((4, 2))).shape
(4, 5)
>>> PixelShuffle2D((2, 3))(mx.nd.zeros((1, 12, 3, 5))).shape
(1, 2, 6, 15)
"""
import warnings

from .... import context
from .... import ndarray as nd
from ...block import Block, HybridBlock
from ...nn import BatchNorm, HybridSequential, Sequential

__all__ = ['Concurrent', 'HybridConcurrent', 'Identity', 'SparseEmbedding', 'SyncBatchNorm',
           'PixelShuffle1D', 'PixelShuffle2D', 'PixelShuffle3D']


class Concurrent(Sequential):
    """Feeds the input to every child and concatenates their outputs along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    """Feeds the input to every (hybrid) child and concatenates their outputs along
    ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Returns its input (a residual branch of a ``HybridConcurrent``)."""

    def hybrid_forward(self, F, x):
        return x


class SparseEmbedding(Block):
    """An embedding whose weight and gradient are row_sparse, for very large vocabularies: the
    rows looked up are pulled from the weight's Trainer's store (so a ``gluon.Trainer`` must
    be made with the parameters before the first call), and only they get a gradient."""

    def __init__(self, input_dim, output_dim, dtype='float32', weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim, 'dtype': dtype,
                        'sparse_grad': True}
        self.weight = self.params.get('weight', shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype='row_sparse', stype='row_sparse')

    def forward(self, x):
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, name='fwd', **self._kwargs)

    def __repr__(self):
        return '{block_name}({input_dim} -> {output_dim}, {dtype})'.format(
            block_name=type(self).__name__, **self._kwargs)


class SyncBatchNorm(BatchNorm):
    """Batch normalisation with the statistics of the whole mini-batch across ``num_devices``
    devices (Zhang et al., "Context Encoding for Semantic Segmentation", 2018), over axis 1.

    neomx computes it for one device per process (``num_devices=1``, the default without
    GPUs), where it is exactly ``nn.BatchNorm``; synchronising several devices of one process
    is refused with an error at the first forward pass.

    Parameters are those of ``nn.BatchNorm`` (without ``axis``), and ``num_devices`` (default:
    the number of GPUs, at least 1).
    """

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, beta_initializer='zeros',
                 gamma_initializer='ones', running_mean_initializer='zeros',
                 running_variance_initializer='ones', **kwargs):
        super().__init__(axis=1, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                         use_global_stats=use_global_stats, beta_initializer=beta_initializer,
                         gamma_initializer=gamma_initializer,
                         running_mean_initializer=running_mean_initializer,
                         running_variance_initializer=running_variance_initializer,
                         in_channels=in_channels, **kwargs)
        if num_devices is None:
            num_devices = self._get_num_devices()
        self._kwargs = {'eps': epsilon, 'momentum': momentum, 'fix_gamma': not scale,
                        'use_global_stats': use_global_stats, 'ndev': num_devices,
                        'key': self.prefix}

    def _get_num_devices(self):
        warnings.warn("Caution using SyncBatchNorm: if not using all the GPUs, please manually "
                      "set num_devices", UserWarning)
        return max(context.num_gpus(), 1)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var, name='fwd',
                                       **self._kwargs)


class _PixelShuffle(HybridBlock):
    """Moves groups of ``prod(factors)`` channels into blocks of pixels: (N, C * f1 * ... * fk,
    d1, ..., dk) to (N, C, d1 * f1, ..., dk * fk)."""
    _dims = 0

    def __init__(self, factor):
        super().__init__()
        try:
            self._factors = (int(factor),) * self._dims
        except TypeError:
            self._factors = tuple(int(f) for f in factor)
        if len(self._factors) != self._dims:
            raise ValueError("%s: factor needs %d values, got %s"
                             % (type(self).__name__, self._dims, factor))

    def hybrid_forward(self, F, x):
        k, fs = self._dims, self._factors
        keep = (0,) * k
        total = 1
        for f in fs:
            total *= f
        x = F.reshape(x, (0, -4, -1, total) + keep)                  # (N, C, f1..fk, d...)
        for i, f in enumerate(fs[:-1]):                                # split f1..fk apart
            x = F.reshape(x, (0, 0) + (0,) * i + (-4, f, -1) + keep)
        # (N, C, f1, ..., fk, d1, ..., dk) -> (N, C, d1, f1, ..., dk, fk)
        axes = (0, 1) + sum(((2 + k + i, 2 + i) for i in range(k)), ())
        x = F.transpose(x, axes)
        return F.reshape(x, (0, 0) + (-3,) * k)

    def __repr__(self):
        return '{}({})'.format(type(self).__name__,
                               self._factors[0] if self._dims == 1 else self._factors)


class PixelShuffle1D(_PixelShuffle):
    """Pixel shuffle in 1-d: (N, f * C, W) to (N, C, W * f).

    >>> PixelShuffle1D(2)(nd.zeros((1, 8, 3))).shape
    (1, 4, 6)
    """
    _dims = 1


class PixelShuffle2D(_PixelShuffle):
    """Pixel shuffle in 2-d (Shi et al. 2016): (N, f1 * f2 * C, H, W) to (N, C, H * f1,
    W * f2); ``factor`` is an int or (f1, f2)."""
    _dims = 2


class PixelShuffle3D(_PixelShuffle):
    """Pixel (voxel) shuffle in 3-d: (N, f1 * f2 * f3 * C, D, H, W) to (N, C, D * f1, H * f2,
    W * f3)."""
    _dims = 3
