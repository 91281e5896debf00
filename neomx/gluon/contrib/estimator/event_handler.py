"""Event handlers of the estimator: objects with ``train_begin``, ``epoch_begin``,
``batch_begin``, ``batch_end``, ``epoch_end`` and ``train_end`` methods (one base class per
event). Handlers run in ascending ``priority`` (default 0); a ``batch_end`` or ``epoch_end``
returning True stops the epoch or the training."""
import os
import time
import warnings

import numpy as np

from ....metric import CompositeEvalMetric, EvalMetric
from ....metric import Loss as metric_loss
from .utils import _check_metrics

__all__ = ['TrainBegin', 'TrainEnd', 'EpochBegin', 'EpochEnd', 'BatchBegin', 'BatchEnd',
           'StoppingHandler', 'MetricHandler', 'ValidationHandler', 'LoggingHandler',
           'CheckpointHandler', 'EarlyStoppingHandler', 'GradientUpdateHandler']


class EventHandler:
    pass


def _check_event_handlers(handlers):
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = list(handlers or [])
    if not all(isinstance(h, EventHandler) for h in handlers):
        raise ValueError("handlers must be an EventHandler or a list of EventHandler, "
                         "got: {}".format(handlers))
    return handlers


class TrainBegin(EventHandler):
    def train_begin(self, estimator, *args, **kwargs):
        pass


class TrainEnd(EventHandler):
    def train_end(self, estimator, *args, **kwargs):
        pass


class EpochBegin(EventHandler):
    def epoch_begin(self, estimator, *args, **kwargs):
        pass


class EpochEnd(EventHandler):
    def epoch_end(self, estimator, *args, **kwargs):
        return False


class BatchBegin(EventHandler):
    def batch_begin(self, estimator, *args, **kwargs):
        pass


class BatchEnd(EventHandler):
    def batch_end(self, estimator, *args, **kwargs):
        return False


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stops training after ``max_epoch`` epochs or ``max_batch`` batches (the estimator's, read
    at train begin)."""

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Resets ``metrics`` at each epoch and updates them at each batch end: loss metrics with
    the losses, the others with labels and predictions."""

    def __init__(self, metrics, priority=-1000):
        self.metrics = _check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        pred, label, loss = kwargs['pred'], kwargs['label'], kwargs['loss']
        for metric in self.metrics:
            if isinstance(metric, metric_loss):
                metric.update(0, loss)
            else:
                metric.update(label, pred)


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Runs ``eval_fn(val_data=..., batch_axis=..., event_handlers=...)`` every
    ``epoch_period`` epochs and, when given, every ``batch_period`` batches."""

    def __init__(self, val_data, eval_fn, epoch_period=1, batch_period=None, priority=-1000,
                 event_handlers=None):
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        # validation metrics must be computed before the handlers that read them
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = 0
        self.current_epoch = 0

    def _validate(self, estimator):
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._validate(estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._validate(estimator)


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Logs the optimizer and learning rate at train begin, ``metrics`` at each epoch end (and
    every ``log_interval`` batches when it is an int), and totals at train end, through
    ``estimator.logger``. Runs last (priority infinity)."""

    def __init__(self, log_interval='epoch', metrics=None, priority=np.inf):
        if not isinstance(log_interval, int) and log_interval != 'epoch':
            raise ValueError("log_interval must be either an integer or string 'epoch'")
        self.metrics = _check_metrics(metrics)
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.priority = priority
        self.log_interval = log_interval
        self.log_interval_time = 0

    def _metrics_text(self):
        return ''.join('%s: %.4f, ' % metric.get() for metric in self.metrics)

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning rate "
                              "%.4f ", type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        msg = 'Train finished using total %ds with %d epochs. ' % (
            time.time() - self.train_start, self.current_epoch)
        estimator.logger.info((msg + self._metrics_text()).rstrip(', '))

    def batch_begin(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.log_interval_time += time.time() - self.batch_start
            self.processed_samples += kwargs['batch'][0].shape[0]
            if self.batch_index % self.log_interval == 0:
                msg = '[Epoch %d][Batch %d][Samples %s] time/interval: %.3fs ' % (
                    self.current_epoch, self.batch_index, self.processed_samples,
                    self.log_interval_time)
                self.log_interval_time = 0
                estimator.logger.info((msg + self._metrics_text()).rstrip(', '))
        self.batch_index += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        if any('training' in metric.name for metric in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        msg = '[Epoch %d] Finished in %.3fs, ' % (self.current_epoch,
                                                   time.time() - self.epoch_start)
        estimator.logger.info((msg + self._metrics_text()).rstrip(', '))
        self.current_epoch += 1
        self.batch_index = 0


def _monitor_op(handler, mode, what):
    """np.less or np.greater for ``mode`` ('min', 'max', or 'auto': greater for accuracy- and
    F1-like metrics, less otherwise)."""
    if mode not in ('auto', 'min', 'max'):
        warnings.warn('%s mode %s is unknown, fallback to auto mode.' % (what, mode),
                      RuntimeWarning)
        mode = 'auto'
    if mode == 'auto':
        name = handler.monitor.get()[0].lower()
        mode = 'max' if ('acc' in name or 'f1' in name) else 'min'
        warnings.warn("`%s` operator will be used to determine if %s has improved. Specify "
                      "mode='min' or mode='max' to choose and disable this warning."
                      % ('greater' if mode == 'max' else 'less', handler.monitor.get()[0]))
    return np.greater if mode == 'max' else np.less


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Saves the parameters (``<prefix>-epoch<E>batch<B>.params``) and trainer states
    (``.states``) every ``epoch_period`` epochs or ``batch_period`` batches, keeping the last
    ``max_checkpoints``; the symbol (``<prefix>-symbol.json``) after the first batch when the
    net is hybridized; with ``save_best``, also ``<prefix>-best.*`` whenever ``monitor``
    improves. ``resume_from_checkpoint`` loads the latest checkpoint in ``model_dir`` at train
    begin and trains only the remaining epochs or batches."""

    def __init__(self, model_dir, model_prefix='model', monitor=None, verbose=0,
                 save_best=False, mode='auto', epoch_period=1, batch_period=None,
                 max_checkpoints=5, resume_from_checkpoint=False):
        self.monitor = monitor
        self.verbose = verbose
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.save_best = save_best
        if save_best and not isinstance(monitor, EvalMetric):
            raise ValueError("To save best model only, please provide one of the metric objects "
                             "from estimator.train_metrics and estimator.val_metrics as monitor.")
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.saved_checkpoints = []
        self.trained_epoch = self.trained_batch = -1
        if save_best:
            self.monitor_op = _monitor_op(self, mode, 'CheckpointHandler')
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.current_batch = 0
        if self.save_best:
            self.best = np.inf if self.monitor_op is np.less else -np.inf
        if self.resume_from_checkpoint:
            msg = ("To use resume from checkpoint, you must only specify the same type of period "
                   "you used for training: for training by epochs, save by epochs only "
                   "(batch_period=None), for training by batches, by batches only.")
            if estimator.max_batch:
                assert self.batch_period and not self.epoch_period, msg
            if estimator.max_epoch:
                assert self.epoch_period and not self.batch_period, msg
            self._resume_from_checkpoint(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    def _save_checkpoint(self, estimator):
        if self.resume_from_checkpoint:
            # numbered after the checkpoint resumed from
            epoch = self.current_epoch + self.trained_epoch + 1
            batch = self.current_batch + self.trained_batch + (0 if estimator.max_epoch else 1)
        else:
            epoch, batch = self.current_epoch, self.current_batch
        prefix = "%s-epoch%dbatch%d" % (self.model_prefix, epoch, batch)
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info('[Epoch %d] CheckpointHandler: trained total %d batches, saving '
                                  'model at %s with prefix: %s', self.current_epoch,
                                  self.current_batch + 1, self.model_dir, prefix)
        if not self.save_best:
            return
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                'Skipping save best because %s is not updated, make sure you pass one of the '
                'metric objects estimator.train_metrics and estimator.val_metrics as monitor'
                % name))
        elif self.monitor_op(value, self.best):
            prefix = self.model_prefix + '-best'
            self._save_params_and_trainer(estimator, prefix)
            if self.verbose > 0:
                estimator.logger.info('[Epoch %d] CheckpointHandler: %s improved from %0.5f to '
                                      '%0.5f, updating best model at %s with prefix: %s',
                                      self.current_epoch, name, self.best, value,
                                      self.model_dir, prefix)
            self.best = value
        elif self.verbose > 0:
            estimator.logger.info('[Epoch %d] CheckpointHandler: %s did not improve from %0.5f, '
                                  'skipping updating best model', self.current_epoch, name,
                                  self.best)

    def _save_symbol(self, estimator):
        symbol_file = os.path.join(self.model_dir, self.model_prefix + '-symbol.json')
        export = getattr(estimator.net, 'export', None)
        if export is not None and getattr(estimator.net, '_active', False):
            try:
                estimator.net.export(os.path.join(self.model_dir, self.model_prefix + '-tmp'))
                os.replace(os.path.join(self.model_dir, self.model_prefix + '-tmp-symbol.json'),
                           symbol_file)
                for name in os.listdir(self.model_dir):
                    if name.startswith(self.model_prefix + '-tmp'):
                        os.remove(os.path.join(self.model_dir, name))
                return
            except Exception as e:  # a block that cannot be exported: say so, keep training
                estimator.logger.info("Model architecture (symbol file) could not be saved: %s",
                                      e)
                return
        estimator.logger.info(
            "Model architecture(symbol file) is not saved, please use HybridBlock to construct "
            "your model, and call net.hybridize() before passing to Estimator in order to save "
            "model architecture as %s.", symbol_file)

    def _save_params_and_trainer(self, estimator, file_prefix):
        estimator.net.save_parameters(os.path.join(self.model_dir, file_prefix + '.params'))
        estimator.trainer.save_states(os.path.join(self.model_dir, file_prefix + '.states'))
        if 'best' not in file_prefix:       # the best checkpoint is not counted
            self.saved_checkpoints.append(file_prefix)
        if len(self.saved_checkpoints) > self.max_checkpoints:
            old = self.saved_checkpoints.pop(0)
            for name in os.listdir(self.model_dir):
                if name.startswith(old + '.'):
                    os.remove(os.path.join(self.model_dir, name))

    def _resume_from_checkpoint(self, estimator):
        prefix = self.model_prefix + '-epoch'
        self.trained_epoch = self._find_max_iteration(self.model_dir, prefix, 'epoch', 'batch',
                                                      self.saved_checkpoints)
        self.trained_batch = self._find_max_iteration(
            self.model_dir, prefix + str(self.trained_epoch) + 'batch', 'batch', '.params')
        if self.trained_epoch == -1:
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from scratch "
                                  "for %s", "%d batches" % estimator.max_batch
                                  if estimator.max_batch else "%d epochs" % estimator.max_epoch)
            return
        msg = "CheckpointHandler: Checkpoint resumed from epoch %d batch %d, continue to train " \
              "for " % (self.trained_epoch, self.trained_batch)
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ValueError("Found checkpoint with maximum number of epoch %d reached, "
                                 "please specify resume_from_checkpoint=False (default value) if "
                                 "you want to train from scratch." % estimator.max_epoch)
            estimator.max_epoch -= self.trained_epoch + 1
            msg += "%d epochs " % estimator.max_epoch
        if estimator.max_batch:
            if self.trained_batch >= estimator.max_batch - 1:
                raise ValueError("Found checkpoint with maximum number of batch %d reached, "
                                 "please specify resume_from_checkpoint=False (default value) if "
                                 "you want to train from scratch." % self.trained_batch)
            estimator.max_batch -= self.trained_batch + 1
            msg += "%d batches " % estimator.max_batch
        stem = os.path.join(self.model_dir, "%s-epoch%dbatch%d" % (
            self.model_prefix, self.trained_epoch, self.trained_batch))
        for ext in ('.params', '.states'):
            assert os.path.exists(stem + ext), \
                "Failed to load checkpoint, %s does not exist" % (stem + ext)
        estimator.net.load_parameters(stem + '.params', ctx=estimator.context)
        estimator.trainer.load_states(stem + '.states')
        estimator.logger.warning(msg)

    @staticmethod
    def _find_max_iteration(folder, prefix, start, end, saved_checkpoints=None):
        """The largest number between ``start`` and ``end`` in the names of ``folder``'s
        ``.params`` files starting with ``prefix`` (-1 when there is none)."""
        found = -1
        for name in sorted(os.listdir(folder)):
            if not (name.startswith(prefix) and name.endswith('.params')):
                continue
            if saved_checkpoints is not None:
                saved_checkpoints.append(name[:-len('.params')])
            try:
                number = int(name[name.find(start) + len(start):name.find(end)])
            except ValueError:
                raise ValueError("Error parsing checkpoint file %s: checkpoints are named "
                                 "{model_name}-epoch{epoch_number}batch{batch_number}.params, "
                                 "with a .states file beside each" % name) from None
            found = max(found, number)
        return found


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stops training when ``monitor`` has not improved by more than ``min_delta`` for
    ``patience`` epochs (``mode`` 'min', 'max' or 'auto'); ``baseline`` is the value to beat
    at first."""

    def __init__(self, monitor, min_delta=0, patience=0, mode='auto', baseline=None):
        if not isinstance(monitor, EvalMetric):
            raise ValueError("Please provide one of the metric objects from "
                             "estimator.train_metrics and estimator.val_metrics as monitor.")
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError("CompositeEvalMetric is not supported for EarlyStoppingHandler, "
                             "please specify a simple metric instead.")
        self.monitor = monitor
        self.baseline = baseline
        self.patience = patience
        self.min_delta = min_delta
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.monitor_op = _monitor_op(self, mode, 'EarlyStoppingHandler')
        # a gain must exceed min_delta in the direction of improvement
        self.min_delta = abs(min_delta) * (1 if self.monitor_op is np.greater else -1)

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def epoch_end(self, estimator, *args, **kwargs):
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                '%s is not updated, make sure you pass one of the metric objects from '
                'estimator.train_metrics and estimator.val_metrics as monitor.' % name))
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best = value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stopped_epoch > 0:
            estimator.logger.info('[Epoch %d] EarlyStoppingHandler: early stopping due to %s not '
                                  'improving', self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Applies the gradients (``estimator.trainer.step`` with the batch's size) at each batch
    end, before the other handlers (priority -2000)."""

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs['loss']
        loss = loss if isinstance(loss, list) else [loss]
        estimator.trainer.step(sum(l.shape[0] for l in loss))
