"""MXNet's INT8 operators (quantize_v2, dequantize, requantize, quantized pooling and flatten,
the fused ``_sg_mkldnn_conv`` of its MKL-DNN build): their rules on hand-made values, and
graphs of them in MXNet's JSON run against real MXNet 1.9.1."""
import json

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

C = mx.nd.contrib


def _np(*xs):
    return [x.asnumpy() for x in xs]


# -- the operators' rules ----------------------------------------------------------------------

def test_quantize_v2_int8_maps_the_largest_magnitude_to_127_5():
    x = mx.nd.array([-2.0, -1.0, 0.0, 0.3, 1.0])
    q, lo, hi = _np(*C.quantize_v2(x, out_type='int8'))
    assert q.dtype == np.int8 and lo.tolist() == [-2.0] and hi.tolist() == [2.0]
    # x * 127.5 / 2, rounded, saturated at -128
    assert q.tolist() == [-128, -64, 0, 19, 64]


def test_quantize_v2_uint8_keeps_its_range_and_saturates_negatives():
    x = mx.nd.array([-1.0, 0.5, 2.0])
    q, lo, hi = _np(*C.quantize_v2(x, out_type='uint8'))
    assert q.dtype == np.uint8 and q.tolist() == [0, 64, 255]
    assert lo.tolist() == [-1.0] and hi.tolist() == [2.0]


def test_quantize_v2_auto_picks_the_type_from_the_calibrated_range():
    x = mx.nd.array([0.1, 0.9, 1.7])
    assert C.quantize_v2(x, out_type='auto')[0].dtype == np.int8       # no calibration
    q, lo, hi = C.quantize_v2(x, out_type='auto', min_calib_range=0.0, max_calib_range=1.0)
    assert q.dtype == np.uint8
    assert q.asnumpy().tolist() == [26, 230, 255]      # saturated beyond the calibrated range
    assert (lo.asnumpy().tolist(), hi.asnumpy().tolist()) == ([0.0], [1.0])
    q = C.quantize_v2(x, out_type='auto', min_calib_range=-0.5, max_calib_range=1.0)[0]
    assert q.dtype == np.int8 and q.asnumpy().tolist() == [13, 115, 127]


def test_dequantize_inverts_quantize_v2_within_half_a_step():
    x = np.random.RandomState(0).uniform(-3, 3, (4, 5)).astype(np.float32)
    for t, step in (('int8', 3 / 127.5), ('uint8', 3 / 255.5)):
        q, lo, hi = C.quantize_v2(mx.nd.array(x), out_type=t, min_calib_range=-3.0,
                                  max_calib_range=3.0)
        back = C.dequantize(q, lo, hi).asnumpy()
        kept = x if t == 'int8' else np.maximum(x, 0)
        assert np.abs(back - kept).max() <= step / 2 + 1e-6


def test_dequantize_refuses_int32_as_mxnet():
    q = mx.nd.array([1, 2], dtype='int32')
    with pytest.raises(MXNetError, match='dequantize: data must be int8 or uint8'):
        C.dequantize(q, mx.nd.array([-1.0]), mx.nd.array([1.0])).asnumpy()


def test_requantize_scales_int32_into_the_range_it_reaches_or_the_calibrated_one():
    big = 2 ** 31 - 1
    q = mx.nd.array([0, big // 4, -big // 2, big // 8], dtype='int32')
    # the int32 range stands for (-4, 4): values 0, 1, -2, 0.5
    out, lo, hi = _np(*C.requantize(q, mx.nd.array([-4.0]), mx.nd.array([4.0])))
    assert out.dtype == np.int8 and out.tolist() == [0, 64, -128, 32]
    assert np.allclose([lo[0], hi[0]], [-2, 2], rtol=1e-6)
    out, lo, hi = _np(*C.requantize(q, mx.nd.array([-4.0]), mx.nd.array([4.0]),
                                    min_calib_range=-1.0, max_calib_range=1.0))
    assert out.tolist() == [0, 127, -128, 64] and (lo[0], hi[0]) == (-1.0, 1.0)


def test_quantized_pooling_max_and_rounded_average_keep_the_range():
    q = mx.nd.array(np.arange(16).reshape(1, 1, 4, 4), dtype='uint8')
    lo, hi = mx.nd.array([0.0]), mx.nd.array([3.0])
    out, olo, ohi = _np(*C.quantized_pooling(q, lo, hi, kernel=(2, 2), stride=(2, 2),
                                             pool_type='max'))
    assert out.dtype == np.uint8 and out.ravel().tolist() == [5, 7, 13, 15]
    assert (olo[0], ohi[0]) == (0.0, 3.0)
    q = mx.nd.array([[[[1, 2], [2, 2]]]], dtype='int8')
    avg = C.quantized_pooling(q, lo, hi, kernel=(2, 2), pool_type='avg')[0].asnumpy()
    assert avg.dtype == np.int8 and avg.ravel().tolist() == [2]        # 1.75 rounds to 2


def test_quantized_flatten():
    q = mx.nd.array(np.arange(12).reshape(2, 3, 2), dtype='int8')
    out, lo, hi = C.quantized_flatten(q, mx.nd.array([-1.0]), mx.nd.array([1.0]))
    assert out.shape == (2, 6) and out.dtype == np.int8
    assert out.asnumpy().ravel().tolist() == list(range(12))


# -- graphs of MXNet's JSON --------------------------------------------------------------------

class _Graph:
    """Builds a symbol JSON document as MXNet's quantization passes write them."""

    def __init__(self):
        self.nodes = []

    def var(self, name):
        self.nodes.append({'op': 'null', 'name': name, 'inputs': []})
        return len(self.nodes) - 1

    def op(self, op, name, inputs, attrs=None, subgraph=None):
        node = {'op': op, 'name': name, 'inputs': [[i, k, 0] for i, k in inputs]}
        if attrs:
            node['attrs'] = {k: str(v) for k, v in attrs.items()}
        if subgraph is not None:
            node['subgraphs'] = [subgraph]
        self.nodes.append(node)
        return len(self.nodes) - 1

    def doc(self, heads):
        return {'nodes': self.nodes,
                'arg_nodes': [i for i, n in enumerate(self.nodes) if n['op'] == 'null'],
                'node_row_ptr': list(range(len(self.nodes) + 1)),
                'heads': [[i, k, 0] for i, k in heads]}


def _fused_conv(g, name, data, conv, bn=False, act=None, sum_=None, postsum_act=None,
                calib=None, legacy=False):
    """A quantized ``_sg_mkldnn_conv`` node reading ``data`` (a quantized (node, 3 outputs))
    with its subgraph: Convolution, BatchNorm, activation, elemwise_add, activation."""
    s = _Graph()
    x = s.var(name + '_data0')
    ins = [x, s.var(name + '_weight0')]
    node_inputs = [(data, 0), (g.var(name + '_weight'), 0)]
    if not conv.get('no_bias', False):
        ins.append(s.var(name + '_bias0'))
        node_inputs.append((g.var(name + '_bias'), 0))
    attrs = dict(conv)
    attrs.setdefault('no_bias', False)
    cur = s.op('Convolution', name + '_conv', [(i, 0) for i in ins], attrs)
    flags = {'quantized': 'true'}
    if bn:
        bn_ins = [s.var(name + '_' + p + '0') for p in ('gamma', 'beta', 'mean', 'var')]
        cur = s.op('BatchNorm', name + '_bn', [(cur, 0)] + [(i, 0) for i in bn_ins],
                   {'eps': 1e-3, 'fix_gamma': False})
        node_inputs += [(g.var(name + '_' + p), 0) for p in ('gamma', 'beta', 'mean', 'var')]
        flags['with_bn'] = 'true'
    if act:
        cur = s.op('Activation', name + '_act', [(cur, 0)], {'act_type': act})
        flags['with_relu' if legacy else 'with_act'] = 'true'
    if sum_ is not None:
        other = s.var(name + '_sum0')
        cur = s.op('elemwise_add', name + '_add', [(cur, 0), (other, 0)])
        node_inputs.append((sum_, 0))
        flags['with_sum'] = 'true'
    if postsum_act:
        cur = s.op('Activation', name + '_postact', [(cur, 0)], {'act_type': postsum_act})
        flags['with_postsum_relu' if legacy else 'with_postsum_act'] = 'true'
    node_inputs += [(data, 1), (data, 2)]
    if sum_ is not None:
        node_inputs += [(sum_, 1), (sum_, 2)]
    if calib is not None:
        flags['min_calib_range'], flags['max_calib_range'] = calib
    return g.op('_sg_mkldnn_conv', name, node_inputs, flags, s.doc([(cur, 0)]))


def _block(legacy):
    """Residual blocks of a quantized ResNet: int8 data; conv+bn+relu (uint8, ``a``); conv+bn
    (int8, ``b``); sums of the same type: conv+bn+``a``+relu (uint8, ``c``), conv+``b`` (int8,
    ``d``); sums of the other type: conv+bn+``b``+relu (uint8, ``e``), conv+``c`` (int8,
    ``f``); max and average pooling; dequantization."""
    g = _Graph()
    x = g.var('data')
    q = g.op('_contrib_quantize_v2', 'data_quantize', [(x, 0)], {'out_type': 'auto'})
    c3 = {'kernel': (3, 3), 'pad': (1, 1), 'num_filter': 6, 'no_bias': True}
    c1 = {'kernel': (1, 1), 'num_filter': 6}
    kw = {'legacy': legacy}
    a = _fused_conv(g, 'a', q, c3, bn=True, act='relu', calib=(0.0, 3.0), **kw)
    b = _fused_conv(g, 'b', a, c1, bn=True, calib=(-2.5, 2.0), **kw)
    c = _fused_conv(g, 'c', a, dict(c3, stride=(1, 1)), bn=True, sum_=a, postsum_act='relu',
                    calib=(0.0, 4.0), **kw)
    d = _fused_conv(g, 'd', b, c1, sum_=b, calib=(-3.0, 2.5), **kw)
    e = _fused_conv(g, 'e', a, c3, bn=True, sum_=b, postsum_act='relu', calib=(0.0, 4.0), **kw)
    f = _fused_conv(g, 'f', c, c1, sum_=c, calib=(-3.0, 5.0), **kw)
    p = g.op('_contrib_quantized_pooling', 'pool_max', [(d, 0), (d, 1), (d, 2)],
             {'kernel': (3, 3), 'stride': (2, 2), 'pad': (1, 1), 'pool_type': 'max'})
    v = g.op('_contrib_quantized_pooling', 'pool_avg', [(c, 0), (c, 1), (c, 2)],
             {'kernel': (2, 2), 'stride': (2, 2), 'pool_type': 'avg'})
    dp = g.op('_contrib_dequantize', 'dq_max', [(p, 0), (p, 1), (p, 2)])
    dv = g.op('_contrib_dequantize', 'dq_avg', [(v, 0), (v, 1), (v, 2)])
    heads = [(n, k) for n in (q, a, b, c, d, e, f) for k in range(3)] + [(dp, 0), (dv, 0)]
    return json.dumps(g.doc(heads))


def _unc_calibrated(out_type):
    """A quantized convolution without a calibrated output range: int32 results."""
    g = _Graph()
    q = g.op('_contrib_quantize_v2', 'data_quantize', [(g.var('data'), 0)],
             {'out_type': out_type, 'max_calib_range': 1.5,
              'min_calib_range': -1.5 if out_type == 'int8' else 0.0})
    c = _fused_conv(g, 'a', q, {'kernel': (3, 3), 'num_filter': 4}, act='relu')
    return json.dumps(g.doc([(c, 0), (c, 1), (c, 2)]))


def _params(sym, shape, seed):
    """Random arguments for ``sym`` (names and shapes from its own inference)."""
    rs = np.random.RandomState(seed)
    arg_shapes, _, aux_shapes = sym.infer_shape(data=shape)
    out = {}
    for name, s in zip(sym.list_arguments() + sym.list_auxiliary_states(),
                       arg_shapes + aux_shapes):
        if name == 'data':
            v = rs.uniform(-1, 1.5, s)
        elif name.endswith(('_gamma', '_var')):
            v = rs.uniform(0.5, 1.5, s)
        elif name.endswith(('_beta', '_mean', '_bias')):
            v = rs.uniform(-0.3, 0.3, s)
        else:
            v = rs.normal(0, 0.3, s)
        out[name] = v.astype(np.float32)
    return out


# Runs under MXNet and neomx alike: the graph in ``text`` on the arguments in ``params_file``.
_RUN = r'''
import numpy as np
sym = mx.sym.load_json(text)
p = dict(np.load(params_file))
args = {n: mx.nd.array(p[n]) for n in sym.list_arguments()}
aux = {n: mx.nd.array(p[n]) for n in sym.list_auxiliary_states()}
ex = sym.bind(mx.cpu(), args, aux_states=aux, grad_req='null')
outs = [o.asnumpy() for o in ex.forward(is_train=False)]
'''


def _run_here(text, params_file):
    scope = {'mx': mx, 'text': text, 'params_file': params_file}
    exec(_RUN, scope)
    return scope['outs']


def _run_mxnet(mxnet_ref, text, params_file, tmp_path):
    out, graph = str(tmp_path / 'ref.npz'), tmp_path / 'graph.json'
    graph.write_text(text)
    mxnet_ref('import mxnet as mx\ntext = open(%r).read()\nparams_file = %r\n'
              % (str(graph), params_file) + _RUN + 'np.savez(%r, *outs)\n' % out)
    ref = np.load(out)
    return [ref['arr_%d' % i] for i in range(len(ref.files))]


def _save_params(text, shape, seed, tmp_path):
    sym = mx.sym.load_json(text)
    path = str(tmp_path / 'params.npz')
    np.savez(path, **_params(sym, shape, seed))
    return path


@pytest.mark.parametrize('legacy', [False, True])
def test_quantized_block_runs_and_tracks_the_float_block(legacy, tmp_path):
    """The int8 blocks against the same blocks in float32: the dequantized results agree
    within a few quantization steps inside the calibrated ranges; where MKL-DNN writes into a
    sum of the other type, its range (an int8 sum under a uint8 output stops at 127)."""
    text = _block(legacy)
    path = _save_params(text, (1, 3, 8, 8), 0, tmp_path)
    values = _run_here(text, path)
    # (values, min, max) of each quantized node, in the order of the heads
    outs = {n: values[3 * i:3 * i + 3] for i, n in enumerate(['data_quantize'] + list('abcdef'))}
    assert [outs[n][0].dtype for n in 'abcdef'] == \
        [np.uint8, np.int8, np.uint8, np.int8, np.uint8, np.int8]
    doc = json.loads(text)
    calib = {n['name']: (float(n['attrs']['min_calib_range']),
                         float(n['attrs']['max_calib_range']))
             for n in doc['nodes'] if n['op'] == '_sg_mkldnn_conv'}
    p = {k: mx.nd.array(v) for k, v in np.load(path).items()}

    def conv(data, name, bn):
        k = 3 if p[name + '_weight'].shape[-1] == 3 else 1
        y = mx.nd.Convolution(data, p[name + '_weight'], p.get(name + '_bias'),
                              kernel=(k, k), pad=(k // 2, k // 2), num_filter=6,
                              no_bias=name + '_bias' not in p)
        if bn:
            y = mx.nd.BatchNorm(y, p[name + '_gamma'], p[name + '_beta'], p[name + '_mean'],
                                p[name + '_var'], eps=1e-3, fix_gamma=False,
                                use_global_stats=True)
        return y

    def real(name):         # a quantized output's values
        q, lo, hi = outs[name]
        step = max(abs(lo[0]), abs(hi[0])) / (255.5 if q.dtype == np.uint8 else 127.5)
        return mx.nd.array(q.astype(np.float32) * step), step

    # each node in float32 on the values its quantized inputs stand for
    x, a, b, c = (real(n)[0] for n in ('data_quantize', 'a', 'b', 'c'))
    floats = {'a': mx.nd.relu(conv(x, 'a', True)), 'b': conv(a, 'b', True),
              'c': mx.nd.relu(conv(a, 'c', True) + a), 'd': conv(b, 'd', False) + b,
              'e': mx.nd.relu(conv(a, 'e', True) + b), 'f': conv(c, 'f', False) + c}
    for name, ref in floats.items():
        q, step = real(name)
        q, ref = q.asnumpy(), ref.asnumpy()
        lo, hi = outs[name][1][0], outs[name][2][0]
        assert (lo, hi) == pytest.approx(calib[name])
        # where MKL-DNN wrote into a sum of the other type: an int8 sum under a uint8 output
        # stops at 127, a uint8 sum under an int8 output is non-negative
        top = 127 * step if name == 'e' else hi
        bottom = 0 if name == 'f' else lo
        inside = (ref > bottom) & (ref < top)
        assert inside.mean() > 0.3, name
        # the weights' quantization and the output's rounding: a few steps at most
        assert np.abs(q - ref)[inside].max() < 3 * step, name
        if name == 'e':
            assert q.max() <= 127 * step * 1.0001 and (ref > 127 * step).any()


def test_quantized_block_matches_mxnet(mxnet_ref, tmp_path):
    for legacy in (False, True):
        text = _block(legacy)
        path = _save_params(text, (2, 3, 9, 7), 1, tmp_path)
        ours = _run_here(text, path)
        ref = _run_mxnet(mxnet_ref, text, path, tmp_path)
        assert len(ours) == len(ref)
        names = mx.sym.load_json(text).list_outputs()
        for name, o, r in zip(names, ours, ref):
            assert o.shape == r.shape and o.dtype == r.dtype, (name, o.dtype, r.dtype)
            if o.dtype in (np.int8, np.uint8):
                diff = np.abs(o.astype(np.int64) - r.astype(np.int64))
                # the same integers, but for a rare rounding tie taken the other way
                assert diff.max() <= 1 and (diff > 0).mean() < 0.01, (name, diff.max())
            else:
                np.testing.assert_allclose(o, r, rtol=1e-5, atol=2e-2, err_msg=name)


@pytest.mark.parametrize('out_type', ['int8', 'uint8'])
def test_int32_convolution_without_calibration_matches_mxnet(mxnet_ref, tmp_path, out_type):
    text = _unc_calibrated(out_type)
    path = _save_params(text, (1, 2, 6, 6), 2, tmp_path)
    ours = _run_here(text, path)
    ref = _run_mxnet(mxnet_ref, text, path, tmp_path)
    assert ours[0].dtype == ref[0].dtype == np.int32
    np.testing.assert_array_equal(ours[0], ref[0])
    np.testing.assert_allclose(ours[1], ref[1], rtol=1e-6)
    np.testing.assert_allclose(ours[2], ref[2], rtol=1e-6)


def test_quantized_convolution_refuses_uint8_data_of_a_negative_range():
    text = _unc_calibrated('uint8')
    sym = mx.sym.load_json(text.replace('"min_calib_range": "0.0"', '"min_calib_range": "-0.5"'))
    args = {n: mx.nd.ones(s) for n, s in zip(sym.list_arguments(),
                                              sym.infer_shape(data=(1, 2, 5, 5))[0])}
    with pytest.raises(MXNetError, match='uint8 data .* range below 0'):
        sym.bind(mx.cpu(), args).forward()[0].asnumpy()


def test_fused_convolution_json_round_trip_keeps_its_subgraph(tmp_path):
    text = _block(False)
    sym = mx.sym.load_json(text)
    again = mx.sym.load_json(sym.tojson())
    assert again.list_arguments() == sym.list_arguments()
    assert again.list_auxiliary_states() == sym.list_auxiliary_states()
    path = _save_params(text, (1, 3, 8, 8), 3, tmp_path)
    for o, r in zip(_run_here(sym.tojson(), path), _run_here(text, path)):
        np.testing.assert_array_equal(o, r)


def test_quantize_v2_and_dequantize_match_mxnet(mxnet_ref, tmp_path):
    code = r'''
import numpy as np
rs = np.random.RandomState(0)
x = mx.nd.array(rs.normal(0, 1, (1000,)).astype(np.float32))
pos = mx.nd.array(rs.uniform(0.1, 2, (100,)).astype(np.float32))
out = []
for data in (x, pos):
    for kw in (dict(out_type='int8'), dict(out_type='uint8'), dict(out_type='auto'),
               dict(out_type='auto', min_calib_range=-0.7, max_calib_range=2.1),
               dict(out_type='auto', min_calib_range=0.0, max_calib_range=1.3),
               dict(out_type='uint8', min_calib_range=-0.5, max_calib_range=1.5)):
        q, lo, hi = mx.nd.contrib.quantize_v2(data, **kw)
        out += [q, lo, hi, mx.nd.contrib.dequantize(q, lo, hi)]
out = [o.asnumpy() for o in out]
'''
    path = str(tmp_path / 'q.npz')
    mxnet_ref('import mxnet as mx\n' + code + 'np.savez(%r, *out)\n' % path)
    ref = np.load(path)
    scope = {'mx': mx}
    exec(code, scope)
    for i, o in enumerate(scope['out']):
        r = ref['arr_%d' % i]
        assert o.dtype == r.dtype, (i, o.dtype, r.dtype)
        np.testing.assert_allclose(o.astype(np.float64), r.astype(np.float64), rtol=1e-6,
                                   atol=1e-7, err_msg=str(i))
