"""Token embeddings: vectors for the tokens of a vocabulary, read from text files with one
``token v1 v2 ...`` line per token (GloVe's and fastText's format).

``CustomEmbedding`` reads a local file; ``GloVe`` and ``FastText`` read their published files
from ``embedding_root`` (downloading them when absent and the network is there);
``CompositeEmbedding`` concatenates several embeddings' vectors for one vocabulary.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), 'vec.txt')
>>> with open(path, 'w') as f:
...     _ = f.write('a 0.1 0.2\\nb 0.3 0.4\\n')
>>> e = CustomEmbedding(path)
>>> e.idx_to_token, e.vec_len
(['<unk>', 'a', 'b'], 2)
>>> e.get_vecs_by_tokens(['b', 'zzz']).asnumpy().tolist()
[[0.30000001192092896, 0.4000000059604645], [0.0, 0.0]]
"""
import io
import logging
import os
import tarfile
import warnings
import zipfile

import numpy as np

from ... import ndarray as nd
from ...ndarray.ndarray import in_array_class, new_array
from ...base import MXNetError, data_dir
from . import vocab

__all__ = ['register', 'create', 'get_pretrained_file_names', 'GloVe', 'FastText',
           'CustomEmbedding', 'CompositeEmbedding']

_REGISTRY = {}


def register(embedding_cls):
    """Registers a ``_TokenEmbedding`` subclass under its lower-cased name, for ``create``.

    >>> @register
    ... class MyEmbed(_TokenEmbedding):
    ...     pass
    >>> 'myembed' in _REGISTRY
    True
    """
    if not (isinstance(embedding_cls, type) and issubclass(embedding_cls, _TokenEmbedding)):
        raise TypeError("register: %r is not a _TokenEmbedding subclass" % (embedding_cls,))
    _REGISTRY[embedding_cls.__name__.lower()] = embedding_cls
    return embedding_cls


def create(embedding_name, **kwargs):
    """An instance of the registered embedding ``embedding_name`` (e.g. 'glove', 'fasttext')
    made with ``kwargs``."""
    name = embedding_name.lower()
    if name not in _REGISTRY:
        raise KeyError("Cannot find `embedding_name` %s. Use `get_pretrained_file_names()` to "
                       "get all the valid embedding names (%s)." % (embedding_name,
                                                                  ', '.join(sorted(_REGISTRY))))
    return _REGISTRY[name](**kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The pre-trained file names of the registered embedding ``embedding_name``, or a dict of
    them for every registered embedding."""
    if embedding_name is not None:
        name = embedding_name.lower()
        if name not in _REGISTRY:
            raise KeyError("Cannot find `embedding_name` %s. Use `get_pretrained_file_names("
                           "embedding_name=None).keys()` to get all the valid embedding names."
                           % embedding_name)
        return list(_REGISTRY[name].pretrained_file_name_sha1)
    return {name: list(cls.pretrained_file_name_sha1) for name, cls in _REGISTRY.items()}


class _TokenEmbedding(vocab.Vocabulary):
    """A vocabulary with a vector per token (``idx_to_vec``, an NDArray of (len, vec_len)); the
    unknown token's vector (index 0) stands for every token not in it."""
    pretrained_file_name_sha1 = {}
    namespace = None
    url_prefix = None

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._vec_len = None
        self._idx_to_vec = None

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return pretrained_file_name

    @classmethod
    def _get_pretrained_file_url(cls, pretrained_file_name):
        from ...gluon.utils import _get_repo_file_url
        return _get_repo_file_url('gluon/embeddings/%s' % cls.namespace,
                                  cls._get_download_file_name(pretrained_file_name))

    @classmethod
    def _get_pretrained_file(cls, embedding_root, pretrained_file_name):
        """The path of the pre-trained file under ``embedding_root/<namespace>``, downloaded
        (and extracted) when it is not there."""
        from ...gluon.utils import check_sha1, download
        root = os.path.join(os.path.expanduser(embedding_root), cls.namespace)
        path = os.path.join(root, pretrained_file_name)
        sha1 = cls.pretrained_file_name_sha1.get(pretrained_file_name)
        if os.path.isfile(path) and (sha1 is None or check_sha1(path, sha1)):
            return path
        download_name = cls._get_download_file_name(pretrained_file_name)
        url = cls._get_pretrained_file_url(pretrained_file_name)
        try:
            downloaded = download(url, path=os.path.join(root, download_name),
                                  sha1_hash=sha1 if download_name == pretrained_file_name
                                  else None)
        except Exception as e:
            raise MXNetError("%s: the pre-trained file %s is not in %s and could not be "
                             "downloaded from %s (%s); place the file there"
                             % (cls.__name__, pretrained_file_name, root, url, e)) from None
        if downloaded.endswith('.zip'):
            with zipfile.ZipFile(downloaded) as zf:
                zf.extractall(root)
        elif downloaded.endswith(('.tar.gz', '.tgz')):
            with tarfile.open(downloaded) as tf:
                tf.extractall(root, filter='data')
        return path

    def _load_embedding(self, pretrained_file_path, elem_delim, init_unknown_vec,
                        encoding='utf8'):
        """Reads ``token<elem_delim>v1<elem_delim>v2 ...`` lines. The first vector fixes the
        length; a line of the unknown token gives its vector (else ``init_unknown_vec``); a
        token seen again and one-number lines (fastText's header) are skipped with a
        warning."""
        path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(path):
            raise ValueError('`pretrained_file_path` must be a valid path to the pre-trained '
                             'token embedding file, got %s' % path)
        logging.info('Loading pre-trained token embedding vectors from %s', path)
        vec_len, loaded_unknown, rows = None, None, []
        seen = {self.unknown_token} - {None}
        with io.open(path, 'rb') as f:
            for line_num, raw in enumerate(f, 1):
                try:
                    line = raw.decode(encoding)
                except ValueError:
                    warnings.warn('line %d of %s is not %s text: skipped'
                                  % (line_num, path, encoding))
                    continue
                elems = line.rstrip().split(elem_delim)
                assert len(elems) > 1, ('At line %d of the pre-trained text embedding file %s: '
                                        'expected a token and its vector, got %r'
                                        % (line_num, path, line.rstrip()))
                token, values = elems[0], [float(v) for v in elems[1:]]
                if token == self.unknown_token and loaded_unknown is None:
                    loaded_unknown = values
                    continue
                if token in seen:
                    warnings.warn('At line %d of %s: token %s is seen again: skipped'
                                  % (line_num, path, token))
                    continue
                if len(values) == 1:
                    warnings.warn('At line %d of %s: token %s with a 1-dimensional vector is '
                                  'likely a header: skipped' % (line_num, path, token))
                    continue
                if vec_len is None:
                    vec_len = len(values)
                assert len(values) == vec_len, (
                    'At line %d of the pre-trained text embedding file %s: the dimension of '
                    'token %s is %d but the dimension of previous tokens is %d. Dimensions of '
                    'all the tokens must be the same.' % (line_num, path, token, len(values),
                                                          vec_len))
                rows.append(values)
                self._idx_to_token.append(token)
                self._token_to_idx[token] = len(self._idx_to_token) - 1
                seen.add(token)
        if vec_len is None:
            vec_len = len(loaded_unknown) if loaded_unknown is not None else 0
        self._vec_len = vec_len
        vecs = np.zeros((len(self._idx_to_token), vec_len), dtype=np.float32)
        if rows:
            vecs[len(self._idx_to_token) - len(rows):] = np.asarray(rows, dtype=np.float32)
        self._idx_to_vec = new_array(vecs)       # mx.np.ndarray under NumPy semantics
        if loaded_unknown is not None:
            self._idx_to_vec[0] = new_array(loaded_unknown)
        else:
            self._idx_to_vec[0] = in_array_class(init_unknown_vec(shape=vec_len))

    def _index_tokens_from_vocabulary(self, vocabulary):
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = None if vocabulary.reserved_tokens is None else \
            list(vocabulary.reserved_tokens)

    def _set_idx_to_vec_by_embeddings(self, token_embeddings, vocab_len, vocab_idx_to_token):
        """``idx_to_vec`` of the vocabulary's tokens: each embedding's vectors, concatenated.
        The vocabulary's unknown token (index 0) gets each embedding's unknown vector, even
        where an embedding has a vector for that token."""
        parts = []
        for e in token_embeddings:
            known = [e.idx_to_vec[0:1]]
            if vocab_len > 1:
                known.append(e.get_vecs_by_tokens(list(vocab_idx_to_token[1:]))
                             .reshape((vocab_len - 1, e.vec_len)))
            parts.append(nd.concat(*known, dim=0) if len(known) > 1 else known[0].copy())
        self._vec_len = sum(e.vec_len for e in token_embeddings)
        self._idx_to_vec = nd.concat(*parts, dim=1) if len(parts) > 1 else parts[0].copy()

    def _build_embedding_for_vocabulary(self, vocabulary):
        if vocabulary is not None:
            if not isinstance(vocabulary, vocab.Vocabulary):
                raise TypeError('The argument `vocabulary` must be an instance of '
                                'mxnet.contrib.text.vocab.Vocabulary.')
            self._set_idx_to_vec_by_embeddings([self], len(vocabulary),
                                               vocabulary.idx_to_token)
            self._index_tokens_from_vocabulary(vocabulary)

    @property
    def vec_len(self):
        return self._vec_len

    @property
    def idx_to_vec(self):
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """The vector of a token, or the (n, vec_len) vectors of a list of tokens; unknown
        tokens get the unknown token's vector, unless ``lower_case_backup`` finds their
        lower-case form."""
        single = not isinstance(tokens, list)
        tokens = [tokens] if single else tokens
        if lower_case_backup:
            indices = [self.token_to_idx.get(t, self.token_to_idx.get(t.lower(), 0))
                       for t in tokens]
        else:
            indices = [self.token_to_idx.get(t, 0) for t in tokens]
        vecs = nd.Embedding(nd.array(indices), self.idx_to_vec, self.idx_to_vec.shape[0],
                            self.idx_to_vec.shape[1])
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens, new_vectors):
        """Sets the vectors of ``tokens`` (a token or a list) to ``new_vectors`` (one row, or
        (n, vec_len))."""
        assert self.idx_to_vec is not None, 'The property `idx_to_vec` has not been properly set.'
        if not isinstance(tokens, list) or len(tokens) == 1:
            assert isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) in (1, 2), \
                '`new_vectors` must be a 1-D or 2-D NDArray if `tokens` is a singleton.'
            if not isinstance(tokens, list):
                tokens = [tokens]
            if len(new_vectors.shape) == 1:
                new_vectors = new_vectors.expand_dims(0)
        else:
            assert isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) == 2, \
                '`new_vectors` must be a 2-D NDArray if `tokens` is a list of multiple strings.'
        assert new_vectors.shape == (len(tokens), self.vec_len), \
            'The length of new_vectors must be equal to the number of tokens and the width of ' \
            'new_vectors must be equal to the dimension of embeddings of the glossary.'
        indices = []
        for token in tokens:
            if token not in self.token_to_idx:
                raise ValueError('Token %s is unknown. To update the embedding vector for an '
                                 'unknown token, please specify it explicitly as the '
                                 '`unknown_token` %s in `tokens`. This is to avoid unintended '
                                 'updates.' % (token, self.idx_to_token[0]))
            indices.append(self.token_to_idx[token])
        for row, i in enumerate(indices):
            self._idx_to_vec[i] = new_vectors[row]

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name):
        known = cls.pretrained_file_name_sha1
        if known and pretrained_file_name not in known:
            raise KeyError('Cannot find pretrained file %s for token embedding %s. Valid '
                           'pretrained files for embedding %s: %s'
                           % (pretrained_file_name, cls.__name__.lower(), cls.__name__.lower(),
                              ', '.join(known)))


def _default_root():
    return os.path.join(data_dir(), 'embeddings')


@register
class GloVe(_TokenEmbedding):
    """GloVe vectors (Pennington, Socher and Manning 2014, https://nlp.stanford.edu/projects/
    glove/; Public Domain Dedication and License), read from
    ``embedding_root/glove/<pretrained_file_name>`` (downloaded in its zip archive when absent
    and the network is there).

    Parameters
    ----------
    pretrained_file_name : str, default 'glove.840B.300d.txt'
    embedding_root : str, default ``$MXNET_HOME/embeddings``
    init_unknown_vec : callable, default nd.zeros
    vocabulary : Vocabulary, optional
        Index the vocabulary's tokens instead of the file's.
    """
    namespace = 'glove'
    # the published files (their archives are named after the corpus)
    pretrained_file_name_sha1 = {name: None for name in (
        'glove.42B.300d.txt', 'glove.6B.50d.txt', 'glove.6B.100d.txt', 'glove.6B.200d.txt',
        'glove.6B.300d.txt', 'glove.840B.300d.txt', 'glove.twitter.27B.25d.txt',
        'glove.twitter.27B.50d.txt', 'glove.twitter.27B.100d.txt',
        'glove.twitter.27B.200d.txt')}

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        corpus = pretrained_file_name.split('.')[1]
        return 'glove.%s.zip' % corpus if corpus != '6B' else 'glove.6B.zip'

    def __init__(self, pretrained_file_name='glove.840B.300d.txt', embedding_root=None,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        GloVe._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = GloVe._get_pretrained_file(embedding_root or _default_root(),
                                          pretrained_file_name)
        self._load_embedding(path, ' ', init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


# Wikipedia language codes of fastText's published wiki.<code>.vec files, and of the aligned
# (multilingual) wiki.multi.<code>.vec ones.
_FASTTEXT_WIKI = """
aa ab ace ady af ak als am ang an arc ar arz ast as av ay azb az bar bat_smg ba bcl be bg bh bi
bjn bm bn bo bpy br bs bug bxr ca cbk_zam cdo ceb ce cho chr ch chy ckb co crh cr csb cs cu cv
cy da de diq dsb dv dz ee el eml en eo es et eu ext fa ff fiu_vro fi fj fo frp frr fr fur fy gag
gan ga gd glk gl gn gom got gu gv hak ha haw he hif hi ho hr hsb ht hu hy hz ia id ie ig ii ik ilo
io is it iu jam ja jbo jv kaa kab ka kbd kg ki kj kk kl km kn koi ko krc kr ksh ks ku kv kw ky lad
la lbe lb lez lg lij li lmo ln lo lrc ltg lt lv mai map_bms mdf mg mhr mh min mi mk ml mn mo mrj mr
ms mt mus mwl my myv mzn nah nap na nds_nl nds ne new ng nl nn no nov nrm nso nv ny oc olo om or os
pag pam pap pa pcd pdc pfl pih pi pl pms pnb pnt ps pt qu rm rmy rn roa_rup roa_tara ro rue ru rw
sah sa scn sco sc sd se sg sh simple si sk sl sm sn so sq srn sr ss stq st su sv sw szl ta tcy tet
te tg th ti tk tl tn to tpi tr ts tt tum tw ty tyv udm ug uk ur uz vec vep ve vi vls vo war wa wo
wuu xal xh xmf yi yo za zea zh_classical zh_min_nan zh zh_yue zu"""
_FASTTEXT_ALIGNED = """
ar bg ca cs da de el en es et fi fr he hr hu id it mk nl no pl pt ro ru sk sl sv tr uk vi"""


@register
class FastText(_TokenEmbedding):
    """fastText vectors (Bojanowski et al. 2016, https://fasttext.cc; CC BY-SA 3.0), read from
    ``embedding_root/fasttext/<pretrained_file_name>`` (a ``.vec`` file; downloaded when absent
    and the network is there), one of ``get_pretrained_file_names('fasttext')``.

    Parameters
    ----------
    pretrained_file_name : str, default 'wiki.simple.vec'
    embedding_root : str, default ``$MXNET_HOME/embeddings``
    init_unknown_vec : callable, default nd.zeros
    vocabulary : Vocabulary, optional
    """
    namespace = 'fasttext'
    # the files fastText published: Wikipedia vectors per language, MUSE's aligned ones and
    # three English sets (the names MXNet 1.9.1 lists)
    pretrained_file_name_sha1 = dict.fromkeys(
        ['wiki.%s.vec' % lang for lang in _FASTTEXT_WIKI.split()] +
        ['wiki.multi.%s.vec' % lang for lang in _FASTTEXT_ALIGNED.split()] +
        ['crawl-300d-2M.vec', 'wiki-news-300d-1M-subword.vec', 'wiki-news-300d-1M.vec'])

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return '.'.join(pretrained_file_name.split('.')[:-1]) + '.zip'

    def __init__(self, pretrained_file_name='wiki.simple.vec', embedding_root=None,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        path = FastText._get_pretrained_file(embedding_root or _default_root(),
                                             pretrained_file_name)
        self._load_embedding(path, ' ', init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


class CustomEmbedding(_TokenEmbedding):
    """An embedding read from the local file ``pretrained_file_path`` of
    ``token<elem_delim>v1<elem_delim>v2 ...`` lines.

    Parameters
    ----------
    pretrained_file_path : str
    elem_delim : str, default ' '
    encoding : str, default 'utf8'
    init_unknown_vec : callable, default nd.zeros
        Makes the unknown token's vector (``init_unknown_vec(shape=vec_len)``) when the file
        has none.
    vocabulary : Vocabulary, optional
        Index the vocabulary's tokens instead of the file's.
    """

    def __init__(self, pretrained_file_path, elem_delim=' ', encoding='utf8',
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of ``vocabulary`` with the vectors of ``token_embeddings`` (one or a list),
    concatenated in order."""

    def __init__(self, vocabulary, token_embeddings):
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise TypeError('The argument `vocabulary` must be an instance of '
                            'mxnet.contrib.text.vocab.Vocabulary.')
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        for e in token_embeddings:
            if not isinstance(e, _TokenEmbedding):
                raise TypeError('The argument `token_embeddings` must be an instance or a list '
                                'of instances of `mxnet.contrib.text.embedding._TokenEmbedding` '
                                'whose embedding vectors will be loaded or concatenated-then-'
                                'loaded to map to the indexed tokens.')
        super().__init__()
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from ... import base  # noqa: E402,F401
from ...util import is_np_array  # noqa: E402,F401
from . import _constants as C  # noqa: E402,F401
from ... import registry  # noqa: E402,F401
