"""gluon.loss: values against closed forms, sample weights, gradients, hybridized losses, and
a differential run against MXNet 1.9.1."""
import textwrap

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, nd
from neomx.gluon import loss as gloss

rs = np.random.RandomState(0)


def _np_log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def test_l1_l2_and_weights():
    pred = rs.randn(4, 3).astype(np.float32)
    label = rs.randn(4, 3).astype(np.float32)
    l2 = gloss.L2Loss()(nd.array(pred), nd.array(label)).asnumpy()
    np.testing.assert_allclose(l2, 0.5 * ((pred - label) ** 2).mean(axis=1), rtol=1e-5)
    l1 = gloss.L1Loss(weight=2.0)(nd.array(pred), nd.array(label)).asnumpy()
    np.testing.assert_allclose(l1, 2 * np.abs(pred - label).mean(axis=1), rtol=1e-5)
    sw = rs.rand(4, 1).astype(np.float32)
    l1w = gloss.L1Loss()(nd.array(pred), nd.array(label), nd.array(sw)).asnumpy()
    np.testing.assert_allclose(l1w, (np.abs(pred - label) * sw).mean(axis=1), rtol=1e-5)
    # labels are reshaped like the predictions
    flat = gloss.L2Loss()(nd.array(pred[:, :1]), nd.array(label[:, 0])).asnumpy()
    np.testing.assert_allclose(flat, 0.5 * (pred[:, 0] - label[:, 0]) ** 2, rtol=1e-5)
    with pytest.raises(mx.MXNetError, match='weight must be a number'):
        gloss.L1Loss(weight=nd.ones((1,)))(nd.array(pred), nd.array(label))


def test_softmax_cross_entropy_variants():
    pred = rs.randn(5, 4).astype(np.float32)
    label = np.array([0, 3, 1, 2, 3], dtype=np.float32)
    expected = -_np_log_softmax(pred)[np.arange(5), label.astype(int)]
    got = gloss.SoftmaxCrossEntropyLoss()(nd.array(pred), nd.array(label)).asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    dense = np.eye(4)[label.astype(int)]
    got = gloss.SoftmaxCELoss(sparse_label=False)(nd.array(pred), nd.array(dense)).asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    logp = _np_log_softmax(pred)
    got = gloss.SoftmaxCrossEntropyLoss(from_logits=True)(nd.array(logp),
                                                          nd.array(label)).asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    # axis=1 over (N, C, T): one loss per sample, averaged over T
    p3 = rs.randn(2, 3, 4).astype(np.float32)
    l3 = rs.randint(0, 3, size=(2, 4)).astype(np.float32)
    got = gloss.SoftmaxCrossEntropyLoss(axis=1)(nd.array(p3), nd.array(l3)).asnumpy()
    lp = _np_log_softmax(p3, axis=1)
    picked = np.take_along_axis(lp, l3.astype(int)[:, None, :], axis=1)[:, 0, :]
    np.testing.assert_allclose(got, -picked.mean(axis=1), rtol=1e-5)


def test_sigmoid_bce_logistic_hinge_huber_kl():
    x = rs.randn(4, 3).astype(np.float32)
    z = (rs.rand(4, 3) > 0.5).astype(np.float32)
    sig = 1 / (1 + np.exp(-x))
    bce = -(z * np.log(sig) + (1 - z) * np.log(1 - sig))
    got = gloss.SigmoidBinaryCrossEntropyLoss()(nd.array(x), nd.array(z)).asnumpy()
    np.testing.assert_allclose(got, bce.mean(axis=1), rtol=1e-4)
    got = gloss.SigmoidBCELoss(from_sigmoid=True)(nd.array(sig), nd.array(z)).asnumpy()
    np.testing.assert_allclose(got, bce.mean(axis=1), rtol=1e-4)
    pw = np.array([[2.0, 1.0, 0.5]], dtype=np.float32)
    got = gloss.SigmoidBCELoss()(nd.array(x), nd.array(z), None, nd.array(pw)).asnumpy()
    expected = -(pw * z * np.log(sig) + (1 - z) * np.log(1 - sig))
    np.testing.assert_allclose(got, expected.mean(axis=1), rtol=1e-4)
    signed = 2 * z - 1
    got = gloss.LogisticLoss()(nd.array(x), nd.array(signed)).asnumpy()
    np.testing.assert_allclose(got, np.log1p(np.exp(-x * signed)).mean(axis=1), rtol=1e-4)
    got = gloss.LogisticLoss(label_format='binary')(nd.array(x), nd.array(z)).asnumpy()
    np.testing.assert_allclose(got, np.log1p(np.exp(-x * signed)).mean(axis=1), rtol=1e-4)
    with pytest.raises(ValueError, match='label_format'):
        gloss.LogisticLoss(label_format='other')
    got = gloss.HingeLoss(margin=0.5)(nd.array(x), nd.array(signed)).asnumpy()
    np.testing.assert_allclose(got, np.maximum(0, 0.5 - x * signed).mean(axis=1), rtol=1e-5)
    got = gloss.SquaredHingeLoss()(nd.array(x), nd.array(signed)).asnumpy()
    np.testing.assert_allclose(got, (np.maximum(0, 1 - x * signed) ** 2).mean(axis=1),
                               rtol=1e-5)
    d = np.abs(x - z)
    huber = np.where(d > 0.5, d - 0.25, d ** 2)
    got = gloss.HuberLoss(rho=0.5)(nd.array(x), nd.array(z)).asnumpy()
    np.testing.assert_allclose(got, huber.mean(axis=1), rtol=1e-5)
    p = np.exp(_np_log_softmax(rs.randn(4, 3)))
    got = gloss.KLDivLoss(from_logits=False)(nd.array(x), nd.array(p)).asnumpy()
    kl = (p * (np.log(p + 1e-12) - _np_log_softmax(x))).sum(axis=1)
    np.testing.assert_allclose(got, kl, rtol=1e-4)


def test_other_losses():
    a, p, n = (rs.randn(3, 4).astype(np.float32) for _ in range(3))
    got = gloss.TripletLoss()(nd.array(a), nd.array(p), nd.array(n)).asnumpy()
    expected = np.maximum(((p - a) ** 2).sum(1) - ((n - a) ** 2).sum(1) + 1, 0)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    target = rs.randint(0, 4, size=(3, 4)).astype(np.float32)
    got = gloss.PoissonNLLLoss()(nd.array(a), nd.array(target)).asnumpy()
    np.testing.assert_allclose(got, [(np.exp(a) - target * a).mean()], rtol=1e-5)
    label = np.array([1, -1, 1], dtype=np.float32)
    cos = (a * p).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(p, axis=1)
    got = gloss.CosineEmbeddingLoss()(nd.array(a), nd.array(p), nd.array(label)).asnumpy()
    np.testing.assert_allclose(got.ravel(), np.where(label == 1, 1 - cos, np.maximum(cos, 0)),
                               rtol=1e-4, atol=1e-6)


def test_loss_gradient_and_hybridize():
    pred = nd.array(rs.randn(4, 3))
    label = nd.array([0, 2, 1, 1])
    pred.attach_grad()
    loss = gloss.SoftmaxCrossEntropyLoss()
    with autograd.record():
        out = loss(pred, label)
    out.backward()
    p = np.exp(_np_log_softmax(pred.asnumpy()))
    np.testing.assert_allclose(pred.grad.asnumpy(), p - np.eye(3)[[0, 2, 1, 1]], rtol=1e-5,
                               atol=1e-6)
    hybrid = gloss.SoftmaxCrossEntropyLoss()
    hybrid.hybridize()
    np.testing.assert_allclose(hybrid(pred, label).asnumpy(), out.asnumpy(), rtol=1e-6)
    assert repr(loss) == 'SoftmaxCrossEntropyLoss(batch_axis=0, w=None)'


# -- differential ---------------------------------------------------------------------------

_LOSSES = textwrap.dedent('''
    import numpy as np
    rs = np.random.RandomState(0)
    out = {}

    def run(name, loss, *arrays, sample_weight=None):
        xs = [mx.nd.array(a) for a in arrays]
        xs[0].attach_grad()
        args = xs + ([mx.nd.array(sample_weight)] if sample_weight is not None else [])
        with mx.autograd.record():
            y = loss(*args)
        y.backward()
        out[name] = y.asnumpy()
        out[name + ':grad'] = xs[0].grad.asnumpy()

    pred, label = rs.randn(4, 5).astype('float32'), rs.randn(4, 5).astype('float32')
    sw = rs.rand(4, 1).astype('float32')
    cls = rs.randint(0, 5, size=(4,)).astype('float32')
    binary = (rs.rand(4, 5) > 0.5).astype('float32')
    run('l2', gloss.L2Loss(), pred, label)
    run('l2_weighted', gloss.L2Loss(weight=0.3), pred, label, sample_weight=sw)
    run('l1', gloss.L1Loss(), pred, label, sample_weight=sw)
    run('softmax_ce', gloss.SoftmaxCrossEntropyLoss(), pred, cls)
    run('softmax_ce_dense', gloss.SoftmaxCrossEntropyLoss(sparse_label=False), pred,
        np.exp(label) / np.exp(label).sum(1, keepdims=True))
    run('softmax_ce_axis', gloss.SoftmaxCrossEntropyLoss(axis=1), rs.randn(2, 3, 4),
        rs.randint(0, 3, size=(2, 4)).astype('float32'))
    run('softmax_ce_logits', gloss.SoftmaxCrossEntropyLoss(from_logits=True, weight=2.0),
        pred, cls, sample_weight=sw)
    run('sigmoid_bce', gloss.SigmoidBinaryCrossEntropyLoss(), pred, binary)
    run('sigmoid_bce_prob', gloss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=True),
        1 / (1 + np.exp(-pred)), binary)
    run('kl', gloss.KLDivLoss(from_logits=False), pred,
        np.exp(label) / np.exp(label).sum(1, keepdims=True))
    run('huber', gloss.HuberLoss(rho=0.7), pred, label)
    run('hinge', gloss.HingeLoss(), pred, 2 * binary - 1)
    run('squared_hinge', gloss.SquaredHingeLoss(margin=2), pred, 2 * binary - 1)
    run('logistic', gloss.LogisticLoss(), pred, 2 * binary - 1)
    run('logistic_binary', gloss.LogisticLoss(label_format='binary'), pred, binary)
    run('triplet', gloss.TripletLoss(), pred, label, rs.randn(4, 5).astype('float32'))
    run('poisson', gloss.PoissonNLLLoss(), pred, np.abs(label))
    seq = rs.randn(2, 6, 5).astype('float32')
    run('ctc', gloss.CTCLoss(), seq, np.array([[0, 1, 1], [2, -1, -1]], dtype='float32'))
    run('ctc_tnc', gloss.CTCLoss(layout='TNC', label_layout='TN'), seq.transpose(1, 0, 2),
        np.array([[0, 2], [1, -1], [1, -1]], dtype='float32'))
''')


def test_losses_match_mxnet(tmp_path, mxnet_ref):
    path = str(tmp_path / 'ref.npz')
    mxnet_ref("import mxnet as mx\nfrom mxnet.gluon import loss as gloss\n" + _LOSSES +
              "\nnp.savez(%r, **out)\n" % path)
    ref = dict(np.load(path))
    scope = {'mx': mx, 'gloss': gloss}
    exec(_LOSSES, scope)
    ours = scope['out']
    assert sorted(ours) == sorted(ref)
    for key, value in ref.items():
        assert ours[key].shape == value.shape, key
        np.testing.assert_allclose(ours[key], value, rtol=1e-4, atol=1e-6, err_msg=key)



def test_sdml_loss_matches_mxnet(mxnet_ref, tmp_path):
    x1 = np.random.RandomState(0).randn(4, 3).astype(np.float32)
    x2 = np.random.RandomState(1).randn(4, 3).astype(np.float32)
    np.save(tmp_path / 'x1.npy', x1)
    np.save(tmp_path / 'x2.npy', x2)
    mxnet_ref(textwrap.dedent("""
        import numpy as np, mxnet as mx
        x1, x2 = (mx.nd.array(np.load(r'DIR/%s.npy' % n)) for n in ('x1', 'x2'))
        loss = mx.gluon.loss.SDMLLoss(smoothing_parameter=0.2)(x1, x2)
        np.save(r'DIR/ref.npy', loss.asnumpy())
    """).replace('DIR', str(tmp_path)))
    got = gloss.SDMLLoss(smoothing_parameter=0.2)(nd.array(x1), nd.array(x2))
    np.testing.assert_allclose(got.asnumpy(), np.load(tmp_path / 'ref.npy'), rtol=1e-5)
