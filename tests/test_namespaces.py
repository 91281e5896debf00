"""Every name of MXNet 1.9.1's ``mxnet.gluon``, ``mxnet.image`` and ``mxnet.contrib``
namespaces (their modules, recursively) exists in neomx, and the ones neomx cannot provide
fail when called, with the reason, not at import."""
import json

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError

# Names that are not MXNet's API: imports of other libraries' modules (os, numpy, cv2, ...),
# the ctypes glue of MXNet's C library, and private names.
_NAMES_SCRIPT = r'''
import importlib, json, pkgutil, types
out = {}
def walk(modname):
    if modname in out:
        return
    m = importlib.import_module(modname)
    names = {}
    for n in dir(m):
        if n.startswith('_'):
            continue
        v = getattr(m, n)
        if isinstance(v, types.ModuleType):
            if not v.__name__.startswith('mxnet'):
                continue
        elif not str(getattr(v, '__module__', None) or '').startswith('mxnet') and \
                not isinstance(v, (str, int, float, dict, list, tuple)):
            continue
        if n in ('c_array', 'c_array_buf', 'c_handle_array', 'c_str_array'):
            continue
        names[n] = 1
    out[modname] = sorted(names)
    subs = {v.__name__ for v in vars(m).values() if isinstance(v, types.ModuleType)
            and v.__name__ == modname + '.' + v.__name__.rpartition('.')[2]}
    if hasattr(m, '__path__'):
        subs |= {modname + '.' + i.name for i in pkgutil.iter_modules(m.__path__)}
    for s in sorted(subs):
        if not s.rpartition('.')[2].startswith('_'):
            walk(s)
for root in ('mxnet.gluon', 'mxnet.image', 'mxnet.contrib'):
    walk(root)
print(json.dumps(out))
'''


def test_every_name_of_mxnet_gluon_image_contrib_exists(mxnet_ref):
    import importlib
    from neomx import _mxnet_alias
    ref = json.loads(mxnet_ref(_NAMES_SCRIPT))
    assert len(ref) > 60
    installed = _mxnet_alias.installed()
    if not installed:
        _mxnet_alias.install()
    try:
        missing = {}
        for modname, names in ref.items():
            m = importlib.import_module(modname)
            gone = [n for n in names if not hasattr(m, n)]
            if gone:
                missing[modname] = gone
    finally:
        if not installed:
            _mxnet_alias.uninstall()
    assert missing == {}


def test_batchnorm_relu():
    layer = mx.gluon.nn.BatchNormReLU()
    layer.initialize()
    x = mx.nd.array([[-1.0, 2.0], [3.0, -4.0]]).reshape((2, 2, 1, 1))
    with mx.autograd.record():
        y = layer(x)
    y.backward()
    # batch statistics: each channel normalised to (-1, 1), then the ReLU
    np.testing.assert_allclose(y.asnumpy().reshape(2, 2), [[0, 1], [1, 0]], atol=1e-5)
    assert 'BatchNormReLU(axis=1' in repr(layer)
    out = mx.nd.contrib.BatchNormWithReLU(x, mx.nd.ones(2), mx.nd.zeros(2), mx.nd.zeros(2),
                                          mx.nd.ones(2))
    np.testing.assert_allclose(out.asnumpy().reshape(2, 2), np.maximum(x.asnumpy(), 0)
                               .reshape(2, 2) / np.sqrt(1 + 1e-3), rtol=1e-6)


def test_straight_through_estimators():
    x = mx.nd.array([-1.5, -0.5, 0.5, 1.5, 2.5, 0.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.round_ste(x) * 2
    y.backward()
    assert y.asnumpy().tolist() == [-4, -2, 2, 4, 6, 0]      # half away from zero, as MXNet
    assert x.grad.asnumpy().tolist() == [2] * 6
    with mx.autograd.record():
        y = mx.nd.contrib.sign_ste(x) * 3
    y.backward()
    assert y.asnumpy().tolist() == [-3, -3, 3, 3, 3, 0] and x.grad.asnumpy().tolist() == [3] * 6


def test_getnnz():
    x = mx.nd.array([[0, 1, 2], [0, 0, 3]]).tostype('csr')
    assert mx.nd.contrib.getnnz(x).asnumpy().tolist() == [3]
    rows = mx.nd.contrib.getnnz(x, axis=1)
    assert rows.asnumpy().tolist() == [2, 1] and rows.dtype == np.int64
    with pytest.raises(MXNetError, match='axis = 0'):
        mx.nd.contrib.getnnz(x, axis=0)


def test_unavailable_names_fail_when_called():
    x = mx.nd.ones((2, 4))
    with pytest.raises(MXNetError, match='nd.contrib.fft: MXNet 1.9.1 implements it for GPUs'):
        mx.nd.contrib.fft(x)
    with pytest.raises(MXNetError, match='sym.contrib.quantized_conv: .*INT8'):
        mx.sym.contrib.quantized_conv(mx.sym.var('x'))
    with pytest.raises(MXNetError, match='sym.contrib.dgl_adjacency: .*imperatively'):
        mx.sym.contrib.dgl_adjacency(mx.sym.var('x'))


def test_dataloader_v1_and_pickling_helpers():
    from neomx.gluon.data import dataloader as dl
    loader = dl.DataLoaderV1(mx.nd.arange(10), batch_size=4, last_batch='discard')
    assert [b.shape for b in loader] == [(4, 1), (4, 1)]
    x = mx.nd.array([[1, 2], [3, 4]])
    rebuild, args = dl.reduce_ndarray(x)
    assert rebuild(*args).asnumpy().tolist() == [[1, 2], [3, 4]]
    q = dl.SimpleQueue()
    q.put((0, x))
    idx, got = q.get()
    assert idx == 0 and got.asnumpy().tolist() == [[1, 2], [3, 4]]
    keys, batches = dl.Queue(), dl.Queue()
    for item in ((0, [0, 1]), (1, [2, 3]), (None, None)):
        keys.put(item)
    dl.worker_loop_v1(list(range(10)), keys, batches, dl.default_batchify_fn)
    batches.put((None, None))
    buf = {}
    dl.fetcher_loop_v1(batches, buf)
    assert {k: v.asnumpy().tolist() for k, v in buf.items()} == {0: [0, 1], 1: [2, 3]}


def test_inception_aux_head():
    from neomx.gluon.model_zoo.vision.inception import make_aux
    head = make_aux(7)
    head.initialize()
    assert head(mx.nd.ones((1, 768, 17, 17))).shape == (1, 7)


def test_no_module_imports_a_module_that_imports_it_back():
    """tools/import_graph.py's module-level graph of neomx has no cycle (mx.test_utils, which
    imports neomx, is loaded at its first use; contrib.amp's lists and ONNX import as well)."""
    import importlib.util
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location(
        'import_graph', os.path.join(root, 'tools', 'import_graph.py'))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    graph = tool.edges(root, module_level=True)
    assert 'neomx.contrib.amp.lists' in graph['neomx.contrib.amp.amp']      # edges are read
    assert 'neomx' in graph['neomx.test_utils']
    assert [c for c in tool.components(graph) if len(c) > 1] == []
