"""gluon.utils: splitting batches across devices, clipping by the global norm (values as in
MXNet 1.9.1), downloads (offline errors name the URL; file:// URLs work), SHA-1 checks,
atomic file replacement and the small helpers of Block."""
import hashlib
import json
import os
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from neomx.base import MXNetError
from neomx.gluon import utils
from conftest import run_mxnet


def test_split_data_even_and_uneven():
    x = nd.arange(20).reshape((10, 2))
    parts = utils.split_data(x, 2)
    assert [p.shape for p in parts] == [(5, 2), (5, 2)]
    np.testing.assert_array_equal(parts[1].asnumpy(), x.asnumpy()[5:])
    parts = utils.split_data(x, 3, even_split=False)
    assert [p.shape for p in parts] == [(4, 2), (3, 2), (3, 2)]
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]), x.asnumpy())
    parts = utils.split_data(nd.arange(12).reshape((2, 6)), 3, batch_axis=1)
    assert [p.asnumpy().tolist() for p in parts] == [[[0, 1], [6, 7]], [[2, 3], [8, 9]],
                                                    [[4, 5], [10, 11]]]
    with pytest.raises(ValueError, match=r"data with shape \(10, 2\) cannot be evenly split into "
                                         r"3 slices along axis 0"):
        utils.split_data(x, 3)


def test_split_and_load_places_slices():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    parts = utils.split_and_load(nd.arange(8).reshape((4, 2)), ctxs)
    assert [p.context for p in parts] == ctxs
    assert parts[1].asnumpy().tolist() == [[4, 5], [6, 7]]
    parts = utils.split_and_load(np.ones((3, 2)), ctxs, even_split=False)
    assert [p.shape for p in parts] == [(2, 2), (1, 2)]
    one = utils.split_and_load(np.ones((3, 2)), [mx.cpu(1)])
    assert len(one) == 1 and one[0].context == mx.cpu(1) and one[0].shape == (3, 2)


def _clip_case(mx):
    import numpy as np
    rs = np.random.RandomState(0)
    arrays = [mx.nd.array(rs.randn(3, 4), ctx=mx.cpu(0)), mx.nd.array(rs.randn(5), ctx=mx.cpu(1)),
              mx.nd.array(rs.randn(2, 2, 2), ctx=mx.cpu(0))]
    norm = mx.gluon.utils.clip_global_norm(arrays, 1.5)
    big = [mx.nd.array(rs.randn(4) * 0.01)]
    small_norm = mx.gluon.utils.clip_global_norm(big, 10.0, check_isfinite=False)
    return [float(norm), [a.asnumpy().ravel().tolist() for a in arrays],
            float(small_norm.asscalar()), big[0].asnumpy().tolist()]


def test_clip_global_norm_matches_mxnet():
    import inspect
    code = inspect.getsource(_clip_case) + 'import json\nimport mxnet as mx\n' \
        'print(json.dumps(_clip_case(mx)))\n'
    ref = json.loads(run_mxnet(code).strip().splitlines()[-1])
    ours = _clip_case(mx)
    assert ours[0] == pytest.approx(ref[0], rel=1e-6)
    for a, b in zip(ours[1], ref[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert ours[2] == pytest.approx(ref[2], rel=1e-6)
    np.testing.assert_allclose(ours[3], ref[3], rtol=1e-6)     # below max_norm: unchanged


def test_clip_global_norm_returns_array_and_warns_on_nan():
    arrays = [nd.ones((4,)) * 3, nd.ones((4,), ctx=mx.cpu(1)) * 4]
    total = utils.clip_global_norm(arrays, 5.0, check_isfinite=False)
    assert isinstance(total, nd.NDArray) and total.shape == (1,)
    assert float(total.asscalar()) == pytest.approx(10.0)
    assert arrays[1].asnumpy().tolist() == pytest.approx([2.0] * 4)
    with pytest.warns(UserWarning, match='nan or inf is detected'):
        utils.clip_global_norm([nd.array([np.nan, 1.0])], 1.0)
    with pytest.raises(MXNetError, match='no arrays given'):
        utils.clip_global_norm([], 1.0)


def test_download_offline_names_the_url(tmp_path, capsys):
    url = 'http://127.0.0.1:9/model.params'
    with pytest.raises(MXNetError, match=r'cannot fetch http://127\.0\.0\.1:9/model\.params '
                                         r'\(2 attempts\)'):
        utils.download(url, path=str(tmp_path), retries=2)
    assert 'retrying' in capsys.readouterr().out
    assert os.listdir(tmp_path) == []          # nothing half-written is left


def test_download_file_url_and_sha1(tmp_path):
    src = tmp_path / 'src.bin'
    src.write_bytes(b'neomx' * 100)
    sha1 = hashlib.sha1(src.read_bytes()).hexdigest()
    dest = tmp_path / 'dest'
    dest.mkdir()
    got = utils.download(src.as_uri(), path=str(dest), sha1_hash=sha1)
    assert got == str(dest / 'src.bin') and utils.check_sha1(got, sha1)
    assert not utils.check_sha1(got, '0' * 40)
    # present with the right hash: not fetched again
    src.write_bytes(b'changed')
    assert utils.download(src.as_uri(), path=str(dest), sha1_hash=sha1) == got
    assert (dest / 'src.bin').read_bytes() == b'neomx' * 100
    # wrong hash after the download
    with pytest.raises(UserWarning, match='content hash does not match'):
        utils.download(src.as_uri(), path=str(dest / 'other.bin'), sha1_hash=sha1)
    with pytest.warns(UserWarning, match='verify_ssl=False'):
        utils.download(src.as_uri(), path=str(dest / 'x.bin'), verify_ssl=False)
    with pytest.raises(MXNetError, match='cannot construct a file name'):
        utils.download('http://example.com/')


def test_download_through_requests(tmp_path, monkeypatch):
    """With requests installed, http(s) downloads go through requests.get as in MXNet (so
    code mocking requests.get works): verify_ssl is passed on, errors are retried, a
    status other than 200 fails, and concurrent downloads of one file leave one file."""
    requests = pytest.importorskip('requests')
    import io
    import multiprocessing as mp
    calls = []

    def get(url, stream=False, verify=True):
        calls.append((url, stream, verify))
        if len(calls) == 1:
            raise requests.exceptions.ConnectionError('first try fails')
        r = requests.Response()
        r.status_code = 404 if 'missing' in url else 200
        r.raw = io.BytesIO(b'payload' * 1000)
        return r
    monkeypatch.setattr(requests, 'get', get)
    with pytest.warns(UserWarning, match='Unverified HTTPS request'):
        got = utils.download('https://host/dir/a.bin', path=str(tmp_path), verify_ssl=False)
    assert open(got, 'rb').read() == b'payload' * 1000
    assert calls == [('https://host/dir/a.bin', True, False)] * 2
    with pytest.raises(MXNetError, match='HTTP status 404'):
        utils.download('https://host/missing.bin', path=str(tmp_path), retries=1)
    target = str(tmp_path / 'b.bin')
    procs = [mp.get_context('fork').Process(target=utils.download, args=('https://h/b.bin',),
                                            kwargs={'path': target}) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert sorted(os.listdir(tmp_path)) == ['a.bin', 'b.bin']


def test_replace_file(tmp_path):
    a, b = tmp_path / 'a', tmp_path / 'b'
    a.write_text('new')
    b.write_text('old')
    utils.replace_file(str(a), str(b))
    assert b.read_text() == 'new' and not a.exists()
    a.write_text('x')
    with pytest.raises(OSError, match='Please retry the download'):
        utils.replace_file(str(a), str(tmp_path / 'missing' / 'b'))
    assert not a.exists()


def test_shape_is_known_and_helpers():
    assert utils.shape_is_known((2, 3))
    assert not utils.shape_is_known((2, 0))
    assert not utils.shape_is_known(None)
    assert not utils.shape_is_known(())
    with pytest.raises(MXNetError, match='cannot be less than 0'):
        utils.shape_is_known((2, -3))
    assert utils._brief_print_list(range(10)) == "'0', '1', '2', ..., '6', '7', '8', '9'"
    assert utils._indent('a\nb', 2) == 'a\n  b'
    hooks = OrderedDict()      # what Blocks keep their hooks in
    with utils.HookHandle() as h:
        h.attach(hooks, print)
        assert list(hooks.values()) == [print]
    assert hooks == {}
    assert utils._get_repo_file_url('gluon/models', 'x.zip').endswith('/gluon/models/x.zip')


def test_namespace():
    assert mx.gluon.utils.split_and_load is utils.split_and_load
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert set(utils.__all__) >= {'split_data', 'split_and_load', 'clip_global_norm',
                                      'check_sha1', 'download', 'replace_file'}
