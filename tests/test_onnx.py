"""ONNX export of hybridized blocks, checked by running the models in onnxruntime."""
import numpy as np
import pytest

import neomx as mx
from neomx import initializer, nd
from neomx.base import MXNetError
from neomx.gluon import nn

onnx = pytest.importorskip('onnx')
ort = pytest.importorskip('onnxruntime')

from neomx.symbol.onnx import export_block, export_model  # noqa: E402


def run_onnx(path, **feeds):
    sess = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
    return sess.run(None, {k: v.astype(np.float32) for k, v in feeds.items()})


def test_mlp_matches_onnxruntime(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation='relu'), nn.Dense(8, activation='tanh'), nn.Dense(2))
    net.initialize(initializer.Xavier())
    net.hybridize()
    x = nd.random.normal(shape=(3, 5))
    y = net(x).asnumpy()
    path = export_block(net, str(tmp_path / 'mlp.onnx'))
    model = onnx.load(path)
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.input] == ['data']
    out, = run_onnx(path, data=x.asnumpy())
    np.testing.assert_allclose(out, y, rtol=1e-5, atol=1e-6)


def test_cnn_with_batchnorm_from_exported_files(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation('relu'),
            nn.MaxPool2D(2), nn.Conv2D(6, 3), nn.GlobalAvgPool2D(), nn.Flatten(), nn.Dense(3))
    net.initialize(initializer.Xavier())
    net.hybridize()
    x = nd.random.normal(shape=(2, 3, 8, 8))
    with mx.autograd.record():
        net(x)                      # move the BatchNorm statistics
    y = net(x).asnumpy()
    net.export(str(tmp_path / 'cnn'))
    path = export_model(str(tmp_path / 'cnn-symbol.json'), str(tmp_path / 'cnn-0000.params'),
                        [(2, 3, 8, 8)], np.float32, str(tmp_path / 'cnn.onnx'))
    onnx.checker.check_model(onnx.load(path))
    out, = run_onnx(path, data=x.asnumpy())
    np.testing.assert_allclose(out, y, rtol=1e-4, atol=1e-5)


def test_dynamic_batch_and_errors(tmp_path):
    data = mx.sym.var('data')
    sym = mx.sym.FullyConnected(data, num_hidden=3, name='fc')
    params = {'arg:fc_weight': nd.ones((3, 4)), 'arg:fc_bias': nd.zeros(3)}
    path = export_model(sym, params, [(2, 4)], np.float32, str(tmp_path / 'fc.onnx'),
                        dynamic=True)
    out, = run_onnx(path, data=np.ones((5, 4)))
    np.testing.assert_allclose(out, np.full((5, 3), 4.0))
    with pytest.raises(MXNetError, match='1 data inputs'):
        export_model(sym, params, [(2, 4), (1,)], np.float32, str(tmp_path / 'bad.onnx'))
    net = nn.Dense(2)
    with pytest.raises(MXNetError, match='hybridize'):
        export_block(net, str(tmp_path / 'x.onnx'))


def test_export_of_stable_sort_gather_along_axis_and_expm1(tmp_path):
    # torch's exporter has no form of these kernels' calls; export gives them ONNX's
    data = mx.sym.var('data')
    order = mx.sym.argsort(data, axis=1, is_ascend=False, dtype='int64')
    top = mx.sym._internal._npi_take_along_axis(data, order, axis=1)
    out = mx.sym.Group([top, mx.sym.expm1(data), mx.sym.sinh(data)])
    x = np.array([[1.0, 3.0, 3.0, -2.0], [0.5, 0.5, 0.5, 4.0]], dtype=np.float32)
    path = export_model(out, {}, [x.shape], np.float32, str(tmp_path / 'sort.onnx'),
                        opset_version=17)
    got = run_onnx(path, data=x)
    np.testing.assert_allclose(got[0], -np.sort(-x, axis=1))
    np.testing.assert_allclose(got[1], np.expm1(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], np.sinh(x), rtol=1e-5)


def test_export_keeps_input_and_output_names_torch_refuses(tmp_path):
    # ONNX models name tensors '0', '1': imported and exported again, the names stay
    x = mx.sym.var('0')
    out = mx.sym.relu(x, name='1')
    path = export_model(out, {}, [(2, 3)], np.float32, str(tmp_path / 'n.onnx'))
    model = onnx.load(path)
    assert [i.name for i in model.graph.input] == ['0']
    assert [o.name for o in model.graph.output] == ['1_output']
    got, = run_onnx(path, **{'0': -np.ones((2, 3))})
    assert (got == 0).all()
