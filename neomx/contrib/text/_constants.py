"""Constants of ``mx.contrib.text`` (MXNet's ``text._constants``): the index of the unknown
token and the published embedding files by name. neomx does not pin the files' SHA-1 hashes
(each value is None: a downloaded file is used as it is)."""
from ...gluon.data._download import _REPO as APACHE_REPO_URL  # noqa: F401

UNKNOWN_IDX = 0


def _files(name):
    from .embedding import _REGISTRY
    return dict(_REGISTRY[name].pretrained_file_name_sha1)


def __getattr__(name):
    # the embedding classes register the file names; they are read when first asked for
    tables = {'GLOVE_PRETRAINED_FILE_SHA1': 'glove', 'GLOVE_PRETRAINED_ARCHIVE_SHA1': 'glove',
              'FAST_TEXT_FILE_SHA1': 'fasttext', 'FAST_TEXT_ARCHIVE_SHA1': 'fasttext'}
    if name not in tables:
        raise AttributeError("module %r has no attribute %r" % (__name__, name))
    files = _files(tables[name])
    if name.endswith('ARCHIVE_SHA1'):
        from .embedding import _REGISTRY
        archive = _REGISTRY[tables[name]]._get_download_file_name
        files = {archive(f): None for f in files}
    return files
