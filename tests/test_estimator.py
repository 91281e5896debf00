"""``gluon.contrib.estimator``: fit by epochs or batches, default metrics and handlers,
checkpoints and resuming, early stopping, logging, validation, custom batch processors."""
import io
import logging
import os
import re

import numpy as np
import pytest

import neomx as mx
from neomx import gluon, nd
from neomx.gluon.contrib.estimator import (BatchProcessor, CheckpointHandler,
                                           EarlyStoppingHandler, Estimator, EpochEnd,
                                           LoggingHandler, ValidationHandler)


def _net():
    net = gluon.nn.Sequential()
    net.add(gluon.nn.Dense(8, activation='relu', in_units=5), gluon.nn.Dense(3, in_units=8))
    return net


def _data(n=32, batch_size=8):
    x = nd.array(np.random.RandomState(0).rand(n, 5))
    y = nd.array(np.arange(n) % 3)
    return gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=batch_size)


def _estimator(net=None, **kw):
    net = net or _net()
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), **kw)
    est.logger.setLevel(logging.ERROR)
    return est


def test_fit_by_epochs_and_batches_trains():
    net = _net()
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.5})
    est = _estimator(net, trainer=trainer)
    assert [m.name for m in est.train_metrics] == ['training accuracy',
                                                   'training softmaxcrossentropyloss']
    assert [m.name for m in est.val_metrics] == ['validation accuracy',
                                                 'validation softmaxcrossentropyloss']
    before = net[1].weight.data().asnumpy().copy()
    est.fit(_data(), epochs=2)
    assert not np.allclose(before, net[1].weight.data().asnumpy())
    assert est.max_epoch == 2 and est.train_metrics[1].get()[1] > 0
    est.fit(_data(), batches=3)
    with pytest.raises(ValueError, match='one and only one'):
        est.fit(_data(), epochs=1, batches=1)
    with pytest.raises(ValueError, match='DataLoader'):
        est.fit([1, 2], epochs=1)
    with pytest.raises(ValueError, match='Loss'):
        Estimator(_net(), 'l2')
    with pytest.raises(AssertionError, match='not available'):
        Estimator(_net(), gluon.loss.L2Loss(), context=[mx.gpu(100)])


def test_checkpoints_and_resume(tmp_path):
    est = _estimator()
    acc = est.train_metrics[0]
    ckpt = CheckpointHandler(str(tmp_path), model_prefix='m', monitor=acc, save_best=True,
                             epoch_period=1, max_checkpoints=2)
    est.fit(_data(), event_handlers=[ckpt], epochs=3)
    names = sorted(os.listdir(tmp_path))
    # the last two epoch checkpoints are kept, and the best
    assert names == ['m-best.params', 'm-best.states', 'm-epoch1batch8.params',
                     'm-epoch1batch8.states', 'm-epoch2batch12.params', 'm-epoch2batch12.states']
    resume = CheckpointHandler(str(tmp_path), model_prefix='m', resume_from_checkpoint=True)
    est.fit(_data(), event_handlers=[resume], epochs=5)
    assert est.max_epoch == 2
    assert os.path.isfile(tmp_path / 'm-epoch4batch20.params')
    with pytest.raises(ValueError, match='maximum number of epoch'):
        est.fit(_data(), event_handlers=[CheckpointHandler(str(tmp_path), model_prefix='m',
                                                           resume_from_checkpoint=True)],
                epochs=3)


def test_checkpoint_by_batches_saves_the_symbol_of_a_hybrid_net(tmp_path):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(4), gluon.nn.Dense(3))
    net.initialize()
    net.hybridize()
    est = _estimator(net)
    ckpt = CheckpointHandler(str(tmp_path), model_prefix='h', epoch_period=None, batch_period=3)
    est.fit(_data(), event_handlers=[ckpt], batches=7)
    assert ckpt.current_batch == 7
    names = set(os.listdir(tmp_path))
    assert {'h-symbol.json', 'h-epoch0batch2.params', 'h-epoch1batch5.states'} <= names


def test_early_stopping():
    est = _estimator()
    stop = EarlyStoppingHandler(monitor=est.train_metrics[0], patience=0, mode='min')
    est.fit(_data(), event_handlers=[stop], epochs=10)
    assert stop.stop_training and stop.current_epoch < 10
    with pytest.raises(ValueError, match='metric'):
        EarlyStoppingHandler(monitor='accuracy')


def test_logging_interval_and_validation():
    out = io.StringIO()
    est = _estimator()
    est.logger.setLevel(logging.INFO)
    est.logger.handlers[0].stream = out
    handler = LoggingHandler(metrics=est.train_metrics, log_interval=2)
    est.fit(_data(40), event_handlers=[handler], epochs=1)
    lines = [l for l in out.getvalue().splitlines()
             if re.match(r'\[Epoch \d+\]\[Batch \d+\]\[Samples \d+\] time/interval: \S+s '
                         r'training accuracy: \S+', l)]
    assert len(lines) == 3     # batches 0, 2 and 4 of 5

    class Seen(EpochEnd):
        def epoch_end(self, estimator, *args, **kwargs):
            estimator.validated = True
    est = _estimator()
    val = ValidationHandler(val_data=_data(), eval_fn=est.evaluate, event_handlers=Seen())
    est.fit(_data(), val_data=_data(), event_handlers=[val], epochs=1)
    assert est.validated and not np.isnan(est.val_metrics[0].get()[1])


def test_custom_batch_processor():
    calls = []

    class Counting(BatchProcessor):
        def fit_batch(self, estimator, train_batch, batch_axis=0):
            calls.append(train_batch[0].shape[0])
            return super().fit_batch(estimator, train_batch, batch_axis)
    est = _estimator(batch_processor=Counting())
    est.fit(_data(24), batches=2)
    assert calls == [8, 8]
    with pytest.raises(ValueError, match='fit_batch'):
        _estimator(batch_processor=object())
