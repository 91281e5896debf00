"""The profiler: MXNet 1.9's interface, the Chrome/Perfetto trace with one track per engine
worker, the aggregate table."""
import json
import re
import time

import pytest

import neomx as mx
from neomx import nd, profiler
from neomx.base import MXNetError


@pytest.fixture
def prof(tmp_path):
    """A profiler writing into tmp_path, left as it was found afterwards."""
    path = str(tmp_path / 'profile.json')
    profiler.set_config(filename=path, profile_all=True, aggregate_stats=True,
                        continuous_dump=False)
    yield path
    profiler.set_state('stop')
    profiler._P.__init__()


def load(path):
    with open(path) as f:
        return json.load(f)


def tracks(trace):
    """{track name: [(name, start, end)]} of the complete events."""
    names = {e['tid']: e['args']['name'] for e in trace['traceEvents']
             if e['ph'] == 'M' and e['name'] == 'thread_name'}
    out = {}
    for e in trace['traceEvents']:
        if e['ph'] == 'X':
            out.setdefault(names[e['tid']], []).append((e['name'], e['ts'], e['ts'] + e['dur']))
    return out


def op_names(path):
    """Names of the operations the engine's workers ran, in the trace at ``path``."""
    return [n for tr, v in tracks(load(path)).items() if not tr.startswith('python:')
            for n, _, _ in v]


def two_device_experiment():
    """The seeds' automatic-parallelism experiment: 60 dots of 400x400 on cpu(0), then 60
    on cpu(1), pushed one after the other from one thread."""
    x0 = nd.random.uniform(shape=(400, 400), ctx=mx.cpu(0))
    x1 = nd.random.uniform(shape=(400, 400), ctx=mx.cpu(1))
    nd.waitall()
    profiler.set_state('run')
    ys = [nd.dot(x0, x0) for _ in range(60)] + [nd.dot(x1, x1) for _ in range(60)]
    nd.waitall()
    profiler.set_state('stop')
    return ys


def test_two_device_trace_overlaps(prof):
    with mx.engine.engine_scope('ThreadedEngine'):
        two_device_experiment()
        profiler.dump()
    trace = load(prof)
    assert all(e['pid'] == trace['traceEvents'][0]['pid'] for e in trace['traceEvents'])
    t = tracks(trace)
    dots0 = [(a, b) for n, a, b in t['cpu(0)'] if n == 'dot']
    dots1 = [(a, b) for n, a, b in t['cpu(1)'] if n == 'dot']
    assert len(dots0) == len(dots1) == 60
    # Each track runs its operations one at a time ...
    for dots in (dots0, dots1):
        assert all(b0 <= a1 for (_, b0), (a1, _) in zip(dots, dots[1:]))
    # ... and the two devices at the same time: cpu(1)'s first dot starts before cpu(0)'s
    # last one ends although it was pushed after all of them, and the busy intervals overlap.
    assert dots1[0][0] < dots0[-1][1]
    overlap = sum(max(0.0, min(b0, b1) - max(a0, a1)) for a0, b0 in dots0 for a1, b1 in dots1)
    assert overlap > 0
    # The pushing thread has its own track: 120 quick pushes, then the wait.
    main = t['python:MainThread']
    assert sum(1 for n, _, _ in main if n == 'dot') == 120
    assert any(n == 'WaitAll' for n, _, _ in main)


def test_naive_engine_runs_inline(prof):
    with mx.engine.engine_scope('NaiveEngine'):
        two_device_experiment()
        profiler.dump()
    t = tracks(load(prof))
    dots = sorted([(a, b) for tr in ('cpu(0)', 'cpu(1)') for n, a, b in t[tr] if n == 'dot'])
    assert len(dots) == 120
    assert all(b0 <= a1 + 1e-3 for (_, b0), (a1, _) in zip(dots, dots[1:]))   # no overlap


def test_trace_format(prof):
    a = nd.ones((8, 8), ctx=mx.cpu(0))
    profiler.set_state('run')
    b = a.copyto(mx.cpu(1)) * 2
    b.wait_to_read()
    profiler.set_state('stop')
    profiler.dump()
    trace = load(prof)
    ev = trace['traceEvents']
    meta = [e for e in ev if e['ph'] == 'M']
    assert any(e['name'] == 'process_name' for e in meta)
    named = {e['args']['name']: e['tid'] for e in meta if e['name'] == 'thread_name'}
    assert {'copy:cpu(1)', 'cpu(1)', 'python:MainThread'} <= set(named)
    assert len(set(named.values())) == len(named)           # one tid per track
    for e in ev:
        if e['ph'] == 'X':
            assert e['name'] and e['dur'] >= 0 and e['tid'] in named.values()
            assert {'ts', 'pid', 'cat'} <= set(e)
    t = tracks(trace)
    assert [n for n, _, _ in t['copy:cpu(1)']] == ['_copyto']
    assert any(n == 'WaitForVar' for n, _, _ in t['python:MainThread'])


def test_no_work_when_off(prof):
    eng = mx.engine.current()
    profiler.set_state('run')
    assert eng.trace is not None and 'push' in vars(eng)
    profiler.set_state('stop')
    assert eng.trace is None and not {'push', 'wait_for_var', 'waitall'} & set(vars(eng))
    (nd.ones((2,)) + 1).wait_to_read()
    assert profiler._P.buf == []


def _memory_counters(path, name='Memory: cpu (process RSS)'):
    return [(e['ts'], e['args'][e['name']]) for e in load(path)['traceEvents']
            if e['ph'] == 'C' and e['name'] == name]


def test_memory_counters_follow_the_arrays(prof, monkeypatch, tmp_path):
    monkeypatch.setenv('NEOMX_PROFILER_MEMORY_MS', '1')
    profiler.set_state('run')
    held = []
    for _ in range(4):                  # 4 x 32 MB, written so that the pages are resident
        held.append(nd.ones((8 << 20,)) * 3)
        held[-1].wait_to_read()
        time.sleep(0.02)
    profiler.set_state('stop')
    profiler.dump()
    counters = _memory_counters(prof)
    assert len(counters) >= 8
    assert all(b[0] >= a[0] for a, b in zip(counters, counters[1:]))
    # the 128 MB held show in malloc's count (resident memory may have held them already:
    # freed memory stays with the process)
    allocated = [v for _, v in _memory_counters(prof, 'Memory: cpu (allocated)')]
    if profiler._MALLINFO2 is not None:
        assert len(allocated) == len(counters)
        assert max(allocated) - allocated[0] > 100 << 20
    else:
        values = [v for _, v in counters]
        assert max(values) - values[0] > 100 << 20
    # Off: no memory events.
    other = str(tmp_path / 'off.json')
    profiler._P.__init__()
    profiler.set_config(filename=other, profile_all=False, profile_memory=False,
                        continuous_dump=False)
    profiler.set_state('run')
    (nd.ones((16,)) * 2).wait_to_read()
    time.sleep(0.01)
    profiler.set_state('stop')
    profiler.dump()
    assert _memory_counters(other) == []
    assert profiler._P.sampler is None


def test_pause_resume_and_dump_sessions(prof):
    x = nd.ones((4, 4))
    x.wait_to_read()
    profiler.set_state('run')
    nd.dot(x, x).wait_to_read()
    profiler.pause()
    nd.sqrt(x).wait_to_read()
    profiler.resume()
    nd.exp(x).wait_to_read()
    profiler.dump(finished=False)
    names = op_names(prof)
    assert 'dot' in names and 'exp' in names and 'sqrt' not in names
    nd.log(x).wait_to_read()
    profiler.set_state('stop')
    profiler.dump(finished=False)          # appended to the same file, still valid JSON
    names2 = op_names(prof)
    assert names2.count('dot') == 1 and 'log' in names2
    profiler.dump()                        # finished: the next dump starts a new file
    profiler.set_state('run')
    nd.abs(x).wait_to_read()
    profiler.set_state('stop')
    profiler.dump()
    names3 = op_names(prof)
    assert 'abs' in names3 and 'dot' not in names3


def test_continuous_dump_writes_at_stop(tmp_path):
    path = tmp_path / 'cont.json'
    try:
        profiler.set_config(filename=str(path), profile_imperative=True, dump_period=0.05)
        profiler.set_state('run')
        nd.relu(nd.ones((3,))).wait_to_read()
        profiler.set_state('stop')
        assert 'relu' in op_names(path)
    finally:
        profiler.set_state('stop')
        profiler._P.__init__()


def test_aggregate_table(prof):
    x = nd.ones((16, 16))
    x.wait_to_read()
    profiler.set_state('run')
    for _ in range(3):
        nd.dot(x, x)
    nd.exp(x).wait_to_read()
    nd.waitall()
    profiler.set_state('stop')
    table = profiler.dumps()
    assert table.startswith('\nProfile Statistics:\n\tNote the difference in units for '
                            'different entries.\n')
    assert ('operator\n=================\nName                          Total Count        '
            'Time (ms)    Min Time (ms)    Max Time (ms)    Avg Time (ms)\n') in table
    row = re.search(r'^dot {22}\s+(\d+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+)$', table, re.M)
    assert row and int(row.group(1)) == 3
    total, lo, hi, avg = map(float, row.groups()[1:])
    assert lo <= avg <= hi and abs(avg * 3 - total) < 1e-3 + 1e-3 * total
    rows = [l.split()[0] for l in table.split('operator\n')[1].split('\n\n')[0].splitlines()[3:]]
    assert set(rows) == {'dot', 'exp'}
    by_count = profiler.dumps(sort_by='count', ascending=True)
    op_rows = by_count.split('operator\n')[1].splitlines()[3:5]
    assert [r.split()[0] for r in op_rows] == ['exp', 'dot']
    js = json.loads(profiler.dumps(format='json'))
    assert js['Time']['operator']['dot']['Count'] == 3 and js['Unit']['Time'] == 'ms'
    assert 'push' in js['Time'] and 'wait' in js['Time']
    profiler.dumps(reset=True)
    assert 'dot' not in profiler.dumps()
    profiler.set_config(aggregate_stats=False)
    assert profiler.dumps() == ''


def test_table_layout_matches_mxnet(prof, mxnet_ref):
    ref = mxnet_ref("""
import os, tempfile
import mxnet as mx
# (a file of its own: MXNet's profiler replaces its file, and made /dev/null a regular file)
mx.profiler.set_config(aggregate_stats=True, profile_all=True, continuous_dump=False,
                       filename=os.path.join(tempfile.mkdtemp(), 'profile.json'))
mx.profiler.set_state('run')
mx.nd.dot(mx.nd.ones((8, 8)), mx.nd.ones((8, 8))).wait_to_read()
mx.profiler.set_state('stop')
print(mx.profiler.dumps())
""")
    profiler.set_state('run')
    nd.dot(nd.ones((8, 8)), nd.ones((8, 8))).wait_to_read()
    profiler.set_state('stop')
    ours = profiler.dumps()

    def layout(text, op):
        lines = text.splitlines()
        i = lines.index('operator')
        row = next(l for l in lines[i:] if l.startswith(op + ' '))
        # the column ends of the data row, with the numbers blanked out
        return lines[:3], lines[i:i + 4], re.sub(r'[\d.]', '9', row).replace(' 9', ' #')
    ref_layout, our_layout = layout(ref, 'dot'), layout(ours, 'dot')
    assert our_layout[0] == ref_layout[0] and our_layout[1] == ref_layout[1]
    assert [m.end() for m in re.finditer(r'\S+', ref_layout[2])] == \
        [m.end() for m in re.finditer(r'\S+', our_layout[2])]


def test_annotations(prof):
    dom = profiler.Domain('train')
    task = dom.new_task('epoch')
    frame = dom.new_frame('batch')
    counter = dom.new_counter('samples', 5)    # before run: not recorded
    marker = dom.new_marker('checkpoint')
    profiler.set_state('run')
    task.start()
    with frame:
        nd.ones((2,)).wait_to_read()
    task.stop()
    with profiler.Event('custom'):
        pass
    counter += 10
    counter.decrement(3)
    marker.mark('global')
    profiler.set_state('stop')
    profiler.dump()
    ev = load(prof)['traceEvents']
    cats = {(e['name'], e.get('cat')) for e in ev if e['ph'] == 'X'}
    assert {('epoch', 'train'), ('batch', 'train'), ('custom', 'event')} <= cats
    assert [e['args']['samples'] for e in ev if e['ph'] == 'C' and e['name'] == 'samples'] == [15, 12]
    marks = [e for e in ev if e['ph'] == 'i']
    assert len(marks) == 1 and marks[0]['s'] == 'g' and marks[0]['name'] == 'checkpoint'
    table = profiler.dumps()
    assert 'train\n=================' in table and 'event\n=================' in table


def test_bad_arguments(prof):
    with pytest.raises(MXNetError, match="cannot find argument 'bogus'"):
        profiler.set_config(bogus=1)
    with pytest.raises(MXNetError, match="expected a boolean"):
        profiler.set_config(profile_all='maybe')
    with pytest.raises(MXNetError, match="expected 'run' or 'stop'"):
        profiler.set_state('go')
    with pytest.raises(MXNetError, match='no server processes'):
        profiler.set_state('run', profile_process='server')
    with pytest.raises(MXNetError, match="sort_by='fastest'"):
        profiler.dumps(sort_by='fastest')
    with pytest.raises(MXNetError, match='scope'):
        profiler.Marker(profiler.Domain('d'), 'm').mark('galaxy')
    profiler.set_config(profile_all='True', aggregate_stats='0')    # MXNet's string forms
    assert profiler._P.config['profile_all'] is True
    assert profiler._P.config['aggregate_stats'] is False


def test_rank_file_names(prof, monkeypatch, tmp_path):
    monkeypatch.setenv('RANK', '1')
    monkeypatch.setenv('WORLD_SIZE', '2')
    assert profiler._P.filename() == str(tmp_path / 'profile-rank1.json')
    profiler.set_config(filename=str(tmp_path / 'p_{rank}.json'))
    assert profiler._P.filename() == str(tmp_path / 'p_1.json')
    profiler.set_state('run')
    nd.ones((1,)).wait_to_read()
    profiler.set_state('stop')
    profiler.dump()
    meta = load(tmp_path / 'p_1.json')['traceEvents'][0]
    assert meta['name'] == 'process_name' and meta['args']['name'].startswith('neomx rank 1')


def test_timeline_png(prof, tmp_path):
    pytest.importorskip('matplotlib')
    with mx.engine.engine_scope('ThreadedEngine'):
        two_device_experiment()
        profiler.dump()
    png = tmp_path / 't.png'
    profiler.timeline_png(prof, str(png), title='two devices')
    assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    with pytest.raises(MXNetError, match='no operations'):
        profiler.timeline_png(prof, str(png), tracks=['gpu(7)'])


def test_aggregate_memory_and_custom_operator_rows(prof):
    """With profile_memory the aggregate statistics have MXNet's 'Memory' section ('Device
    Storage' rows in kB, sortable except by 'total'); a custom operator's Python code is timed
    as '<op_type>::pure_python' and the operations it runs as '<op_type>::<operator>', in the
    'Custom Operator' category, as in MXNet."""
    class AddOne(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] + 1)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], out_grad[0] * 1)

    @mx.operator.register('ProfiledAddOne')
    class AddOneProp(mx.operator.CustomOpProp):
        def list_arguments(self):
            return ['data']

        def list_outputs(self):
            return ['output']

        def infer_shape(self, in_shape):
            return [in_shape[0]], [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return AddOne()

    x = nd.zeros((4, 4))
    x.attach_grad()
    profiler.set_state('run')
    with mx.autograd.record():
        y = nd.Custom(x, op_type='ProfiledAddOne')
    y.backward()
    nd.waitall()
    time.sleep(0.02)            # a memory sample or two
    profiler.set_state('stop')
    js = json.loads(profiler.dumps(format='json', sort_by='max'))
    assert js['Unit'] == {'Time': 'ms', 'Memory': 'kB'}
    rss = js['Memory']['Device Storage']['Memory: cpu (process RSS)']
    assert rss['Count'] >= 1 and 0 < rss['Min'] <= rss['Avg'] <= rss['Max']
    custom = js['Time']['Custom Operator']
    assert {'ProfiledAddOne::pure_python', 'ProfiledAddOne::_plus_scalar',
            '_backward_ProfiledAddOne::pure_python',
            '_backward_ProfiledAddOne::_mul_scalar'} <= set(custom)
    assert 'Device Storage\n=================\n' in profiler.dumps()
    assert x.grad.asnumpy().tolist() == [[1.0] * 4] * 4
