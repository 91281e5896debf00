"""Layouts, and the one place that decides which kernels run channels-last.

An NDArray's storage is row-major unless a CPU convolution's activations left it
channels-last. torch reads a tensor's strides to choose a kernel's memory format, and a tensor
whose elements lie in row-major order can still carry other strides on its axes of length 1: an
(N, 1, 28, 28) batch permuted from (N, 28, 28, 1) images has strides (784, 1, 28, 1), which
torch takes for channels-last. So kernels calling a layout-sensitive torch function (pooling,
normalisation, resampling) pass their inputs through ``dense`` unless this module says they
take channels-last input.

The rule (the figures behind it: docs/benchmarks.md, "Channels-last activations" and the
subsections after it):

- on a CPU, 4-d float32 convolution, batch normalisation and pooling hand each other
  channels-last activations, as PyTorch's ``channels_last`` models do, imperatively and in
  compiled graphs alike (``runs_channels_last``, ``takes_channels_last``);
- a convolution runs channels-last unless autograd records it and its weight outweighs its
  data four times without being stored channels-last, or it has fewer than 8 output channels
  (``convolution_operands``): torch's elementwise and reduction kernels on channels-last
  activations of so few channels are slow (the book's LeNet with batch normalisation written
  out, 6 channels: 0.86x the time row-major);
- a 1x1 convolution with a stride, of fewer than 16 channels, runs as a stride-1 convolution
  of the subsampled input (the same sums): torch 2.13's oneDNN AVX2 kernel computes a wrong
  weight gradient for such a convolution of channels-last input with 2-7 channels;
- the weight reaches oneDNN channels-last: a channels-last copy made in the graph when autograd
  records the convolution (and the Parameter's weight is tagged, to be stored channels-last at
  its next update for good, with its gradient: ``keep_channels_last``), else kept with the
  Parameter's tensor until the weight changes (``channels_last_weight``);
- 2-d max pooling of 4 or more channels of a row-major input runs ATen's channels-last
  pooling loop on a channels-last copy (``max_pool_by_channels``: the same bits, 1.5-3.6 times
  faster);
- a channels-last result stays so in its array's storage (MXNet keeps oneDNN's layouts the same
  way); the storage goes row-major in place when a view of the array is made, when code outside
  the engine reads it (``NDArray._data``, and so ``asnumpy``), and when it is marked for
  autograd (``ndarray.row_major_storage``). Other gradients autograd writes are row-major.

``NEOMX_CHANNELS_LAST=0`` keeps everything row-major.

>>> import torch
>>> t = torch.zeros(2, 28, 28, 1).permute(0, 3, 1, 2)
>>> t.stride(), dense(t).stride()
((784, 1, 28, 1), (784, 784, 28, 1))
"""
import os

import torch

__all__ = ['row_major', 'dense', 'is_dense', 'is_channels_last', 'channels_last_enabled',
           'runs_channels_last', 'takes_channels_last', 'convolution_operands',
           'channels_last_weight', 'max_pool_by_channels', 'mark_convolved_channels_last',
           'keep_channels_last']

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


def runs_channels_last(data):
    """Whether a 4-d kernel on ``data`` runs channels-last: float32 on a CPU, unless switched
    off."""
    return (data.dim() == 4 and data.dtype == torch.float32 and data.device.type == 'cpu'
            and channels_last_enabled())


def takes_channels_last(data):
    """Whether a batch normalisation or pooling kernel takes ``data`` as it is: channels-last
    input to a kernel that runs channels-last (any other input is made row-major)."""
    return runs_channels_last(data) and is_channels_last(data)


# A convolution that autograd records runs row-major when its weight outweighs its data four
# times and is not stored channels-last: it would pay a channels-last copy of the weight and of
# its gradient at every step (ResNet-18's last stage: 3x3 pixels, 512x512 channels).
_DATA_PER_WEIGHT = 0.25

# Strided 1x1 convolutions of fewer channels run on the subsampled input (oneDNN's AVX2 kernel
# gets 2-7 channels wrong, 8-96 right); with more, the subsampling's backward pass would hand
# the layers before it a row-major gradient.
_SUBSAMPLED_CHANNELS = 16

# A convolution of fewer output channels runs row-major: torch's elementwise and reduction
# kernels on channels-last activations of so few channels (the book's LeNet: 6) run at a
# fraction of their row-major speed, and every kernel after the convolution reads them.
_FEW_CHANNELS = 8


def convolution_operands(data, weight, kernel, stride, pad):
    """(data, weight, stride) that a convolution of row-major-ordered ``data`` (channels
    first) hands torch: channels-last for a 2-d convolution that runs so (see the module
    docstring), else row-major."""
    if len(kernel) == 2 and runs_channels_last(data) and weight.shape[0] >= _FEW_CHANNELS and (
            data.numel() >= _DATA_PER_WEIGHT * weight.numel()
            or not _weight_copied_per_call(weight)):
        if tuple(kernel) == (1, 1) and tuple(stride) != (1, 1) and not any(pad) and \
                data.shape[1] < _SUBSAMPLED_CHANNELS:
            data = data[:, :, ::stride[0], ::stride[1]]
            stride = (1, 1)
        data = data.contiguous(memory_format=torch.channels_last)
        if data.shape[1] == 1 and data.shape[2] * data.shape[3] > 1:
            # one channel: row-major and channels-last order are the same and torch, reading
            # row-major strides, would give a row-major output; spelled-out channels-last
            # strides (the same elements) make the output channels-last for the kernels
            # downstream
            data = data.as_strided(data.shape, (data.shape[2] * data.shape[3], 1,
                                                data.shape[3], 1), data.storage_offset())
        return data, channels_last_weight(weight), stride
    return dense(data), dense(weight), stride


def channels_last_weight(weight):
    """``weight`` in channels-last order, which oneDNN convolves channels-last input with (torch
    copies any other weight so on every call, in the backward pass again): itself when it is
    stored so (a trained Parameter's, see ``keep_channels_last``). Recorded for autograd, the
    copy is made in the graph, so the backward pass reuses it, and a Parameter's weight is
    tagged to be stored channels-last at its next update. In inference, a Parameter's copy is
    kept on its tensor until the weight changes (its version counter, which every in-place
    write moves): each call would otherwise copy every weight again."""
    if weight.is_contiguous(memory_format=torch.channels_last):
        return weight
    if _weight_copied_per_call(weight):
        mark_convolved_channels_last(weight)
        return weight.contiguous(memory_format=torch.channels_last)
    kept = getattr(weight, '_neomx_channels_last', None)
    if kept is not None and kept[0] == weight._version:
        return kept[1]
    copy = weight.contiguous(memory_format=torch.channels_last)
    weight._neomx_channels_last = (weight._version, copy)
    return copy


def _weight_copied_per_call(weight):
    """Whether a channels-last copy of ``weight`` is made on every call: not when it is stored
    channels-last; a variable marked for autograd (a Parameter's array) keeps one outside
    recording."""
    if weight.is_contiguous(memory_format=torch.channels_last):
        return False
    return not (weight.requires_grad and weight.is_leaf) or torch.is_grad_enabled()


def max_pool_by_channels(data):
    """Whether 2-d max pooling of ``data`` runs on torch's channels-last CPU loop (on a
    channels-last copy, ``nn._MaxPool2d``): a row-major float tensor on a CPU with at least 4
    channels. The loop compares 16 channels at once; with the copies in and out it is faster
    from 4 channels on (LeNet's 6: 1.45x), slower with 2 or 3 (docs/benchmarks.md, "Figures
    behind rules")."""
    return (data.device.type == 'cpu' and data.shape[1] >= 4
            and data.dtype in (torch.float32, torch.float64) and not is_channels_last(data))


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
