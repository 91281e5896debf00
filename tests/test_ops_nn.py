"""Neural-network operators: forward against torch/NumPy references and gradients against
numeric ones (check_op), then a differential run of the same calls under real MXNet 1.9.1."""
import contextlib
import io
import os
import textwrap

import numpy as np
import pytest
import torch
import torch.nn.functional as tF

import neomx as mx
from neomx import autograd, nd
from neomx.ops import registry
from opcheck import check_op

rs = np.random.RandomState(7)


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


# -- forward and gradient (check_op) ---------------------------------------------------------

@pytest.mark.parametrize('dims', [1, 2, 3])
def test_convolution_nd(ctx, dims):
    spatial = (5, 4, 3)[:dims]
    kernel = (3, 2, 2)[:dims]
    x = rs.randn(2, 4, *spatial)
    w = rs.randn(6, 2, *kernel)
    b = rs.randn(6)
    stride, pad, dilate = (2, 1, 1)[:dims], (1, 0, 1)[:dims], (1, 2, 1)[:dims]

    def ref(x, w, b):
        return torch.convolution(_t(x), _t(w), _t(b), stride, pad, dilate, False,
                                 (0,) * dims, 2).numpy()
    check_op(lambda x, w, b: nd.Convolution(x, w, b, kernel=kernel, stride=stride, pad=pad,
                                            dilate=dilate, num_filter=6, num_group=2),
             ref, [x, w, b], ctx)


def test_convolution_no_bias_and_nhwc(ctx):
    x = rs.randn(1, 5, 5, 3)       # NHWC
    w = rs.randn(4, 3, 3, 3)       # (num_filter, kh, kw, C)

    def ref(x, w):
        y = tF.conv2d(_t(x).permute(0, 3, 1, 2), _t(w).permute(0, 3, 1, 2))
        return y.permute(0, 2, 3, 1).numpy()
    check_op(lambda x, w: nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True,
                                         layout='NHWC'), ref, [x, w], ctx, grad=False)


def test_convolution_checks_its_inputs_once_for_inference_and_kernel():
    # shape inference and the kernel (called from compiled graphs) share one check
    conv = registry.get('Convolution')
    x, w = torch.ones(1, 5, 5, 3), torch.ones(4, 3, 3, 2)      # NHWC data, a wrong weight
    with pytest.raises(mx.MXNetError) as inferred:
        nd.Convolution(nd.ones((1, 5, 5, 3)), nd.ones((4, 3, 3, 2)), kernel=(3, 3),
                       num_filter=4, no_bias=True, layout='NHWC')
    with pytest.raises(mx.MXNetError) as ran:
        conv.kernel(x, w, None, kernel=(3, 3), num_filter=4, no_bias=True, layout='NHWC')
    assert 'weight has shape (4, 3, 3, 2), expected (4, 3, 3, 3)' in str(ran.value)
    assert 'weight has shape (4, 3, 3, 2), expected (4, 3, 3, 3)' in str(inferred.value)
    with pytest.raises(mx.MXNetError, match=r'Convolution: bias has shape \(3,\), expected'):
        conv.kernel(torch.ones(1, 3, 5, 5), torch.ones(4, 3, 3, 3), torch.ones(3),
                    kernel=(3, 3), num_filter=4)


def test_deconvolution_adj_is_checked_by_shape_inference():
    # as MXNet 1.9.1: infer_shape refuses adj >= stride, before anything runs
    y = mx.sym.Deconvolution(mx.sym.var('x'), kernel=(3, 3), stride=(2, 2), adj=(2, 2),
                             num_filter=2)
    with pytest.raises(mx.MXNetError, match=r'adj=\(2, 2\) must be smaller than stride'):
        y.infer_shape(x=(1, 3, 5, 5))
    ok = mx.sym.Deconvolution(mx.sym.var('x'), kernel=(3, 3), stride=(2, 2), adj=(1, 1),
                              num_filter=2)
    assert ok.infer_shape(x=(1, 3, 5, 5))[1] == [(1, 2, 12, 12)]


def test_convolution_errors_name_the_shapes():
    x = nd.ones((1, 3, 5, 5))
    with pytest.raises(mx.MXNetError, match=r'Convolution.*weight has shape \(4, 2, 3, 3\), '
                                            r'expected \(4, 3, 3, 3\)'):
        nd.Convolution(x, nd.ones((4, 2, 3, 3)), kernel=(3, 3), num_filter=4, no_bias=True)
    with pytest.raises(mx.MXNetError, match='data must be 4-d'):
        nd.Convolution(nd.ones((3, 5, 5)), nd.ones((4, 3, 3, 3)), kernel=(3, 3), num_filter=4,
                       no_bias=True)
    with pytest.raises(mx.MXNetError, match='required attribute'):
        nd.Convolution(x, nd.ones((4, 3, 3, 3)), kernel=(3, 3))


def test_deconvolution(ctx):
    x = rs.randn(2, 4, 3, 3)
    w = rs.randn(4, 3, 3, 3)
    b = rs.randn(6)

    def ref(x, w, b):
        return torch.convolution(_t(x), _t(w), _t(b), (2, 2), (1, 1), (1, 1), True, (1, 0),
                                 2).numpy()
    check_op(lambda x, w, b: nd.Deconvolution(x, w, b, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                              adj=(1, 0), num_filter=6, num_group=2,
                                              no_bias=False),
             ref, [x, w, b], ctx)


@pytest.mark.parametrize('target', [(7, 7), (6, 6), (5, 5)])
def test_deconvolution_target_shape(target):
    y = nd.Deconvolution(nd.ones((1, 2, 3, 3)), nd.ones((2, 1, 3, 3)), kernel=(3, 3),
                         stride=(2, 2), num_filter=1, target_shape=target)
    assert y.shape == (1, 1) + target
    assert np.isfinite(y.asnumpy()).all()


def test_deconvolution_default_has_no_bias():
    op = registry.get('Deconvolution')
    assert op.input_names(op.parse_attrs({'kernel': (2, 2), 'num_filter': 3})) == ('data', 'weight')


def _np_pool(x, k, s, p, kind, full=False, include_pad=True):
    """Reference 2-d pooling written out with loops (MXNet's window and divisor rules)."""
    n, c, h, w = x.shape
    oh = (int(np.ceil((h + 2 * p[0] - k[0]) / s[0])) if full else (h + 2 * p[0] - k[0]) // s[0]) + 1
    ow = (int(np.ceil((w + 2 * p[1] - k[1]) / s[1])) if full else (w + 2 * p[1] - k[1]) // s[1]) + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - p[0], j * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
            size = (h1 - h0) * (w1 - w0)
            hs, ws = max(h0, 0), max(w0, 0)
            he, we = min(h1, h), min(w1, w)
            win = x[:, :, hs:he, ws:we]
            if win.size == 0:      # a 'full' window lying in the padding
                out[:, :, i, j] = np.finfo(x.dtype).min if kind == 'max' else 0
            elif kind == 'max':
                out[:, :, i, j] = win.max(axis=(2, 3))
            elif kind == 'sum':
                out[:, :, i, j] = win.sum(axis=(2, 3))
            else:
                out[:, :, i, j] = win.sum(axis=(2, 3)) / (size if include_pad else
                                                          (he - hs) * (we - ws))
    return out


@pytest.mark.parametrize('kind', ['max', 'avg', 'sum'])
@pytest.mark.parametrize('full', [False, True])
def test_pooling_2d(ctx, kind, full):
    x = rs.randn(1, 2, 6, 6)
    conv = 'full' if full else 'valid'
    check_op(lambda x: nd.Pooling(x, kernel=(3, 2), stride=(2, 2), pad=(1, 1), pool_type=kind,
                                  pooling_convention=conv),
             lambda x: _np_pool(x, (3, 2), (2, 2), (1, 1), kind, full), [x], ctx)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('channels', [3, 6, 16])
def test_max_pooling_of_many_channels_is_torchs_bit_for_bit(dtype, channels):
    """From 4 channels on, 2-d max pooling runs on torch's channels-last kernel (16 lanes at a
    time, LeNet's 6 channels too): the same outputs and gradients as its channels-first one,
    ties (ReLU zeros) and NaN included, in row-major arrays."""
    from neomx.ops.layout import is_dense, max_pool_by_channels
    assert max_pool_by_channels(torch.zeros(1, channels, 2, 2)) == (channels >= 4)
    x = np.maximum(rs.randn(3, channels, 9, 8), 0).round().astype(dtype)
    x.reshape(-1)[::41] = np.nan
    head = rs.randn(3, channels, 9, 8).astype(dtype)
    cases = [dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
             dict(kernel=(3, 2), stride=(1, 2), pad=(1, 0), pooling_convention='full'),
             dict(kernel=(2, 2), stride=(2, 2)), dict(kernel=(1, 1), global_pool=True)]
    for kw in cases:
        a = nd.array(x, dtype=dtype)
        a.attach_grad()
        with autograd.record():
            y = nd.Pooling(a, pool_type='max', **kw)
        out_grad = nd.array(head[:, :, :y.shape[2], :y.shape[3]], dtype=dtype)
        y.backward(out_grad)
        t = torch.tensor(x, requires_grad=True)
        if kw.get('global_pool'):
            ref = tF.max_pool2d(t, x.shape[2:])
        else:
            ref = tF.max_pool2d(t, kw['kernel'], kw['stride'], kw.get('pad', 0),
                                ceil_mode='pooling_convention' in kw)
        assert y.shape == tuple(ref.shape), kw
        ref.backward(torch.tensor(out_grad.asnumpy()))
        np.testing.assert_array_equal(y.asnumpy(), ref.detach().numpy(), err_msg=str(kw))
        np.testing.assert_array_equal(a.grad.asnumpy(), t.grad.numpy(), err_msg=str(kw))
        y.wait_to_read()
        assert is_dense(y._var.tensor) and is_dense(a.grad._data()), kw


def test_pooling_full_keeps_a_window_in_the_padding():
    # MXNet's 'full' output size has no torch-style correction: the last window starts in the
    # padding (max gives the lowest float32, as in MXNet).
    x = nd.array(np.arange(1, 6).reshape(1, 1, 1, 5))
    kw = dict(kernel=(1, 2), stride=(1, 2), pad=(0, 1), pooling_convention='full')
    np.testing.assert_array_equal(nd.Pooling(x, pool_type='max', **kw).asnumpy().ravel(),
                                  [1, 3, 5, np.finfo(np.float32).min])
    np.testing.assert_array_equal(nd.Pooling(x, pool_type='avg', **kw).asnumpy().ravel(),
                                  [0.5, 2.5, 4.5, 0])


def test_pooling_avg_without_padding_count(ctx):
    x = rs.randn(1, 2, 5, 5)
    check_op(lambda x: nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type='avg',
                                  count_include_pad=False),
             lambda x: _np_pool(x, (3, 3), (2, 2), (1, 1), 'avg', include_pad=False), [x], ctx)


def test_pooling_global_1d_3d_and_lp(ctx):
    x = rs.randn(2, 3, 4, 5)
    check_op(lambda x: nd.Pooling(x, pool_type='avg', global_pool=True),
             lambda x: x.mean(axis=(2, 3), keepdims=True), [x], ctx)
    check_op(lambda x: nd.Pooling(x, kernel=(1, 1), pool_type='max', global_pool=True),
             lambda x: x.max(axis=(2, 3), keepdims=True), [x], ctx, grad=False)
    x1 = rs.randn(2, 3, 7)
    check_op(lambda x: nd.Pooling(x, kernel=(3,), stride=(2,), pool_type='max'),
             lambda x: tF.max_pool1d(_t(x), 3, 2).numpy(), [x1], ctx)
    x3 = rs.randn(1, 2, 4, 4, 4)
    check_op(lambda x: nd.Pooling(x, kernel=(2, 2, 2), stride=(2, 2, 2), pool_type='avg'),
             lambda x: tF.avg_pool3d(_t(x), 2, 2).numpy(), [x3], ctx)
    check_op(lambda x: nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type='lp', p_value=2),
             lambda x: np.sqrt((x ** 2).reshape(2, 3, 2, 2, 2, 2).sum(axis=(3, 5))),
             [rs.randn(2, 3, 4, 4)], ctx, grad=False)


def test_pooling_errors():
    with pytest.raises(mx.MXNetError, match='Pooling: kernel'):
        nd.Pooling(nd.ones((1, 1, 2, 2)), kernel=(3, 3))
    with pytest.raises(mx.MXNetError, match="'same' is for 1-d pooling"):
        nd.Pooling(nd.ones((1, 1, 4, 4)), kernel=(2, 2), pooling_convention='same')
    with pytest.raises(mx.MXNetError, match="pad must be 0"):
        nd.Pooling(nd.ones((1, 1, 10)), kernel=(2,), stride=(2,), pad=(2,),
                   pooling_convention='same')


def test_pooling_windows_as_mxnet(mxnet_ref, tmp_path):
    """Padding over half the kernel (torch refuses it; d2l's pooling chapter uses it), 'full'
    windows starting in the padding, 1-d 'same', and the divisors of averages."""
    code = """
import numpy as np
X = mx.nd.array(np.random.RandomState(0).uniform(size=(1, 2, 5, 7)))
x1 = mx.nd.arange(11).reshape((1, 1, 11))
out = []
for conv in ['valid', 'full']:
    for pt in ['max', 'avg', 'sum']:
        for cip in [None, False]:
            for k, p, s in [((3, 2), (2, 1), (2, 3)), ((2, 3), (1, 2), (2, 3)),
                            ((3, 3), (1, 1), (2, 2))]:
                out.append(mx.nd.Pooling(X, kernel=k, pad=p, stride=s, pool_type=pt,
                                         pooling_convention=conv, count_include_pad=cip))
for pt in ['max', 'avg', 'sum']:
    for k, s in [(3, 1), (4, 3), (2, 2)]:
        out.append(mx.nd.Pooling(x1, kernel=(k,), stride=(s,), pad=(0, 0, 0), pool_type=pt,
                                 pooling_convention='same'))
np.savez(PATH, *[o.asnumpy() for o in out])
"""
    path = str(tmp_path / 'pool.npz')
    mxnet_ref('import mxnet as mx\nPATH = %r\n' % path + code)
    ref = np.load(path)
    ours = str(tmp_path / 'ours.npz')
    exec('PATH = %r\n' % ours + code, {'mx': mx})
    got = np.load(ours)
    assert len(ref.files) == len(got.files) == 45
    for name in ref.files:
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-5, atol=1e-6, err_msg=name)


def _np_bn(x, g, b, mean, var, eps, axis=1):
    shape = [1] * x.ndim
    shape[axis] = -1
    r = lambda a: a.reshape(shape)
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(g) + r(b)


def test_batchnorm_train_updates_moving_stats(ctx):
    x = rs.randn(4, 3, 2, 2)
    g, b = rs.rand(3) + 0.5, rs.randn(3)
    bm, bv = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))

    def fn(x, g, b):
        mm = nd.zeros((3,), ctx=ctx, dtype=x.dtype)
        mv = nd.ones((3,), ctx=ctx, dtype=x.dtype)
        with autograd.train_mode():
            y = nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False, momentum=0.8, eps=1e-3)
        fn.moving = (mm, mv)
        return y
    check_op(fn, lambda x, g, b: _np_bn(x, g, b, bm, bv, 1e-3), [x, g, b], ctx,
             rtol=1e-3, atol=1e-4, grad_rtol=1e-2, grad_atol=1e-3)
    mm, mv = fn.moving
    np.testing.assert_allclose(mm.asnumpy(), 0.2 * bm, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(mv.asnumpy(), 0.8 + 0.2 * bv, rtol=1e-4)   # biased variance


def test_batchnorm_predict_uses_moving_stats_and_fix_gamma(ctx):
    x = rs.randn(3, 4)
    mm, mv = rs.randn(4), rs.rand(4) + 0.5
    g, b = rs.randn(4), rs.randn(4)
    def fn(x, g, b):
        with autograd.predict_mode():
            return nd.BatchNorm(x, g, b, nd.array(mm, ctx=ctx, dtype=x.dtype),
                                nd.array(mv, ctx=ctx, dtype=x.dtype), fix_gamma=False)
    check_op(fn, lambda x, g, b: _np_bn(x, g, b, mm, mv, 1e-3), [x, g, b], ctx)
    # fix_gamma (the default) treats gamma as 1 and gives it no gradient
    gg = nd.array(g, ctx=ctx)
    gg.attach_grad()
    with autograd.record(train_mode=False):
        y = nd.BatchNorm(nd.array(x, ctx=ctx), gg, nd.array(b, ctx=ctx), nd.array(mm, ctx=ctx),
                         nd.array(mv, ctx=ctx))
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), _np_bn(x, np.ones(4), b, mm, mv, 1e-3), rtol=1e-4,
                               atol=1e-5)
    assert (gg.grad.asnumpy() == 0).all()


def test_batchnorm_axis_and_outputs():
    x = rs.randn(2, 3, 4).astype(np.float32)
    args = [nd.ones((4,)), nd.zeros((4,)), nd.zeros((4,)), nd.ones((4,))]
    with autograd.train_mode():
        y, mean, invstd = nd.BatchNorm(nd.array(x), *args, axis=-1, output_mean_var=True,
                                       fix_gamma=False)
    flat = x.reshape(-1, 4)
    np.testing.assert_allclose(mean.asnumpy(), flat.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(invstd.asnumpy(), 1 / np.sqrt(flat.var(0) + 1e-3), rtol=1e-4)
    np.testing.assert_allclose(y.asnumpy(), _np_bn(x, np.ones(4), np.zeros(4), flat.mean(0),
                                                   flat.var(0), 1e-3, axis=2), rtol=1e-4, atol=1e-5)
    with pytest.raises(mx.MXNetError, match=r'gamma has shape \(3,\), expected \(4,\)'):
        nd.BatchNorm(nd.array(x), nd.ones((3,)), *args[1:], axis=-1)


def test_batchnorm_registry_entry():
    op = registry.get('BatchNorm')
    attrs = op.parse_attrs({})
    assert attrs['fix_gamma'] is True and attrs['eps'] == pytest.approx(1e-3)
    assert op.mutated(attrs) == ('moving_mean', 'moving_var')
    assert op.fill(attrs, [(2, 5, 3), None, None, None, None])[1:] == [(5,)] * 4


def test_layer_instance_group_norm(ctx):
    x = rs.randn(2, 4, 3)
    g, b = rs.randn(3), rs.randn(3)
    check_op(lambda x, g, b: nd.LayerNorm(x, g, b),
             lambda x, g, b: tF.layer_norm(_t(x), (3,), _t(g), _t(b), 1e-5).numpy(),
             [x, g, b], ctx, rtol=1e-4, atol=1e-4, grad_rtol=1e-2, grad_atol=1e-3)
    g4, b4 = rs.randn(4), rs.randn(4)
    check_op(lambda x, g, b: nd.LayerNorm(x, g, b, axis=1),
             lambda x, g, b: ((x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True)
                                                                       + 1e-5)
                              * g.reshape(1, 4, 1) + b.reshape(1, 4, 1)),
             [x, g4, b4], ctx, rtol=1e-4, atol=1e-4, grad_rtol=1e-2, grad_atol=1e-3)
    check_op(lambda x, g, b: nd.InstanceNorm(x, g, b),
             lambda x, g, b: tF.instance_norm(_t(x), weight=_t(g), bias=_t(b), eps=1e-3).numpy(),
             [x, g4, b4], ctx, rtol=1e-4, atol=1e-4, grad_rtol=1e-2, grad_atol=1e-3)
    g2, b2 = rs.randn(2), rs.randn(2)

    def gn_ref(x, g, b):
        xg = x.reshape(2, 2, -1)
        y = (xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)
        return (y * g.reshape(1, 2, 1) + b.reshape(1, 2, 1)).reshape(x.shape)
    check_op(lambda x, g, b: nd.GroupNorm(x, g, b, num_groups=2), gn_ref, [x, g2, b2], ctx,
             rtol=1e-4, atol=1e-4, grad_rtol=1e-2, grad_atol=1e-3)
    out = nd.LayerNorm(nd.array(x), nd.array(g), nd.array(b), output_mean_var=True)
    assert [o.shape for o in out] == [(2, 4, 3), (2, 4, 1), (2, 4, 1)]
    np.testing.assert_allclose(out[2].asnumpy()[..., 0], np.sqrt(x.var(-1) + 1e-5), rtol=1e-4)


@pytest.mark.parametrize('act', ['leaky', 'elu', 'selu', 'gelu'])
def test_leaky_relu(ctx, act):
    x = rs.randn(3, 4)
    refs = {'leaky': lambda x: np.where(x > 0, x, 0.3 * x),
            'elu': lambda x: np.where(x > 0, x, 0.3 * np.expm1(x)),
            'selu': lambda x: tF.selu(_t(x)).numpy(),
            'gelu': lambda x: tF.gelu(_t(x)).numpy()}
    check_op(lambda x: nd.LeakyReLU(x, act_type=act, slope=0.3), refs[act], [x], ctx)



def test_elu_selu_gradient_at_large_inputs(mxnet_ref):
    # the exponential branch, not taken above 0, must not overflow into the gradient: MXNet's
    # is 1 at x = 100, not NaN (GluonTS's temporal fusion transformer trains to NaN weights
    # within a batch otherwise)
    code = """
import mxnet as mx
x = mx.nd.array([-100., -2., -0.5, 0.5, 2., 90., 100., 1e4])
x.attach_grad()
with mx.autograd.record():
    y = mx.nd.LeakyReLU(x, act_type='elu', slope=0.3)
y.backward()
print(y.asnumpy().round(4).tolist(), x.grad.asnumpy().round(4).tolist())
"""
    want = mxnet_ref(code)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code.replace('mxnet', 'neomx'), {})
    assert out.getvalue() == want
    # selu: MXNet 1.9.1's gradient below 0 leaves out a factor lambda (its -0.0891 at x = -100
    # is lambda * (y + alpha) of the output y); this is the derivative, torch's
    xs = [-100., -2., -0.5, 0.5, 2., 90., 100., 1e4]
    x = nd.array(xs)
    x.attach_grad()
    with autograd.record():
        y = nd.LeakyReLU(x, act_type='selu')
    y.backward()
    t = torch.tensor(xs, requires_grad=True)
    tF.selu(t).sum().backward()
    np.testing.assert_allclose(y.asnumpy(), tF.selu(t).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), t.grad.numpy(), rtol=1e-6, atol=1e-30)

def test_prelu_and_rrelu(ctx):
    x = rs.randn(2, 3, 2)
    g = rs.rand(3)
    check_op(lambda x, g: nd.LeakyReLU(x, g, act_type='prelu'),
             lambda x, g: np.where(x > 0, x, g.reshape(1, 3, 1) * x), [x, g], ctx)
    # rrelu: the mean slope in predict mode, a slope within the bounds in training
    xn = nd.array(-np.ones((50,)), ctx=ctx)
    y = nd.LeakyReLU(xn, act_type='rrelu', lower_bound=0.1, upper_bound=0.3).asnumpy()
    np.testing.assert_allclose(y, -0.2, rtol=1e-6)
    with autograd.train_mode():
        y = nd.LeakyReLU(xn, act_type='rrelu', lower_bound=0.1, upper_bound=0.3).asnumpy()
    assert ((-y >= 0.1) & (-y <= 0.3)).all() and y.std() > 0


def test_softmax_family(ctx):
    x = rs.randn(3, 5)

    def np_softmax(x, axis):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)
    check_op(lambda x: nd.softmax(x, axis=0, temperature=2.0), lambda x: np_softmax(x / 2, 0),
             [x], ctx)
    check_op(lambda x: nd.log_softmax(x), lambda x: np.log(np_softmax(x, 1)), [x], ctx)
    length = np.array([2, 5, 1], dtype=np.int32)

    def masked(x):
        out = np.zeros_like(x)
        for i, n in enumerate(length):
            out[i, :n] = np_softmax(x[i:i + 1, :n], 1)
        return out
    check_op(lambda x: nd.softmax(x, nd.array(length, ctx=ctx, dtype='int32'), axis=1,
                                  use_length=True), masked, [x], ctx)
    check_op(lambda x: nd.SoftmaxActivation(x), lambda x: np_softmax(x, 1), [x], ctx)
    x4 = rs.randn(2, 3, 2)
    check_op(lambda x: nd.SoftmaxActivation(x, mode='channel'), lambda x: np_softmax(x, 1),
             [x4], ctx)


def _grad_of(fn, *arrays):
    xs = [nd.array(a) for a in arrays]
    xs[0].attach_grad()
    with autograd.record():
        y = fn(*xs)
    # A head gradient of 5 everywhere: SoftmaxOutput and MakeLoss ignore it.
    y.backward(nd.ones(y.shape) * 5)
    return y.asnumpy(), xs[0].grad.asnumpy()


def test_softmax_output_gradient():
    x = rs.randn(4, 3).astype(np.float32)
    label = np.array([0, 2, 1, 2], dtype=np.float32)
    p = np.exp(x) / np.exp(x).sum(1, keepdims=True)
    onehot = np.eye(3)[label.astype(int)]
    y, g = _grad_of(lambda x, l: nd.SoftmaxOutput(x, l), x, label)
    np.testing.assert_allclose(y, p, rtol=1e-5)
    np.testing.assert_allclose(g, p - onehot, rtol=1e-5, atol=1e-6)
    label[1] = -1
    _, g = _grad_of(lambda x, l: nd.SoftmaxOutput(x, l, grad_scale=2, use_ignore=True,
                                                  normalization='valid'), x, label)
    expected = 2 * (p - np.eye(3)[np.maximum(label, 0).astype(int)]) / 3
    expected[1] = 0
    np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-6)
    _, g = _grad_of(lambda x, l: nd.SoftmaxOutput(x, l, normalization='batch'), x, onehot)
    np.testing.assert_allclose(g, (p - onehot) / 4, rtol=1e-5, atol=1e-6)


def test_softmax_output_multi_output_and_preserve_shape():
    x = rs.randn(2, 3, 4).astype(np.float32)
    label = rs.randint(0, 3, size=(2, 4)).astype(np.float32)
    p = np.exp(x) / np.exp(x).sum(1, keepdims=True)
    y, g = _grad_of(lambda x, l: nd.SoftmaxOutput(x, l, multi_output=True), x, label)
    np.testing.assert_allclose(y, p, rtol=1e-5)
    # MXNet averages over the 4 positions of each example, and with 'batch' over the batch
    onehot = np.eye(3)[label.astype(int)].transpose(0, 2, 1)
    np.testing.assert_allclose(g, (p - onehot) / 4, rtol=1e-5, atol=1e-6)
    _, g = _grad_of(lambda x, l: nd.SoftmaxOutput(x, l, multi_output=True,
                                                  normalization='batch'), x, label)
    np.testing.assert_allclose(g, (p - onehot) / 8, rtol=1e-5, atol=1e-6)
    # 'valid' counts the labels other than ignore_label even without use_ignore
    valid = (label != 1).sum()
    _, g = _grad_of(lambda x, l: nd.SoftmaxOutput(x, l, multi_output=True, ignore_label=1,
                                                  normalization='valid'), x, label)
    np.testing.assert_allclose(g, (p - onehot) / valid, rtol=1e-5, atol=1e-6)
    label2 = rs.randint(0, 4, size=(2, 3)).astype(np.float32)
    p2 = np.exp(x) / np.exp(x).sum(2, keepdims=True)
    y, g = _grad_of(lambda x, l: nd.SoftmaxOutput(x, l, preserve_shape=True), x, label2)
    np.testing.assert_allclose(g, p2 - np.eye(4)[label2.astype(int)], rtol=1e-5, atol=1e-6)


def test_make_loss_and_cross_entropy(ctx):
    x = rs.randn(3, 4).astype(np.float32)
    y, g = _grad_of(lambda x: nd.MakeLoss(x, grad_scale=3, normalization='batch'), x)
    np.testing.assert_allclose(y, x)
    np.testing.assert_allclose(g, np.full_like(x, 1.0))
    _, g = _grad_of(lambda x: nd.make_loss(x), x)
    np.testing.assert_allclose(g, np.ones_like(x))
    label = np.array([1, 0, 3])
    check_op(lambda x, l: nd.softmax_cross_entropy(x, l),
             lambda x, l: np.array([tF.cross_entropy(_t(x), _t(l).long(), reduction='sum').item()]),
             [x.astype(np.float64), label.astype(np.float64)], ctx, wrt=[0])


def test_ctc_loss_ignores_steps_past_each_sequence():
    # Whatever the steps past a sequence's length hold (NaN here), the loss is that of the
    # steps inside and their gradient is 0.
    x = rs.randn(4, 2, 5).astype(np.float32)
    label = np.array([[1, 2], [3, 0]], dtype=np.float32)
    lens = nd.array([2, 4])
    padded = x.copy()
    padded[2:, 0] = np.nan

    def loss(d):
        return nd.CTCLoss(d, nd.array(label), lens, nd.array([2, 1]), use_data_lengths=True,
                          use_label_lengths=True)
    y, g = _grad_of(loss, padded)
    assert not np.isnan(g).any() and (g[2:, 0] == 0).all()
    y2, g2 = _grad_of(loss, x)
    np.testing.assert_allclose(y, y2, rtol=1e-6)
    np.testing.assert_allclose(g, g2, rtol=1e-5, atol=1e-7)


def test_embedding_upsampling_lrn(ctx):
    w = rs.randn(6, 3)
    idx = np.array([[0, 5], [2, 9]], dtype=np.float32)   # 9 is clipped to 5, as MXNet does
    check_op(lambda w: nd.Embedding(nd.array(idx, ctx=ctx), w, input_dim=6, output_dim=3),
             lambda w: w[np.clip(idx.astype(int), 0, 5)], [w], ctx)
    x = rs.randn(1, 2, 2, 3)
    check_op(lambda x: nd.UpSampling(x, scale=2, sample_type='nearest'),
             lambda x: x.repeat(2, axis=2).repeat(2, axis=3), [x], ctx)
    y = nd.UpSampling(nd.array(x), nd.array(rs.randn(1, 1, 1, 3)), scale=2, sample_type='nearest',
                      num_args=2)
    assert y.shape == (1, 3, 4, 6)
    x = rs.randn(1, 5, 2, 2)
    check_op(lambda x: nd.LRN(x, nsize=3, alpha=0.01),
             lambda x: tF.local_response_norm(_t(x), 3, 0.01, 0.75, 2.0).numpy(), [x], ctx)


def test_dropout_modes():
    x = nd.ones((200, 50))
    np.testing.assert_array_equal(nd.Dropout(x, p=0.5).asnumpy(), 1)      # predict: identity
    with autograd.train_mode():
        y = nd.Dropout(x, p=0.5).asnumpy()
        shared = nd.Dropout(x, p=0.5, axes=(1,)).asnumpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.4 < (y == 0).mean() < 0.6
    assert (shared == shared[:, :1]).all()                      # one mask value per row
    always = nd.Dropout(x, p=0.5, mode='always').asnumpy()
    assert (always == 0).any()
    with pytest.raises(mx.MXNetError, match=r'Dropout: axes=\(2,\) is out of range'):
        nd.Dropout(x, p=0.5, axes=(2,))


def test_fill_rules():
    fc = registry.get('FullyConnected')
    a = fc.parse_attrs({'num_hidden': 5})
    assert fc.fill(a, [(2, 3, 4), None, None])[1:] == [(5, 12), (5,)]
    conv = registry.get('Convolution')
    a = conv.parse_attrs({'kernel': (3, 3), 'num_filter': 8, 'num_group': 2})
    assert conv.fill(a, [(0, 4, 0, 0), None, None])[1:] == [(8, 2, 3, 3), (8,)]
    deconv = registry.get('Deconvolution')
    a = deconv.parse_attrs({'kernel': (2, 2), 'num_filter': 6})
    assert deconv.fill(a, [(1, 4, 5, 5), None])[1] == (4, 6, 2, 2)
    emb = registry.get('Embedding')
    assert emb.fill(emb.parse_attrs({'input_dim': 7, 'output_dim': 2}), [(3,), None])[1] == (7, 2)
    lr = registry.get('LeakyReLU')
    assert lr.fill(lr.parse_attrs({'act_type': 'prelu'}), [(2, 5, 3), None])[1] == (5,)
    assert lr.fill(lr.parse_attrs({'act_type': 'prelu'}), [(2, 5, 3), (1,)])[1] == (1,)


# -- differential: the same calls under real MXNet 1.9.1 --------------------------------------

# Run as-is by both frameworks (``mx`` is mxnet or neomx): every result and the gradients of
# every input are stored in ``out``.
_DIFF_CODE = textwrap.dedent('''
    import numpy as np
    rs = np.random.RandomState(0)
    out = {}

    def A(*shape):
        return mx.nd.array(rs.randn(*shape).astype('float32'))

    def run(name, f, *ins):
        for i in ins:
            i.attach_grad()
        with mx.autograd.record():
            y = f()
        y = y if isinstance(y, mx.nd.NDArray) else y[0]
        y.backward(mx.nd.array(np.linspace(-1, 1, y.size).reshape(y.shape).astype('float32')))
        out[name] = y.asnumpy()
        for k, i in enumerate(ins):
            out['%s_grad%d' % (name, k)] = i.grad.asnumpy()

    x, w, b = A(2, 4, 7, 7), A(6, 2, 3, 3), A(6)
    run('conv', lambda: mx.nd.Convolution(x, w, b, kernel=(3, 3), stride=(2, 1), pad=(1, 0),
                                          dilate=(1, 2), num_filter=6, num_group=2), x, w, b)
    wd = A(4, 3, 3, 3)
    run('deconv', lambda: mx.nd.Deconvolution(x, wd, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                              adj=(1, 0), num_filter=3), x, wd)
    run('deconv_target', lambda: mx.nd.Deconvolution(x, wd, kernel=(3, 3), stride=(2, 2),
                                                     target_shape=(12, 14), num_filter=3), x, wd)
    for pt in ['max', 'avg', 'sum']:
        for conv in ['valid', 'full']:
            run('pool_%s_%s' % (pt, conv), lambda: mx.nd.Pooling(
                x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type=pt,
                pooling_convention=conv), x)
    run('pool_avg_nopad', lambda: mx.nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                                pool_type='avg', count_include_pad=False), x)
    run('pool_global', lambda: mx.nd.Pooling(x, kernel=(1, 1), pool_type='avg',
                                             global_pool=True), x)
    x1 = A(2, 3, 9)
    run('pool_1d', lambda: mx.nd.Pooling(x1, kernel=(3,), stride=(2,), pad=(1,),
                                         pool_type='avg'), x1)
    g, be = A(4), A(4)
    mm = mx.nd.array(rs.rand(4).astype('float32'))
    mv = mx.nd.array(rs.rand(4).astype('float32') + 0.5)
    stats = (mm.asnumpy(), mv.asnumpy())
    run('bn_train', lambda: mx.nd.BatchNorm(x, g, be, mm, mv, fix_gamma=False, momentum=0.8,
                                            eps=1e-4), x, g, be)
    # MXNet updates the moving statistics in backward on CPU, neomx in forward: after the
    # backward both hold the same values.
    out['bn_moving_mean'], out['bn_moving_var'] = mm.asnumpy(), mv.asnumpy()
    mm, mv = mx.nd.array(stats[0]), mx.nd.array(stats[1])
    with mx.autograd.predict_mode():
        out['bn_predict'] = mx.nd.BatchNorm(x, g, be, mm, mv, fix_gamma=False).asnumpy()
    run('bn_axis', lambda: mx.nd.BatchNorm(x.transpose((0, 2, 3, 1)), g, be, mm, mv, axis=-1,
                                           fix_gamma=False), x, g, be)
    mm, mv = mx.nd.array(stats[0]), mx.nd.array(stats[1])
    run('bn_global', lambda: mx.nd.BatchNorm(x, g, be, mm, mv, fix_gamma=False,
                                             use_global_stats=True), x, g, be)
    gl, bl = A(7), A(7)
    run('layernorm', lambda: mx.nd.LayerNorm(x, gl, bl), x, gl, bl)
    run('layernorm_axis1', lambda: mx.nd.LayerNorm(x, g, be, axis=1), x, g, be)
    run('instancenorm', lambda: mx.nd.InstanceNorm(x, g, be), x, g, be)
    gg, bg = A(2), A(2)
    run('groupnorm', lambda: mx.nd.GroupNorm(x, gg, bg, num_groups=2), x, gg, bg)
    xs = A(3, 5)
    for act in ['leaky', 'elu', 'gelu']:
        run('leaky_' + act, lambda: mx.nd.LeakyReLU(xs, act_type=act, slope=0.3), xs)
    # selu forward only: MXNet 1.9.1's selu gradient is lambda*(y + alpha) instead of
    # y + lambda*alpha for negative inputs; neomx keeps the exact derivative.
    out['leaky_selu'] = mx.nd.LeakyReLU(xs, act_type='selu').asnumpy()
    gp = A(4)
    run('prelu', lambda: mx.nd.LeakyReLU(x, gp, act_type='prelu'), x, gp)
    label = mx.nd.array([1, 0, 4])
    run('softmax_output', lambda: mx.nd.SoftmaxOutput(xs, label), xs)
    run('softmax_output_ignore', lambda: mx.nd.SoftmaxOutput(
        xs, mx.nd.array([1, -1, 4]), grad_scale=2.0, use_ignore=True, normalization='valid'), xs)
    run('softmax_output_smooth', lambda: mx.nd.SoftmaxOutput(xs, label, normalization='batch',
                                                             smooth_alpha=0.1), xs)
    xm = A(2, 3, 4)
    run('softmax_output_multi', lambda: mx.nd.SoftmaxOutput(
        xm, mx.nd.array([[0, 1, 2, 1], [2, 2, 0, 1]]), multi_output=True,
        normalization='valid'), xm)
    run('softmax_output_multi_null', lambda: mx.nd.SoftmaxOutput(
        xm, mx.nd.array([[0, 1, 2, 1], [2, 2, 0, 1]]), multi_output=True, grad_scale=0.5), xm)
    run('softmax_output_valid_count', lambda: mx.nd.SoftmaxOutput(
        xs, label, ignore_label=1, normalization='valid'), xs)
    xp = A(3, 2, 4)
    run('softmax_output_preserve', lambda: mx.nd.SoftmaxOutput(
        xp, mx.nd.array([[0, 1], [2, 0], [1, 1]]), preserve_shape=True), xp)
    run('softmax_cross_entropy', lambda: mx.nd.softmax_cross_entropy(xs, label), xs)
    run('softmax_temperature', lambda: mx.nd.softmax(xs, axis=0, temperature=2.0), xs)
    length = mx.nd.array([2, 5, 1], dtype='int32')
    run('softmax_length', lambda: mx.nd.softmax(xs, length, axis=1, use_length=True), xs)
    run('log_softmax', lambda: mx.nd.log_softmax(xs, axis=1), xs)
    # forward only: MXNet's backward of 'instance' mode normalises over axis 1, its forward
    # over the last axis.
    out['softmax_activation'] = mx.nd.SoftmaxActivation(x).asnumpy()
    run('softmax_activation_channel', lambda: mx.nd.SoftmaxActivation(x, mode='channel'), x)
    we = A(10, 3)
    run('embedding', lambda: mx.nd.Embedding(mx.nd.array([[0, 3], [9, 2]]), we, input_dim=10,
                                             output_dim=3), we)
    run('upsampling', lambda: mx.nd.UpSampling(x, scale=2, sample_type='nearest'), x)
    run('lrn', lambda: mx.nd.LRN(x, nsize=3, alpha=0.01), x)
    run('makeloss', lambda: mx.nd.MakeLoss(xs, grad_scale=3, normalization='batch'), xs)
    run('activation_softrelu', lambda: mx.nd.Activation(xs, act_type='softrelu'), xs)
    xc = A(6, 2, 5)
    run('ctc', lambda: mx.nd.CTCLoss(xc, mx.nd.array([[1, 2, 2], [3, 0, 0]])), xc)
    run('ctc_lengths', lambda: mx.nd.CTCLoss(xc, mx.nd.array([[0, 1, 1], [2, -1, -1]]),
                                             mx.nd.array([6, 4]), mx.nd.array([3, 1]),
                                             use_data_lengths=True, use_label_lengths=True,
                                             blank_label='last'), xc)
''')


@pytest.fixture(scope='module')
def mxnet_nn_results(tmp_path_factory):
    from conftest import run_mxnet
    path = str(tmp_path_factory.mktemp('nn_ref') / 'ref.npz')
    # MKL-DNN rejects some of these deconvolutions: use MXNet's own kernels.
    run_mxnet("import os\nos.environ['MXNET_MKLDNN_ENABLED'] = '0'\n"
              "os.environ['MXNET_STORAGE_FALLBACK_LOG_VERBOSE'] = '0'\nimport mxnet as mx\n"
              + _DIFF_CODE + "\nnp.savez(%r, **out)\n" % path)
    return dict(np.load(path))


def test_nn_ops_match_mxnet(mxnet_nn_results):
    scope = {'mx': mx}
    exec(_DIFF_CODE, scope)
    ours = scope['out']
    assert sorted(ours) == sorted(mxnet_nn_results)
    for name, ref in mxnet_nn_results.items():
        got = ours[name]
        assert got.shape == ref.shape, (name, got.shape, ref.shape)
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4, err_msg=name)


def test_flattening_operators_take_an_empty_batch():
    # An empty batch (a boolean mask that selects nothing) flattens to (0, features), as in
    # MXNet's NumPy mode; reshape(0, -1) is ambiguous.
    from neomx import np as mnp, npx
    with mx.util.np_shape(True), mx.util.np_array(True):
        x = mnp.zeros((0, 1, 4, 4))
        assert npx.fully_connected(x, mnp.ones((3, 16)), mnp.zeros(3), num_hidden=3).shape \
            == (0, 3)
        assert npx.batch_flatten(x).shape == (0, 16)
        net = mx.gluon.nn.HybridSequential()
        net.add(mx.gluon.nn.Flatten(), mx.gluon.nn.Dense(2, in_units=16))
        net.initialize()
        assert net(x).shape == (0, 2)
        net.hybridize()
        assert net(x).shape == (0, 2)
        assert net(mnp.ones((2, 1, 4, 4))).shape == (2, 2)
