"""The worked example of docs/module.md, run as it stands there."""
import logging
import os
import re

import pytest

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'docs',
                   'module.md')


def _example(marker):
    with open(DOC) as f:
        text = f.read()
    found = re.search(r'<!-- example: %s -->\n```python\n(.*?)```' % marker, text, re.S)
    assert found, 'docs/module.md has no example %r' % marker
    return found.group(1)


def test_module_mlp_example(tmp_path, monkeypatch, caplog, capsys):
    monkeypatch.chdir(tmp_path)
    code = _example('module-mlp')
    with caplog.at_level(logging.INFO):
        exec(compile(code, DOC, 'exec'), {'__name__': '__docs__'})
    log = caplog.text
    speed = re.findall(r'Epoch\[(\d)\] Batch \[(\d+)-(\d+)\]\tSpeed: [\d.]+ samples/sec\t'
                       r'accuracy=([\d.]+)', log)
    assert [s[:3] for s in speed] == [(str(e), str(a), str(a + 10)) for e in range(3)
                                      for a in (0, 10, 20)]
    assert 'Epoch[2] Validation-accuracy=' in log
    assert sorted(os.listdir(tmp_path)) == ['mlp-0001.params', 'mlp-0002.params',
                                            'mlp-0003.params', 'mlp-symbol.json']
    out = capsys.readouterr().out.splitlines()
    accuracy = float(out[0].split(':')[1])
    assert accuracy > 0.7                   # four classes: chance is 0.25
    assert out[1] == '(400, 4)'
