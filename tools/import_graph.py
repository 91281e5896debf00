"""The import graph of a neomx checkout and its strongly connected components.

Every ``import`` and ``from ... import`` of every module under ``neomx/`` is an edge, those
inside functions and ``if`` blocks included (they run too, only later); an import of a name
that is a submodule is an edge to that submodule, any other name an edge to the module that
defines it. A package's ``__init__`` counts as the package's own module: importing
``neomx.ndarray.ndarray`` is an edge to it, not to ``neomx.ndarray``.

Each component of more than one module is printed with the layers it spans. The layers are
DESIGN.md's, base/context < engine < ops < ndarray < autograd < symbol < gluon, with the rest of
the package placed by what it builds on (``LAYERS``): the profiler with the engine whose trace it
records; mx.np and mx.npx with the symbols, since their functions build array operations and
graph nodes alike; ``lib`` (optimizer, kvstore, initializer, metric, data I/O: DESIGN.md's layer
between symbol and gluon); ``app`` above gluon for everything else (the package itself, module,
model, contrib, test_utils, the C-API stand-in). A component that spans two layers is a cycle
crossing a layer boundary; ``--module-level`` counts only the imports that run when a module is
imported, which should have no cycle at all.

    python tools/import_graph.py [ROOT] [--module-level] [--edges] [--json PATH]
"""
import argparse
import ast
import json
import os
import sys

# Layers in import order; a module belongs to the first prefix that matches its name.
LAYERS = [
    ('base', ('neomx.base', 'neomx.context', 'neomx.libinfo', 'neomx.util', 'neomx.atomic',
              'neomx._numpy1', 'neomx.runtime', 'neomx.registry', 'neomx.lr_scheduler')),
    ('engine', ('neomx.engine', 'neomx.profiler')),
    ('ops', ('neomx.ops',)),
    ('ndarray', ('neomx.ndarray',)),
    ('autograd', ('neomx.autograd',)),
    ('symbol', ('neomx.symbol', 'neomx.numpy', 'neomx.numpy_extension',
                'neomx.numpy_op_signature', 'neomx._numpy_op_doc')),
    ('lib', ('neomx.optimizer', 'neomx.kvstore', 'neomx.initializer', 'neomx.metric',
             'neomx.random', 'neomx.io', 'neomx.image', 'neomx.recordio')),
    ('gluon', ('neomx.gluon',)),
]
ORDER = [name for name, _ in LAYERS] + ['app']


def layer_of(module):
    for name, prefixes in LAYERS:
        for p in prefixes:
            if module == p or module.startswith(p + '.'):
                return name
    return 'app'


def modules(root):
    """{module name: file path} for every .py file under ROOT/neomx."""
    out = {}
    base = os.path.join(root, 'neomx')
    for d, dirs, files in os.walk(base):
        dirs[:] = [x for x in dirs if x != '__pycache__' and x != '_alias_path']
        for f in files:
            if not f.endswith('.py'):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, root)[:-3].split(os.sep)
            if rel[-1] == '__init__':
                rel = rel[:-1]
            out['.'.join(rel)] = path
    return out


def _resolve(mod, is_pkg, level, target):
    """The absolute name of a relative import of ``target`` at ``level`` inside ``mod``."""
    if level == 0:
        return target
    parts = mod.split('.')
    if not is_pkg:
        parts = parts[:-1]
    if level > 1:
        parts = parts[:len(parts) - (level - 1)]
    return '.'.join(parts + ([target] if target else []))


def _top_level_nodes(tree):
    """The statements that run at import: the module's body, into if/try/with blocks but
    not into functions or classes' methods (class bodies run at import too)."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) or isinstance(child, ast.ExceptHandler):
                stack.append(child)


def edges(root, module_level=False):
    """{module: {imported module: [line numbers]}} inside neomx."""
    mods = modules(root)
    graph = {m: {} for m in mods}
    for mod, path in mods.items():
        with open(path, encoding='utf-8') as f:
            tree = ast.parse(f.read(), path)
        is_pkg = path.endswith('__init__.py')
        nodes = _top_level_nodes(tree) if module_level else ast.walk(tree)
        for node in nodes:
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, is_pkg, node.level, node.module)
                for a in node.names:
                    sub = base + '.' + a.name
                    targets.append(sub if sub in mods else base)
            for t in targets:
                # the deepest neomx module the name reaches
                while t and t not in mods:
                    t = t.rpartition('.')[0]
                if t and t != mod and t.startswith('neomx'):
                    graph[mod].setdefault(t, []).append(node.lineno)
    return graph


def components(graph):
    """Strongly connected components (Tarjan, iterative), largest first."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return sorted(out, key=len, reverse=True)


def upward(graph):
    """The imports that go up a layer: (importer, imported, lines)."""
    out = []
    for a, targets in sorted(graph.items()):
        for b, lines in sorted(targets.items()):
            if ORDER.index(layer_of(b)) > ORDER.index(layer_of(a)):
                out.append((a, b, lines))
    return out


def report(root, module_level):
    graph = edges(root, module_level)
    comps = [c for c in components(graph) if len(c) > 1]
    result = {'modules': len(graph), 'edges': sum(len(t) for t in graph.values()),
              'components': [], 'upward': []}
    for c in comps:
        layers = sorted({layer_of(m) for m in c}, key=ORDER.index)
        result['components'].append({'size': len(c), 'layers': layers, 'modules': c})
    result['upward'] = [{'from': a, 'to': b, 'lines': lines} for a, b, lines in upward(graph)]
    return graph, result


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('root', nargs='?', default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    p.add_argument('--module-level', action='store_true',
                   help='only the imports that run when a module is imported')
    p.add_argument('--edges', action='store_true', help='print each component\'s edges')
    p.add_argument('--upward', action='store_true', help='print every import up a layer')
    p.add_argument('--json', help='write the result here')
    args = p.parse_args(argv)
    graph, res = report(args.root, args.module_level)
    kind = 'module-level imports' if args.module_level else 'all imports (function-level too)'
    print('%s: %d modules, %d edges; %d cyclic components' % (
        kind, res['modules'], res['edges'], len(res['components'])))
    for c in res['components']:
        crosses = len(c['layers']) > 1
        print('\n  %d modules, layers %s%s' % (c['size'], ' < '.join(c['layers']),
                                               '  (crosses a layer boundary)' if crosses else ''))
        print('    ' + ' '.join(c['modules']))
        if args.edges:
            members = set(c['modules'])
            for a in c['modules']:
                for b, lines in sorted(graph[a].items()):
                    if b in members:
                        print('      %s -> %s  (line %s)' % (a, b, ', '.join(map(str, lines))))
    crossing = sum(len(c['layers']) > 1 for c in res['components'])
    print('\ncomponents crossing a layer boundary: %d' % crossing)
    if args.upward:
        print('\nimports up a layer (%d):' % len(res['upward']))
        for u in res['upward']:
            print('  %s -> %s  (line %s)' % (u['from'], u['to'], ', '.join(map(str, u['lines']))))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(res, f, indent=1)
    return 1 if crossing else 0


if __name__ == '__main__':
    sys.exit(main())
