"""The modules and names MXNet code imports before it does anything: ``mx.base``, ``mx.util``,
``mx.runtime`` and ``mx.test_utils``'s helpers."""
import contextlib
import io
import threading

import numpy as np
import pytest

import neomx as mx
from neomx import base, runtime, test_utils, util


def test_py_str_and_as_list():
    assert base.py_str(b'caf\xc3\xa9') == 'caf\u00e9'
    assert base._as_list(3) == [3]
    assert base._as_list((1, 2)) == (1, 2)


def test_not_implemented_for_symbol_message():
    def asnumpy():
        pass
    err = base.NotImplementedForSymbol(asnumpy, '__add__', 1.0)
    assert str(err) == ("Function asnumpy (namely operator \"__add__\") with arguments "
                        "(<class 'float'>) is not implemented for Symbol and only available "
                        "in NDArray.")
    assert isinstance(err, mx.MXNetError)
    assert mx.sym.NotImplementedForSymbol is base.NotImplementedForSymbol


def test_register_error_by_name():
    @base.register_error
    class MyFancyError(mx.MXNetError):
        pass
    assert base.error_types['MyFancyError'] is MyFancyError


def test_data_dir_follows_mxnet_home():
    import os
    with test_utils.environment({'MXNET_HOME': None, 'NEOMX_HOME': None}):
        assert base.data_dir() == os.path.join(os.path.expanduser('~'), '.mxnet')
    with test_utils.environment({'MXNET_HOME': '/tmp/mx_home', 'NEOMX_HOME': None}):
        assert base.data_dir() == '/tmp/mx_home'


def test_np_shape_scope_is_per_thread():
    assert not util.is_np_shape()
    seen = []
    with util.np_shape(True):
        assert util.is_np_shape()
        t = threading.Thread(target=lambda: seen.append(util.is_np_shape()))
        t.start()
        t.join()
    assert seen == [False]
    assert not util.is_np_shape()


def test_global_np_shape_reaches_other_threads():
    seen = []
    assert util.set_np_shape(2) is False
    try:
        t = threading.Thread(target=lambda: seen.append(util.is_np_shape()))
        t.start()
        t.join()
    finally:
        util.set_np_shape(0)
    assert seen == [True]
    assert not util.is_np_shape()


def test_np_array_needs_np_shape():
    with pytest.raises(ValueError, match='needs NumPy shape'):
        util.set_np(shape=False, array=True)
    util.set_np()
    try:
        assert util.is_np_array() and util.is_np_shape()
        with pytest.raises(ValueError, match='reset_np'):
            util.set_np_shape(False)
    finally:
        util.reset_np()
    assert not util.is_np_array() and not util.is_np_shape()


def test_use_np_wraps_functions_and_classes():
    @util.use_np
    def f():
        return util.is_np_shape(), util.is_np_array()

    @util.use_np
    class Thing:
        def method(self):
            return util.is_np_array()

        @property
        def prop(self):
            return util.is_np_shape()

        @staticmethod
        def static():
            return util.is_np_array()

    assert f() == (True, True)
    assert Thing().method() and Thing().prop and Thing.static()
    assert not util.is_np_array() and not util.is_np_shape()
    assert f.__name__ == 'f'


def test_np_ufunc_keywords():
    def square(x, out=None):
        return x * x
    checked = util.wrap_np_unary_func(square)
    assert checked(3, dtype=None, casting='same_kind') == 9
    with pytest.raises(NotImplementedError, match='casting'):
        checked(3, casting='unsafe')
    with pytest.raises(TypeError, match='invalid keyword'):
        checked(3, colour='red')
    with pytest.raises(TypeError, match='not understood'):
        checked(3, casting='sideways')


def test_getenv_setenv():
    util.setenv('NEOMX_TEST_VARIABLE', 'x')
    assert util.getenv('NEOMX_TEST_VARIABLE') == 'x'
    util.setenv('NEOMX_TEST_VARIABLE', None)
    assert util.getenv('NEOMX_TEST_VARIABLE') is None


def test_features():
    features = runtime.Features()
    assert features is runtime.Features()
    assert len(features) >= 30 and 'CUDA' in features
    assert features.is_enabled('cuda') == (mx.num_gpus() > 0)
    assert features.is_enabled('INT64_TENSOR_SIZE')
    assert repr(features['PROFILER']) == '\u2714 PROFILER'
    with pytest.raises(RuntimeError, match='unknown'):
        features.is_enabled('NOT_A_FEATURE')


def test_test_utils_star_import_gives_mxnet_names():
    ns = {}
    exec('from neomx.test_utils import *', ns)
    for name in ('mx', 'np', 'assert_almost_equal', 'use_np', 'effective_dtype', 'Features',
                 'verify_generator', 'random_uniform_arrays', 'default_context', 'sys', 'time'):
        assert name in ns, name
    assert ns['mx'] is mx and ns['np'] is np


def test_tolerance_helpers():
    assert test_utils.effective_dtype(mx.nd.ones((2,))) == np.float32
    assert test_utils.get_tolerance(np.ones(2, np.float16), None,
                                    test_utils.default_rtols()) == 1e-2
    assert test_utils.get_tolerance(np.ones(2), 0.5, test_utils.default_rtols()) == 0.5
    test_utils.assert_almost_equal_with_err(np.array([1.0, 2.0, 3.0, 4.0]),
                                            np.array([1.0, 2.0, 3.0, 9.0]), etol=0.3)
    with pytest.raises(AssertionError, match='exceeds tolerance'):
        test_utils.assert_almost_equal_with_err(np.array([1.0, 2.0]), np.array([1.0, 9.0]),
                                                etol=0.3)


def test_collapse_sum_like():
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(test_utils.collapse_sum_like(a, (3, 1)),
                                  a.sum(axis=(0, 2)).reshape(3, 1))
    np.testing.assert_array_equal(test_utils.collapse_sum_like(a, (4,)), a.sum(axis=(0, 1)))


def test_matrices_with_real_eigenvalues():
    np.random.seed(0)
    m = test_utils.new_sym_matrix_with_real_eigvals_nd((2, 4, 4))
    np.testing.assert_allclose(m, np.swapaxes(m, -1, -2), atol=1e-10)
    q = test_utils.new_matrix_with_real_eigvals_nd((3, 3))
    assert np.all(np.abs(np.linalg.eigvals(q).imag) < 1e-8)
    o = test_utils.new_orthonormal_matrix_2d(5)
    np.testing.assert_allclose(o @ o.T, np.eye(5), atol=1e-10)


def test_chi_square_generator_checks():
    from scipy import stats
    np.random.seed(1)
    buckets, probs = test_utils.gen_buckets_probs_with_ppf(lambda x: stats.norm.ppf(x), 5)
    assert len(buckets) == 5 and probs == [0.2] * 5
    test_utils.verify_generator(lambda n: np.random.normal(size=n), buckets, probs,
                                nsamples=20000, nrepeat=3)
    with pytest.raises(AssertionError, match='generator test failed'):
        test_utils.verify_generator(lambda n: np.random.normal(1.0, size=n), buckets, probs,
                                    nsamples=20000, nrepeat=3)
    p, observed, expected = test_utils.chi_square_check(
        lambda n: np.random.randint(0, 3, size=n), [0, 1, 2], [1 / 3] * 3, nsamples=3000)
    assert observed.sum() == 3000 and p > 1e-4
    assert test_utils.mean_check(lambda n: np.random.normal(2.0, 1.0, size=n), 2.0, 1.0,
                                 nsamples=20000)
    assert not test_utils.var_check(lambda n: np.random.normal(0.0, 2.0, size=n), 1.0,
                                    nsamples=20000)


def test_ndarray_module_names():
    from neomx.ndarray import ndarray
    assert ndarray.py_slice is slice
    assert ndarray._STORAGE_TYPE_STR_TO_ID['row_sparse'] == 1


def test_fluent_methods_are_mxnets_list():
    # MXNet 1.9.1's NDArray and Symbol have these methods and not the other unary operators
    x, s = mx.nd.ones((2, 3)), mx.sym.var('x')
    for name in ('argmax_channel', 'shape_array', 'broadcast_like', 'pad', 'flip', 'swapaxes',
                 'split', 'flatten', 'zeros_like', 'softmin', 'relu'):
        assert callable(getattr(x, name)) and callable(getattr(s, name)), name
    for name in ('erf', 'negative', 'softsign', 'make_loss', 'sum_axis', 'reverse', 'crop',
                 'hard_sigmoid', 'SwapAxis'):
        assert not hasattr(x, name) and not hasattr(s, name), name
    assert x.swapaxes(0, 1).shape == (3, 2)
    assert x.argmax_channel().asnumpy().tolist() == [0, 0]


def test_names_libraries_import_from_mxnet_modules(mxnet_ref):
    # Names that libraries built on MXNet import from its modules (GluonNLP, GluonTS), each
    # present with MXNet's behaviour.
    from neomx.contrib.amp import amp
    from neomx.gluon.block import _flatten, _regroup
    from neomx.metric import ndarray as metric_nd
    from neomx.ndarray.contrib import (adamw_update, mp_adamw_update,  # noqa: F401
                                       multi_adamw_update, multi_mp_adamw_update)
    assert amp._amp_initialized is False
    assert metric_nd is mx.nd
    x, y = mx.nd.ones(2), mx.nd.zeros(1)
    flat, fmt = _flatten([x, [None, (y,)]], 'net')
    assert flat == [x, None, y] and fmt == [0, [-1, [0]]]
    assert _regroup(flat, fmt) == [x, [None, [y]]]
    code = '''
import mxnet as mx
from mxnet.gluon.block import _flatten
print(_flatten([mx.nd.ones(2), [None, (mx.nd.zeros(1),)]], 'net')[1])
mx.np.set_printoptions(precision=2, threshold=4)
print(mx.np.array([1.23456, 2, 3, 4, 5]))
mx.np.set_printoptions(precision=8, threshold=1000)
try:
    mx.np.set_printoptions(linewidth=10)
except NotImplementedError:
    print('NotImplementedError')
'''
    want = mxnet_ref(code)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code.replace('mxnet', 'neomx'), {})
    assert out.getvalue() == want


def test_ndarray_module_functions_and_rnd(mxnet_ref):
    # MXNet's ndarray/ndarray.py holds the array functions beside the class; GluonTS passes the
    # module itself as a loss's F (F.maximum). mx.rnd is mx.random, mx.use_np util.use_np.
    from neomx.ndarray import ndarray
    assert ndarray.maximum is mx.nd.maximum and ndarray.zeros is mx.nd.zeros
    assert mx.rnd is mx.random and mx.use_np is util.use_np
    with pytest.raises(AttributeError, match="'neomx.ndarray.ndarray' has no attribute 'abs'"):
        ndarray.abs        # an operator, not one of the module's functions (as in MXNet)
    code = '''
import mxnet as mx
F = mx.nd.ndarray
mx.rnd.seed(seed_state=3)     # the generators differ: only that it is there and takes this
x = mx.nd.array([[0.5, -1, 3], [-2, 0.25, 4]])
print(F.maximum(x, 0).asnumpy().tolist(), F.minimum(2, x).asnumpy().tolist())
print(F.power(F.ones((2,)), 3).asnumpy().tolist(), F.moveaxis(x, 0, 1).shape)
print(F.concatenate([x, x], axis=1).shape, F.onehot_encode(mx.nd.array([1, 0]), F.zeros((2, 3))))
print(hasattr(F, 'abs'), hasattr(mx, 'rnd'), hasattr(mx, 'use_np'))
'''
    want = mxnet_ref(code)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code.replace('mxnet', 'neomx'), {})
    assert out.getvalue() == want
