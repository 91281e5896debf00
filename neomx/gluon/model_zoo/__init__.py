"""``gluon.model_zoo``: predefined networks (``vision``) and their pretrained weights
(``model_store``)."""
from . import model_store  # noqa: F401
from . import vision  # noqa: F401
