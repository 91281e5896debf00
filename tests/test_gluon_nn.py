"""gluon.nn layers: shapes, default initialisers, train/predict behaviour, reprs, and a
differential run against MXNet 1.9.1 (same weights and inputs in, same outputs, gradients,
running statistics and reprs out)."""
import contextlib
import io
import json
import textwrap

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon, nd
from neomx.gluon import nn


def test_dense_defaults_and_flatten():
    layer = nn.Dense(4, in_units=6)
    layer.initialize()
    assert layer.weight.shape == (4, 6) and (layer.bias.data().asnumpy() == 0).all()
    assert layer(nd.ones((2, 3, 2))).shape == (2, 4)
    seq = nn.Dense(4, flatten=False, in_units=2)
    seq.initialize()
    assert seq(nd.ones((2, 3, 2))).shape == (2, 3, 4)
    nobias = nn.Dense(3, use_bias=False, in_units=2)
    assert nobias.bias is None and list(nobias.collect_params()) == [nobias.prefix + 'weight']
    half = nn.Dense(3, in_units=2, dtype='float64')
    half.initialize()
    assert half(nd.ones((1, 2), dtype='float64')).dtype == np.float64


def test_default_initialisers_follow_names():
    bn = nn.BatchNorm(in_channels=3)
    bn.initialize(mx.init.Normal(1.0))
    assert (bn.gamma.data().asnumpy() == 1).all() and (bn.beta.data().asnumpy() == 0).all()
    assert (bn.running_mean.data().asnumpy() == 0).all()
    assert (bn.running_var.data().asnumpy() == 1).all()
    conv = nn.Conv2D(4, 3, in_channels=2, weight_initializer=mx.init.Constant(0.5),
                     bias_initializer='ones')
    conv.initialize()
    assert (conv.weight.data().asnumpy() == 0.5).all() and (conv.bias.data().asnumpy() == 1).all()
    prelu = nn.PReLU()
    prelu.initialize()
    assert prelu.alpha.data().asnumpy().tolist() == [0.25]


def test_batchnorm_train_and_predict():
    bn = nn.BatchNorm(in_channels=2, momentum=0.5)
    bn.initialize()
    x = nd.array(np.random.RandomState(0).randn(8, 2, 3, 3) * 3 + 1)
    xm = x.asnumpy()
    y = bn(x)                       # predict: running statistics (0 and 1)
    np.testing.assert_allclose(y.asnumpy(), xm / np.sqrt(1 + 1e-5), rtol=1e-5)
    assert (bn.running_mean.data().asnumpy() == 0).all()
    with autograd.record():
        y = bn(x)                   # training: batch statistics, running ones move
    assert abs(y.asnumpy().mean()) < 1e-5 and abs(y.asnumpy().std() - 1) < 1e-2
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(),
                               0.5 * xm.mean(axis=(0, 2, 3)), rtol=1e-5)
    np.testing.assert_allclose(bn.running_var.data().asnumpy(),
                               0.5 + 0.5 * xm.var(axis=(0, 2, 3)), rtol=1e-5)
    frozen = nn.BatchNorm(in_channels=2, use_global_stats=True)
    frozen.initialize()
    with autograd.record():
        y = frozen(x)
    np.testing.assert_allclose(y.asnumpy(), xm / np.sqrt(1 + 1e-5), rtol=1e-5)
    assert frozen.running_mean.grad_req == 'null'
    noscale = nn.BatchNorm(scale=False, center=False, in_channels=2)
    assert noscale.gamma.grad_req == 'null' and noscale.beta.grad_req == 'null'
    noscale.gamma.grad_req = 'write'
    assert noscale.gamma.grad_req == 'null'        # not differentiable
    bn.cast('float16')
    assert bn.gamma.data().dtype == np.float32      # BatchNorm stays in float32


def test_dropout_layer():
    drop = nn.Dropout(0.5)
    x = nd.ones((100, 100))
    assert (drop(x).asnumpy() == 1).all()
    with autograd.record():
        y = drop(x).asnumpy()
    assert 0.4 < (y == 0).mean() < 0.6 and set(np.unique(y)) <= {0.0, 2.0}
    assert (nn.Dropout(0)(x).asnumpy() == 1).all()
    with autograd.record():
        y = nn.Dropout(0.5, axes=(1,))(x).asnumpy()
    assert (y == y[:, :1]).all()


@pytest.mark.parametrize('layer,shape,out_shape', [
    (lambda: nn.Conv1D(3, 3, in_channels=2), (2, 2, 7), (2, 3, 5)),
    (lambda: nn.Conv2D(3, (3, 2), strides=2, padding=1, dilation=(1, 2), in_channels=2),
     (2, 2, 7, 7), (2, 3, 4, 4)),
    (lambda: nn.Conv3D(3, 2, in_channels=2), (1, 2, 3, 4, 5), (1, 3, 2, 3, 4)),
    (lambda: nn.Conv2D(4, 3, groups=2, in_channels=2), (1, 2, 5, 5), (1, 4, 3, 3)),
    (lambda: nn.Conv2D(3, 3, layout='NHWC', in_channels=2), (1, 5, 5, 2), (1, 3, 3, 3)),
    (lambda: nn.Conv1DTranspose(3, 3, strides=2, in_channels=2), (2, 2, 4), (2, 3, 9)),
    (lambda: nn.Conv2DTranspose(3, 4, strides=2, padding=1, in_channels=2), (1, 2, 5, 5),
     (1, 3, 10, 10)),
    (lambda: nn.Conv3DTranspose(2, 2, strides=2, in_channels=1), (1, 1, 2, 2, 2),
     (1, 2, 4, 4, 4)),
    (lambda: nn.MaxPool1D(), (1, 2, 8), (1, 2, 4)),
    (lambda: nn.MaxPool2D(3, 2, 1), (1, 2, 8, 8), (1, 2, 4, 4)),
    (lambda: nn.MaxPool2D(3, 2, ceil_mode=True), (1, 2, 8, 8), (1, 2, 4, 4)),
    (lambda: nn.MaxPool3D(), (1, 1, 4, 4, 4), (1, 1, 2, 2, 2)),
    (lambda: nn.AvgPool1D(3), (1, 2, 9), (1, 2, 3)),
    (lambda: nn.AvgPool2D(), (1, 2, 8, 8), (1, 2, 4, 4)),
    (lambda: nn.AvgPool3D(2), (1, 1, 4, 4, 4), (1, 1, 2, 2, 2)),
    (lambda: nn.GlobalMaxPool1D(), (1, 2, 7), (1, 2, 1)),
    (lambda: nn.GlobalAvgPool2D(), (2, 3, 5, 4), (2, 3, 1, 1)),
    (lambda: nn.GlobalMaxPool3D(), (1, 2, 3, 3, 3), (1, 2, 1, 1, 1)),
    (lambda: nn.GlobalAvgPool3D(), (1, 2, 3, 3, 3), (1, 2, 1, 1, 1)),
    (lambda: nn.GlobalMaxPool2D(), (1, 2, 3, 3), (1, 2, 1, 1)),
    (lambda: nn.GlobalAvgPool1D(), (1, 2, 3), (1, 2, 1)),
    (lambda: nn.MaxPool2D(layout='NHWC'), (1, 4, 4, 3), (1, 2, 2, 3)),
    (lambda: nn.Flatten(), (2, 3, 4), (2, 12)),
    (lambda: nn.Embedding(10, 4), (2, 3), (2, 3, 4)),
    (lambda: nn.InstanceNorm(in_channels=3), (2, 3, 4), (2, 3, 4)),
    (lambda: nn.LayerNorm(), (2, 3, 4), (2, 3, 4)),
    (lambda: nn.GroupNorm(num_groups=2), (2, 4, 3), (2, 4, 3)),
    (lambda: nn.Identity(), (2, 3), (2, 3)),
    (lambda: nn.ReflectionPad2D(1), (1, 1, 3, 3), (1, 1, 5, 5)),
])
def test_layer_shapes(layer, shape, out_shape):
    blk = layer()
    blk.initialize()
    x = nd.array(np.random.RandomState(0).randint(0, 9, size=shape))
    assert blk(x).shape == out_shape


def test_deferred_conv_and_norm_shapes():
    conv = nn.Conv2DTranspose(5, 3, groups=1)
    conv.initialize()
    conv(nd.ones((1, 7, 4, 4)))
    assert conv.weight.shape == (7, 5, 3, 3)
    ln = nn.LayerNorm(axis=1)
    ln.initialize()
    ln(nd.ones((2, 6, 3)))
    assert ln.gamma.shape == (6,)


def test_activation_layers():
    x = nd.array([-2.0, -0.5, 0.0, 1.5])
    xs = x.asnumpy()
    assert np.allclose(nn.Activation('relu')(x).asnumpy(), np.maximum(xs, 0))
    assert np.allclose(nn.LeakyReLU(0.1)(x).asnumpy(), np.where(xs > 0, xs, 0.1 * xs))
    assert np.allclose(nn.ELU(0.5)(x).asnumpy(), np.where(xs > 0, xs, 0.5 * np.expm1(xs)))
    assert np.allclose(nn.Swish(2.0)(x).asnumpy(), xs / (1 + np.exp(-2 * xs)), atol=1e-6)
    selu = nn.SELU()(x).asnumpy()
    assert np.allclose(selu[-1], 1.0507009873554805 * 1.5)
    gelu = nn.GELU()(x).asnumpy()
    assert abs(gelu[-1] - 1.5 * 0.9331927987311419) < 1e-5
    prelu = nn.PReLU(in_channels=3)
    prelu.initialize()
    with autograd.record():
        y = prelu(nd.array(-np.ones((2, 3))))
    y.backward()
    np.testing.assert_allclose(prelu.alpha.grad().asnumpy(), [-2, -2, -2])
    with pytest.raises(mx.MXNetError, match='no less than 0'):
        nn.LeakyReLU(-1)


def test_concatenate():
    net = nn.HybridConcatenate(axis=1)
    net.add(nn.Dense(2, in_units=3), nn.Dense(4, in_units=3))
    net.initialize()
    assert net(nd.ones((5, 3))).shape == (5, 6)
    seq = nn.Concatenate(axis=0)
    seq.add(nn.Identity(), nn.Identity())
    assert seq(nd.ones((2, 3))).shape == (4, 3)


# -- differential: the same layers under real MXNet 1.9.1 -------------------------------------

# Run by both frameworks (``mx`` and ``nn`` bound to mxnet or neomx): each layer gets the same
# parameters and inputs; outputs, input gradients, parameter gradients, running statistics
# and reprs are collected.
_LAYERS = textwrap.dedent('''
    import numpy as np
    rs = np.random.RandomState(0)
    out, reprs = {}, {}

    def run(name, layer, shape, train=True, ints=False, grads=True):
        layer.initialize()
        if globals().get('HYBRIDIZE'):
            layer.hybridize()
        x = (rs.randint(0, 10, size=shape) if ints else rs.randn(*shape)).astype('float32')
        x = mx.nd.array(x)
        layer(x)        # finishes deferred initialisation
        for p in layer.collect_params().values():
            if p.name.endswith('gamma') and p.grad_req == 'null':
                continue    # a fixed gamma stays 1 (MXNet writes 1 into it in backward)
            v = rs.randn(*p.shape).astype('float32') * 0.5
            if p.name.endswith('running_var'):
                v = np.abs(v) + 0.5
            p.set_data(mx.nd.array(v))
        if not ints:
            x.attach_grad()
        with mx.autograd.record(train_mode=train):
            y = layer(x)
        out[name] = y.asnumpy()
        if grads:
            hg = np.linspace(-1, 1, y.size).reshape(y.shape).astype('float32')
            y.backward(mx.nd.array(hg), train_mode=train)
            if not ints:
                out[name + ':dx'] = x.grad.asnumpy()
            for p in layer.collect_params().values():
                key = name + ':' + p.name[len(layer.prefix):]
                if p.grad_req != 'null':
                    out[key + ':grad'] = p.grad().asnumpy()
                else:
                    out[key] = p.data().asnumpy()
        reprs[name] = repr(layer)

    run('dense', nn.Dense(5, activation='tanh'), (3, 4))
    run('dense_noflatten', nn.Dense(3, flatten=False, use_bias=False), (2, 3, 4))
    run('conv2d', nn.Conv2D(3, 3, strides=2, padding=1), (2, 2, 7, 7))
    run('conv2d_groups', nn.Conv2D(4, (3, 2), dilation=(2, 1), groups=2, activation='relu'),
        (1, 2, 7, 6))
    run('conv1d', nn.Conv1D(2, 3, padding=1), (2, 3, 6))
    run('conv2d_transpose', nn.Conv2DTranspose(3, 3, strides=2, padding=1, output_padding=1),
        (2, 2, 4, 4))
    run('batchnorm_train', nn.BatchNorm(momentum=0.8), (4, 3, 3, 3))
    run('batchnorm_predict', nn.BatchNorm(), (4, 3, 3, 3), train=False)
    run('batchnorm_noscale', nn.BatchNorm(scale=False, axis=-1), (4, 5, 3))
    run('maxpool', nn.MaxPool2D(3, 2, 1, ceil_mode=True), (1, 2, 7, 7))
    run('avgpool', nn.AvgPool2D(3, 2, 1, count_include_pad=False), (1, 2, 7, 7))
    run('avgpool_full', nn.AvgPool2D(2, ceil_mode=True), (1, 2, 5, 5))
    run('globalavgpool', nn.GlobalAvgPool2D(), (2, 3, 4, 4))
    run('embedding', nn.Embedding(10, 4), (2, 3), ints=True)
    run('layernorm', nn.LayerNorm(), (2, 3, 5))
    run('instancenorm', nn.InstanceNorm(scale=True), (2, 3, 5))
    run('groupnorm', nn.GroupNorm(num_groups=2), (2, 4, 3))
    run('prelu', nn.PReLU(), (2, 3))
    run('elu', nn.ELU(0.7), (2, 3))
    run('gelu', nn.GELU(), (2, 3))
    run('swish', nn.Swish(), (2, 3))
    run('selu', nn.SELU(), (2, 3), grads=False)     # MXNet's selu gradient is off (see ops)
    run('flatten', nn.Flatten(), (2, 3, 2))
    run('sequential', nn.HybridSequential(), (2, 3))
''')


def _neomx_layers(hybridize=False):
    scope = {'mx': mx, 'nn': nn, 'HYBRIDIZE': hybridize}
    exec(_LAYERS, scope)
    return scope['out'], scope['reprs']


def test_hybridized_layers_match_imperative():
    eager, _ = _neomx_layers()
    compiled, _ = _neomx_layers(hybridize=True)
    assert sorted(eager) == sorted(compiled)
    for key, value in eager.items():
        np.testing.assert_allclose(compiled[key], value, rtol=1e-5, atol=1e-6, err_msg=key)


def test_layers_match_mxnet(tmp_path, mxnet_ref):
    path = str(tmp_path / 'ref')
    mxnet_ref("import mxnet as mx, json\nfrom mxnet.gluon import nn\n" + _LAYERS +
              "\nnp.savez(%r, **out)\njson.dump(reprs, open(%r, 'w'))\n"
              % (path + '.npz', path + '.json'))
    ref = dict(np.load(path + '.npz'))
    ref_reprs = json.load(open(path + '.json'))
    ours, our_reprs = _neomx_layers()
    assert sorted(ours) == sorted(ref)
    for key, value in ref.items():
        np.testing.assert_allclose(ours[key], value, rtol=1e-4, atol=1e-5, err_msg=key)
    assert our_reprs == ref_reprs


# -- a layer's _kwargs are read at each call, as MXNet does ---------------------------------------

def _conv_ref(x, weight, bias, **kw):
    return nd.Convolution(x, weight, bias, kernel=(3, 3), num_filter=4, **kw).asnumpy()


@pytest.mark.parametrize('hybridize', [False, True])
def test_conv_kwargs_changed_after_building(hybridize):
    # code built on MXNet changes a layer's settings after building it (GluonCV's SSD on a
    # ResNet sets conv1._kwargs['stride'] = (1, 1)); the next call uses them
    conv = nn.Conv2D(4, 3, strides=2, in_channels=2)
    conv.initialize()
    x = nd.random.normal(shape=(1, 2, 6, 6))
    assert conv(x).shape == (1, 4, 2, 2)
    conv._kwargs['stride'] = (1, 1)
    if hybridize:
        conv.hybridize()
    w, b = conv.weight.data(), conv.bias.data()
    np.testing.assert_allclose(conv(x).asnumpy(), _conv_ref(x, w, b, stride=(1, 1)), rtol=1e-5,
                               atol=1e-6)
    # another dict in place of _kwargs, and a change to that dict
    conv._kwargs = dict(conv._kwargs, pad=(1, 1))
    conv.hybridize(active=False)
    np.testing.assert_allclose(conv(x).asnumpy(), _conv_ref(x, w, b, pad=(1, 1)), rtol=1e-5,
                               atol=1e-6)
    conv._kwargs['dilate'] = (2, 2)
    np.testing.assert_allclose(conv(x).asnumpy(),
                               _conv_ref(x, w, b, pad=(1, 1), dilate=(2, 2)), rtol=1e-5,
                               atol=1e-6)


def test_layer_kwargs_reach_symbols_and_pooling_batchnorm():
    pool = nn.MaxPool2D(2)
    pool._kwargs.update(stride=(1, 1))
    assert pool(nd.ones((1, 1, 4, 4))).shape == (1, 1, 3, 3)
    conv = nn.Conv2D(3, 3, strides=2)
    conv._kwargs['stride'] = (1, 1)
    out = conv(mx.sym.var('data'))
    assert out.infer_shape(data=(1, 2, 5, 5))[1][0] == (1, 3, 3, 3)
    attrs = {n['name']: n.get('attrs', {}) for n in json.loads(out.tojson())['nodes']}
    assert attrs[conv.name + '_fwd']['stride'] == '(1, 1)'
    bn = nn.BatchNorm(in_channels=2)
    bn.initialize()
    bn.running_mean.set_data(nd.array([1.0, -1.0]))
    x = nd.zeros((1, 2, 1, 1))
    with autograd.record(train_mode=True):
        batch_stats = bn(x).asnumpy()
    bn._kwargs['use_global_stats'] = True
    mean, var = bn.running_mean.data().asnumpy(), bn.running_var.data().asnumpy()
    with autograd.record(train_mode=True):
        global_stats = bn(x).asnumpy()
    np.testing.assert_allclose(batch_stats.ravel(), [0, 0], atol=1e-6)
    np.testing.assert_allclose(global_stats.ravel(), -mean / np.sqrt(var + 1e-5), rtol=1e-4)
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(), mean)     # not updated


def test_layer_kwargs_changed_match_mxnet(mxnet_ref):
    code = textwrap.dedent('''
        from mxnet.gluon import nn
        conv = nn.Conv2D(4, 3, strides=2, padding=1)
        conv._kwargs['stride'] = (1, 1)
        pool = nn.AvgPool2D(3)
        pool._kwargs['pad'] = (1, 1)
        for blk in (conv, pool):
            blk.initialize()
            print(blk(mx.nd.ones((1, 2, 7, 7))).shape)
    ''')
    ref = mxnet_ref('import mxnet as mx\n' + code)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(code.replace('from mxnet.', 'from neomx.'), {'mx': mx})
    out = buf.getvalue()
    assert out == ref
