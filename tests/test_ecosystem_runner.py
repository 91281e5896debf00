"""tools/ecosystem/run: how a file's records fold into outcomes."""
import importlib.machinery
import importlib.util
import json
import os

import pytest

RUNNER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      'tools', 'ecosystem', 'run')


@pytest.fixture(scope='module')
def runner():
    loader = importlib.machinery.SourceFileLoader('ecosystem_run', RUNNER)
    spec = importlib.util.spec_from_loader('ecosystem_run', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _records(tmp_path, *records):
    path = tmp_path / 'file.jsonl'
    path.write_text(''.join(json.dumps(r) + '\n' for r in records))
    return str(path)


def _test(nodeid, *outcomes):
    recs = [{'event': 'start', 'nodeid': nodeid}]
    for outcome, msg in outcomes:
        recs.append({'event': 'report', 'nodeid': nodeid, 'when': 'call', 'outcome': outcome,
                     'msg': msg})
    return recs + [{'event': 'finish', 'nodeid': nodeid}]


def test_a_test_passing_on_a_retry_counts_as_passed_and_keeps_its_first_error(runner, tmp_path):
    # pytest-retry reports each failed attempt of a flaky(retries=N) test as 'retried', then
    # the last attempt's outcome, which decides (as in the library's own runs)
    path = _records(tmp_path,
                    *_test('t.py::flaky', ('retried', 'E   assert 2.54 == 3'), ('passed', '')),
                    *_test('t.py::broken', ('retried', 'E   first'), ('retried', 'E   second'),
                           ('failed', 'E   third')),
                    *_test('t.py::plain', ('failed', 'E   boom')),
                    *_test('t.py::fine', ('passed', '')))
    res, msg = {}, {}
    assert runner.read_jsonl(path, res, msg) == (None, None)
    assert res == {'t.py::flaky': 'passed', 't.py::broken': 'failed', 't.py::plain': 'failed',
                   't.py::fine': 'passed'}
    assert msg['t.py::flaky'] == 'retried: E   assert 2.54 == 3'
    assert msg['t.py::broken'] == 'retried: E   first'
    assert msg['t.py::plain'] == 'E   boom'
    assert 't.py::fine' not in msg


def test_a_test_that_started_and_never_finished_is_named(runner, tmp_path):
    path = _records(tmp_path, *_test('t.py::a', ('passed', '')),
                    {'event': 'start', 'nodeid': 't.py::hung'})
    res, msg = {}, {}
    assert runner.read_jsonl(path, res, msg) == ('t.py::hung', None)
    assert res['t.py::a'] == 'passed'
