"""Runs the core benchmarks, each in a fresh process, and writes their tables as markdown.

    python benchmarks/run_all.py                      # print everything
    python benchmarks/run_all.py --write docs/benchmarks.md [--provisional "why"]
    python benchmarks/run_all.py --only dispatch,parallel --no-mxnet --repeat 5

``--provisional`` adds a warning to the page that the figures were taken under conditions
that make them unreliable (a shared or busy machine).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from common import machine, markdown_table

BENCHMARKS = ['dispatch', 'async_queue', 'parallel', 'backpressure', 'hybrid', 'training',
              'cnn', 'dist', 'rnn', 'data', 'module', 'numpy']

HEADER = """# Benchmarks

The benchmarks of neomx: the cost of pushing a tiny operator, queuing against finishing
(the seeds' asynchronous-computation experiment), automatic parallelism across two CPU
devices, the memory of a loop that never synchronises, hybridization, a LeNet training step,
the convolutional networks of d2l's chapter 5, data-parallel training across processes, an
LSTM's forward and backward, symbolic training with `Module.fit`, and a Gluon 2 block on the
NumPy interface against `hybrid_forward`. Each compares neomx with PyTorch doing the same work
in the same run and, where it can run, with MXNet 1.9.1 running the same code in its own
environment. The code is in `benchmarks/`; regenerate this page with

    python benchmarks/run_all.py --write docs/benchmarks.md

Every figure is a median of repeated measurements (see each section's notes). Ratios are
"lower is better" unless a section says otherwise.
"""


def run_one(name, args):
    """Runs ``bench_<name>.py`` in its own process; returns its result dict."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'bench_%s.py' % name)
    fd, out = tempfile.mkstemp(suffix='.json')
    os.close(fd)
    cmd = [sys.executable, script, '--json', out]
    if args.no_mxnet:
        cmd.append('--no-mxnet')
    if args.repeat and name != 'backpressure':
        cmd += ['--repeat', str(args.repeat)]
    if name == 'backpressure' and args.iters:
        cmd += ['--iters', str(args.iters)]
    try:
        r = subprocess.run(cmd, stdout=sys.stderr if args.write else None, timeout=3600)
        if r.returncode != 0:
            return {'title': name, 'about': '', 'headers': ['error'],
                    'rows': [['bench_%s.py exited with status %d' % (name, r.returncode)]],
                    'notes': []}
        with open(out) as f:
            return json.load(f)
    finally:
        os.unlink(out)


def render(results, info, provisional):
    parts = [HEADER]
    if provisional:
        parts.append('> **Provisional figures.** %s\n' % provisional)
    parts.append('## Machine\n')
    parts.append(markdown_table(['', ''], [[k, v] for k, v in info.items()]) + '\n')
    for res in results:
        parts.append('## %s\n' % res['title'])
        if res.get('about'):
            parts.append(res['about'] + '\n')
        parts.append(markdown_table(res['headers'], res['rows']) + '\n')
        if res.get('notes'):
            parts.append('\n'.join('- ' + n for n in res['notes']) + '\n')
    return '\n'.join(parts)


def main():
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument('--only', help='comma-separated subset of %s' % ','.join(BENCHMARKS))
    p.add_argument('--repeat', type=int, help='measurements per figure (each script has its '
                                              'own default)')
    p.add_argument('--iters', type=int, help='iterations of the memory benchmark')
    p.add_argument('--no-mxnet', action='store_true', help='skip the MXNet 1.9.1 reference')
    p.add_argument('--write', metavar='PATH', help='write the markdown page to PATH')
    p.add_argument('--provisional', metavar='TEXT', help='mark the figures as provisional')
    args = p.parse_args()
    names = args.only.split(',') if args.only else BENCHMARKS
    unknown = set(names) - set(BENCHMARKS)
    if unknown:
        p.error('unknown benchmark(s) %s; expected some of %s' % (', '.join(sorted(unknown)),
                                                               ', '.join(BENCHMARKS)))
    info = machine()
    results = []
    for name in names:
        print('running bench_%s.py ...' % name, file=sys.stderr, flush=True)
        results.append(run_one(name, args))
    info['load average (after)'] = '%.2f %.2f %.2f' % os.getloadavg()
    page = render(results, info, args.provisional)
    if args.write:
        os.makedirs(os.path.dirname(os.path.abspath(args.write)), exist_ok=True)
        with open(args.write, 'w') as f:
            f.write(page)
        print('wrote %s' % args.write, file=sys.stderr)
    else:
        print(page)


if __name__ == '__main__':
    main()
