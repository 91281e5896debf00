"""The estimator: ``fit`` trains a Gluon network on a DataLoader for a number of epochs or
batches, ``evaluate`` runs it on validation data, both driven by event handlers.

>>> import neomx as mx
>>> from neomx import gluon, nd
>>> net = gluon.nn.Dense(2, in_units=3)
>>> net.initialize()
>>> data = gluon.data.DataLoader(gluon.data.ArrayDataset(nd.ones((8, 3)), nd.zeros((8,))),
...                              batch_size=4)
>>> est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(),
...                 trainer=gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1}))
>>> est.logger.setLevel('ERROR')
>>> est.fit(data, epochs=2)
>>> [m.name for m in est.train_metrics]
['training accuracy', 'training softmaxcrossentropyloss']
"""
import copy
import logging
import sys
import warnings

from ....context import Context, cpu, gpu, num_gpus
from ....metric import Loss as metric_loss
from ...data import DataLoader
from ...loss import Loss as gluon_loss
from ...trainer import Trainer
from ...utils import split_and_load
from .batch_processor import BatchProcessor
from .event_handler import (BatchBegin, BatchEnd, EpochBegin, EpochEnd, GradientUpdateHandler,
                            LoggingHandler, MetricHandler, StoppingHandler, TrainBegin, TrainEnd,
                            ValidationHandler, _check_event_handlers)
from .utils import _check_handler_metric_ref, _check_metrics, _suggest_metric_for_loss

__all__ = ['Estimator']


class Estimator:
    """Trains and evaluates ``net`` with ``loss``.

    Parameters
    ----------
    net : gluon.Block
    loss : gluon.loss.Loss
    train_metrics, val_metrics : EvalMetric or list of EvalMetric
        Default: accuracy (for a softmax cross-entropy loss) and the mean loss; the validation
        metrics default to copies of the training ones. Their names get a 'training ' /
        'validation ' prefix.
    initializer : Initializer
        Used when ``net`` is not fully initialized.
    trainer : gluon.Trainer
        Default: SGD with learning rate 0.001.
    context : Context or list of Context
        Default: gpu(0) when there is a GPU, else cpu().
    val_net, val_loss : the network and loss for validation (default ``net`` and ``loss``).
    batch_processor : BatchProcessor
        What one training or validation step does.

    ``logger`` is a ``logging.Logger`` writing INFO and above to stdout.
    """
    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None, initializer=None,
                 trainer=None, context=None, val_net=None, val_loss=None, batch_processor=None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = _check_metrics(train_metrics)
        self._val_metrics = _check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net
        self.logger = logging.Logger(name='Estimator', level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch = self.max_batch = None
        self.batch_axis = 0

    @staticmethod
    def _check_loss(loss):
        if not isinstance(loss, gluon_loss):
            raise ValueError("loss must be a Loss, refer to gluon.loss.Loss:{}".format(loss))
        return loss

    @staticmethod
    def _check_context(context):
        gpus = num_gpus()
        available = [gpu(i) for i in range(gpus)]
        if context is None:
            if gpus > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default. To use "
                              "all your GPUs, give context as a list of gpus, e.g. "
                              "context=[mx.gpu(0), mx.gpu(1)]")
            return [gpu(0)] if gpus else [cpu()]
        if isinstance(context, Context):
            context = [context]
        if not (isinstance(context, list) and all(isinstance(c, Context) for c in context)):
            raise ValueError("context must be a Context or a list of Context, for example "
                             "mx.cpu() or [mx.gpu(0), mx.gpu(1)], refer to mxnet.Context:{}"
                             .format(context))
        for ctx in context:
            # an AssertionError, as MXNet raises
            assert ctx in available or str(ctx).startswith('cpu'), \
                "%s is not available, please make sure your context is in one of: mx.cpu(), %s" \
                % (ctx, ", ".join(map(str, available)))
        return context

    @staticmethod
    def _check_batch_processor(batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        if not (callable(getattr(batch_processor, 'fit_batch', None)) and
                callable(getattr(batch_processor, 'evaluate_batch', None))):
            raise ValueError('Customized Batch Processor must contain fit_batch() and '
                             'evaluate_batch() methods')
        return batch_processor

    def _initialize(self, initializer):
        if not self._is_initialized():
            # layers already initialized keep their values
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You "
                          "don't need to pass initializer if you already initialized your net. "
                          "You can use net.initialize(init=your_initializer, force_reinit=True) "
                          "to force re-initialize.")

    def _check_trainer(self, trainer):
        if not trainer:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate 0.001 "
                          "is used.")
            return Trainer(self.net.collect_params(), 'sgd', {'learning_rate': 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError("Trainer must be a Gluon Trainer instance, refer to "
                             "gluon.Trainer:{}".format(trainer))
        return trainer

    def _is_initialized(self):
        params = self.net.collect_params()
        for name in params:
            try:
                params[name].list_ctx()
            except RuntimeError:
                return False
        return True

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def _add_default_training_metrics(self):
        if not self._train_metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            self._train_metrics.append(metric_loss(self.loss.name.rstrip('1234567890')))
        for metric in self._train_metrics:
            metric.name = 'training ' + metric.name

    def _add_validation_metrics(self):
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            if 'training' in metric.name:
                metric.name = metric.name.replace('training', 'validation')
            else:
                metric.name = 'validation ' + metric.name

    @property
    def train_metrics(self):
        return self._train_metrics

    @property
    def val_metrics(self):
        return self._val_metrics

    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """Runs ``val_net`` over ``val_data`` (a DataLoader) updating the validation metrics;
        ``event_handlers`` are added to a default MetricHandler and LoggingHandler."""
        if not isinstance(val_data, DataLoader):
            raise ValueError("Estimator only support input as Gluon DataLoader. Alternatively, "
                             "you can transform your DataIter or any NDArray into Gluon "
                             "DataLoader. Refer to gluon.data.DataLoader")
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = \
            self._categorize_handlers(handlers)
        for handler in epoch_begin:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for handler in batch_end:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in epoch_end:
            handler.epoch_end(self)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis=0):
        """Trains on ``train_data`` (a DataLoader) for ``epochs`` epochs or ``batches`` batches
        (exactly one of them), validating on ``val_data`` after each epoch when given.
        ``event_handlers`` join the defaults (stopping, gradient update, metrics, validation,
        logging), which are added only where no handler of their type is given."""
        if not isinstance(train_data, DataLoader):
            raise ValueError("Estimator only support input as Gluon DataLoader. Alternatively, "
                             "you can transform your DataIter or any NDArray into Gluon "
                             "DataLoader. Refer to gluon.data.dataloader")
        if (not epochs) == (not batches):
            raise ValueError("Fit only support exactly one type of iteration, train by number of "
                             "epochs or number of batches. Please specify one and only one of: "
                             "epochs or batches.")
        self.max_epoch = epochs
        self.max_batch = batches
        self.batch_axis = batch_axis
        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize_handlers(handlers)
        for handler in train_begin:
            handler.train_begin(self)
        while True:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            for batch in train_data:
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                stop = [handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                        for handler in batch_end]
                if any(stop):
                    break
            if any([handler.epoch_end(self) for handler in epoch_end]):
                break
        for handler in train_end:
            handler.train_end(self)

    def _with_defaults(self, event_handlers, defaults, known):
        handlers = _check_event_handlers(event_handlers)
        mixing = bool(handlers) and bool(defaults)
        handlers.extend(defaults)
        if mixing:   # user handlers and defaults must refer to the same metrics
            for handler in handlers:
                _check_handler_metric_ref(handler, known)
        handlers.sort(key=lambda h: getattr(h, 'priority', 0))
        return handlers

    def _prepare_default_handlers(self, val_data, event_handlers):
        given = _check_event_handlers(event_handlers)

        def missing(cls):
            return not any(isinstance(h, cls) for h in given)
        defaults = [StoppingHandler(self.max_epoch, self.max_batch)]
        if missing(GradientUpdateHandler):
            defaults.append(GradientUpdateHandler())
        if missing(MetricHandler):
            defaults.append(MetricHandler(metrics=self.train_metrics))
        if missing(ValidationHandler) and val_data:
            defaults.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if missing(LoggingHandler):
            defaults.append(LoggingHandler(metrics=self.train_metrics))
        return self._with_defaults(given, defaults,
                                   set(self.train_metrics + self.val_metrics))

    def _prepare_default_validation_handlers(self, event_handlers):
        given = _check_event_handlers(event_handlers)
        defaults = []
        if not any(isinstance(h, MetricHandler) for h in given):
            defaults.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in given):
            defaults.append(LoggingHandler(metrics=self.val_metrics))
        return self._with_defaults(given, defaults, set(self.val_metrics))

    @staticmethod
    def _categorize_handlers(event_handlers):
        """The handlers of each event, in order: train begin, epoch begin, batch begin, batch
        end, epoch end, train end."""
        kinds = ((TrainBegin, []), (EpochBegin, []), (BatchBegin, []), (BatchEnd, []),
                 (EpochEnd, []), (TrainEnd, []))
        for handler in event_handlers:
            for cls, found in kinds:
                if isinstance(handler, cls):
                    found.append(handler)
        return tuple(found for _, found in kinds)
