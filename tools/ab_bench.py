"""Runs one benchmark script of two checkouts alternately and compares their figures.

A change is measured against the commit it starts from on a shared machine: a second checkout
of that commit (``git worktree add ../before <commit>``) and this one run the same script
(``benchmarks/<script>`` of each checkout, with this interpreter: each script puts its own
checkout first on ``sys.path``) in alternating order over ``--rounds`` rounds (A B, B A, A B,
...), so that a change in the machine's load falls on both alike. Every numeric cell of the
script's JSON table is collected per round; the table printed gives, per row and column, the
median over rounds of each side, their ranges and the ratio of the medians (after/before).

    python tools/ab_bench.py --before ../before [--after .] [--rounds 5] \\
        bench_dispatch.py -- --no-mxnet --repeat 9
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run_once(root, script, args, timeout):
    with tempfile.NamedTemporaryFile(suffix='.json', delete=False) as f:
        path = f.name
    try:
        cmd = [sys.executable, os.path.join(root, 'benchmarks', script)] + args + ['--json', path]
        env = {k: v for k, v in os.environ.items() if k != 'PYTHONPATH'}
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=root, env=env)
        if r.returncode != 0:
            raise RuntimeError('%s failed in %s:\n%s' % (script, root, r.stderr[-3000:]))
        with open(path) as f:
            return json.load(f)
    finally:
        os.unlink(path)


def cells(result):
    """{(row label, column): number} of a benchmark's JSON table."""
    out = {}
    headers = result.get('headers') or []
    for row in result.get('rows', []):
        label = ' | '.join(str(c) for c in row if isinstance(c, str))
        for h, c in zip(headers, row):
            if isinstance(c, (int, float)) and not isinstance(c, bool):
                out[(label, h)] = float(c)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--before', required=True, help='the checkout of the starting commit')
    p.add_argument('--after', default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p.add_argument('--rounds', type=int, default=5)
    p.add_argument('--timeout', type=int, default=1800, help='seconds per run')
    p.add_argument('--json', help='write every sample here')
    p.add_argument('script')
    p.add_argument('args', nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    args = [x for x in a.args if x != '--']
    sides = {'before': os.path.abspath(a.before), 'after': os.path.abspath(a.after)}
    samples = {'before': [], 'after': []}
    for r in range(a.rounds):
        order = ['before', 'after'] if r % 2 == 0 else ['after', 'before']
        for side in order:
            samples[side].append(cells(run_once(sides[side], a.script, args, a.timeout)))
            print('round %d %s done' % (r + 1, side), file=sys.stderr, flush=True)
    keys = [k for k in samples['before'][0] if all(k in s for side in samples.values()
                                                    for s in side)]
    print('%s %s, %d rounds alternating (medians; ranges in brackets)\n'
          % (a.script, ' '.join(args), a.rounds))
    print('| row | column | before | after | after/before |')
    print('|---|---|---|---|---|')
    table = []
    for k in keys:
        b = [s[k] for s in samples['before']]
        f = [s[k] for s in samples['after']]
        mb, mf = statistics.median(b), statistics.median(f)
        table.append({'row': k[0], 'column': k[1], 'before': b, 'after': f})
        print('| %s | %s | %.4g [%.4g-%.4g] | %.4g [%.4g-%.4g] | %s |'
              % (k[0], k[1], mb, min(b), max(b), mf, min(f), max(f),
                 '%.3f' % (mf / mb) if mb else '-'))
    if a.json:
        with open(a.json, 'w') as fh:
            json.dump({'script': a.script, 'args': args, 'samples': table}, fh, indent=1)


if __name__ == '__main__':
    main()
