"""``mx.mod``: Module and BucketingModule (binding, data parallelism over contexts, ctx_group
placement, parameters, optimizer, checkpoints, reshape, monitor), the symbol attributes they
rely on, FeedForward, callbacks, and checkpoints exchanged with MXNet 1.9.1."""
import logging
import textwrap
from collections import namedtuple

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx.base import MXNetError


def _fc(num_hidden=20, name='fc'):
    return mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=num_hidden, name=name)


def _mlp():
    x = mx.sym.var('data')
    x = mx.sym.FullyConnected(x, name='fc_0', num_hidden=2)
    x = mx.sym.Activation(x, name='act_0', act_type='sigmoid')
    x = mx.sym.FullyConnected(x, name='fc_1', num_hidden=2)
    x = mx.sym.Activation(x, name='act_1', act_type='sigmoid')
    return mx.sym.LinearRegressionOutput(x, name='softmax', grad_scale=2)


MLP_PARAMS = {'fc_0_weight': [[.15, .20], [.25, .30]], 'fc_0_bias': [.35, .35],
              'fc_1_weight': [[.40, .45], [.50, .55]], 'fc_1_bias': [.60, .60]}


def _mlp_params():
    return {k: nd.array(v) for k, v in MLP_PARAMS.items()}


def test_bind_checks_shapes_and_names():
    with mx.name.NameManager():     # activation0, whatever the process named before
        sym = mx.sym.Activation(mx.sym.var('data'), act_type='relu')
    mod = mx.mod.Module(sym, ('data',), None, context=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(TypeError, match='tuple of ints'):
        mod.bind(data_shapes=[('data', nd.array([10, 10]))])
    assert not mod.binded
    with pytest.raises(ValueError, match="don't match"):
        mod.bind(data_shapes=[('x', (10, 10))])
    mod.bind(data_shapes=[('data', (10, 10))])
    assert mod.binded and mod.output_shapes == [('activation0_output', (10, 10))]
    with pytest.raises(ValueError, match='Did you mean one of'):
        mx.mod.Module(sym, ('nothere',))
    with pytest.raises(MXNetError, match=r'call bind\(\) first'):
        mx.mod.Module(sym, ('data',), None).init_params()


def test_data_parallel_split_follows_layout_and_dtype():
    sym = mx.sym.Activation(mx.sym.var('data'), act_type='relu', __layout__='TNC')
    mod = mx.mod.Module(sym, ('data',), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc('data', (3, 8, 7), np.float16, layout='TNC')])
    mod.init_params()
    x = nd.array(np.random.randn(3, 8, 7), dtype='float16')
    mod.forward(mx.io.DataBatch([x], label=None))
    mod.backward([nd.ones((3, 8, 7), dtype='float16')])
    out = mod.get_outputs()[0]
    assert out.dtype == np.float16 and out.shape == (3, 8, 7)       # joined along T's N
    np.testing.assert_array_equal(out.asnumpy(), np.maximum(x.asnumpy(), 0))
    assert [o.shape for o in mod.get_outputs(merge_multi_context=False)[0]] == [(3, 4, 7)] * 2


def test_input_grads_follow_data_names():
    a, b, c = (mx.sym.var(n, __layout__='NC') for n in 'abc')
    mod = mx.mod.Module(a + 2 * b + 3 * c, data_names=['b', 'c', 'a'], label_names=None,
                        context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[('b', (5, 5)), ('c', (5, 5)), ('a', (5, 5))], inputs_need_grad=True)
    mod.init_params()
    mod.forward(mx.io.DataBatch([nd.ones((5, 5))] * 3))
    mod.backward([nd.ones((5, 5))])
    assert [g.asnumpy()[0, 0] for g in mod.get_input_grads()] == [2, 3, 1]


def test_ctx_group_places_arrays():
    with mx.AttrScope(ctx_group='dev1'):
        a = mx.sym.var('a') * 2
    with mx.AttrScope(ctx_group='dev2'):
        c = a + mx.sym.var('b')
    mod = mx.mod.Module(c, data_names=['a', 'b'], label_names=None, context=[mx.cpu(0)],
                        group2ctxs={'dev1': mx.cpu(1), 'dev2': mx.cpu(2)})
    mod.bind(data_shapes=[('a', (2, 5)), ('b', (2, 5))], inputs_need_grad=True)
    mod.init_params()
    mod.forward(mx.io.DataBatch([nd.ones((2, 5)), nd.ones((2, 5))]), is_train=True)
    mod.backward([nd.ones((2, 5))])
    grads = mod.get_input_grads()
    assert [g.context for g in grads] == [mx.cpu(1), mx.cpu(2)]
    assert [g.asnumpy()[0, 0] for g in grads] == [2, 1]
    # auto-created variables (weights, labels) take the scope's group, as in MXNet
    with mx.AttrScope(ctx_group='stage1'):
        fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc')
    with mx.AttrScope(ctx_group='stage2'):
        net = mx.sym.SoftmaxOutput(fc, name='softmax')
    ex = net.simple_bind(mx.cpu(0), group2ctx={'stage1': mx.cpu(1), 'stage2': mx.cpu(2)},
                         data=(3, 5))
    assert [a.context.device_id for a in ex.arg_arrays] == [1, 1, 1, 2]


def test_hidden_keys_and_prelu_default():
    data = mx.sym.var('data')
    bias = mx.sym.var('fc1_bias', lr_mult=1.0)
    fc1 = mx.sym.FullyConnected(data=data, bias=bias, name='fc1', num_hidden=10, lr_mult=0)
    fc2 = mx.sym.FullyConnected(data=fc1, name='fc2', num_hidden=10, wd_mult=0.5)
    attrs = fc2.attr_dict()
    # MXNet lists a hidden key under both names.
    assert attrs['fc1_weight'] == {'__lr_mult__': '0', 'lr_mult': '0'}
    assert attrs['fc1_bias'] == {'__lr_mult__': '1.0', 'lr_mult': '1.0'}
    assert attrs['fc2_weight'] == attrs['fc2_bias'] == {'__wd_mult__': '0.5', 'wd_mult': '0.5'}
    mod = mx.mod.Module(fc2, label_names=None)
    mod.bind(data_shapes=[('data', (5, 10))])
    mod.init_params(initializer=mx.init.Uniform(1.0))
    mod.init_optimizer(optimizer_params={'learning_rate': 1.0})
    before = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    mod.forward(mx.io.DataBatch([mx.random.uniform(-1, 1, shape=(5, 10))]), is_train=True)
    mod.backward(mod.get_outputs())
    mod.update()
    after = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    assert mod._optimizer.lr_mult == {'fc1_bias': 1.0, 'fc1_weight': 0.0}
    assert mod._optimizer.wd_mult == {'fc2_bias': 0.5, 'fc2_weight': 0.5, 'fc1_bias': 0.0}
    np.testing.assert_array_equal(before['fc1_weight'], after['fc1_weight'])
    assert not np.allclose(before['fc2_weight'], after['fc2_weight'])
    # PReLU's slope starts at 0.25 unless its variable says otherwise
    prelu = mx.sym.LeakyReLU(data, act_type='prelu')
    gamma = mx.sym.var('gamma', init=mx.init.One())
    for sym, want in ((prelu, 0.25), (mx.sym.LeakyReLU(data, gamma, act_type='prelu'), 1)):
        mod = mx.mod.Module(sym, label_names=None)
        mod.bind(data_shapes=[('data', (10, 10))])
        mod.init_params()
        assert (list(mod.get_params()[0].values())[0].asnumpy() == want).all()
    bn = mx.mod.Module(mx.sym.BatchNorm(data, name='bn'), label_names=None)
    bn.bind(data_shapes=[('data', (4, 3, 2, 2))])
    bn.init_params()
    assert (bn.get_params()[1]['bn_moving_var'].asnumpy() == 1).all()


@pytest.mark.parametrize('op,want', [('LinearRegressionOutput', [0.1, -0.65]),
                                     ('MAERegressionOutput', [0.5, -0.5])])
def test_regression_outputs_ignore_the_head_gradient(op, want):
    sym = getattr(mx.sym, op)(mx.sym.var('data'), mx.sym.var('label'), grad_scale=2)
    assert sym.infer_shape(data=(3, 1))[0][1] == (3,)
    ex = sym.simple_bind(mx.cpu(), data=(1, 4))
    ex.arg_dict['data'][:] = nd.array([[0.5, -1, 2, 0.1]])
    ex.arg_dict['label'][:] = 0.3
    ex.forward(is_train=True)
    ex.backward(nd.ones((1, 4)) * 5)
    np.testing.assert_allclose(ex.grad_dict['data'].asnumpy()[0, :2], want, rtol=1e-5)


def test_reshape_keeps_parameters_and_updates():
    mod = mx.mod.Module(_fc(), ('data',), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[('data', (7, 20))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={'learning_rate': 1})
    for shape, bias in (((7, 20), -1), ((14, 20), -3)):
        if shape != (7, 20):
            mod.reshape(data_shapes=[('data', shape)])
        mod.forward(mx.io.DataBatch([nd.ones(shape)]))
        mod.backward([nd.ones(shape)])
        mod.update()
        assert mod.get_outputs()[0].shape == shape
        assert (mod.get_params()[0]['fc_bias'].asnumpy() == bias).all()


def test_forward_rebinds_for_new_shapes_and_predicts():
    conv = mx.sym.Convolution(mx.sym.var('data'), kernel=(3, 3), num_filter=2)
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(
        mx.sym.sum(mx.sym.flatten(conv), axis=1), num_hidden=4), name='softmax')
    mod = mx.mod.Module(net)
    mod.bind(data_shapes=[('data', (4, 1, 8, 8))], label_shapes=[('softmax_label', (4,))])
    mod.init_params()
    mod.init_optimizer()
    for shape in ((4, 1, 8, 8), (3, 1, 8, 8), (5, 1, 12, 10)):
        mod.forward(mx.io.DataBatch([nd.ones(shape)], [nd.ones(shape[:1])]))
        assert mod.get_outputs()[0].shape == (shape[0], 4)
        mod.backward()
        mod.update()
    it = mx.io.NDArrayIter(nd.ones((10, 1, 8, 8)), nd.ones((10,)), batch_size=4)
    assert len(mod.score(it, 'acc')) == 1
    assert mod.predict(it).shape == (10, 4)          # padding removed
    Batch = namedtuple('Batch', ['data'])
    plain = mx.mod.Module(mx.sym.var('data') * 2, label_names=None)
    plain.bind(data_shapes=[('data', (1, 10))])
    plain.init_params()
    plain.forward(Batch([nd.ones((3, 5))]))
    assert plain.get_outputs()[0].shape == (3, 5)
    assert plain.predict(np.ones((2, 10))).asnumpy().tolist() == [[2.0] * 10] * 2


def test_set_params_missing_and_extra():
    it = mx.io.NDArrayIter(nd.array([[0.05, .10]]), nd.array([[.01, 0.99]]), batch_size=1)
    mod = mx.mod.Module(_mlp())
    mod.bind(it.provide_data, it.provide_label)
    full = _mlp_params()
    missing = {k: v for k, v in full.items() if k != 'fc_1_bias'}
    extra = dict(full, fc_2_weight=nd.array([.6, .6]))
    mod.set_params(full, {})
    mod.set_params(missing, {}, allow_missing=True)
    with pytest.raises(RuntimeError, match='fc_1_bias is not presented'):
        mod.set_params(missing, {})
    mod.set_params(extra, {}, allow_missing=True, allow_extra=True)
    with pytest.raises(ValueError, match='fc_2_weight'):
        mod.set_params(extra, {}, allow_missing=True)
    with pytest.raises(MXNetError, match='expects'):
        mod.set_params(dict(full, fc_0_bias=nd.ones((3,))), {})


def test_monitor_reports_every_array():
    it = mx.io.NDArrayIter(nd.array([[0.05, .10]]), nd.array([[.01, 0.99]]), batch_size=1)

    def mean_abs(x):
        return nd.sum(nd.abs(x)) / x.size
    mon = mx.mon.Monitor(1, stat_func=mean_abs, pattern='.*', sort=True)
    mod = mx.mod.Module(_mlp())
    mod.bind(it.provide_data, it.provide_label)
    mod.install_monitor(mon)
    mod.init_params(arg_params=_mlp_params())
    mon.tic()
    mod.forward_backward(next(iter(it)))
    res = mon.toc()
    names = [name for _, name, _ in res]
    assert len(res) == 21 and names == sorted(names)
    assert names[:2] == ['act_0_backward_output', 'act_0_output']
    assert 'fc_0_backward_output2' in names and 'softmax_backward_output1' in names
    stats = dict((name, float(v)) for _, name, v in res)
    assert stats['fc_0_output'] == pytest.approx(0.385)          # (0.3775 + 0.3925) / 2
    assert stats['data'] == pytest.approx(0.075)
    # the training step itself is the unmonitored one's
    plain = mx.mod.Module(_mlp())
    plain.bind(it.provide_data, it.provide_label)
    plain.init_params(arg_params=_mlp_params())
    it.reset()
    plain.forward_backward(next(iter(it)))
    for a, b in zip(mod._exec_group.execs[0].grad_arrays, plain._exec_group.execs[0].grad_arrays):
        if a is not None:
            np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)


def test_update_without_parameters_and_optimizer_names():
    mod = mx.mod.Module(mx.sym.Dropout(mx.sym.var('data'), 0.5))
    mod.bind(data_shapes=[('data', (10, 10))])
    mod.init_params()
    mod.init_optimizer()
    mod.forward_backward(mx.io.DataBatch([nd.ones((10, 10))]))
    mod.update()
    assert mod.get_outputs()[0].shape == (10, 10)
    mod = mx.mod.Module(_fc(), ('data',), None)
    mod.bind(data_shapes=[('data', (8, 20))])
    mod.init_params()
    mod.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=1, rescale_grad=1 / 8))
    assert mod._optimizer.idx2name == {0: 'fc_weight', 1: 'fc_bias'}


def test_fit_holds_one_batch_at_a_time():
    current = {}

    class Batch:
        def __init__(self, i):
            self.i = i

        @property
        def label(self):
            assert self.i == current['i']

    class Data:
        provide_data = provide_label = None

        def __iter__(self):
            self.n = 0
            return self

        def __next__(self):
            if self.n == 2:
                raise StopIteration
            current['i'] = self.n
            self.n += 1
            return Batch(self.n - 1)

        def reset(self):
            pass
    mod = mx.mod.BaseModule()
    for name in ('bind', 'init_params', 'init_optimizer', 'forward', 'backward', 'update',
                 'update_metric'):
        setattr(mod, name, lambda *a, **k: None)
    mod.get_params = lambda: (None, None)
    mod.fit(Data(), num_epoch=1)


def _save_load_round(contexts, tmp_path):
    mod = mx.mod.Module(_fc(100), ('data',), context=contexts)
    mod.bind(data_shapes=[('data', (10, 10))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    mod.forward_backward(mx.io.DataBatch([nd.ones((10, 10))]))
    mod.update()
    prefix = str(tmp_path / 'net')
    mod.save_checkpoint(prefix, 0, save_optimizer_states=True)
    mod2 = mx.mod.Module.load(prefix, 0, load_optimizer_states=True, data_names=('data',),
                              context=contexts)
    mod2.bind(data_shapes=[('data', (10, 10))])
    mod2.init_optimizer(optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
    assert mod.symbol.tojson() == mod2.symbol.tojson()
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(v.asnumpy(), mod2.get_params()[0][k].asnumpy())
    return mod, mod2


def test_save_load_with_optimizer_states(tmp_path):
    mod, mod2 = _save_load_round([mx.cpu(0)], tmp_path)
    assert mod._updater is not None
    states = mod._updater.states
    assert set(states) == set(mod2._updater.states) == {0, 1}
    for k in states:
        np.testing.assert_array_equal(states[k].asnumpy(), mod2._updater.states[k].asnumpy())
    mod, mod2 = _save_load_round([mx.cpu(0), mx.cpu(1)], tmp_path)
    assert mod._update_on_kvstore and mod2._update_on_kvstore       # the store updates
    for k, v in mod._kvstore._updater.states.items():
        np.testing.assert_array_equal(v.asnumpy(), mod2._kvstore._updater.states[k].asnumpy())


def test_data_parallel_matches_one_device():
    X = np.random.RandomState(1).randn(16, 6).astype('float32')
    y = (X.sum(axis=1) > 0).astype('float32')
    results = []
    for contexts in ([mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]):
        net = mx.sym.SoftmaxOutput(_fc(2), name='softmax')
        mod = mx.mod.Module(net, context=contexts)
        it = mx.io.NDArrayIter(X, y, batch_size=8)
        mod.bind(it.provide_data, it.provide_label)
        mod.init_params(mx.init.Constant(0.1))
        mod.fit(it, num_epoch=3, optimizer_params={'learning_rate': 0.5, 'momentum': 0.9})
        results.append(mod.get_params()[0]['fc_weight'].asnumpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)


def test_bucketing_module_grad_req_and_sharing():
    def sym_gen(key):
        data = mx.sym.var('data')
        a = mx.sym.var('a', shape=(1,), init=mx.init.One())
        return mx.sym.make_loss(mx.sym.broadcast_mul(data, a)), ('data',), None

    def batch(key):
        return mx.io.DataBatch([nd.ones((2,))], None, bucket_key=key,
                               provide_data=[mx.io.DataDesc('data', (2,), layout='N')])
    for req, want in (('write', [2, 2]), ('add', [2, 4])):
        mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=10)
        mod.bind(data_shapes=[('data', (2,))], grad_req=req)
        mod.init_params()
        got = []
        for key in (10, 5):
            mod.forward_backward(batch(key))
            got.append(mod._curr_module._exec_group.execs[0].grad_dict['a'].asscalar())
        assert got == want
        assert mod._curr_module._grad_req == req
        shared = [m._exec_group.execs[0].arg_dict['a'] for m in mod._buckets.values()]
        assert shared[0] is shared[1]
    assert mod._buckets[10]._total_exec_bytes == 0       # MB, as MXNet's debug_str reports


def test_bucketing_module_fit_and_checkpoint(tmp_path):
    def sym_gen(seq_len):
        data = mx.sym.var('data')
        out = mx.sym.FullyConnected(mx.sym.sum(data, axis=1, keepdims=True), num_hidden=1,
                                    name='fc')
        return mx.sym.LinearRegressionOutput(out, name='lro'), ('data',), ('lro_label',)

    class Buckets(mx.io.DataIter):
        default_bucket_key = 4

        def __init__(self):
            super().__init__(2)
            self.provide_data = [mx.io.DataDesc('data', (2, 4))]
            self.provide_label = [mx.io.DataDesc('lro_label', (2, 1))]
            self.reset()

        def reset(self):
            self.keys = [4, 2, 4, 3]

        def next(self):
            if not self.keys:
                raise StopIteration
            k = self.keys.pop()
            x = nd.ones((2, k))
            return mx.io.DataBatch([x], [nd.ones((2, 1)) * k], bucket_key=k,
                                   provide_data=[mx.io.DataDesc('data', (2, k))],
                                   provide_label=[mx.io.DataDesc('lro_label', (2, 1))])
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=4)
    mod.fit(Buckets(), num_epoch=30, eval_metric='mse',
            optimizer_params={'learning_rate': 0.05}, initializer=mx.init.Zero())
    assert mod.score(Buckets(), 'mse')[0][1] < 0.05           # learnt y = sum(x)
    assert sorted(mod._buckets) == [2, 3, 4]
    prefix = str(tmp_path / 'bucket')
    mod.save_checkpoint(prefix, 1)
    loaded = mx.mod.BucketingModule.load(prefix, 1, sym_gen=sym_gen, default_bucket_key=4)
    loaded.bind(Buckets().provide_data, Buckets().provide_label)
    np.testing.assert_array_equal(loaded.get_params()[0]['fc_weight'].asnumpy(),
                                  mod.get_params()[0]['fc_weight'].asnumpy())



def test_buckets_share_moving_statistics():
    # the buckets' executors share the auxiliary states (BatchNorm's moving mean and variance),
    # as MXNet's do: what training one bucket updates, another bucket predicts with
    def sym_gen(key):
        y = mx.sym.BatchNorm(mx.sym.var('data'), name='bn', momentum=0.5)
        if key == 'train':
            loss = mx.sym.make_loss(mx.sym.mean(mx.sym.square(y - mx.sym.var('lab'))))
            return loss, ['data'], ['lab']
        return y, ['data'], None
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key='pred')
    mod.bind([('data', (4, 3))], None, for_training=True)
    mod.init_params()
    mod.init_optimizer()
    x = nd.array(np.random.RandomState(0).normal(5, 2, (4, 3)))
    ds, ls = [mx.io.DataDesc('data', (4, 3))], [mx.io.DataDesc('lab', (4, 3))]
    mod.switch_bucket('train', ds, ls)
    mod.forward_backward(mx.io.DataBatch([x], [x], bucket_key='train', provide_data=ds,
                                         provide_label=ls))
    mod.update()
    expect = 0.5 * x.asnumpy().mean(axis=0)
    np.testing.assert_allclose(mod.get_params()[1]['bn_moving_mean'].asnumpy(), expect,
                               rtol=1e-5)
    mod.switch_bucket('pred', ds, None)
    pred = mod._curr_module._exec_group.execs[0].aux_dict['bn_moving_mean']
    train = mod._buckets['train']._exec_group.execs[0].aux_dict['bn_moving_mean']
    assert pred is train
    np.testing.assert_allclose(pred.asnumpy(), expect, rtol=1e-5)


def test_fit_logs_speed_and_checkpoints(tmp_path, caplog):
    X = np.random.RandomState(0).randn(40, 3).astype('float32')
    it = mx.io.NDArrayIter(X, (X[:, 0] > 0).astype('float32'), batch_size=5)
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(_fc(2), name='softmax'))
    prefix = str(tmp_path / 'mlp')
    with caplog.at_level(logging.INFO):
        mod.fit(it, eval_data=it, num_epoch=2, batch_end_callback=mx.callback.Speedometer(5, 2),
                epoch_end_callback=mx.callback.do_checkpoint(prefix),
                optimizer_params={'learning_rate': 0.1})
    text = caplog.text
    assert 'Epoch[0] Batch [2-4]\tSpeed: ' in text and 'accuracy=' in text
    assert 'Epoch[1] Train-accuracy=' in text and 'Epoch[1] Validation-accuracy=' in text
    sym, args, aux = mx.model.load_checkpoint(prefix, 2)
    np.testing.assert_array_equal(args['fc_weight'].asnumpy(),
                                  mod.get_params()[0]['fc_weight'].asnumpy())


def test_feedforward_fits_and_predicts(tmp_path):
    X = np.random.RandomState(0).randn(60, 4).astype('float32')
    y = (X[:, 1] > 0).astype('float32')
    net = mx.sym.SoftmaxOutput(_fc(2), name='softmax')
    with pytest.warns(DeprecationWarning):
        model = mx.model.FeedForward(net, num_epoch=15, numpy_batch_size=20,
                                     learning_rate=0.5)
    model.fit(X, y)
    assert model.score(mx.io.NDArrayIter(X, y, batch_size=20), 'acc') > 0.9
    assert model.predict(X).shape == (60, 2)
    model.save(str(tmp_path / 'ff'))
    with pytest.warns(DeprecationWarning):
        again = mx.model.FeedForward.load(str(tmp_path / 'ff'), 15)
    np.testing.assert_allclose(again.predict(X), model.predict(X), rtol=1e-6)


def test_executor_monitor_debug_str_and_no_grad_backward():
    ex = (mx.sym.var('data') * 2).simple_bind(mx.cpu(), grad_req='null', data=(2,))
    ex.forward(is_train=True)
    ex.backward()                               # nothing to differentiate: nothing to do
    assert ex.debug_str().split('\n')[-3] == 'Total 0 MB allocated'
    assert [o.shape for o in (_fc(3).simple_bind(mx.cpu(), data=(2, 4))).outputs] == [(2, 3)]
    seen = []
    ex = _fc(3).simple_bind(mx.cpu(), data=(2, 4))
    ex.set_monitor_callback(lambda name, arr: seen.append((name, arr.shape)), monitor_all=True)
    ex.forward(is_train=True)
    ex.backward(nd.ones((2, 3)))
    assert seen == [('data', (2, 4)), ('fc_data', (2, 4)), ('fc_weight', (3, 4)),
                    ('fc_weight', (3, 4)), ('fc_bias', (3,)), ('fc_bias', (3,)),
                    ('fc_output', (2, 3)), ('fc_backward_output0', (2, 4)),
                    ('fc_backward_output1', (3, 4)), ('fc_backward_output2', (3,))]


def test_checkpoints_exchange_with_mxnet(tmp_path, mxnet_ref):
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=8, name='fc1')
    net = mx.sym.BatchNorm(mx.sym.Activation(net, act_type='relu'), name='bn')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=3, name='fc2'),
                               name='softmax')
    X = np.random.RandomState(0).randn(20, 5).astype('float32')
    np.save(tmp_path / 'x.npy', X)
    it = mx.io.NDArrayIter(X, np.arange(20) % 3, batch_size=10)
    mod = mx.mod.Module(net)
    mod.fit(it, num_epoch=2, optimizer_params={'learning_rate': 0.1})
    mod.save_checkpoint(str(tmp_path / 'neomx'), 2)
    ours = mod.predict(mx.io.NDArrayIter(X, batch_size=10)).asnumpy()
    code = textwrap.dedent('''
        import numpy as np, mxnet as mx
        X = np.load('x.npy')
        mod = mx.mod.Module.load('neomx', 2)
        mod.bind([('data', (10, 5))], [('softmax_label', (10,))], for_training=False)
        np.save('theirs.npy', mod.predict(mx.io.NDArrayIter(X, batch_size=10)).asnumpy())
        mod.init_optimizer(optimizer_params={'learning_rate': 0.1})
        it = mx.io.NDArrayIter(X, np.arange(20) % 3, batch_size=10)
        train = mx.mod.Module(mod.symbol)
        train.fit(it, num_epoch=1, arg_params=mod.get_params()[0],
                  aux_params=mod.get_params()[1], optimizer_params={'learning_rate': 0.1})
        train.save_checkpoint('mxnet', 3)
        np.save('mxnet_pred.npy', train.predict(mx.io.NDArrayIter(X, batch_size=10)).asnumpy())
    ''')
    mxnet_ref(code, cwd=str(tmp_path))
    np.testing.assert_allclose(np.load(tmp_path / 'theirs.npy'), ours, rtol=1e-5, atol=1e-6)
    back = mx.mod.Module.load(str(tmp_path / 'mxnet'), 3)
    back.bind([('data', (10, 5))], for_training=False)
    assert set(back.get_params()[1]) == {'bn_moving_mean', 'bn_moving_var'}
    np.testing.assert_allclose(back.predict(mx.io.NDArrayIter(X, batch_size=10)).asnumpy(),
                               np.load(tmp_path / 'mxnet_pred.npy'), rtol=1e-5, atol=1e-6)


def test_executor_groups_share_parameters_and_data_buffers():
    from neomx.module.executor_group import DataParallelExecutorGroup

    def net(layers):
        x = mx.sym.contrib.SparseEmbedding(mx.sym.var('data'), input_dim=20, output_dim=4,
                                           name='embed')
        for i in range(layers):
            x = mx.sym.FullyConnected(x, num_hidden=4, flatten=False, name='fc%d' % i)
        return mx.sym.SoftmaxOutput(mx.sym.Reshape(x, shape=(-1, 4)),
                                    mx.sym.Reshape(mx.sym.var('softmax_label'), shape=(-1,)),
                                    name='softmax')
    ctxs = [mx.cpu(0), mx.cpu(1)]
    shapes = dict(data_shapes=[('data', (4, 3))], label_shapes=[('softmax_label', (4, 3))])
    small = net(2)
    params = [n for n in small.list_arguments() if n not in ('data', 'softmax_label')]
    g1 = DataParallelExecutorGroup(small, ctxs, [1, 1], param_names=params, for_training=True,
                                   inputs_need_grad=False, **shapes)
    assert [sorted(d) for d in g1.shared_data_arrays] == [['data', 'softmax_label']] * 2
    g2 = DataParallelExecutorGroup(net(3), ctxs, [1, 1], param_names=params, for_training=True,
                                   inputs_need_grad=False, shared_group=g1, **shapes)
    assert g2.shared_data_arrays is g1.shared_data_arrays
    assert sorted(g1.shared_data_arrays[0]) == ['data', 'fc2_bias', 'fc2_weight',
                                                'softmax_label']
    for e1, e2 in zip(g1.execs, g2.execs):
        for name in params:
            assert e1.arg_dict[name] is e2.arg_dict[name]
            assert e1.grad_dict[name] is e2.grad_dict[name]
    assert g1.slices == [slice(0, 2), slice(2, 4)]


def test_sparse_embedding_and_perplexity_bounds():
    w = nd.arange(6).reshape((3, 2))
    assert mx.nd.contrib.SparseEmbedding(nd.array([2, 0]), w, input_dim=3,
                                         output_dim=2).asnumpy().tolist() == [[4, 5], [0, 1]]
    with pytest.raises(MXNetError, match=r'outside \[0, 3\)'):
        mx.nd.contrib.SparseEmbedding(nd.array([3]), w, input_dim=3, output_dim=2).asnumpy()
    # a label past the last class picks the last class, as MXNet's pick(mode='clip')
    p = mx.metric.Perplexity(ignore_label=-1)
    p.update([nd.array([0, 5, -1, 1])], [nd.array([[.3, .7], [.2, .8], [.4, .6], [.5, .5]])])
    assert p.get()[1] == pytest.approx(2.027400692430936)


def test_sparse_storage_types_carry_through_module():
    x = mx.sym.var('data', stype='csr')
    v = mx.sym.var('v', shape=(6, 1), init=mx.init.Uniform(scale=.1), stype='row_sparse')
    out = mx.sym.LinearRegressionOutput(mx.sym.sparse.dot(x, v), mx.sym.var('label'))
    csr = mx.test_utils.rand_ndarray((8, 6), 'csr', 0.5)
    it = mx.io.NDArrayIter(csr, {'label': nd.ones((8, 1))}, batch_size=4,
                           last_batch_handle='discard')
    mod = mx.mod.Module(out, data_names=['data'], label_names=['label'])
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params()
    assert mod._arg_params['v'].stype == 'row_sparse'
    assert mod._exec_group.execs[0].arg_dict['data'].stype == 'csr'
    assert np.abs(mod._arg_params['v'].asnumpy()).sum() > 0
    mod.init_optimizer(optimizer_params={'learning_rate': 0.1})
    for batch in it:
        mod.forward_backward(batch)
        mod.update()
    ss = mx.sym._internal._square_sum(mx.sym.var('w'), axis=1, keepdims=True)
    assert ss.eval(w=nd.array([[1, 2], [3, 4]]))[0].asnumpy().tolist() == [[5], [25]]


def test_executor_backward_after_inference_forward():
    x = mx.sym.var('x')
    ex = (x * x).simple_bind(mx.cpu(), x=(3,))
    ex.arg_dict['x'][:] = nd.array([1, 2, 3])
    ex.forward()                    # is_train=False: MXNet still differentiates this pass
    ex.backward(nd.ones((3,)))
    assert ex.grad_dict['x'].asnumpy().tolist() == [2, 4, 6]


def test_sequential_module_equals_one_module():
    X = np.random.RandomState(3).randn(8, 5).astype('float32')
    y = np.arange(8) % 3
    fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc')
    whole = mx.mod.Module(mx.sym.SoftmaxOutput(fc, name='softmax'))
    first = mx.mod.Module(fc, label_names=None)
    second = mx.mod.Module(mx.sym.SoftmaxOutput(mx.sym.var('data'), name='softmax'))
    seq = mx.mod.SequentialModule().add(first).add(second, take_labels=True, auto_wiring=True)
    params = {'fc_weight': nd.array(np.ones((3, 5)) * 0.1), 'fc_bias': nd.zeros((3,))}
    for mod in (whole, seq):
        it = mx.io.NDArrayIter(X, y, batch_size=4)
        mod.fit(it, num_epoch=2, arg_params=params, optimizer_params={'learning_rate': 0.5})
    np.testing.assert_allclose(seq.get_params()[0]['fc_weight'].asnumpy(),
                               whole.get_params()[0]['fc_weight'].asnumpy(), rtol=1e-5)
    with pytest.raises(MXNetError, match='unknown option'):
        mx.mod.SequentialModule().add(first, take_label=True)


def test_python_loss_module_ends_a_sequence():
    X = np.random.RandomState(4).randn(16, 3).astype('float32')
    target = X.sum(axis=1, keepdims=True)
    fc = mx.mod.Module(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=1, name='fc'),
                       label_names=None)
    loss = mx.mod.PythonLossModule(data_names=['fc_output'], label_names=['target'],
                                   grad_func=lambda scores, labels: scores - labels)
    seq = mx.mod.SequentialModule().add(fc).add(loss, take_labels=True)
    it = mx.io.NDArrayIter(X, {'target': target}, batch_size=8)
    seq.fit(it, num_epoch=40, eval_metric='mse', initializer=mx.init.Zero(),
            optimizer_params={'learning_rate': 0.5})
    np.testing.assert_allclose(seq.get_params()[0]['fc_weight'].asnumpy(), [[1, 1, 1]],
                               atol=0.05)
    assert seq.output_shapes == [('pyloss_output', (8, 1))]
