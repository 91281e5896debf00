"""The MXNet module of the d2l package (Dive into Deep Learning, 2nd edition; PyPI d2l==1.0.3)
imports and its helpers run on neomx. Skipped when d2l (or one of the packages its module
imports: pandas, requests, IPython, matplotlib_inline) is not installed."""
import sys

import pytest

for _mod in ('d2l', 'pandas', 'requests', 'IPython', 'matplotlib', 'matplotlib_inline'):
    pytest.importorskip(_mod)

import matplotlib  # noqa: E402

matplotlib.use('Agg')


@pytest.fixture(scope='module')
def d2l():
    from neomx import _mxnet_alias, npx
    installed = _mxnet_alias.installed()
    if not installed:
        _mxnet_alias.install()
    sys.modules.pop('d2l.mxnet', None)
    from d2l import mxnet as module
    npx.set_np()
    yield module
    npx.reset_np()
    if not installed:
        _mxnet_alias.uninstall()


def test_linear_regression_chapter(d2l):
    from neomx import np
    data = d2l.SyntheticRegressionData(w=np.array([2, -3.4]), b=4.2)
    model = d2l.LinearRegressionScratch(2, lr=0.03)
    d2l.Trainer(max_epochs=3).fit(model, data)
    assert float(np.abs(data.w - model.w.reshape(data.w.shape)).max()) < 0.5
    model = d2l.LinearRegression(lr=0.03)
    d2l.Trainer(max_epochs=3).fit(model, data)
    w, b = model.get_w_b()
    assert float(np.abs(data.w - w.reshape(data.w.shape)).max()) < 0.5


def test_convolution_and_classification_helpers(d2l):
    from neomx import np
    X = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
    K = np.array([[0.0, 1.0], [2.0, 3.0]])
    assert d2l.corr2d(X, K).tolist() == [[19.0, 25.0], [37.0, 43.0]]
    net = d2l.LeNet()
    net.initialize()
    net.hybridize()
    assert net(np.random.uniform(size=(2, 1, 28, 28))).shape == (2, 10)
    blk = d2l.Residual(6, use_1x1conv=True, strides=2)
    blk.initialize()
    assert blk(np.random.uniform(size=(4, 3, 6, 6))).shape == (4, 6, 3, 3)
    m = d2l.SoftmaxRegression(num_outputs=10, lr=0.1)
    m.initialize()
    x, y = np.random.uniform(size=(4, 784)), np.array([1, 2, 3, 4])
    assert m.loss(m(x), y).shape == ()
    assert d2l.accuracy(np.array([[0.1, 0.9], [0.8, 0.2]]), np.array([1, 0])) == 2.0


def test_train_ch6_on_synthetic_images(d2l, capsys):
    from neomx import gluon, np, cpu
    from neomx.gluon import nn
    X = np.random.uniform(size=(20, 1, 8, 8))
    y = np.array([i % 2 for i in range(20)])
    it = d2l.load_array((X, y), 4)      # 5 batches: train_ch6 plots every num_batches // 5
    net = nn.Sequential()
    net.add(nn.Conv2D(4, kernel_size=3, activation='relu'), nn.Flatten(), nn.Dense(2))
    d2l.train_ch6(net, it, it, 1, 0.1, cpu())
    assert 'test acc' in capsys.readouterr().out


def test_attention_and_transformer(d2l):
    from neomx import np
    queries = np.random.normal(0, 1, (2, 1, 2))
    keys = np.ones((2, 10, 2))
    values = np.arange(40).reshape(1, 10, 4).repeat(2, axis=0)
    valid = np.array([2, 6])
    for attention in (d2l.DotProductAttention(dropout=0.5),
                      d2l.AdditiveAttention(num_hiddens=8, dropout=0.1)):
        attention.initialize()
        assert attention(queries, keys, values, valid).shape == (2, 1, 4)
    p = d2l.masked_softmax(np.random.uniform(size=(2, 2, 4)), np.array([[1, 3], [2, 4]]))
    assert float(p[0, 0, 1:].sum()) == 0.0
    mha = d2l.MultiHeadAttention(20, 5, 0.5)
    mha.initialize()
    assert mha(np.ones((2, 4, 20)), np.ones((2, 6, 20)), np.ones((2, 6, 20)),
               np.array([3, 2])).shape == (2, 4, 20)
    enc = d2l.TransformerEncoder(50, 8, 16, 2, 1, 0.5)
    enc.initialize()
    assert enc(np.ones((2, 10)), np.array([3, 2])).shape == (2, 10, 8)


def test_recurrent_and_text_helpers(d2l):
    from neomx import np
    vocab = d2l.Vocab(['a', 'b', 'a', 'c'])
    assert len(vocab) == 4 and vocab['a'] == 1
    rnn = d2l.RNN(num_hiddens=8)
    rnn.initialize()
    assert rnn(np.ones((3, 2, 5)))[0].shape == (3, 2, 8)
    gru = d2l.GRU(num_hiddens=8, num_layers=2)
    gru.initialize()
    assert gru(np.ones((3, 2, 5)))[0].shape == (3, 2, 8)
    lm = d2l.RNNLMScratch(d2l.RNNScratch(num_inputs=10, num_hiddens=8), vocab_size=10)
    lm.initialize()
    assert lm(np.zeros((2, 5), dtype='int32')).shape == (2, 5, 10)


def test_bounding_box_helpers(d2l):
    from neomx import np
    boxes = np.array([[0.1, 0.08, 0.52, 0.92], [0.55, 0.2, 0.9, 0.88]])
    back = d2l.box_center_to_corner(d2l.box_corner_to_center(boxes))
    assert float(np.abs(back - boxes).max()) < 1e-6
    anchors = d2l.multibox_prior(np.random.uniform(size=(1, 3, 4, 6)), sizes=[0.75, 0.5],
                                 ratios=[1, 2])
    assert anchors.shape == (1, 72, 4)
    assert d2l.box_iou(boxes, boxes).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def _classification_data(d2l, np, n=48, shape=(1, 8, 8), k=4):
    class Data(d2l.DataModule):
        def __init__(self, batch_size=16):
            super().__init__()
            self.save_hyperparameters()
            self.X = np.random.uniform(size=(n,) + shape)
            self.y = np.random.randint(0, k, size=(n,)).astype('int32')

        def get_dataloader(self, train):
            return self.get_tensorloader((self.X, self.y), train)
    return Data()


def test_classification_chapters_train_through_d2l_trainer(d2l):
    """Chapter 4-5 models (softmax and MLP from scratch, concise MLP with dropout) trained by
    d2l's Trainer: scratch parameters found by get_scratch_params, updated by d2l.SGD."""
    from neomx import np
    from neomx.gluon import nn

    class MLPScratch(d2l.Classifier):
        def __init__(self, num_inputs, num_outputs, num_hiddens, lr, sigma=0.01):
            super().__init__()
            self.save_hyperparameters()
            self.W1 = np.random.randn(num_inputs, num_hiddens) * sigma
            self.b1 = np.zeros(num_hiddens)
            self.W2 = np.random.randn(num_hiddens, num_outputs) * sigma
            self.b2 = np.zeros(num_outputs)
            for param in self.get_scratch_params():
                param.attach_grad()

        def forward(self, X):
            H = np.maximum(np.dot(X.reshape((-1, self.num_inputs)), self.W1) + self.b1, 0)
            return np.dot(H, self.W2) + self.b2

    data = _classification_data(d2l, np)
    model = MLPScratch(64, 4, 16, lr=0.1)
    before = model.W1.copy()
    d2l.Trainer(max_epochs=1).fit(model, data)
    assert float(np.abs(model.W1 - before).sum()) > 0          # d2l.SGD updated in place
    assert len(model.get_scratch_params()) == 4

    class DropoutMLP(d2l.Classifier):
        def __init__(self, num_outputs, lr):
            super().__init__()
            self.save_hyperparameters()
            self.net = nn.Sequential()
            self.net.add(nn.Dense(16, activation='relu'), nn.Dropout(0.5), nn.Dense(num_outputs))
            self.net.initialize()
    model = DropoutMLP(4, 0.1)
    d2l.Trainer(max_epochs=1).fit(model, data)
    X, y = next(iter(data.val_dataloader()))
    assert 0.0 <= float(model.accuracy(model(X), y)) <= 1.0
    assert model.loss(model(X), y, averaged=False).shape == (16,)


def test_rnn_language_model_trains_with_gradient_clipping(d2l):
    """Chapter 9: RNNLMScratch trained by d2l's Trainer with gradient_clip_val (which scales
    param.grad[:] in place), and RNNLM.predict over a Vocab."""
    from neomx import np

    class Text(d2l.DataModule):
        def __init__(self, batch_size=4, num_steps=5, n=24):
            super().__init__()
            self.save_hyperparameters()
            corpus = np.random.randint(0, 10, size=(n + num_steps + 1,)).astype('int32')
            rows = np.stack([corpus[i:i + num_steps + 1] for i in range(n)])
            self.X, self.Y = rows[:, :-1], rows[:, 1:]
            self.num_train = 16

        def get_dataloader(self, train):
            idx = slice(0, self.num_train) if train else slice(self.num_train, None)
            return self.get_tensorloader([self.X, self.Y], train, idx)
    model = d2l.RNNLMScratch(d2l.RNNScratch(num_inputs=10, num_hiddens=8), vocab_size=10, lr=1)
    # the gradients' norm here is about 0.25: a bound of 0.05 clips every step
    d2l.Trainer(max_epochs=1, gradient_clip_val=0.05).fit(model, Text())
    norm = float(np.sqrt(sum((p.grad ** 2).sum() for p in model.get_scratch_params())))
    assert abs(norm - 0.05) < 1e-4                              # the last step was clipped
    vocab = d2l.Vocab(list('abcdefghi'))
    lm = d2l.RNNLM(d2l.GRU(num_hiddens=8, num_layers=1), vocab_size=len(vocab), lr=1)
    lm.initialize()
    # the untrained model may predict the unknown token, '<unk>' in the text
    predicted = lm.predict('abc', 4, vocab)
    assert predicted.startswith('abc') and len(predicted.replace('<unk>', '?')) == 7
