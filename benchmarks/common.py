"""What the benchmarks share: timing by median, the reference MXNet 1.9.1 environment, the
machine description and the tables they print.

Every benchmark script can run on its own (``python benchmarks/bench_x.py``) and prints a
small table; with ``--json PATH`` it also writes its result, which ``run_all.py`` collects
into ``docs/benchmarks.md``. A result is a dict::

    {'title': str, 'about': str, 'headers': [...], 'rows': [[...], ...], 'notes': [str, ...]}
"""
import argparse
import datetime
import inspect
import json
import os
import platform
import statistics
import subprocess
import sys
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
MXNET_REF = os.environ.get('NEOMX_MXNET_REF', os.path.join(ROOT, '.mxnet-ref', 'bin', 'python'))

__all__ = ['ROOT', 'MXNET_REF', 'median_time', 'run_python', 'run_mxnet', 'has_mxnet',
           'machine', 'markdown_table', 'print_result', 'parser', 'finish', 'fmt', 'ratio',
           'interleaved', 'TIMING_HELPERS', 'own_threads']


def own_threads():
    """Before a timed run of one variant: ends the idle OpenMP helper threads of this thread
    and of neomx's engine workers (``neomx.engine.end_helper_threads``), so that the variant
    runs with its own intra-op threads only, as in a process of its own. With PyTorch's helpers
    (the main thread's) beside the engine worker's, libgomp has more helpers than cores and
    stops them spin-waiting, which slowed either side by 11-15% on two cores."""
    import neomx
    neomx.engine.end_helper_threads()


def median_time(fn, repeat, warmup=1):
    """Median seconds of ``fn()`` over ``repeat`` calls after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


# The same helper as source, pasted in front of the code run under MXNet, so that both sides
# time alike.
TIMING_HELPERS = 'import time, statistics\n' + inspect.getsource(median_time)


def interleaved(variants, repeat, warmup=1):
    """Median seconds of each of ``variants`` ({name: fn}), measured in rounds that run every
    variant once, so that a shared machine's changing load falls on all of them alike."""
    return interleaved_cpu(variants, repeat, warmup)[0]


def interleaved_cpu(variants, repeat, warmup=1):
    """``interleaved``'s medians of wall seconds, and the medians of the process's CPU seconds
    (all its threads, the engine's workers too) of the same runs. On a shared machine the CPU
    time is the steadier figure: it leaves out the time spent waiting for a core."""
    for fn in variants.values():
        for _ in range(warmup):
            fn()
    wall = {name: [] for name in variants}
    cpu = {name: [] for name in variants}
    for _ in range(repeat):
        for name, fn in variants.items():
            own_threads()
            t, c = time.perf_counter(), time.process_time()
            fn()
            cpu[name].append(time.process_time() - c)
            wall[name].append(time.perf_counter() - t)
    return ({n: statistics.median(v) for n, v in wall.items()},
            {n: statistics.median(v) for n, v in cpu.items()})


def run_python(python, code, env=None, timeout=600):
    """Runs ``code`` with the interpreter ``python`` in a fresh process; returns the JSON value
    printed on its last line. Raises RuntimeError with the process's stderr on failure."""
    full_env = {k: v for k, v in os.environ.items()
                if not k.startswith(('NEOMX_', 'MXNET_', 'OMP_')) and k != 'PYTHONPATH'}
    full_env.update(env or {})
    r = subprocess.run([python, '-c', textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout, env=full_env, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError('%s failed (exit %d):\n%s' % (os.path.basename(python), r.returncode,
                                                         r.stderr[-3000:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


def has_mxnet():
    return os.path.exists(MXNET_REF)


def run_mxnet(code, env=None, timeout=600):
    """The same as ``run_python`` under real MXNet 1.9.1; None (and a note on stderr) when the
    reference environment is absent or the run fails, so a benchmark still reports the rest."""
    if not has_mxnet():
        return None
    try:
        return run_python(MXNET_REF, TIMING_HELPERS + textwrap.dedent(code), env, timeout)
    except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
        print('MXNet 1.9.1 run failed: %s' % e, file=sys.stderr)
        return None


def machine():
    """What the figures were measured on."""
    model = platform.processor() or platform.machine()
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    model = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    import numpy
    import torch
    mxnet_version = None
    if has_mxnet():
        try:
            mxnet_version = subprocess.run(
                [MXNET_REF, '-c', 'import mxnet; print(mxnet.__version__)'], capture_output=True,
                text=True, timeout=120).stdout.strip().splitlines()[-1]
        except (subprocess.TimeoutExpired, IndexError):
            mxnet_version = '?'
    try:
        load = '%.2f %.2f %.2f' % os.getloadavg()
    except OSError:
        load = '?'
    return {'cpu': model, 'cores': os.cpu_count(), 'usable cores': usable,
            'python': platform.python_version(), 'torch': torch.__version__,
            'torch threads (default)': torch.get_num_threads(), 'numpy': numpy.__version__,
            'mxnet reference': mxnet_version or 'absent',
            'date': datetime.datetime.now().strftime('%Y-%m-%d %H:%M'), 'load average': load}


def fmt(value, digits=3):
    """A figure for a table: None as a dash, floats to ``digits`` significant digits."""
    if value is None:
        return '-'
    if isinstance(value, float):
        if abs(value) >= 10 ** digits:
            return '%.0f' % value      # 1234 rather than 1.23e+03
        return '%.*g' % (digits, value)
    return str(value)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def markdown_table(headers, rows):
    cells = [[fmt(c) for c in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = lambda items: '| ' + ' | '.join(str(s).ljust(w) for s, w in zip(items, widths)) + ' |'
    out = [line(headers), '|' + '|'.join('-' * (w + 2) for w in widths) + '|']
    out.extend(line(r) for r in cells)
    return '\n'.join(out)


def print_result(result):
    print('\n## %s\n' % result['title'])
    if result.get('about'):
        print(result['about'] + '\n')
    print(markdown_table(result['headers'], result['rows']))
    for note in result.get('notes', ()):
        print('\n- ' + note)
    sys.stdout.flush()


def parser(doc):
    p = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    p.add_argument('--repeat', type=int, default=None, help='measurements per figure (median)')
    p.add_argument('--no-mxnet', action='store_true', help='skip the MXNet 1.9.1 reference')
    p.add_argument('--json', metavar='PATH', help='also write the result as JSON to PATH')
    return p


def finish(result, args):
    """Prints ``result`` and writes it where ``--json`` says."""
    print_result(result)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(result, f, indent=1)

