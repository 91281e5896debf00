"""Optimizers: the same weights and gradients through neomx and MXNet 1.9.1 give the same
weights (every optimizer, with momentum, weight decay, clipping, rescaling, multipliers,
schedules and float16 master copies); the registry, the Updater, states and errors; one
engine operation per device for an update of many parameters."""
import inspect
import pickle
import textwrap

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx.base import MXNetError
from conftest import run_mxnet

# (optimizer, arguments, how it is driven: 'updater' = Updater with lists, 'single' =
# update_multi_precision per index). 'lr_scheduler' is (class name, kwargs); '_lr_mult' and
# '_wd_mult' are passed to set_lr_mult / set_wd_mult after creation.
CONFIGS = [
    ('sgd', {'learning_rate': 0.1}, 'updater'),
    ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}, 'updater'),
    ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01, 'clip_gradient': 0.3,
             'rescale_grad': 0.5}, 'single'),
    ('sgd', {'learning_rate': 0.2, 'wd': 0.05, 'clip_gradient': 0.4, 'rescale_grad': 0.25,
             'param_idx2name': {0: 'fc_weight', 1: 'fc_bias'}, '_lr_mult': {'fc_bias': 2.0}},
     'updater'),
    ('sgd', {'momentum': 0.9, 'lr_scheduler': ('FactorScheduler',
                                              {'step': 2, 'factor': 0.5, 'base_lr': 0.3})},
     'updater'),
    ('ccsgd', {'learning_rate': 0.1, 'momentum': 0.5}, 'single'),
    ('nag', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.1}, 'updater'),
    ('nag', {'learning_rate': 0.1, 'momentum': 0.9, 'clip_gradient': 0.5,
             'rescale_grad': 2.0}, 'single'),
    ('nag', {'learning_rate': 0.1, 'wd': 0.1, 'clip_gradient': 0.2}, 'updater'),
    ('adam', {'learning_rate': 0.01}, 'updater'),
    ('adam', {'learning_rate': 0.01, 'wd': 0.01, 'clip_gradient': 0.5, 'rescale_grad': 2.0,
              'beta1': 0.8, 'beta2': 0.99, 'epsilon': 1e-6}, 'single'),
    ('adam', {'learning_rate': 0.02, '_wd_mult': {1: 0.0}, 'wd': 0.1}, 'updater'),
    ('rmsprop', {'learning_rate': 0.01, 'wd': 0.01}, 'updater'),
    ('rmsprop', {'learning_rate': 0.01, 'gamma1': 0.8, 'clip_gradient': 0.7,
                 'clip_weights': 0.5}, 'single'),
    ('rmsprop', {'learning_rate': 0.01, 'centered': True, 'clip_weights': 0.9,
                 'clip_gradient': 1.0, 'wd': 0.02, 'gamma2': 0.7}, 'updater'),
    ('adagrad', {'learning_rate': 0.1, 'wd': 0.01, 'clip_gradient': 0.5}, 'updater'),
    ('adagrad', {'learning_rate': 0.1, 'eps': 1e-3, 'rescale_grad': 0.5}, 'single'),
    ('adadelta', {'wd': 0.01, 'rescale_grad': 0.5}, 'updater'),
    ('adadelta', {'rho': 0.8, 'epsilon': 1e-4, 'clip_gradient': 0.3}, 'single'),
    ('signum', {'learning_rate': 0.01, 'wd': 0.01, 'wd_lh': 0.1}, 'updater'),
    ('signum', {'learning_rate': 0.01, 'momentum': 0.8, 'clip_gradient': 0.2,
                'rescale_grad': 3.0}, 'single'),
    ('signum', {'learning_rate': 0.01, 'momentum': 0.0, 'wd': 0.01}, 'updater'),
    ('ftrl', {'learning_rate': 0.1, 'wd': 0.01, 'lamda1': 0.01}, 'updater'),
    ('ftrl', {'lamda1': 0.1, 'beta': 2.0, 'clip_gradient': 0.5}, 'single'),
    ('adamax', {'learning_rate': 0.01, 'wd': 0.01, 'clip_gradient': 0.5}, 'updater'),
    ('nadam', {'learning_rate': 0.01, 'wd': 0.01}, 'updater'),
    ('ftml', {'learning_rate': 0.01, 'wd': 0.01, 'clip_gradient': 0.5}, 'single'),
    ('test', {'rescale_grad': 0.5}, 'updater'),
    ('lamb', {'learning_rate': 0.01, 'wd': 0.01}, 'updater'),
    ('lamb', {'learning_rate': 0.01, 'bias_correction': False, 'clip_gradient': 0.5,
              'lower_bound': 0.5, 'upper_bound': 2.0}, 'updater'),
    ('lamb', {'learning_rate': 0.01, 'wd': 0.01, 'rescale_grad': 0.5}, 'single'),
    ('dcasgd', {'learning_rate': 0.1, 'wd': 0.01, 'lamda': 0.1}, 'updater'),
    ('dcasgd', {'learning_rate': 0.1, 'clip_gradient': 0.3}, 'single'),
]
# float16 weights: the optimizer keeps float32 master copies.
MP_CONFIGS = [
    ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01, 'multi_precision': True},
     'updater'),
    ('sgd', {'learning_rate': 0.1, 'multi_precision': True}, 'single'),
    ('nag', {'learning_rate': 0.1, 'momentum': 0.9, 'multi_precision': True}, 'updater'),
    ('adam', {'learning_rate': 0.01, 'wd': 0.01, 'multi_precision': True}, 'updater'),
]
STEPS = 4


def _trajectories(mx, configs, dtype, steps):
    """Runs every configuration for ``steps`` updates of two weights; returns the weights,
    learning rates and update counts. The same source runs under MXNet and neomx."""
    import numpy as np
    out = {}
    for ci, (name, kw, mode) in enumerate(configs):
        rs = np.random.RandomState(100 + ci)
        kw = dict(kw)
        lr_mult = kw.pop('_lr_mult', None)
        wd_mult = kw.pop('_wd_mult', None)
        if 'lr_scheduler' in kw:
            cls, args = kw['lr_scheduler']
            kw['lr_scheduler'] = getattr(mx.lr_scheduler, cls)(**args)
        opt = mx.optimizer.create(name, **kw)
        if lr_mult:
            opt.set_lr_mult(lr_mult)
        if wd_mult:
            opt.set_wd_mult(wd_mult)
        ws = [mx.nd.array(rs.randn(3, 4), dtype=dtype), mx.nd.array(rs.randn(5), dtype=dtype)]
        upd = mx.optimizer.get_updater(opt)
        states = [opt.create_state_multi_precision(i, w) for i, w in enumerate(ws)]
        for _ in range(steps):
            gs = [mx.nd.array(rs.randn(*w.shape), dtype=dtype) for w in ws]
            if mode == 'updater':
                upd([0, 1], gs, ws)
            else:
                for i in range(len(ws)):
                    opt.update_multi_precision(i, ws[i], gs[i], states[i])
        for k, w in enumerate(ws):
            out['%d_w%d' % (ci, k)] = w.asnumpy()
        out['%d_lr' % ci] = np.array([opt.learning_rate, opt.num_update], dtype=np.float64)
    return out


@pytest.fixture(scope='module')
def reference(tmp_path_factory):
    """MXNet 1.9.1's trajectories, computed once for the module."""
    path = tmp_path_factory.mktemp('optref')
    code = textwrap.dedent(inspect.getsource(_trajectories)) + textwrap.dedent('''
        import warnings
        import numpy as np
        import mxnet as mx
        warnings.simplefilter('ignore')
        np.savez(%r, **_trajectories(mx, %r, 'float32', %d))
        np.savez(%r, **_trajectories(mx, %r, 'float16', %d))
        ''' % (str(path / 'f32.npz'), CONFIGS, STEPS, str(path / 'f16.npz'), MP_CONFIGS, STEPS))
    run_mxnet(code)
    return np.load(path / 'f32.npz'), np.load(path / 'f16.npz')


def _label(configs, key):
    return '%s %s %s' % configs[int(key.split('_')[0])]


def test_same_weights_as_mxnet(reference, engine):
    ref32, _ = reference
    ours = _trajectories(mx, CONFIGS, 'float32', STEPS)
    assert sorted(ours) == sorted(ref32.files)
    for key in ref32.files:
        np.testing.assert_allclose(ours[key], ref32[key], rtol=1e-6, atol=1e-7,
                                   err_msg=_label(CONFIGS, key))


def test_multi_precision_same_weights_as_mxnet(reference, engine):
    _, ref16 = reference
    ours = _trajectories(mx, MP_CONFIGS, 'float16', STEPS)
    for key in ref16.files:
        assert ours[key].dtype == ref16[key].dtype, key
        np.testing.assert_allclose(ours[key].astype(np.float32), ref16[key].astype(np.float32),
                                   rtol=1e-3, atol=1e-3, err_msg=_label(MP_CONFIGS, key))


def test_multi_precision_keeps_float32_master():
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, multi_precision=True)
    w = nd.array([1.0, 2.0], dtype='float16')
    mom, master = opt.create_state_multi_precision(0, w)
    assert master.dtype == np.float32 and mom.dtype == np.float32
    # A step below float16's resolution at 1.0 still moves the master copy.
    opt.update_multi_precision(0, w, nd.array([1e-3, 0], dtype='float16'), (mom, master))
    assert master.asnumpy()[0] < 1.0
    assert w.asnumpy()[0] == np.float16(master.asnumpy()[0])


# -- registry and attributes ----------------------------------------------------------------

def test_create_and_register():
    assert isinstance(mx.optimizer.create('SGD'), mx.optimizer.SGD)
    assert isinstance(mx.optimizer.Optimizer.create_optimizer('adam'), mx.optimizer.Adam)
    with pytest.raises(ValueError, match='Cannot find optimizer nosuch'):
        mx.optimizer.create('nosuch')

    @mx.optimizer.Optimizer.register
    class Halver(mx.optimizer.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = weight * 0.5

    opt = mx.optimizer.create('halver')
    w = nd.ones((2,))
    mx.optimizer.get_updater(opt)(0, nd.ones((2,)), w)
    assert w.asnumpy().tolist() == [0.5, 0.5]
    with pytest.warns(UserWarning, match='overriding'):
        mx.optimizer.register(Halver)


def test_defaults_match_mxnet():
    assert mx.optimizer.SGD().learning_rate == 0.01
    assert mx.optimizer.Adam().learning_rate == 0.001
    assert mx.optimizer.RMSProp().learning_rate == 0.001
    assert mx.optimizer.Ftrl().learning_rate == 0.1
    assert mx.optimizer.Signum().momentum == 0.9
    assert mx.optimizer.SGD().aggregate_num == 4
    assert mx.optimizer.Adam().aggregate_num == 0


def test_learning_rate_and_scheduler():
    opt = mx.optimizer.SGD(learning_rate=0.5)
    opt.set_learning_rate(0.25)
    assert opt.learning_rate == 0.25
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    opt = mx.optimizer.SGD(lr_scheduler=sched)
    assert opt.learning_rate == 1.0
    with pytest.raises(UserWarning, match='LRScheduler of the optimizer has already been defined'):
        opt.set_learning_rate(0.1)
    w = nd.ones((1,))
    upd = mx.optimizer.get_updater(opt)
    for _ in range(3):
        upd(0, nd.ones((1,)), w)
    assert opt.num_update == 3
    assert opt.learning_rate == 0.25
    # learning_rate= overrides the scheduler's base_lr, as in MXNet.
    sched = mx.lr_scheduler.FactorScheduler(step=1, base_lr=1.0)
    mx.optimizer.SGD(learning_rate=0.3, lr_scheduler=sched)
    assert sched.base_lr == 0.3


def test_multipliers_by_name_index_and_param_dict():
    opt = mx.optimizer.SGD(learning_rate=1.0, wd=0.1,
                           param_idx2name={0: 'fc_weight', 1: 'fc_bias', 2: 'bn_gamma'})
    assert opt._get_wds([0, 1, 2]) == [0.1, 0.0, 0.1]
    opt.set_lr_mult({'fc_weight': 0.5, 2: 3.0})
    assert opt._get_lrs([0, 1, 2]) == [0.5, 1.0, 3.0]

    class P:
        lr_mult = 0.25
        wd_mult = 2.0
    opt = mx.optimizer.SGD(learning_rate=1.0, wd=0.1, param_dict={7: P()})
    assert opt._get_lr(7) == 0.25 and opt._get_wd(7) == 0.2
    # param_dict is not pickled (it holds the Trainer's Parameters).
    assert pickle.loads(pickle.dumps(opt)).param_dict == {}


def test_update_counts_per_device():
    # One Updater per device sharing the optimizer, as a Trainer has.
    opt = mx.optimizer.Adam()
    upd0, upd1 = mx.optimizer.get_updater(opt), mx.optimizer.get_updater(opt)
    w0, w1 = nd.ones((2,), ctx=mx.cpu(0)), nd.ones((2,), ctx=mx.cpu(1))
    upd0(0, nd.ones((2,), ctx=mx.cpu(0)), w0)
    upd1(0, nd.ones((2,), ctx=mx.cpu(1)), w1)
    assert opt._all_index_update_counts[0][0] == 1
    assert opt._all_index_update_counts[1][0] == 1
    assert opt.num_update == 1
    # The same count gives the same step on both devices.
    np.testing.assert_array_equal(w0.asnumpy(), w1.asnumpy())


def test_updater_states_roundtrip():
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    upd = mx.optimizer.get_updater(opt)
    w = nd.ones((3,))
    upd(0, nd.ones((3,)), w)
    blob = upd.get_states(dump_optimizer=True)
    upd2 = mx.optimizer.get_updater(mx.optimizer.SGD())
    upd2.set_states(blob)
    assert isinstance(upd2.optimizer, mx.optimizer.SGD) and upd2.optimizer.momentum == 0.9
    w2 = w.copy()
    upd(0, nd.ones((3,)), w)
    upd2(0, nd.ones((3,)), w2)
    np.testing.assert_array_equal(w.asnumpy(), w2.asnumpy())
    # Loaded states move to the weight's device when first used.
    upd3 = mx.optimizer.get_updater(mx.optimizer.SGD())
    upd3.set_states(upd.get_states())
    w3 = nd.ones((3,), ctx=mx.cpu(1))
    upd3(0, nd.ones((3,), ctx=mx.cpu(1)), w3)
    assert upd3.states[0].context == mx.cpu(1)


def test_custom_optimizer_with_nd_operations():
    class Momentumless(mx.optimizer.Optimizer):
        def create_state(self, index, weight):
            return nd.zeros(weight.shape, weight.context)

        def update(self, index, weight, grad, state):
            self._update_count(index)
            state[:] += grad
            weight[:] -= self._get_lr(index) * grad

    opt = Momentumless(learning_rate=0.5)
    assert not opt._fusable()
    upd = mx.optimizer.get_updater(opt)
    ws = [nd.ones((2,)), nd.ones((3,))]
    upd([0, 1], [nd.ones((2,)), nd.ones((3,)) * 2], ws)
    assert ws[0].asnumpy().tolist() == [0.5, 0.5]
    assert ws[1].asnumpy().tolist() == [0.0, 0.0, 0.0]
    assert upd.states[1].asnumpy().tolist() == [2.0, 2.0, 2.0]


def test_base_optimizer_update_is_abstract():
    with pytest.raises(NotImplementedError, match='must define update'):
        mx.optimizer.Optimizer().update(0, nd.ones((1,)), nd.ones((1,)), None)


def test_errors_name_the_index_and_values():
    opt = mx.optimizer.SGD()
    with pytest.raises(MXNetError, match=r"index 3 is on cpu\(0\) but its gradient is on cpu\(1\)"):
        opt.update(3, nd.ones((2,)), nd.ones((2,), ctx=mx.cpu(1)), None)
    with pytest.raises(MXNetError, match=r"shape \(2,\) but its gradient has shape \(3,\)"):
        opt.update(0, nd.ones((2,)), nd.ones((3,)), None)
    with pytest.raises(MXNetError, match='must be NDArrays'):
        opt.update(0, nd.ones((2,)), np.ones(2), None)
    opt = mx.optimizer.SGD(momentum=0.9)
    state = opt.create_state(0, nd.ones((2,)))
    with pytest.raises(MXNetError, match=r"index 0 is on cpu\(1\) but its state is on cpu\(0\)"):
        opt.update(0, nd.ones((2,), ctx=mx.cpu(1)), nd.ones((2,), ctx=mx.cpu(1)), state)


def test_one_engine_operation_per_device(monkeypatch):
    """An update of many parameters is one fused engine operation per device."""
    eng = mx.engine.current()
    names = []
    push = eng.push

    def counting(fn, reads, writes, ctx, name, *args, **kwargs):
        names.append((name, ctx))
        return push(fn, reads, writes, ctx, name, *args, **kwargs)
    opt = mx.optimizer.Adam(learning_rate=0.1)
    upd = mx.optimizer.get_updater(opt)
    ws = [nd.ones((4, 4)) for _ in range(20)] + [nd.ones((3,), ctx=mx.cpu(1)) for _ in range(5)]
    gs = [nd.ones(w.shape, ctx=w.context) for w in ws]
    upd(list(range(25)), gs, ws)     # first call creates the states
    nd.waitall()
    monkeypatch.setattr(eng, 'push', counting)
    upd(list(range(25)), gs, ws)
    monkeypatch.undo()
    updates = [n for n in names if n[0] == 'Adam_update']
    assert sorted(str(c) for _, c in updates) == ['cpu(0)', 'cpu(1)']
    assert len(names) == 2


def test_update_is_ordered_with_later_reads(engine):
    opt = mx.optimizer.SGD(learning_rate=1.0)
    w = nd.zeros((1000,))
    g = nd.ones((1000,))
    for _ in range(10):
        opt.update(0, w, g, None)
    total = (w * 1).sum()
    assert float(total.asscalar()) == -10000.0


@pytest.mark.parametrize('name, kwargs', [
    ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}),
    ('adam', {'learning_rate': 0.01, 'clip_gradient': 0.5}),
    ('rmsprop', {'centered': True}),
    ('ftml', {}),
    ('ftrl', {}),
])
def test_cache_sized_batches_change_nothing(monkeypatch, name, kwargs):
    """Large weights are updated in flat chunks that fit the cache: the same results as
    updating them whole."""
    from neomx.optimizer import optimizer as impl
    results = []
    for batch in (impl._BATCH, 1 << 40):
        monkeypatch.setattr(impl, '_BATCH', batch)
        rs = np.random.RandomState(0)
        opt = mx.optimizer.create(name, **kwargs)
        upd = mx.optimizer.get_updater(opt)
        ws = [nd.array(rs.randn(300, 300)), nd.array(rs.randn(7)), nd.array(rs.randn(70000))]
        for _ in range(3):
            upd([0, 1, 2], [nd.array(rs.randn(*w.shape)) for w in ws], ws)
        results.append([w.asnumpy() for w in ws])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.gpu
@pytest.mark.parametrize('dtype, name, kwargs', [
    ('float32', 'sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01}),
    ('float32', 'adam', {'learning_rate': 0.01, 'clip_gradient': 0.5}),
    ('float32', 'rmsprop', {'centered': True}),
    ('float16', 'sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'multi_precision': True}),
])
def test_gpu_updates_match_cpu(dtype, name, kwargs):
    results = []
    for ctx in (mx.cpu(0), mx.gpu(0)):
        rs = np.random.RandomState(0)
        upd = mx.optimizer.get_updater(mx.optimizer.create(name, **kwargs))
        ws = [nd.array(rs.randn(300, 300), ctx=ctx, dtype=dtype), nd.array(rs.randn(7), ctx=ctx,
                                                                           dtype=dtype)]
        for _ in range(3):
            upd([0, 1], [nd.array(rs.randn(*w.shape), ctx=ctx, dtype=dtype) for w in ws], ws)
        results.append([w.asnumpy().astype(np.float32) for w in ws])
    tol = 1e-3 if dtype == 'float16' else 1e-5
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol)


def test_sgld_adds_gaussian_noise_of_variance_lr():
    opt = mx.optimizer.SGLD(learning_rate=0.01)
    w = nd.zeros((20000,))
    mx.optimizer.get_updater(opt)(0, nd.ones((20000,)), w)
    values = w.asnumpy()
    assert abs(values.mean() - (-0.005)) < 0.003      # half a gradient step, on average
    assert abs(values.std() - 0.1) < 0.003            # noise of standard deviation sqrt(lr)


def test_rules_keep_mxnets_module_path():
    # mxnet.optimizer.optimizer.<Rule> is MXNet's path to every rule, and the one that
    # optimizers pickled before the rules had modules of their own name.
    from neomx.optimizer import optimizer as machinery
    for name in mx.optimizer.__all__:
        assert getattr(machinery, name) is getattr(mx.optimizer, name)
    with pytest.raises(AttributeError, match='NoSuchRule'):
        machinery.NoSuchRule    # noqa: B018
    opt = mx.optimizer.Adam(learning_rate=0.25)
    blob = pickle.dumps(opt, protocol=2).replace(b'neomx.optimizer.adam',
                                                 b'neomx.optimizer.optimizer')
    assert b'neomx.optimizer.optimizer' in blob
    old = pickle.loads(blob)
    assert type(old) is mx.optimizer.Adam and old.lr == 0.25


class _ListRates(mx.optimizer.SGD):
    """An optimizer written for MXNet's lists of at most ``aggregate_num`` indices: its rates
    ignore the indices (as keras-mxnet's do)."""

    def _get_lrs(self, _):
        return [self.lr] * self.aggregate_num


class _OneRate(mx.optimizer.SGD):
    """An optimizer written for MXNet's one-by-one updates (``aggregate_num`` 0)."""

    def _get_lr(self, index):
        return self.lr * (1 + index % 2)


@pytest.mark.parametrize('cls, aggregate, halve_odd', [(_ListRates, 4, False),
                                                       (_OneRate, 0, True)])
def test_rates_asked_for_in_mxnet_sized_lists(cls, aggregate, halve_odd):
    # seven parameters in one update call: the rates come in lists of at most aggregate_num,
    # or one by one
    rng = np.random.RandomState(0)
    ws = [rng.randn(3).astype('float32') for _ in range(7)]
    gs = [rng.randn(3).astype('float32') for _ in range(7)]
    results = []
    for c in (mx.optimizer.SGD, cls):
        opt = c(learning_rate=0.5, momentum=0.9, wd=0.01)
        opt.aggregate_num = aggregate
        if c is mx.optimizer.SGD and halve_odd:
            opt.set_lr_mult({i: 2.0 for i in range(1, 7, 2)})
        upd = mx.optimizer.get_updater(opt)
        weights = [nd.array(w) for w in ws]
        for _ in range(2):
            upd(list(range(7)), [nd.array(g) for g in gs], weights)
        results.append([w.asnumpy() for w in weights])
    for ours, ref in zip(*results):
        np.testing.assert_allclose(ours, ref, rtol=1e-6)


def test_too_few_rates_name_the_optimizer():
    class Short(mx.optimizer.SGD):
        def _get_wds(self, indices):
            return [0.0]
    opt = Short(learning_rate=0.1)
    opt.aggregate_num = 4
    with pytest.raises(MXNetError, match=r"Short._get_wds gave 1 values for the 4 indices "
                                         r"\[0, 1, 2, 3\]"):
        opt.update(list(range(4)), [nd.ones((2,))] * 4, [nd.ones((2,))] * 4, [None] * 4)
