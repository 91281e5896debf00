"""KVStore 'local' and 'device' in one process: init/push/pull/pushpull/broadcast with int
and str keys and values on several devices, updates on the store compared with MXNet 1.9.1,
optimizer states, errors, and the number of engine operations a call costs."""
import inspect
import textwrap

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx.base import MXNetError
from conftest import run_mxnet

CTXS = [mx.cpu(0), mx.cpu(1)]


@pytest.fixture(params=['local', 'device'])
def kind(request):
    return request.param


def _vals(kv_ctxs, value, shape=(2, 3)):
    return [nd.ones(shape, ctx=c) * (value + i) for i, c in enumerate(kv_ctxs)]


def test_push_sums_and_pull_copies(kind, engine):
    kv = mx.kv.create(kind)
    assert (kv.type, kv.rank, kv.num_workers) == (kind, 0, 1)
    kv.init(3, nd.ones((2, 3)) * 2)
    out = nd.zeros((2, 3))
    kv.pull(3, out=out)
    assert out.asnumpy().tolist() == [[2.0] * 3] * 2
    kv.push(3, _vals(CTXS, 1.0))          # 1 + 2
    outs = [nd.zeros((2, 3), ctx=c) for c in CTXS]
    kv.pull(3, out=outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), np.full((2, 3), 3.0))
    # A repeated key sums the values of all its occurrences.
    kv.push([3, 3], [nd.ones((2, 3)) * 5, nd.ones((2, 3)) * 7])
    kv.pull(3, out=out)
    assert out.asnumpy()[0, 0] == 12.0


def test_lists_of_keys_and_str_keys(kind, engine):
    kv = mx.kv.create(kind)
    keys = ['a', 'b', 'c']
    kv.init(keys, [nd.zeros((4,)) for _ in keys])
    grads = [[nd.ones((4,), ctx=c) * (k + 1) for c in CTXS] for k in range(3)]
    kv.pushpull(keys, grads)
    for k, gs in enumerate(grads):
        for g in gs:
            assert g.asnumpy().tolist() == [2.0 * (k + 1)] * 4
    outs = [nd.zeros((4,)) for _ in keys]
    kv.pull(keys, out=outs)
    assert [o.asnumpy()[0] for o in outs] == [2.0, 4.0, 6.0]
    # A store keeps the kind of keys it was first given, as MXNet's ("Mixed key types are
    # not allowed"): an int key after str keys is an error on every call.
    for call in (lambda: kv.init(1, nd.ones((4,))), lambda: kv.push(1, nd.ones((4,))),
                 lambda: kv.pull(1, out=nd.ones((4,)))):
        with pytest.raises(MXNetError, match='str keys'):
            call()


def test_pushpull_into_out_and_broadcast(kind, engine):
    kv = mx.kv.create(kind)
    kv.init(0, nd.zeros((3,)))
    outs = [nd.zeros((3,), ctx=c) for c in CTXS]
    vals = _vals(CTXS, 1.0, (3,))
    kv.pushpull(0, vals, out=outs)
    assert [o.asnumpy().tolist() for o in outs] == [[3.0] * 3] * 2
    assert vals[0].asnumpy().tolist() == [1.0] * 3      # values are left alone
    targets = [nd.zeros((2,), ctx=c) for c in CTXS + [mx.cpu(2)]]
    kv.broadcast(1, nd.array([4.0, 5.0]), out=targets)
    for t in targets:
        assert t.asnumpy().tolist() == [4.0, 5.0]


def test_values_on_three_devices(engine):
    kv = mx.kv.create('device')
    ctxs = [mx.cpu(0), mx.cpu(1), mx.cpu(2)]
    vals = [nd.array([1.0, 2.0], ctx=c) * (i + 1) for i, c in enumerate(ctxs)]
    kv.init(7, vals[0])
    kv.pushpull(7, vals)
    for v in vals:
        assert v.asnumpy().tolist() == [6.0, 12.0]


def test_device_balances_merge_devices():
    kv = mx.kv.create('device')
    keys = list(range(6))
    kv.init(keys, [nd.zeros((10,)) for _ in keys])
    kv.pushpull(keys, [[nd.ones((10,), ctx=c) for c in CTXS] for _ in keys])
    used = [str(kv._merge[k]) for k in keys]
    assert used.count('cpu(0)') == 3 and used.count('cpu(1)') == 3
    local = mx.kv.create('local')
    local.init(0, nd.zeros((2,), ctx=mx.cpu(1)))
    local.push(0, [nd.ones((2,), ctx=c) for c in CTXS])
    assert local._merge[0] == mx.cpu(0)


def test_errors(kind):
    kv = mx.kv.create(kind)
    a = nd.ones((2, 3))
    with pytest.raises(MXNetError, match='key 3 has not been inited'):
        kv.push(3, a)
    with pytest.raises(MXNetError, match='key 4 has not been inited'):
        kv.pull(4, out=nd.zeros((2, 3)))
    kv.init(5, a)
    with pytest.raises(MXNetError, match='duplicate init of key 5'):
        kv.init(5, a)
    with pytest.raises(MXNetError, match='duplicate init of key 5'):
        kv.broadcast(5, a, out=nd.zeros((2, 3)))
    with pytest.raises(MXNetError, match='duplicate init of key 8'):
        kv.init(8, [a, a])
    with pytest.raises(MXNetError,
                       match=r'key 5 holds shape \(2, 3\) but an array of shape \(3,\)'):
        kv.push(5, nd.ones((3,)))
    with pytest.raises(MXNetError, match=r'key 5 holds shape \(2, 3\)'):
        kv.pull(5, out=nd.zeros((3,)))
    with pytest.raises(MXNetError, match='inconsistent types of keys'):
        kv.init([7, 'x'], [a, a])
    with pytest.raises(MXNetError, match='must be an NDArray or a list of NDArrays'):
        kv.push(5, np.ones((2, 3)))
    with pytest.raises(MXNetError, match='out= is required'):
        kv.pull(5)
    with pytest.raises(MXNetError, match='a key must be an int or a str'):
        kv.init(2.5, a)
    with pytest.raises(MXNetError, match='no optimizer is set'):
        kv.save_optimizer_states('/nonexistent/x')
    with pytest.raises(MXNetError, match='outputs must be row_sparse'):
        kv.row_sparse_pull(5, out=a, row_ids=nd.array([0]))
    with pytest.raises(ValueError, match='Unknown capability: foo'):
        kv.is_capable('foo')
    assert kv.is_capable('optimizer')


def test_create_kinds():
    assert mx.kv.create().type == 'local'
    assert mx.kv.create('local_allreduce_device').type == 'local_allreduce_device'
    assert mx.kv.create('local_allreduce_device')._kind == 'device'
    with pytest.raises(MXNetError, match="'horovod' .*not available.*'local' or 'device'"):
        mx.kv.create('horovod')
    with pytest.raises(MXNetError, match="unknown KVStore type 'nosuch'"):
        mx.kv.create('nosuch')
    with pytest.raises(TypeError, match='name must be a string'):
        mx.kv.create(3)

    @mx.kv.KVStoreBase.register
    class EchoStore(mx.kv.KVStoreBase):
        def pushpull(self, key, value, out=None, priority=0):
            return 'echo'
    assert mx.kv.create('echostore').pushpull(0, None) == 'echo'


def test_python_updater():
    kv = mx.kv.create('local')
    kv.init(3, nd.ones((2,)) * 4)

    def update(key, inp, stored):
        stored += inp * 2
    kv._set_updater(update)
    kv.push(3, nd.ones((2,)))
    out = nd.zeros((2,))
    kv.pull(3, out=out)
    assert out.asnumpy().tolist() == [6.0, 6.0]


def _store_updates(mx, kind, opt_kwargs, keys, steps, ctxs):
    """Pushes the gradients of two devices to a store with an SGD optimizer; returns what is
    pulled after each step. The same source runs under MXNet and neomx."""
    import numpy as np
    rs = np.random.RandomState(0)
    kv = mx.kv.create(kind)
    kv.set_optimizer(mx.optimizer.SGD(**opt_kwargs))
    shapes = [(3, 2), (4,), (2, 2, 2)]
    kv.init(keys, [mx.nd.array(rs.randn(*s)) for s in shapes])
    out = {}
    for step in range(steps):
        grads = [[mx.nd.array(rs.randn(*s), ctx=c) for c in ctxs] for s in shapes]
        kv.push(keys, grads)
        outs = [[mx.nd.zeros(s, ctx=c) for c in ctxs] for s in shapes]
        kv.pull(keys, out=outs)
        for k, os_ in enumerate(outs):
            for d, o in enumerate(os_):
                out['%d_%d_%d' % (step, k, d)] = o.asnumpy()
    return out


def _compressed(mx, threshold, with_sgd):
    """2-bit compressed pushes from two devices, with or without an optimizer."""
    import numpy as np
    rs = np.random.RandomState(1)
    kv = mx.kv.create('device')
    kv.set_gradient_compression({'type': '2bit', 'threshold': threshold})
    if with_sgd:
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, momentum=0.5))
    kv.init(['a', 'b'], [mx.nd.zeros((5,)), mx.nd.zeros((2, 3))])
    out = {}
    for step in range(4):
        grads = [[mx.nd.array(rs.randn(*s), ctx=c) for c in (mx.cpu(0), mx.cpu(1))]
                 for s in ((5,), (2, 3))]
        kv.push(['a', 'b'], grads)
        outs = [mx.nd.zeros((5,)), mx.nd.zeros((2, 3))]
        kv.pull(['a', 'b'], out=outs)
        out['%d_a' % step], out['%d_b' % step] = outs[0].asnumpy(), outs[1].asnumpy()
    return out


COMPRESSED = [(0.5, False), (0.8, True)]
STORE_CASES = [('device', [0, 1, 2]), ('local', ['w', 'b', 'g'])]
OPT = {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.01, 'rescale_grad': 0.5}


@pytest.fixture(scope='module')
def store_reference(tmp_path_factory):
    path = tmp_path_factory.mktemp('kvref')
    code = textwrap.dedent(inspect.getsource(_store_updates)) + \
        textwrap.dedent(inspect.getsource(_compressed)) + 'import numpy as np\n' + \
        'import mxnet as mx\n' + ''.join(
            'np.savez(%r, **_store_updates(mx, %r, %r, %r, 3, [mx.cpu(0), mx.cpu(1)]))\n'
            % (str(path / ('%s.npz' % kind)), kind, OPT, keys) for kind, keys in STORE_CASES) + \
        ''.join('np.savez(%r, **_compressed(mx, %r, %r))\n' % (str(path / ('gc%d.npz' % i)), *c)
                for i, c in enumerate(COMPRESSED))
    run_mxnet(code)
    ref = {kind: np.load(path / ('%s.npz' % kind)) for kind, _ in STORE_CASES}
    ref.update({c: np.load(path / ('gc%d.npz' % i)) for i, c in enumerate(COMPRESSED)})
    return ref


@pytest.mark.parametrize('kind, keys', STORE_CASES)
def test_updates_on_store_match_mxnet(store_reference, engine, kind, keys):
    ref = store_reference[kind]
    ours = _store_updates(mx, kind, OPT, keys, 3, CTXS)
    assert sorted(ours) == sorted(ref.files)
    for k in ref.files:
        np.testing.assert_allclose(ours[k], ref[k], rtol=1e-6, atol=1e-7, err_msg=k)


def test_optimizer_states_roundtrip(tmp_path, kind):
    def make():
        kv = mx.kv.create(kind)
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
        kv.init(0, nd.ones((3,)))
        return kv
    kv = make()
    kv.push(0, [nd.ones((3,), ctx=c) for c in CTXS])
    fname = str(tmp_path / 'states')
    kv.save_optimizer_states(fname, dump_optimizer=True)
    other = make()
    other.load_optimizer_states(fname)
    assert other._updater.optimizer.momentum == 0.9
    other.push(0, [nd.ones((3,), ctx=c) for c in CTXS])
    b = nd.zeros((3,))
    other.pull(0, out=b)
    # The loaded momentum (-0.2) carries over: 1 + (0.9 * -0.2 - 0.2); without it, 0.8.
    assert b.asnumpy().tolist() == pytest.approx([0.62] * 3, rel=1e-6)


def test_few_engine_operations_per_call(monkeypatch):
    """A pushpull of many keys costs a few operations per device, not per key."""
    kv = mx.kv.create('device')
    keys = list(range(30))
    grads = [[nd.ones((8,), ctx=c) for c in CTXS] for _ in keys]
    kv.init(keys, [g[0] for g in grads])
    kv.pushpull(keys, grads)
    nd.waitall()
    eng = mx.engine.current()
    names = []
    push = eng.push

    def counting(fn, reads, writes, ctx, name, *args, **kwargs):
        names.append(name)
        return push(fn, reads, writes, ctx, name, *args, **kwargs)
    monkeypatch.setattr(eng, 'push', counting)
    kv.pushpull(keys, grads)
    monkeypatch.undo()
    nd.waitall()
    # two merge devices: one sum each, then a copy from each merge device to each device
    assert names.count('_kvstore_reduce') == 2
    assert names.count('_kvstore_pull') == 4
    assert len(names) == 6
    assert grads[5][1].asnumpy().tolist() == [4.0] * 8     # the second sum of 2 + 2


@pytest.mark.parametrize('threshold, with_sgd', COMPRESSED)
def test_2bit_compression_matches_mxnet(store_reference, engine, threshold, with_sgd):
    ref = store_reference[(threshold, with_sgd)]
    ours = _compressed(mx, threshold, with_sgd)
    for k in ref.files:
        np.testing.assert_allclose(ours[k], ref[k], rtol=1e-6, atol=1e-7, err_msg=k)


def test_compression_arguments():
    with pytest.raises(MXNetError, match='not supported for this type of kvstore'):
        mx.kv.create('local').set_gradient_compression({'type': '2bit'})
    kv = mx.kv.create('device')
    with pytest.raises(MXNetError, match='Required parameter type'):
        kv.set_gradient_compression({'threshold': 1})
    with pytest.raises(MXNetError, match='Unknown type for gradient compression 1bit'):
        kv.set_gradient_compression({'type': '1bit'})
    with pytest.raises(MXNetError, match='threshold must be greater than 0'):
        kv.set_gradient_compression({'type': '2bit', 'threshold': -1})
    kv.set_gradient_compression({'type': '2bit'})
    assert kv._compression == 0.5


@pytest.mark.gpu
@pytest.mark.parametrize('kind', ['local', 'device'])
def test_values_on_cpu_and_gpu(kind):
    ctxs = [mx.gpu(0), mx.cpu(0)]
    kv = mx.kv.create(kind)
    grads = [nd.array([1.0, 2.0], ctx=c) * (i + 1) for i, c in enumerate(ctxs)]
    kv.init(1, grads[0])
    kv.pushpull(1, grads)
    for g in grads:
        assert g.asnumpy().tolist() == [3.0, 6.0]
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=1.0))
    kv.init(2, nd.zeros((2,), ctx=ctxs[0]))
    outs = [nd.ones((2,), ctx=c) for c in ctxs]
    kv.pushpull(2, grads, out=outs)
    for o in outs:
        assert o.asnumpy().tolist() == [-6.0, -12.0]
