"""Metrics give MXNet 1.9.1's values for the same batches (local and global values, after
reset_local, composite metrics, metrics created by name), and check their inputs."""
import inspect
import json
import math

import numpy as np
import pytest

import neomx as mx
from neomx import nd
from conftest import run_mxnet

# (name given to metric.create, its arguments, the kind of data it takes)
METRICS = [
    ('acc', {}, 'class'),
    ('acc', {'axis': 0}, 'class_t'),
    ('top_k_accuracy', {'top_k': 3}, 'class'),
    ('f1', {}, 'binary'),
    ('f1', {'average': 'micro'}, 'binary'),
    ('mcc', {}, 'binary'),
    ('mcc', {'average': 'micro'}, 'binary'),
    ('perplexity', {'ignore_label': None}, 'prob'),
    ('perplexity', {'ignore_label': 1}, 'prob'),
    ('mae', {}, 'regress'),
    ('mse', {}, 'regress'),
    ('rmse', {}, 'regress'),
    ('ce', {}, 'prob'),
    ('nll_loss', {'eps': 1e-8}, 'prob'),
    ('pearsonr', {}, 'regress'),
    ('pearsonr', {'average': 'micro'}, 'regress'),
    ('pcc', {}, 'class'),
    ('loss', {}, 'loss'),
]


def _metric_values(mx, metrics):
    """Two batches through each metric; the values after each, the global value after a
    reset_local, and the names. The same source runs under MXNet and neomx."""
    import numpy as np
    rs = np.random.RandomState(42)

    def batch(kind):
        if kind in ('class', 'class_t'):
            p = rs.rand(6, 5)
            label, pred = rs.randint(0, 5, size=6), p / p.sum(axis=1, keepdims=True)
            if kind == 'class_t':
                pred = pred.T
        elif kind == 'binary':
            label = rs.randint(0, 2, size=8)
            p = rs.rand(8, 2)
            pred = p / p.sum(axis=1, keepdims=True)
        elif kind == 'prob':
            p = rs.rand(7, 4)
            label, pred = rs.randint(0, 4, size=7), p / p.sum(axis=1, keepdims=True)
        elif kind == 'regress':
            label, pred = rs.randn(6), rs.randn(6)
        else:
            label, pred = rs.randn(3), rs.rand(3, 2)
        return [mx.nd.array(label)], [mx.nd.array(pred)]

    out = []
    for name, kwargs, kind in metrics:
        m = mx.metric.create(name, **kwargs)
        row = [m.name]
        for _ in range(2):
            labels, preds = batch(kind)
            m.update(labels, preds)
            row.append(float(m.get()[1]))
        m.reset_local()
        row.append(float(m.get_global()[1]))
        labels, preds = batch(kind)
        m.update(labels, preds)
        row.append(float(m.get()[1]))
        row.append(float(m.get_global()[1]))
        out.append(row)
    comp = mx.metric.create(['acc', 'mse', mx.metric.TopKAccuracy(2)])
    labels, preds = batch('class')
    comp.update(labels, preds)
    names, values = comp.get()
    out.append([names, [float(v) for v in values], comp.get_name_value()[2][0]])
    return out


def test_same_values_as_mxnet():
    code = inspect.getsource(_metric_values) + 'import json\nimport mxnet as mx\n' \
        'print(json.dumps(_metric_values(mx, %r)))\n' % (METRICS,)
    ref = json.loads(run_mxnet(code).strip().splitlines()[-1])
    ours = json.loads(json.dumps(_metric_values(mx, METRICS)))
    assert len(ours) == len(ref)
    for (name, kwargs, _), r, o in zip(METRICS + [('composite', {}, '')], ref, ours):
        assert o[0] == r[0], (name, kwargs)
        if name == 'composite':
            assert o == [r[0], pytest.approx(r[1], rel=1e-6), r[2]]
            continue
        for a, b in zip(o[1:], r[1:]):
            if math.isnan(b):
                assert math.isnan(a), (name, kwargs, o, r)
            else:
                assert a == pytest.approx(b, rel=2e-6, abs=1e-9), (name, kwargs, o, r)


def test_accuracy_example_and_reset():
    acc = mx.metric.Accuracy()
    preds = [nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])]
    labels = [nd.array([0, 1, 1])]
    acc.update(labels=labels, preds=preds)
    assert acc.get() == ('accuracy', 2 / 3)
    assert acc.get_name_value() == [('accuracy', 2 / 3)]
    assert str(acc) == "EvalMetric: {'accuracy': %r}" % (2 / 3)
    acc.reset()
    name, value = acc.get()
    assert name == 'accuracy' and math.isnan(value)
    # class indices as predictions
    acc.update([nd.array([1, 2])], [nd.array([1, 0])])
    assert acc.get()[1] == 0.5


def test_single_arrays_are_wrapped():
    m = mx.metric.MAE()
    m.update(nd.array([1.0, 2.0]), nd.array([1.5, 2.5]))
    assert m.get() == ('mae', 0.5)


def test_create_forms():
    assert isinstance(mx.metric.create('acc'), mx.metric.Accuracy)
    m = mx.metric.Accuracy()
    assert mx.metric.create(m) is m
    assert isinstance(mx.metric.create('["top_k_accuracy", {"top_k": 2}]'), mx.metric.TopKAccuracy)
    m2 = mx.metric.create(mx.metric.create('f1').get_config())
    assert isinstance(m2, mx.metric.F1)

    def my_err(label, pred):
        return np.abs(label - pred).sum(), label.size
    custom = mx.metric.create(my_err)
    custom.update([nd.array([1., 2.])], [nd.array([2., 4.])])
    assert custom.get() == ('my_err', 1.5)
    with pytest.raises(ValueError, match='nosuch is not registered'):
        mx.metric.create('nosuch')
    with pytest.raises(NotImplementedError, match='cannot be serialized'):
        custom.get_config()
    np_metric = mx.metric.np(lambda l, p: float((l == p).mean()))
    np_metric.update([nd.array([1., 2.])], [nd.array([1., 3.])])
    assert np_metric.get()[1] == 0.5


def test_register_custom_metric():
    @mx.metric.register
    @mx.metric.alias('always_one')
    class One(mx.metric.EvalMetric):
        def __init__(self):
            super().__init__('one')

        def update(self, labels, preds):
            self.sum_metric += len(preds)
            self.num_inst += len(preds)
    assert mx.metric.create('always_one').name == 'one'
    assert isinstance(mx.metric.create('one'), One)


def test_composite_update_dict_and_get_metric():
    comp = mx.metric.CompositeEvalMetric(metrics=['acc', 'ce'], output_names=['softmax'],
                                         label_names=['label'])
    comp.update_dict({'label': nd.array([0, 1]), 'other': nd.array([5, 5])},
                     {'softmax': nd.array([[0.9, 0.1], [0.2, 0.8]]), 'aux': nd.ones((2, 2))})
    names, values = comp.get()
    assert names == ['accuracy', 'cross-entropy'] and values[0] == 1.0
    assert isinstance(comp.get_metric(1), mx.metric.CrossEntropy)
    with pytest.raises(ValueError, match='out of range'):
        comp.get_metric(5)


def test_input_checks():
    with pytest.raises(ValueError, match='Shape of labels 2 does not match shape of predictions 1'):
        mx.metric.Accuracy().update([nd.ones((2,)), nd.ones((2,))], [nd.ones((2,))])
    with pytest.raises(ValueError, match='only supports binary classification'):
        mx.metric.F1().update([nd.array([0, 1, 2])], [nd.ones((3, 2))])
    with pytest.raises(ValueError, match='Please use Accuracy if top_k is no more than 1'):
        mx.metric.TopKAccuracy(top_k=1)
    with pytest.raises(ValueError, match='shape mismatch'):
        mx.metric.Perplexity(None).update([nd.ones((3,))], [nd.ones((2, 4))])
