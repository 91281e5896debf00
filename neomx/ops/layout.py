"""Row-major strides: the one layout an NDArray's storage has (MXNet's only layout) and the one
neomx hands to torch's layout-sensitive kernels.

torch reads a tensor's strides to choose a kernel's memory format. A tensor whose elements lie
in row-major order can still carry other strides on its axes of length 1: an (N, 1, 28, 28)
batch permuted from (N, 28, 28, 1) images has strides (784, 1, 28, 1), which torch takes for
channels-last, and torch 2.13's CPU convolution computes wrong gradients and corrupts memory on
channels-last input (oneDNN's AVX2 kernels; a 1x1 convolution with stride 2 is enough).

>>> import torch
>>> t = torch.zeros(2, 28, 28, 1).permute(0, 3, 1, 2)
>>> t.stride(), dense(t).stride()
((784, 1, 28, 1), (784, 784, 28, 1))
"""
__all__ = ['row_major', 'dense', 'is_dense']

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
