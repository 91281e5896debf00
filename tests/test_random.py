"""nd.random: shapes, dtypes, array parameters, distributions' moments, seeding per device and
the same numbers under both engines."""
import numpy as np
import pytest

import neomx as mx
from neomx import nd

N = 20000


def _draw_all():
    return [nd.random.uniform(-1, 2, shape=(3, 4)).asnumpy(),
            nd.random.normal(1, 2, shape=(5,)).asnumpy(),
            nd.random.randint(0, 100, shape=(6,)).asnumpy(),
            nd.random.exponential(2, shape=(3,)).asnumpy(),
            nd.random.gamma(2, 3, shape=(3,)).asnumpy(),
            nd.random.poisson(4, shape=(3,)).asnumpy(),
            nd.random.multinomial(nd.array([[0.2, 0.3, 0.5]]), shape=4).asnumpy(),
            nd.random.shuffle(nd.arange(10)).asnumpy(),
            nd.random.normal(nd.zeros(2), nd.ones(2), shape=3).asnumpy()]


def test_same_seed_same_numbers_under_both_engines():
    results = {}
    for kind in ('ThreadedEngine', 'NaiveEngine'):
        with mx.engine.engine_scope(kind):
            mx.random.seed(1234)
            results[kind] = _draw_all()
            mx.random.seed(1234)
            again = _draw_all()
        for a, b in zip(results[kind], again):
            np.testing.assert_array_equal(a, b)
    for a, b in zip(results['ThreadedEngine'], results['NaiveEngine']):
        np.testing.assert_array_equal(a, b)
    mx.random.seed(4321)
    other = _draw_all()
    assert not np.array_equal(other[0], results['NaiveEngine'][0])


def test_each_device_has_its_own_generator():
    mx.random.seed(7)
    a0 = nd.random.uniform(shape=(4,), ctx=mx.cpu(0)).asnumpy()
    a1 = nd.random.uniform(shape=(4,), ctx=mx.cpu(1)).asnumpy()
    assert not np.array_equal(a0, a1)
    mx.random.seed(7)
    b1 = nd.random.uniform(shape=(4,), ctx=mx.cpu(1)).asnumpy()
    b0 = nd.random.uniform(shape=(4,), ctx=mx.cpu(0)).asnumpy()
    # Drawing on one device does not move another's generator.
    np.testing.assert_array_equal(a0, b0)
    np.testing.assert_array_equal(a1, b1)
    # Seeding one device leaves the others alone.
    mx.random.seed(99, ctx=mx.cpu(1))
    c1 = nd.random.uniform(shape=(4,), ctx=mx.cpu(1)).asnumpy()
    mx.random.seed(99, ctx='cpu(1)')
    np.testing.assert_array_equal(c1, nd.random.uniform(shape=(4,), ctx=mx.cpu(1)).asnumpy())
    with pytest.raises(mx.MXNetError, match='integer'):
        mx.random.seed(1.5)


def test_shapes_dtypes_and_contexts():
    assert nd.random.uniform(shape=(2, 3)).shape == (2, 3)
    assert nd.random.uniform(0, 1, (2, 3)).shape == (2, 3)
    assert nd.random.uniform(-1, 1, shape=5).shape == (5,)
    assert nd.random.uniform().shape == (1,)
    assert nd.random.normal(0, 1, shape=(2,)).dtype == np.float32
    assert nd.random.normal(shape=(2,), dtype='float64').dtype == np.float64
    assert nd.random.randint(0, 10, shape=(3,)).dtype == np.int32
    assert nd.random.randint(0, 10, shape=(3,), dtype='int64').dtype == np.int64
    assert nd.random.randn(2, 3).shape == (2, 3)
    assert nd.random.uniform(shape=(2,), ctx=mx.cpu(1)).context == mx.cpu(1)
    assert nd.random.poisson(3, shape=(2,)).dtype == np.float32
    assert nd.random_uniform(shape=(2, 2)).shape == (2, 2)
    assert nd.random_normal(shape=(2, 2)).shape == (2, 2)
    assert nd.uniform(shape=(1,)).shape == (1,)
    assert nd.random.negative_binomial(k=3, p=0.5, shape=(2,)).shape == (2,)
    assert nd.random.generalized_negative_binomial(mu=2, alpha=0.5, shape=(2,)).shape == (2,)
    out = nd.zeros((3, 2))
    r = nd.random.uniform(5, 6, out=out)
    assert r is out and np.all((out.asnumpy() >= 5) & (out.asnumpy() < 6))


def test_array_parameters_draw_per_distribution():
    low, high = nd.array([0, 10]), nd.array([1, 11])
    u = nd.random.uniform(low, high, shape=3)
    assert u.shape == (2, 3)
    v = u.asnumpy()
    assert np.all((v[0] >= 0) & (v[0] < 1)) and np.all((v[1] >= 10) & (v[1] < 11))
    assert nd.random.uniform(low, high).shape == (2,)
    assert nd.random.normal(nd.array([[0, 1]]), nd.array([[1, 1]])).shape == (1, 2)
    assert nd.random.exponential(nd.array([1, 2]), shape=2).shape == (2, 2)
    assert nd.random.gamma(nd.array([1, 2]), nd.array([1, 2])).shape == (2,)
    assert nd.random.poisson(nd.array([1, 2]), shape=(3,)).shape == (2, 3)
    assert nd.random.negative_binomial(nd.array([2.0]), nd.array([0.5]), shape=4).shape == (1, 4)
    assert nd.sample_uniform(nd.array([0, 1]), nd.array([1, 2]), shape=2).shape == (2, 2)
    with pytest.raises(mx.MXNetError, match='all NDArrays or all numbers'):
        nd.random.uniform(nd.zeros(2), 1)
    with pytest.raises(mx.MXNetError, match='different shapes'):
        nd.random.normal(nd.zeros(2), nd.ones(3))


def test_argument_errors_at_push_time():
    with pytest.raises(mx.MXNetError, match='low=3 must be below high=3'):
        nd.random.randint(3, 3, shape=(2,))


@pytest.mark.parametrize('draw,mean,var', [
    (lambda: nd.random.uniform(-1, 3, shape=N), 1.0, 16 / 12),
    (lambda: nd.random.normal(2, 3, shape=N), 2.0, 9.0),
    (lambda: nd.random.exponential(2, shape=N), 2.0, 4.0),
    (lambda: nd.random.gamma(3, 2, shape=N), 6.0, 12.0),
    (lambda: nd.random.poisson(4, shape=N), 4.0, 4.0),
    (lambda: nd.random.randint(0, 10, shape=N), 4.5, 99 / 12),
    (lambda: nd.random.negative_binomial(k=3, p=0.4, shape=N), 4.5, 11.25),
    (lambda: nd.random.generalized_negative_binomial(mu=2, alpha=0.5, shape=N), 2.0, 4.0),
    (lambda: nd.random.normal(nd.array([5.0]), nd.array([0.5]), shape=N), 5.0, 0.25),
    (lambda: nd.random.gamma(nd.array([3.0]), nd.array([2.0]), shape=N), 6.0, 12.0),
], ids=['uniform', 'normal', 'exponential', 'gamma', 'poisson', 'randint', 'negbin',
        'gen_negbin', 'sample_normal', 'sample_gamma'])
def test_moments(draw, mean, var):
    mx.random.seed(0)
    x = draw().asnumpy().astype(np.float64).ravel()
    assert abs(x.mean() - mean) < 4 * np.sqrt(var / x.size) + 1e-3
    assert abs(x.var() - var) < 0.1 * var


def test_multinomial():
    mx.random.seed(3)
    p = nd.array([[0.1, 0.2, 0.7], [1.0, 0.0, 0.0]])
    draws = nd.random.multinomial(p, shape=5000).asnumpy()
    assert draws.shape == (2, 5000) and draws.dtype == np.int32
    freq = np.bincount(draws[0], minlength=3) / 5000.0
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.03)
    assert np.all(draws[1] == 0)
    assert nd.random.multinomial(nd.array([0, 0, 1.0])).shape == (1,)
    idx, logp = nd.random.multinomial(p, get_prob=True)
    assert idx.shape == logp.shape == (2,)
    np.testing.assert_allclose(logp.asnumpy()[1], 0.0, atol=1e-6)


def test_shuffle_is_a_permutation_of_rows():
    x = nd.arange(20).reshape((10, 2))
    s = nd.random.shuffle(x).asnumpy()
    assert sorted(s[:, 0].tolist()) == list(range(0, 20, 2))
    np.testing.assert_array_equal(s[:, 1] - s[:, 0], 1)
    assert x.asnumpy()[0].tolist() == [0, 1]      # the input is left alone


S = np.array([[0.5, 1.0, 1.5], [2.0, 0.1, 0.7]])
COUNTS = np.array([[0.0, 1.0, 4.0], [2.0, 3.0, 1.0]])


def _pdf_refs():
    from math import lgamma

    def lg(v):
        return np.vectorize(lgamma)(v)
    return {
        'normal': (S, [np.array([0.0, 1.0]), np.array([1.0, 2.0])],
                   lambda x, m, s: np.exp(-0.5 * ((x - m) / s) ** 2) / (s * np.sqrt(2 * np.pi))),
        'gamma': (S, [np.array([2.0, 3.0]), np.array([1.0, 2.0])],
                  lambda x, a, b: np.exp(a * np.log(b) + (a - 1) * np.log(x) - b * x - lg(a))),
        'exponential': (S, [np.array([2.0, 3.0])], lambda x, lam: lam * np.exp(-lam * x)),
        'uniform': (S, [np.array([0.0, -1.0]), np.array([2.0, 3.0])],
                    lambda x, lo, hi: np.where((x >= lo) & (x <= hi), 1 / (hi - lo), 0.0)),
        'poisson': (COUNTS, [np.array([2.0, 3.0])],
                    lambda x, lam: np.exp(x * np.log(lam) - lam - lg(x + 1))),
        'negative_binomial': (COUNTS, [np.array([2.0, 3.0]), np.array([0.5, 0.3])],
                              lambda x, k, p: np.exp(lg(x + k) - lg(x + 1) - lg(k)
                                                     + k * np.log(p) + x * np.log1p(-p))),
    }


@pytest.mark.parametrize('name', ['normal', 'gamma', 'exponential', 'uniform', 'poisson',
                                  'negative_binomial'])
def test_random_pdf(name, ctx):
    from opcheck import check_op
    sample, params, ref = _pdf_refs()[name]
    f = getattr(nd, 'random_pdf_' + name)

    def np_ref(x, *ps):
        return ref(x, *[p[:, None] for p in ps])
    wrt = [1, 2] if name in ('normal', 'gamma') else []
    check_op(f, np_ref, [sample] + params, ctx, grad=bool(wrt), wrt=wrt)
    logp = f(*[nd.array(a, ctx=ctx) for a in [sample] + params], is_log=True).asnumpy()
    with np.errstate(divide='ignore'):
        np.testing.assert_allclose(logp, np.log(np_ref(sample, *params)), rtol=1e-4, atol=1e-5)


def test_random_pdf_dirichlet_and_generalized():
    out = nd.random_pdf_dirichlet(nd.array([[0.2, 0.3, 0.5]]), nd.array([[1, 2, 3]]))
    np.testing.assert_allclose(out.asnumpy(), [4.5], rtol=1e-5)
    g = nd.random_pdf_generalized_negative_binomial(nd.array([[0, 1]]), nd.array([2.0]),
                                                    nd.array([0.5]))
    np.testing.assert_allclose(g.asnumpy(), [[0.25, 0.25]], rtol=1e-5)
    with pytest.raises(mx.MXNetError, match='leading dims'):
        nd.random_pdf_normal(nd.ones((2, 3)), nd.zeros(3), nd.ones(3))


def test_like_samplers_and_symbolic_forms():
    data = nd.ones((200, 50), dtype='float64')
    for f, mean in [(lambda d: nd.random.normal_like(d, loc=3, scale=0.1), 3),
                    (lambda d: nd.random.uniform_like(d, low=1, high=2), 1.5),
                    (lambda d: nd.random.poisson_like(d, lam=4), 4),
                    (lambda d: nd.random.negative_binomial_like(d, k=3, p=0.5), 3)]:
        s = f(data)
        assert s.shape == data.shape and s.dtype == np.float64
        assert abs(s.asnumpy().mean() - mean) < 0.1
    x = mx.sym.var('x')
    y = mx.sym.random.normal_like(x, loc=5, scale=0.1) + mx.sym.random.randn(loc=1, scale=0.01)
    out = y.eval(x=nd.zeros((30, 40)))[0]     # randn's shape comes from inference
    assert out.shape == (30, 40) and abs(out.asnumpy().mean() - 6) < 0.05
    k, p = mx.sym.var('k'), mx.sym.var('p')
    nb = mx.sym.random.negative_binomial(k, p, shape=(500,))
    draws = nb.eval(k=nd.array([2.0, 4.0]), p=nd.array([0.5, 0.5]))[0].asnumpy()
    assert draws.shape == (2, 500) and abs(draws[1].mean() - 4) < 0.6


def test_zipfian_samplers():
    classes, trials = nd._internal._sample_unique_zipfian(1000, shape=(3, 50))
    assert classes.shape == (3, 50) and classes.dtype == np.int64
    for row, n in zip(classes.asnumpy(), trials.asnumpy()):
        assert len(set(row.tolist())) == 50 and n >= 50 and row.min() >= 0 and row.max() < 1000
    true = nd.array([0, 3, 7], dtype='int32')
    sampled, count_true, count_sampled = nd.contrib.rand_zipfian(true, 100, 20)
    prob = np.log((np.arange(20) + 2) / (np.arange(20) + 1)) / np.log(21)
    np.testing.assert_allclose(count_true.asnumpy(), prob[[0, 3, 7]] * 100, rtol=1e-6)
    np.testing.assert_allclose(count_sampled.asnumpy(), prob[sampled.asnumpy()] * 100, rtol=1e-6)
    outs = mx.sym.Group(list(mx.sym.contrib.rand_zipfian(mx.sym.var('t'), 100, 20)))
    s, ct, cs = outs.eval(t=true)
    np.testing.assert_allclose(cs.asnumpy(), prob[s.asnumpy()] * 100, rtol=1e-6)
