"""Learning-rate schedulers give MXNet 1.9.1's values for the same sequence of update counts
(warm-up included), and reject bad arguments."""
import inspect
import json
import textwrap

import pytest

import neomx as mx
from conftest import run_mxnet

SCHEDULES = [
    ('FactorScheduler', {'step': 3, 'factor': 0.5, 'base_lr': 1.0}),
    ('FactorScheduler', {'step': 2, 'factor': 0.1, 'base_lr': 0.1, 'stop_factor_lr': 1e-4}),
    ('FactorScheduler', {'step': 4, 'factor': 0.9, 'base_lr': 0.5, 'warmup_steps': 5,
                         'warmup_begin_lr': 0.1}),
    ('MultiFactorScheduler', {'step': [3, 7, 12], 'factor': 0.5, 'base_lr': 2.0}),
    ('MultiFactorScheduler', {'step': [5, 9], 'factor': 0.2, 'base_lr': 1.0, 'warmup_steps': 4,
                              'warmup_begin_lr': 0.5, 'warmup_mode': 'constant'}),
    ('PolyScheduler', {'max_update': 20, 'base_lr': 1.0, 'pwr': 2}),
    ('PolyScheduler', {'max_update': 25, 'base_lr': 0.5, 'pwr': 1, 'final_lr': 0.01,
                       'warmup_steps': 5, 'warmup_begin_lr': 0.05}),
    ('CosineScheduler', {'max_update': 20, 'base_lr': 1.0}),
    ('CosineScheduler', {'max_update': 30, 'base_lr': 0.3, 'final_lr': 0.03, 'warmup_steps': 6,
                         'warmup_begin_lr': 0.0}),
]
# Update counts as an optimizer sees them, with a jump (training resumed from a checkpoint).
UPDATES = list(range(0, 31)) + [45, 46, 80]


def _values(mx, schedules, updates):
    out = []
    for cls, kwargs in schedules:
        sched = getattr(mx.lr_scheduler, cls)(**kwargs)
        out.append([sched(n) for n in updates])
    return out


def test_same_values_as_mxnet():
    code = textwrap.dedent(inspect.getsource(_values)) + textwrap.dedent('''
        import json
        import mxnet as mx
        print(json.dumps(_values(mx, %r, %r)))
        ''' % (SCHEDULES, UPDATES))
    ref = json.loads(run_mxnet(code).strip().splitlines()[-1])
    ours = _values(mx, SCHEDULES, UPDATES)
    for (cls, kwargs), r, o in zip(SCHEDULES, ref, ours):
        assert o == pytest.approx(r, rel=1e-12, abs=1e-15), (cls, kwargs)


def test_warmup_linear_and_constant():
    s = mx.lr_scheduler.PolyScheduler(max_update=10, base_lr=1.0, warmup_steps=4,
                                      warmup_begin_lr=0.2)
    assert [s(n) for n in range(4)] == pytest.approx([0.2, 0.4, 0.6, 0.8])
    s = mx.lr_scheduler.CosineScheduler(max_update=10, base_lr=1.0, warmup_steps=4,
                                        warmup_begin_lr=0.2, warmup_mode='constant')
    assert [s(n) for n in range(4)] == [0.2] * 4
    assert s(4) == 1.0 and s(10) == 0.0


def test_factor_stops_at_stop_factor_lr():
    s = mx.lr_scheduler.FactorScheduler(step=1, factor=0.1, base_lr=1.0, stop_factor_lr=1e-3)
    assert s(100) == 1e-3


@pytest.mark.parametrize('make, message', [
    (lambda: mx.lr_scheduler.FactorScheduler(step=0), 'greater or equal than 1'),
    (lambda: mx.lr_scheduler.FactorScheduler(step=2, factor=1.5), 'no more than 1'),
    (lambda: mx.lr_scheduler.MultiFactorScheduler(step=[3, 2]), 'increasing'),
    (lambda: mx.lr_scheduler.MultiFactorScheduler(step=[0, 2]), 'greater or equal than 1'),
    (lambda: mx.lr_scheduler.PolyScheduler(max_update=0), 'strictly positive'),
    (lambda: mx.lr_scheduler.CosineScheduler(max_update=10, base_lr=0.1,
                                             warmup_begin_lr=0.5), 'higher than warmup_begin_lr'),
    (lambda: mx.lr_scheduler.FactorScheduler(step=2, warmup_mode='cubic'), 'linear and constant'),
    (lambda: mx.lr_scheduler.FactorScheduler(step=2, warmup_steps=-1), 'positive or 0'),
])
def test_bad_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_base_class_needs_call():
    with pytest.raises(NotImplementedError, match='__call__'):
        mx.lr_scheduler.LRScheduler()(3)
