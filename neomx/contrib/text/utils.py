"""Counting tokens in text."""
import collections
import re

__all__ = ['count_tokens_from_str']


def count_tokens_from_str(source_str, token_delim=' ', seq_delim='\n', to_lower=False,
                          counter_to_update=None):
    """A ``collections.Counter`` of the tokens of ``source_str``, split at ``token_delim`` and
    ``seq_delim`` (empty tokens dropped), lower-cased with ``to_lower``; added to
    ``counter_to_update`` when given.

    >>> count_tokens_from_str(' Life is great ! \\n life is good . \\n', to_lower=True)['life']
    2
    """
    tokens = re.split(re.escape(token_delim) + '|' + re.escape(seq_delim), source_str)
    tokens = [t for t in tokens if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update
