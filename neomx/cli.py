"""The ``neomx`` command.

::

    neomx run script.py [args]              run an MXNet 1.x script on neomx (import mxnet works)
    neomx run -m package.module [args]      ... a module, as python -m
    neomx run -c "code" [args]              ... a piece of code, as python -c
    neomx profile [-o profile.json] [--stats] script.py [args]
                                            run it with the profiler on and write the trace
    neomx launch -n N [--nnodes M --node-rank R --master ADDR:PORT] [--profile FILE]
                 [--max-restarts K] script.py [args]
                                            N processes on this machine (torch.distributed.run)
    neomx COMMAND --help                    the options of one command

``python -m neomx ...`` is the same command.

>>> import subprocess, sys
>>> r = subprocess.run([sys.executable, '-m', 'neomx', 'run', '-c',
...                     'import mxnet; print(mxnet.nd.ones((2,)).sum().asscalar())'],
...                    capture_output=True, text=True)
>>> r.stdout
'2.0\\n'
"""
import os
import runpy
import shutil
import sys
import tempfile
import time
import types

__all__ = ['main', 'run_target']

USAGE = """\
usage: neomx run     [-m module | -c code | script.py] [args ...]
       neomx profile [-o FILE] [--stats] [-m module | -c code | script.py] [args ...]
       neomx launch  -n N [--nnodes M] [--node-rank R] [--master ADDR:PORT] [--profile FILE]
                     [--max-restarts K] [-m module | script.py] [args ...]
       neomx --version
       neomx COMMAND --help     the options of one command

run      runs a script written for MXNet 1.x: `import mxnet` (and mxnet.nd, mxnet.gluon.nn, ...)
         resolve to neomx.
profile  the same with the profiler on; writes a Chrome/Perfetto trace (default profile.json)
         with one track per device worker. --stats also prints the per-operator table.
launch   starts N processes per machine with torch.distributed.run (torchrun) for the
         'dist_sync' KVStore; each runs `neomx run script.py`. One machine: -n N. Several:
         the same command on each, with --nnodes, --node-rank and --master of rank 0's machine.
"""


HELP = {
    'run': """\
usage: neomx run [-m module | -c code | script.py] [args ...]

Runs a script written for MXNet 1.x on neomx: `import mxnet` (and mxnet.nd, mxnet.gluon.nn,
...) resolve to neomx, here and in the processes the script starts. As for `python`, options
end at the target; everything after it is the target's (its sys.argv).

  script.py     a script file
  -m module     a module, as python -m
  -c code       a piece of code, as python -c
""",
    'profile': """\
usage: neomx profile [-o FILE] [--stats] [-m module | -c code | script.py] [args ...]

Runs the target as `neomx run` does, with the profiler on from its first line to its last,
and writes a Chrome/Perfetto trace: one track per device worker, copy worker and Python
thread. Open it in https://ui.perfetto.dev or chrome://tracing. The event count printed at the
end is that of the file's traceEvents, metadata (track names) included.

  -o FILE, --output FILE   the trace file (default profile.json)
  --stats                  also print the per-operator table (count, total, min, max, mean)
""",
    'launch': """\
usage: neomx launch -n N [--nnodes M] [--node-rank R] [--master ADDR:PORT] [--profile FILE]
                    [--max-restarts K] [-m module | script.py] [args ...]

Starts N processes on this machine with torch.distributed.run (torchrun) for the
'dist_sync' KVStore; each runs `neomx run script.py`. One machine: -n N. Several machines:
the same command on each, with --nnodes, --node-rank and --master of rank 0's machine. The
processes of a machine share its cores (OMP_NUM_THREADS is set to their share unless given).

  -n N, --nproc-per-node N  processes on this machine (default 1)
  --nnodes M                machines in the job (default 1)
  --node-rank R             this machine's number, 0 to M-1 (default 0)
  --master ADDR:PORT        the address of rank 0's machine and a free port on it (needed
                            with --nnodes above 1)
  --profile FILE            profile every worker (`neomx profile`): FILE with -rank<r> for each,
                            merged into FILE at the end
  --max-restarts K          restart the workers up to K times when one fails (torchrun's
                            option; default 0)

Environment: NEOMX_DIST_TIMEOUT (seconds a collective waits for the others, default 300),
NEOMX_DIST_BUCKET_MB (gradient bucket size, 0 turns overlapping off). See docs/distributed.md.
""",
}


class UsageError(Exception):
    pass


class _HelpAsked(Exception):
    """-h or --help among a command's options (before its target)."""


def _parse(argv, options, allow_code=True):
    """Splits ``argv`` into the options of a subcommand, then the target and its arguments.

    Options end at the first argument that is not one (the script), at ``-m``/``-c`` (which
    take the next argument), or at ``--``, as for ``python`` itself; everything after the
    target belongs to the target. ``options`` maps each option to (key, takes a value)."""
    opts = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == '--':
            i += 1
            break
        if a[:2] in ('-m', '-c'):
            if a[:2] == '-c' and not allow_code:
                raise UsageError("-c is not available here: give a script or -m module")
            kind = 'module' if a[:2] == '-m' else 'code'
            if len(a) > 2:
                return opts, kind, a[2:], argv[i + 1:]
            if i + 1 >= len(argv):
                raise UsageError("argument %s: expected a %s" % (a, kind))
            return opts, kind, argv[i + 1], argv[i + 2:]
        if not a.startswith('-') or a == '-':
            break
        if a in ('-h', '--help'):
            raise _HelpAsked()
        name, eq, value = a.partition('=')
        if name not in options:
            raise UsageError("unknown option %r (options: %s)" % (name, ', '.join(sorted(options))
                                                                 or 'none'))
        key, takes_value = options[name]
        if takes_value:
            if not eq:
                i += 1
                if i >= len(argv):
                    raise UsageError("option %s expects a value" % name)
                value = argv[i]
            opts[key] = value
        else:
            opts[key] = True
        i += 1
    if i >= len(argv):
        raise UsageError("expected a script (or -m module%s)"
                         % (' or -c code' if allow_code else ''))
    return opts, 'path', argv[i], argv[i + 1:]


# -- running a target with `import mxnet` aliased ------------------------------------------

_HERE = os.path.abspath(__file__)
_OURS = {_HERE, os.path.abspath(runpy.__file__), '<frozen runpy>'}
_ALIAS_PATH = os.path.join(os.path.dirname(_HERE), '_alias_path')


def _install_alias():
    """``import mxnet`` gives neomx here and in every Python process this one starts (data
    loader workers started with 'spawn', subprocesses): the directory put in front of
    PYTHONPATH holds an ``mxnet`` package that installs the alias."""
    from . import _mxnet_alias
    _mxnet_alias.install()
    paths = os.environ.get('PYTHONPATH', '')
    if _ALIAS_PATH not in paths.split(os.pathsep):
        os.environ['PYTHONPATH'] = _ALIAS_PATH + (os.pathsep + paths if paths else '')


def run_target(kind, target, args):
    """Runs a script (``kind='path'``), a module (``'module'``) or code (``'code'``) as
    ``__main__`` with ``sys.argv`` set, as the Python command line would, with ``import mxnet``
    resolving to neomx."""
    _install_alias()
    if kind == 'path':
        if not os.path.exists(target):
            raise UsageError("can't open file %r: [Errno 2] No such file or directory" % target)
        sys.argv = [target] + list(args)
        sys.path[0] = os.path.dirname(os.path.abspath(target))
        runpy.run_path(target, run_name='__main__')
    elif kind == 'module':
        sys.argv = [target] + list(args)   # run_module puts the module's file here
        sys.path[0] = os.getcwd()
        runpy.run_module(target, run_name='__main__', alter_sys=True)
    else:
        sys.argv = ['-c'] + list(args)
        sys.path[0] = ''
        main_mod = types.ModuleType('__main__')
        main_mod.__builtins__ = __builtins__
        saved = sys.modules.get('__main__')
        sys.modules['__main__'] = main_mod
        try:
            exec(compile(target, '<string>', 'exec'), main_mod.__dict__)
        finally:
            sys.modules['__main__'] = saved


def _report(exc):
    """Shows a failing script's traceback as Python would, without the frames of this file and
    of runpy (the script's own excepthook, if it set one, is used)."""
    tb = exc.__traceback__
    while tb is not None and (tb.tb_frame.f_code.co_filename in _OURS
                              or os.path.abspath(tb.tb_frame.f_code.co_filename) in _OURS):
        tb = tb.tb_next
    tb = tb or exc.__traceback__
    sys.excepthook(type(exc), exc.with_traceback(tb), tb)


def _run_guarded(kind, target, args):
    try:
        run_target(kind, target, args)
    except UsageError:
        raise
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:
        _report(exc)
        return 1
    return 0


# -- subcommands ---------------------------------------------------------------------------

def cmd_run(argv):
    _, kind, target, args = _parse(argv, {})
    return _run_guarded(kind, target, args)


def cmd_profile(argv):
    opts, kind, target, args = _parse(argv, {'-o': ('output', True), '--output': ('output', True),
                                             '--stats': ('stats', False)})
    from . import profiler
    output = opts.get('output', 'profile.json')
    profiler.set_config(filename=output, profile_all=True, aggregate_stats=True,
                        continuous_dump=False)
    profiler.set_state('run')
    status = 1
    try:
        status = _run_guarded(kind, target, args)
    finally:
        path, n = profiler._finish()
        if path is not None:
            print("neomx profile: %d events written to %s (open it in https://ui.perfetto.dev "
                  "or chrome://tracing)" % (n, path), file=sys.stderr)
        if opts.get('stats'):
            sys.stderr.write(profiler.dumps())
    return status


def _launch_argv(opts, kind, target, args):
    """torch.distributed.run's arguments for ``neomx launch``."""
    try:
        nproc = int(opts.get('nproc', 1))
        nnodes = int(opts.get('nnodes', 1))
        node_rank = int(opts.get('node_rank', 0))
    except ValueError as exc:
        raise UsageError("launch: -n, --nnodes and --node-rank take integers (%s)" % exc) from None
    if nproc < 1 or nnodes < 1 or not 0 <= node_rank < nnodes:
        raise UsageError("launch: expected -n >= 1, --nnodes >= 1 and 0 <= --node-rank < "
                         "--nnodes, got -n %d, --nnodes %d, --node-rank %d"
                         % (nproc, nnodes, node_rank))
    out = ['--nproc-per-node', str(nproc)]
    master = opts.get('master')
    if master:
        addr, _, port = master.rpartition(':')
        if not addr or not port.isdigit():
            raise UsageError("launch: --master expects ADDR:PORT (the address of the machine "
                             "running rank 0 and a free port on it), got %r" % master)
        out += ['--nnodes', str(nnodes), '--node-rank', str(node_rank),
                '--master-addr', addr, '--master-port', port]
    elif nnodes > 1:
        raise UsageError("launch: with --nnodes %d give --master ADDR:PORT (rank 0's machine)"
                         % nnodes)
    else:
        out.append('--standalone')
    if 'max_restarts' in opts:
        out += ['--max-restarts', str(int(opts['max_restarts']))]
    # Each worker is `python -m neomx run|profile <target>`, so `import mxnet` works in it.
    inner = ['profile', '-o', opts['profile']] if opts.get('profile') else ['run']
    inner += ['-m', target] if kind == 'module' else [target]
    return out + ['-m', 'neomx'] + inner + list(args)


def cmd_launch(argv):
    opts, kind, target, args = _parse(
        argv, {'-n': ('nproc', True), '--nproc-per-node': ('nproc', True),
               '--nnodes': ('nnodes', True), '--node-rank': ('node_rank', True),
               '--master': ('master', True), '--profile': ('profile', True),
               '--max-restarts': ('max_restarts', True)}, allow_code=False)
    targv = _launch_argv(opts, kind, target, args)
    nproc = int(opts.get('nproc', 1))
    if nproc > 1 and 'OMP_NUM_THREADS' not in os.environ:
        # Processes sharing a machine share its cores: without this each would size its
        # thread pool for the whole machine and they would fight over the cores.
        from .engine import cpu_budget
        os.environ['OMP_NUM_THREADS'] = str(max(1, cpu_budget() // nproc))
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed import run as torchrun
    status = 0
    # Where the workers keep how far they got with the KVStore (kvstore/progress.py).
    folder = tempfile.mkdtemp(prefix='neomx-launch-')
    before = os.environ.get('NEOMX_LAUNCH_DIR')
    os.environ['NEOMX_LAUNCH_DIR'] = folder
    try:
        torchrun.main(targv)
    except ChildFailedError as exc:
        print("neomx launch: %s" % exc, file=sys.stderr)
        node_rank = int(opts.get('node_rank', 0))
        cause = _stopped_worker(folder, range(node_rank * nproc, (node_rank + 1) * nproc), exc)
        if cause:
            print(cause, file=sys.stderr)
        status = 1
    finally:
        if before is None:
            os.environ.pop('NEOMX_LAUNCH_DIR', None)
        else:
            os.environ['NEOMX_LAUNCH_DIR'] = before
        shutil.rmtree(folder, ignore_errors=True)
    if opts.get('profile'):
        _merge_rank_traces(opts['profile'], nproc, int(opts.get('node_rank', 0)))
    return status


def _stopped_worker(folder, ranks, exc):
    """The root cause of a failed job when a worker of this machine stopped calling the
    KVStore and another timed out waiting for it (torch's report names the one that timed
    out, as it failed first): a line naming the worker that stopped, or None."""
    from .kvstore import progress
    behind, furthest = progress.stopped(folder, ranks)
    if not behind:
        return None
    first = exc.get_first_failure()[0]
    r, n, t = behind[0]
    fr, fn, ft = furthest
    waited = [rank for rank in exc.failures if rank not in [b[0] for b in behind]]
    if first == r:
        torch_says = "Torch's report names it too: it failed first"
    elif first in waited:
        torch_says = ("Torch's report names rank %d, which failed first: it gave up waiting "
                      "for rank %d (NEOMX_DIST_TIMEOUT)" % (first, r))
    else:
        torch_says = "Torch's report names rank %d, which failed first" % first
    return ("neomx launch: root cause: rank %d stopped calling the KVStore: it started %d "
            "collective(s), the last at %s, while rank %d started %d (the last at %s)%s. %s"
            % (r, n, time.strftime('%H:%M:%S', time.localtime(t)), fr, fn,
               time.strftime('%H:%M:%S', time.localtime(ft)),
               '' if len(behind) == 1 else '; ranks %s stopped too' % ', '.join(
                   str(b[0]) for b in behind[1:]), torch_says))


def _merge_rank_traces(name, nproc, node_rank):
    """Merges the traces the workers of this machine wrote (``name`` with ``-rank<r>``) into
    ``name``, so that one file shows them side by side."""
    from . import profiler
    root, ext = os.path.splitext(name)
    paths = ['%s-rank%d%s' % (root, r, ext)
             for r in range(node_rank * nproc, (node_rank + 1) * nproc)]
    paths = [p for p in paths if os.path.exists(p)]
    if paths:
        n = profiler.merge_traces(paths, name)
        print("neomx launch: %d events of %d workers merged into %s" % (n, len(paths), name),
              file=sys.stderr)


COMMANDS = {'run': cmd_run, 'profile': cmd_profile, 'launch': cmd_launch}


def main(argv=None):
    """Entry point of the ``neomx`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ('-h', '--help', 'help'):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    if argv[0] == '--version':
        from . import __version__
        print('neomx %s' % __version__)
        return 0
    cmd = COMMANDS.get(argv[0])
    if cmd is None:
        sys.stderr.write("neomx: unknown command %r (expected one of %s)\n%s"
                         % (argv[0], ', '.join(COMMANDS), USAGE))
        return 2
    try:
        return cmd(argv[1:])
    except _HelpAsked:
        sys.stdout.write(HELP[argv[0]])
        return 0
    except UsageError as exc:
        sys.stderr.write("neomx %s: %s\n" % (argv[0], exc))
        return 2


if __name__ == '__main__':
    sys.exit(main())
