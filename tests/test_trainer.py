"""gluon.Trainer: a small Dense network trained on two contexts [cpu(0), cpu(1)] ends with the
same weights as under MXNet 1.9.1 (updates on the store or on each device, 'device' and
'local' stores, no store); stale gradients, allreduce_grads/update, saved states, learning
rates, errors; a step costs a few engine operations, not a few per parameter."""
import inspect
import textwrap

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon, nd
from conftest import run_mxnet

CTXS2 = ['cpu(0)', 'cpu(1)']
CASES = [
    ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}, 'device', None, CTXS2),
    ('sgd', {'learning_rate': 0.1, 'momentum': 0.9}, 'device', False, CTXS2),
    ('adam', {'learning_rate': 0.01, 'wd': 0.001}, 'local', None, CTXS2),
    ('nag', {'learning_rate': 0.05, 'momentum': 0.8, 'clip_gradient': 0.5}, None, None, CTXS2),
    ('rmsprop', {'learning_rate': 0.01, 'centered': True}, 'device', False, CTXS2),
    ('adam', {'learning_rate': 0.01}, 'device', None, ['cpu(0)']),
]
STEPS = 3


def _train(mx, opt, opt_kwargs, kvstore, update_on_kvstore, ctx_names, steps):
    """Trains two Dense layers with fixed initial weights and data; returns every parameter's
    copy on every context. The same source runs under MXNet and neomx."""
    import numpy as np
    from mxnet import autograd, gluon  # noqa: F811  (neomx is imported as mxnet too)
    ctxs = [mx.Context(*n.rstrip(')').split('(')[:1], int(n[-2])) for n in ctx_names]
    rs = np.random.RandomState(7)
    l1 = gluon.nn.Dense(6, in_units=4, activation='relu', prefix='fc1_')
    l2 = gluon.nn.Dense(3, in_units=6, prefix='fc2_')
    params = {}
    for layer in (l1, l2):
        layer.initialize(ctx=ctxs)
        for p in layer.collect_params().values():
            p.set_data(mx.nd.array(rs.uniform(-0.5, 0.5, size=p.shape)))
            params[p.name] = p
    trainer = gluon.Trainer(params, opt, dict(opt_kwargs), kvstore=kvstore,
                            update_on_kvstore=update_on_kvstore)
    loss_fn = gluon.loss.L2Loss()
    batch = 4 * len(ctxs)
    for _ in range(steps):
        x = mx.nd.array(rs.randn(batch, 4))
        y = mx.nd.array(rs.randn(batch, 3))
        xs = gluon.utils.split_and_load(x, ctxs)
        ys = gluon.utils.split_and_load(y, ctxs)
        with autograd.record():
            losses = [loss_fn(l2(l1(xi)), yi) for xi, yi in zip(xs, ys)]
        for loss in losses:
            loss.backward()
        trainer.step(batch)
    out = {}
    for name, p in params.items():
        for c, d in zip(ctx_names, p.list_data()):
            out['%s@%s' % (name, c)] = d.asnumpy()
    return out


@pytest.fixture(scope='module')
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp('trainref')
    code = textwrap.dedent(inspect.getsource(_train)) + 'import numpy as np\nimport mxnet as mx\n' \
        + ''.join('np.savez(%r, **_train(mx, %r, %r, %r, %r, %r, %d))\n'
                  % (str(path / ('%d.npz' % i)), *case, STEPS) for i, case in enumerate(CASES))
    run_mxnet(code)
    return [np.load(path / ('%d.npz' % i)) for i in range(len(CASES))]


@pytest.fixture
def mxnet_alias(monkeypatch):
    """Lets ``_train``'s ``from mxnet import ...`` find neomx."""
    import sys
    monkeypatch.setitem(sys.modules, 'mxnet', mx)


@pytest.mark.parametrize('i', range(len(CASES)), ids=['-'.join(str(x) for x in c[:4])
                                                     for c in CASES])
def test_same_weights_as_mxnet(reference, mxnet_alias, engine, i):
    ours = _train(mx, *CASES[i], STEPS)
    ref = reference[i]
    assert sorted(ours) == sorted(ref.files)
    for k in ref.files:
        np.testing.assert_allclose(ours[k], ref[k], rtol=1e-5, atol=1e-6, err_msg=k)
    if CASES[i][2] is not None and len(CASES[i][4]) == 2:   # replicas stay identical
        for k in ours:
            if k.endswith('@cpu(0)'):
                np.testing.assert_array_equal(ours[k], ours[k.replace('@cpu(0)', '@cpu(1)')])


# -- behaviour ----------------------------------------------------------------------------

def _net(ctxs, units=(5, 3), in_units=4):
    layers = []
    for k, u in enumerate(units):
        layer = gluon.nn.Dense(u, in_units=in_units if k == 0 else units[k - 1],
                               prefix='l%d_' % k)
        layer.initialize(mx.init.Xavier(), ctx=ctxs)
        layers.append(layer)
    params = {}
    for layer in layers:
        params.update({p.name: p for p in layer.collect_params().values()})
    return layers, params


def _backward(layers, ctxs, use=None):
    use = layers if use is None else use
    rs = np.random.RandomState(3)
    for c in ctxs:
        x = nd.array(rs.randn(2, 4), ctx=c)
        with autograd.record():
            h = x
            for layer in use:
                h = layer(h)
            loss = (h * h).sum()
        loss.backward()


def _values(params):
    return {n: [d.asnumpy() for d in p.list_data()] for n, p in params.items()}


def test_stale_gradient_error_and_ignore(engine):
    ctxs = [mx.cpu(0)]
    layers, params = _net(ctxs, units=(5, 3))
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1})
    _backward(layers, ctxs)
    trainer.step(2)
    with pytest.raises(UserWarning, match=r"Gradient of Parameter `l0_bias` on context "
                                          r"cpu\(0\) has not been updated by backward since "
                                          r"last `step`.*ignore_stale_grad=True"):
        trainer.step(2)
    # Only the first layer is used: the second one's gradients are stale and it is skipped.
    before = _values(params)
    _backward(layers, ctxs, use=layers[:1])
    trainer.step(2, ignore_stale_grad=True)
    after = _values(params)
    assert not np.array_equal(before['l0_weight'][0], after['l0_weight'][0])
    np.testing.assert_array_equal(before['l1_weight'][0], after['l1_weight'][0])


def test_allreduce_grads_then_update_equals_step(engine):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    results = []
    for split in (False, True):
        mx.random.seed(1)
        layers, params = _net(ctxs)
        trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1, 'momentum': 0.5},
                                update_on_kvstore=False)
        for _ in range(2):
            _backward(layers, ctxs)
            if split:
                trainer.allreduce_grads()
                trainer.update(4)
            else:
                trainer.step(4)
        results.append(_values(params))
    for k in results[0]:
        np.testing.assert_array_equal(results[0][k][0], results[1][k][0])
        np.testing.assert_array_equal(results[1][k][0], results[1][k][1])


def test_allreduce_with_gradient_clipping_between():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    layers, params = _net(ctxs)
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1}, update_on_kvstore=False)
    _backward(layers, ctxs)
    trainer.allreduce_grads()
    grads = [p.grad(c) for p in params.values() for c in ctxs]
    norm = gluon.utils.clip_global_norm(grads, 0.01)
    assert norm > 0.01
    trainer.update(4)
    vals = _values(params)
    for k in vals:
        np.testing.assert_array_equal(vals[k][0], vals[k][1])


def test_update_on_kvstore_forbids_split_calls():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    layers, params = _net(ctxs)
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1})
    _backward(layers, ctxs)
    with pytest.raises(AssertionError, match=r'allreduce_grads\(\) when parameters are updated '
                                             r'on kvstore is not supported'):
        trainer.allreduce_grads()
    with pytest.raises(AssertionError, match=r'update\(\) when parameters are updated on kvstore'):
        trainer.update(4)
    assert trainer._update_on_kvstore is True


@pytest.mark.parametrize('ctxs, update_on_kvstore', [
    ([mx.cpu(0)], None), ([mx.cpu(0), mx.cpu(1)], None), ([mx.cpu(0), mx.cpu(1)], False)])
def test_save_and_load_states(tmp_path, ctxs, update_on_kvstore):
    """Training 3 steps equals training 2, saving, loading into a new Trainer, and 1 more."""
    fname = str(tmp_path / 'trainer.states')

    def run(stop_at, load=False, start=None):
        mx.random.seed(5)
        layers, params = _net(ctxs)
        if start is not None:
            for n, p in params.items():
                p.set_data(nd.array(start[n][0]))
        trainer = gluon.Trainer(params, 'adam', {'learning_rate': 0.05},
                                update_on_kvstore=update_on_kvstore)
        if load:
            trainer.load_states(fname)
        for step in range(stop_at):
            _backward(layers, ctxs)
            trainer.step(2)
        return trainer, params
    trainer, params = run(3)
    full = _values(params)
    trainer, params = run(2)
    trainer.save_states(fname)
    middle = _values(params)
    trainer, params = run(1, load=True, start=middle)
    assert isinstance(trainer.optimizer, mx.optimizer.Adam)
    assert trainer.optimizer.num_update == 3
    assert trainer.optimizer.param_dict[0] is list(params.values())[0] or \
        set(trainer.optimizer.param_dict.values()) == set(params.values())
    resumed = _values(params)
    for k in full:
        np.testing.assert_allclose(resumed[k][0], full[k][0], rtol=1e-6, atol=1e-7)


def test_learning_rate_and_optimizer_properties():
    layers, params = _net([mx.cpu(0)])
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.3})
    assert trainer.learning_rate == 0.3
    trainer.set_learning_rate(0.1)
    assert trainer.optimizer.lr == 0.1
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    trainer = gluon.Trainer(params, mx.optimizer.SGD(lr_scheduler=sched))
    with pytest.raises(UserWarning, match='LRScheduler of the optimizer has already been '
                                          'defined'):
        trainer.set_learning_rate(0.1)
    for _ in range(3):
        _backward(layers, [mx.cpu(0)])
        trainer.step(1)
    assert trainer.learning_rate == 0.25
    with pytest.raises(AssertionError, match='optimizer_params must be None'):
        gluon.Trainer(params, mx.optimizer.SGD(), {'learning_rate': 0.1})


def test_batch_size_rescales_and_lr_mult():
    w = gluon.Parameter('w', shape=(2,), init=mx.init.One())
    b = gluon.Parameter('b', shape=(2,), init=mx.init.One(), lr_mult=0.0)
    frozen = gluon.Parameter('f', shape=(2,), init=mx.init.One(), grad_req='null')
    for p in (w, b, frozen):
        p.initialize(ctx=mx.cpu(0))
    trainer = gluon.Trainer([w, b, frozen], 'sgd', {'learning_rate': 1.0})
    with autograd.record():
        loss = (w.data() * 4 + b.data() * frozen.data()).sum()
    loss.backward()
    trainer.step(batch_size=8)      # gradient 4 / 8
    assert w.data().asnumpy().tolist() == [0.5, 0.5]
    assert b.data().asnumpy().tolist() == [1.0, 1.0]      # lr_mult = 0
    assert frozen.data().asnumpy().tolist() == [1.0, 1.0]


def test_deferred_initialization_waits_for_first_forward():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    net = gluon.nn.Dense(2, prefix='d_')
    net.initialize(mx.init.One(), ctx=ctxs)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
    for c in ctxs:
        with autograd.record():
            loss = net(nd.ones((1, 3), ctx=c)).sum()
        loss.backward()
    trainer.step(2)
    for d in net.weight.list_data():
        assert d.asnumpy().tolist() == [[0.5] * 3] * 2


def test_bad_arguments():
    with pytest.raises(ValueError, match='First argument must be a list or dict of Parameters'):
        gluon.Trainer(3, 'sgd')
    with pytest.raises(ValueError, match='got list of'):
        gluon.Trainer([nd.ones((1,))], 'sgd')
    a = gluon.Parameter('a', shape=(1,))
    b = gluon.Parameter('b', shape=(1,))
    a.initialize(ctx=mx.cpu(0))
    b.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(AssertionError, match='All Parameters must be initialized on the same '
                                             'set of contexts'):
        gluon.Trainer([a, b], 'sgd')
    with pytest.raises(ValueError, match='Cannot find optimizer'):
        gluon.Trainer([a], 'nosuch')


def test_step_is_a_few_engine_operations(monkeypatch):
    """With two devices, a step is a constant number of engine operations however many
    parameters there are."""
    ctxs = [mx.cpu(0), mx.cpu(1)]
    counts = []
    for units in ((5, 3), (5, 5, 5, 5, 5, 3)):
        for update_on_kvstore in (None, False):
            layers, params = _net(ctxs, units)
            trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1, 'momentum': 0.9},
                                    update_on_kvstore=update_on_kvstore)
            _backward(layers, ctxs)
            trainer.step(4)                 # the first step initialises the store
            _backward(layers, ctxs)
            nd.waitall()
            eng = mx.engine.current()
            names = []
            push = eng.push

            def counting(fn, reads, writes, ctx, name, *args, **kwargs):
                names.append(name)
                return push(fn, reads, writes, ctx, name, *args, **kwargs)
            monkeypatch.setattr(eng, 'push', counting)
            trainer.step(4)
            monkeypatch.undo()
            counts.append(len(names))
    assert counts[0] == counts[2] and counts[1] == counts[3]
    assert max(counts) <= 8


def test_compression_params_reach_the_store():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    layers, params = _net(ctxs)
    before = _values(params)
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1},
                            compression_params={'type': '2bit', 'threshold': 0.01})
    _backward(layers, ctxs)
    trainer.step(4)
    assert trainer._kvstore._compression == 0.01
    after = _values(params)
    for k in after:
        np.testing.assert_array_equal(after[k][0], after[k][1])
        # every weight moved by a multiple of lr * 0.01 / 4
        steps = (after[k][0] - before[k][0]) / (0.1 * 0.01 / 4)
        np.testing.assert_allclose(steps, np.round(steps), atol=1e-2)


@pytest.mark.gpu
@pytest.mark.parametrize('update_on_kvstore', [None, False])
def test_cpu_and_gpu_replicas_train_alike(update_on_kvstore):
    results = []
    # gpu(0) beside cpu(1): an optimizer counts each device's updates by device id, as MXNet's
    # Updater does (_set_current_context), so gpu(0) and cpu(0) would share Adam's step count
    # without update_on_kvstore
    for ctxs in ([mx.cpu(0), mx.cpu(1)], [mx.gpu(0), mx.cpu(1)]):
        mx.random.seed(2)
        layers, params = _net(ctxs)
        trainer = gluon.Trainer(params, 'adam', {'learning_rate': 0.01},
                                update_on_kvstore=update_on_kvstore)
        for _ in range(3):
            _backward(layers, ctxs)
            trainer.step(4)
        results.append(_values(params))
    for k in results[0]:
        np.testing.assert_allclose(results[1][k][0], results[0][k][0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(results[1][k][1], results[1][k][0], rtol=1e-5, atol=1e-6)
