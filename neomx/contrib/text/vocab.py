"""A vocabulary: tokens indexed by frequency, with an unknown token and reserved tokens."""
import collections

__all__ = ['Vocabulary']


class Vocabulary:
    """Indexes the tokens of ``counter`` (a ``collections.Counter``): index 0 is
    ``unknown_token``, then the ``reserved_tokens`` in order, then the other tokens by
    decreasing count (ties in token order), at most ``most_freq_count`` of them and only those
    counted at least ``min_freq`` times.

    Tokens are any hashable values (strings, tuples, ...).

    >>> v = Vocabulary(collections.Counter(['a', 'b', 'b', 'c', 'c', 'c']), reserved_tokens=['<pad>'])
    >>> v.idx_to_token
    ['<unk>', '<pad>', 'c', 'b', 'a']
    >>> v.to_indices(['b', 'zzz']), v.to_tokens(2)
    ([3, 0], 'c')
    """

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token='<unk>',
                 reserved_tokens=None):
        assert min_freq > 0, '`min_freq` must be set to a positive value.'
        if reserved_tokens is not None:
            reserved = set(reserved_tokens)
            assert unknown_token not in reserved, \
                '`reserved_token` cannot contain `unknown_token`.'
            assert len(reserved) == len(reserved_tokens), \
                '`reserved_tokens` cannot contain duplicate reserved tokens.'
        self._unknown_token = unknown_token
        self._idx_to_token = [unknown_token]
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        if reserved_tokens is not None:
            self._idx_to_token.extend(reserved_tokens)
        self._token_to_idx = {t: i for i, t in enumerate(self._idx_to_token)}
        if counter is not None:
            self._index_counter_keys(counter, unknown_token, reserved_tokens, most_freq_count,
                                     min_freq)

    def _index_counter_keys(self, counter, unknown_token, reserved_tokens, most_freq_count,
                            min_freq):
        """Adds the counted tokens, most frequent first."""
        special = {unknown_token} | set(reserved_tokens or ())
        ranked = sorted(counter.items(), key=lambda kv: kv[0])
        ranked.sort(key=lambda kv: kv[1], reverse=True)
        budget = len(counter) if most_freq_count is None else most_freq_count
        for token, freq in ranked:
            if freq < min_freq or budget <= 0:
                break
            if token in special:
                continue
            self._idx_to_token.append(token)
            self._token_to_idx[token] = len(self._idx_to_token) - 1
            budget -= 1

    def __len__(self):
        return len(self._idx_to_token)

    @property
    def token_to_idx(self):
        """dict: token to index."""
        return self._token_to_idx

    @property
    def idx_to_token(self):
        """list: index to token."""
        return self._idx_to_token

    @property
    def unknown_token(self):
        return self._unknown_token

    @property
    def reserved_tokens(self):
        return self._reserved_tokens

    def to_indices(self, tokens):
        """The index of a token, or the list of indices of a list of tokens (0, the unknown
        token's, for tokens not in the vocabulary)."""
        single = not isinstance(tokens, list)
        tokens = [tokens] if single else tokens
        indices = [self._token_to_idx.get(t, 0) for t in tokens]
        return indices[0] if single else indices

    def to_tokens(self, indices):
        """The token of an index, or the tokens of a list of indices."""
        single = not isinstance(indices, list)
        indices = [indices] if single else indices
        out = []
        for i in indices:
            if not isinstance(i, int) or not 0 <= i < len(self._idx_to_token):
                raise ValueError('Token index %r in the provided `indices` is invalid (the '
                                 'vocabulary has %d tokens).' % (i, len(self._idx_to_token)))
            out.append(self._idx_to_token[i])
        return out[0] if single else out


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from . import _constants as C  # noqa: E402,F401
