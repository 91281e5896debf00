"""gluon.model_zoo.vision: MXNet 1.9's architectures and parameter names, files saved by MXNet
loading here with the same outputs, pretrained weights from disk."""
import json
import logging
import textwrap

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx.base import MXNetError
from neomx.gluon.model_zoo import vision
from neomx.gluon.model_zoo.model_store import get_model_file

# Every family and variant kind; the deeper ResNets and VGGs differ only in their tables.
NAMES = ['resnet18_v1', 'resnet50_v1', 'resnet18_v2', 'resnet50_v2', 'vgg11', 'vgg11_bn',
         'alexnet', 'mobilenet0.25', 'mobilenetv2_0.25', 'densenet121', 'squeezenet1.0',
         'squeezenet1.1', 'inceptionv3']


def _params(net):
    """{structural name: (prefixed name, shape)}; unknown dimensions are 0."""
    prefixed = {id(p): name for name, p in net.collect_params().items()}
    return {k: (prefixed[id(p)], tuple(p.shape)) for k, p in net._collect_params_with_prefix().items()}


def test_parameter_names_and_shapes_match_mxnet(mxnet_ref):
    out = mxnet_ref(textwrap.dedent("""
        import json
        from mxnet.gluon.model_zoo import vision
        res = {}
        for name in %r:
            net = vision.get_model(name, classes=7)
            prefixed = {id(p): n for n, p in net.collect_params().items()}
            res[name] = {k: [prefixed[id(p)], list(p.shape)]
                         for k, p in net._collect_params_with_prefix().items()}
        print(json.dumps(res))
    """ % (NAMES,)))
    ref = json.loads(out.strip().split('\n')[-1])
    for name in NAMES:
        ours = _params(vision.get_model(name, classes=7))
        theirs = {k: (v[0], tuple(v[1])) for k, v in ref[name].items()}
        assert list(ours) == list(theirs), name
        assert ours == theirs, name


@pytest.mark.parametrize('name,size', [('resnet34_v2', 32), ('vgg13', 32), ('mobilenet1.0', 32),
                                       ('squeezenet1.1', 224), ('densenet121', 224)])
def test_forward_shapes(name, size):
    net = vision.get_model(name, classes=5)
    net.initialize()
    assert net(nd.zeros((2, 3, size, size))).shape == (2, 5)


def test_resnet18_thumbnail_hybridized_forward_backward():
    net = vision.resnet18_v1(classes=10, thumbnail=True)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = nd.random.uniform(shape=(2, 3, 32, 32))
    with mx.autograd.record():
        y = net(x)
    y.backward()
    assert y.shape == (2, 10)
    w = net.features[0].weight
    assert w.shape == (64, 3, 3, 3) and float(w.grad().abs().sum().asscalar()) > 0


@pytest.fixture(scope='module')
def mxnet_resnet(tmp_path_factory):
    """resnet18_v1 built in MXNet: its parameters saved with save_parameters (resnet.params)
    and in the legacy layout of the model store (names without the net's prefix, as
    save_params wrote them: resnet18_v1-a0666292.params), an input and MXNet's output."""
    from conftest import run_mxnet
    folder = tmp_path_factory.mktemp('mxnet_resnet')
    x = np.random.RandomState(0).uniform(-1, 1, (2, 3, 64, 64)).astype(np.float32)
    np.save(str(folder / 'x.npy'), x)
    run_mxnet(textwrap.dedent("""
        import numpy as np, mxnet as mx
        from mxnet.gluon.model_zoo import vision
        mx.random.seed(1)
        net = vision.resnet18_v1()
        net.initialize(mx.init.Xavier(magnitude=2.5))
        x = mx.nd.array(np.load('x.npy'))
        net(x)                                  # finishes the deferred initialization
        # non-trivial batch-norm statistics, so that loading them matters
        for name, p in net.collect_params('.*running.*').items():
            p.set_data(mx.nd.random.uniform(0.5, 1.5, shape=p.shape))
        net.save_parameters('resnet.params')
        net.collect_params().save('resnet18_v1-a0666292.params', strip_prefix=net.prefix)
        np.save('out.npy', net(x).asnumpy())
    """), cwd=str(folder))
    return folder, x, np.load(str(folder / 'out.npy'))


def test_resnet18_v1_loads_mxnet_parameters(mxnet_resnet):
    folder, x, expected = mxnet_resnet
    net = vision.resnet18_v1()
    net.load_parameters(str(folder / 'resnet.params'), ctx=mx.cpu())
    np.testing.assert_allclose(net(nd.array(x)).asnumpy(), expected, rtol=1e-4, atol=1e-4)


def test_pretrained_from_disk(tmp_path, mxnet_resnet, monkeypatch, caplog):
    monkeypatch.setenv('MXNET_GLUON_REPO', 'http://127.0.0.1:9/')   # downloads fail at once
    with pytest.raises(MXNetError) as e:
        vision.resnet18_v1(pretrained=True, root=str(tmp_path))
    assert 'resnet18_v1-a0666292.params' in str(e.value) and str(tmp_path) in str(e.value)
    folder, x, expected = mxnet_resnet
    with caplog.at_level(logging.WARNING):
        net = vision.get_model('resnet18_v1', pretrained=True, root=str(folder))
    assert 'does not match the SHA-1' in caplog.text
    np.testing.assert_allclose(net(nd.array(x)).asnumpy(), expected, rtol=1e-4, atol=1e-4)
    # a file under the plain name is taken as it is
    (tmp_path / 'resnet18_v1.params').write_bytes((folder / 'resnet.params').read_bytes())
    assert get_model_file('resnet18_v1', root=str(tmp_path)) == str(tmp_path / 'resnet18_v1.params')
    net = vision.resnet18_v1(pretrained=True, root=str(tmp_path), ctx=mx.cpu(1))
    assert net.output.weight.list_ctx() == [mx.cpu(1)]
    np.testing.assert_allclose(net(nd.array(x, ctx=mx.cpu(1))).asnumpy(), expected,
                               rtol=1e-4, atol=1e-4)


def test_get_model_errors():
    with pytest.raises(ValueError, match='(?s)Model resnet19_v1 is not supported.*resnet18_v1'):
        vision.get_model('resnet19_v1')
    with pytest.raises(ValueError, match='Invalid number of layers'):
        vision.get_resnet(1, 20)
    with pytest.raises(ValueError, match='Invalid resnet version'):
        vision.get_resnet(3, 18)
    assert type(vision.get_model('MobileNetV2_0.5')).__name__ == 'MobileNetV2'
