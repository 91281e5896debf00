"""Operator rules MXNet 1.9 follows and its own operator tests check: shape inference
(partial, backwards, legacy forms), executor conventions, and operator edge cases."""
import numpy as np
import pytest

import neomx as mx
from neomx import nd
from opcheck import check_op


# -- executors ---------------------------------------------------------------------------

def test_executor_outputs_exist_at_bind_and_backward_may_come_first():
    x = mx.sym.var('x', dtype='int32')
    ex = mx.sym.Cast(x, dtype='float16').simple_bind(mx.cpu(), x=(2, 3))
    assert ex.outputs[0].shape == (2, 3) and ex.outputs[0].dtype == np.float16
    y = mx.sym.var('y')
    ex = mx.sym.repeat(y, repeats=2, axis=0).bind(
        mx.cpu(), {'y': nd.array([[1.0, 2.0]])}, args_grad={'y': nd.zeros((1, 2))})
    ex.backward([nd.array([[1.0, 2.0], [3.0, 4.0]]), nd.ones((9,))])   # extra ones ignored
    assert ex.grad_dict['y'].asnumpy().tolist() == [[4.0, 6.0]]


def test_executor_backward_in_predict_mode_differentiates_the_identity_dropout():
    x = mx.sym.var('x')
    ex = mx.sym.Dropout(x, p=0.5).simple_bind(mx.cpu(), x=(4, 4))
    ex.arg_dict['x'][:] = 1
    ex.forward(is_train=False)
    ex.backward([nd.ones((4, 4))], is_train=False)
    assert (ex.grad_arrays[0].asnumpy() == 1).all()


# -- shape inference ---------------------------------------------------------------------

def test_partial_shapes_through_slices():
    data = mx.sym.var('data', shape=(0, 20))
    out = mx.sym.slice(data, begin=(None, 3), end=(None, 10))
    assert out.infer_shape_partial()[1] == [(0, 7)]
    data = mx.sym.var('data', shape=(10, 0))
    assert mx.sym.slice_axis(data, axis=1, begin=0, end=5).infer_shape_partial()[1] == [(10, 0)]
    assert mx.sym.slice_axis(data, axis=0, begin=0, end=5).infer_shape_partial()[1] == [(5, 0)]
    with mx.np_shape():
        data = mx.sym.var('data', shape=(-1, 20))
        out = mx.sym.slice(data, begin=(None, None), end=(None, 10), step=(None, 2))
        assert out.infer_shape_partial()[1] == [(-1, 5)]


def test_creation_shapes_found_backwards_through_transpose():
    a = mx.sym.ones(shape=(2, -1))
    b = mx.sym.transpose(mx.sym.ones(shape=(3, -1)))
    out = (a + b).bind(mx.cpu(), args={}).forward()[0]
    assert out.shape == (2, 3) and (out.asnumpy() == 2).all()


def test_reshape_legacy_target_shape_and_reshape_like_ranges():
    data = mx.sym.var('data')
    s = mx.sym.load_json(mx.sym.Reshape(data, target_shape=(2, 0)).tojson())
    assert s.infer_shape(data=(2, 3, 5, 5))[1] == [(2, 75)]
    s = mx.sym.Reshape(data, target_shape=(0, 5), keep_highest=True)
    assert s.infer_shape(data=(2, 3, 5, 5))[1] == [(2, 15, 5)]
    lhs, rhs = mx.sym.var('lhs'), mx.sym.var('rhs')
    s = mx.sym.reshape_like(lhs, rhs, lhs_begin=0, lhs_end=2, rhs_begin=1, rhs_end=2)
    s = mx.sym.load_json(s.tojson())
    assert s.infer_shape(lhs=(3, 5), rhs=(1, 15, 4))[1] == [(15,)]
    r = nd.reshape_like(nd.ones((30, 7)), nd.ones((15, 2, 4)), lhs_begin=0, lhs_end=1,
                        rhs_begin=0, rhs_end=2)
    assert r.shape == (15, 2, 7)


def test_split_symbols():
    data = mx.sym.var('data')
    parts = mx.sym.split_v2(data, indices_or_sections=(1, 3), axis=1)
    outs = parts.eval(data=nd.array(np.arange(8).reshape(2, 4)))
    assert [o.shape for o in outs] == [(2, 1), (2, 2), (2, 1)]
    outs = mx.sym.split_v2(data, 2, axis=1).eval(data=nd.ones((2, 4)))
    assert [o.shape for o in outs] == [(2, 2), (2, 2)]
    one = mx.sym.SliceChannel(data, num_outputs=1, axis=0)
    out = mx.sym.Concat(one, one, dim=0).eval(data=nd.ones((2, 3)))[0]
    assert out.shape == (4, 3)


def test_symbolic_histogram():
    data, bins = mx.sym.var('data'), mx.sym.var('bins')
    x = nd.array([0.1, 0.5, 2.0, 3.9, 5.0])
    counts = mx.sym.histogram(data, bins=4, range=(0, 4)).eval(data=x)[0]
    assert counts.asnumpy().tolist() == [2, 0, 1, 1]
    counts = mx.sym.histogram(data, bins=bins).eval(data=x, bins=nd.array([0.0, 1.0, 5.0]))[0]
    assert counts.asnumpy().tolist() == [2, 3]


# -- operators ------------------------------------------------------------------------------

def test_zero_size_and_scalar_arrays_only_under_np_shape():
    with pytest.raises(mx.MXNetError):
        nd.zeros((5, 0))
    with mx.np_shape():
        a = nd.zeros((5, 0))
        assert nd.Concat(a, nd.ones((5, 2)), dim=1).shape == (5, 2)
        with pytest.raises(mx.MXNetError, match='size 0'):
            a.max()
        assert a.sum(axis=1).asnumpy().tolist() == [0, 0, 0, 0, 0]


def test_prelu_gamma_of_several_axes_aligns_with_leading_axes():
    x = np.random.uniform(-1, 1, (3, 4, 2, 2))
    gamma = np.random.uniform(0.1, 0.5, (3, 4))
    check_op(lambda a, g: nd.LeakyReLU(a, g, act_type='prelu'),
             lambda a, g: np.where(a > 0, a, a * g[:, :, None, None]), [x, gamma])


def test_dropout_of_everything_is_nan_as_in_mxnet():
    with mx.autograd.train_mode():
        out = nd.Dropout(nd.ones((3,)), p=1.0)
    assert np.isnan(out.asnumpy()).all()


def test_tile_reps_must_be_positive():
    for reps in [(1, 2, -3), (1, 0, 3)]:
        with pytest.raises(mx.MXNetError, match='reps'):
            nd.tile(nd.ones((4, 4)), reps)
    with mx.np_shape():
        assert nd.tile(nd.ones((4, 4)), (1, 0)).shape == (4, 0)


def test_layer_norm_parameter_gradients_summed_precisely():
    rng = np.random.RandomState(0)
    x = nd.array(rng.normal(size=(4096, 512)))
    og = rng.normal(size=(4096, 512)).astype(np.float32)
    gamma, beta = nd.ones((512,)), nd.zeros((512,))
    for p in (x, gamma, beta):
        p.attach_grad()
    with mx.autograd.record():
        y = nd.LayerNorm(x, gamma, beta, axis=-1)
    y.backward(nd.array(og))
    # torch's fused kernel is off by up to 2.5e-4 here; a plain sum by about 3e-5
    np.testing.assert_allclose(beta.grad.asnumpy(), og.astype(np.float64).sum(0),
                               rtol=1e-5, atol=6e-5)


def test_attach_grad_again_before_backward_ran_keeps_that_backward_gradient():
    x = nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = x * 3
    y.backward()
    first = x.grad
    x.attach_grad()             # a new buffer, possibly before the backward above has run
    with mx.autograd.record():
        y = x * 5
    y.backward()
    assert first.asnumpy().tolist() == [3, 3] and x.grad.asnumpy().tolist() == [5, 5]


def test_creation_takes_numpy_shapes_and_numpy_dtype_spellings():
    assert nd.empty(np.array([2, 3])).shape == (2, 3)
    assert nd.zeros((2,), dtype='half').dtype == np.float16
    assert nd.array([1, 2], dtype='double').dtype == np.float64


def test_take_raise_mode_refuses_negative_indices_as_mxnet():
    x = nd.array([[0, 1, 2], [3, 4, 5]])
    assert nd.take(x, nd.array([2]), axis=1, mode='raise').asnumpy().tolist() == [[2], [5]]
    for bad in (-1, 3):
        with pytest.raises(mx.MXNetError, match='out of range'):
            nd.take(x, nd.array([bad]), axis=1, mode='raise').wait_to_read()


def test_simple_bind_passes_over_keyword_arguments_that_are_not_shapes():
    s = mx.sym.take(mx.sym.var('a'), mx.sym.var('indices'), axis=1)
    ex = s.simple_bind(mx.cpu(), a=(2, 3), indices=(4,), axis=1, mode='clip')
    assert ex.outputs[0].shape == (2, 4)


def test_gemm_rows_along_another_axis():
    rs = np.random.RandomState(0)
    a, b, c = rs.rand(3, 2, 4), rs.rand(4, 2, 5), rs.rand(3, 2, 5)   # rows on axis 0
    expect = 2 * np.einsum('ibk,kbj->ibj', a, b) + 3 * c
    got = nd.linalg.gemm(nd.array(a), nd.array(b), nd.array(c), alpha=2, beta=3, axis=0)
    np.testing.assert_allclose(got.asnumpy(), expect, rtol=1e-5)
    got2 = nd.linalg.gemm2(nd.array(a), nd.array(b), axis=-3)
    np.testing.assert_allclose(got2.asnumpy(), np.einsum('ibk,kbj->ibj', a, b), rtol=1e-5)


def test_shape_checks_of_diag_and_depth_to_space():
    with pytest.raises(mx.MXNetError, match='k=5'):
        nd.diag(nd.ones((3, 4)), k=5)
    assert nd.diag(nd.ones((3, 4)), k=4).shape == (0,)
    with pytest.raises(mx.MXNetError, match='empty axis'):
        nd.depth_to_space(nd.array(np.zeros((1, 4, 0, 3))), 2)
    with pytest.raises(mx.MXNetError, match='empty axis'):
        nd.space_to_depth(nd.array(np.zeros((1, 0, 4, 4))), 2)


def test_unravel_index_with_unknown_leading_size_and_integer_arange():
    flat = nd.array([0, 7, 23])
    assert nd.unravel_index(flat, shape=(-1, 4)).asnumpy().tolist() == [[0, 1, 5], [0, 3, 3]]
    # as MXNet: an integer arange converts start and step first, and uint8 wraps
    assert nd.arange(1.3, 6.6, 1.3, dtype='int32').asnumpy().tolist() == [1, 2, 3, 4, 5]
    assert nd.arange(254, 258, dtype='uint8').asnumpy().tolist() == [254, 255, 0, 1]
