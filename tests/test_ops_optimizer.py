"""MXNet's optimizer update operators (nd.sgd_update, nd.adam_update, ...): the weight comes
back (written through out=), the states are written in place, the rules are MXNet 1.9.1's."""
import numpy as np
import pytest

import neomx as mx
from neomx import nd

# (operator, number of inputs, inputs it writes besides the weight, attributes)
CASES = [
    ('signsgd_update', 2, [], dict(rescale_grad=0.1, lr=0.01, wd=1e-3, clip_gradient=1e-3)),
    ('signum_update', 3, [2], dict(rescale_grad=0.1, lr=0.01, wd=1e-3, momentum=0.9,
                                   clip_gradient=0.05, wd_lh=1e-3)),
    ('sgd_update', 2, [], dict(rescale_grad=0.1, lr=0.01, wd=1e-3, clip_gradient=0.05)),
    ('sgd_mom_update', 3, [2], dict(rescale_grad=0.1, lr=0.01, wd=1e-3, momentum=0.9,
                                    clip_gradient=0.05)),
    ('nag_mom_update', 3, [2], dict(rescale_grad=0.1, lr=0.01, momentum=0.9,
                                    clip_gradient=0.05)),
    ('ftml_update', 5, [2, 3, 4], dict(t=3, rescale_grad=0.1, lr=0.01, wd=1e-3, clip_grad=0.05)),
    ('ftrl_update', 4, [2, 3], dict(rescale_grad=0.1, lr=0.01, wd=1e-3, clip_gradient=0.05)),
    ('adam_update', 4, [2, 3], dict(rescale_grad=0.1, lr=0.01, wd=1e-3, clip_gradient=0.05)),
    ('rmspropalex_update', 5, [2, 3, 4], dict(rescale_grad=0.1, lr=0.01, wd=1e-3,
                                              clip_gradient=0.05, clip_weights=0.5)),
    ('rmsprop_update', 3, [2], dict(rescale_grad=0.1, lr=0.01, wd=1e-3, clip_gradient=0.05,
                                    clip_weights=0.5)),
]


def _inputs(n, seed):
    rng = np.random.RandomState(seed)
    # the averages of squares above the squares of the averages (rmspropalex's square root)
    return [rng.uniform(0.1, 1, (3, 4)).astype(np.float32) * (4 if i == 2 else 1)
            for i in range(n)]


@pytest.mark.parametrize('name,n,states,attrs', CASES, ids=[c[0] for c in CASES])
def test_update_writes_weight_and_states(name, n, states, attrs):
    before = _inputs(n, 0)
    arrays = [nd.array(a) for a in before]
    out = getattr(nd, name)(*arrays, out=arrays[0], **attrs)
    assert out is arrays[0]
    for i, (a, b) in enumerate(zip(before, arrays)):
        changed = not np.allclose(a, b.asnumpy(), rtol=1e-10, atol=0)
        assert changed == (i == 0 or i in states), (name, i)


def test_updates_match_mxnet(mxnet_ref, tmp_path):
    code = '''
import numpy as np, mxnet as mx
cases = %r
out = {}
for name, n, _, attrs in cases:
    rng = np.random.RandomState(0)
    arrays = [mx.nd.array(rng.uniform(0.1, 1, (3, 4)).astype(np.float32) * (4 if i == 2 else 1))
              for i in range(n)]
    getattr(mx.nd, name)(*arrays, out=arrays[0], **attrs)
    out[name] = [a.asnumpy() for a in arrays]
np.save(%r, out, allow_pickle=True)
''' % (CASES, str(tmp_path / 'ref.npy'))
    mxnet_ref(code)
    ref = np.load(str(tmp_path / 'ref.npy'), allow_pickle=True).item()
    for name, n, _, attrs in CASES:
        arrays = [nd.array(a) for a in _inputs(n, 0)]
        getattr(nd, name)(*arrays, out=arrays[0], **attrs)
        for i, (r, a) in enumerate(zip(ref[name], arrays)):
            np.testing.assert_allclose(a.asnumpy(), r, rtol=1e-4, atol=1e-6,
                                       err_msg='%s input %d' % (name, i))
