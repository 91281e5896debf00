"""WikiText language-model datasets (Merity et al. 2016, https://blog.einstein.ai/the-wikitext-
long-term-dependency-language-modeling-dataset/; CC BY-SA): the token files are read from
``root`` (downloaded in their zip archive when absent and the network is there). A sample is a
``seq_len`` run of token indices and the run shifted by one token (the next words); ``<eos>``
ends every line."""
import os
import shutil
import zipfile

import numpy as np

from .... import ndarray as nd
from ....base import MXNetError, data_dir
from ...data import dataset

__all__ = ['WikiText2', 'WikiText103']

EOS_TOKEN = '<eos>'


class _WikiText(dataset._DownloadedDataset):
    _namespace = None
    _archive = None
    _files = None

    def __init__(self, root, segment, vocab, seq_len):
        if segment not in self._files:
            raise ValueError("%s: segment must be one of %s, got %r"
                             % (type(self).__name__, sorted(self._files), segment))
        self._segment = segment
        self._seq_len = seq_len
        self._vocab = vocab
        self._counter = None
        super().__init__(os.path.expanduser(root), None)

    @property
    def vocabulary(self):
        """The ``contrib.text.vocab.Vocabulary`` indexing the tokens."""
        return self._vocab

    @property
    def frequencies(self):
        """A ``collections.Counter`` of this segment's tokens."""
        return self._counter

    def _fetch(self, path):
        from ...utils import _get_repo_file_url, download
        name, sha1 = self._archive
        try:
            archive = download(_get_repo_file_url('gluon/dataset/' + self._namespace, name),
                               path=self._root, sha1_hash=sha1)
        except Exception as e:
            raise MXNetError("%s: %s is not in %s and the archive %s could not be downloaded "
                             "(%s); place the token files there"
                             % (type(self).__name__, os.path.basename(path), self._root, name,
                                e)) from None
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                base = os.path.basename(member)
                if base:
                    with zf.open(member) as src, open(os.path.join(self._root, base), 'wb') as dst:
                        shutil.copyfileobj(src, dst)

    def _get_data(self):
        from ....contrib import text
        path = os.path.join(self._root, self._files[self._segment])
        if not os.path.exists(path):
            self._fetch(path)
        with open(path, encoding='utf8') as f:
            content = f.read()
        self._counter = text.utils.count_tokens_from_str(content)
        if self._vocab is None:
            self._vocab = text.vocab.Vocabulary(counter=self._counter,
                                                reserved_tokens=[EOS_TOKEN])
        tokens = [t for line in content.splitlines() for t in line.split() + [EOS_TOKEN]
                  if line.split()]
        ids = np.asarray(self._vocab.to_indices(tokens), dtype=np.int32)
        n = (len(ids) - 1) // self._seq_len * self._seq_len
        self._data = nd.array(ids[:n], dtype=np.int32).reshape((-1, self._seq_len))
        self._label = nd.array(ids[1:n + 1], dtype=np.int32).reshape((-1, self._seq_len))

    def __getitem__(self, idx):
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)


class WikiText2(_WikiText):
    """WikiText-2 (2 million tokens of Wikipedia articles).

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/wikitext-2``
    segment : {'train', 'validation', 'test'}
    vocab : contrib.text.vocab.Vocabulary, default None
        Made from the segment's tokens when None.
    seq_len : int, default 35
    """
    _namespace = 'wikitext-2'
    _archive = ('wikitext-2-v1.zip', '3c914d17d80b1459be871a5039ac23e752a53cbe')
    _files = {'train': 'wiki.train.tokens', 'validation': 'wiki.valid.tokens',
              'test': 'wiki.test.tokens'}

    def __init__(self, root=None, segment='train', vocab=None, seq_len=35):
        super().__init__(root or os.path.join(data_dir(), 'datasets', 'wikitext-2'), segment,
                         vocab, seq_len)


class WikiText103(_WikiText):
    """WikiText-103 (103 million tokens); parameters as ``WikiText2`` (root default
    ``$MXNET_HOME/datasets/wikitext-103``)."""
    _namespace = 'wikitext-103'
    _archive = ('wikitext-103-v1.zip', '0aec09a7537b58d4bb65362fee27650eeaba625a')
    _files = {'train': 'wiki.train.tokens', 'validation': 'wiki.valid.tokens',
              'test': 'wiki.test.tokens'}

    def __init__(self, root=None, segment='train', vocab=None, seq_len=35):
        super().__init__(root or os.path.join(data_dir(), 'datasets', 'wikitext-103'), segment,
                         vocab, seq_len)


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from .... import base  # noqa: E402,F401
from ....contrib import text  # noqa: E402,F401
from ...utils import _get_repo_file_url, check_sha1, download  # noqa: E402,F401
from . import _constants as C  # noqa: E402,F401
_LanguageModelDataset = _WikiText
