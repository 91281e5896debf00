"""Detection, segmentation and transformer operators (nd.contrib and their symbolic kin),
against real MXNet 1.9.1 where it is installed and against NumPy references otherwise."""
import numpy as np
import pytest

import neomx as mx
from neomx import nd
from opcheck import check_op

# Runs under real MXNet and under neomx alike (``mx`` is either): the forward results and the
# gradients of each case, by name, into the dict ``out``.
_CASES = r'''
import numpy as np
rs = np.random.RandomState(0)
def arr(*shape, lo=0.0, hi=1.0):
    return mx.nd.array(rs.uniform(lo, hi, shape))
def grads(f, *xs, og=None):
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = f(*xs)
    y.backward(og if og is not None else mx.nd.ones(y.shape))
    return [y] + [x.grad for x in xs]
out = {}
C = mx.nd.contrib
x = arr(2, 3, 4, lo=-1)
out['quadratic'] = grads(lambda a: C.quadratic(a, a=0.5, b=-2, c=1), x)
out['gradientmultiplier'] = grads(lambda a: C.gradientmultiplier(a * 2, scalar=-0.5), arr(3))
out['div_sqrt_dim'] = [C.div_sqrt_dim(x)]
out['allclose'] = [C.allclose(x, x + 1e-9), C.allclose(x, x + 1e-3)]
out['index_copy'] = grads(lambda o, n: C.index_copy(o, mx.nd.array([3, 0], dtype='int64'), n),
                          arr(4, 3), arr(2, 3))
out['index_array'] = [C.index_array(arr(2, 3, 2)), C.index_array(arr(2, 3, 2), axes=(2, 0))]
out['arange_like'] = [C.arange_like(arr(2, 3), start=1, step=0.5, repeat=2),
                      C.arange_like(arr(2, 3), axis=1)]
qkv = arr(4, 2, 3 * 2 * 5, lo=-1)
att = arr(4, 4, 4)
out['selfatt'] = [C.interleaved_matmul_selfatt_qk(qkv, heads=2),
                  C.interleaved_matmul_selfatt_valatt(qkv, att, heads=2)]
q, kv = arr(3, 2, 2 * 5, lo=-1), arr(4, 2, 2 * 2 * 5, lo=-1)
out['encdec'] = [C.interleaved_matmul_encdec_qk(q, kv, heads=2),
                 C.interleaved_matmul_encdec_valatt(kv, arr(4, 3, 4), heads=2)]
a = arr(2, 3, lo=-2, hi=3)
for t in ('int8', 'uint8'):
    qa, lo, hi = C.quantize(a, mx.nd.array([-2.0]), mx.nd.array([3.0]), out_type=t)
    out['quantize_' + t] = [qa, lo, hi, C.dequantize(qa, lo, hi)]
img = arr(2, 3, 7, 9)
out['adaptive_avg_pool'] = [C.AdaptiveAvgPooling2D(img, output_size=(3, 4)),
                            C.AdaptiveAvgPooling2D(img, output_size=2)]
out['bilinear_resize'] = grads(lambda d: C.BilinearResize2D(d, height=5, width=13), img)
out['bilinear_resize_modes'] = [
    C.BilinearResize2D(img, height=4, width=6, align_corners=False),
    C.BilinearResize2D(img, scale_height=0.7, scale_width=1.3),
    C.BilinearResize2D(img, scale_height=2, scale_width=0.5, mode='odd_scale'),
    C.BilinearResize2D(img, mode='to_even_up'), C.BilinearResize2D(img, arr(1, 1, 3, 3),
                                                                  mode='like')]
label = mx.nd.array([2, 0, 1, 1])
scores = arr(4, 3, lo=-1)
for lin in (False, True):
    out['svm_%s' % lin] = grads(lambda d: mx.nd.SVMOutput(d, label, margin=0.7,
                                                         use_linear=lin), scores)
for mode in ('instance', 'channel', 'spatial'):
    out['l2norm_' + mode] = grads(lambda d: mx.nd.L2Normalization(d, mode=mode), img)
feat = mx.nd.array(np.arange(2 * 4 * 8 * 8).reshape(2, 4, 8, 8) % 17)
rois = mx.nd.array([[0, 1.2, 0.7, 6.3, 5.9], [1, 0, 2, 3.2, 7.5], [0, 5, 5, 5, 5]])
scaled = lambda k: mx.nd.concat(rois[:, :1], rois[:, 1:] * k, dim=1)  # noqa: E731
out['roi_pooling'] = grads(lambda d: mx.nd.ROIPooling(d, rois, pooled_size=(3, 2),
                                                      spatial_scale=1.0), feat)
out['roi_align'] = grads(lambda d: C.ROIAlign(d, scaled(2), pooled_size=(2, 3), spatial_scale=0.5,
                                              sample_ratio=2), feat)
out['roi_align_adaptive'] = [C.ROIAlign(feat, rois, pooled_size=(2, 2), spatial_scale=1.0)]
out['roi_align_ps'] = [C.ROIAlign(feat, rois, pooled_size=(2, 2), spatial_scale=1.0,
                                  position_sensitive=True)]
# many regions over two images, some partly or wholly outside the map, of every size
corners = rs.uniform(-6, 18, (40, 4))
regions = mx.nd.array(np.concatenate([rs.randint(0, 2, (40, 1)),
                                      np.minimum(corners[:, :2], corners[:, 2:]),
                                      np.maximum(corners[:, :2], corners[:, 2:])], 1))
for aligned in (False, True):
    for ratio in (-1, 3):
        out['roi_align_many_%s_%d' % (aligned, ratio)] = grads(lambda d: C.ROIAlign(
            d, regions, pooled_size=(3, 4), spatial_scale=0.8, sample_ratio=ratio,
            aligned=aligned), arr(2, 5, 12, 15, lo=-1))
rrois = mx.nd.array([[0, 4, 4, 5, 3, 30], [1, 3.5, 5, 4, 6, -70]])
out['rroi_align'] = [C.RROIAlign(feat, rrois, pooled_size=(2, 3), spatial_scale=1.0)]
out['psroi_pooling'] = [C.PSROIPooling(feat, scaled(4), spatial_scale=0.25, output_dim=1,
                                       pooled_size=2)]
theta = mx.nd.array([[0.9, 0.1, 0.05, -0.1, 1.1, -0.2]])
out['grid_affine'] = grads(lambda t: mx.nd.GridGenerator(t, transform_type='affine',
                                                         target_shape=(4, 5)), theta)
flow = arr(1, 2, 4, 5, lo=-1)
out['grid_warp'] = grads(lambda f: mx.nd.GridGenerator(f, transform_type='warp'), flow)
src = arr(1, 2, 6, 7)
out['bilinear_sampler'] = grads(lambda d: mx.nd.BilinearSampler(
    d, mx.nd.GridGenerator(theta, transform_type='affine', target_shape=(4, 5))), src)
out['spatial_transformer'] = grads(lambda d: mx.nd.SpatialTransformer(
    d, theta, target_shape=(4, 5), transform_type='affine', sampler_type='bilinear'), src)
d1, d2 = arr(2, 3, 7, 8), arr(2, 3, 7, 8)
for mul in (True, False):
    out['correlation_%s' % mul] = grads(lambda a, b: mx.nd.Correlation(
        a, b, kernel_size=3, max_displacement=2, stride1=2, stride2=1, pad_size=2,
        is_multiply=mul), d1, d2)
out['im2col'] = grads(lambda d: mx.nd.im2col(d, kernel=(3, 2), stride=(2, 1), dilate=(1, 2),
                                             pad=(1, 1)), img)
out['col2im'] = [mx.nd.col2im(out['im2col'][0], (7, 9), kernel=(3, 2), stride=(2, 1),
                              dilate=(1, 2), pad=(1, 1))]
data, weight = arr(1, 4, 5, 6), arr(6, 2, 3, 3, lo=-1)
offset = arr(1, 2 * 2 * 9, 5, 6, lo=-1.5, hi=1.5)
mask = arr(1, 2 * 9, 5, 6)
out['deformable_conv'] = grads(lambda d, o, w: C.DeformableConvolution(
    d, o, w, kernel=(3, 3), pad=(1, 1), num_filter=6, num_group=2, num_deformable_group=2,
    no_bias=True), data, offset, weight)
out['modulated_deformable_conv'] = [C.ModulatedDeformableConvolution(   # MXNet: no CPU backward
    data, offset, mask, weight, kernel=(3, 3), pad=(1, 1), num_filter=6, num_group=2,
    num_deformable_group=2, no_bias=True)]
boxes = mx.nd.array(rs.uniform(0, 10, (2, 6, 2)))
boxes = mx.nd.concat(boxes, boxes + arr(2, 6, 2, lo=1, hi=5), dim=2)
ids = mx.nd.array(rs.randint(0, 3, (2, 6, 1)).astype('float32'))
scores_b = arr(2, 6, 1)
dets = mx.nd.concat(ids, scores_b, boxes, dim=2)
out['box_iou'] = [C.box_iou(boxes[0], boxes[1]), C.box_iou(boxes, boxes[0], format='center')]
out['box_nms'] = grads(lambda d: C.box_nms(d, overlap_thresh=0.2, valid_thresh=0.1, topk=5,
                                           id_index=0, background_id=2), dets)
out['box_nms_force'] = [C.box_nms(dets, overlap_thresh=0.1, force_suppress=True,
                                  out_format='center')]
anchors = boxes[0:1] / 10
refs = boxes[1:2] / 10
out['box_encode'] = list(C.box_encode(mx.nd.array([[1, 0, 1, 1, 0, 1]]),
                                      mx.nd.array([[0, 1, 2, 5, 4, 3]]), anchors, refs,
                                      mx.nd.array([0.1, 0, -0.1, 0]),
                                      mx.nd.array([0.1, 0.1, 0.2, 0.2])))
deltas = arr(1, 6, 4, lo=-1)
out['box_decode'] = [C.box_decode(deltas, anchors, 0.1, 0.1, 0.2, 0.2),
                     C.box_decode(deltas * 20, anchors, 0.1, 0.1, 0.2, 0.2, clip=1.5,
                                  format='corner')]
out['bipartite_matching'] = list(C.bipartite_matching(arr(2, 5, 3), threshold=0.3)) + list(
    C.bipartite_matching(arr(5, 4), threshold=0.8, is_ascend=True, topk=2))
fmap = arr(1, 2, 3, 4)
out['multibox_prior'] = [C.MultiBoxPrior(fmap, sizes=(0.5, 0.25), ratios=(1, 2, 0.5)),
                         C.MultiBoxPrior(fmap, sizes=(0.9,), ratios=(3,), clip=True,
                                         steps=(0.2, 0.3), offsets=(0.2, 0.7))]
priors = out['multibox_prior'][0]                       # (1, 48, 4)
gt = mx.nd.array([[[1, 0.1, 0.1, 0.4, 0.5], [0, 0.5, 0.4, 0.9, 0.8], [-1, -1, -1, -1, -1]],
                  [[2, 0.2, 0.3, 0.6, 0.7], [-1, -1, -1, -1, -1], [-1, -1, -1, -1, -1]]])
logits = arr(2, 4, 48, lo=-2, hi=2)
out['multibox_target'] = list(C.MultiBoxTarget(priors, gt, logits, overlap_threshold=0.3))
out['multibox_target_mining'] = list(C.MultiBoxTarget(
    priors, gt, logits, overlap_threshold=0.4, negative_mining_ratio=3,
    negative_mining_thresh=0.4, minimum_negative_samples=2))
probs = mx.nd.softmax(arr(2, 4, 48, lo=-3, hi=3), axis=1)
locs = arr(2, 48 * 4, lo=-1)
out['multibox_detection'] = [C.MultiBoxDetection(probs, locs, priors, threshold=0.3),
                             C.MultiBoxDetection(probs, locs, priors, threshold=0.2,
                                                 force_suppress=True, nms_threshold=0.3,
                                                 nms_topk=10, clip=False)]
out['proposal'] = list(C.Proposal(arr(1, 12, 5, 6), arr(1, 24, 5, 6, lo=-0.3, hi=0.3),
                                  mx.nd.array([[70, 90, 1.0]]), scales=(2, 4), ratios=(0.5, 1, 2),
                                  feature_stride=16, rpn_pre_nms_top_n=50,
                                  rpn_post_nms_top_n=20, threshold=0.5, rpn_min_size=4,
                                  output_score=True))
out['instance_norm_single_cell'] = [mx.nd.InstanceNorm(arr(2, 3, 1), mx.nd.ones(3),
                                                       mx.nd.array([1, 2, 3]))]
'''


def _neomx_results():
    env = {'mx': mx}
    exec(_CASES, env)
    return {k: [v.asnumpy() for v in vs] for k, vs in env['out'].items()}


def test_contrib_and_vision_operators_match_mxnet(mxnet_ref, tmp_path):
    path = tmp_path / 'ref.npz'
    mxnet_ref('import mxnet as mx\n' + _CASES + '\nnp.savez(%r, **{"%%s_%%d" %% (k, i): '
              'v.asnumpy() for k, vs in out.items() for i, v in enumerate(vs)})' % str(path))
    ref = np.load(path)
    ours = _neomx_results()
    for name, values in ours.items():
        for i, v in enumerate(values):
            r = ref['%s_%d' % (name, i)]
            assert v.shape == r.shape and v.dtype == r.dtype, (name, i, v.shape, r.shape,
                                                              v.dtype, r.dtype)
            np.testing.assert_allclose(v.astype(np.float64), r.astype(np.float64), rtol=1e-4,
                                       atol=1e-4, err_msg='%s[%d]' % (name, i))


def test_adaptive_pooling_gradient_numerically():
    x = np.random.uniform(size=(1, 2, 4, 5))
    ref = nd.contrib.AdaptiveAvgPooling2D(nd.array(x), output_size=(2, 3)).asnumpy()
    check_op(lambda a: nd.contrib.AdaptiveAvgPooling2D(a, output_size=(2, 3)),
             lambda a: ref, [x])


def test_deformable_convolution_with_zero_offsets_is_convolution():
    x = nd.array(np.random.rand(2, 4, 6, 5))
    w = nd.array(np.random.rand(6, 2, 3, 3))
    b = nd.array(np.random.rand(6))
    off = nd.zeros((2, 2 * 2 * 9, 6, 5))
    y = nd.contrib.DeformableConvolution(x, off, w, b, kernel=(3, 3), pad=(1, 1), num_filter=6,
                                         num_group=2, num_deformable_group=2)
    ref = nd.Convolution(x, w, b, kernel=(3, 3), pad=(1, 1), num_filter=6, num_group=2)
    np.testing.assert_allclose(y.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-5)


def test_correlation_needs_room_for_its_window():
    a = nd.ones((1, 1, 28, 28))
    with pytest.raises(mx.MXNetError, match='do not fit'):
        nd.Correlation(a, a, kernel_size=28)
    assert nd.Correlation(a, a, kernel_size=9).shape == (1, 9, 18, 18)


def test_sync_batch_norm_and_batch_norm_v1_normalise_over_channels():
    x = nd.array(np.random.uniform(size=(4, 3, 2)))
    gamma, beta = nd.ones((3,)), nd.zeros((3,))
    mean, var = nd.zeros((3,)), nd.ones((3,))
    with mx.autograd.train_mode():
        a = nd.contrib.SyncBatchNorm(x, gamma, beta, mean, var, key='k', fix_gamma=False)
        b = nd.BatchNorm_v1(x, gamma, beta, mean.copy(), var.copy(), fix_gamma=False)
    xs = x.asnumpy()
    expect = (xs - xs.mean(axis=(0, 2), keepdims=True)) / np.sqrt(
        xs.var(axis=(0, 2), keepdims=True) + 1e-3)
    np.testing.assert_allclose(a.asnumpy(), expect, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b.asnumpy(), expect, rtol=1e-4, atol=1e-5)
    assert np.abs(mean.asnumpy()).sum() > 0        # the moving mean was updated in place


def test_sync_batch_norm_gives_the_batch_variance_where_batch_norm_gives_inverse_std():
    # As MXNet: SyncBatchNorm's output_mean_var outputs are the mean and the (biased)
    # variance of the batch; BatchNorm's are the mean and 1/sqrt(var + eps).
    x = nd.array(np.random.uniform(size=(4, 3, 5)))
    gamma, beta = nd.ones((3,)), nd.zeros((3,))
    xs = x.asnumpy()
    var = xs.var(axis=(0, 2))
    with mx.autograd.record():
        _, m, v = nd.contrib.SyncBatchNorm(x, gamma, beta, nd.zeros((3,)), nd.ones((3,)),
                                           key='v', eps=1e-5, output_mean_var=True)
        _, m2, inv = nd.BatchNorm(x, gamma, beta, nd.zeros((3,)), nd.ones((3,)), eps=1e-5,
                                  output_mean_var=True)
    np.testing.assert_allclose(m.asnumpy(), xs.mean(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(m2.asnumpy(), xs.mean(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(v.asnumpy(), var, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(inv.asnumpy(), 1 / np.sqrt(var + 1e-5), rtol=1e-4)


@pytest.mark.parametrize('classes,limit,plus', [(False, None, 0.0), (True, None, 0.0),
                                                (False, 40, 1.0)])
def test_blocked_suppression_is_greedy_suppression(classes, limit, plus):
    # Suppression takes the boxes a block at a time; it must keep exactly what one box at a
    # time (the textbook loop) keeps, across block boundaries too.
    import torch
    from neomx.ops.detection import _greedy_nms, _iou
    rs = np.random.RandomState(1)
    xy = rs.uniform(0, 50, (300, 2))
    boxes = torch.tensor(np.concatenate([xy, xy + rs.uniform(5, 30, (300, 2))], 1),
                         dtype=torch.float32)
    order = torch.tensor(rs.permutation(300))
    cls = torch.tensor(rs.randint(0, 3, 300)) if classes else None
    expect, dead = [], set()
    for i in order.tolist():
        if i in dead:
            continue
        expect.append(i)
        if limit is not None and len(expect) == limit:
            break
        over = _iou(boxes[i:i + 1], boxes, plus)[0] > 0.4
        if cls is not None:
            over &= cls == cls[i]
        dead.update(torch.nonzero(over).reshape(-1).tolist())
    for block in (7, 64, 1000):
        assert _greedy_nms(boxes, order, 0.4, cls, limit, plus, block=block) == expect
    assert len(expect) > 20 and len(dead) > 100     # a case where suppression does work


_TIES = '''
n = 40
scores = np.full(n, 0.5); scores[::7] = 0.9
boxes = np.stack([np.arange(n) * 10., np.zeros(n), np.arange(n) * 10. + 5, np.full(n, 5.)], 1)
data = mx.nd.array(np.concatenate([np.zeros((n, 1)), scores[:, None], boxes], 1)[None])
out = {}
out['topk'] = mx.nd.contrib.box_nms(data, overlap_thresh=0.5, topk=30, coord_start=2,
                                    score_index=1, id_index=0).asnumpy()
out['all'] = mx.nd.contrib.box_nms(data, overlap_thresh=0.5, coord_start=2, score_index=1,
                                   force_suppress=True).asnumpy()
rois = mx.nd.array([[0, -200, -200, -150, -150], [0, 2, 2, 9, 9], [0, -300, -300, -250, -250]])
out['roi_outside'] = mx.nd.contrib.ROIAlign(mx.nd.arange(2 * 64).reshape((1, 2, 8, 8)), rois,
                                            (2, 2), 1.0, sample_ratio=2).asnumpy()
'''


def test_box_nms_ties_keep_input_order_as_mxnet(mxnet_ref, tmp_path):
    # equal scores keep their input order (MXNet sorts stably), through topk as well; regions
    # entirely outside the map pool to zeros
    path = str(tmp_path / 'ties.npz')
    mxnet_ref('import mxnet as mx, numpy as np\n' + _TIES + 'np.savez(%r, **out)\n' % path)
    ref = np.load(path)
    scope = {'mx': mx, 'np': np}
    exec(_TIES, scope)
    for key, value in scope['out'].items():
        np.testing.assert_allclose(value, ref[key], rtol=1e-6, err_msg=key)


@pytest.mark.parametrize('mode,padding,align', [('bilinear', 'zeros', False),
                                                ('nearest', 'border', True),
                                                ('bicubic', 'reflection', False)])
def test_grid_sample(ctx, mode, padding, align):
    import torch
    data = np.random.RandomState(0).randn(2, 3, 5, 4)
    grid = np.random.RandomState(1).uniform(-1.2, 1.2, size=(2, 3, 6, 2))

    def ref(d, g):
        return torch.nn.functional.grid_sample(torch.from_numpy(d), torch.from_numpy(g),
                                               mode=mode, padding_mode=padding,
                                               align_corners=align).numpy()
    check_op(lambda d, g: nd._internal._grid_sample(d, g, mode=mode, padding_mode=padding,
                                                    align_corners=align),
             ref, [data, grid], ctx, wrt=[0] if mode == 'nearest' else [0, 1])
