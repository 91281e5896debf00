"""SVRGModule and its optimizer: variance-reduced steps g(w) - g(w~) + mu, full gradients
every update_freq epochs, full-gradient slots assigned in the KVStore."""
import numpy as np
import pytest

import neomx as mx
from neomx.contrib.svrg_optimization.svrg_module import SVRGModule
from neomx.contrib.svrg_optimization.svrg_optimizer import _SVRGOptimizer


def _problem(n=64, batch=16):
    rng = np.random.RandomState(1)
    x = rng.rand(n, 2).astype(np.float32)
    y = x @ np.array([1.0, -2.0], dtype=np.float32) + 0.5
    it = mx.io.NDArrayIter(x, y, batch_size=batch, label_name='lin_reg_label')
    net = mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=1, name='fc1'),
        mx.sym.var('lin_reg_label'), name='lro')
    return x, y, it, net


def test_arguments_are_checked():
    _, _, _, net = _problem()
    with pytest.raises(TypeError, match='integer'):
        SVRGModule(net, label_names=['lin_reg_label'], update_freq=1.5)
    with pytest.raises(ValueError, match='positive'):
        SVRGModule(net, label_names=['lin_reg_label'], update_freq=0)


def test_a_step_uses_the_variance_reduced_gradient():
    x, y, it, net = _problem()
    mod = SVRGModule(net, label_names=['lin_reg_label'], update_freq=2)
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Zero())
    mod.init_optimizer(optimizer='sgd', optimizer_params=(('learning_rate', 0.1),))
    assert type(mod._optimizer).__name__ == '_SVRGOptimizer'
    mod.update_full_grads(it)           # snapshot at w = 0, b = 0
    # at the snapshot, LinearRegressionOutput's gradient of the weight is sum((p - y) x)
    mu = (-(y[:, None] * x)).reshape(4, 16, 2).sum(axis=1).mean(axis=0)
    np.testing.assert_allclose(mod._param_dict[0]['fc1_weight'].asnumpy().ravel(), mu,
                               rtol=1e-5)
    it.reset()
    batch = next(iter(it))
    mod.forward_backward(batch)
    mod.update()                        # g(w) - g(w~) = 0 at the snapshot: the step is mu
    w = mod.get_params()[0]['fc1_weight'].asnumpy().ravel()
    np.testing.assert_allclose(w, -0.1 * mu / 16, rtol=1e-5)    # rescale_grad = 1 / batch


def test_fit_converges_and_the_optimizer_routes_full_slots():
    x, y, it, net = _problem()
    mod = SVRGModule(net, label_names=['lin_reg_label'], update_freq=2)
    mod.fit(it, num_epoch=40, optimizer_params=(('learning_rate', 0.4),), eval_metric='mse')
    w = mod.get_params()[0]
    np.testing.assert_allclose(w['fc1_weight'].asnumpy().ravel(), [1.0, -2.0], atol=0.05)
    opt = _SVRGOptimizer('sgd', learning_rate=1.0, param_idx2name={0: 'a', 1: 'a_full'})
    assert opt.default_opt.lr == 1.0 and type(opt.aux_opt).__name__ == '_AssignmentOptimizer'
    kv = mx.kv.create('local')
    kv.set_optimizer(opt)
    kv.init(1, mx.nd.zeros(2))
    kv.push(1, mx.nd.array([3.0, 4.0]))
    out = mx.nd.zeros(2)
    kv.pull(1, out)
    assert out.asnumpy().tolist() == [3.0, 4.0]
