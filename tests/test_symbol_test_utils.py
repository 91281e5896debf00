"""The symbolic test helpers (neomx.test_utils_symbolic, MXNet's names and signatures)."""
import numpy as np
import pytest

import neomx as mx
from neomx.test_utils_symbolic import (check_consistency, check_numeric_gradient,
                                       check_symbolic_backward, check_symbolic_forward,
                                       simple_forward)


def test_check_symbolic_forward_passes_and_fails():
    x = mx.sym.var('x')
    out = check_symbolic_forward(x * 2 + 1, [np.ones((2, 2))], [np.full((2, 2), 3.0)])
    assert out[0].shape == (2, 2)
    g = mx.sym.Group([x + 1, x * 3])
    check_symbolic_forward(g, {'x': np.ones(3)},
                           dict(zip(g.list_outputs(), [np.full(3, 2.0), np.full(3, 3.0)])))
    with pytest.raises(AssertionError):
        check_symbolic_forward(x * 2, [np.ones((2, 2))], [np.full((2, 2), 5.0)])
    with pytest.raises(ValueError, match='do not match'):
        check_symbolic_forward(x * 2, {'y': np.ones(2)}, [np.ones(2)])


def test_check_symbolic_backward_write_add_null():
    x, w = mx.sym.var('x'), mx.sym.var('w')
    s = mx.sym.dot(x, w)
    loc = [np.ones((2, 3)), np.ones((3, 4))]
    expected = [np.full((2, 3), 4.0), np.full((3, 4), 2.0)]
    check_symbolic_backward(s, loc, [np.ones((2, 4))], expected)
    check_symbolic_backward(s, loc, [np.ones((2, 4))], expected, grad_req='add')
    check_symbolic_backward(s, loc, [np.ones((2, 4))], expected,
                            grad_req={'x': 'null', 'w': 'write'})
    with pytest.raises(AssertionError):
        check_symbolic_backward(s, loc, [np.ones((2, 4))], [np.zeros((2, 3)), expected[1]])


def test_check_numeric_gradient_catches_a_wrong_gradient():
    x = mx.sym.var('x')
    check_numeric_gradient(mx.sym.tanh(x) * mx.sym.exp(x), [np.random.rand(2, 3)],
                           dtype=np.float64)
    check_numeric_gradient(mx.sym.FullyConnected(x, num_hidden=3, name='fc'),
                           [np.random.rand(2, 4), np.random.rand(3, 4), np.random.rand(3)],
                           dtype=np.float64)
    # BlockGrad's gradient is zero by definition: finite differences disagree
    with pytest.raises(AssertionError):
        check_numeric_gradient(mx.sym.BlockGrad(x) * x, [np.random.rand(3) + 1],
                               dtype=np.float64)


def test_simple_forward_and_consistency():
    x = mx.sym.var('x')
    np.testing.assert_allclose(simple_forward(x * 3, x=np.ones(2)), [3.0, 3.0])
    a, b = simple_forward(mx.sym.Group([x, x + 1]), x=np.zeros(1))
    assert a.tolist() == [0.0] and b.tolist() == [1.0]
    w = mx.sym.var('w')
    net = mx.sym.tanh(mx.sym.dot(x, w))
    gt = check_consistency(net, [
        {'ctx': mx.cpu(0), 'x': (2, 3), 'w': (3, 4), 'type_dict': {'x': np.float64,
                                                                  'w': np.float64}},
        {'ctx': mx.cpu(1), 'x': (2, 3), 'w': (3, 4)}])
    assert set(gt) == {net.list_outputs()[0], 'x', 'w'}
    with pytest.raises(AssertionError):
        check_consistency(net, [{'ctx': mx.cpu(0), 'x': (2, 3), 'w': (3, 4)},
                                {'ctx': mx.cpu(0), 'x': (2, 3), 'w': (3, 4)}],
                          ground_truth={net.list_outputs()[0]: np.zeros((2, 4))})
