"""Evaluation metrics with MXNet 1.9's interface and values.

A metric accumulates over batches with ``update(labels, preds)`` (lists of NDArrays, or one
each) and reports with ``get()`` (``(name, value)``), ``get_name_value()`` and, since the last
``reset_local()``, the local values; ``reset()`` starts over. Metrics read their inputs on the
host (``asnumpy``), so an update waits for the arrays it is given.

>>> import neomx as mx
>>> acc = mx.metric.Accuracy()
>>> acc.update(labels=[mx.nd.array([0, 1, 1])],
...            preds=[mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
>>> acc.get()
('accuracy', 0.6666666666666666)
>>> mx.metric.create(['acc', 'ce']).get()[0]
['accuracy', 'cross-entropy']
"""
import json
import math
import warnings
from collections import OrderedDict

import numpy

from .base import numeric_types, string_types
from .ndarray import NDArray

__all__ = ['EvalMetric', 'CompositeEvalMetric', 'Accuracy', 'TopKAccuracy', 'F1', 'MCC',
           'Perplexity', 'MAE', 'MSE', 'RMSE', 'CrossEntropy', 'NegativeLogLikelihood',
           'PearsonCorrelation', 'PCC', 'Loss', 'Torch', 'Caffe', 'CustomMetric', 'np',
           'create', 'register', 'alias', 'check_label_shapes']


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Checks that ``labels`` and ``preds`` have the same length (or ``shape``); with
    ``wrap``, a single NDArray becomes a list of one."""
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError("Shape of labels {} does not match shape of "
                         "predictions {}".format(label_shape, pred_shape))
    if wrap:
        if isinstance(labels, NDArray):
            labels = [labels]
        if isinstance(preds, NDArray):
            preds = [preds]
    return labels, preds


def _host(x):
    return x.asnumpy() if isinstance(x, NDArray) else numpy.asarray(x)


# -- registry ------------------------------------------------------------------------------

_REGISTRY = {}


def register(klass, name=None):
    """Registers a metric class under ``name`` (its lower-cased class name by default)."""
    if not (isinstance(klass, type) and issubclass(klass, EvalMetric)):
        raise TypeError("Can only register subclass of EvalMetric, got %r" % (klass,))
    name = (name or klass.__name__).lower()
    if name in _REGISTRY:
        warnings.warn("New metric %s.%s registered with name %s is overriding existing metric "
                      "%s.%s" % (klass.__module__, klass.__name__, name,
                                 _REGISTRY[name].__module__, _REGISTRY[name].__name__),
                      UserWarning, stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases):
    """Class decorator registering the class under extra names."""
    def reg(klass):
        for name in aliases:
            register(klass, name)
        return klass
    return reg


def _create(*args, **kwargs):
    if args:
        name, args = args[0], args[1:]
    else:
        name = kwargs.pop('metric')
    if isinstance(name, EvalMetric):
        if args or kwargs:
            raise ValueError("metric is already an instance. Additional arguments are invalid")
        return name
    if isinstance(name, dict):
        return _create(**name)
    if not isinstance(name, string_types):
        raise TypeError("metric must be of string type, got %r" % (name,))
    if name.startswith('['):
        name, kwargs = json.loads(name)
        return _create(name, **kwargs)
    if name.startswith('{'):
        return _create(**json.loads(name))
    cls = _REGISTRY.get(name.lower())
    if cls is None:
        raise ValueError("%s is not registered. Please register with metric.register first "
                         "(known: %s)" % (name, ', '.join(sorted(_REGISTRY))))
    return cls(*args, **kwargs)


def create(metric, *args, **kwargs):
    """A metric from a name ('acc', 'ce', 'mse', ...), an instance, a function
    ``f(label, pred)`` of numpy arrays (a CustomMetric), or a list of these (a
    CompositeEvalMetric).

    >>> import neomx as mx
    >>> type(mx.metric.create('top_k_accuracy', top_k=5)).__name__
    'TopKAccuracy'
    """
    if callable(metric) and not isinstance(metric, EvalMetric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _create(metric, *args, **kwargs)


# -- the base class ------------------------------------------------------------------------

class EvalMetric:
    """Base class of the metrics: ``sum_metric / num_inst`` since the last ``reset_local``
    (``get``) and since the last ``reset`` (``get_global``)."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return "EvalMetric: {}".format(dict(self.get_name_value()))

    def get_config(self):
        """The arguments that recreate this metric with ``metric.create(**config)``."""
        config = self._kwargs.copy()
        config.update({'metric': self.__class__.__name__, 'name': self.name,
                       'output_names': self.output_names, 'label_names': self.label_names})
        return config

    def update_dict(self, label, pred):
        """``update`` from dicts of name -> array, keeping ``label_names``/``output_names``."""
        pred = [pred[n] for n in self.output_names] if self.output_names is not None \
            else list(pred.values())
        label = [label[n] for n in self.label_names] if self.label_names is not None \
            else list(label.values())
        self.update(label, pred)

    def update(self, labels, preds):
        raise NotImplementedError("%s must define update(labels, preds)" % type(self).__name__)

    def _add(self, value, count):
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count

    def reset(self):
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, self.global_sum_metric / self.global_num_inst)

    def get_name_value(self):
        """``[(name, value), ...]``."""
        return _zip_pairs(self.get())

    def get_global_name_value(self):
        if not self._has_global_stats:
            return self.get_name_value()
        return _zip_pairs(self.get_global())


def _zip_pairs(name_value):
    name, value = name_value
    if not isinstance(name, list):
        name = [name]
    if not isinstance(value, list):
        value = [value]
    return list(zip(name, value))


@register
@alias('composite')
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` returns lists of names and values."""

    def __init__(self, metrics=None, name='composite', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric):
        self.metrics.append(create(metric))

    def get_metric(self, index):
        try:
            return self.metrics[index]
        except IndexError:
            raise ValueError("Metric index {} is out of range 0 and {}"
                             .format(index, len(self.metrics))) from None

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, 'metrics', ()):
            metric.reset()

    def reset_local(self):
        for metric in getattr(self, 'metrics', ()):
            metric.reset_local()

    def _collect(self, method):
        names, values = [], []
        for metric in self.metrics:
            name, value = getattr(metric, method)()
            names.extend([name] if isinstance(name, string_types) else name)
            values.extend([value] if isinstance(value, numeric_types) else value)
        return (names, values)

    def get(self):
        return self._collect('get')

    def get_global(self):
        return self._collect('get_global')

    def get_config(self):
        config = super().get_config()
        config.update({'metrics': [i.get_config() for i in self.metrics]})
        return config


# -- classification ------------------------------------------------------------------------

@register
@alias('acc')
class Accuracy(EvalMetric):
    """The fraction of predictions equal to the labels; predictions that are scores (an extra
    ``axis``) are reduced with argmax first."""

    def __init__(self, axis=1, name='accuracy', output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            pred = _host(pred)
            label = _host(label)
            if pred.shape != label.shape:
                pred = numpy.argmax(pred, axis=self.axis)
            pred = pred.astype('int32').ravel()
            label = label.astype('int32').ravel()
            check_label_shapes(label, pred)
            self._add(int((pred == label).sum()), len(pred))


@register
@alias('top_k_accuracy', 'top_k_acc')
class TopKAccuracy(EvalMetric):
    """The fraction of samples whose label is among the ``top_k`` highest scores."""

    def __init__(self, top_k=1, name='top_k_accuracy', output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = top_k
        if self.top_k <= 1:
            raise ValueError('Please use Accuracy if top_k is no more than 1 (top_k=%d)' % top_k)
        self.name += '_%d' % self.top_k

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            if len(pred.shape) > 2:
                raise ValueError('Predictions should be no more than 2 dims, got shape %s'
                                 % (pred.shape,))
            pred = numpy.argpartition(_host(pred).astype('float32'), -self.top_k)
            label = _host(label).astype('int32')
            check_label_shapes(label, pred)
            num_samples = pred.shape[0]
            if pred.ndim == 1:
                correct = int((pred.flat == label.flat).sum())
            else:
                num_classes = pred.shape[1]
                correct = sum(int((pred[:, num_classes - 1 - j].flat == label.flat).sum())
                              for j in range(min(num_classes, self.top_k)))
            self._add(correct, num_samples)


class _BinaryClassificationMetrics:
    """True/false positive/negative counts of a binary classifier, local and global."""

    def __init__(self):
        self.reset_stats()

    def update_binary_stats(self, label, pred):
        pred = _host(pred)
        label = _host(label).astype('int32')
        pred_label = numpy.argmax(pred, axis=1)
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError("%s currently only supports binary classification."
                             % self.__class__.__name__)
        pred_true = (pred_label == 1)
        pred_false = 1 - pred_true
        label_true = (label == 1)
        label_false = 1 - label_true
        counts = {'true_positives': (pred_true * label_true).sum(),
                  'false_positives': (pred_true * label_false).sum(),
                  'false_negatives': (pred_false * label_true).sum(),
                  'true_negatives': (pred_false * label_false).sum()}
        for k, v in counts.items():
            setattr(self, k, getattr(self, k) + v)
            setattr(self, 'global_' + k, getattr(self, 'global_' + k) + v)

    @staticmethod
    def _ratio(a, b):
        return float(a) / (a + b) if a + b > 0 else 0.

    @staticmethod
    def _f(p, r):
        return 2 * p * r / (p + r) if p + r > 0 else 0.

    @property
    def precision(self):
        return self._ratio(self.true_positives, self.false_positives)

    @property
    def global_precision(self):
        return self._ratio(self.global_true_positives, self.global_false_positives)

    @property
    def recall(self):
        return self._ratio(self.true_positives, self.false_negatives)

    @property
    def global_recall(self):
        return self._ratio(self.global_true_positives, self.global_false_negatives)

    @property
    def fscore(self):
        return self._f(self.precision, self.recall)

    @property
    def global_fscore(self):
        return self._f(self.global_precision, self.global_recall)

    def matthewscc(self, use_global=False):
        """Matthews' correlation coefficient (0 terms of the denominator count as 1)."""
        p = 'global_' if use_global else ''
        if not (self.global_total_examples if use_global else self.total_examples):
            return 0.
        tp, fp, fn, tn = (float(getattr(self, p + k)) for k in
                          ('true_positives', 'false_positives', 'false_negatives',
                           'true_negatives'))
        denom = 1.
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0.:
                denom *= t
        return ((tp * tn) - (fp * fn)) / math.sqrt(denom)

    @property
    def total_examples(self):
        return self.false_negatives + self.false_positives + self.true_negatives + \
            self.true_positives

    @property
    def global_total_examples(self):
        return self.global_false_negatives + self.global_false_positives + \
            self.global_true_negatives + self.global_true_positives

    def local_reset_stats(self):
        self.false_positives = self.false_negatives = 0
        self.true_positives = self.true_negatives = 0

    def reset_stats(self):
        self.local_reset_stats()
        self.global_false_positives = self.global_false_negatives = 0
        self.global_true_positives = self.global_true_negatives = 0


class _BinaryMetric(EvalMetric):
    """F1 and MCC: a score of the binary counts, averaged over batches (``average='macro'``)
    or computed over all samples (``'micro'``)."""

    def __init__(self, name, output_names, label_names, average):
        self.average = average
        self.metrics = _BinaryClassificationMetrics()
        EvalMetric.__init__(self, name=name, output_names=output_names,
                            label_names=label_names, has_global_stats=True)

    def _score(self, use_global):
        raise NotImplementedError()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self.metrics.update_binary_stats(label, pred)
        m = self.metrics
        if self.average == "macro":
            self.sum_metric += self._score(False)
            self.global_sum_metric += self._score(True)
            self.num_inst += 1
            self.global_num_inst += 1
            m.reset_stats()
        else:
            self.sum_metric = self._score(False) * m.total_examples
            self.global_sum_metric = self._score(True) * m.global_total_examples
            self.num_inst = m.total_examples
            self.global_num_inst = m.global_total_examples

    def reset(self):
        super().reset()
        self.metrics.reset_stats()

    def reset_local(self):
        super().reset_local()
        self.metrics.local_reset_stats()


@register
class F1(_BinaryMetric):
    """The F1 score of a binary classifier: ``2 * precision * recall / (precision + recall)``.

    >>> import neomx as mx
    >>> f1 = mx.metric.F1()
    >>> f1.update([mx.nd.array([0., 1., 1.])], [mx.nd.array([[0.3, 0.7], [0., 1.], [0.4, 0.6]])])
    >>> float(f1.get()[1])
    0.8
    """

    def __init__(self, name='f1', output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global):
        return self.metrics.global_fscore if use_global else self.metrics.fscore


@register
class MCC(_BinaryMetric):
    """Matthews' correlation coefficient of a binary classifier."""

    def __init__(self, name='mcc', output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global):
        return self.metrics.matthewscc(use_global)


@register
class Perplexity(EvalMetric):
    """``exp`` of the mean negative log-probability of the labels; labels equal to
    ``ignore_label`` do not count. ``axis`` is the class axis of the predictions.

    >>> import neomx as mx
    >>> p = mx.metric.Perplexity(ignore_label=None)
    >>> p.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
    >>> round(p.get()[1], 6)
    1.771098
    """

    def __init__(self, ignore_label, axis=-1, name='perplexity', output_names=None,
                 label_names=None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        if len(labels) != len(preds):
            raise ValueError("Perplexity: %d labels and %d predictions"
                             % (len(labels), len(preds)))
        loss = 0.
        num = 0
        for label, pred in zip(labels, preds):
            if label.size != pred.size / pred.shape[-1]:
                raise ValueError("shape mismatch: %s vs. %s" % (label.shape, pred.shape))
            label = _host(label).reshape(-1).astype('int32')
            pred = numpy.moveaxis(_host(pred), self.axis, -1)
            # out-of-range labels pick the nearest class, as MXNet's pick (mode='clip') does
            picked = numpy.clip(label, 0, pred.shape[-1] - 1)
            prob = pred.reshape(-1, pred.shape[-1])[numpy.arange(label.size), picked]
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(prob.dtype)
                num -= int(ignore.sum())
                prob = prob * (1 - ignore) + ignore
            loss -= float(numpy.log(numpy.maximum(prob, 1e-10)).sum())
            num += prob.size
        self._add(loss, num)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


# -- regression ----------------------------------------------------------------------------

class _Regression(EvalMetric):
    """A per-batch error of labels and predictions (1-d arrays taken as columns), averaged
    over batches."""

    def __init__(self, name, output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    @staticmethod
    def _error(label, pred):
        raise NotImplementedError()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _host(label), _host(pred)
            if label.ndim == 1:
                label = label.reshape(label.shape[0], 1)
            if pred.ndim == 1:
                pred = pred.reshape(pred.shape[0], 1)
            self._add(self._error(label, pred), 1)


@register
class MAE(_Regression):
    """Mean absolute error.

    >>> import neomx as mx
    >>> m = mx.metric.MAE()
    >>> m.update([mx.nd.array([2.5, 0.0, 2, 8])], [mx.nd.array([3, -0.5, 2, 7])])
    >>> float(m.get()[1])
    0.5
    """

    def __init__(self, name='mae', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(label, pred):
        return numpy.abs(label - pred).mean()


@register
class MSE(_Regression):
    """Mean squared error."""

    def __init__(self, name='mse', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(label, pred):
        return ((label - pred) ** 2.0).mean()


@register
class RMSE(_Regression):
    """Root mean squared error (of each batch, averaged over batches)."""

    def __init__(self, name='rmse', output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(label, pred):
        return numpy.sqrt(((label - pred) ** 2.0).mean())


class _LabelLogLoss(EvalMetric):
    """``-log(p[label] + eps)`` summed over samples, averaged per sample."""

    def __init__(self, eps, name, output_names, label_names):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _host(label).ravel()
            pred = _host(pred)
            if label.shape[0] != pred.shape[0]:
                raise ValueError("%s: %d labels for %d predictions"
                                 % (self.name, label.shape[0], pred.shape[0]))
            prob = pred[numpy.arange(label.shape[0], dtype=numpy.int64), numpy.int64(label)]
            self._add((-numpy.log(prob + self.eps)).sum(), label.shape[0])


@register
@alias('ce')
class CrossEntropy(_LabelLogLoss):
    """Cross entropy of predicted probabilities and integer labels.

    >>> import neomx as mx
    >>> ce = mx.metric.CrossEntropy()
    >>> ce.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
    >>> round(float(ce.get()[1]), 6)
    0.571599
    """

    def __init__(self, eps=1e-12, name='cross-entropy', output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias('nll_loss')
class NegativeLogLikelihood(_LabelLogLoss):
    """Negative log-likelihood of predicted probabilities and integer labels."""

    def __init__(self, eps=1e-12, name='nll-loss', output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias('pearsonr')
class PearsonCorrelation(EvalMetric):
    """Pearson's correlation of labels and predictions, per batch averaged (``'macro'``) or
    over all samples (``'micro'``)."""

    def __init__(self, name='pearsonr', output_names=None, label_names=None, average='macro'):
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def reset_micro(self):
        self._sse_p = self._mean_p = self._sse_l = self._mean_l = 0
        self._pred_nums = self._label_nums = 0
        self._conv = 0

    def reset(self):
        super().reset()
        if self.average == 'micro':
            self.reset_micro()

    @staticmethod
    def update_variance(new_values, *aggregate):
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += numpy.sum(delta / count)
        delta_2 = new_values - mean
        m_2 += numpy.sum(delta * delta_2)
        return count, mean, m_2

    def update_cov(self, label, pred):
        self._conv = self._conv + numpy.sum((label - self._mean_l) * (pred - self._mean_p))

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = _host(label).ravel().astype(numpy.float64)
            pred = _host(pred).ravel().astype(numpy.float64)
            if self.average == 'macro':
                self._add(numpy.corrcoef(pred, label)[0, 1], 1)
            else:
                self._add(0, 1)
                self._label_nums, self._mean_l, self._sse_l = \
                    self.update_variance(label, self._label_nums, self._mean_l, self._sse_l)
                self.update_cov(label, pred)
                self._pred_nums, self._mean_p, self._sse_p = \
                    self.update_variance(pred, self._pred_nums, self._mean_p, self._sse_p)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float('nan'))
        if self.average == 'macro':
            return (self.name, self.sum_metric / self.num_inst)
        n = self._label_nums
        return (self.name, self._conv / ((n - 1) * numpy.sqrt(self._sse_p / (n - 1))
                                         * numpy.sqrt(self._sse_l / (n - 1))))


@register
class PCC(EvalMetric):
    """The multiclass generalisation of Matthews' correlation coefficient, from the confusion
    matrix of all samples since the last reset."""

    def __init__(self, name='pcc', output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc):
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), 'constant', constant_values=0)
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), 'constant', constant_values=0)
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float('nan')
        cov_xy = numpy.sum(cmat.diagonal() * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _host(label).astype('int32')
            pred = _host(pred)
            pred = pred.argmax(axis=1) if pred.shape != label.shape else pred.astype('int32')
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(n + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            for i, j in zip(pred, label):
                bcm[i, j] += 1
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @sum_metric.setter
    def sum_metric(self, value):
        pass    # derived from the confusion matrix

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    @global_sum_metric.setter
    def global_sum_metric(self, value):
        pass

    def reset(self):
        self.global_num_inst = 0.
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.
        self.lcm = numpy.zeros((self.k, self.k))


@register
class Loss(EvalMetric):
    """The mean of loss values passed as predictions (labels are ignored).

    >>> import neomx as mx
    >>> m = mx.metric.Loss()
    >>> m.update(None, [mx.nd.array([1., 2., 3.])])
    >>> m.get()
    ('loss', 2.0)
    """

    def __init__(self, name='loss', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _, preds):
        if isinstance(preds, NDArray):
            preds = [preds]
        for pred in preds:
            self._add(float(_host(pred).sum()), pred.size)


@register
class Torch(Loss):
    """Dummy metric for torch criterions."""

    def __init__(self, name='torch', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """Dummy metric for caffe criterions."""

    def __init__(self, name='caffe', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)`` on numpy arrays, returning a value (one instance)
    or ``(sum_metric, num_inst)``.

    >>> import neomx as mx
    >>> m = mx.metric.CustomMetric(lambda l, p: abs(l - p).mean())
    >>> m.update([mx.nd.array([1., 2.])], [mx.nd.array([1., 4.])])
    >>> m.name, float(m.get()[1])
    ('custom(<lambda>)', 1.0)
    """

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if name is None:
            name = feval.__name__
            if name.find('<') != -1:
                name = 'custom(%s)' % name
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            reval = self._feval(_host(label), _host(pred))
            if isinstance(reval, tuple):
                self._add(reval[0], reval[1])
            else:
                self._add(reval, 1)

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A CustomMetric from ``numpy_feval(label, pred)`` on numpy arrays."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from . import ndarray, registry  # noqa: E402,F401
