"""``mx.contrib.text``: token counting, vocabularies and token embeddings read from local
files (GloVe and fastText files are downloaded when absent and the network is there)."""
from . import utils
from . import vocab
from . import embedding
from . import _constants  # noqa: F401
