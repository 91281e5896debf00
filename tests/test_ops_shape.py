"""Shape operators: reshape codes, transpose, expand/squeeze, concat/stack/split, slicing,
tile/repeat/flip, broadcasting, pad, depth/space, diag; forward, gradient and errors."""
import os

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx.ops.shape import infer_reshape
from opcheck import check_op

RNG = np.random.RandomState(5)
X = RNG.randn(2, 3, 4)


@pytest.mark.parametrize('target,reverse,expected', [
    ((4, -1), False, (4, 6)), ((0, -1), False, (2, 12)), ((-2,), False, (2, 3, 4)),
    ((-3, 4), False, (6, 4)), ((-4, 1, 2, -2), False, (1, 2, 3, 4)),
    ((2, -4, -1, 3, 4), False, (2, 1, 3, 4)), ((-1, 0), True, (6, 4)),
    ((0, 0, -1, 1), False, (2, 3, 4, 1)), ((0, -3), False, (2, 12)),
    ((-3, -2), False, (6, 4)), ((0, -1, -2), False, (2, 3, 4)), ((-1,), False, (24,)),
])
def test_infer_reshape_codes(target, reverse, expected):
    assert infer_reshape((2, 3, 4), target, reverse) == expected


def test_reshape(ctx):
    x = X[:, :2, :3]
    check_op(lambda a: nd.reshape(a, shape=(3, -1)), lambda a: a.reshape(3, -1), [x], ctx)
    check_op(lambda a: nd.Reshape(a, shape=(-3, 0)), lambda a: a.reshape(4, 3), [x], ctx)
    check_op(lambda a: a.reshape((-1,)), lambda a: a.reshape(-1), [x], ctx)
    check_op(lambda a: a.reshape(3, 4), lambda a: a.reshape(3, 4), [x], ctx)
    check_op(lambda a: nd.reshape_like(a, nd.zeros((4, 3), ctx=ctx)),
             lambda a: a.reshape(4, 3), [x], ctx)


def test_reshape_errors():
    x = nd.ones((2, 3, 4))
    with pytest.raises(mx.MXNetError, match=r'Reshape.*\(2, 3, 4\)'):
        nd.reshape(x, shape=(5, -1))
    with pytest.raises(mx.MXNetError, match='more than one -1'):
        nd.reshape(x, shape=(-1, -1))
    with pytest.raises(ValueError, match=r'size 24 into shape \(7, 3\)'):   # MXNet's type
        x.reshape((7, 3))


def test_transpose_family(ctx):
    x = X[:, :2, :3]
    check_op(nd.transpose, lambda a: a.transpose(), [x], ctx)
    check_op(lambda a: nd.transpose(a, axes=(1, 0, 2)), lambda a: a.transpose(1, 0, 2), [x], ctx)
    check_op(lambda a: nd.transpose(a, (2, 0, 1)), lambda a: a.transpose(2, 0, 1), [x], ctx)
    check_op(lambda a: a.T, lambda a: a.T, [x[0]], ctx)
    check_op(lambda a: nd.swapaxes(a, 0, 2), lambda a: a.swapaxes(0, 2), [x], ctx)
    check_op(lambda a: nd.SwapAxis(a, dim1=1, dim2=2), lambda a: a.swapaxes(1, 2), [x], ctx)
    with pytest.raises(mx.MXNetError, match='transpose'):
        nd.transpose(nd.array(x), axes=(0, 1))


def test_expand_squeeze_flatten(ctx):
    m = RNG.randn(2, 3)
    check_op(lambda a: nd.expand_dims(a, axis=0), lambda a: a[None], [m], ctx)
    check_op(lambda a: nd.expand_dims(a, -1), lambda a: a[..., None], [m], ctx)
    s = RNG.randn(1, 3, 1)
    check_op(nd.squeeze, lambda a: a.reshape(3), [s], ctx)
    check_op(lambda a: nd.squeeze(a, axis=0), lambda a: a.reshape(3, 1), [s], ctx)
    check_op(lambda a: nd.squeeze(a, axis=(0, 2)), lambda a: a.reshape(3), [s], ctx)
    assert nd.squeeze(nd.zeros((1, 1))).shape == (1,)       # never 0-d
    check_op(nd.flatten, lambda a: a.reshape(2, -1), [X[:, :2, :3]], ctx)
    check_op(nd.Flatten, lambda a: a.reshape(3, 1), [RNG.randn(3)], ctx)
    with pytest.raises(mx.MXNetError, match='expand_dims'):
        nd.expand_dims(nd.ones((2, 3)), axis=3)
    with pytest.raises(mx.MXNetError, match='squeeze axis 1 of size 3'):
        nd.squeeze(nd.zeros((1, 3, 1)), axis=1)


def test_concat_stack(ctx):
    a, b = RNG.randn(2, 3), RNG.randn(2, 3)
    check_op(lambda x, y: nd.concat(x, y), lambda x, y: np.concatenate([x, y], 1), [a, b], ctx)
    check_op(lambda x, y: nd.concat(x, y, dim=0), lambda x, y: np.concatenate([x, y], 0),
             [a, b], ctx)
    check_op(lambda x, y: nd.Concat(x, y, x, dim=-1),
             lambda x, y: np.concatenate([x, y, x], -1), [a, b], ctx)
    check_op(lambda x, y: nd.concatenate([x, y], axis=1),
             lambda x, y: np.concatenate([x, y], 1), [a, b], ctx)
    check_op(lambda x, y: nd.stack(x, y), lambda x, y: np.stack([x, y]), [a, b], ctx)
    check_op(lambda x, y: nd.stack(x, y, axis=-1), lambda x, y: np.stack([x, y], -1),
             [a, b], ctx)
    with pytest.raises(mx.MXNetError, match=r'Concat.*\(2, 3\).*\(3,\)'):
        nd.concat(nd.array(a), nd.ones((3,)), dim=0)
    with pytest.raises(mx.MXNetError, match='stack'):
        nd.stack(nd.array(a), nd.ones((3,)))
    with pytest.raises(mx.MXNetError, match='num_args'):
        nd.Concat(nd.array(a), nd.array(b), num_args=3)


def test_split(ctx):
    x = X[:, :, :2]
    check_op(lambda a: nd.split(a, 3), lambda a: np.split(a, 3, axis=1), [x], ctx)
    check_op(lambda a: nd.split(a, num_outputs=2, axis=2), lambda a: np.split(a, 2, axis=2),
             [x], ctx)
    check_op(lambda a: nd.SliceChannel(a, num_outputs=3, axis=1, squeeze_axis=True),
             lambda a: [p[:, 0] for p in np.split(a, 3, axis=1)], [x], ctx)
    check_op(lambda a: nd.split_v2(a, (1, 3), axis=1), lambda a: np.split(a, (1, 3), axis=1),
             [X[:, :, :1]], ctx)
    check_op(lambda a: a.split_v2(2, axis=0), lambda a: np.split(a, 2, axis=0), [x], ctx)
    with pytest.raises(mx.MXNetError, match='does not split into 5'):
        nd.split(nd.array(x), num_outputs=5, axis=1)


@pytest.mark.parametrize('begin,end,step', [
    ((0, 1), (2, 3), ()), ((None, 1), (None, None), (None, 2)), ((1, -1), (None, 0), (-1, -1)),
    ((-1,), (None,), (-1,)), ((0, 0, 0), (2, 3, 4), (1, 2, 3)), ((1, 2, 3), (None, 0, 0),
                                                                 (-1, -2, -2)),
])
def test_slice(begin, end, step, ctx):
    def ref(a):
        index = tuple(slice(b, e, step[k] if k < len(step) else None)
                      for k, (b, e) in enumerate(zip(begin, end)))
        return a[index]
    check_op(lambda a: nd.slice(a, begin=begin, end=end, step=step), ref, [X[:, :, :3]], ctx)


def test_slice_positional_and_errors(ctx):
    x = nd.array(X, ctx=ctx)
    assert nd.slice(x, (0, 1), (2, 3)).shape == (2, 2, 4)
    assert nd.crop(x, begin=(0, 1), end=(1, 2)).shape == (1, 1, 4)
    with pytest.raises(mx.MXNetError, match='slice'):
        nd.slice(x, begin=(0,), end=(1, 2))


def test_slice_axis_and_like(ctx):
    x = X[:, :, :3]
    check_op(lambda a: nd.slice_axis(a, axis=1, begin=0, end=2), lambda a: a[:, 0:2], [x], ctx)
    check_op(lambda a: nd.slice_axis(a, 2, 1, None), lambda a: a[:, :, 1:], [x], ctx)
    check_op(lambda a: nd.slice_axis(a, axis=-1, begin=-3, end=-1), lambda a: a[..., -3:-1],
             [x], ctx)
    with pytest.raises(mx.MXNetError, match='slice_axis'):
        nd.slice_axis(nd.array(x), axis=1, begin=2, end=1)
    like = nd.zeros((1, 2, 3), ctx=ctx)
    check_op(lambda a: nd.slice_like(a, like), lambda a: a[:1, :2, :3], [x], ctx)
    check_op(lambda a: nd.slice_like(a, like, axes=(1,)), lambda a: a[:, :2], [x], ctx)
    with pytest.raises(mx.MXNetError, match='slice_like'):
        nd.slice_like(nd.array(x), nd.zeros((1, 2)))


def test_tile_repeat_flip(ctx):
    m = RNG.randn(2, 3)
    for reps in [(2,), (2, 2), (2, 1, 2)]:
        check_op(lambda a, r=reps: nd.tile(a, reps=r), lambda a, r=reps: np.tile(a, r), [m], ctx)
    check_op(lambda a: nd.tile(a, (2, 2)), lambda a: np.tile(a, (2, 2)), [m[0]], ctx)
    check_op(lambda a: nd.repeat(a, repeats=2), lambda a: np.repeat(a, 2), [m], ctx)
    check_op(lambda a: nd.repeat(a, 2, axis=0), lambda a: np.repeat(a, 2, axis=0), [m], ctx)
    check_op(lambda a: nd.repeat(a, repeats=3, axis=-1), lambda a: np.repeat(a, 3, axis=-1),
             [m], ctx)
    check_op(lambda a: nd.flip(a, axis=1), lambda a: a[:, ::-1], [m], ctx)
    check_op(lambda a: nd.reverse(a, axis=(0, 1)), lambda a: a[::-1, ::-1], [m], ctx)


def test_broadcast_ops(ctx):
    v = RNG.randn(1, 3)
    check_op(lambda a: nd.broadcast_to(a, shape=(2, 3)), lambda a: np.broadcast_to(a, (2, 3)),
             [v], ctx)
    check_op(lambda a: nd.broadcast_to(a, shape=(4, 0)), lambda a: np.broadcast_to(a, (4, 3)),
             [v], ctx)
    check_op(lambda a: nd.broadcast_like(a, nd.zeros((2, 3), ctx=ctx)),
             lambda a: np.broadcast_to(a, (2, 3)), [v], ctx)
    check_op(lambda a: nd.broadcast_like(a, nd.zeros((4, 5), ctx=ctx), lhs_axes=(0,),
                                         rhs_axes=(1,)),
             lambda a: np.broadcast_to(a, (5, 3)), [v], ctx)
    c = RNG.randn(1, 3, 1)
    check_op(lambda a: nd.broadcast_axis(a, axis=(0, 2), size=(2, 4)),
             lambda a: np.broadcast_to(a, (2, 3, 4)), [c], ctx)
    check_op(lambda a: nd.broadcast_axes(a, axis=0, size=2),
             lambda a: np.broadcast_to(a, (2, 3, 1)), [c], ctx)
    with pytest.raises(mx.MXNetError, match='same number of dims'):
        nd.broadcast_to(nd.ones((3,)), shape=(2, 3))
    with pytest.raises(mx.MXNetError, match=r'broadcast_to.*\(2, 4\)'):
        nd.broadcast_to(nd.ones((2, 3)), shape=(2, 4))
    with pytest.raises(mx.MXNetError, match='only size-1 axes'):
        nd.broadcast_axis(nd.ones((2, 3)), axis=1, size=3)


def test_pad(ctx):
    x = RNG.randn(1, 2, 2, 3)
    width = (0, 0, 0, 0, 1, 2, 2, 1)
    np_width = [(0, 0), (0, 0), (1, 2), (2, 1)]
    check_op(lambda a: nd.pad(a, mode='constant', pad_width=width, constant_value=5),
             lambda a: np.pad(a, np_width, constant_values=5), [x], ctx)
    check_op(lambda a: nd.pad(a, mode='edge', pad_width=width),
             lambda a: np.pad(a, np_width, mode='edge'), [x], ctx)
    check_op(lambda a: nd.pad(a, mode='reflect', pad_width=(0, 0, 0, 0, 1, 1, 2, 2)),
             lambda a: np.pad(a, [(0, 0), (0, 0), (1, 1), (2, 2)], mode='reflect'), [x], ctx)
    five = RNG.randn(1, 1, 2, 2, 2)
    check_op(lambda a: nd.Pad(a, mode='constant', pad_width=(0, 0, 0, 0, 1, 1, 1, 1, 1, 0)),
             lambda a: np.pad(a, [(0, 0), (0, 0), (1, 1), (1, 1), (1, 0)]), [five], ctx)
    with pytest.raises(mx.MXNetError, match='4-d and 5-d'):
        nd.pad(nd.ones((2, 2)), mode='constant', pad_width=(1, 1, 1, 1))
    with pytest.raises(mx.MXNetError, match='first two axes'):
        nd.pad(nd.ones((1, 1, 2, 2)), mode='constant', pad_width=(1, 1, 0, 0, 1, 1, 1, 1))


def test_depth_to_space_and_back(ctx):
    x = nd.array(np.arange(16).reshape(1, 4, 2, 2), ctx=ctx)
    # MXNet 1.9.1's output for this input.
    assert nd.depth_to_space(x, 2).asnumpy().ravel().tolist() == \
        [0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15]
    y = nd.array(np.arange(16).reshape(1, 1, 4, 4), ctx=ctx)
    assert nd.space_to_depth(y, block_size=2).asnumpy().ravel().tolist() == \
        [0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15]
    z = RNG.randn(2, 8, 2, 3)

    def d2s(a, b=2):
        n, c, h, w = a.shape
        return a.reshape(n, b, b, c // 4, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(
            n, c // 4, h * b, w * b)
    check_op(lambda a: nd.depth_to_space(a, block_size=2), d2s, [z], ctx)
    check_op(lambda a: nd.space_to_depth(nd.depth_to_space(a, 2), 2), lambda a: a, [z], ctx)
    with pytest.raises(mx.MXNetError, match='block_size'):
        nd.depth_to_space(nd.ones((1, 3, 2, 2)), 2)


def test_diag(ctx):
    m = RNG.randn(3, 4)
    check_op(nd.diag, np.diag, [m], ctx)
    check_op(lambda a: nd.diag(a, k=1), lambda a: np.diag(a, 1), [m], ctx)
    check_op(lambda a: nd.diag(a, -1), lambda a: np.diag(a, -1), [m], ctx)
    check_op(nd.diag, np.diag, [RNG.randn(3)], ctx)
    check_op(lambda a: nd.diag(a, k=1), lambda a: np.diag(a, 1), [RNG.randn(3)], ctx)
    x = X[:, :2, :3]
    check_op(nd.diag, lambda a: np.diagonal(a), [x], ctx)
    check_op(lambda a: nd.diag(a, axis1=1, axis2=2), lambda a: np.diagonal(a, 0, 1, 2), [x], ctx)


def test_shape_and_size_array():
    x = nd.ones((2, 3, 4))
    assert nd.shape_array(x).asnumpy().tolist() == [2, 3, 4]
    assert nd.size_array(x).asnumpy().tolist() == [24]
    assert x.shape_array().dtype == np.int64


def test_slice_assign(ctx):
    x = nd.array(np.arange(12).reshape(3, 4), ctx=ctx)
    r = x.slice_assign(nd.ones((2, 2), ctx=ctx), (0, 1), (2, 3), (None, None))
    assert r is x
    assert x.asnumpy().tolist() == [[0, 1, 1, 3], [4, 1, 1, 7], [8, 9, 10, 11]]
    x.slice_assign_scalar(-1, (None, None), (None, None), (2, -2))
    assert x.asnumpy().tolist() == [[0, -1, 1, -1], [4, 1, 1, 7], [8, -1, 10, -1]]
    a = RNG.randn(3, 4)
    b = RNG.randn(2, 2)

    def ref(p, q):
        p = p.copy()
        p[0:2, 1:3] = q
        return p
    check_op(lambda p, q: nd.ndarray._op('_slice_assign')(p, q, begin=(0, 1), end=(2, 3)),
             ref, [a, b], ctx)


def test_shape_error_raised_at_push_names_the_line():
    with pytest.raises(mx.MXNetError) as info:
        nd.concat(nd.ones((2, 3)), nd.ones((3, 3)), dim=1)
    assert os.path.basename(__file__) in str(info.value)


def test_cast_storage():
    x = nd.array([[1.0, 0.0]])
    y = nd.cast_storage(x, stype='default')
    assert y.asnumpy().tolist() == [[1, 0]] and y._var is not x._var
    z = nd.cast_storage(x, stype='csr')
    assert z.stype == 'csr' and z.asnumpy().tolist() == [[1, 0]] and z._var is not x._var
    with pytest.raises(mx.MXNetError, match='csr array is 2-d'):
        nd.cast_storage(nd.ones((2,)), stype='csr')


def test_split_into_one_part_is_one_array_in_graphs_too():
    """num_outputs=1 gives one array (not a list of one), also in compiled graphs: an
    unrolled recurrent cell of length 1 feeds it to FullyConnected."""
    assert isinstance(nd.split(nd.ones((3, 1, 4)), num_outputs=1, axis=1), nd.NDArray)
    x = mx.sym.var('x')
    step = mx.sym.split(x, num_outputs=1, axis=1, squeeze_axis=1)
    out = mx.sym.FullyConnected(step, num_hidden=2, name='fc')
    res = out.eval(x=nd.ones((3, 1, 4)), fc_weight=nd.ones((2, 4)), fc_bias=nd.zeros((2,)))[0]
    np.testing.assert_array_equal(res.asnumpy(), np.full((3, 2), 4.0))
