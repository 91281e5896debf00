"""``gluon.contrib`` layers (concurrent containers, identity, sparse embedding, pixel shuffle,
SyncBatchNorm, deformable convolutions), ``contrib.data`` and ``mx.contrib.text``."""
import collections
import json
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon, nd
from neomx.base import MXNetError
from neomx.contrib import text
from neomx.gluon import contrib, nn
from neomx.gluon.contrib.nn import (Concurrent, HybridConcurrent, Identity, PixelShuffle1D,
                                    PixelShuffle2D, PixelShuffle3D, SparseEmbedding,
                                    SyncBatchNorm)


def test_concurrent_concatenates_children():
    for cls in (HybridConcurrent, Concurrent):
        net = cls(axis=1)
        net.add(nn.Dense(4, in_units=3), nn.Dense(2, in_units=3), Identity())
        net.initialize()
        x = nd.random.uniform(shape=(5, 3))
        out = net(x)
        assert out.shape == (5, 9)
        np.testing.assert_allclose(out.asnumpy()[:, 6:], x.asnumpy())
    y = HybridConcurrent(axis=1)
    y.add(nn.Dense(4, in_units=3), nn.Dense(2, in_units=3))
    assert len(y(mx.sym.var('data')).list_arguments()) == 5


def test_sparse_embedding_gradient_rows():
    layer = SparseEmbedding(10, 4)
    layer.initialize()
    with pytest.raises(RuntimeError, match='no Trainer'):
        layer(nd.array([1]))
    gluon.Trainer(layer.collect_params(), 'sgd')
    x = nd.array([3, 4, 2, 0, 1])
    with autograd.record():
        layer(x).backward()
    grad = layer.weight.grad().asnumpy()
    assert (grad[:5] == 1).all() and (grad[5:] == 0).all()
    assert 'SparseEmbedding(10 -> 4' in repr(layer)


def test_pixel_shuffle_layouts():
    y = PixelShuffle1D(2)(nd.arange(12).reshape((1, 4, 3)))
    assert y.asnumpy().tolist() == [[[0, 3, 1, 4, 2, 5], [6, 9, 7, 10, 8, 11]]]
    x = np.arange(1 * 12 * 2 * 3).reshape(1, 12, 2, 3)
    y = PixelShuffle2D((2, 3))(nd.array(x)).asnumpy()
    # the torch definition of the same shuffle: (N, C, f1, f2, H, W) -> (N, C, H, f1, W, f2)
    expected = x.reshape(1, 2, 2, 3, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 4, 9)
    assert (y == expected).all()
    x = np.arange(96).reshape(1, 4, 2, 3, 4)
    y = PixelShuffle3D((2, 1, 2))(nd.array(x)).asnumpy()
    expected = x.reshape(1, 1, 2, 1, 2, 2, 3, 4).transpose(0, 1, 5, 2, 6, 3, 7, 4) \
        .reshape(1, 1, 4, 3, 8)
    assert (y == expected).all()
    net = PixelShuffle2D(2)
    net.hybridize()
    assert net(nd.zeros((2, 8, 3, 5))).shape == (2, 2, 6, 10)
    with pytest.raises(ValueError):
        PixelShuffle2D((2, 2, 2))


def test_sync_batch_norm_on_one_device_is_batch_norm():
    x = nd.random.normal(shape=(4, 3, 5, 5))
    bn, sbn = nn.BatchNorm(in_channels=3), SyncBatchNorm(in_channels=3, num_devices=1)
    bn.initialize()
    sbn.initialize()
    with autograd.record():
        a, b = bn(x), sbn(x)
    np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(),
                               sbn.running_mean.data().asnumpy(), rtol=1e-6)
    s = mx.sym.contrib.SyncBatchNorm(mx.sym.var('data'), key='bn0')
    assert s.list_arguments() == ['data', 'syncbatchnorm0_gamma', 'syncbatchnorm0_beta'] or \
        len(s.list_arguments()) == 3
    with pytest.raises(MXNetError, match='ndev=2'):
        many = SyncBatchNorm(in_channels=3, num_devices=2)
        many.initialize()
        many(x)


def test_deformable_convolution_matches_mxnet(tmp_path, mxnet_ref):
    rng = np.random.RandomState(0)
    arrays = dict(data=rng.randn(2, 4, 7, 8).astype('f4'),
                  off=(rng.randn(2, 24, 7, 6) * 1.5).astype('f4'),
                  mask=rng.rand(2, 12, 7, 6).astype('f4'), w=rng.randn(6, 2, 2, 3).astype('f4'),
                  b=rng.randn(6).astype('f4'))
    np.savez(tmp_path / 'in.npz', **arrays)
    code = r'''
import numpy as np, mxnet as mx
a = {k: mx.nd.array(v) for k, v in np.load('in.npz').items()}
kw = dict(kernel=(2, 3), pad=(1, 0), dilate=(2, 1), num_filter=6, num_group=2,
          num_deformable_group=2)
np.savez('out.npz',
         v1=mx.nd.contrib.DeformableConvolution(a['data'], a['off'], a['w'], a['b'], **kw).asnumpy(),
         v2=mx.nd.contrib.ModulatedDeformableConvolution(a['data'], a['off'], a['mask'], a['w'],
                                                         a['b'], **kw).asnumpy())
'''
    mxnet_ref(code, cwd=str(tmp_path))
    ref = np.load(tmp_path / 'out.npz')
    a = {k: nd.array(v) for k, v in arrays.items()}
    kw = dict(kernel=(2, 3), pad=(1, 0), dilate=(2, 1), num_filter=6, num_group=2,
              num_deformable_group=2)
    v1 = nd.contrib.DeformableConvolution(a['data'], a['off'], a['w'], a['b'], **kw)
    v2 = nd.contrib.ModulatedDeformableConvolution(a['data'], a['off'], a['mask'], a['w'],
                                                   a['b'], **kw)
    np.testing.assert_allclose(v1.asnumpy(), ref['v1'], atol=1e-4)
    np.testing.assert_allclose(v2.asnumpy(), ref['v2'], atol=1e-4)


def test_deformable_convolution_zero_offsets_is_convolution():
    x = nd.random.normal(shape=(2, 3, 6, 7))
    w = nd.random.normal(shape=(4, 3, 3, 3))
    off = nd.zeros((2, 18, 4, 5))
    x.attach_grad()
    with autograd.record():
        out = nd.contrib.DeformableConvolution(x, off, w, kernel=(3, 3), num_filter=4,
                                               no_bias=True)
    out.backward()
    ref = nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-4, atol=1e-4)
    assert np.abs(x.grad.asnumpy()).sum() > 0
    with pytest.raises(MXNetError, match='offset has shape'):
        nd.contrib.DeformableConvolution(x, nd.zeros((2, 18, 5, 5)), w, kernel=(3, 3),
                                         num_filter=4, no_bias=True)


def test_deformable_layers_hybridize_and_train():
    from neomx.gluon.contrib.cnn import DeformableConvolution, ModulatedDeformableConvolution
    net = nn.HybridSequential()
    net.add(DeformableConvolution(4, kernel_size=3, padding=1),
            DeformableConvolution(4, kernel_size=(3, 2), activation='relu', use_bias=False,
                                  offset_use_bias=False, num_deformable_group=2),
            ModulatedDeformableConvolution(3, kernel_size=3))
    net.initialize()
    net.hybridize()
    x = nd.random.uniform(shape=(2, 2, 8, 9))
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    with autograd.record():
        y = net(x)
        y.sum().backward()
    trainer.step(2)
    assert y.shape == (2, 3, 4, 6)
    assert net[0].offset_weight.shape == (18, 2, 3, 3)


def test_interval_sampler():
    assert list(contrib.data.IntervalSampler(10, 3)) == [0, 3, 6, 9, 1, 4, 7, 2, 5, 8]
    assert list(contrib.data.IntervalSampler(10, 3, rollover=False)) == [0, 3, 6, 9]
    assert len(contrib.data.IntervalSampler(10, 3)) == 10
    with pytest.raises(ValueError):
        contrib.data.IntervalSampler(3, 5)


def test_wikitext_from_local_files(tmp_path):
    (tmp_path / 'wiki.train.tokens').write_text(' = Title = \n\n the cat sat \n the dog \n')
    (tmp_path / 'wiki.test.tokens').write_text(' a cat \n')
    train = contrib.data.text.WikiText2(root=str(tmp_path), seq_len=3)
    assert train.frequencies['the'] == 2 and train.vocabulary.idx_to_token[1] == '<eos>'
    data, label = train[0]
    assert data.shape == (3,) and (data.asnumpy()[1:] == label.asnumpy()[:2]).all()
    test = contrib.data.text.WikiText2(root=str(tmp_path), segment='test', seq_len=2,
                                       vocab=train.vocabulary)
    assert len(test.vocabulary) == len(train.vocabulary)
    with pytest.raises(ValueError, match='segment'):
        contrib.data.text.WikiText2(root=str(tmp_path), segment='dev')


def test_vocabulary_order_and_errors():
    counter = collections.Counter(['a', 'b', 'b', 'c', 'c', 'c', 'some_word$'])
    v = text.vocab.Vocabulary(counter)
    assert v.token_to_idx == {'<unk>': 0, 'c': 1, 'b': 2, 'a': 3, 'some_word$': 4}
    assert text.vocab.Vocabulary(counter, most_freq_count=1, min_freq=2,
                                 reserved_tokens=['<pad>', 'b']).idx_to_token == \
        ['<unk>', '<pad>', 'b', 'c']
    assert text.vocab.Vocabulary(counter, min_freq=2, unknown_token='a',
                                 reserved_tokens=['<pad>']).idx_to_token == ['a', '<pad>', 'c', 'b']
    assert v.to_indices(['a', 'zzz']) == [3, 0] and v.to_tokens([1, 0]) == ['c', '<unk>']
    with pytest.raises(ValueError):
        v.to_tokens(100)
    with pytest.raises(AssertionError):
        text.vocab.Vocabulary(counter, reserved_tokens=['b', 'b'])
    with pytest.raises(AssertionError):
        text.vocab.Vocabulary(counter, min_freq=0)
    cnt = text.utils.count_tokens_from_str('ISLifeISgreatLIFElife', 'IS', 'LIFE',
                                           to_lower=True)
    assert cnt == collections.Counter({'life': 2, 'great': 1})


def _write(path, rows, delim='\t'):
    path.write_text(''.join(delim.join(r) + '\n' for r in rows))
    return str(path)


def test_custom_and_composite_embeddings(tmp_path):
    f1 = _write(tmp_path / 'f1', [['a', '0.1', '0.2'], ['b', '0.3', '0.4']])
    f2 = _write(tmp_path / 'f2', [['a', '1', '2'], ['c', '3', '4'], ['<unk2>', '9', '9']])
    e1 = text.embedding.CustomEmbedding(f1, '\t', init_unknown_vec=nd.ones)
    assert e1.idx_to_token == ['<unk>', 'a', 'b'] and e1.vec_len == 2
    assert e1.get_vecs_by_tokens('A').asnumpy().tolist() == [1, 1]
    np.testing.assert_allclose(e1.get_vecs_by_tokens('A', lower_case_backup=True).asnumpy(),
                               [0.1, 0.2], rtol=1e-6)
    e2 = text.embedding.CustomEmbedding(f2, '\t', unknown_token='<unk2>')
    assert e2.get_vecs_by_tokens('zzz').asnumpy().tolist() == [9, 9]
    counter = collections.Counter(['b', 'c', 'c'])
    vocab = text.vocab.Vocabulary(counter, unknown_token='a')
    ce = text.embedding.CompositeEmbedding(vocab, [e1, e2])
    # the vocabulary's unknown token takes each embedding's unknown vector
    np.testing.assert_allclose(ce.idx_to_vec.asnumpy(), [[1, 1, 9, 9], [1, 1, 3, 4],
                                                         [0.3, 0.4, 9, 9]], rtol=1e-6)
    ce.update_token_vectors('c', nd.array([5, 5, 5, 5]))
    assert ce.get_vecs_by_tokens('c').asnumpy().tolist() == [5, 5, 5, 5]
    with pytest.raises(ValueError, match='unknown'):
        ce.update_token_vectors('zzz', nd.array([0, 0, 0, 0]))
    with pytest.raises(AssertionError):
        ce.update_token_vectors('c', nd.array([0]))
    bad = _write(tmp_path / 'bad', [['a', '0.1', '0.2'], ['b', '0.3']])
    with pytest.warns(UserWarning, match='header'):
        assert len(text.embedding.CustomEmbedding(bad, '\t')) == 2
    bad2 = _write(tmp_path / 'bad2', [['a', '0.1', '0.2'], ['b', '0.3', '1', '2']])
    with pytest.raises(AssertionError, match='dimension'):
        text.embedding.CustomEmbedding(bad2, '\t')
    bad3 = _write(tmp_path / 'bad3', [['a', '0.1', '0.2'], ['c']])
    with pytest.raises(AssertionError):
        text.embedding.CustomEmbedding(bad3, '\t')


def test_embedding_registry(tmp_path):
    assert len(text.embedding.get_pretrained_file_names('glove')) == 10
    fasttext = text.embedding.get_pretrained_file_names('fasttext')
    assert len(fasttext) == 327 and len(set(fasttext)) == 327        # MXNet 1.9.1's list
    assert {'wiki.simple.vec', 'wiki.multi.en.vec', 'crawl-300d-2M.vec'} <= set(fasttext)
    assert text.embedding.get_pretrained_file_names()['fasttext'] == fasttext
    with pytest.raises(KeyError):
        text.embedding.get_pretrained_file_names('unknown$$')
    # a GloVe file placed where it is looked for is read without the network
    root = tmp_path / 'glove'
    root.mkdir()
    _write(root / 'glove.6B.50d.txt', [['the', '1', '2'], ['cat', '3', '4']], ' ')
    glove = text.embedding.create('glove', pretrained_file_name='glove.6B.50d.txt',
                                  embedding_root=str(tmp_path))
    assert glove.token_to_idx['cat'] == 2 and glove.vec_len == 2
    with pytest.raises(KeyError):
        text.embedding.create('glove', pretrained_file_name='glove.nope.txt')


def test_contrib_namespace():
    x = nd.array([1., 2.])
    grads, loss = mx.contrib.autograd.grad_and_loss(lambda x: (x * x).sum())(x)
    assert grads[0].asnumpy().tolist() == [2, 4]
    assert mx.contrib.nd.isnan is nd.contrib.isnan
    with pytest.raises(MXNetError, match='INT8 quantization'):
        mx.contrib.quantization.quantize_net(None)
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(np.ones((5, 2)), np.arange(5)),
                                   batch_size=2)
    it = mx.contrib.io.DataLoaderIter(loader)
    batches = list(it)
    assert len(batches) == 3 and batches[-1].pad == 1 and batches[-1].data[0].shape == (2, 2)


def test_dynamic_unroll_matches_unroll():
    cell = gluon.rnn.LSTMCell(6)
    cell.initialize()
    x = nd.random.normal(shape=(5, 3, 4))
    states = [nd.random.normal(shape=(3, 6)) for _ in range(2)]
    valid = nd.array([5, 2, 3])
    ref, ref_states = cell.unroll(5, x, states, layout='TNC', merge_outputs=True,
                                  valid_length=valid)
    out, out_states = contrib.rnn.rnn_cell.dynamic_unroll(cell, x, states, layout='TNC',
                                                          valid_length=valid)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-5)
    for a, b in zip(out_states, ref_states):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5)
    assert (out.asnumpy()[2:, 1] == 0).all()


def test_dynamic_unroll_in_a_hybridized_block_is_one_foreach_node():
    class Unroll(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.cell = gluon.rnn.GRUCell(4, prefix='rnn_')

        def hybrid_forward(self, F, x, states, valid_length):
            return contrib.rnn.rnn_cell.dynamic_unroll(self.cell, x, states, layout='NTC',
                                                       valid_length=valid_length)

    x = nd.random.normal(shape=(3, 5, 2))
    states = [nd.random.normal(shape=(3, 4))]
    valid = nd.array([5, 1, 3])
    net = Unroll()
    net.initialize()
    ref, ref_states = net(x, states, valid)
    net.hybridize()
    with warnings.catch_warnings():
        warnings.simplefilter('error')      # no fallback to running imperatively
        out, out_states = net(x, states, valid)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out_states[0].asnumpy(), ref_states[0].asnumpy(), rtol=1e-5,
                               atol=1e-6)
    from neomx.gluon._hybrid import hybridized_code
    assert '_foreach(' in hybridized_code(net)
    with autograd.record():
        out, _ = net(x, states, valid)
    out.backward()
    assert net.cell.i2h_weight.grad().abs().sum().asscalar() > 0
    # a Symbol of unknown sequence length is one node too
    outs, _ = contrib.rnn.rnn_cell.dynamic_unroll(net.cell, mx.sym.var('x'), [mx.sym.var('s')])
    assert [n['op'] for n in json.loads(outs.tojson())['nodes']].count('_foreach') == 1
