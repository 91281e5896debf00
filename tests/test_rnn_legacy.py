"""mx.rnn, MXNet 1.x's symbolic cells: names, symbolic shapes, evaluation with begin states
of unknown batch size, FusedRNNCell against its unfused stack (packing and unpacking the
weights both ways), the FusedRNN initializer, the convolutional cells, encode_sentences."""
import numpy as np
import pytest

import neomx as mx
from neomx import nd


def _steps(n=3):
    return [mx.sym.var('rnn_t%d_data' % i) for i in range(n)]


def _shapes(n=3, shape=(10, 50)):
    return {'rnn_t%d_data' % i: shape for i in range(n)}


def _names(cell):
    return sorted(cell.params._params.keys())


@pytest.mark.parametrize('make', [lambda: mx.rnn.RNNCell(100, prefix='rnn_'),
                                  lambda: mx.rnn.LSTMCell(100, prefix='rnn_'),
                                  lambda: mx.rnn.GRUCell(100, prefix='rnn_')])
def test_cells_names_and_shapes(make):
    cell = make()
    outputs = mx.sym.Group(cell.unroll(3, _steps())[0])
    assert _names(cell) == ['rnn_h2h_bias', 'rnn_h2h_weight', 'rnn_i2h_bias', 'rnn_i2h_weight']
    assert outputs.list_outputs() == ['rnn_t%d_out_output' % i for i in range(3)]
    assert outputs.infer_shape(**_shapes())[1] == [(10, 100)] * 3


def test_subclassed_base_cell():
    class Cell(mx.rnn.BaseRNNCell):
        def __init__(self, n, prefix='rnn_'):
            super().__init__(prefix=prefix)
            self._n = n
            self._w = self.params.get('i2h_weight')

        @property
        def state_info(self):
            return [{'shape': (0, self._n), '__layout__': 'NC'}]

        def __call__(self, inputs, states):
            self._counter += 1
            name = '%st%d_' % (self._prefix, self._counter)
            out = self._get_activation(
                mx.sym.FullyConnected(inputs, weight=self._w, num_hidden=self._n,
                                      no_bias=True) + states[0], 'tanh', name='%sout' % name)
            return out, [out]

    cell = Cell(7)
    outputs = mx.sym.Group(cell.unroll(3, _steps())[0])
    assert outputs.list_outputs() == ['rnn_t%d_out_output' % i for i in range(3)]
    assert outputs.infer_shape(**_shapes())[1] == [(10, 7)] * 3


def test_stack_bidirectional_zoneout_and_unfuse_names():
    stack = mx.rnn.SequentialRNNCell()
    for i in range(3):
        cell = mx.rnn.LSTMCell(100, prefix='rnn_stack%d_' % i)
        stack.add(mx.rnn.ResidualCell(cell) if i == 1 else cell)
    outputs = mx.sym.Group(stack.unroll(3, _steps())[0])
    assert 'rnn_stack1_h2h_weight' in _names(stack)
    assert outputs.list_outputs() == ['rnn_stack2_t%d_out_output' % i for i in range(3)]
    bi = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(100, prefix='rnn_l0_'),
                                  mx.rnn.LSTMCell(100, prefix='rnn_r0_'), output_prefix='rnn_bi_')
    outputs, states = bi.unroll(3, _steps())
    outputs = mx.sym.Group(outputs)
    assert outputs.list_outputs() == ['rnn_bi_t%d_output' % i for i in range(3)]
    assert outputs.infer_shape(**_shapes())[1] == [(10, 200)] * 3
    assert len(states) == 2 and len(states[0]) == 2        # [l_states, r_states]
    zone = mx.rnn.ZoneoutCell(mx.rnn.RNNCell(100, prefix='rnn_'), 0.5, 0.5)
    assert mx.sym.Group(zone.unroll(3, _steps())[0]).infer_shape(**_shapes())[1] == \
        [(10, 100)] * 3
    unfused = mx.rnn.FusedRNNCell(100, num_layers=3, mode='lstm', prefix='test_',
                                  bidirectional=True, dropout=0.5).unfuse()
    outputs = mx.sym.Group(unfused.unroll(3, _steps())[0])
    assert outputs.list_outputs() == ['test_bi_l2_t%d_output' % i for i in range(3)]
    assert outputs.infer_shape(**_shapes())[1] == [(10, 200)] * 3


def test_residual_of_zero_weights_evaluates_to_its_input():
    cell = mx.rnn.ResidualCell(mx.rnn.GRUCell(50, prefix='rnn_'))
    outputs = mx.sym.Group(cell.unroll(2, _steps(2))[0])
    res = outputs.eval(rnn_t0_data=nd.ones((10, 50)), rnn_t1_data=nd.ones((10, 50)),
                       rnn_i2h_weight=nd.zeros((150, 50)), rnn_i2h_bias=nd.zeros((150,)),
                       rnn_h2h_weight=nd.zeros((150, 50)), rnn_h2h_bias=nd.zeros((150,)))
    for r in res:
        np.testing.assert_array_equal(r.asnumpy(), np.ones((10, 50)))


@pytest.mark.parametrize('mode,bidirectional,T', [('lstm', False, 3), ('gru', True, 3),
                                                  ('rnn_tanh', True, 3), ('rnn_relu', False, 3),
                                                  ('gru', False, 1)])
def test_fused_cell_matches_unfused_stack(mode, bidirectional, T):
    """test_operator's consistency check without Module: the fused cell's packed weights,
    unpacked and packed again for the stack, give the same outputs and input gradients."""
    N, I, H = 2, 4, 5
    fused = mx.rnn.FusedRNNCell(H, num_layers=2, mode=mode, bidirectional=bidirectional,
                                get_next_state=True, prefix='')
    stack = fused.unfuse()
    data = mx.sym.var('data')
    y1 = fused.unroll(T, data, layout='NTC', merge_outputs=True)[0]
    y2 = stack.unroll(T, data, layout='NTC', merge_outputs=True)[0]
    shapes = dict(zip(y1.list_arguments(), y1.infer_shape(data=(N, T, I))[0]))
    rng = np.random.RandomState(0)
    packed = {'parameters': nd.array(rng.uniform(-0.5, 0.5, shapes['parameters']))}
    args2 = stack.pack_weights(fused.unpack_weights(packed))
    again = fused.pack_weights(stack.unpack_weights(args2))
    np.testing.assert_array_equal(again['parameters'].asnumpy(), packed['parameters'].asnumpy())
    x = nd.array(rng.uniform(-1, 1, (N, T, I)))
    outs, grads = [], []
    for sym, params in ((y1, packed), (y2, args2)):
        args = {'data': x}
        args.update(params)
        for name in sym.list_arguments():
            if name not in args:        # the zero begin states
                args[name] = nd.zeros(dict(zip(sym.list_arguments(),
                                               sym.infer_shape(data=(N, T, I))[0]))[name])
        grad = {'data': nd.zeros((N, T, I))}
        ex = sym.bind(mx.cpu(), args, args_grad=grad, grad_req={'data': 'write'})
        ex.forward(is_train=True)
        ex.backward([nd.ones(ex.outputs[0].shape)])
        outs.append(ex.outputs[0].asnumpy())
        grads.append(grad['data'].asnumpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-5)


def test_fused_rnn_initializer_sets_forget_bias():
    cell = mx.rnn.FusedRNNCell(4, num_layers=1, mode='lstm', forget_bias=2.0, prefix='f_')
    out = cell.unroll(2, mx.sym.var('data'), layout='TNC', merge_outputs=True)[0]
    size = dict(zip(out.list_arguments(), out.infer_shape(data=(2, 3, 5))[0]))['f_parameters']
    arr = nd.zeros(size)
    # the global initializer hands the variable to its own (its __init__ attribute)
    mx.init.One()(mx.init.InitDesc('f_parameters', out.attr_dict()['f_parameters']), arr)
    pieces = cell.unpack_weights({'f_parameters': arr})
    np.testing.assert_array_equal(pieces['f_l0_i2h_f_bias'].asnumpy(), np.full(4, 2.0))
    np.testing.assert_array_equal(pieces['f_l0_h2h_i_bias'].asnumpy(), np.zeros(4))
    np.testing.assert_array_equal(pieces['f_l0_i2h_c_weight'].asnumpy(), np.ones((4, 5)))


def test_lstm_forget_bias_initializer():
    cell = mx.rnn.LSTMCell(3, forget_bias=2.0, prefix='l_')
    out = cell.unroll(1, mx.sym.var('data'), merge_outputs=True)[0]
    arr = nd.ones((12,))
    mx.init.Uniform()(mx.init.InitDesc('l_i2h_bias', out.attr_dict()['l_i2h_bias']), arr)
    np.testing.assert_array_equal(arr.asnumpy(), [0, 0, 0, 2, 2, 2, 0, 0, 0, 0, 0, 0])


@pytest.mark.parametrize('kind', ['ConvRNNCell', 'ConvLSTMCell', 'ConvGRUCell'])
def test_conv_cells(kind):
    cell = getattr(mx.rnn, kind)(input_shape=(1, 3, 16, 10), num_hidden=10, h2h_kernel=(3, 3),
                                 h2h_dilate=(1, 1), i2h_kernel=(3, 3), i2h_stride=(1, 1),
                                 i2h_pad=(1, 1), i2h_dilate=(1, 1), prefix='rnn_')
    outputs = mx.sym.Group(cell.unroll(3, _steps())[0])
    assert _names(cell) == ['rnn_h2h_bias', 'rnn_h2h_weight', 'rnn_i2h_bias', 'rnn_i2h_weight']
    assert outputs.list_outputs() == ['rnn_t%d_out_output' % i for i in range(3)]
    assert outputs.infer_shape(**_shapes(shape=(1, 3, 16, 10)))[1] == [(1, 10, 16, 10)] * 3


def test_encode_sentences():
    res, vocab = mx.rnn.encode_sentences([['a', 'b', 'c'], ['b', 'c', 'd']],
                                         vocab={'a': 1, 'b': 2, 'c': 3}, invalid_label=-1,
                                         invalid_key='\n', start_label=0, unknown_token='UNK')
    assert vocab == {'a': 1, 'b': 2, 'c': 3, 'UNK': 0} and res == [[1, 2, 3], [2, 3, 0]]
    res, vocab = mx.rnn.encode_sentences([['x', 'y'], ['y']], invalid_label=0, start_label=0)
    assert res == [[1, 2], [2]] and vocab == {'\n': 0, 'x': 1, 'y': 2}
    with pytest.raises(KeyError, match='z'):
        mx.rnn.encode_sentences([['z']], vocab={'a': 0})


@pytest.mark.parametrize('layout', ['NT', 'TN'])
def test_bucket_sentence_iter(layout):
    sentences = [[1, 2, 3], [4, 5], [6, 7, 8], [9, 1], [3] * 6, [2, 2]]
    it = mx.rnn.BucketSentenceIter(sentences, 2, buckets=[2, 3], invalid_label=0, layout=layout)
    assert it.default_bucket_key == 3 and it.buckets == [2, 3]
    assert it.provide_data[0].shape == ((2, 3) if layout == 'NT' else (3, 2))
    for _ in range(2):          # reset shuffles, the content stays
        batches = list(it)
        it.reset()
        assert sorted(b.bucket_key for b in batches) == [2, 3]
        rows = set()
        for b in batches:
            data, label = b.data[0].asnumpy(), b.label[0].asnumpy()
            assert b.provide_data[0].shape == data.shape
            if layout == 'TN':
                data, label = data.T, label.T
            assert data.shape == (2, b.bucket_key)
            np.testing.assert_array_equal(label[:, :-1], data[:, 1:])
            assert (label[:, -1] == 0).all()
            rows |= {tuple(r) for r in data.astype(int)}
        assert rows <= {(1, 2, 3), (6, 7, 8), (4, 5), (9, 1), (2, 2)} and len(rows) == 4
    default = mx.rnn.BucketSentenceIter([[1, 2]] * 5 + [[1, 2, 3]] * 3, 2)
    assert default.buckets == [2, 3] and len(list(default)) == 3
