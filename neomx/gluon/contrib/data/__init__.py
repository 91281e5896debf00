"""Contrib datasets and samplers: ``IntervalSampler`` and the WikiText language-model
datasets (``data.text``)."""
from . import sampler
from .sampler import *  # noqa: F401,F403
from . import text  # noqa: F401
from . import _constants  # noqa: F401
