"""Layouts: row-major strides, which an NDArray's storage has unless a CPU convolution's
activations left it channels-last (below), and which neomx hands to torch's layout-sensitive
kernels other than convolution, batch normalisation and pooling.

torch reads a tensor's strides to choose a kernel's memory format. A tensor whose elements lie
in row-major order can still carry other strides on its axes of length 1: an (N, 1, 28, 28)
batch permuted from (N, 28, 28, 1) images has strides (784, 1, 28, 1), which torch takes for
channels-last, and torch 2.13's CPU convolution computes wrong gradients and corrupts memory on
channels-last input (oneDNN's AVX2 kernels; a 1x1 convolution with stride 2 is enough).

That failure is narrow. Held to its AVX2 kernels (``ONEDNN_MAX_CPU_ISA=AVX2``; a CPU without
AVX-512), oneDNN computes the weight gradient of a 1x1 convolution with a stride of 2-4 wrong
(relative error 0.2-1, in 2-20% of calls) when its input is channels-last and has 2-7
channels, and after a few calls its backward pass can hang; every other case of 7,560 (kernels
1, 3, 5; strides 1-3; padding; dilation; depthwise groups; 1-64 channels; channels-last or
mixed with a row-major weight) gives float32-exact results there, so did 600 strided 1x1 calls
each of 8-16 channels and 4,536 cases of 8-96, and so did every case tried on AVX-512 kernels,
also with two threads convolving at once (docs/benchmarks.md, "Channels-last activations" and
the subsection after it).

So on a CPU, 4-d float32 convolution, batch normalisation and pooling hand each other
channels-last activations, as PyTorch's ``channels_last`` models do, imperatively and in
compiled graphs alike, and a 1x1 convolution with a stride of fewer than 16 channels runs as a
stride-1 convolution of the subsampled input (the same sums). Such a result is kept
channels-last in its array's storage (MXNet keeps oneDNN's layouts the same way); the storage
goes row-major in place when a view of the array is made, when code outside the engine reads it
(``NDArray._data``, and so ``asnumpy``), and when it is marked for autograd
(``ndarray.row_major_storage``). A convolution hands oneDNN a row-major weight through a
channels-last copy (made in the graph when autograd records it, else kept with a Parameter's
tensor until the weight changes; ``nn._channels_last_weight``); a Parameter's weight that
channels-last convolutions train is stored channels-last from its first update on
(``keep_channels_last``), and so is its gradient. Other gradients autograd writes are
row-major. ``NEOMX_CHANNELS_LAST=0`` keeps everything row-major.

>>> import torch
>>> t = torch.zeros(2, 28, 28, 1).permute(0, 3, 1, 2)
>>> t.stride(), dense(t).stride()
((784, 1, 28, 1), (784, 784, 28, 1))
"""
import os

import torch

__all__ = ['row_major', 'dense', 'is_dense', 'is_channels_last', 'channels_last_enabled',
           'mark_convolved_channels_last', 'keep_channels_last']

_STRIDES = {}


def row_major(shape):
    """The row-major strides of ``shape`` (a tuple), as torch gives a new contiguous tensor."""
    s = _STRIDES.get(shape)
    if s is None:
        acc, out = 1, []
        for d in reversed(shape):
            out.append(acc)
            acc *= max(d, 1)
        s = tuple(reversed(out))
        if len(_STRIDES) > 4096:
            _STRIDES.clear()
        _STRIDES[shape] = s
    return s


def is_dense(t):
    """Whether tensor ``t`` has row-major strides (an empty tensor always has)."""
    return t.stride() == row_major(tuple(t.shape)) or t.numel() == 0


def dense(t):
    """``t`` with row-major strides: ``t`` itself when it has them, a view when only the strides
    of its axes of length 1 differ (no copy), else a row-major copy. An empty tensor is
    returned as it is: it has no elements to lay out."""
    if t.stride() == row_major(tuple(t.shape)) or t.numel() == 0:
        return t
    if t.is_contiguous():
        return t.view(-1).view(t.shape)     # view(t.shape) alone may keep the strides
    return t.contiguous()


def channels_last_enabled():
    """Whether CPU convolutions may run channels-last (``NEOMX_CHANNELS_LAST``, default 1)."""
    return os.environ.get('NEOMX_CHANNELS_LAST', '1') not in ('0', 'false', 'False', '')


def is_channels_last(t):
    """Whether ``t`` is a 4-d tensor whose elements lie in channels-last order and not also in
    row-major order (a tensor of one channel, or of 1x1 images, is both)."""
    return (t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last)
            and not t.is_contiguous())


def mark_convolved_channels_last(weight):
    """Notes that a channels-last convolution read ``weight``: when it is a marked variable
    (autograd's leaf, a Parameter's array), the optimizer's next update lays it out
    channels-last for good (``keep_channels_last``)."""
    if weight.is_leaf and weight.requires_grad:
        weight._neomx_convolved_channels_last = True


def keep_channels_last(weight, states):
    """Lays the marked variable ``weight`` out channels-last in place, with the states of its
    update that have its shape (optimizer state arrays, ``(NDArray, ...)``), once channels-last
    convolutions have read it: it is then handed to oneDNN as it is, and its gradient comes
    back channels-last, where a row-major weight costs a copy each way on every step. The
    optimizer calls this in its update, which has the weight and states to itself; the leaf
    stays the same tensor, as autograd requires. Returns the weight's tensor."""
    if not getattr(weight, '_neomx_convolved_channels_last', False) or \
            weight.is_contiguous(memory_format=torch.channels_last):
        return weight
    weight.data = weight.data.contiguous(memory_format=torch.channels_last)
    for a in states:
        t = None if a is None or a._view is not None else a._var.tensor
        if t is not None and t.shape == weight.shape:
            a._var.tensor = t.contiguous(memory_format=torch.channels_last)
    return weight
