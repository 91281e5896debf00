"""Losses (``gluon.loss``), as in MXNet 1.9: each returns one value per sample, the mean
(or sum, for KLDivLoss) over every axis but ``batch_axis``, scaled by ``weight`` and
multiplied by the broadcast ``sample_weight`` when given.

>>> import neomx as mx
>>> loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
>>> pred = mx.nd.array([[10.0, 0.0], [0.0, 10.0]])
>>> loss(pred, mx.nd.array([0, 0])).shape
(2,)
"""
import numpy as np

from .. import ndarray
from ..base import MXNetError, numeric_types
from .block import HybridBlock

__all__ = ['Loss', 'L2Loss', 'L1Loss', 'SigmoidBinaryCrossEntropyLoss', 'SigmoidBCELoss',
           'SoftmaxCrossEntropyLoss', 'SoftmaxCELoss', 'KLDivLoss', 'CTCLoss', 'HuberLoss',
           'HingeLoss',
           'SquaredHingeLoss', 'LogisticLoss', 'TripletLoss', 'PoissonNLLLoss',
           'CosineEmbeddingLoss', 'SDMLLoss']


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """``loss * sample_weight * weight`` (sample_weight broadcast, weight a number)."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        if not isinstance(weight, numeric_types):
            raise MXNetError("loss weight must be a number, got %r" % (weight,))
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):
    """``x`` with ``y``'s shape (labels given as (N,) for predictions of (N, 1), ...)."""
    if F is ndarray:
        return x.reshape(y.shape)
    return F.reshape_like(x, y)


class Loss(HybridBlock):
    """The base of losses: ``weight`` scales the loss, ``batch_axis`` is kept."""

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        return '{name}(batch_axis={_batch_axis}, w={_weight})'.format(
            name=self.__class__.__name__, **self.__dict__)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError

    def _mean(self, F, loss):
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class L2Loss(Loss):
    """``0.5 * (label - pred)^2``, averaged per sample.

    >>> import neomx as mx
    >>> loss = mx.gluon.loss.L2Loss()
    >>> loss(mx.nd.array([[1.0, 2.0]]), mx.nd.array([[0.0, 0.0]])).asnumpy().tolist()
    [1.25]
    """

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(label - pred)
        loss = _apply_weighting(F, loss, self._weight / 2, sample_weight)
        return self._mean(F, loss)


class L1Loss(Loss):
    """``|label - pred|``, averaged per sample."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean(F, loss)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross-entropy on logits (or on probabilities with ``from_sigmoid``), in the
    numerically stable form ``max(x, 0) - x*z + log(1 + exp(-|x|))``; ``pos_weight`` weights
    the positive class."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + \
                    F.Activation(-F.abs(pred), act_type='softrelu')
            else:
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * \
                    (F.Activation(-F.abs(pred), act_type='softrelu') + F.relu(-pred))
        else:
            eps = 1e-12
            if pos_weight is None:
                loss = -(F.log(pred + eps) * label + F.log(1. - pred + eps) * (1. - label))
            else:
                loss = -(F.broadcast_mul(F.log(pred + eps) * label, pos_weight)
                         + F.log(1. - pred + eps) * (1. - label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean(F, loss)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """``-log softmax(pred)[label]`` along ``axis``; with ``sparse_label=False`` the label
    is a distribution (``-sum(label * log softmax(pred))``); ``from_logits`` takes ``pred``
    as log-probabilities already."""

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean(F, loss)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    """``label * (log(label) - pred)`` summed per sample; ``pred`` holds log-probabilities
    (``from_logits=True``, the default) or logits (``from_logits=False``)."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    """Connectionist temporal classification loss, one value per sequence. ``pred`` holds
    activations (softmax is applied inside) laid out as ``layout`` ('NTC' or 'TNC'); the
    label (``label_layout`` 'NT' or 'TN') is padded with -1, the last class being the blank.
    ``pred_lengths`` and ``label_lengths`` give each sequence's lengths when they vary."""

    def __init__(self, layout='NTC', label_layout='NT', weight=None, **kwargs):
        if layout not in ('NTC', 'TNC'):
            raise MXNetError("Only 'NTC' and 'TNC' layouts for pred are supported. Got: %s"
                             % layout)
        if label_layout not in ('NT', 'TN'):
            raise MXNetError("Only 'NT' and 'TN' layouts for label are supported. Got: %s"
                             % label_layout)
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find('N'), **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None,
                       sample_weight=None):
        if self._layout == 'NTC':
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        loss = F.CTCLoss(pred, label, pred_lengths, label_lengths,
                         use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label='last')
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    """Smooth L1: ``|d| - rho/2`` where ``|d| > rho``, else ``d^2 / (2 rho)``."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho,
                       (0.5 / self._rho) * F.square(loss))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean(F, loss)


class HingeLoss(Loss):
    """``max(0, margin - pred * label)`` for labels in {-1, 1}."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.relu(self._margin - pred * label)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean(F, loss)


class SquaredHingeLoss(Loss):
    """``max(0, margin - pred * label)^2`` for labels in {-1, 1}."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        loss = F.square(F.relu(self._margin - pred * label))
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean(F, loss)


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))`` for labels in {-1, 1} (``label_format='signed'``) or
    {0, 1} (``'binary'``)."""

    def __init__(self, weight=None, batch_axis=0, label_format='signed', **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if self._label_format not in ('signed', 'binary'):
            raise ValueError("label_format can only be signed or binary, recieved %s."
                             % label_format)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, label, pred)
        if self._label_format == 'signed':
            label = (label + 1.0) / 2.0
        loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type='softrelu')
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return self._mean(F, loss)


class TripletLoss(Loss):
    """``max(0, |pred - positive|^2 - |pred - negative|^2 + margin)`` per sample."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative):
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, None)


class PoissonNLLLoss(Loss):
    """Negative log-likelihood of a Poisson target (``pred`` is the log-rate with
    ``from_logits``); the mean over everything, with the Stirling term if
    ``compute_full``."""

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling = target * F.log(target) - target + 0.5 * F.log(2 * target * np.pi)
            loss = loss + stirling * (target > 1)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    """``1 - cos(x1, x2)`` for label 1, ``max(0, cos(x1, x2) - margin)`` for label -1."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = _reshape_like(F, input1, input2)
        label = label.reshape((-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        cos_sim_a = (1 - cos_sim) * (label == 1)
        cos_sim_b = F.relu((label == -1) * (cos_sim - self._margin))
        loss = _apply_weighting(F, cos_sim_a + cos_sim_b, self._weight, sample_weight)
        return loss

    def _cosine_similarity(self, F, x, y, axis=-1):
        x_norm = F.norm(x, axis=axis).reshape((-1, 1))
        y_norm = F.norm(y, axis=axis).reshape((-1, 1))
        x_dot_y = F.sum(x * y, axis=axis).reshape((-1, 1))
        return x_dot_y / F.maximum(x_norm * y_norm, 1e-12)


class SDMLLoss(Loss):
    """Smoothed Deep Metric Learning loss (Bonadiman et al., 2019) of two batches of vectors
    ``x1`` and ``x2`` (batch_size, dim) whose rows pair up: x1[i] with x2[i], every other
    row of the batch being a negative. Per row of x1: the KL divergence from a softmax over
    the negative squared distances to all rows of x2 to labels that put
    ``1 - smoothing_parameter`` on its pair and share the rest among the others.

    >>> import neomx as mx
    >>> x = mx.nd.array([[0., 1.], [1., 0.]])
    >>> mx.gluon.loss.SDMLLoss()(x, x).shape
    (2,)
    """

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def _labels(self, F, batch_size):
        gold = F.eye(batch_size)
        return gold * (1 - self.smoothing_parameter) + \
            (1 - gold) * self.smoothing_parameter / (batch_size - 1)

    def hybrid_forward(self, F, x1, x2):
        if x1.shape != x2.shape or len(x1.shape) != 2:
            raise MXNetError("SDMLLoss: x1 and x2 must be batches of vectors of one shape "
                             "(batch_size, dim), got %s and %s" % (x1.shape, x2.shape))
        n, dim = x1.shape
        diffs = x1.expand_dims(1).broadcast_to((n, n, dim)) - \
            x2.expand_dims(0).broadcast_to((n, n, dim))
        distances = (diffs ** 2).sum(axis=2)
        log_probabilities = F.log_softmax(-distances, axis=1)
        labels = self._labels(F, n).as_in_context(distances.context)
        return self.kl_loss(log_probabilities, labels)


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from ..util import is_np_array  # noqa: E402,F401
