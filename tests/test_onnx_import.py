"""ONNX import (mx.contrib.onnx): models exported by PyTorch and by neomx itself imported
into Symbols and SymbolBlocks, checked against onnxruntime; fine-tuning and exporting them
again; the errors for what cannot be imported; ONNX's own backend tests (a bounded part)."""
import warnings

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon, nd
from neomx.base import MXNetError

onnx = pytest.importorskip('onnx')
ort = pytest.importorskip('onnxruntime')
torch = pytest.importorskip('torch')

from neomx.contrib.onnx import backend, backend_suite  # noqa: E402
from neomx.contrib.onnx.onnx2mx.import_onnx import ONNXImportError  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402


def ort_run(path, feeds):
    sess = ort.InferenceSession(str(path), providers=['CPUExecutionProvider'])
    return sess.run(None, feeds)


def torch_export(model, args, path, **kwargs):
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        torch.onnx.export(model, args, str(path), dynamo=False, **kwargs)
    return str(path)


def run_imported(path, feeds):
    sym, arg_params, aux_params = mx.contrib.onnx.import_model(path)
    args = dict(arg_params)
    args.update({k: nd.array(v, dtype=v.dtype) for k, v in feeds.items()})
    ex = sym.bind(mx.cpu(), args, aux_states=aux_params, grad_req='null')
    return [o.asnumpy() for o in ex.forward()], sym, arg_params, aux_params


# -- models exported by PyTorch ------------------------------------------------------------

class _CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.f = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 16, 3, stride=2), torch.nn.ReLU(),
            torch.nn.AvgPool2d(2, ceil_mode=True), torch.nn.Flatten(),
            torch.nn.Linear(16 * 4 * 4, 32), torch.nn.ReLU(), torch.nn.Dropout(0.5),
            torch.nn.Linear(32, 10))

    def forward(self, x):
        return torch.softmax(self.f(x), -1)


class _Residual(torch.nn.Module):
    def __init__(self, c, stride):
        super().__init__()
        o = c * stride
        self.c1 = torch.nn.Conv2d(c, o, 3, stride, 1, bias=False)
        self.b1 = torch.nn.BatchNorm2d(o)
        self.c2 = torch.nn.Conv2d(o, o, 3, 1, 1, bias=False)
        self.b2 = torch.nn.BatchNorm2d(o)
        self.down = torch.nn.Identity() if stride == 1 else torch.nn.Sequential(
            torch.nn.Conv2d(c, o, 1, stride, bias=False), torch.nn.BatchNorm2d(o))

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        return torch.relu(self.b2(self.c2(y)) + self.down(x))


class _ResNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 7, 2, 3, bias=False),
                                        torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                        torch.nn.MaxPool2d(3, 2, 1))
        self.blocks = torch.nn.Sequential(_Residual(8, 1), _Residual(8, 2))
        self.fc = torch.nn.Linear(16, 5)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


class _Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(50, 32)
        layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.out = torch.nn.Linear(32, 3)

    def forward(self, ids):
        return self.out(self.enc(self.emb(ids)).mean(1))


class _LSTM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = torch.nn.Linear(32, 4)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


class _GRU(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.GRU(6, 10)

    def forward(self, x):
        return self.rnn(x)[0]


class _UNet(torch.nn.Module):
    """Down and up again: strided convolution, max pooling, bilinear and nearest upsampling
    (ONNX Resize), a transposed convolution, concatenations."""

    def __init__(self):
        super().__init__()
        self.down = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.mid = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.up = torch.nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.out = torch.nn.Conv2d(4 + 8 + 3, 2, 1)

    def forward(self, x):
        d = torch.relu(self.down(x))
        m = torch.relu(self.mid(torch.nn.functional.max_pool2d(d, 2)))
        near = torch.nn.functional.interpolate(m, scale_factor=4, mode='nearest')
        bil = torch.nn.functional.interpolate(d, size=x.shape[2:], mode='bilinear',
                                              align_corners=False)
        up = torch.nn.functional.interpolate(self.up(m), scale_factor=2, mode='bilinear',
                                             align_corners=True)
        return self.out(torch.cat([up, bil[:, :8] + near, x], 1))


def _random_statistics(model):
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) - 0.5)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
    return model


# name, model, input, export keywords, tolerance (rtol, atol) against onnxruntime
_TORCH_MODELS = [
    ('cnn', _CNN, lambda: torch.randn(2, 3, 32, 32), {}, (1e-5, 1e-6)),
    # do_constant_folding=False keeps the BatchNormalization nodes (folded into the
    # convolutions otherwise): their running statistics become aux_params
    ('resnet', lambda: _random_statistics(_ResNet()), lambda: torch.randn(2, 3, 32, 32),
     {'do_constant_folding': False}, (1e-4, 1e-5)),
    ('encoder', _Encoder, lambda: torch.randint(0, 50, (2, 7)), {}, (1e-4, 1e-5)),
    ('lstm', _LSTM, lambda: torch.randn(3, 5, 8), {}, (1e-5, 1e-6)),
    ('gru', _GRU, lambda: torch.randn(4, 2, 6), {}, (1e-5, 1e-6)),
    ('unet', _UNet, lambda: torch.randn(1, 3, 16, 16), {}, (1e-5, 1e-5)),
]


# Each model exported for several opsets: the older forms of operators (Slice, Pad, Squeeze,
# Clip, Split, reductions with attributes instead of inputs) go through the same converters.
# (torch writes the encoder's attention from opset 15, the recurrent layers from opset 9;
# its align_corners upsampling from opset 11.)
_OPSETS = {'cnn': (7, 11, 17), 'resnet': (9, 13, 20), 'encoder': (15, 18),
           'lstm': (9, 14, 17), 'gru': (11, 17), 'unet': (11, 13, 17)}


@pytest.mark.parametrize('name,make,data,kwargs,tol,opset',
                         [m + (v,) for m in _TORCH_MODELS for v in _OPSETS[m[0]]],
                         ids=['%s-opset%d' % (m[0], v) for m in _TORCH_MODELS
                              for v in _OPSETS[m[0]]])
def test_pytorch_models_match_onnxruntime(tmp_path, name, make, data, kwargs, tol, opset):
    torch.manual_seed(0)
    model, x = make(), data()
    path = torch_export(model, (x,), tmp_path / (name + '.onnx'), input_names=['x'],
                        output_names=['y'], opset_version=opset, **kwargs)
    ref, = ort_run(path, {'x': x.numpy()})
    (out,), sym, arg_params, aux_params = run_imported(path, {'x': x.numpy()})
    np.testing.assert_allclose(out, ref, rtol=tol[0], atol=tol[1])
    assert 'x' in sym.list_inputs()
    assert set(arg_params) | set(aux_params) == set(sym.list_inputs()) - {'x'}
    if name == 'resnet':
        # BatchNorm's running statistics are auxiliary states, as in MXNet
        assert len(aux_params) == 2 * 6      # six BatchNorms
        assert all(k.endswith(('running_mean', 'running_var')) for k in aux_params)


def test_dynamic_batch_imports_as_shape_polymorphic_symbol(tmp_path):
    # a Flatten and a Gemm under a free batch dimension: MXNet's Flatten and FullyConnected
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.Flatten(),
                                torch.nn.Linear(3 * 4 * 4, 5))
    x = torch.randn(2, 2, 6, 6)
    path = torch_export(model, (x,), tmp_path / 'dyn.onnx', input_names=['x'],
                        output_names=['y'], dynamic_axes={'x': {0: 'n'}, 'y': {0: 'n'}})
    for batch in (1, 4):
        xb = np.random.RandomState(batch).randn(batch, 2, 6, 6).astype(np.float32)
        (out,), _, _, _ = run_imported(path, {'x': xb})
        np.testing.assert_allclose(out, ort_run(path, {'x': xb})[0], rtol=1e-5, atol=1e-6)


# -- models exported by neomx, imported again ----------------------------------------------

@pytest.mark.parametrize('name', ['resnet18_v1', 'mobilenet0.25', 'mobilenetv2_0.25'])
def test_model_zoo_round_trip(tmp_path, name):
    from neomx.gluon.model_zoo import vision
    from neomx.symbol.onnx import export_block
    net = vision.get_model(name, classes=10)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = nd.random.uniform(shape=(1, 3, 64, 64))
    with autograd.record():             # move the BatchNorm statistics off 0 and 1
        net(x)
    y = net(x).asnumpy()
    path = export_block(net, str(tmp_path / 'net.onnx'))
    ref, = ort_run(path, {'data': x.asnumpy()})
    (out,), _, _, _ = run_imported(path, {'data': x.asnumpy()})
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out, y, rtol=1e-4, atol=1e-5)


# -- import_to_gluon: hybridize, fine-tune, export again -----------------------------------

def _small_net_file(tmp_path):
    model = _random_statistics(torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 2)))
    x = torch.randn(4, 3, 8, 8)
    return torch_export(model, (x,), tmp_path / 'small.onnx', input_names=['x'],
                        output_names=['y'], do_constant_folding=False), x.numpy()


def test_import_to_gluon_hybridizes_fine_tunes_and_exports_again(tmp_path):
    path, x = _small_net_file(tmp_path)
    ref, = ort_run(path, {'x': x})
    net = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    assert isinstance(net, gluon.SymbolBlock)
    net.hybridize()
    xs = nd.array(x)
    np.testing.assert_allclose(net(xs).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    # fine-tuning: gradients reach every weight, SGD steps lower the loss
    params = net.collect_params()
    weights = [p for p in params.values() if p.grad_req != 'null']
    aux = [p for p in params.values() if p.grad_req == 'null']
    assert len(aux) == 2            # the BatchNorm's running mean and variance
    trainer = gluon.Trainer(params, 'sgd', {'learning_rate': 0.1})
    label = nd.array([0, 1, 0, 1])
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    losses = []
    for _ in range(5):
        with autograd.record():
            loss = loss_fn(net(xs), label)
        loss.backward()
        assert all(np.abs(p.grad().asnumpy()).sum() > 0 for p in weights)
        trainer.step(4)
        losses.append(float(loss.mean().asscalar()))
    assert losses[-1] < losses[0]
    after = net(xs).asnumpy()
    # exported to -symbol.json and .params, loaded back
    net.export(str(tmp_path / 'tuned'))
    back = gluon.SymbolBlock.imports(str(tmp_path / 'tuned-symbol.json'), ['x'],
                                     str(tmp_path / 'tuned-0000.params'))
    np.testing.assert_allclose(back(xs).asnumpy(), after, rtol=1e-5, atol=1e-6)
    # and to ONNX again
    from neomx.symbol.onnx import export_block
    again = export_block(net, str(tmp_path / 'tuned.onnx'))
    np.testing.assert_allclose(ort_run(again, {'x': x})[0], after, rtol=1e-5, atol=1e-6)


def test_get_model_metadata(tmp_path):
    path, x = _small_net_file(tmp_path)
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta == {'input_tensor_data': [('x', (4, 3, 8, 8), TensorProto.FLOAT)],
                    'output_tensor_data': [('y', (4, 2))]}


def test_mxnet_names():
    # MXNet 1.9.1's names: mx.contrib.onnx's functions and their module-named twins,
    # mx.onnx's exporter
    c = mx.contrib.onnx
    assert c.import_model_ is c.import_model and c.import_to_gluon_ is c.import_to_gluon
    assert c.get_model_metadata_ is c.get_model_metadata and c.export_model is mx.onnx.export_model
    from neomx.contrib.onnx.onnx2mx import import_onnx
    from neomx.contrib.onnx.onnx2mx._import_helper import _convert_map
    assert {'Conv', 'Gemm', 'BatchNormalization', 'LSTM'} <= set(_convert_map)
    assert hasattr(import_onnx.GraphProto(), 'from_onnx')
    assert mx.onnx.mx2onnx.export_model is mx.onnx.export_model
    assert 'FullyConnected' in mx.onnx.get_operator_support()
    assert mx.onnx.get_operator_support(6) == []


# -- errors --------------------------------------------------------------------------------

def _model(nodes, inputs, outputs, opset=13, inits=()):
    graph = helper.make_graph(nodes, 'g', inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])


def _vi(name, elem=TensorProto.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, elem, shape)


def test_unsupported_operator_names_node_operator_and_opset(tmp_path):
    m = _model([helper.make_node('Unique', ['x'], ['y'], name='uniq')],
               [_vi('x')], [_vi('y', shape=(6,))], opset=11)
    onnx.save(m, str(tmp_path / 'u.onnx'))
    with pytest.raises(ONNXImportError, match=r"ONNX node 'uniq' \(Unique, opset 11\): "
                                              r"operator Unique is not supported"):
        mx.contrib.onnx.import_model(str(tmp_path / 'u.onnx'))


def test_unsupported_attribute_names_node_operator_and_opset():
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, (1, 1, 4, 4))
    node = helper.make_node('MaxPool', ['x'], ['y', 'i'], name='pool', kernel_shape=[2, 2],
                            storage_order=1)
    m = _model([node], [x], [_vi('y', shape=(1, 1, 3, 3)),
                             _vi('i', TensorProto.INT64, (1, 1, 3, 3))], opset=12)
    with pytest.raises(ONNXImportError, match=r"ONNX node 'pool' \(MaxPool, opset 12\): "
                                              r"attribute storage_order=1 is not supported"):
        mx.contrib.onnx.import_model(m)


def test_unsupported_data_type_names_the_tensor():
    m = _model([helper.make_node('Relu', ['x'], ['y'])], [_vi('x', TensorProto.UINT32)],
               [_vi('y', TensorProto.UINT32)])
    with pytest.raises(ONNXImportError, match="graph input 'x': ONNX data type uint32 has no "
                                              "neomx counterpart"):
        mx.contrib.onnx.import_model(m)


def test_shape_input_computed_at_run_time_is_named():
    # MXNet's Reshape takes its shape as an attribute: a shape fed as a graph input cannot
    # be imported, and the error says which input it comes from
    m = _model([helper.make_node('Reshape', ['x', 's'], ['y'], name='r')],
               [_vi('x'), _vi('s', TensorProto.INT64, (1,))], [_vi('y', shape=(6,))])
    with pytest.raises(ONNXImportError, match=r"ONNX node 'r' \(Reshape, opset 13\): input 1 "
                                              r"\(shape\) \('s'\) must be a constant.*graph "
                                              r"input 's'"):
        mx.contrib.onnx.import_model(m)
    # ONNX's backend tests feed such inputs: the backend binds their values as constants
    rep = backend.prepare(m)
    out, = rep.run([np.arange(6, dtype=np.float32).reshape(2, 3), np.array([6])])
    assert out.tolist() == list(range(6)) and rep.bound == ('s',)


def test_corrupt_truncated_and_missing_files_are_named(tmp_path):
    path, _ = _small_net_file(tmp_path)
    data = open(path, 'rb').read()
    bad = tmp_path / 'garbage.onnx'
    bad.write_bytes(b'\x08\x07this is not a protobuf\xff\xff\xff' * 10)
    with pytest.raises(ONNXImportError, match='garbage.onnx.*corrupt or truncated'):
        mx.contrib.onnx.import_model(str(bad))
    cut = tmp_path / 'cut.onnx'
    for size in (len(data) // 2, len(data) - 7, 40):
        cut.write_bytes(data[:size])
        with pytest.raises(ONNXImportError, match='cut.onnx.*(corrupt or truncated|no graph)'):
            mx.contrib.onnx.import_model(str(cut))
    empty = tmp_path / 'empty.onnx'
    empty.write_bytes(b'')
    with pytest.raises(ONNXImportError, match='empty.onnx'):
        mx.contrib.onnx.import_to_gluon(str(empty), mx.cpu())
    with pytest.raises(ONNXImportError, match='missing.onnx'):
        mx.contrib.onnx.get_model_metadata(str(tmp_path / 'missing.onnx'))


# -- ONNX's backend test suite, bounded ----------------------------------------------------

# The node tests of the operators most models use (the first test of each, and its
# function-expanded twin where ONNX has one), run through the backend.
_OPS = '''Abs Add And ArgMax AveragePool BatchNormalization Cast Ceil Clip Concat Constant
    ConstantOfShape Conv ConvTranspose Cos CumSum DepthToSpace Div Dropout Einsum Elu Equal Erf
    Exp Expand Flatten Floor Gather GatherElements Gemm GlobalAveragePool GlobalMaxPool
    Greater HardSigmoid Hardmax Identity InstanceNormalization LRN LSTM LayerNormalization
    LeakyRelu Less Log LogSoftmax MatMul Max MaxPool Mean Min Mod Mul Neg Not OneHot Or PRelu Pad
    Pow RNN Reciprocal ReduceL2 ReduceLogSumExp ReduceMax ReduceMean ReduceSum Relu Reshape
    Round Selu Shape Sigmoid Sign Sin Size Slice Softmax Softplus SpaceToDepth Split Sqrt Squeeze
    Sub Sum Tanh Tile TopK Transpose Trilu Unsqueeze Where Xor'''.split()


def _bounded_cases():
    cases = backend_suite.node_cases()
    first = {}
    for case in cases:
        op = backend_suite._main_op(case[1], case[0])
        if op in _OPS and op not in first:
            first[op] = case[0]
    chosen = set(first.values())
    return [c for c in cases if backend_suite._base_name(c[0]) in chosen]


@pytest.fixture(scope='module')
def bounded_cases():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return _bounded_cases()


def test_onnx_backend_node_tests_bounded(bounded_cases):
    assert len(bounded_cases) >= len(_OPS)
    failed = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for case in bounded_cases:
            r = backend_suite.run_case(*case)
            if r['result'] != 'pass':
                failed.append('%s: %s %s' % (r['name'], r['result'], r.get('message', '')))
    assert not failed, '\n'.join(failed)


def test_onnx_backend_export_round_trip_bounded(bounded_cases):
    # the imported graphs exported again (mx.onnx.export_model) run in onnxruntime
    failed = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for case in bounded_cases[::4]:
            r = backend_suite.run_case(*case, export=True)
            if r['export'] != 'pass':
                failed.append('%s: %s' % (r['name'], r['export']))
    assert not failed, '\n'.join(failed)


def test_unsupported_node_tests_fail_with_import_errors():
    # operators outside MXNet's world fail at import with an error naming the node, never in
    # the middle of a run
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        cases = [c for c in backend_suite.node_cases() if c[0] in (
            'test_unique_sorted_without_axis', 'test_add_uint32', 'test_identity_sequence',
            'test_dft_opset19', 'test_nonmaxsuppression_suppress_by_IOU')]
    assert len(cases) == 5
    for case in cases:
        r = backend_suite.run_case(*case)
        assert r['result'] == 'unsupported', r
        assert r['message'].startswith(("ONNX node '", 'graph input')), r['message']


def test_constants_a_converter_makes_are_not_trained(tmp_path):
    # Resize's interpolation matrices and indices are constants of the graph: in a
    # SymbolBlock they take no gradient, the model's weights do
    model, x = _UNet(), torch.randn(1, 3, 16, 16)
    path = torch_export(model, (x,), tmp_path / 'unet.onnx', input_names=['x'],
                        output_names=['y'], opset_version=17)
    net = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    params = net.collect_params()
    fixed = [k for k, p in params.items() if p.grad_req == 'null']
    assert fixed and all('/weights' in k or '/indices' in k for k in fixed)
    assert {'down.weight', 'up.weight', 'out.bias'} <= {k for k, p in params.items()
                                                      if p.grad_req == 'write'}
    np.testing.assert_allclose(net(nd.array(x.numpy())).asnumpy(),
                               ort_run(path, {'x': x.numpy()})[0], rtol=1e-5, atol=1e-5)


def test_if_with_a_constant_condition_is_inlined():
    def branch(name, value):
        out = helper.make_tensor_value_info('r', TensorProto.FLOAT, (2, 3))
        node = helper.make_node('Mul', ['x', name], ['r'])
        c = helper.make_tensor(name, TensorProto.FLOAT, (), [value])
        return helper.make_graph([node], name, [], [out], [c])
    cond = helper.make_tensor('cond', TensorProto.BOOL, (), [False])
    node = helper.make_node('If', ['cond'], ['y'], name='choose',
                            then_branch=branch('two', 2.0), else_branch=branch('three', 3.0))
    m = _model([node], [_vi('x')], [_vi('y')], inits=[cond])
    out, = backend.prepare(m).run([np.ones((2, 3), np.float32)])
    assert out.tolist() == [[3.0] * 3] * 2
    # no control-flow node is made
    sym, _, _ = mx.contrib.onnx.import_model(m)
    assert '_cond' not in sym.tojson()


# -- control flow: If, Scan and Loop as MXNet's cond, foreach and while_loop ---------------

def _ort_session(m):
    return ort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider'])


def _run_time_if_model():
    # y = x * 2 + w if sum(x) > 0 else x - 1 (w an initializer the then-branch reads)
    then = helper.make_graph(
        [helper.make_node('Mul', ['x', 'two'], ['t']), helper.make_node('Add', ['t', 'w'],
                                                                        ['r1'])],
        'then', [], [_vi('r1')], [helper.make_tensor('two', TensorProto.FLOAT, (), [2.0])])
    other = helper.make_graph([helper.make_node('Sub', ['x', 'one'], ['r2'])], 'else', [],
                              [_vi('r2')],
                              [helper.make_tensor('one', TensorProto.FLOAT, (), [1.0])])
    nodes = [helper.make_node('ReduceSum', ['x'], ['s'], keepdims=0),
             helper.make_node('Greater', ['s', 'zero'], ['c']),
             helper.make_node('If', ['c'], ['y'], name='choose', then_branch=then,
                              else_branch=other)]
    inits = [helper.make_tensor('zero', TensorProto.FLOAT, (), [0.0]),
             helper.make_tensor('w', TensorProto.FLOAT, (3,), [0.5, -1.0, 2.0])]
    return _model(nodes, [_vi('x')], [_vi('y')], inits=inits)


def test_if_with_a_run_time_condition_is_a_cond_node(tmp_path):
    m = _run_time_if_model()
    sess = _ort_session(m)
    sym, arg_params, _ = mx.contrib.onnx.import_model(m)
    assert '_cond' in sym.tojson() and 'w' in arg_params
    for sign in (1, -1):
        x = sign * (np.abs(np.random.RandomState(0).randn(2, 3)) + 0.1).astype(np.float32)
        out, = backend.prepare(m).run([x])
        np.testing.assert_allclose(out, sess.run(None, {'x': x})[0], rtol=1e-6, atol=1e-6)
    # as a SymbolBlock: hybridized, differentiated through the branch taken, exported
    # (under NumPy shapes: the model's scalar constants are 0-d parameters)
    onnx.save(m, str(tmp_path / 'if.onnx'))
    with mx.util.np_shape(True):
        net = mx.contrib.onnx.import_to_gluon(str(tmp_path / 'if.onnx'), mx.cpu())
        net.hybridize()
        x = nd.array(np.ones((2, 3), np.float32))
        x.attach_grad()
        with autograd.record():
            y = net(x)
        y.backward()
        np.testing.assert_allclose(y.asnumpy(), sess.run(None, {'x': x.asnumpy()})[0])
        assert x.grad.asnumpy().tolist() == [[2.0] * 3] * 2
        assert net.collect_params()['w'].grad().asnumpy().tolist() == [2.0] * 3
        net.export(str(tmp_path / 'if'))
        back = gluon.SymbolBlock.imports(str(tmp_path / 'if-symbol.json'), ['x'],
                                         str(tmp_path / 'if-0000.params'))
        np.testing.assert_allclose(back(-x).asnumpy(), sess.run(None, {'x': -x.asnumpy()})[0])


def test_scan_is_a_foreach_node():
    # two states (a running sum and a running product), two scan inputs (one scanned along
    # axis 1, one backwards), scan outputs stacked along axis 1 and backwards
    body = helper.make_graph(
        [helper.make_node('Add', ['s_in', 'a'], ['s_out']),
         helper.make_node('Mul', ['p_in', 'b'], ['p_out']),
         helper.make_node('Sub', ['s_out', 'p_out'], ['d']),
         helper.make_node('Identity', ['s_out'], ['s_seen'])],
        'body', [_vi('s_in', shape=(2,)), _vi('p_in', shape=(2,)), _vi('a', shape=(2,)),
                 _vi('b', shape=(2,))],
        [_vi('s_out', shape=(2,)), _vi('p_out', shape=(2,)), _vi('d', shape=(2,)),
         _vi('s_seen', shape=(2,))])
    node = helper.make_node('Scan', ['s0', 'p0', 'xa', 'xb'], ['s', 'p', 'ds', 'ss'],
                            name='scan', body=body, num_scan_inputs=2,
                            scan_input_axes=[1, 0], scan_input_directions=[0, 1],
                            scan_output_axes=[1, 0], scan_output_directions=[0, 1])
    m = _model([node], [_vi('s0', shape=(2,)), _vi('p0', shape=(2,)), _vi('xa', shape=(2, 4)),
                        _vi('xb', shape=(4, 2))],
               [_vi('s', shape=(2,)), _vi('p', shape=(2,)), _vi('ds', shape=(2, 4)),
                _vi('ss', shape=(4, 2))], opset=16)
    rs = np.random.RandomState(1)
    feeds = {'s0': rs.randn(2), 'p0': rs.randn(2), 'xa': rs.randn(2, 4), 'xb': rs.randn(4, 2)}
    feeds = {k: v.astype(np.float32) for k, v in feeds.items()}
    ref = _ort_session(m).run(None, feeds)
    sym, _, _ = mx.contrib.onnx.import_model(m)
    assert '_foreach' in sym.tojson()
    got = backend.prepare(m).run([feeds[k] for k in ('s0', 'p0', 'xa', 'xb')])
    assert [g.shape for g in got] == [r.shape for r in ref]
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def _loop_body(cond_out_nodes, cond_out='c_out'):
    # v_out = v_in * 2 + i (i the iteration number as a float); scan output v_out
    nodes = [helper.make_node('Cast', ['i'], ['fi'], to=TensorProto.FLOAT),
             helper.make_node('Mul', ['v_in', 'two'], ['v2']),
             helper.make_node('Add', ['v2', 'fi'], ['v_out']),
             helper.make_node('Identity', ['v_out'], ['seen'])] + cond_out_nodes
    return helper.make_graph(
        nodes, 'body', [_vi('i', TensorProto.INT64, ()), _vi('c_in', TensorProto.BOOL, ()),
                        _vi('v_in', shape=(3,))],
        [_vi(cond_out, TensorProto.BOOL, ()), _vi('v_out', shape=(3,)),
         _vi('seen', shape=(3,))],
        [helper.make_tensor('two', TensorProto.FLOAT, (), [2.0])])


def test_loop_with_a_trip_count_is_a_while_loop_node():
    # a for loop: 4 steps, a loop-carried value and its values at each step (a scan output)
    body = _loop_body([helper.make_node('Identity', ['c_in'], ['c_out'])])
    node = helper.make_node('Loop', ['n', '', 'v0'], ['v', 'vs'], name='loop', body=body)
    m = _model([node], [_vi('v0', shape=(3,))], [_vi('v', shape=(3,)),
                                                 _vi('vs', shape=(4, 3))], opset=16,
               inits=[helper.make_tensor('n', TensorProto.INT64, (), [4])])
    v0 = np.array([1.0, -2.0, 0.5], np.float32)
    ref = _ort_session(m).run(None, {'v0': v0})
    sym, _, _ = mx.contrib.onnx.import_model(m)
    assert '_while_loop' in sym.tojson()
    got = backend.prepare(m).run([v0])
    assert got[1].shape == (4, 3)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_loop_on_a_condition_the_body_computes():
    # a while loop: doubles v while its sum is under 100 (no trip count, no scan outputs)
    body = _loop_body([helper.make_node('ReduceSum', ['v_out'], ['t'], keepdims=0),
                       helper.make_node('Less', ['t', 'limit'], ['c_out'])])
    body.output.pop()       # no scan output
    body.initializer.append(helper.make_tensor('limit', TensorProto.FLOAT, (), [100.0]))
    node = helper.make_node('Loop', ['', 'c0', 'v0'], ['v'], name='grow', body=body)
    m = _model([node], [_vi('v0', shape=(3,)), _vi('c0', TensorProto.BOOL, ())],
               [_vi('v', shape=(3,))], opset=16)
    sess = _ort_session(m)
    rep = backend.prepare(m)
    for v0, c0 in (([1.0, 2.0, 0.5], True), ([1.0, 2.0, 0.5], False), ([50, 60, 0], True)):
        feeds = {'v0': np.array(v0, np.float32), 'c0': np.array(c0)}
        np.testing.assert_allclose(rep.run([feeds['v0'], feeds['c0']])[0],
                                   sess.run(None, feeds)[0], rtol=1e-6)
    assert rep.bound == ()      # nothing taken as a constant
    # a trip count fed at run time bounds it too
    node = helper.make_node('Loop', ['n', 'c0', 'v0'], ['v'], name='grow', body=body)
    m = _model([node], [_vi('n', TensorProto.INT64, ()), _vi('v0', shape=(3,)),
                        _vi('c0', TensorProto.BOOL, ())], [_vi('v', shape=(3,))], opset=16)
    sess, rep = _ort_session(m), backend.prepare(m)
    for steps in (0, 2, 20):
        feeds = {'n': np.array(steps), 'v0': np.array([1.0, 2.0, 0.5], np.float32),
                 'c0': np.array(True)}
        np.testing.assert_allclose(rep.run([feeds[k] for k in ('n', 'v0', 'c0')])[0],
                                   sess.run(None, feeds)[0], rtol=1e-6)
    assert rep.bound == ()
    # with a scan output, the number of steps (the output's length) is data-dependent
    body = _loop_body([helper.make_node('ReduceSum', ['v_out'], ['t'], keepdims=0),
                       helper.make_node('Less', ['t', 'limit'], ['c_out'])])
    body.initializer.append(helper.make_tensor('limit', TensorProto.FLOAT, (), [100.0]))
    node = helper.make_node('Loop', ['n', 'c0', 'v0'], ['v', 'vs'], name='grow', body=body)
    m = _model([node], [_vi('v0', shape=(3,)), _vi('c0', TensorProto.BOOL, ())],
               [_vi('v', shape=(3,)), _vi('vs', shape=(None, 3))], opset=16,
               inits=[helper.make_tensor('n', TensorProto.INT64, (), [10])])
    with pytest.raises(ONNXImportError, match=r"ONNX node 'grow' \(Loop, opset 16\): the "
                                              r"body computes the loop's condition"):
        mx.contrib.onnx.import_model(m)


class _Scripted(torch.nn.Module):
    # control flow torch.jit.script keeps: an If on the data, a while loop on the data
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        x = torch.tanh(self.lin(x)) + x
        if bool(x.sum() > 0):
            y = x * 2
        else:
            y = x - 1
        k = 0
        while bool(x.abs().sum() < 100.0) and k < 50:
            x = x * 1.5
            k += 1
        return y + x


def test_scripted_pytorch_control_flow_matches_onnxruntime(tmp_path):
    torch.manual_seed(0)
    x = torch.randn(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')     # torch.jit.script is deprecated in torch 2.9
        scripted = torch.jit.script(_Scripted())
    path = torch_export(scripted, (x,), tmp_path / 'scripted.onnx',
                        input_names=['x'], output_names=['y'], opset_version=17)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    assert {'If', 'Loop'} <= ops
    rep = backend.prepare(path)
    for scale in (1.0, -1.0, 0.01):     # both branches; 0 to several steps
        xs = (x * scale).numpy()
        np.testing.assert_allclose(rep.run([xs])[0], ort_run(path, {'x': xs})[0],
                                   rtol=1e-5, atol=1e-5)
    assert rep.bound == ()


@pytest.mark.parametrize('kind,attrs', [
    ('GRU', {}),                                       # linear_before_reset=0: unrolled
    ('GRU', {'linear_before_reset': 1}),               # MXNet's fused GRU
    ('LSTM', {'clip': 0.5}),                           # clipped: unrolled
    ('LSTM', {}),
    ('RNN', {'activations': ['Relu', 'Tanh']}),        # a cell MXNet's RNN lacks: unrolled
], ids=['gru-lbr0', 'gru-fused', 'lstm-clip', 'lstm-fused', 'rnn-mixed'])
def test_recurrent_layers_match_onnxruntime(kind, attrs):
    rs = np.random.RandomState(0)
    steps, batch, inp, hid = 5, 3, 4, 6
    gates = {'GRU': 3, 'LSTM': 4, 'RNN': 1}[kind]
    inits = [helper.make_tensor(k, TensorProto.FLOAT, s, rs.randn(*s).ravel() * 0.5)
             for k, s in (('w', (2, gates * hid, inp)), ('r', (2, gates * hid, hid)),
                          ('b', (2, 2 * gates * hid)))]
    inits.append(helper.make_tensor('lens', TensorProto.INT32, (batch,), [5, 3, 1]))
    outs = ['y', 'yh'] + (['yc'] if kind == 'LSTM' else [])
    node = helper.make_node(kind, ['x', 'w', 'r', 'b', 'lens'], outs, hidden_size=hid,
                            direction='bidirectional', **attrs)
    shapes = {'y': (steps, 2, batch, hid), 'yh': (2, batch, hid), 'yc': (2, batch, hid)}
    m = _model([node], [_vi('x', shape=(steps, batch, inp))],
               [_vi(o, shape=shapes[o]) for o in outs], opset=14, inits=inits)
    x = rs.randn(steps, batch, inp).astype(np.float32)
    sess = ort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider'])
    ref = sess.run(None, {'x': x})
    got = backend.prepare(m).run([x])
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
