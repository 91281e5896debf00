"""hybridize(): tracing, per-signature/per-mode compilation, one engine operation per call,
gradients, auxiliary states, deferred initialisation, generated code and its tracebacks."""
import linecache
import traceback

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, initializer, nd
from neomx.base import MXNetError
from neomx.gluon import nn
from neomx.gluon import _hybrid
from neomx.symbol import NotImplementedForSymbol


def mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation='relu', in_units=5), nn.Dense(8, activation='tanh'),
            nn.Dense(2))
    net.initialize(initializer.Xavier())
    return net


def hybridized_twin(net, twin):
    """Gives ``twin`` (the same layers, initialised) ``net``'s parameter values and hybridizes
    it: the two then compute the same thing, imperatively and hybridized."""
    for p0, p1 in zip(net.collect_params().values(), twin.collect_params().values()):
        p1.set_data(p0.data())
    twin.hybridize()


def test_outputs_equal_before_and_after_hybridize():
    net = mlp()
    x = nd.random.normal(shape=(3, 5))
    before = net(x).asnumpy()
    net.hybridize()
    after = net(x).asnumpy()
    again = net(x).asnumpy()
    np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(again, before, rtol=1e-6, atol=1e-7)
    net.hybridize(False)
    np.testing.assert_allclose(net(x).asnumpy(), before, rtol=1e-6, atol=1e-7)


class Printing(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = nn.Dense(4)
        self.calls = []

    def hybrid_forward(self, F, x):
        self.calls.append(type(x).__name__)
        return F.relu(self.hidden(x))


def test_trace_once_per_mode_and_back_to_imperative():
    net = Printing()
    net.initialize()
    x = nd.ones((2, 3))
    net(x)
    assert net.calls == ['NDArray']
    net.hybridize()
    net(x)
    net(x)
    net(nd.ones((5, 3)))            # a new shape compiles again but does not re-trace
    assert net.calls == ['NDArray', 'Symbol']
    with autograd.record():        # train mode: its own graph
        net(x)
        net(x)
    assert net.calls == ['NDArray', 'Symbol', 'Symbol']
    net.hybridize(False)
    net(x)
    assert net.calls[-1] == 'NDArray'


def test_one_engine_operation_per_call(monkeypatch):
    net = mlp()
    x = nd.ones((2, 5))
    net.hybridize()
    net(x).wait_to_read()
    pushed = []
    eng = mx.engine.current()
    orig = eng.push

    def counting(fn, reads, writes, ctx, name, *a, **k):
        pushed.append(name)
        return orig(fn, reads, writes, ctx, name, *a, **k)
    monkeypatch.setattr(eng, 'push', counting)
    net(x).wait_to_read()
    assert len(pushed) == 1
    net.hybridize(False)
    pushed.clear()
    net(x).wait_to_read()
    assert len(pushed) > 1


class Branchy(nn.HybridBlock):
    """Different maths in training and prediction (MXNet froze the first one, #16932)."""

    def hybrid_forward(self, F, x):
        if autograd.is_training():
            return x * 2
        return x + 100


def test_train_and_predict_modes_take_their_own_branch():
    net = Branchy()
    net.hybridize()
    x = nd.ones((2,))
    assert net(x).asnumpy().tolist() == [101.0, 101.0]
    with autograd.train_mode():
        assert net(x).asnumpy().tolist() == [2.0, 2.0]
    assert net(x).asnumpy().tolist() == [101.0, 101.0]
    with autograd.record():
        y = net(x)
    assert y.asnumpy().tolist() == [2.0, 2.0]


def test_gradients_equal_imperative():
    x = nd.random.normal(shape=(4, 5))
    nets = [mlp(), mlp()]
    for net in nets:
        net(x)                      # finishes the deferred initialisation
    hybridized_twin(*nets)
    grads = []
    for net in nets:
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        grads.append({k.split('_', 1)[1]: p.grad().asnumpy()
                      for k, p in net.collect_params().items()})
    assert sorted(grads[0]) == sorted(grads[1])
    for k in grads[0]:
        np.testing.assert_allclose(grads[1][k], grads[0][k], rtol=1e-5, atol=1e-6)


def test_input_gradient_through_hybridized_block():
    net = mlp()
    net.hybridize()
    x = nd.random.normal(shape=(2, 5))
    x.attach_grad()
    with autograd.record():
        y = net(x).sum()
    y.backward()
    g_h = x.grad.asnumpy()
    net.hybridize(False)
    with autograd.record():
        y = net(x).sum()
    y.backward()
    np.testing.assert_allclose(g_h, x.grad.asnumpy(), rtol=1e-5, atol=1e-6)


def test_batchnorm_running_stats_and_dropout_modes():
    def make():
        net = nn.HybridSequential()
        net.add(nn.Dense(6, in_units=3), nn.BatchNorm(in_channels=6), nn.Dropout(0.5))
        net.initialize()
        return net
    a, b = make(), make()
    hybridized_twin(a, b)
    x = nd.random.normal(shape=(8, 3))
    for net in (a, b):
        with autograd.record():
            net(x)
    ra = [p.data().asnumpy() for n, p in a.collect_params().items() if 'running' in n]
    rb = [p.data().asnumpy() for n, p in b.collect_params().items() if 'running' in n]
    assert len(ra) == 2
    for u, v in zip(ra, rb):
        np.testing.assert_allclose(v, u, rtol=1e-5, atol=1e-6)
    assert np.abs(ra[0]).sum() > 0         # the moving mean moved
    np.testing.assert_allclose(b(x).asnumpy(), a(x).asnumpy(), rtol=1e-5, atol=1e-6)
    with autograd.record():
        dropped = b(nd.ones((8, 3)))
    assert (dropped.asnumpy() == 0).any()     # training-mode dropout is active


def test_deferred_initialisation_through_hybridized_call():
    net = nn.HybridSequential()
    net.add(nn.Dense(7, activation='relu'), nn.Dense(3))
    net.initialize()
    net.hybridize()
    y = net(nd.ones((2, 11)))
    assert y.shape == (2, 3)
    assert net[0].weight.shape == (7, 11)
    assert net[1].weight.shape == (3, 7)


def test_non_hybrid_parent_with_hybrid_children():
    class Parent(nn.Block):
        def __init__(self):
            super().__init__()
            self.body = mlp()

        def forward(self, x):
            return self.body(x) * 2
    net = Parent()
    x = nd.ones((2, 5))
    ref = net(x).asnumpy()
    net.hybridize()
    assert net.body._active
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-5)   # a float32 ulp apart


class TwoInOut(nn.HybridBlock):
    def hybrid_forward(self, F, x, y):
        return [x + y, (x * y, F.relu(x - y))]


def test_nested_inputs_and_outputs():
    net = TwoInOut()
    net.hybridize()
    a, b = nd.array([1.0, -2.0]), nd.array([3.0, 4.0])
    s, (p, r) = net(a, b)
    assert s.asnumpy().tolist() == [4.0, 2.0]
    assert p.asnumpy().tolist() == [3.0, -8.0]
    assert r.asnumpy().tolist() == [0.0, 0.0]


class Peeks(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        x.asnumpy()
        return x


class Branches(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        if x:
            return x
        return -x


def test_value_calls_fail_after_hybridize_with_mxnet_messages():
    x = nd.ones((1,))
    net = Peeks()
    net(x)                          # imperative: fine
    net.hybridize()
    with pytest.raises(NotImplementedForSymbol, match='Function asnumpy is not implemented for '
                                                      'Symbol and only available in NDArray.'):
        net(x)
    net = Branches()
    net(x)
    net.hybridize()
    with pytest.raises(NotImplementedForSymbol) as e:
        net(x)
    assert str(e.value) == ('Function __bool__ (namely operator "bool") is not implemented for '
                            'Symbol and only available in NDArray.')


def test_block_on_symbols_returns_a_symbol():
    net = mlp()
    out = net(mx.sym.var('data'))
    assert isinstance(out, mx.sym.Symbol)
    args = out.list_arguments()
    assert args[0] == 'data' and len(args) == 7
    assert out.infer_shape(data=(3, 5))[1] == [(3, 2)]


def test_generated_code_is_readable_and_in_tracebacks():
    net = mlp()
    net.hybridize()
    net(nd.ones((2, 5)))
    src = net.hybridized_code()
    # FullyConnected lowers to a direct torch call for 2-d data (the registry's ``lower``).
    assert '_linear(data, ' in src and 'return (' in src
    assert '# (2, 16) float32' in src
    code = _hybrid.cache_of(net).last.program.code
    assert linecache.getline(code.filename, 2).strip().startswith('def ')
    import torch
    try:        # wrong shapes straight into the generated function: the error is inside it
        code.fn(torch.ones(1, 1), *[torch.ones(3, 4)] * (len(code.input_names) - 1))
    except Exception as e:
        frames = traceback.extract_tb(e.__traceback__)
        mine = [f for f in frames if f.filename == code.filename]
        assert mine and '_linear(' in mine[0].line
    else:
        raise AssertionError('expected a shape error')


def test_hybridized_code_before_a_call_is_an_error():
    net = mlp()
    net.hybridize()
    with pytest.raises(MXNetError, match='no generated code yet'):
        _hybrid.hybridized_code(net)


def test_bad_hybrid_forward_results():
    class ReturnsNumber(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            return 3
    net = ReturnsNumber()
    net.hybridize()
    with pytest.raises(ValueError, match='must be \\(nested\\) list of Symbol or NDArray'):
        net(nd.ones((1,)))

    class MakesVariable(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            return x + F.var('stranger')
    net = MakesVariable()
    net.hybridize()
    with pytest.raises(MXNetError, match='unknown input to HybridBlock: stranger'):
        net(nd.ones((1,)))


def test_static_flags_accepted_and_unknown_backend_rejected():
    net = mlp()
    net.hybridize(static_alloc=True, static_shape=True)
    x = nd.ones((2, 5))
    np.testing.assert_allclose(net(x).asnumpy(), net(x).asnumpy())
    net.hybridize(backend='no-such-backend')
    with pytest.raises(MXNetError, match="unknown backend 'no-such-backend'"):
        net(x)


def test_constants_folded_and_common_subexpressions_merged():
    class Consts(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            c = F.ones((2,)) * 3 + 1          # no variable: folded to a constant
            return F.exp(x) + F.exp(x) + c    # exp(x) computed once
    net = Consts()
    net.hybridize()
    x = nd.array([0.0, 1.0])
    out = net(x).asnumpy()
    np.testing.assert_allclose(out, 2 * np.exp([0.0, 1.0]) + 4, rtol=1e-6)
    src = _hybrid.hybridized_code(net)
    assert src.count('exp(') == 1
    assert '_ones' not in src and '_const' in src


class ReluAfter(nn.HybridBlock):
    """ReLUs after a BatchNorm and a sum, whose outputs nothing else reads, and ReLUs of
    values that something else reads, that the block returns, or that a backward pass
    reads."""
    def __init__(self, layout='NCHW', **kwargs):
        super().__init__(**kwargs)
        self.conv = nn.Conv2D(4, 3, padding=1, layout=layout,
                              in_channels=2 if layout == 'NCHW' else 0)
        self.bn = nn.BatchNorm(axis=1 if layout == 'NCHW' else 3)
        self.dense = nn.Dense(3)

    def hybrid_forward(self, F, x):
        c = self.conv(x)
        a = F.relu(self.bn(c))              # BatchNorm's output: only the ReLU reads it
        b = F.Activation(c, act_type='relu')    # c is read twice: not in place
        s = F.relu(a + b)                   # the sum: only the ReLU reads it
        d = self.dense(s)
        # not in place: d is an output; sigmoid's backward pass reads its output
        return F.relu(d) + F.relu(F.sigmoid(d)), d


@pytest.mark.parametrize('layout', ['NCHW', 'NHWC'])
def test_relu_runs_in_place_only_on_values_nothing_else_reads(layout):
    x = nd.random.normal(shape=(2, 2, 5, 5) if layout == 'NCHW' else (2, 5, 5, 2))
    nets = [ReluAfter(layout), ReluAfter(layout)]
    for net in nets:
        net.initialize(initializer.Xavier())
        net(x)
    hybridized_twin(*nets)
    results = []
    for net in nets:
        with autograd.record():
            out, d = net(x)
            loss = (out ** 2).sum() + d.sum()
        loss.backward()
        results.append([out.asnumpy(), d.asnumpy()] +
                       [p.grad().asnumpy() for p in net.collect_params().values()
                        if p.grad_req != 'null'])
    src = _hybrid.hybridized_code(nets[1])
    assert src.count('relu_(') == 2, src     # after the BatchNorm and after the sum
    for want, got in zip(*results):     # (gradients through BatchNorm: float32 sums in
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)   # another order)
    with autograd.predict_mode():
        np.testing.assert_allclose(nets[1](x)[0].asnumpy(), nets[0](x)[0].asnumpy(),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.gpu
def test_cuda_graph_replay_matches_eager():
    ctx = mx.gpu(0)
    net = mlp()
    net.collect_params().reset_ctx(ctx)
    x = nd.random.normal(shape=(4, 5), ctx=ctx)
    ref = net(x).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    for _ in range(3):
        np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    assert _hybrid.cache_of(net).last.program.replay is not None
    x2 = nd.random.normal(shape=(4, 5), ctx=ctx)
    net.hybridize(False)
    ref2 = net(x2).asnumpy()
    net.hybridize(static_alloc=True, static_shape=True)
    net(x)
    np.testing.assert_allclose(net(x2).asnumpy(), ref2, rtol=1e-5, atol=1e-6)


@pytest.mark.gpu
def test_hybridized_gpu_training_gradients():
    ctx = mx.gpu(0)
    net = mlp()
    net.collect_params().reset_ctx(ctx)
    net.hybridize()
    x = nd.random.normal(shape=(4, 5), ctx=ctx)
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    g = net[0].weight.grad(ctx).asnumpy()
    net.hybridize(False)
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    np.testing.assert_allclose(g, net[0].weight.grad(ctx).asnumpy(), rtol=1e-4, atol=1e-5)


def test_one_graph_per_device_and_cast():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, in_units=3), nn.BatchNorm(in_channels=4))
    net.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    net.hybridize()
    x0, x1 = nd.ones((2, 3), ctx=mx.cpu(0)), nd.ones((2, 3), ctx=mx.cpu(1))
    y0, y1 = net(x0), net(x1)
    assert y0.context == mx.cpu(0) and y1.context == mx.cpu(1)
    np.testing.assert_allclose(y0.asnumpy(), y1.asnumpy())
    with autograd.record():
        l0, l1 = net(x0).sum(), net(x1).sum()
    l0.backward()
    l1.backward()
    np.testing.assert_allclose(net[0].weight.grad(mx.cpu(0)).asnumpy(),
                               net[0].weight.grad(mx.cpu(1)).asnumpy())
    net.cast('float64')
    assert net(nd.ones((2, 3), dtype='float64')).dtype == np.float64


@pytest.mark.skipif(not __import__('os').environ.get('NEOMX_TEST_INDUCTOR'),
                    reason='torch.compile takes minutes on a small CPU; set NEOMX_TEST_INDUCTOR=1')
def test_inductor_backend_matches_and_differentiates():
    net = mlp()
    x = nd.ones((2, 5))
    ref = net(x).asnumpy()
    net.hybridize(backend='inductor')
    np.testing.assert_allclose(net(x).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    assert np.abs(net[0].weight.grad().asnumpy()).sum() > 0


def test_both_engines_agree(engine):
    net = mlp()
    x = nd.random.normal(shape=(3, 5))
    ref = net(x).asnumpy()
    net.hybridize()
    with autograd.record():
        y = net(x)
        loss = (y * y).sum()
    loss.backward()
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-6, atol=1e-7)
    assert np.abs(net[0].weight.grad().asnumpy()).sum() > 0


def test_deferred_shape_that_cannot_be_inferred_names_the_parameter():
    class Scale(nn.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.alpha = self.params.get('alpha', shape=(0,), allow_deferred_init=True)

        def hybrid_forward(self, F, x, alpha):
            return F.broadcast_mul(x, alpha)
    net = Scale()
    net.initialize()
    net.hybridize()
    with pytest.raises(MXNetError, match=r'parameter scale\d+_alpha'):
        net(nd.ones((2, 3)))


# -- register_op_hook -------------------------------------------------------------------------

_HOOK_NET = '''
net = nn.HybridSequential(prefix='net_')
with net.name_scope():
    net.add(nn.Dense(3, activation='relu'), nn.Dense(2))
net.initialize()
x = mx.nd.array([[1., -2., 3., 4.]])
'''

_HOOK_CNN = '''
net = nn.HybridSequential(prefix='cnn_')
with net.name_scope():
    net.add(nn.Conv2D(2, 3, activation='relu'), nn.BatchNorm(), nn.MaxPool2D(), nn.Flatten(),
            nn.Dropout(0.5), nn.Dense(2))
net.initialize()
x = mx.nd.ones((1, 1, 6, 6))
'''

# operators of every naming kind: positional inputs (relu, sum, make_loss, ones_like, scalar),
# named ones (slice_like, elemwise_mul, broadcast_add, linalg_det's A), any number (Concat);
# named outputs (make_loss's loss, Concat's output) and positional ones
_HOOK_OPS = '''
class Ops(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        y = F.ones_like(x)
        a = F.slice_like(F.relu(x), y)
        b = F.elemwise_mul(a, F.make_loss(y))
        s = F.broadcast_add(F.sum(b, axis=1), F.sum(y, axis=0))
        c = F.concat(F.linalg_det(b), s, dim=0)
        return c * 2
net = Ops(prefix='ops_')
x = mx.nd.array([[1., 2.], [3., 5.]])
'''


def _hooked_calls(mx_, nn_, monitor_all, hybridize=True, net=_HOOK_NET):
    calls = []
    scope = {'mx': mx_, 'nn': nn_}
    exec(net, scope)
    net, x = scope['net'], scope['x']
    if hybridize:
        net.hybridize()
    net.register_op_hook(lambda name, op, arr: calls.append((name, op, arr)), monitor_all)
    out = net(x)
    mx_.nd.waitall()
    return net, x, out, calls


@pytest.mark.parametrize('net', [_HOOK_NET, _HOOK_CNN, _HOOK_OPS], ids=['mlp', 'cnn', 'ops'])
@pytest.mark.parametrize('monitor_all', [False, True])
def test_op_hook_names_as_mxnet(monitor_all, net, mxnet_ref):
    code = ('import mxnet as mx\nfrom mxnet.gluon import nn\n' + net +
            'calls = []\nnet.hybridize()\n'
            'net.register_op_hook(lambda n, o, a: calls.append((n, o)), %r)\n'
            'net(x)\nmx.nd.waitall()\nprint(repr(calls))\n' % monitor_all)
    expected = eval(mxnet_ref(code).strip())
    _, _, _, calls = _hooked_calls(mx, nn, monitor_all, net=net)
    assert [(n, o) for n, o, _ in calls] == expected


def test_op_hook_names_come_from_the_registry():
    # the names MXNet 1.9.1 reports for _HOOK_OPS (test_op_hook_names_as_mxnet checks them
    # against MXNet where it is installed)
    names = [n.decode() for n, _, _ in _hooked_calls(mx, nn, True, net=_HOOK_OPS)[3]]
    assert names == [
        'ops_relu0_input0', 'ops_relu0_0', 'ops_ones_like0_input0', 'ops_ones_like0_0',
        'ops_slice_like0_data', 'ops_slice_like0_shape_like', 'ops_slice_like0_0',
        'ops_make_loss0_input0', 'ops_make_loss0_loss', 'ops_elemwise_mul0_lhs',
        'ops_elemwise_mul0_rhs', 'ops_elemwise_mul0_0', 'ops_linalg_det0_A', 'ops_linalg_det0_0',
        'ops_sum0_input0', 'ops_sum0_0', 'ops_sum1_input0', 'ops_sum1_0',
        'ops_broadcast_add0_lhs', 'ops_broadcast_add0_rhs', 'ops_broadcast_add0_0',
        'ops_concat0_arg0', 'ops_concat0_arg1', 'ops_concat0_output',
        'ops__mulscalar0_input0', 'ops__mulscalar0_0']
    outputs = [n.decode() for n, _, _ in _hooked_calls(mx, nn, False, net=_HOOK_OPS)[3]]
    assert outputs == [n for n in names if not n.endswith(('input0', '_data', '_shape_like',
                                                             '_lhs', '_rhs', '_A', '_arg0',
                                                             '_arg1'))]


def test_op_hook_arrays_are_the_operators_inputs_and_outputs():
    net, x, out, calls = _hooked_calls(mx, nn, True)
    by_name = {n.decode(): a for n, _, a in calls}
    dense0 = net[0]
    hidden = nd.relu(nd.FullyConnected(x, dense0.weight.data(), dense0.bias.data(),
                                       num_hidden=3))
    np.testing.assert_array_equal(by_name['net_dense0_fwd_data'].asnumpy(), x.asnumpy())
    np.testing.assert_array_equal(by_name['net_dense0_fwd_weight'].asnumpy(),
                                  dense0.weight.data().asnumpy())
    np.testing.assert_allclose(by_name['net_dense0_relu_fwd_output'].asnumpy(),
                               hidden.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(by_name['net_dense1_fwd_output'].asnumpy(), out.asnumpy(),
                               rtol=1e-6)


def test_op_hook_runs_at_every_call_and_only_hybridized():
    _, _, _, calls = _hooked_calls(mx, nn, False, hybridize=False)
    assert calls == []                  # MXNet calls the hook from its CachedOp only
    net, x, _, calls = _hooked_calls(mx, nn, False)
    n = len(calls)
    with autograd.record():
        y = net(x)
    y.backward()
    net(x)
    mx.nd.waitall()
    assert len(calls) == 3 * n == 9


def test_op_hook_registered_after_the_first_call():
    scope = {'mx': mx, 'nn': nn}
    exec(_HOOK_NET, scope)
    net, x = scope['net'], scope['x']
    net.hybridize()
    net(x)
    calls = []
    net.register_op_hook(lambda name, op, arr: calls.append(name))
    net(x)
    mx.nd.waitall()
    assert calls == [b'net_dense0_fwd_output', b'net_dense0_relu_fwd_output',
                     b'net_dense1_fwd_output']


def test_long_parameter_names_in_generated_signature():
    # parameter names longer than a line (deep networks' prefixes, with digits) stay whole in
    # the generated function's signature
    prefix = ''.join('stage%d_attentionmodule%d_' % (i, i) for i in range(5))
    net = nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        net.add(nn.Dense(3, in_units=4), nn.Dense(2))
    net.initialize()
    assert max(len(n) for n in net.collect_params()) > 96      # longer than a line
    x = nd.random.normal(shape=(2, 4))
    eager = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), eager, rtol=1e-5, atol=1e-6)
    code = net.hybridized_code()
    compile(code, '<generated>', 'exec')
    assert all(name.replace('.', '_') in code or name in code
               for name in ['%sdense0_weight' % prefix])
