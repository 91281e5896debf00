"""Custom operators (mx.operator): CustomOp/CustomOpProp run as the ``Custom`` operator,
imperatively, under autograd, in symbols, hybridized blocks and exported graphs."""
import numpy as np
import pytest

import neomx as mx
from neomx import autograd, nd


class _Sqr(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        aux[0][:] = aux[0] + 1          # counts the calls: auxiliary states are written in place
        self.assign(out_data[0], req[0], in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])


@mx.operator.register('test_sqr')
class _SqrProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ['data']

    def list_auxiliary_states(self):
        return ['count']

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], [in_shape[0]]

    def create_operator(self, ctx, shapes, dtypes):
        return _Sqr()


class _Scale(mx.operator.CustomOp):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * self.factor + in_data[1])
        self.assign(out_data[1], req[1], in_data[1].sum(axis=0))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * self.factor)
        self.assign(in_grad[1], req[1], out_grad[0] + out_grad[1].reshape((1, -1)))


@mx.operator.register('test_scale')
class _ScaleProp(mx.operator.CustomOpProp):
    def __init__(self, factor='1'):
        super().__init__()
        self.factor = float(factor)     # attributes arrive as strings, as in MXNet

    def list_arguments(self):
        return ['lhs', 'rhs']

    def list_outputs(self):
        return ['out', 'colsum']

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], [in_shape[1][1]]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Scale(self.factor)


class _Fails(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        raise ValueError('custom forward failed on purpose')


@mx.operator.register('test_fails')
class _FailsProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return _Fails()


def test_imperative_forward_backward_and_aux(engine):
    x = nd.array([[1.0, -2.0], [3.0, 0.5]])
    count = nd.zeros((2, 2))
    x.attach_grad()
    with autograd.record():
        y = nd.Custom(x, count, op_type='test_sqr')
    y.backward(nd.ones((2, 2)) * 3)
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy() ** 2)
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * x.asnumpy())
    nd.Custom(x, count, op_type='test_sqr').wait_to_read()
    np.testing.assert_allclose(count.asnumpy(), 2 * np.ones((2, 2)))


def test_attributes_named_inputs_and_several_outputs(engine):
    a = nd.array(np.arange(6).reshape(2, 3))
    b = nd.array(np.ones((2, 3)))
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        out, colsum = nd.Custom(lhs=a, rhs=b, factor=2.5, op_type='test_scale')
        loss = out.sum() + (colsum * 2).sum()
    loss.backward()
    np.testing.assert_allclose(out.asnumpy(), a.asnumpy() * 2.5 + 1)
    np.testing.assert_allclose(colsum.asnumpy(), [2, 2, 2])
    np.testing.assert_allclose(a.grad.asnumpy(), np.full((2, 3), 2.5))
    np.testing.assert_allclose(b.grad.asnumpy(), np.full((2, 3), 3.0))


def test_errors_are_raised_at_synchronisation(engine):
    y = nd.Custom(nd.ones((2,)), op_type='test_fails')       # returns: the body runs later
    with pytest.raises(mx.MXNetError, match='on purpose'):
        y.wait_to_read()
    with pytest.raises(mx.MXNetError, match="no custom operator is registered as op_type='nope'"):
        nd.Custom(nd.ones((2,)), op_type='nope')
    # the engine keeps working
    assert nd.Custom(nd.ones((2,)), nd.zeros((2,)), op_type='test_sqr').asnumpy().tolist() == [1, 1]


def test_symbol_names_shapes_bind_and_json():
    data = mx.sym.var('data')
    s = mx.sym.Custom(data=data, name='sq', op_type='test_sqr')
    assert s.list_arguments() == ['data']
    assert s.list_auxiliary_states() == ['sq_count']
    assert s.list_outputs() == ['sq_output']
    assert s.infer_shape(data=(2, 3)) == ([(2, 3)], [(2, 3)], [(2, 3)])
    two = mx.sym.Custom(mx.sym.var('l'), mx.sym.var('r'), factor='3', op_type='test_scale')
    assert two.list_outputs() == ['custom0_out', 'custom0_colsum']
    assert two.infer_shape(l=(2, 4), r=(2, 4))[1] == [(2, 4), (4,)]
    loaded = mx.sym.load_json(s.tojson())
    assert loaded.attr('op_type') == 'test_sqr'
    x = nd.array([1.0, 2.0, 3.0])
    gx = nd.zeros((3,))
    ex = loaded.bind(mx.cpu(), {'data': x}, args_grad={'data': gx},
                     aux_states={'sq_count': nd.zeros((3,))})
    ex.forward(is_train=True)
    ex.backward(nd.ones((3,)))
    assert ex.outputs[0].asnumpy().tolist() == [1, 4, 9]
    assert gx.asnumpy().tolist() == [2, 4, 6]
    assert ex.aux_dict['sq_count'].asnumpy().tolist() == [1, 1, 1]


class _ScaleBlock(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x, y):
        out, _ = F.Custom(x, y, factor=2, op_type='test_scale')
        return F.relu(out)


def test_hybridized_block_and_exported_graph(tmp_path):
    net = _ScaleBlock()
    net.hybridize()
    x = nd.array([[1.0, -3.0]])
    y = nd.array([[0.5, 0.5]])
    x.attach_grad()
    with autograd.record():
        out = net(x, y)
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), [[2.5, 0.0]])
    np.testing.assert_allclose(x.grad.asnumpy(), [[2.0, 0.0]])
    net.export(str(tmp_path / 'scale'))
    back = mx.gluon.SymbolBlock.imports(str(tmp_path / 'scale-symbol.json'), ['data0', 'data1'])
    np.testing.assert_allclose(back(x, y).asnumpy(), [[2.5, 0.0]])


def test_numpy_op_runs_as_a_custom_operator():
    class Double(mx.operator.NumpyOp):
        def forward(self, in_data, out_data):
            out_data[0][:] = in_data[0] * 2

        def backward(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = out_grad[0] * 2

    s = Double().get_symbol(mx.sym.var('x'))
    gx = nd.zeros((3,))
    ex = s.bind(mx.cpu(), {'x': nd.array([1.0, 2.0, 3.0])}, args_grad={'x': gx})
    ex.forward(is_train=True)
    ex.backward(nd.ones((3,)))
    assert ex.outputs[0].asnumpy().tolist() == [2, 4, 6]
    assert gx.asnumpy().tolist() == [2, 2, 2]


def test_operator_arguments_as_mxnet_describes_them():
    args = mx.operator.get_operator_arguments('Activation')
    assert args.names == ['data', 'act_type']
    assert args.types == ['NDArray-or-Symbol',
                          "{'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required"]
    assert 'Custom' in mx.operator.get_all_registered_operators()
