"""The main job, ``python -m neomx.examples.train``: its per-epoch table, LeNet's accuracy on
the digits, the device options and their errors."""
import os
import re
import subprocess
import sys

import pytest

import neomx as mx

pytest.importorskip('sklearn')
from neomx.examples import train  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROW = re.compile(r'^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$')


def _rows(text):
    """The per-epoch rows of each model's table: {model: [(epoch, loss, ...), ...]}."""
    tables, current = {}, None
    for line in text.splitlines():
        m = re.match(r'^(lenet|resnet18): (\d+) epochs', line)
        if m:
            current = tables.setdefault(m.group(1), [])
        elif ROW.match(line) and current is not None:
            current.append(tuple(float(v) for v in ROW.match(line).groups()))
    return tables


def test_both_models_table(capsys):
    results = train.main(['--epochs', '2', '--train-size', '256', '--test-size', '64',
                          '--batch-size', '32', '--resnet-width', '4', '--no-progress',
                          '--hybridize', '--data-root', os.path.join(ROOT, 'no-such-folder')])
    out = capsys.readouterr().out
    assert 'devices: [cpu(0), cpu(1)]' in out
    assert "scikit-learn's handwritten digits" in out and '256 training and 64 test' in out
    assert out.count('epoch     loss train acc  test acc  samples/s     sec') == 2
    tables = _rows(out)
    assert list(tables) == ['lenet', 'resnet18'] == list(results)
    for name, rows in tables.items():
        assert [r[0] for r in rows] == [1, 2]
        for (epoch, loss, train_acc, test_acc, speed, sec), res in zip(rows, results[name]):
            assert 0 < loss < 10 and 0 <= train_acc <= 1 and 0 <= test_acc <= 1
            assert speed > 0 and sec > 0
            assert abs(res['loss'] - loss) < 1e-3 and abs(res['test_acc'] - test_acc) < 1e-3
            assert abs(res['samples_per_sec'] * res['seconds'] - 256) < 1   # full batches only


def test_lenet_learns_the_digits(capsys):
    # the digits set whatever ~/.mxnet holds: a Fashion-MNIST folder there makes 'auto' read it
    rows = train.main(['--model', 'lenet', '--epochs', '5', '--no-progress', '--data',
                       'digits'])['lenet']
    assert len(rows) == 5
    assert rows[-1]['loss'] < rows[0]['loss'] / 3
    assert rows[-1]['test_acc'] > 0.9, rows
    assert '1347 training and 450 test images' in capsys.readouterr().out


def test_devices(monkeypatch, capsys):
    assert train.get_devices(cpu=True) == [mx.cpu(0), mx.cpu(1)]
    assert train.get_devices(3, cpu=True) == [mx.cpu(0), mx.cpu(1), mx.cpu(2)]
    monkeypatch.setattr(mx, 'num_gpus', lambda: 2)
    assert train.get_devices() == [mx.gpu(0), mx.gpu(1)]
    assert train.get_devices(1) == [mx.gpu(0)]
    assert train.get_devices(cpu=True) == [mx.cpu(0), mx.cpu(1)]
    with pytest.raises(ValueError, match=r'--devices 4 asks for 4 GPUs but this machine has 2 '
                                         r'\(gpu\(0\), gpu\(1\)\)'):
        train.get_devices(4)
    with pytest.raises(SystemExit) as e:
        train.main(['--devices', '4'])
    assert e.value.code == 2
    assert '4 GPUs but this machine has 2' in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train.main(['--epochs', '0'])
    assert '--epochs must be at least 1' in capsys.readouterr().err


def test_runs_as_a_module():
    r = subprocess.run([sys.executable, '-m', 'neomx.examples.train', '--help'], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for option in ('--model', '--epochs', '--batch-size', '--lr', '--devices', '--hybridize'):
        assert option in r.stdout


@pytest.mark.gpu
def test_main_job_on_gpus(capsys):
    rows = train.main(['--model', 'both', '--epochs', '1', '--train-size', '256',
                       '--test-size', '64', '--resnet-width', '8', '--no-progress'])
    out = capsys.readouterr().out
    assert 'devices: [gpu(0)' in out
    assert len(rows['lenet']) == len(rows['resnet18']) == 1
