"""Checks shared by the estimator and its handlers."""
from ...loss import SoftmaxCrossEntropyLoss
from ....metric import Accuracy, CompositeEvalMetric, EvalMetric


def _check_metrics(metrics):
    """A list of EvalMetrics from a metric, a composite metric (flattened), a list or None."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for metric in metrics.metrics for m in _check_metrics(metric)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = list(metrics or [])
    if not all(isinstance(m, EvalMetric) for m in metrics):
        raise ValueError("metrics must be a Metric or a list of Metric, refer to "
                         "mxnet.metric.EvalMetric: {}".format(metrics))
    return metrics


def _check_handler_metric_ref(handler, known_metrics):
    """Every metric a handler refers to (attributes named *metric* or *monitor*) must be one
    of the estimator's."""
    for attribute in dir(handler):
        if 'metric' not in attribute and 'monitor' not in attribute:
            continue
        reference = getattr(handler, attribute)
        if not reference or callable(reference) and not isinstance(reference, EvalMetric):
            continue
        for metric in reference if isinstance(reference, list) else [reference]:
            _check_metric_known(handler, metric, known_metrics)


def _check_metric_known(handler, metric, known_metrics):
    if metric not in known_metrics:
        raise ValueError(
            'Event handler {} refers to a metric instance {} outside of the known training and '
            'validation metrics. Please use the metrics from estimator.train_metrics and '
            'estimator.val_metrics instead.'.format(type(handler).__name__, metric))


def _suggest_metric_for_loss(loss):
    return Accuracy() if isinstance(loss, SoftmaxCrossEntropyLoss) else None
