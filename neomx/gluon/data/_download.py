"""Fetching a file into a folder, for datasets and pretrained weights.

This module never waits long on a network that is not there: a failed download raises an
error that the caller turns into a message naming the files to place by hand.
"""
import hashlib
import os
import shutil
import urllib.request

from ... import atomic
from ...base import data_dir, env_str

__all__ = ['data_dir', 'repo_url', 'check_sha1', 'fetch']

_REPO = 'https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/'


def repo_url(namespace, filename):
    """The URL of ``filename`` in MXNet's file repository (``$MXNET_GLUON_REPO`` overrides)."""
    repo = env_str('MXNET_GLUON_REPO', default=_REPO)
    if not repo.endswith('/'):
        repo += '/'
    return '%s%s/%s' % (repo, namespace, filename)


def check_sha1(path, sha1):
    h = hashlib.sha1()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest() == sha1


def fetch(url, path, sha1=None, timeout=20):
    """Downloads ``url`` to ``path`` (written to a temporary name, then renamed); checks the
    SHA-1 when given. Raises OSError when the download fails."""
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    with atomic.replacing(path) as tmp:
        with open(tmp, 'wb') as out, urllib.request.urlopen(url, timeout=timeout) as r:
            shutil.copyfileobj(r, out)
        if sha1 is not None and not check_sha1(tmp, sha1):
            raise OSError("%s: downloaded file does not match its SHA-1 %s" % (url, sha1))
    return path
