"""Text helpers for recurrent models: ``encode_sentences`` maps tokens to integer ids."""

__all__ = ['encode_sentences']


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
