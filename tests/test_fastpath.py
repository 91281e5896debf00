"""The fast path of tiny operations (``ndarray.fastpath``) and the engine's ``run_now``."""
import json
import threading

import numpy as np
import pytest
import torch

import neomx as mx
from neomx import nd
from neomx.engine import EngineError, NaiveEngine, ThreadedEngine, Var
from neomx.engine.engine import NOT_NOW
from neomx.engine.var import pending
from neomx.ndarray import fastpath
from neomx.ops import registry

CPU = mx.cpu(0)


def _plans_of(op_name):
    op = registry.get(op_name)
    return {k: p for k, p in fastpath._PLANS.items() if k[0] is op}


def test_a_call_of_a_new_kind_leaves_a_named_plan():
    x = nd.ones((3, 7))
    y = x * 1.25
    plans = _plans_of('_mul_scalar')
    plan = plans[(registry.get('_mul_scalar'), 1.25, (3, 7), 'float32')]
    assert isinstance(plan, fastpath.Plan)
    assert plan.shape == (3, 7) and plan.dtype == 'float32' and plan.work == 42
    # floating point: the torch function itself, with the number as a float32 0-dim tensor
    assert plan.kernel is torch.mul
    assert plan.arg.dtype == torch.float32 and plan.arg.dim() == 0 and float(plan.arg) == 1.25
    assert y.asnumpy().tolist() == [[1.25] * 7] * 3


def test_integer_arrays_plan_the_operators_own_kernel():
    x = nd.array([1, 2, 3], dtype='int32')
    assert (x * 2.7).asnumpy().tolist() == [2, 4, 6]      # the number truncated, as in MXNet
    plan = fastpath._PLANS[(registry.get('_mul_scalar'), 2.7, (3,), 'int32')]
    assert plan.kernel is registry.get('_mul_scalar').kernel and plan.arg == 2.7


def test_arrays_and_named_operators_share_the_one_entry_point():
    x, y = nd.ones((2, 5)), nd.ones((2, 5)) * 3
    assert (x + y).asnumpy().tolist() == [[4] * 5] * 2
    assert fastpath._PLANS[(registry.get('broadcast_add'), (2, 5), (2, 5), 'float32',
                            'float32')].kernel is torch.add
    r = nd.relu(x - y)
    assert r.asnumpy().tolist() == [[0] * 5] * 2
    assert fastpath._PLANS[(registry.get('relu'), (2, 5), 'float32')].work == 20


def test_signed_zero_is_planned_at_every_call():
    one = nd.ones((4,))
    assert np.signbit((one * -0.0).asnumpy()).all()
    assert not np.signbit((one * 0.0).asnumpy()).any()
    assert np.signbit((one * -0.0).asnumpy()).all()
    assert not any(k[1] == 0 for k in _plans_of('_mul_scalar'))


def test_fast_path_declines_other_devices_and_integer_arrays_autograd_follows():
    x = nd.ones((4, 3))
    y = nd.ones((4, 3), ctx=mx.cpu(1))
    assert fastpath.call(registry.get('broadcast_add'), x, y) is None
    i = nd.array([1, 2, 3], dtype='int32')
    i.attach_grad()
    with mx.autograd.record():
        # a marked integer variable is followed through its float64 shadow: general path
        assert fastpath.call(registry.get('_mul_scalar'), i, None, 2) is None
        z = i * 2
    z.backward()
    assert i.grad.asnumpy().tolist() == [2, 2, 2]


def test_recorded_operations_take_the_fast_path_and_differentiate():
    w = nd.array([[1.0, 2.0], [3.0, 4.0]])
    b = nd.array([0.5, -0.5])
    x = nd.array([[1.0, -1.0]])
    for p in (w, b):
        p.attach_grad()
    with mx.autograd.record():
        h = fastpath.call(registry.get('dot'), x, w, attrs=registry.get('dot').parse_attrs({}))
        assert h is not None
        y = nd.tanh(h + b) * 3 - x          # x is outside the graph
        assert fastpath.call(registry.get('broadcast_add'), h, b) is not None
        # reading nothing recorded: computed as outside autograd
        c = x + 1
        assert not c._var.leaves
    # the graph is the general path's: the operators, their attributes and inputs
    nodes = json.loads(mx.autograd.get_symbol(y).tojson())['nodes']
    ops = [n['op'] for n in nodes]
    assert ops.count('dot') == 1 and 'tanh' in ops and ops.count('null') == 3
    assert [n['attrs']['scalar'] for n in nodes if n['op'] == '_mul_scalar'] == ['3.0']
    y.backward()
    tw, tb, tx = (torch.tensor(v.asnumpy(), requires_grad=True) for v in (w, b, x))
    ((torch.tanh(tx.detach() @ tw + tb) * 3 - tx.detach()).sum()).backward()
    assert np.allclose(w.grad.asnumpy(), tw.grad.numpy())
    assert np.allclose(b.grad.asnumpy(), tb.grad.numpy())
    assert c.asnumpy().tolist() == [[2.0, 0.0]]


def test_a_recorded_operation_on_a_released_graph_cuts_its_inputs():
    w = nd.array([2.0])
    w.attach_grad()
    with mx.autograd.record():
        s = w * w
    s.backward()
    with mx.autograd.record():
        t = w * 3
        u = s + t       # s's graph was released by the backward pass: only t's path counts
    u.backward()
    assert w.grad.asnumpy().tolist() == [3.0]


def test_views_take_the_fast_path_and_read_their_part():
    x = nd.array(np.arange(12, dtype='float32').reshape(4, 3))
    r = fastpath.call(registry.get('_plus_scalar'), x[1], None, 1)
    assert r is not None and r.asnumpy().tolist() == [4, 5, 6]
    assert (x[2] * x[3]).asnumpy().tolist() == [54, 70, 88]     # two views of one storage
    assert (x[0] + x).asnumpy().tolist() == [[0, 2, 4], [3, 5, 7], [6, 8, 10], [9, 11, 13]]
    assert nd.relu(x[1:3] - 5).asnumpy().tolist() == [[0, 0, 0], [1, 2, 3]]
    img = nd.array(np.arange(24).reshape(2, 2, 3, 2), dtype='uint8')
    t = nd.image.to_tensor(img[1])
    assert t.shape == (2, 2, 3) and t.dtype == np.float32
    assert np.allclose(t.asnumpy(), img.asnumpy()[1].transpose(2, 0, 1) / 255.0)
    # the result is an array of its own: writing the storage afterwards leaves it alone
    y = x[1] * 2
    x[:] = 0
    assert y.asnumpy().tolist() == [6, 8, 10]


def test_view_of_a_pending_array_is_pushed_in_order():
    if not isinstance(mx.engine.current(), ThreadedEngine):
        pytest.skip('NaiveEngine has nothing pending')
    gate = threading.Event()
    x = nd.zeros((3, 2))
    x.wait_to_read()

    def slow():
        gate.wait()
        x._var.tensor = torch.arange(6, dtype=torch.float32).reshape(3, 2)
    mx.engine.current().push(slow, [], [x._var], x.context, 'slow')
    y = x[2] + 1                        # queued behind the write, reading its part then
    assert pending(y._var)
    gate.set()
    assert y.asnumpy().tolist() == [5, 6]


def test_tiny_op_on_a_pending_input_is_pushed_in_order():
    if not isinstance(mx.engine.current(), ThreadedEngine):
        pytest.skip('NaiveEngine has nothing pending')
    gate = threading.Event()
    x = nd.ones((3,))
    x.wait_to_read()

    def slow():
        gate.wait()
        x._var.tensor = torch.full((3,), 5.0)
    mx.engine.current().push(slow, [], [x._var], x.context, 'slow')
    y = x + 1                           # x has a pending write: queued behind it, not run now
    assert y.shape == (3,) and pending(y._var)
    gate.set()
    assert y.asnumpy().tolist() == [6, 6, 6]


def test_fast_path_error_is_raised_at_the_next_sync():
    bad = nd.array([1, 2], dtype='int32')
    bad.wait_to_read()
    out = bad / 0                       # ATen raises inside the fast path
    with pytest.raises(EngineError, match='_div_scalar'):
        out.wait_to_read()
    assert (nd.ones((2,)) + 1).asnumpy().tolist() == [2, 2]


@pytest.mark.parametrize('make', [ThreadedEngine, NaiveEngine])
def test_run_now_runs_the_closure_only_when_nothing_is_pending(make):
    eng = make()
    v = Var()
    out = Var()
    assert eng.run_now(max, 1, 2, v, None, out, CPU, 'tiny', 1) == 2
    assert eng.run_now(lambda a: a / 0, 1, None, v, None, out, CPU, 'tiny_div', 1) is None     # ran, and failed
    with pytest.raises(EngineError, match='tiny_div failed: ZeroDivisionError'):
        eng.wait_for_var(out)
    # A failed input: not run (pushing it propagates the error instead).
    assert eng.run_now(lambda a: a / 0, 1, None, Var(), None, v, CPU, 'fail_v', 1) is None
    assert eng.run_now(max, 1, 2, Var(), v, Var(), CPU, 'tiny', 1) is NOT_NOW
    with pytest.raises(EngineError):
        eng.wait_for_var(v)
    assert eng.run_now(max, 1, 2, v, None, Var(), CPU, 'tiny', 1) is NOT_NOW   # failed until written
    eng.push(lambda: None, [], [v], mx.cpu(0), 'rewrite', work=1)  # written again ...
    assert eng.run_now(max, 1, 2, v, None, Var(), CPU, 'tiny', 1) == 2     # ... readable again
    eng.trace = []                      # profiling: every operation goes through push
    assert eng.run_now(max, 1, 2, Var(), None, Var(), CPU, 'tiny', 1) is NOT_NOW
    eng.trace = None
    eng.shutdown()


@pytest.mark.parametrize('make', [ThreadedEngine, NaiveEngine])
def test_run_now_leaves_to_push_what_push_would_not_run_at_once(make):
    """An operation of ``inline_work`` or more, or one on a GPU, is pushed: run_now checks
    the work and the device itself, as push does."""
    eng = make()
    assert eng.run_now(max, 1, 2, Var(), None, Var(), CPU, 'tiny', eng.inline_work - 1) == 2
    assert eng.run_now(max, 1, 2, Var(), None, Var(), CPU, 'big', eng.inline_work) is NOT_NOW
    assert eng.run_now(max, 1, 2, Var(), None, Var(), mx.gpu(0), 'on_gpu', 1) is NOT_NOW
    eng.shutdown()


def test_run_now_refuses_inputs_with_pending_writes():
    eng = ThreadedEngine()
    gate = threading.Event()
    v, u = Var(), Var()
    eng.push(gate.wait, [v], [u], mx.cpu(0), 'reader')     # reads v, writes u: queued
    assert pending(u) and not pending(v) and pending(v, for_write=True)
    assert eng.run_now(max, 1, 2, u, None, Var(), CPU, 'read_u', 1) is NOT_NOW     # u is being written
    assert eng.run_now(max, 3, 4, Var(), v, Var(), CPU, 'read_v', 1) == 4           # reads may share
    gate.set()
    eng.waitall()
    assert not pending(u) and not pending(v, for_write=True)
    eng.shutdown()


def test_plans_of_operators_with_attributes_are_kept_per_attribute_values():
    x = nd.array([[1, 5, 2], [7, 0, 3]])
    for _ in range(2):      # the second call reads the kept plans
        assert x.argmax(axis=1).asnumpy().tolist() == [1, 0]
        assert x.argmax(axis=0).asnumpy().tolist() == [1, 0, 1]
        assert x.astype('int32').dtype == np.int32
        assert x.astype('float16').dtype == np.float16
        assert x.sum().asnumpy().tolist() == [18]
        assert x.sum(axis=1, keepdims=True).shape == (2, 1)
    argmax = registry.get('argmax')
    shapes = {k[1]: p.shape for k, p in _plans_of('argmax').items() if k[2] == (2, 3)}
    assert shapes[tuple(argmax.parse_attrs({'axis': 1}).values())] == (2,)
    assert shapes[tuple(argmax.parse_attrs({'axis': 0}).values())] == (3,)
    assert {p.dtype for k, p in _plans_of('Cast').items() if k[2] == (2, 3)} >= {'int32',
                                                                                 'float16'}


def test_unhashable_attribute_values_are_planned_at_every_call():
    # canonical attributes are hashable; a caller's own dict may hold a list
    op = registry.get('tile')
    attrs = dict(op.parse_attrs({'reps': (2, 1)}), reps=[2, 1])
    before = len(fastpath._PLANS)
    x = nd.array([[1, 2], [3, 4]])
    for _ in range(2):
        assert fastpath.call(op, x, attrs=attrs).asnumpy().tolist() == [[1, 2], [3, 4]] * 2
    assert len(fastpath._PLANS) == before


def _dot_in_a_helper(x, y):
    return nd.dot(x, y)        # the innermost line outside neomx of the dot below


def test_a_queued_recorded_operation_that_fails_names_the_users_line(monkeypatch):
    """The fast path tells the engine which of its callers are neomx's own, so that the
    user's line of a queued operation is found above them; an error still names it, through
    an arithmetic method, nd.<op> and a function of the user's."""
    import sys
    from neomx import autograd, engine

    def boom(*args, **kwargs):
        raise RuntimeError('boom')

    a = nd.ones((2, 3))
    a.attach_grad()
    w = engine.current().worker(mx.cpu())
    lines = []
    w.exec_lock.acquire()       # the worker is busy: the operations are queued
    try:
        with autograd.record():
            c = a * 2
            monkeypatch.setattr(registry.get('broadcast_add'), 'kernel', boom)
            monkeypatch.setattr(registry.get('dot'), 'kernel', boom)
            fastpath._PLANS.clear()     # a plan holds the kernel it runs
            lines.append(sys._getframe().f_lineno + 1)
            d = c + a
            lines.append(_dot_in_a_helper.__code__.co_firstlineno + 1)
            e = _dot_in_a_helper(c, nd.ones((3, 2)))
    finally:
        monkeypatch.undo()
        fastpath._PLANS.clear()     # plans made meanwhile hold the failing kernel
        w.exec_lock.release()
    for arr, line in zip((d, e), lines):
        with pytest.raises(EngineError, match='boom') as info:
            arr.asnumpy()
        assert '(pushed at %s, line %d)' % (__file__, line) in str(info.value)
    with pytest.raises(EngineError, match='boom'):
        nd.waitall()            # reported once more, by the next waitall, as every failure


def _spy_on_run_out(monkeypatch):
    """The kernels the fast path writes into an existing array with (run.run_out), as they
    are called."""
    from neomx.ndarray import run
    calls = []
    real = run.run_out
    monkeypatch.setattr(fastpath, 'run_out', lambda *a: calls.append(a[0]) or real(*a))
    return calls


def test_in_place_arithmetic_writes_into_its_array(monkeypatch):
    # x += y, x *= 2 on floats: torch's function writes the result into the array (out=),
    # a view included; an input sharing the array's storage otherwise than wholly takes a
    # result first (numpy's semantics for overlapping operands)
    calls = _spy_on_run_out(monkeypatch)
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = nd.array(a)
    storage = x._var
    x += nd.ones((4, 6))
    x *= 2
    x -= nd.ones((6,))
    v = x[1:3]
    v *= 0.5
    want = (a + 1) * 2 - 1
    want[1:3] *= 0.5
    np.testing.assert_array_equal(x.asnumpy(), want)
    assert x._var is storage and len(calls) == 4
    x[1:] += x[:3]
    want[1:] += want[:3].copy()
    np.testing.assert_array_equal(x.asnumpy(), want)
    assert len(calls) == 4
    # integers and division keep the operator's own kernel (MXNet's rules)
    i = nd.array([7, 8], dtype='int32')
    i /= 2
    x /= 4
    want /= 4
    assert i.asnumpy().tolist() == [3, 4] and len(calls) == 4
    np.testing.assert_allclose(x.asnumpy(), want, rtol=1e-6)


def test_numpy_numbers_take_the_fast_path_as_python_numbers(monkeypatch):
    # theta / norm after norm's asscalar is a NumPy float32: the book's gradient clipping
    # (g[:] *= theta / norm) writes into the gradient as g[:] *= 0.5 does, and x * np.int64(3)
    # plans as x * 3
    calls = _spy_on_run_out(monkeypatch)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    g = nd.array(a)
    storage = g._var
    s = nd.array([4.0]).sqrt().asscalar()
    assert type(s) is np.float32
    g[:] *= 1.0 / s
    g += np.float64(1)
    np.testing.assert_array_equal(g.asnumpy(), a * np.float32(0.5) + 1)
    assert g._var is storage and len(calls) == 2
    y = g * np.int64(3)
    assert (registry.get('_mul_scalar'), 3, (2, 3), 'float32') in fastpath._PLANS
    np.testing.assert_array_equal(y.asnumpy(), (a * np.float32(0.5) + 1) * 3)
    i = nd.array([7, 8], dtype='int32')
    assert (i * np.float32(2.7)).asnumpy().tolist() == [14, 16]   # truncated, as with 2.7
    assert (np.float32(2) * g).asnumpy().tolist() == (g * 2).asnumpy().tolist()


def test_a_dot_of_two_matrices_plans_torch_mm_and_differentiates():
    # on_floats_for: a kernel with attributes names the torch function for the attributes and
    # shapes it is called with (dot without transposes: torch.mm), which then takes the tensors
    # alone; transposed or N-d dots keep the operator's kernel
    dot = registry.get('dot')
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    x, wx = nd.array(a), nd.array(w)
    wx.attach_grad()
    with mx.autograd.record():
        y = nd.dot(x, wx)
        z = nd.dot(x.T, wx, transpose_a=True)
        loss = (y * z).sum()
    loss.backward()
    np.testing.assert_allclose(y.asnumpy(), a @ w, rtol=1e-6)
    np.testing.assert_allclose(z.asnumpy(), a @ w, rtol=1e-6)
    np.testing.assert_allclose(wx.grad.asnumpy(), 2 * a.T @ (a @ w), rtol=1e-5)
    plans = _plans_of('dot')
    kernels = {k[1:3]: p.kernel for k, p in plans.items()}
    assert kernels[((False, False, 'None'), (2, 3))] is torch.mm
    assert kernels[((True, False, 'None'), (3, 2))] is dot.kernel
    v = nd.dot(nd.array(a[0]), nd.array(w))          # a vector: the operator's kernel
    np.testing.assert_allclose(v.asnumpy(), a[0] @ w, rtol=1e-6)
    assert _plans_of('dot')[(dot, (False, False, 'None'), (3,), 'float32', (3, 4),
                             'float32')].kernel is dot.kernel
