"""Text for recurrent models: ``encode_sentences`` maps tokens to integer ids, and
``BucketSentenceIter`` batches sentences of similar lengths together (each batch padded to
its bucket's length), the label of each step being the next token.

>>> import neomx as mx
>>> sents = [[1, 2, 3], [4, 5], [6, 7, 8], [9, 1]]
>>> it = mx.rnn.BucketSentenceIter(sents, batch_size=2, buckets=[2, 3])
>>> sorted(b.bucket_key for b in it)
[2, 3]
"""
import bisect
import random

import numpy as np

from .. import ndarray
from ..base import MXNetError
from ..io import DataBatch, DataDesc, DataIter

__all__ = ['encode_sentences', 'BucketSentenceIter']


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key='\n',
                     start_label=0, unknown_token=None):
    """Encodes ``sentences`` (lists of tokens) as lists of ids, building the vocabulary as it
    goes: ``(encoded, vocab)``.

    Parameters
    ----------
    vocab : dict of str -> int, optional
        A vocabulary to use (and extend only with ``unknown_token``); a new one maps
        ``invalid_key`` to ``invalid_label``.
    invalid_label : int, default -1
        An id no token receives.
    start_label : int, default 0
        The first id handed out.
    unknown_token : str, optional
        With a given ``vocab``, unknown tokens are encoded as this one (added to it when
        missing); without it they are an error.

    >>> encode_sentences([['a', 'b'], ['b', 'c']])
    ([[0, 1], [1, 2]], {'\\n': -1, 'a': 0, 'b': 1, 'c': 2})
    """
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    idx = start_label
    out = []
    for sentence in sentences:
        coded = []
        for word in sentence:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise KeyError("Unknown token %s" % word)
                if idx == invalid_label:
                    idx += 1
                if unknown_token:
                    word = unknown_token
                vocab[word] = idx
                idx += 1
            coded.append(vocab[word])
        out.append(coded)
    return out, vocab


class BucketSentenceIter(DataIter):
    """Batches of sentences for a language model, bucketed by length: each sentence goes to
    the smallest bucket it fits (padded with ``invalid_label``; longer ones are discarded),
    and each batch holds sentences of one bucket, ``bucket_key`` its length. The label is the
    data shifted by one step. Batches come in random order (``reset`` shuffles again).

    Parameters
    ----------
    sentences : list of list of int
        Encoded sentences.
    batch_size : int
    buckets : list of int, optional
        Bucket lengths; by default every length at least ``batch_size`` sentences have.
    invalid_label : int, default -1
        The padding, and the label after each sentence's last token.
    data_name, label_name : str, default 'data', 'softmax_label'
    dtype : str, default 'float32'
    layout : {'NT', 'TN'}, default 'NT'
        Batch-major or time-major arrays.
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1, data_name='data',
                 label_name='softmax_label', dtype='float32', layout='NT'):
        super().__init__(batch_size)
        if not buckets:
            counts = np.bincount([len(s) for s in sentences])
            buckets = [n for n, c in enumerate(counts) if c >= batch_size]
        buckets = sorted(buckets)
        if layout not in ('NT', 'TN'):
            raise MXNetError("BucketSentenceIter: invalid layout %s: must be NT (batch major) "
                             "or TN (time major)" % layout)
        rows = [[] for _ in buckets]
        discarded = 0
        for sentence in sentences:
            b = bisect.bisect_left(buckets, len(sentence))
            if b == len(buckets):
                discarded += 1
                continue
            row = np.full((buckets[b],), invalid_label, dtype=dtype)
            row[:len(sentence)] = sentence
            rows[b].append(row)
        used = [i for i, r in enumerate(rows) if r]
        if discarded:
            print("WARNING: discarded %d sentences longer than the largest bucket." % discarded)
        self.buckets = [buckets[i] for i in used]
        self.data = [np.asarray(rows[i], dtype=dtype) for i in used]
        if not self.buckets:
            raise MXNetError("BucketSentenceIter: no sentence fits the buckets %s" % buckets)
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.layout = layout
        self.major_axis = layout.find('N')
        self.default_bucket_key = max(self.buckets)
        shape = ((batch_size, self.default_bucket_key) if self.major_axis == 0 else
                 (self.default_bucket_key, batch_size))
        self.provide_data = [DataDesc(data_name, shape, layout=layout)]
        self.provide_label = [DataDesc(label_name, shape, layout=layout)]
        self.idx = [(i, j) for i, bucket in enumerate(self.data)
                    for j in range(0, len(bucket) - batch_size + 1, batch_size)]
        self.curr_idx = 0
        self.nddata, self.ndlabel = [], []
        self.reset()

    def reset(self):
        """Shuffles the batches and the sentences within each bucket; starts over."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for bucket in self.data:
            np.random.shuffle(bucket)
        self.nddata, self.ndlabel = [], []
        for bucket in self.data:
            label = np.empty_like(bucket)
            label[:, :-1] = bucket[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(bucket, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self):
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(self.data_name, data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(self.label_name, label.shape,
                                                 layout=self.layout)])
