"""Training with row_sparse arrays: row_sparse pulls from a KVStore, lazy optimizer updates,
row_sparse Parameters living in their Trainer's store, sparse gradients of dense weights,
zero_grad, the built-in 'teststore'."""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon, nd
from neomx.base import MXNetError


def test_kvstore_row_sparse_pull_and_ignored_sparse_pulls():
    kv = mx.kv.create('local')
    kv.init('e', nd.ones((4, 2)).tostype('row_sparse'))
    outs = [nd.zeros((4, 2), stype='row_sparse') for _ in range(2)]
    kv.row_sparse_pull('e', out=outs, row_ids=[nd.array([[0, 0], [3, 3]]), nd.array([1])])
    assert outs[0].asnumpy()[:, 0].tolist() == [1, 0, 0, 1]
    assert outs[1].asnumpy()[:, 0].tolist() == [0, 1, 0, 0]
    # a plain pull leaves sparse outputs alone unless told otherwise
    rsp = nd.zeros((4, 2), stype='row_sparse')
    kv.pull('e', out=rsp)
    assert rsp.asnumpy().sum() == 0
    kv.pull('e', out=rsp, ignore_sparse=False)
    assert rsp.asnumpy().sum() == 8
    with pytest.raises(MXNetError, match='outputs must be row_sparse'):
        kv.row_sparse_pull('e', out=nd.zeros((4, 2)), row_ids=nd.array([1]))
    # pushes of row_sparse values sum as values do
    kv.push('e', [nd.ones((4, 2)).tostype('row_sparse'), nd.ones((4, 2)).tostype('row_sparse')])
    out = nd.zeros((4, 2))
    kv.pull('e', out=out)
    assert out.asnumpy().tolist() == [[2, 2]] * 4


def test_sgd_lazy_update_touches_only_stored_rows(mxnet_ref, tmp_path):
    mxnet_ref('''
import numpy as np, mxnet as mx
w = mx.nd.array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
g = mx.nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [0, 2]), shape=(4, 3))
for lazy in (True, False):
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.1, lazy_update=lazy)
    wl = w.copy(); s = opt.create_state(0, wl)
    for _ in range(2):
        opt.update(0, wl, g, s)
    np.save(r'DIR/w%d.npy' % lazy, wl.asnumpy())
'''.replace('DIR', str(tmp_path)))
    w = nd.array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    g = nd.sparse.row_sparse_array((np.ones((2, 3), np.float32), [0, 2]), shape=(4, 3))
    for lazy in (True, False):
        opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.1, lazy_update=lazy)
        wl = w.copy()
        s = opt.create_state(0, wl)
        for _ in range(2):
            opt.update(0, wl, g, s)
        np.testing.assert_allclose(wl.asnumpy(), np.load(tmp_path / ('w%d.npy' % lazy)),
                                   rtol=1e-6)
        untouched = np.array_equal(wl.asnumpy()[[1, 3]], w.asnumpy()[[1, 3]])
        assert untouched == lazy


def test_row_sparse_parameter_lives_in_the_trainer_store():
    p = gluon.Parameter('emb', shape=(4, 2), stype='row_sparse', grad_stype='row_sparse')
    p.initialize(init='ones', ctx=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(RuntimeError, match='row_sparse_data'):
        p.data()
    with pytest.raises(RuntimeError, match='no Trainer'):
        p.row_sparse_data(nd.array([0]))
    trainer = gluon.Trainer([p], 'sgd', {'learning_rate': 0.5})
    with pytest.raises(RuntimeError, match='More than one trainers'):
        gluon.Trainer([p], 'sgd')
    rows = nd.array([0, 2])
    with autograd.record():
        ws = p.list_row_sparse_data(rows)
        ys = [nd.Embedding(rows.as_in_context(w.context), w, input_dim=4, output_dim=2,
                           sparse_grad=True) for w in ws]
    for y in ys:
        y.backward()
    assert p.grad(mx.cpu(0)).stype == 'row_sparse'
    assert p.grad(mx.cpu(0)).indices.asnumpy().tolist() == [0, 2]
    trainer.step(1)
    assert trainer._update_on_kvstore is True
    w = p.row_sparse_data(nd.arange(0, 4, ctx=mx.cpu(1))).asnumpy()
    assert w[:, 0].tolist() == [0, 1, 0, 1]        # 1 - 0.5 * (1 + 1) on the rows looked up
    with pytest.raises(ValueError, match='update_on_kvstore=False'):
        q = gluon.Parameter('q', shape=(2, 2), stype='row_sparse')
        q.initialize()
        gluon.Trainer([q], 'sgd', update_on_kvstore=False)._init_kvstore()


def test_dense_weight_with_row_sparse_gradient():
    p = gluon.Parameter('w', shape=(3, 1), grad_stype='row_sparse')
    p.initialize(init='zeros', ctx=[mx.cpu(0), mx.cpu(1)])
    trainer = gluon.Trainer([p], 'sgd', {'learning_rate': 0.1}, kvstore='device')
    with autograd.record():
        for w in p.list_data():
            (w[0:2] * 1).backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is False
    assert p.data(mx.cpu(1)).asnumpy()[:, 0].tolist() == pytest.approx([-0.2, -0.2, 0])


def test_zero_grad_and_reset_arrays():
    a, b = nd.ones((2,)), nd.ones((3,), ctx=mx.cpu(1))
    nd.reset_arrays(a, b, num_arrays=2)
    assert a.asnumpy().tolist() == [0, 0] and b.asnumpy().tolist() == [0, 0, 0]
    with pytest.raises(MXNetError, match='num_arrays=3'):
        nd.reset_arrays(a, b, num_arrays=3)
    net = gluon.nn.Embedding(3, 4, sparse_grad=True)
    net.initialize()
    with autograd.record():
        net(nd.array([0, 2])).backward()
    assert net.weight.grad().asnumpy().sum() == 8
    net.collect_params().zero_grad()
    assert net.weight.grad().stype == 'row_sparse' and net.weight.grad().asnumpy().sum() == 0


def test_clip_global_norm_on_row_sparse_arrays():
    xs = [nd.ones((3, 3)).tostype('row_sparse'), nd.ones((4, 4)).tostype('row_sparse')]
    assert gluon.utils.clip_global_norm(xs, 1.0) == pytest.approx(5.0)
    assert xs[0].stype == 'row_sparse' and xs[0].asnumpy()[0, 0] == pytest.approx(0.2)


def test_teststore_is_a_store_without_optimizer():
    x = gluon.Parameter('x', shape=(2,))
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init='zeros')
    kv = mx.kv.create('teststore')
    trainer = gluon.Trainer([x], 'sgd', {'learning_rate': 1.0}, kvstore=kv)
    with autograd.record():
        for w in x.list_data():
            (w + 1).backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is False
    assert x.data(mx.cpu(1)).asnumpy().tolist() == [-2, -2]
    with pytest.raises(ValueError, match='update_on_kvstore=False'):
        gluon.Trainer([x], 'sgd', kvstore=kv, update_on_kvstore=True)._init_kvstore()
