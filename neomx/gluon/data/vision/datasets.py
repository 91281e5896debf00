"""Image classification datasets read from their standard files: MNIST and Fashion-MNIST (IDX
files), CIFAR-10 and CIFAR-100 (the binary batches or the Python pickles).

Each looks for its files in ``root`` (default ``~/.mxnet/datasets/<name>``, or under
``$MXNET_HOME``), downloads them from MXNet's repository when they are absent and the network
is there, and otherwise raises an error naming the folder and the files it needs.

A sample is ``(image, label)``: the image an HWC ``uint8`` NDArray, the label an ``int32``
NumPy scalar (both ``mx.np.ndarray`` for a dataset created under NumPy semantics, as in
MXNet); ``transform(image, label)`` is applied when given.

>>> import os, tempfile
>>> from neomx.gluon.data.vision import FashionMNIST
>>> try:
...     FashionMNIST(root=tempfile.mkdtemp(), train=False)
... except Exception as e:
...     print(type(e).__name__)
MXNetError
"""
import gzip
import os
import pickle
import struct
import tarfile
import warnings

import numpy as np

from .... import image, recordio
from ....base import MXNetError
from .._download import data_dir, fetch, repo_url
from ..dataset import Dataset, RecordFileDataset, _DownloadedDataset

__all__ = ['MNIST', 'FashionMNIST', 'CIFAR10', 'CIFAR100', 'ImageRecordDataset',
           'ImageFolderDataset']


def _default_root(name):
    return os.path.join(data_dir(), 'datasets', name)


def _missing(dataset, root, names, reason, where):
    return MXNetError(
        "%s: %s not found in %s, and downloading failed (%s). Place the files there, or pass "
        "root= to the folder that holds them; they are available from %s."
        % (dataset, ', '.join(names), root, reason, where))


class MNIST(_DownloadedDataset):
    """The MNIST handwritten digits (http://yann.lecun.com/exdb/mnist): 60,000 training and
    10,000 test images of shape (28, 28, 1).

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/mnist``
        The folder holding ``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``,
        ``t10k-images-idx3-ubyte.gz`` and ``t10k-labels-idx1-ubyte.gz`` (gzipped or not).
    train : bool, default True
        The training set, or the test set.
    transform : callable, default None
        ``transform(image, label)`` returning the sample, e.g.
        ``lambda data, label: (data.astype('float32') / 255, label)``.
    """
    _namespace = 'mnist'
    _source = 'http://yann.lecun.com/exdb/mnist'
    _train_data = ('train-images-idx3-ubyte.gz', '6c95f4b05d2bf285e1bfb0e7960c31bd3b3f8a7d')
    _train_label = ('train-labels-idx1-ubyte.gz', '2a80914081dc54586dbdf242f9805a6b8d2a15fc')
    _test_data = ('t10k-images-idx3-ubyte.gz', 'c3a25af1f52dad7f726cce8cacb138654b760d48')
    _test_label = ('t10k-labels-idx1-ubyte.gz', '763e7fa3757d93b0cdec073cef058b2004252c17')

    def __init__(self, root=None, train=True, transform=None):
        self._train = train
        super().__init__(root or _default_root(self._namespace), transform)

    def _locate(self, files):
        """The paths of ``files`` ((name, sha1) pairs) under root, downloading missing ones."""
        paths, missing = [], []
        for name, sha1 in files:
            for candidate in (name, name[:-3] if name.endswith('.gz') else None):
                if candidate and os.path.isfile(os.path.join(self._root, candidate)):
                    paths.append(os.path.join(self._root, candidate))
                    break
            else:
                paths.append(None)
                missing.append((name, sha1))
        for name, sha1 in missing:
            path = os.path.join(self._root, name)
            try:
                fetch(repo_url('gluon/dataset/' + self._namespace, name), path, sha1)
            except OSError as e:
                raise _missing(type(self).__name__, self._root, [n for n, _ in missing], e,
                               self._source) from None
            paths[[n for n, _ in files].index(name)] = path
        return paths

    def _get_data(self):
        if self._train:
            files = (self._train_data, self._train_label)
        else:
            files = (self._test_data, self._test_label)
        data_file, label_file = self._locate(files)
        label = _read_idx(label_file, 1).astype(np.int32)
        data = _read_idx(data_file, 3)
        if len(data) != len(label):
            raise MXNetError("%s: %s holds %d images but %s holds %d labels"
                             % (type(self).__name__, data_file, len(data), label_file, len(label)))
        self._keep(data[..., None].astype(np.uint8, copy=False), label)


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST (https://github.com/zalandoresearch/fashion-mnist), a drop-in
    replacement of MNIST: 10 classes of clothing, images of shape (28, 28, 1).

    Parameters are those of ``MNIST``; ``root`` defaults to
    ``$MXNET_HOME/datasets/fashion-mnist``.
    """
    _namespace = 'fashion-mnist'
    _source = 'https://github.com/zalandoresearch/fashion-mnist (folder data/fashion)'
    _train_data = ('train-images-idx3-ubyte.gz', '0cf37b0d40ed5169c6b3aba31069a9770ac9043d')
    _train_label = ('train-labels-idx1-ubyte.gz', '236021d52f1e40852b06a4c3008d8de8aef1e40b')
    _test_data = ('t10k-images-idx3-ubyte.gz', '626ed6a7c06dd17c0eec72fa3be1740f146a2863')
    _test_label = ('t10k-labels-idx1-ubyte.gz', '17f9ab60e7257a1620f4ad76bbbaf857c3920701')


def _read_idx(path, ndim):
    """The uint8 array of an IDX file (``.gz`` or not) with ``ndim`` dimensions."""
    try:
        opener = gzip.open if path.endswith('.gz') else open
        with opener(path, 'rb') as f:
            raw = f.read()
    except (OSError, EOFError) as e:
        raise MXNetError("cannot read %s: %s" % (path, e)) from None
    if len(raw) < 4 + 4 * ndim:
        raise MXNetError("%s is not an IDX file: only %d bytes" % (path, len(raw)))
    zero, code, nd_ = struct.unpack('>HBB', raw[:4])
    if zero != 0 or code != 0x08 or nd_ != ndim:
        raise MXNetError("%s is not an IDX file of %d-d unsigned bytes: header %r, expected "
                         "magic number 0x%08x" % (path, ndim, raw[:4], 0x0800 + ndim))
    dims = struct.unpack('>%dI' % ndim, raw[4:4 + 4 * ndim])
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise MXNetError("%s: the header gives shape %s (%d bytes) but the file holds %d bytes "
                         "of data" % (path, dims, int(np.prod(dims)), data.size))
    return data.reshape(dims)


class CIFAR10(_DownloadedDataset):
    """CIFAR-10 (https://www.cs.toronto.edu/~kriz/cifar.html): 50,000 training and 10,000 test
    color images of shape (32, 32, 3) in 10 classes.

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/cifar10``
        The folder holding the binary batches ``data_batch_1.bin`` ... ``data_batch_5.bin`` and
        ``test_batch.bin`` (directly or in ``cifar-10-batches-bin/``), or the Python batches
        (``cifar-10-batches-py/data_batch_1`` ...), or one of the archives
        ``cifar-10-binary.tar.gz`` / ``cifar-10-python.tar.gz``.
    train : bool, default True
    transform : callable, default None
    """
    _namespace = 'cifar10'
    _archive = ('cifar-10-binary.tar.gz', 'fab780a1e191a7eda0f345501ccd62d20f7ed891')
    _py_archive = 'cifar-10-python.tar.gz'
    _bin_dir, _py_dir = 'cifar-10-batches-bin', 'cifar-10-batches-py'
    _train_files = ['data_batch_%d' % i for i in range(1, 6)]
    _test_files = ['test_batch']
    _label_bytes = 1

    def __init__(self, root=None, train=True, transform=None):
        self._train = train
        super().__init__(root or _default_root(self._namespace), transform)

    def _find(self, names):
        """``('bin' or 'py', paths)`` for the batches ``names`` under root, or None."""
        for kind, folders, ext in (('bin', ('', self._bin_dir), '.bin'),
                                   ('py', (self._py_dir, ''), '')):
            for folder in folders:
                paths = [os.path.join(self._root, folder, n + ext) for n in names]
                if all(os.path.isfile(p) for p in paths):
                    return kind, paths
        return None

    def _get_data(self):
        names = self._train_files if self._train else self._test_files
        found = self._find(names)
        if found is None:
            for archive in (self._archive[0], self._py_archive):
                path = os.path.join(self._root, archive)
                if os.path.isfile(path):
                    self._extract(path)
                    found = self._find(names)
                    if found is not None:
                        break
        if found is None:
            path = os.path.join(self._root, self._archive[0])
            try:
                fetch(repo_url('gluon/dataset/' + self._namespace, self._archive[0]), path,
                      self._archive[1])
            except OSError as e:
                raise _missing(type(self).__name__, self._root,
                               [n + '.bin' for n in names], e,
                               'https://www.cs.toronto.edu/~kriz/cifar.html (the binary or the '
                               'Python version; the archive may be placed in the folder as it '
                               'is)') from None
            self._extract(path)
            found = self._find(names)
            if found is None:
                raise MXNetError("%s: %s does not hold %s" % (type(self).__name__, path, names))
        kind, paths = found
        read = self._read_bin if kind == 'bin' else self._read_py
        data, label = zip(*(read(p) for p in paths))
        self._keep(np.concatenate(data).astype(np.uint8, copy=False), np.concatenate(label))

    def _extract(self, path):
        try:
            with tarfile.open(path) as tar:
                if hasattr(tarfile, 'data_filter'):   # refuses paths leaving the folder
                    tar.extractall(self._root, filter='data')
                else:  # pragma: no cover - Python before 3.10.12
                    tar.extractall(self._root)
        except (tarfile.TarError, OSError, EOFError) as e:
            raise MXNetError("%s: cannot extract %s: %s" % (type(self).__name__, path, e)) from None

    def _label_of(self, labels):
        """The label column of a binary batch (CIFAR-100 has two)."""
        return labels[:, 0]

    def _read_bin(self, path):
        raw = np.fromfile(path, dtype=np.uint8)
        row = 3072 + self._label_bytes
        if raw.size % row:
            raise MXNetError("%s: %d bytes is not a whole number of %d-byte records (%d label "
                             "byte(s) and a 3x32x32 image)" % (path, raw.size, row, self._label_bytes))
        raw = raw.reshape(-1, row)
        images = raw[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return images, self._label_of(raw[:, :self._label_bytes]).astype(np.int32)

    def _read_py(self, path):
        try:
            with open(path, 'rb') as f:
                batch = pickle.load(f, encoding='bytes')
        except (OSError, pickle.UnpicklingError, EOFError) as e:
            raise MXNetError("cannot read the CIFAR batch %s: %s" % (path, e)) from None
        batch = {k.decode() if isinstance(k, bytes) else k: v for k, v in batch.items()}
        key = self._py_label_key()
        if 'data' not in batch or key not in batch:
            raise MXNetError("%s: a CIFAR Python batch needs the keys 'data' and %r, found %s"
                             % (path, key, sorted(batch)))
        images = np.asarray(batch['data'], dtype=np.uint8).reshape(-1, 3, 32, 32)
        return images.transpose(0, 2, 3, 1), np.asarray(batch[key], dtype=np.int32)

    def _py_label_key(self):
        return 'labels'


class CIFAR100(CIFAR10):
    """CIFAR-100: as CIFAR-10 with 100 fine classes grouped in 20 coarse ones.

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/cifar100``
        The folder holding ``train.bin`` and ``test.bin`` (or ``cifar-100-binary/``,
        ``cifar-100-python/train`` and ``test``, or the archives).
    fine_label : bool, default False
        The 100 fine labels, or the 20 coarse ones.
    train : bool, default True
    transform : callable, default None
    """
    _namespace = 'cifar100'
    _archive = ('cifar-100-binary.tar.gz', 'a0bb982c76b83111308126cc779a992fa506b90b')
    _py_archive = 'cifar-100-python.tar.gz'
    _bin_dir, _py_dir = 'cifar-100-binary', 'cifar-100-python'
    _train_files = ['train']
    _test_files = ['test']
    _label_bytes = 2

    def __init__(self, root=None, fine_label=False, train=True, transform=None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _label_of(self, labels):
        return labels[:, 1 if self._fine_label else 0]

    def _py_label_key(self):
        return 'fine_labels' if self._fine_label else 'coarse_labels'


class ImageRecordDataset(RecordFileDataset):
    """The images of a RecordIO file (``.rec`` with its ``.idx``, as ``im2rec`` makes them): a
    sample is ``(image, label)``, the image decoded to an HWC ``uint8`` NDArray, the label the
    record header's (a float, or a float32 array).

    Parameters
    ----------
    filename : str
        Path to the ``.rec`` file.
    flag : {0, 1}, default 1
        1 for three color channels (RGB), 0 for grayscale.
    transform : callable, default None
        ``transform(image, label)`` returning the sample.
    """

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        header, img = recordio.unpack(super().__getitem__(idx))
        img = image.imdecode(img, self._flag)
        if self._transform is not None:
            return self._transform(img, header.label)
        return img, header.label


class ImageFolderDataset(Dataset):
    """Images stored one folder per class::

        root/car/0001.jpg
        root/bus/0002.png

    A sample is ``(image, label)``: the image an HWC ``uint8`` NDArray, the label the index of
    its folder in ``synsets`` (the folder names, sorted).

    Parameters
    ----------
    root : str
    flag : {0, 1}, default 1
        1 for three color channels (RGB), 0 for grayscale.
    transform : callable, default None
        ``transform(image, label)`` returning the sample.

    Attributes
    ----------
    synsets : list of str
        The class names; ``synsets[i]`` is the name of label ``i``.
    items : list of (str, int)
        Every image as (path, label).
    """

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = ['.jpg', '.jpeg', '.png']
        if not os.path.isdir(self._root):
            raise MXNetError("ImageFolderDataset: %s is not a folder (expected one sub-folder of "
                             "images per class)" % self._root)
        self._list_images(self._root)

    def _list_images(self, root):
        self.synsets = []
        self.items = []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn('Ignoring %s, which is not a directory.' % path, stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for name in sorted(os.listdir(path)):
                filename = os.path.join(path, name)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn('Ignoring %s of type %s. Only support %s'
                                  % (filename, ext, ', '.join(self._exts)))
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        img = image.imread(self.items[idx][0], self._flag)
        label = self.items[idx][1]
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from .... import base  # noqa: E402,F401
from .... import ndarray as nd  # noqa: E402,F401
from ....util import is_np_array  # noqa: E402,F401
from .. import dataset  # noqa: E402,F401


def __getattr__(name):
    # gluon.utils imports this package: its helpers are looked up when first asked for
    if name in ('_get_repo_file_url', 'check_sha1', 'download'):
        from ... import utils
        return getattr(utils, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
