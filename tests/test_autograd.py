"""autograd with MXNet 1.9.1's semantics: modes, grad_req, backward and grad (second order
too), mark_variables, in-place write errors, custom Functions under both engines, gradients
through views and across devices."""
import contextlib
import gc
import io
import json
import weakref

import numpy as np
import pytest

import neomx as mx
from neomx import autograd as ag
from neomx import nd


def test_modes():
    assert not ag.is_recording() and not ag.is_training()
    with ag.record():
        assert ag.is_recording() and ag.is_training()
        with ag.pause():
            assert not ag.is_recording() and not ag.is_training()
        with ag.pause(train_mode=True):
            assert not ag.is_recording() and ag.is_training()
        with ag.predict_mode():
            assert ag.is_recording() and not ag.is_training()
    with ag.record(train_mode=False):
        assert ag.is_recording() and not ag.is_training()
    with ag.train_mode():
        assert not ag.is_recording() and ag.is_training()
    assert not ag.is_recording() and not ag.is_training()
    assert ag.set_recording(True) is False
    assert ag.set_recording(False) is True
    assert ag.set_training(True) is False
    assert ag.set_training(False) is True


def test_modes_are_restored_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with ag.record():
            1 / 0
    assert not ag.is_recording() and not ag.is_training()


def test_train_mode_reaches_operators():
    x = nd.ones((1000,))
    with ag.record(train_mode=False):
        y = nd.Dropout(x, p=0.5)
    assert y.asnumpy().sum() == 1000
    with ag.record():
        z = nd.Dropout(x, p=0.5)
    assert (z.asnumpy() == 0).sum() > 300


def _grad_of(f, x, req='write', out_grad=None):
    x = nd.array(x)
    x.attach_grad(grad_req=req)
    with ag.record():
        y = f(x)
    y.backward(out_grad)
    return x.grad.asnumpy()


def test_backward_basics(engine):
    np.testing.assert_allclose(_grad_of(lambda x: (x * x).sum(), [1.0, 2.0]), [2, 4])
    # A non-scalar head gets a gradient of ones.
    np.testing.assert_allclose(_grad_of(lambda x: x * x, [1.0, 2.0]), [2, 4])
    np.testing.assert_allclose(_grad_of(lambda x: x * x, [1.0, 2.0], out_grad=nd.array([10, 100])),
                               [20, 400])
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        a = (x * x).sum()
        b = (x * 3).sum()
    ag.backward([a, b])
    np.testing.assert_allclose(x.grad.asnumpy(), [5, 7])


def test_grad_req_write_add_null(engine):
    x = nd.array([1.0, 2.0])
    x.attach_grad(grad_req='add')
    for _ in range(2):
        with ag.record():
            z = (x * x).sum()
        z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [4, 8])
    # 'write' overwrites the previous gradient, even with zeros.
    w = nd.array([1.0, 2.0])
    w.attach_grad()
    with ag.record():
        (w * w).sum().backward()
    with ag.record():
        z = (w * 0 + 1).sum()
    z.backward()
    assert w.grad.asnumpy().tolist() == [0, 0]
    # 'null': no gradient buffer (as MXNet), and nothing to differentiate alone.
    n = nd.array([1.0, 2.0])
    n.attach_grad(grad_req='null')
    assert n.grad is None
    y = nd.array([1.0, 1.0])
    y.attach_grad()
    with ag.record():
        z = (n * y).sum()
    z.backward()
    assert n.grad is None and y.grad.asnumpy().tolist() == [1, 2]
    with ag.record():
        z = (n * n).sum()
    with pytest.raises(mx.MXNetError, match='not in a computational graph'):
        z.backward()
    with pytest.raises(mx.MXNetError, match='grad_req'):
        nd.ones(2).attach_grad(grad_req='sometimes')


def test_unused_variables_keep_or_zero_their_gradient():
    # As MXNet: a variable the head does not depend on keeps its buffer untouched.
    x, y = nd.array([1.0, 2.0]), nd.array([3.0, 4.0])
    x.attach_grad()
    y.attach_grad()
    y.grad[:] = 5
    with ag.record():
        z = (x * 2).sum()
    z.backward()
    assert x.grad.asnumpy().tolist() == [2, 2] and y.grad.asnumpy().tolist() == [5, 5]
    # A head cut off from its variable gives zeros ('write') or leaves the sum ('add').
    w = nd.array([1.0, 2.0])
    w.attach_grad()
    w.grad[:] = 7
    with ag.record():
        h = nd.zeros_like(w)
    h.backward()
    assert w.grad.asnumpy().tolist() == [0, 0]
    w.attach_grad('add')
    w.grad[:] = 7
    with ag.record():
        h = nd.BlockGrad(w * 2)
    h.backward()
    assert w.grad.asnumpy().tolist() == [7, 7]


def test_backward_twice_needs_retain_graph(engine):
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        z = (x * x).sum()
    z.backward(retain_graph=True)
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2, 4])
    with pytest.raises(mx.MXNetError, match='retain_graph=True'):
        z.backward()
        x.grad.wait_to_read()
    a = nd.array([1.0, 2.0])
    a.attach_grad('add')
    with ag.record():
        z = (a * a).sum()
    z.backward(retain_graph=True)
    z.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), [4, 8])


def test_backward_without_a_graph_raises():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with pytest.raises(mx.MXNetError, match='not in a computational graph'):
        (x * x).backward()
    y = nd.array([1.0, 2.0])
    with ag.record():
        z = y * y
    with pytest.raises(mx.MXNetError, match='not in a computational graph'):
        z.backward()


def test_integer_arrays_take_gradients(engine):
    # MXNet 1.9.1 differentiates int32 arrays (its gradient is int32 [2, 2, 2] here); this once
    # ended in "not in a computational graph".
    x = nd.array([1, 2, 3], dtype='int32')
    x.attach_grad()
    with ag.record():
        y = x * 2
    y.backward()
    assert x.grad.dtype == np.int32
    assert x.grad.asnumpy().tolist() == [2, 2, 2]


@pytest.mark.parametrize('dtype', ['int32', 'uint8', 'int64'])
def test_casts_to_integers_pass_the_gradient_through(engine, dtype):
    # MXNet's Cast passes the head gradient straight back, whatever the dtypes: imperatively,
    # hybridized (an integer value in the middle of the graph) and in a bound Symbol.
    x = nd.array([1.5, -2.7, 3.2])
    x.attach_grad()
    with ag.record():
        y = nd.cast(x, dtype)
        z = (y * 3).sum()
    z.backward()
    assert y.dtype == np.dtype(dtype)
    assert y.asnumpy().tolist() == np.array([1.5, -2.7, 3.2], 'float32').astype(dtype).tolist()
    assert x.grad.asnumpy().tolist() == [3, 3, 3]

    class Round(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.cast(F.cast(x, dtype) * 2, 'float32') * x
    for hybrid in (False, True):
        net = Round()
        if hybrid:
            net.hybridize()
        x = nd.array([1.5, 2.7])
        x.attach_grad()
        with ag.record():
            y = net(x)
        y.backward()
        assert np.allclose(y.asnumpy(), [3.0, 10.8])
        # d/dx (2 cast(x) x) = 2 cast(x) + 2 trunc(x): the gradient reaching the integer
        # value (x) is an integer there, as MXNet's gradient arrays have their array's dtype
        assert x.grad.asnumpy().tolist() == [2 * 1 + 2 * 1, 2 * 2 + 2 * 2]

    s = mx.sym.Cast(mx.sym.Variable('x', dtype='float32'), dtype=dtype)
    exe = s.simple_bind(mx.cpu(), x=(3,))
    exe.arg_arrays[0][:] = nd.array([1.5, 2.5, 3.7])
    exe.forward(is_train=True)
    exe.backward(nd.array([4, 5, 6], dtype=dtype))
    assert exe.outputs[0].asnumpy().tolist() == [1, 2, 3]
    assert exe.grad_arrays[0].asnumpy().tolist() == [4, 5, 6]


def test_integer_mod_has_a_zero_gradient(engine):
    # MXNet: the modulo of integer arrays passes no gradient back, imperatively and in a
    # bound Symbol, also when the integers were cast from floats.
    a = nd.array([7, 8, 9], dtype='int32')
    b = nd.array([2, 3, 4], dtype='int32')
    f = nd.array([7.5, 8, 9])
    for x in (a, b, f):
        x.attach_grad()
    with ag.record():
        c = nd.broadcast_mod(a, b) + (nd.cast(f, 'int32') % 3)
    c.backward()
    assert c.asnumpy().tolist() == [2, 4, 1]
    for x in (a, b, f):
        assert x.grad.asnumpy().tolist() == [0, 0, 0]

    s = mx.sym.broadcast_mod(mx.sym.cast(mx.sym.Variable('a'), dtype='int32'),
                             mx.sym.cast(mx.sym.Variable('b'), dtype='int32'))
    ga, gb = nd.full((3,), 7.0), nd.full((3,), 7.0)
    exe = s.bind(mx.cpu(), args={'a': nd.array([7, 8, 9]), 'b': nd.array([2, 3, 4])},
                 args_grad=[ga, gb])
    exe.forward(is_train=True)
    exe.backward(nd.ones((3,), dtype='int32'))
    assert exe.outputs[0].asnumpy().tolist() == [1, 2, 1]
    assert ga.asnumpy().tolist() == [0, 0, 0] and gb.asnumpy().tolist() == [0, 0, 0]


def test_autograd_grad(engine):
    x, y = nd.array([1.0, 2.0]), nd.array([3.0, 4.0])
    x.attach_grad()
    y.attach_grad()
    with ag.record():
        z = (x * y).sum()
    gx, gy = ag.grad(z, [x, y], retain_graph=True)
    assert gx.asnumpy().tolist() == [3, 4] and gy.asnumpy().tolist() == [1, 2]
    # A list even for one variable, and the variables' own buffers are left alone.
    g = ag.grad(z, x)
    assert isinstance(g, list) and g[0].asnumpy().tolist() == [3, 4]
    assert x.grad.asnumpy().tolist() == [0, 0]
    with pytest.raises(mx.MXNetError, match='retain_graph=True'):
        ag.grad(z, [x])[0].wait_to_read()
    with ag.record():
        w = x * x
    g, = ag.grad(w, [x], head_grads=nd.array([1.0, 10.0]), retain_graph=True)
    assert g.asnumpy().tolist() == [2, 40]
    with pytest.raises(mx.MXNetError, match='attach_grad'):
        ag.grad(w, [nd.ones(2)])


def test_second_order(engine):
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        z = (x * x * x).sum()
        g = ag.grad(z, [x], create_graph=True, retain_graph=True)[0]
        s = g.sum()
    s.backward()
    np.testing.assert_allclose(g.asnumpy(), [3, 12])
    np.testing.assert_allclose(x.grad.asnumpy(), [6, 12])
    y = nd.array([0.5, 1.0])
    y.attach_grad()
    with ag.record():
        d = ag.grad(nd.sin(y), [y], create_graph=True)[0]
    d.backward()
    np.testing.assert_allclose(d.asnumpy(), np.cos([0.5, 1.0]), rtol=1e-6)
    np.testing.assert_allclose(y.grad.asnumpy(), -np.sin([0.5, 1.0]), rtol=1e-6)


def test_mark_variables():
    x, g = nd.array([1.0, 2.0]), nd.zeros(2)
    ag.mark_variables([x], [g])
    with ag.record():
        z = (x * x).sum()
    z.backward()
    assert g.asnumpy().tolist() == [2, 4] and x.grad is g
    a, b = nd.array([1.0]), nd.array([2.0])
    ga, gb = nd.zeros(1), nd.ones(1)
    ag.mark_variables([a, b], [ga, gb], grad_reqs=['write', 'add'])
    with ag.record():
        z = a * b
    z.backward()
    assert ga.asnumpy().tolist() == [2] and gb.asnumpy().tolist() == [2]
    with pytest.raises(mx.MXNetError, match='mark_variables'):
        ag.mark_variables([a, b], [ga])
    with pytest.raises(mx.MXNetError, match='shape'):
        ag.mark_variables([a], [nd.zeros(3)])


def test_in_place_writes_to_recorded_arrays_raise():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    msg = 'already in a computational graph'
    with ag.record():
        y = x * 2
        with pytest.raises(mx.MXNetError, match=msg):
            y[:] = 5
        with pytest.raises(mx.MXNetError, match=msg):
            y += 1
        with pytest.raises(mx.MXNetError, match=msg):
            x[:] = 5
        with pytest.raises(mx.MXNetError, match=msg):
            nd.exp(x, out=y)
    # After recording, a write to an array the graph needs is caught by backward.
    with ag.record():
        z = x * x
    x[:] = 3
    with pytest.raises(mx.MXNetError, match='written in place'):
        z.backward()
        x.grad.wait_to_read()


class _Sigmoid(ag.Function):
    def forward(self, x):
        y = 1 / (1 + nd.exp(-x))
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        y, = self.saved_tensors
        return dy * y * (1 - y)


class _Mul(ag.Function):
    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b

    def backward(self, dy):
        a, b = self.saved_tensors
        return dy * b, dy * a


class _Scaled(ag.Function):
    """A backward that differs from the forward's maths (it scales by 10)."""

    def forward(self, x):
        return x * 2

    def backward(self, dy):
        return dy * 10


def test_custom_function(engine):
    x = nd.array([0.0, 1.0])
    x.attach_grad()
    with ag.record():
        y = _Sigmoid()(x)
        z = (y * 2).sum()
    z.backward()
    s = 1 / (1 + np.exp(-np.array([0.0, 1.0])))
    np.testing.assert_allclose(y.asnumpy(), s, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * s * (1 - s), rtol=1e-6)
    a, b = nd.array([1.0, 2.0]), nd.array([3.0, 4.0])
    a.attach_grad()
    b.attach_grad()
    with ag.record():
        c = _Mul()(a, b)
    c.backward()
    assert a.grad.asnumpy().tolist() == [3, 4] and b.grad.asnumpy().tolist() == [1, 2]
    w = nd.array([1.0, 2.0])
    w.attach_grad()
    with ag.record():
        out = _Scaled()(w) * nd.array([1.0, 3.0])
    out.backward()
    assert w.grad.asnumpy().tolist() == [10, 30]
    # Outside record a Function just runs forward.
    assert _Scaled()(nd.array([1.0])).asnumpy().tolist() == [2]


def test_gradients_through_views_and_slices(engine):
    x = nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with ag.record():
        y = x[1] * 3                 # a view
        z = x[:, 0] * 5              # a copy
        w = y.sum() + z.sum()
    w.backward()
    assert x.grad.asnumpy().tolist() == [[5, 0], [8, 3]]
    with ag.record():
        r = x.reshape((4,)) * nd.array([1.0, 2.0, 3.0, 4.0])
    r.backward()
    assert x.grad.asnumpy().tolist() == [[1, 2], [3, 4]]
    with ag.record():
        t = nd.transpose(x) * nd.array([[1.0, 2.0], [3.0, 4.0]])
        u = nd.slice(x, begin=(None, 1), end=(None, None)) * 2
        s = t.sum() + u.sum()
    s.backward()
    assert x.grad.asnumpy().tolist() == [[1, 5], [2, 6]]
    with pytest.raises(mx.MXNetError, match='view'):
        x[0].attach_grad()


def test_gradients_across_devices(engine):
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x.copyto(mx.cpu(1)) * 3
        z = y.as_in_context(mx.cpu(0)) * x
    z.backward()
    assert x.grad.asnumpy().tolist() == [6, 12]
    # A loss on each device, back-propagated together.
    a = nd.array([1.0, 2.0], ctx=mx.cpu(1))
    a.attach_grad()
    with ag.record():
        la = (a * a).sum()
        lb = (x * 4).sum()
    ag.backward([la, lb])
    assert a.grad.asnumpy().tolist() == [2, 4] and x.grad.asnumpy().tolist() == [4, 4]


def test_detach_and_blockgrad(engine):
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * 2
        z = (y.detach() * x).sum()
    z.backward()
    assert x.grad.asnumpy().tolist() == [2, 4]
    with ag.record():
        z = (nd.BlockGrad(x * 2) * x).sum()
    z.backward()
    assert x.grad.asnumpy().tolist() == [2, 4]


def test_pause_stops_recording():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * 2
        with ag.pause():
            c = x * 100          # a constant for the graph
        z = (y + c).sum()
    z.backward()
    assert x.grad.asnumpy().tolist() == [2, 2]


def test_backward_releases_the_graph(engine):
    # As MXNet: after backward() the arrays computed in the graph are constants to later
    # recordings (an RNN's hidden state kept across batches), and a second backward of the
    # same heads fails.
    x = nd.array([3.0, 3.0])
    x.attach_grad()
    with ag.record():
        h = x * 2
        loss = (h * h).sum()
    loss.backward()
    assert x.grad.asnumpy().tolist() == [24, 24]
    with ag.record():
        loss = (h * x).sum()               # h is a constant now: d/dx = h
    loss.backward()
    assert x.grad.asnumpy().tolist() == [6, 6]
    with pytest.raises(mx.MXNetError, match='not in a computational graph'):
        loss.backward()
    with ag.record():
        z = h * 3                          # nothing marked reaches z any more
    with pytest.raises(mx.MXNetError, match='not in a computational graph'):
        z.backward()


def test_marked_arrays_are_freed_without_the_garbage_collector(engine):
    # A marked variable and its gradient go when the last array goes, as in MXNet: no
    # reference cycle keeps a large tensor until the collector runs. The leaf stays alive
    # while a recorded result still needs it: until the backward pass that releases it.
    gc.collect()
    gc.disable()
    try:
        x = nd.ones((64, 64))
        x.attach_grad()
        g = x.grad
        storage, grad = weakref.ref(x._var), weakref.ref(g._var)
        with ag.record():
            y = (x * x).sum()
        del x
        assert storage() is not None
        y.backward()
        assert g.asnumpy().sum() == 2 * 64 * 64
        nd.waitall()
        assert storage() is None        # y, released, needs it no more
        del g
        assert grad() is None
        del y
    finally:
        gc.enable()


def test_backward_through_a_released_part_raises(engine):
    x = nd.array([3.0, 3.0])
    x.attach_grad()
    with ag.record():
        y = x * x
        z = y * 3
        w = y * 4
        v = x * 5
    z.backward()                           # releases y and z
    assert x.grad.asnumpy().tolist() == [18, 18]
    with pytest.raises(mx.MXNetError, match='released'):
        w.backward()
    v.backward()                           # another graph on the same variable is intact
    assert x.grad.asnumpy().tolist() == [5, 5]
    with ag.record():
        y = x * x
        z = y * 3
        w = y * 4
    z.backward(retain_graph=True)          # nothing released
    w.backward()
    assert x.grad.asnumpy().tolist() == [24, 24]


def test_detach_is_a_new_array_outside_the_graph(engine):
    x = nd.ones((2, 2))
    dx = nd.zeros_like(x)
    y = nd.ones_like(x)
    dy = nd.zeros_like(x)
    ag.mark_variables([x, y], [dx, dy])
    with ag.record():
        x2 = (x + 2).detach()
        out = x2 + y
    out.backward()
    assert dx.asnumpy().tolist() == [[0, 0], [0, 0]]
    assert y._fresh_grad and not x._fresh_grad
    d = x.detach()
    assert d is not x and d.asnumpy().tolist() == x.asnumpy().tolist()


def test_inplace_writes_while_recording_raise_as_mxnet():
    y = nd.ones(2)
    y.attach_grad()
    with ag.record():
        with pytest.raises(mx.MXNetError, match=r'Inplace operations \(\+=, -=, x\[:\]=, etc\)'):
            x = nd.zeros(4)
            x[0:2] = y * 1
        with pytest.raises(mx.MXNetError, match=r'Inplace operations'):
            x = nd.zeros(2)
            x += y
        with pytest.raises(mx.MXNetError, match='already in a computational graph'):
            y[:] = 3
        x = nd.zeros(4)
        x[0:2] = nd.ones(2)                # nothing recorded on either side: allowed
    assert x.asnumpy().tolist() == [1, 1, 0, 0]


def test_get_symbol_of_a_recording():
    x = nd.ones((1,))
    x.attach_grad()
    z = nd.ones((1,))
    z.attach_grad()
    c = nd.ones((1,))
    with ag.record():
        y = x * x + 2 * z - 1
        u = x * c + nd.relu(x)
    s = ag.get_symbol(y)
    assert s.list_arguments() == ['var0', 'var1']
    ops = [n['op'] for n in json.loads(s.tojson())['nodes']]
    assert ops == ['null', 'broadcast_mul', 'null', '_mul_scalar', 'broadcast_add',
                   '_minus_scalar']
    assert ag.get_symbol(u).list_arguments() == ['var0', 'null1']
    out = ag.get_symbol(y).eval(var0=nd.array([2.0]), var1=nd.array([3.0]))[0]
    assert out.asnumpy().tolist() == [9]
    with pytest.raises(mx.MXNetError, match='not in a computational graph'):
        ag.get_symbol(c)


def test_get_symbol_of_a_hybridized_block():
    # MXNet: a hybridized block's call is one _CachedOp node, or its operators when it has
    # at most inline_limit of them
    net = mx.gluon.nn.HybridSequential()
    for _ in range(3):
        net.add(mx.gluon.nn.Dense(4))
    net.initialize()

    def recorded(inline_limit):
        net.hybridize(inline_limit=inline_limit)
        with ag.record():
            y = net(nd.zeros((1, 4)))
        s = ag.get_symbol(y)
        y.backward()
        return s, [n['op'] for n in json.loads(s.tojson())['nodes']]
    s, ops = recorded(3)
    assert ops == ['null'] * 3 + ['FullyConnected'] + ['null'] * 2 + ['FullyConnected'] + \
        ['null'] * 2 + ['FullyConnected']
    assert len(s.list_arguments()) == 7
    s, ops = recorded(2)
    assert ops == ['null'] * 7 + ['_CachedOp']
    (out,) = s.list_outputs()     # the node's name, then the block's last operator's output
    assert out.startswith('node_0_') and out.endswith('%sfwd_output' % net[2].prefix)


def test_second_order_grads_as_mxnet():
    # A variable marked through a reshaped view, a second derivative that is zero (abs), and
    # grad without retain_graph on a first-order result leaving the forward graph usable.
    x = nd.arange(6).reshape((2, 3))
    x.attach_grad()
    w = nd.ones((2, 3)) * 0.5
    w.attach_grad()
    with ag.record():
        y = nd.FullyConnected(x, w, num_hidden=2, no_bias=True)
        o_y = nd.array([[0, 1], [2, 3]])
        gx = ag.grad(y, x, head_grads=o_y, create_graph=True, retain_graph=True)[0]
        gw2 = ag.grad(gx, w, head_grads=nd.ones((2, 3)))[0]
        gw = ag.grad(y, w, head_grads=o_y, create_graph=True, retain_graph=True)[0]
    np.testing.assert_allclose(gx.asnumpy(), o_y.asnumpy() @ w.asnumpy())
    np.testing.assert_allclose(gw2.asnumpy(), o_y.asnumpy().T @ np.ones((2, 3)))
    np.testing.assert_allclose(gw.asnumpy(), o_y.asnumpy().T @ x.asnumpy())
    z = nd.array([1.0, -2.0])
    z.attach_grad()
    with ag.record():
        g = ag.grad(nd.abs(z), z, create_graph=True, retain_graph=True)[0]
        h = ag.grad(nd.arcsinh(z), z, create_graph=True, retain_graph=True)[0]
    g.backward()
    assert z.grad.asnumpy().tolist() == [0, 0]
    h.backward()        # the true second derivative, -x / (1 + x^2)^1.5 (MXNet's has + there)
    np.testing.assert_allclose(z.grad.asnumpy(), [-1 / 2 ** 1.5, 2 / 5 ** 1.5], rtol=1e-5)


def test_star_import_gives_ndarray():
    names = {}
    exec('from neomx.autograd import *', names)
    assert names['NDArray'] is nd.NDArray and 'record' in names


# Scenarios whose results are compared with MXNet 1.9.1's (run by the same code there).
SEMANTICS = r'''
import json
nd, ag = mx.nd, mx.autograd

def L(a):
    return a.asnumpy().tolist() if a is not None else None

def unused():
    x, y = nd.array([1., 2]), nd.array([3., 4])
    x.attach_grad(); y.attach_grad()
    with ag.record():
        z = (x * 2).sum()
    z.backward()
    return [L(x.grad), L(y.grad)]

def unused_prefilled():
    x, y = nd.array([1., 2]), nd.array([3., 4])
    x.attach_grad(); y.attach_grad(); y.grad[:] = 5
    with ag.record():
        z = (x * 2).sum()
    z.backward()
    return [L(x.grad), L(y.grad)]

def add_twice():
    x = nd.array([1., 2]); x.attach_grad(grad_req='add')
    for _ in range(2):
        with ag.record():
            z = (x * x).sum()
        z.backward()
    return L(x.grad)

def null_with_other():
    x, y = nd.array([1., 2]), nd.array([1., 1])
    x.attach_grad(grad_req='null'); y.attach_grad()
    with ag.record():
        z = (x * y).sum()
    z.backward()
    return [L(x.grad), L(y.grad)]

def retain_add():
    x = nd.array([1., 2]); x.attach_grad('add')
    with ag.record():
        z = (x * x).sum()
    z.backward(retain_graph=True); z.backward()
    return L(x.grad)

def head_grads():
    x = nd.array([1., 2]); x.attach_grad()
    with ag.record():
        z = x * x
    g = ag.grad(z, [x], head_grads=nd.array([1., 10]), retain_graph=True)
    z.backward(nd.array([10., 100]))
    return [L(g[0]), L(x.grad)]

def grad_list():
    x, y = nd.array([1., 2]), nd.array([3., 4])
    x.attach_grad(); y.attach_grad()
    with ag.record():
        z = (x * y).sum()
    g = ag.grad(z, x)
    return [type(g).__name__, L(g[0]), L(x.grad)]

def cut_off():
    x = nd.array([1., 2]); x.attach_grad(); x.grad[:] = 7
    with ag.record():
        y = nd.zeros_like(x)
    y.backward()
    a = L(x.grad)
    x.attach_grad('add'); x.grad[:] = 7
    with ag.record():
        y = nd.BlockGrad(x * 2)
    y.backward()
    return [a, L(x.grad)]

def views_and_devices():
    x = nd.array([[1., 2], [3, 4]]); x.attach_grad()
    with ag.record():
        w = (x[1] * 3).sum() + (x[:, 0] * 5).sum() + (x.T * x).sum()
    w.backward()
    a = L(x.grad)
    v = nd.array([1., 2]); v.attach_grad()
    with ag.record():
        z = v.copyto(mx.cpu(1)) * 3
        z = z.as_in_context(mx.cpu(0)) * v
    z.backward()
    return [a, L(v.grad)]

def function():
    class Scaled(ag.Function):
        def forward(self, x):
            return x * 2
        def backward(self, dy):
            return dy * 10
    x = nd.array([1., 2]); x.attach_grad()
    with ag.record():
        y = Scaled()(x) * nd.array([1., 3])
    y.backward()
    return L(x.grad)

def modes():
    r = []
    with ag.record():
        r += [ag.is_recording(), ag.is_training()]
        with ag.pause(train_mode=True):
            r += [ag.is_recording(), ag.is_training()]
        with ag.predict_mode():
            r += [ag.is_recording(), ag.is_training()]
    with ag.record(train_mode=False):
        r += [ag.is_recording(), ag.is_training()]
    return r

out = {f.__name__: f() for f in (unused, unused_prefilled, add_twice, null_with_other,
                                 retain_add, head_grads, grad_list, cut_off, views_and_devices,
                                 function, modes)}
print(json.dumps(out))
'''


def test_semantics_match_mxnet(mxnet_ref):
    expected = json.loads(mxnet_ref('import mxnet as mx\n' + SEMANTICS).strip().splitlines()[-1])
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(SEMANTICS, {'mx': mx})
    got = json.loads(buf.getvalue().strip().splitlines()[-1])
    for key, value in expected.items():
        assert got[key] == value, key


def test_other_results_of_a_released_operation_are_constants(engine):
    # A backward pass without retain_graph frees each operation of the graph with all its
    # results, as MXNet frees a node: the result that the loss did not use is a constant in
    # the next recording (an RNN's state carried into the next batch).
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        a, b = nd.split(x * 1, num_outputs=2, axis=0)
        y = a * 3
    y.backward()
    assert x.grad.asnumpy().tolist() == [3, 0]
    with ag.record():
        z = b * 5 + x
    z.backward()
    assert x.grad.asnumpy().tolist() == [1, 1]
    # With retain_graph nothing is freed: the other result still leads back to x.
    with ag.record():
        a, b = nd.split(x * 1, num_outputs=2, axis=0)
        y = a * 3
    y.backward(retain_graph=True)
    with ag.record():
        z = b * 5 + x
    z.backward()
    assert x.grad.asnumpy().tolist() == [1, 11]     # b broadcast over both elements
    # A graph recorded before the release still needs the freed operation: it raises.
    with ag.record():
        a, b = nd.split(x * 1, num_outputs=2, axis=0)
        y = a * 3
        w = b * 4
    y.backward()
    with pytest.raises(mx.MXNetError, match='released'):
        w.backward()


_RNN_ACROSS_BATCHES = '''
import numpy as onp
from mxnet import np, npx, gluon, autograd
from mxnet.gluon import rnn
npx.set_np()
rs = onp.random.RandomState(0)
for hybridize in (False, True):
    for layer in (rnn.RNN(6, activation='tanh'), rnn.LSTM(6)):
        layer.initialize()
        state = layer.begin_state(batch_size=2)
        layer(np.zeros((5, 2, 3)), state)
        for p in layer.collect_params().values():
            p.set_data(np.array(rs.uniform(-0.3, 0.3, p.shape), dtype='float32'))
        if hybridize:
            layer.hybridize()
        trainer = gluon.Trainer(layer.collect_params(), 'sgd', {'learning_rate': 0.5})
        losses = []
        for i in range(3):
            X = np.array(rs.uniform(-1, 1, (5, 2, 3)), dtype='float32')
            with autograd.record():
                out, state = layer(X, state)
                loss = ((out - 0.2) ** 2).mean()
            loss.backward()
            for s in state:
                s.detach()          # as the book writes it: the result is discarded
            trainer.step(1)
            losses.append(float(loss))
        print(' '.join('%.6f' % v for v in losses))
'''


def test_rnn_state_carried_across_batches_matches_mxnet(mxnet_ref):
    import neomx.numpy  # noqa: F401
    ref = mxnet_ref(_RNN_ACROSS_BATCHES).split('\n')
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(_RNN_ACROSS_BATCHES.replace('from mxnet import', 'from neomx import')
                 .replace('from mxnet.gluon', 'from neomx.gluon'), {})
    finally:
        mx.util.reset_np()
    for got, want in zip(out.getvalue().split('\n'), ref):
        assert np.allclose([float(v) for v in got.split()], [float(v) for v in want.split()],
                           rtol=1e-4, atol=1e-6), (got, want)
    assert len(out.getvalue().split('\n')) == len(ref) == 5


def test_a_value_updated_from_each_batch_does_not_keep_the_batches_graphs(engine):
    # The book's batch normalisation from scratch updates its moving mean from each batch's
    # recorded mean, inside autograd.record(): the loss's backward releases the batch's graph,
    # and the moving mean, computed from it, must not keep it (nor its arrays) alive.
    w = nd.ones((1, 8))
    w.attach_grad()
    moving = nd.zeros((1, 8))
    seen = []
    for _ in range(4):
        x = nd.random.uniform(shape=(64, 8))
        with ag.record():
            h = x * w
            mean = h.mean(axis=0, keepdims=True)
            moving = 0.9 * moving + 0.1 * mean
            loss = ((h - mean) ** 2).sum()
        loss.backward()
        seen.append(weakref.ref(h))
        del x, h, mean, loss
    nd.waitall()
    gc.collect()
    assert [r() is None for r in seen] == [True] * 4
    assert moving.asnumpy().shape == (1, 8)
    # Its graph reaches a released one: it cannot be differentiated, as in MXNet.
    with ag.record():
        y = moving * 2
    with pytest.raises(mx.MXNetError, match='not in a computational graph'):
        y.backward()


def test_a_graph_untouched_by_a_release_stays_differentiable(engine):
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        kept = x * 3            # its own graph
        other = x * 5
    other.backward()            # releases other's graph only
    with ag.record():
        z = kept * 2 + x
    z.backward()
    assert x.grad.asnumpy().tolist() == [7, 7]
