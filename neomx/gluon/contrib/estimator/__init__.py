"""``gluon.contrib.estimator``: a training loop (``Estimator.fit`` / ``evaluate``) driven by
event handlers (stopping, metrics, validation, logging, checkpoints, early stopping, the
gradient update), as MXNet 1.9's."""
from . import batch_processor, estimator, event_handler, utils
from .batch_processor import *  # noqa: F401,F403
from .estimator import *  # noqa: F401,F403
from .event_handler import *  # noqa: F401,F403
