"""Pretrained weights: where they are on disk, fetched from MXNet's model repository when
absent and the network is there.

Files are named as MXNet names them, ``<name>-<first 8 hex digits of their SHA-1>.params``
(``resnet18_v1-a0666292.params``), in ``root`` (default ``$MXNET_HOME/models``, i.e.
``~/.mxnet/models``, where MXNet keeps them); ``<name>.params`` is accepted too.
"""
import logging
import os
import shutil
import tempfile
import zipfile

from ...base import MXNetError
from ..data._download import check_sha1, data_dir, fetch, repo_url

__all__ = ['get_model_file', 'purge', 'short_hash', 'default_root', 'load_pretrained']

_model_sha1 = {name: checksum for checksum, name in [
    ('44335d1f0046b328243b32a26a4fbd62d9057b45', 'alexnet'),
    ('f27dbf2dbd5ce9a80b102d89c7483342cd33cb31', 'densenet121'),
    ('b6c8a95717e3e761bd88d145f4d0a214aaa515dc', 'densenet161'),
    ('2603f878403c6aa5a71a124c4a3307143d6820e9', 'densenet169'),
    ('1cdbc116bc3a1b65832b18cf53e1cb8e7da017eb', 'densenet201'),
    ('ed47ec45a937b656fcc94dabde85495bbef5ba1f', 'inceptionv3'),
    ('9f83e440996887baf91a6aff1cccc1c903a64274', 'mobilenet0.25'),
    ('8e9d539cc66aa5efa71c4b6af983b936ab8701c3', 'mobilenet0.5'),
    ('529b2c7f4934e6cb851155b22c96c9ab0a7c4dc2', 'mobilenet0.75'),
    ('6b8c5106c730e8750bcd82ceb75220a3351157cd', 'mobilenet1.0'),
    ('36da4ff1867abccd32b29592d79fc753bca5a215', 'mobilenetv2_1.0'),
    ('e2be7b72a79fe4a750d1dd415afedf01c3ea818d', 'mobilenetv2_0.75'),
    ('aabd26cd335379fcb72ae6c8fac45a70eab11785', 'mobilenetv2_0.5'),
    ('ae8f9392789b04822cbb1d98c27283fc5f8aa0a7', 'mobilenetv2_0.25'),
    ('a0666292f0a30ff61f857b0b66efc0228eb6a54b', 'resnet18_v1'),
    ('48216ba99a8b1005d75c0f3a0c422301a0473233', 'resnet34_v1'),
    ('0aee57f96768c0a2d5b23a6ec91eb08dfb0a45ce', 'resnet50_v1'),
    ('d988c13d6159779e907140a638c56f229634cb02', 'resnet101_v1'),
    ('671c637a14387ab9e2654eafd0d493d86b1c8579', 'resnet152_v1'),
    ('a81db45fd7b7a2d12ab97cd88ef0a5ac48b8f657', 'resnet18_v2'),
    ('9d6b80bbc35169de6b6edecffdd6047c56fdd322', 'resnet34_v2'),
    ('ecdde35339c1aadbec4f547857078e734a76fb49', 'resnet50_v2'),
    ('18e93e4f48947e002547f50eabbcc9c83e516aa6', 'resnet101_v2'),
    ('f2695542de38cf7e71ed58f02893d82bb409415e', 'resnet152_v2'),
    ('264ba4970a0cc87a4f15c96e25246a1307caf523', 'squeezenet1.0'),
    ('33ba0f93753c83d86e1eb397f38a667eaf2e9376', 'squeezenet1.1'),
    ('dd221b160977f36a53f464cb54648d227c707a05', 'vgg11'),
    ('ee79a8098a91fbe05b7a973fed2017a6117723a8', 'vgg11_bn'),
    ('6bc5de58a05a5e2e7f493e2d75a580d83efde38c', 'vgg13'),
    ('7d97a06c3c7a1aecc88b6e7385c2b373a249e95e', 'vgg13_bn'),
    ('e660d4569ccb679ec68f1fd3cce07a387252a90a', 'vgg16'),
    ('7f01cf050d357127a73826045c245041b0df7363', 'vgg16_bn'),
    ('ad2f660d101905472b83590b59708b71ea22b2e5', 'vgg19'),
    ('f360b758e856f1074a85abd5fd873ed1d98297c3', 'vgg19_bn')]}


def default_root():
    return os.path.join(data_dir(), 'models')


def short_hash(name):
    if name not in _model_sha1:
        raise ValueError('Pretrained model for {name} is not available.'.format(name=name))
    return _model_sha1[name][:8]


def get_model_file(name, root=None):
    """The path of the pretrained weights of model ``name`` under ``root``, downloading them
    when absent. Without the file and without a network, raises an error naming the file
    expected and where it comes from.

    >>> import tempfile
    >>> try:
    ...     get_model_file('resnet18_v1', root=tempfile.mkdtemp())
    ... except Exception as e:
    ...     'resnet18_v1-a0666292.params' in str(e)
    True
    """
    file_name = '%s-%s' % (name, short_hash(name))
    root = os.path.expanduser(root or default_root())
    file_path = os.path.join(root, file_name + '.params')
    sha1 = _model_sha1[name]
    local = os.path.exists(file_path)
    if local and check_sha1(file_path, sha1):
        return file_path
    plain = os.path.join(root, name + '.params')
    if not local and os.path.exists(plain):
        return plain    # a file the user placed under the plain name: taken as it is
    url = repo_url('gluon/models', file_name + '.zip')
    try:
        _download_params(url, file_name, root, file_path, sha1)
    except (OSError, zipfile.BadZipFile, KeyError, MXNetError) as e:
        if local:
            # Not MXNet's file (weights of one's own saved under its name), and no network
            # to fetch MXNet's: use it as it is.
            logging.warning("%s does not match the SHA-1 of MXNet's %s weights and they could "
                            "not be downloaded (%s); loading it as it is.", file_path, name, e)
            return file_path
        raise MXNetError(
            "pretrained weights for %s: %s is not there and could not be downloaded from %s "
            "(%s). Place the file %s (MXNet's model zoo file; %s.params is accepted too) in %s, "
            "or pass root= to the folder holding it."
            % (name, file_path, url, e, file_name + '.params', name, root)) from None
    return file_path


def _download_params(url, file_name, root, file_path, sha1):
    """Fetches the zip at ``url`` and puts the .params file it holds at ``file_path``."""
    os.makedirs(root, exist_ok=True)
    tmp_dir = tempfile.mkdtemp(dir=root)
    try:
        zip_path = fetch(url, os.path.join(tmp_dir, file_name + '.zip'))
        with zipfile.ZipFile(zip_path) as zf:
            zf.extract(file_name + '.params', tmp_dir)
        if not check_sha1(os.path.join(tmp_dir, file_name + '.params'), sha1):
            raise MXNetError("the downloaded %s.params does not match its SHA-1 %s"
                             % (file_name, sha1))
        os.replace(os.path.join(tmp_dir, file_name + '.params'), file_path)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)


def purge(root=None):
    """Deletes every ``.params`` file in ``root``."""
    root = os.path.expanduser(root or default_root())
    for f in os.listdir(root):
        if f.endswith('.params'):
            os.remove(os.path.join(root, f))


def load_pretrained(net, name, ctx, root):
    """Loads the pretrained weights of ``name`` into ``net`` on ``ctx``; returns ``net``."""
    net.load_parameters(get_model_file(name, root=root), ctx=ctx)
    return net


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
import uuid  # noqa: E402,F401
from ... import base  # noqa: E402,F401
from ..data._download import _REPO as apache_repo_url  # noqa: E402,F401
from ..utils import download, replace_file  # noqa: E402,F401

_url_format = '{repo_url}gluon/models/{file_name}.zip'
