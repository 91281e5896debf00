"""Image classification data for the examples, with no download needed.

``load_data(name)`` returns ``(train, test, info)``: two ``ArrayDataset`` of (HWC ``uint8``
image of 28 x 28 x 1, ``int32`` label) pairs, as ``gluon.data.vision.FashionMNIST`` gives, and
a description. ``name`` is

- ``'fashion-mnist'``: Fashion-MNIST, read from its IDX files under ``root`` (default
  ``~/.mxnet/datasets/fashion-mnist``, MXNet's folder);
- ``'digits'``: the 1,797 handwritten digits bundled with scikit-learn (8 x 8 images with 17
  grey levels, from the UCI "Optical Recognition of Handwritten Digits" set), scaled to 20 x 20
  and centred in 28 x 28 as MNIST digits are; a fixed split of 1,347 training and 450 test
  images;
- ``'auto'``: Fashion-MNIST when its files are present, else the digits.

>>> train, test, info = load_data('digits')
>>> len(train), len(test), train[0][0].shape
(1347, 450, (28, 28, 1))
"""
import os

import numpy as np

from .. import ndarray as nd
from ..base import MXNetError
from ..gluon.data import ArrayDataset
from ..gluon.data._download import data_dir
from ..gluon.data.vision import FashionMNIST

__all__ = ['load_data', 'fashion_mnist_root', 'fashion_mnist_present', 'load_digits']

_FASHION_FILES = ('train-images-idx3-ubyte', 'train-labels-idx1-ubyte',
                  't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte')


def fashion_mnist_root(root=None):
    return os.path.expanduser(root) if root else os.path.join(data_dir(), 'datasets',
                                                               'fashion-mnist')


def fashion_mnist_present(root=None):
    """Whether the four Fashion-MNIST files (gzipped or not) are in ``root``."""
    folder = fashion_mnist_root(root)
    return all(os.path.isfile(os.path.join(folder, f)) or
               os.path.isfile(os.path.join(folder, f + '.gz')) for f in _FASHION_FILES)


def load_digits(test_size=450, seed=0):
    """scikit-learn's handwritten digits as MNIST-like ``(images, labels)`` for training and
    test: uint8 images of shape (N, 28, 28, 1), int32 labels."""
    try:
        from sklearn.datasets import load_digits as _sk_digits
    except ImportError:
        raise MXNetError("the digits data set comes with scikit-learn, which is not installed: "
                         "pip install 'neomx[train]' (or scikit-learn)") from None
    digits = _sk_digits()
    images = digits.images.astype(np.float32) * (255.0 / 16.0)     # 17 grey levels -> 0..255
    images = nd.image.resize(nd.array(images[..., None]), size=(20, 20)).asnumpy()
    images = np.pad(images, ((0, 0), (4, 4), (4, 4), (0, 0)))
    images = np.clip(np.round(images), 0, 255).astype(np.uint8)
    labels = digits.target.astype(np.int32)
    order = np.random.RandomState(seed).permutation(len(labels))
    test, train = order[:test_size], order[test_size:]
    return (images[train], labels[train]), (images[test], labels[test])


def load_data(name='auto', root=None):
    """``(train dataset, test dataset, description)``; see the module docstring."""
    if name == 'auto':
        name = 'fashion-mnist' if fashion_mnist_present(root) else 'digits'
    if name == 'fashion-mnist':
        folder = fashion_mnist_root(root)
        train = FashionMNIST(root=folder, train=True)
        test = FashionMNIST(root=folder, train=False)
        return train, test, 'Fashion-MNIST from %s' % folder
    if name == 'digits':
        (xtr, ytr), (xte, yte) = load_digits()
        return (ArrayDataset(nd.array(xtr, dtype=np.uint8), ytr),
                ArrayDataset(nd.array(xte, dtype=np.uint8), yte),
                "scikit-learn's handwritten digits, upscaled to 28x28 (Fashion-MNIST not found "
                "in %s)" % fashion_mnist_root(root))
    raise MXNetError("unknown data set %r: expected 'auto', 'fashion-mnist' or 'digits'" % (name,))
