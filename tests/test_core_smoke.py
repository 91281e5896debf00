import numpy as np

from opcheck import check_op
from neomx import nd


def test_scalar_and_broadcast_ops(ctx):
    a = np.random.RandomState(1).randn(3, 4)
    b = np.random.RandomState(2).randn(1, 4)
    check_op(lambda x: x * 2 + 1, lambda x: x * 2 + 1, [a], ctx)
    check_op(lambda x, y: x * y - y, lambda x, y: x * y - y, [a, b], ctx)
    check_op(lambda x: nd.exp(x).sum(axis=1), lambda x: np.exp(x).sum(axis=1), [a], ctx)
    check_op(lambda x, y: nd.dot(x, y, transpose_b=True), lambda x, y: x @ y.T, [a, b], ctx)
