"""``mx.contrib.tensorboard.LogMetricsCallback``: logs evaluation metrics to TensorBoard event
files (through ``torch.utils.tensorboard``, which needs the ``tensorboard`` package)."""
from ..base import MXNetError

__all__ = ['LogMetricsCallback']


class LogMetricsCallback:
    """A batch-end or epoch-end callback writing each metric of ``param.eval_metric`` as a
    scalar under ``logging_dir`` (tagged ``prefix + name``)."""

    def __init__(self, logging_dir, prefix=None):
        self.prefix = prefix
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as e:
            raise MXNetError("LogMetricsCallback needs the tensorboard package (pip install "
                             "tensorboard): %s" % e) from None
        self.summary_writer = SummaryWriter(logging_dir)
        self._step = 0

    def __call__(self, param):
        if param.eval_metric is None:
            return
        self._step += 1
        for name, value in param.eval_metric.get_name_value():
            if self.prefix is not None:
                name = '%s-%s' % (self.prefix, name)
            self.summary_writer.add_scalar(name, value, global_step=self._step)
        self.summary_writer.flush()


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import logging  # noqa: E402,F401
