"""The profiler, with MXNet 1.9's interface, writing a Chrome/Perfetto trace of the engine.

Every operation the engine runs becomes a slice on the track of the worker that ran it (one
track per device, ``cpu(0)``, ``gpu(1)``, and one per copy worker, ``copy:cpu(1)``), so work
that devices do at the same time shows as slices side by side. The Python threads that push
operations get tracks too: a short slice per push and a long one while they wait
(``WaitForVar``, ``WaitAll``). Open the file in https://ui.perfetto.dev or chrome://tracing.

>>> import os, tempfile
>>> import neomx as mx
>>> path = os.path.join(tempfile.mkdtemp(), 'profile.json')
>>> mx.profiler.set_config(profile_all=True, aggregate_stats=True, filename=path)
>>> mx.profiler.set_state('run')
>>> y = mx.nd.dot(mx.nd.ones((64, 64)), mx.nd.ones((64, 64)))
>>> y.wait_to_read()
>>> mx.profiler.set_state('stop')
>>> mx.profiler.dump()
>>> import json; trace = json.load(open(path))
>>> any(e['name'] == 'dot' and e['ph'] == 'X' for e in trace['traceEvents'])
True
>>> 'dot' in mx.profiler.dumps(reset=True)
True

Events on the workers are recorded by the engine itself (``engine.trace``): nothing is
recorded, and nothing is checked per operation beyond one attribute, while the profiler is off.
"""
import atexit
import ctypes
import json
import os
import threading
import time
import warnings

import torch

from . import atomic
from . import engine as _engine
from .base import MXNetError, c_function, env_str

__all__ = ['set_config', 'set_state', 'dump', 'dumps', 'pause', 'resume', 'Domain', 'Task',
           'Frame', 'Event', 'Counter', 'Marker', 'profiler_set_config', 'profiler_set_state',
           'dump_profile', 'set_kvstore_handle', 'timeline_png', 'record_interval',
           'merge_traces']

_now = time.perf_counter_ns   # CLOCK_MONOTONIC: one time line for all processes of a machine

# MXNet 1.9's settings and defaults (mx.profiler.set_config(bogus=1) lists them).
_DEFAULTS = {
    'profile_all': False,        # everything below
    'profile_symbolic': True,    # operations run by hybridized blocks (CachedOp)
    'profile_imperative': True,  # operations pushed one by one
    'profile_memory': True,      # memory counters: process RSS, malloc's and each GPU's bytes
    'profile_api': True,         # pushes and waits on the Python threads' tracks
    'filename': 'profile.json',
    'continuous_dump': True,     # keep the file up to date while running (appending)
    'dump_period': 1.0,          # seconds between those writes
    'aggregate_stats': False,    # keep the per-operator table of dumps()
    'profile_process': 'worker',
}
_BOOL = {'True': True, 'true': True, '1': True, 'False': False, 'false': False, '0': False}
_CATEGORY_OP = 'operator'


def _parse_bool(key, value):
    if isinstance(value, str):
        if value not in _BOOL:
            raise MXNetError("profiler.set_config: %s=%r: expected a boolean" % (key, value))
        return _BOOL[value]
    return bool(value)


def _describe_settings():
    return '\n'.join('%s (default %r)' % kv for kv in _DEFAULTS.items())


def _check_process(profile_process):
    if profile_process == 'server':
        raise MXNetError("profiler: profile_process='server' profiles MXNet's parameter servers; "
                         "neomx's 'dist_sync' KVStore reduces with torch.distributed collectives "
                         "and has no server processes: profile the workers ('worker')")
    if profile_process != 'worker':
        raise MXNetError("profiler: profile_process=%r: expected 'worker' or 'server'"
                         % (profile_process,))


def _rank():
    """(rank, world size) of this process when launched for distributed training."""
    try:
        return int(os.environ.get('RANK', 0)), int(os.environ.get('WORLD_SIZE', 1))
    except ValueError:
        return 0, 1


def _track_order(track):
    """Sort key for tracks: Python threads first, then devices (CPUs, then GPUs, by number),
    each device's copy worker after its compute worker."""
    if track.startswith('python:'):
        return (0, 0, 0, track)
    copy = track.startswith('copy:')
    dev = track[5:] if copy else track
    kind, _, rest = dev.partition('(')
    try:
        num = int(rest.rstrip(')'))
    except ValueError:
        num = 0
    return (1, {'cpu': 0, 'cpu_pinned': 1, 'gpu': 2}.get(kind, 3), num * 2 + copy, track)


def _sort_index(track):
    group, kind, n, _ = _track_order(track)
    return group * 1000000 + kind * 100000 + n


class _TraceFile:
    """A trace file being written: the first write creates it whole (atomically: temporary
    file, then rename); later writes append the new events before the closing brackets, so the
    file is valid JSON after every write and a long run costs no rewriting."""
    FOOTER = b'\n]}\n'

    def __init__(self, path, pid, rank, world):
        self.path = path
        self.pid = pid
        self.tids = {}
        self.events = 0         # written to the file, metadata included: what a reader counts
        name = 'neomx rank %d (pid %d)' % (rank, pid) if world > 1 else 'neomx (pid %d)' % pid
        self.head = [{'ph': 'M', 'name': 'process_name', 'pid': pid, 'args': {'name': name}},
                     {'ph': 'M', 'name': 'process_sort_index', 'pid': pid,
                      'args': {'sort_index': rank}}]
        self.created = False

    def tid(self, track, out):
        """The thread id of ``track``; declares new tracks (thread_name metadata) into ``out``."""
        t = self.tids.get(track)
        if t is None:
            t = self.tids[track] = len(self.tids) + 1
            out.append('{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":%s}}'
                       % (self.pid, t, json.dumps(track)))
            out.append('{"ph":"M","name":"thread_sort_index","pid":%d,"tid":%d,'
                       '"args":{"sort_index":%d}}' % (self.pid, t, _sort_index(track)))
        return t

    def write(self, lines):
        body = ',\n'.join(lines).encode()
        if not self.created:
            head = ',\n'.join(json.dumps(e) for e in self.head).encode()
            data = (b'{"displayTimeUnit":"ms","traceEvents":[\n' + head
                    + (b',\n' + body if body else b'') + self.FOOTER)
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            atomic.write(self.path, data)
            self.created = True
            self.events += len(self.head)
        elif body:
            with open(self.path, 'r+b') as f:
                f.seek(-len(self.FOOTER), os.SEEK_END)
                f.write(b',\n' + body + self.FOOTER)
                f.truncate()
        self.events += len(lines)


class _Profiler:
    """The state behind the module functions (one per process)."""

    def __init__(self):
        self.config = dict(_DEFAULTS)
        self.running = False
        self.paused = False
        self.buf = _Buffer()     # engine.trace while running: (track, name, t0, t1) per op,
        #                          and (kind, track, name, ...) tuples of the front end's events
        self.unwritten = []      # drained events not yet in the file
        self.stats = {}          # category -> name -> [count, total, min, max] (ns)
        self.memory = {}         # memory counter -> [count, total, min, max] (bytes)
        self.file = None         # the _TraceFile of the current dump session
        self.engine = None       # the engine being traced
        self.lock = threading.RLock()
        self.dumper = None
        self.recorded = 0
        self.sampler = None      # (thread, stop event) sampling memory while hooked

    # -- switching the engine's recording on and off -------------------------------------
    def _profiles_ops(self):
        c = self.config
        return c['profile_all'] or c['profile_symbolic'] or c['profile_imperative']

    def _hook(self):
        eng = _engine.current()
        self.engine = eng
        if self._profiles_ops():
            eng.trace = self.buf
        if self.config['profile_all'] or self.config['profile_api']:
            _wrap_api(eng, self.buf)
        if self.config['profile_all'] or self.config['profile_memory']:
            stop = threading.Event()
            t = threading.Thread(target=_sample_memory, args=(self.buf, stop),
                                 name='neomx-profiler-memory', daemon=True)
            self.sampler = (t, stop)
            t.start()

    def _unhook(self):
        if self.sampler is not None:
            t, stop = self.sampler
            stop.set()
            t.join(5)
            self.sampler = None
        eng = self.engine
        if eng is not None:
            eng.trace = None
            for name in ('push', 'wait_for_var', 'waitall'):
                eng.__dict__.pop(name, None)
        self.engine = None

    def start(self):
        with self.lock:
            if self.running:
                return
            self.running, self.paused = True, False
            self._hook()
            if self.config['continuous_dump'] and self.dumper is None:
                self.dumper = threading.Thread(target=self._dump_loop, name='neomx-profiler',
                                               daemon=True)
                self.dumper.start()

    def stop(self):
        with self.lock:
            if not self.running:
                return
            self._unhook()
            self.running = self.paused = False
            self.drain()
            if self.config['continuous_dump']:
                self.flush(finished=False)

    def pause(self):
        with self.lock:
            if self.running and not self.paused:
                self._unhook()
                self.paused = True

    def resume(self):
        with self.lock:
            if self.running and self.paused:
                self._hook()
                self.paused = False

    def _dump_loop(self):
        while True:
            time.sleep(max(0.05, float(self.config['dump_period'])))
            with self.lock:
                if not self.running or not self.config['continuous_dump']:
                    self.dumper = None
                    return
                self.drain()
                if self.unwritten:
                    self.flush(finished=False)

    # -- collecting --------------------------------------------------------------------
    def drain(self):
        """Moves what the engine and the front end recorded into ``unwritten`` (and the
        aggregate table). Appends racing with this land after index n and stay for next time."""
        buf = self.buf
        n = len(buf)
        if not n:
            return
        items = buf[:n]
        del buf[:n]
        self.recorded += n
        self.unwritten.extend(items)
        if self.config['aggregate_stats']:
            stats = self.stats
            for e in items:
                if len(e) == 4:
                    cat, name, d = _CATEGORY_OP, e[1], e[3] - e[2]
                elif e[0] == 'X':
                    cat, name, d = e[5], e[2], e[4] - e[3]
                elif e[0] == 'C' and e[5] == 'memory':
                    _add_memory_sample(self.memory, e[2], e[4])
                    continue
                else:
                    continue
                table = stats.get(cat)
                if table is None:
                    table = stats[cat] = {}
                s = table.get(name)
                if s is None:
                    table[name] = [1, d, d, d]
                else:
                    s[0] += 1
                    s[1] += d
                    if d < s[2]:
                        s[2] = d
                    if d > s[3]:
                        s[3] = d

    def filename(self):
        """The configured file name; under a distributed launch each rank gets its own file
        (``{rank}`` in the name, or ``-rank<R>`` added before the extension)."""
        name = str(self.config['filename'])
        rank, world = _rank()
        if '{rank}' in name:
            return name.replace('{rank}', str(rank))
        if world > 1:
            root, ext = os.path.splitext(name)
            return '%s-rank%d%s' % (root, rank, ext)
        return name

    def flush(self, finished):
        """Writes the events not yet written; ``finished`` ends the file, so the next write
        starts a new one."""
        with self.lock:
            self.drain()
            if self.file is None:
                rank, world = _rank()
                self.file = _TraceFile(self.filename(), os.getpid(), rank, world)
            f = self.file
            lines = []
            eng = _engine.current()
            for w in (eng.workers() if hasattr(eng, 'workers') else ()):
                f.tid(w.name, lines)    # idle workers get their (empty) track too
            _format(self.unwritten, f, lines)
            self.unwritten = []
            f.write(lines)
            path, n = f.path, f.events
            if finished:
                self.file = None
            return path, n

    def table(self, reset, fmt, sort_by, ascending):
        with self.lock:
            self.drain()
            if not self.config['aggregate_stats'] and not self.stats:
                return ''
            key = {'total': lambda kv: kv[1][1], 'avg': lambda kv: kv[1][1] / kv[1][0],
                   'min': lambda kv: kv[1][2], 'max': lambda kv: kv[1][3],
                   'count': lambda kv: kv[1][0]}[sort_by]
            cats = {c: sorted(t.items(), key=key, reverse=not ascending)
                    for c, t in sorted(self.stats.items())}
            # memory samples: [count, total, min, max] in bytes; no 'total' to sort by
            mem = sorted(self.memory.items(), key=key if sort_by != 'total' else None,
                         reverse=not ascending if sort_by != 'total' else False)
            if reset:
                self.stats, self.memory = {}, {}
        kb = 1e3
        if fmt == 'json':
            ms = 1e6
            return json.dumps({'Memory': {'Device Storage': {
                                   n: {'Count': s[0], 'Min': s[2] / kb, 'Max': s[3] / kb,
                                       'Avg': s[1] / s[0] / kb} for n, s in mem}} if mem else {},
                               'Time': {c: {n: {'Count': s[0], 'Total': s[1] / ms,
                                                'Min': s[2] / ms, 'Max': s[3] / ms,
                                                'Avg': s[1] / s[0] / ms} for n, s in rows}
                                        for c, rows in cats.items()},
                               'Unit': {'Time': 'ms', 'Memory': 'kB'}}, indent=4)
        # The layout of MXNet's MXAggregateProfileStatsPrint.
        out = ['\nProfile Statistics:\n\tNote the difference in units for different entries.\n']
        if mem:
            out.append('Device Storage\n=================\n')
            mrow = '%-25s%16s %16s %16s %16s\n'
            out.append(mrow % ('Name', 'Total Count', 'Min Use  (kB)', 'Max Use  (kB)',
                               'Avg Use  (kB)'))
            out.append(mrow % ('----', '-----------', '-------------', '-------------',
                               '-------------'))
            for n, (count, total, lo, hi) in mem:
                out.append('%-25s%16d %16.4f %16.4f %16.4f\n'
                           % (n, count, lo / kb, hi / kb, total / count / kb))
            out.append('\n')
        row = '%-25s%16s %16s %16s %16s %16s\n'
        for c, rows in cats.items():
            out.append('%s\n=================\n' % c)
            out.append(row % ('Name', 'Total Count', 'Time (ms)', 'Min Time (ms)',
                              'Max Time (ms)', 'Avg Time (ms)'))
            out.append(row % ('----', '-----------', '---------', '-------------',
                              '-------------', '-------------'))
            for n, (count, total, lo, hi) in rows:
                out.append('%-25s%16d %16.4f %16.4f %16.4f %16.4f\n'
                           % (n, count, total / 1e6, lo / 1e6, hi / 1e6, total / count / 1e6))
            out.append('\n')
        return ''.join(out)


def _format(events, f, lines):
    """Appends the JSON lines of ``events`` (a list of recorded tuples) to ``lines``."""
    pid = f.pid
    names = {}

    def q(s):
        r = names.get(s)
        if r is None:
            r = names[s] = json.dumps(s)
        return r
    for e in events:
        if len(e) == 4:     # an operation, from the engine
            track, name, t0, t1 = e
            lines.append('{"name":%s,"cat":"operator","ph":"X","ts":%.3f,"dur":%.3f,'
                         '"pid":%d,"tid":%d}' % (q(name), t0 / 1e3, (t1 - t0) / 1e3, pid,
                                                 f.tid(track, lines)))
        elif e[0] == 'X':
            _, track, name, t0, t1, cat = e
            lines.append('{"name":%s,"cat":%s,"ph":"X","ts":%.3f,"dur":%.3f,"pid":%d,"tid":%d}'
                         % (q(name), q(cat), t0 / 1e3, (t1 - t0) / 1e3, pid, f.tid(track, lines)))
        elif e[0] == 'C':
            _, track, name, t, value, cat = e
            lines.append('{"name":%s,"cat":%s,"ph":"C","ts":%.3f,"pid":%d,"tid":%d,'
                         '"args":{%s:%s}}' % (q(name), q(cat), t / 1e3, pid, f.tid(track, lines),
                                              q(name), json.dumps(value)))
        elif e[0] == 'i':
            _, track, name, t, scope, cat = e
            lines.append('{"name":%s,"cat":%s,"ph":"i","s":"%s","ts":%.3f,"pid":%d,"tid":%d}'
                         % (q(name), q(cat), scope, t / 1e3, pid, f.tid(track, lines)))


def _thread_track():
    return 'python:' + threading.current_thread().name


def _rss():
    """This process's resident memory in bytes (None where /proc is missing)."""
    try:
        with open('/proc/self/statm', 'rb') as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


_PAGE = os.sysconf('SC_PAGE_SIZE') if hasattr(os, 'sysconf') else 4096


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        'arena', 'ordblks', 'smblks', 'hblks', 'hblkhd', 'usmblks', 'fsmblks', 'uordblks',
        'fordblks', 'keepcost')]


_MALLINFO2 = c_function('mallinfo2', _MallInfo2)     # None before glibc 2.33


def _allocated():
    """Bytes the C library's ``malloc`` has handed out and not had back (glibc 2.33 or later;
    else None): the memory of every live CPU array, which resident memory no longer shows once
    freed memory is kept (engine/memory.py)."""
    if _MALLINFO2 is None:
        return None
    m = _MALLINFO2()
    return m.uordblks + m.hblkhd


def _add_memory_sample(table, name, value):
    """Aggregates a memory counter sample (bytes) as [count, total, min, max]: the 'Device
    Storage' rows of the aggregate statistics, in kB. neomx's counters are samples of the
    process's resident memory and of each GPU's allocated bytes, not MXNet's allocator
    records."""
    s = table.get(name)
    if s is None:
        table[name] = [1, value, value, value]
    else:
        s[0] += 1
        s[1] += value
        s[2] = min(s[2], value)
        s[3] = max(s[3], value)


def _sample_memory(buf, stop):
    """Appends memory counters to ``buf`` every NEOMX_PROFILER_MEMORY_MS milliseconds (5)
    until ``stop``: the process's resident memory (host memory, where every CPU device's arrays
    live), the bytes ``malloc`` has handed out (glibc) and the bytes torch has allocated on
    each GPU in use. One sample also when stopped, so a short run shows where it ended."""
    period = max(0.0005, float(env_str('NEOMX_PROFILER_MEMORY_MS', default='5')) / 1e3)
    append = buf.append
    stopped = False
    while True:
        t = _now()
        rss = _rss()
        if rss is not None:
            append(('C', 'memory', 'Memory: cpu (process RSS)', t, rss, 'memory'))
        allocated = _allocated()
        if allocated is not None:
            append(('C', 'memory', 'Memory: cpu (allocated)', t, allocated, 'memory'))
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            for i in range(torch.cuda.device_count()):
                append(('C', 'memory', 'Memory: gpu(%d)' % i, t,
                        torch.cuda.memory_allocated(i), 'memory'))
        if stopped:
            return
        stopped = stop.wait(period)


def _wrap_api(eng, buf):
    """Shadows the engine's push and wait methods with timed ones, on the instance, so that
    nothing changes for the engine while the profiler is off."""
    cls = type(eng)
    push, wait_for_var, waitall = cls.push, cls.wait_for_var, cls.waitall
    append = buf.append

    def timed_push(fn, reads, writes, ctx, name, *args, **kwargs):
        t0 = _now()
        r = push(eng, fn, reads, writes, ctx, name, *args, **kwargs)
        append(('X', _thread_track(), name, t0, _now(), 'push'))
        return r

    def timed_wait_for_var(var, for_write=False):
        t0 = _now()
        try:
            return wait_for_var(eng, var, for_write)
        finally:
            append(('X', _thread_track(), 'WaitForVar', t0, _now(), 'wait'))

    def timed_waitall():
        t0 = _now()
        try:
            return waitall(eng)
        finally:
            append(('X', _thread_track(), 'WaitAll', t0, _now(), 'wait'))
    eng.push = timed_push
    eng.wait_for_var = timed_wait_for_var
    eng.waitall = timed_waitall


class _Buffer(list):
    """The list the engine and the front end append events to. Operations run by a custom
    operator's Python code go to the 'Custom Operator' category under the operator's name
    (``MySigmoid::_zeros``), as in MXNet."""

    def append(self, e):
        scope = _custom_local.scope
        if scope is not None and len(e) == 4:
            e = ('X', e[0], '%s::%s' % (scope, e[1]), e[2], e[3], 'Custom Operator')
        list.append(self, e)


class _CustomLocal(threading.local):
    scope = None        # the custom operator whose Python code this thread runs


_custom_local = _CustomLocal()


class custom_operator_scope:
    """Marks the run of a custom operator's Python ``forward`` (``backward``: ``name`` is
    ``_backward_<op_type>``) in this thread: while profiling, its time is recorded as
    ``<name>::pure_python`` and the operations it runs as ``<name>::<operator>``, in the
    'Custom Operator' category. Costs an attribute read when the profiler is off."""
    __slots__ = ('name', 't0', 'outer')

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.outer = _custom_local.scope
        if _P.running and not _P.paused:
            _custom_local.scope = self.name
            self.t0 = _now()
        else:
            self.t0 = None

    def __exit__(self, *exc):
        _custom_local.scope = self.outer
        if self.t0 is not None:
            list.append(_P.buf, ('X', threading.current_thread().name,
                                 self.name + '::pure_python', self.t0, _now(),
                                 'Custom Operator'))


_P = _Profiler()


def _at_exit():
    # MXNet writes the profile of a continuously dumping run when the process ends.
    with _P.lock:
        if _P.config['continuous_dump'] and (_P.running or _P.buf or _P.unwritten):
            try:
                _engine.waitall()
            except Exception:
                pass
            _P.stop()
            if _P.unwritten:
                _P.flush(finished=True)


atexit.register(_at_exit)


# -- MXNet 1.9's functions -------------------------------------------------------------------

def set_config(**kwargs):
    """Sets the profiler's configuration (keyword arguments only), as MXNet 1.9:
    ``filename`` ('profile.json'), ``profile_all`` (False), ``profile_symbolic`` (True),
    ``profile_imperative`` (True), ``profile_memory`` (True: memory counters, the process's
    resident memory and each GPU's allocated bytes, every NEOMX_PROFILER_MEMORY_MS (5) ms),
    ``profile_api`` (True: pushes and waits of the Python threads), ``continuous_dump`` (True:
    the file is brought up to date every ``dump_period`` seconds while running and at exit),
    ``dump_period`` (1.0), ``aggregate_stats`` (False: keep the table of ``dumps()``),
    ``profile_process`` ('worker').
    """
    new = {}
    for key, value in kwargs.items():
        if key not in _DEFAULTS:
            raise MXNetError("profiler.set_config: cannot find argument %r; the arguments are:\n%s"
                             % (key, _describe_settings()))
        if key == 'filename':
            value = os.fspath(value)
        elif key == 'dump_period':
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise MXNetError("profiler.set_config: dump_period=%r: expected seconds as a "
                                 "number" % (value,)) from None
        elif key == 'profile_process':
            _check_process(value)
        else:
            value = _parse_bool(key, value)
        new[key] = value
    with _P.lock:
        _P.config.update(new)
        if _P.running and not _P.paused:
            _P._unhook()
            _P._hook()


def set_state(state='stop', profile_process='worker'):
    """Starts (``'run'``) or stops (``'stop'``) recording."""
    _check_process(profile_process)
    if state == 'run':
        _P.start()
    elif state == 'stop':
        _P.stop()
    else:
        raise MXNetError("profiler.set_state: state=%r: expected 'run' or 'stop'" % (state,))


def dump(finished=True, profile_process='worker'):
    """Writes what was recorded to the configured file (a Chrome/Perfetto trace). Later dumps
    append to the same file unless ``finished`` (the default), which ends it: the next dump
    starts a new file."""
    _check_process(profile_process)
    _P.flush(finished=finished)


def dumps(reset=False, format='table', sort_by='total', ascending=False):
    """The aggregate statistics (needs ``set_config(aggregate_stats=True)``) as MXNet prints
    them: per category (``operator`` for the engine's operations, ``push`` and ``wait`` for the
    Python threads, a Domain's name for its tasks and frames), each name's count and total,
    min, max and average time in ms; ``format='json'`` for a JSON document. ``reset`` clears
    the statistics."""
    if format not in ('table', 'json'):
        raise MXNetError("profiler.dumps: format=%r: expected 'table' or 'json'" % (format,))
    if sort_by not in ('total', 'avg', 'min', 'max', 'count'):
        raise MXNetError("profiler.dumps: sort_by=%r: expected 'total', 'avg', 'min', 'max' or "
                         "'count'" % (sort_by,))
    if ascending not in (True, False) or reset not in (True, False):
        raise MXNetError("profiler.dumps: reset and ascending must be True or False, got %r, %r"
                         % (reset, ascending))
    return _P.table(reset, format, sort_by, ascending)


def pause(profile_process='worker'):
    """Stops recording until ``resume()`` (the configuration and the data are kept)."""
    _check_process(profile_process)
    _P.pause()


def resume(profile_process='worker'):
    _check_process(profile_process)
    _P.resume()


def set_kvstore_handle(handle):
    """MXNet routes server profiling through the KVStore; neomx has no servers. Accepted."""


def profiler_set_config(mode='symbolic', filename='profile.json'):
    """Deprecated in MXNet: use ``set_config``."""
    warnings.warn('profiler.profiler_set_config() is deprecated. '
                  'Please use profiler.set_config() instead')
    set_config(**{'profile_' + mode: True, 'filename': filename})


def profiler_set_state(state='stop'):
    """Deprecated in MXNet: use ``set_state``."""
    warnings.warn('profiler.profiler_set_state() is deprecated. '
                  'Please use profiler.set_state() instead')
    set_state(state)


def dump_profile():
    """Deprecated in MXNet: use ``dump``."""
    warnings.warn('profiler.dump_profile() is deprecated. Please use profiler.dump() instead')
    dump(True)


def _finish():
    """Ends a profiled run (``neomx profile``): waits for the engine, stops, writes the file;
    returns (path, number of events), or (None, 0) when nothing was recorded."""
    eng = _engine.current()
    try:
        type(eng).waitall(eng)   # not the timed one: this wait is not the script's
    except Exception:
        pass      # the script's own error has been reported; keep what was recorded
    _P.stop()
    with _P.lock:
        if _P.file is None and not _P.unwritten:
            return None, 0
        return _P.flush(finished=True)


# -- annotations from user code ------------------------------------------------------------

def _recording():
    return _P.running and not _P.paused


def record_interval(track, name, t0, t1, category):
    """Adds an interval measured outside the engine (``t0``, ``t1`` from
    ``time.perf_counter_ns``) to the trace while recording, on its own ``track``: the
    distributed KVStore's allreduces, which run on torch.distributed's threads."""
    if _recording():
        _P.buf.append(('X', track, name, t0, t1, category))


class Domain:
    """A category grouping tasks, frames, counters and markers (their ``cat`` in the trace)."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def new_task(self, name):
        return Task(self, name)

    def new_frame(self, name):
        return Frame(self, name)

    def new_counter(self, name, value=None):
        return Counter(self, name, value)

    def new_marker(self, name):
        return Marker(self, name)


class _Duration:
    """A named interval of the calling thread: ``start()`` ... ``stop()`` (or ``with``)."""
    category = 'event'

    def __init__(self, name):
        self.name = name
        self._t0 = None

    def start(self):
        self._t0 = _now()

    def stop(self):
        t0, self._t0 = self._t0, None
        if t0 is not None and _recording():
            _P.buf.append(('X', _thread_track(), self.name, t0, _now(), self.category))

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def __str__(self):
        return self.name


class Task(_Duration):
    """A unit of work of a thread, in a Domain: every pass is one slice on the thread's track,
    and the passes are summed in ``dumps()`` under the domain's name."""

    def __init__(self, domain, name):
        super().__init__(name)
        self.domain = domain
        self.category = str(domain)


class Frame(Task):
    """As Task (MXNet tells them apart only in Intel VTune)."""


class Event(_Duration):
    """A named interval, category ``event``."""


class Counter:
    """A value that changes over time: a counter track in the trace."""

    def __init__(self, domain, name, value=None):
        self.domain = domain
        self.name = name
        self.value = 0
        if value is not None:
            self.set_value(value)

    def set_value(self, value):
        self.value = int(value)
        if _recording():
            _P.buf.append(('C', _thread_track(), self.name, _now(), self.value, str(self.domain)))

    def increment(self, delta=1):
        self.set_value(self.value + int(delta))

    def decrement(self, delta=1):
        self.set_value(self.value - int(delta))

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


_SCOPES = {'global': 'g', 'process': 'p', 'thread': 't', 'task': 't', 'marker': 't'}


class Marker:
    """An instant in time, drawn across the tracks of its scope."""

    def __init__(self, domain, name):
        self.domain = domain
        self.name = name

    def mark(self, scope='process'):
        if scope not in _SCOPES:
            raise MXNetError("Marker.mark: scope=%r: expected one of %s"
                             % (scope, ', '.join(_SCOPES)))
        if _recording():
            _P.buf.append(('i', _thread_track(), self.name, _now(), _SCOPES[scope],
                           str(self.domain)))


# -- traces of several processes ------------------------------------------------------------

def merge_traces(paths, filename):
    """Writes one trace holding the events of the traces at ``paths`` (the files of the ranks
    of a distributed job, say): each process keeps its own pid and tracks, and since all
    timestamps come from the machine's monotonic clock, the processes of one machine line up.
    Returns the number of events written."""
    events = []
    for p in paths:
        try:
            with open(p) as f:
                events.extend(json.load(f)['traceEvents'])
        except (OSError, ValueError, KeyError) as exc:
            raise MXNetError("profiler.merge_traces: cannot read the trace %r: %s" % (p, exc)) \
                from None
    atomic.write(filename, json.dumps({'displayTimeUnit': 'ms', 'traceEvents': events}).encode())
    return len(events)


# -- a picture of a trace ------------------------------------------------------------------

def timeline_png(trace, filename, tracks=None, title=None, width=10.0):
    """Draws the operations of a trace (a file written by ``dump`` or its parsed JSON) as a
    timeline PNG: one row per track, one bar per operation. Needs matplotlib (the ``plot``
    extra: ``pip install neomx[plot]``). ``tracks`` picks and orders the rows (default: every
    track with operations, Python threads first)."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        raise MXNetError("profiler.timeline_png needs matplotlib: pip install 'neomx[plot]'") \
            from None
    if not isinstance(trace, dict):
        with open(trace) as f:
            trace = json.load(f)
    events = trace['traceEvents']
    names = {(e['pid'], e['tid']): e['args']['name'] for e in events
             if e.get('ph') == 'M' and e.get('name') == 'thread_name'}
    rows = {}
    for e in events:
        if e.get('ph') == 'X':
            rows.setdefault(names.get((e['pid'], e['tid']), str(e['tid'])), []).append(e)
    if tracks is None:
        tracks = sorted(rows, key=_track_order)
    if not any(rows.get(t) for t in tracks):
        raise MXNetError("profiler.timeline_png: no operations on tracks %s" % (list(tracks),))
    t0 = min(e['ts'] for t in tracks for e in rows.get(t, ()))
    colors = {}
    palette = plt.get_cmap('tab10')
    fig, ax = plt.subplots(figsize=(width, 0.6 * len(tracks) + 1.2))
    for i, track in enumerate(tracks):
        for e in rows.get(track, ()):
            c = colors.setdefault(e['name'], palette(len(colors) % 10))
            ax.barh(i, e['dur'] / 1e3, left=(e['ts'] - t0) / 1e3, height=0.6, color=c,
                    edgecolor='white', linewidth=0.3)
    ax.set_yticks(range(len(tracks)))
    ax.set_yticklabels(tracks)
    ax.invert_yaxis()
    ax.set_xlabel('time (ms)')
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colors.values()]
    ax.legend(handles, list(colors), loc='upper left', bbox_to_anchor=(1.005, 1.0),
              fontsize='small', frameon=False)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(filename, dpi=120)
    plt.close(fig)
