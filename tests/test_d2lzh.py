"""The helper package of the book neomx is built from (PyPI ``d2lzh==1.0.0``, installed with
``--no-deps``) imports on neomx and its helpers run: data loading, the training loops of
chapters 3 and 5, ``train`` with ResNet-18, ``try_gpu`` and the plotting helpers. Skips when
d2lzh (or IPython, which it imports) is not installed. Runs as MXNet code, through
``neomx run``, on a small Fashion-MNIST made here (no download)."""
import gzip
import importlib.util
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    importlib.util.find_spec('d2lzh') is None or importlib.util.find_spec('IPython') is None,
    reason='d2lzh (pip install --no-deps d2lzh==1.0.0) and IPython are not installed')]


def _idx(path, array):
    header = struct.pack('>HBB', 0, 0x08, array.ndim) + struct.pack('>%dI' % array.ndim,
                                                                   *array.shape)
    with gzip.open(path, 'wb') as f:
        f.write(header + array.astype(np.uint8).tobytes())


def _fashion_mnist(root, n_train=48, n_test=32):
    """Images whose label is visible (a bright band at a row given by the label)."""
    rng = np.random.RandomState(0)
    for prefix, n in (('train', n_train), ('t10k', n_test)):
        labels = rng.randint(0, 10, n)
        images = rng.randint(0, 60, (n, 28, 28))
        for i, y in enumerate(labels):
            images[i, 2 * y + 4:2 * y + 7] = 250
        _idx(os.path.join(root, '%s-images-idx3-ubyte.gz' % prefix), images)
        _idx(os.path.join(root, '%s-labels-idx1-ubyte.gz' % prefix), labels)


SCRIPT = r'''
import sys
import matplotlib
matplotlib.use('Agg')
from IPython import display
if not hasattr(display, 'set_matplotlib_formats'):
    # IPython 8 moved it (d2lzh 1.0 predates that): IPython's own replacement
    from matplotlib_inline.backend_inline import set_matplotlib_formats
    display.set_matplotlib_formats = set_matplotlib_formats
import d2lzh as d2l
import mxnet as mx
from mxnet import gluon, init, nd
from mxnet.gluon import loss as gloss, nn

root = sys.argv[1]
ctx = d2l.try_gpu()
print('ctx', ctx, d2l.try_all_gpus())
train_iter, test_iter = d2l.load_data_fashion_mnist(16, root=root)
X, y = next(iter(train_iter))
print('batch', X.shape, y.shape)

net = nn.Sequential()
net.add(nn.Dense(10))
net.initialize(init.Normal(sigma=0.01))
trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
d2l.train_ch3(net, train_iter, test_iter, gloss.SoftmaxCrossEntropyLoss(), 2, 16, None, None,
              trainer)

lenet = nn.Sequential()
lenet.add(nn.Conv2D(6, kernel_size=5, activation='sigmoid'), nn.MaxPool2D(2, 2),
          nn.Dense(20, activation='sigmoid'), nn.Dense(10))
lenet.initialize(ctx=ctx, init=init.Xavier())
trainer = gluon.Trainer(lenet.collect_params(), 'sgd', {'learning_rate': 0.9})
d2l.train_ch5(lenet, train_iter, test_iter, 16, trainer, ctx, 1)

resnet = d2l.resnet18(10)
resnet.initialize(ctx=ctx, init=init.Xavier())
trainer = gluon.Trainer(resnet.collect_params(), 'sgd', {'learning_rate': 0.05})
d2l.train(train_iter, test_iter, resnet, gloss.SoftmaxCrossEntropyLoss(), trainer, ctx, 1)

d2l.set_figsize()
axes = d2l.show_images([X[i][0] for i in range(4)], 2, 2)
d2l.semilogy(range(1, 4), [1, 0.5, 0.2], 'epochs', 'loss', range(1, 4), [1, 0.6, 0.3],
             ['train', 'test'])
print('labels', d2l.get_fashion_mnist_labels([0, 9]))
print('sgd', d2l.squared_loss(nd.array([1.0]), nd.array([3.0])).asscalar())
print('done')
'''


def test_d2lzh_helpers_run(tmp_path):
    _fashion_mnist(str(tmp_path))
    script = tmp_path / 'book.py'
    script.write_text(textwrap.dedent(SCRIPT))
    env = dict(os.environ, MPLBACKEND='Agg')
    r = subprocess.run([sys.executable, '-m', 'neomx', 'run', str(script), str(tmp_path)],
                       capture_output=True, text=True, timeout=600, env=env, cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    out = r.stdout
    assert 'batch (16, 1, 28, 28) (16,)' in out
    # train_ch3 ran two epochs, train_ch5 and train one each, each with a test accuracy
    assert out.count('test acc') == 4, out
    assert "labels ['t-shirt', 'ankle boot']" in out
    assert 'sgd 2.0' in out and out.rstrip().endswith('done')
