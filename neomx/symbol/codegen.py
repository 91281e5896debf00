"""Turns a graph into readable Python that calls the operators' kernels on torch tensors.

One line per node, named after the node, with the inferred shape and dtype as a comment, and a
``del`` of each intermediate after its last reader (its memory goes back while the graph runs,
as in eager code). A ReLU whose input only it reads, and which the backward pass does not need,
overwrites that input. The source is registered with ``linecache`` so a traceback from a kernel
shows the generated line (as torch.fx does). The result is what a hybridized block runs.

>>> import neomx as mx
>>> from neomx.symbol.codegen import generate
>>> from neomx.symbol.graph import Graph
>>> x = mx.sym.var('x')
>>> code = generate(Graph.of(mx.sym.relu(x * 2, name='out')), ['x'], name='double_relu')
>>> print(code.source)                                           # doctest: +NORMALIZE_WHITESPACE
def double_relu(x, generator=None, device=None):
    _mulscalar0 = _mul_scalar(x, scalar=2.0)
    out = relu(_mulscalar0)
    del _mulscalar0
    return (out,)
"""
import builtins
import inspect
import itertools
import keyword
import linecache
import math
import re
import textwrap

import torch

from ..base import MXNetError
from ..ops.layout import is_dense
from .graph import kernel_args
from .lowering import IN_PLACE, LOWER, UNREAD_OUTPUT

__all__ = ['generate', 'GeneratedCode']

_COUNTER = itertools.count()


class GeneratedCode:
    """The generated function ``fn(*inputs, generator=None, device=None) -> tuple of outputs``,
    its ``source`` and the ``filename`` it is registered under in linecache."""
    __slots__ = ('fn', 'source', 'filename', 'input_names')

    def __init__(self, fn, source, filename, input_names):
        self.fn = fn
        self.source = source
        self.filename = filename
        self.input_names = input_names

    def __repr__(self):
        return self.source


class _Names:
    """Unique Python identifiers from node and operator names."""

    def __init__(self):
        self.used = set(keyword.kwlist) | set(dir(builtins)) | {'generator', 'device', 'torch',
                                                                  '_own'}

    def make(self, text):
        base = re.sub(r'\W', '_', text) or '_'
        if base[0].isdigit():
            base = '_' + base
        name, i = base, 1
        while name in self.used:
            name = '%s_%d' % (base, i)
            i += 1
        self.used.add(name)
        return name


def _own(t):
    """An output that may share memory with an input (a view, or the input itself) is copied:
    outputs are new arrays, as in MXNet."""
    if t._base is not None or not is_dense(t):
        return t.clone(memory_format=torch.contiguous_format)
    return t


def _overwrites(node, readers, last_read):
    """Whether ``node`` may run in place on its input: an operator that can, reading the
    first output of one that leaves it unread in its backward pass (``UNREAD_OUTPUT``), which
    nothing else reads and which is not an output of the graph. An in-place ReLU saves a
    memory pass and an intermediate the size of its input; the generated code still checks
    that the input is not a view."""
    in_place = IN_PLACE.get(node.op.name)
    if in_place is None or len(node.inputs) != 1 or in_place(node.attrs) is None:
        return False
    src, k = node.inputs[0]
    key = (id(src), k)
    return (src.op is not None and src.op.name in UNREAD_OUTPUT and k == 0
            and readers[key] == 1 and last_read[key] is not None)


def generate(graph, input_names, name='forward', is_train=False, inferred=None, title=None,
             hook=None, device=None):
    """Source and function for ``graph``; the function takes the variables named in
    ``input_names`` positionally (folded constants are baked in). ``inferred`` (from
    passes.infer) adds shape comments; ``title`` is a comment line on top. ``hook``, when
    given, is called after each operator as ``hook(node, input tensors, output tensors)``
    (a block's ``register_op_hook``). The graphs a control-flow node holds are generated
    too, as functions its kernel calls (their source comes first); ``device`` is where
    their constants are folded."""
    names = _Names()
    inner = []
    glb = {'torch': torch, '_own': _own}
    if hook is not None:
        glb['_op_hook'] = hook
        names.used.add('_op_hook')
    kernels = {}
    for node in graph.nodes:
        if node.op is not None and node.op.name not in kernels:
            kname = names.make(node.op.name)
            kernels[node.op.name] = kname
            glb[kname] = node.op.kernel
    var = {}            # (id(node), output) -> expression
    params = []
    by_name = {}
    for node in graph.nodes:
        if node.op is None:
            by_name.setdefault(node.name, []).append(node)
    fname = names.make(name)
    for nm in input_names:
        ident = names.make(nm)
        params.append(ident)
        for node in by_name.get(nm, ()):
            var[(id(node), 0)] = ident
    # the last operator reading each value: an intermediate is deleted right after it, so
    # that its memory goes back while the graph still runs (as eager code frees it), not
    # when the function returns; graph outputs live on
    last_read = {}      # (id(operator), output) -> index of its last reader
    readers = {}        # (id(operator), output) -> how many inputs read it
    for i, node in enumerate(graph.nodes):
        for src, k in node.inputs:
            if src.op is not None:
                last_read[(id(src), k)] = i
                readers[(id(src), k)] = readers.get((id(src), k), 0) + 1
    for node, k in graph.heads:
        last_read[(id(node), k)] = None
    dying = {}
    for key, i in last_read.items():
        if i is not None:
            dying.setdefault(i, []).append(key)
    lines = []
    consts = 0
    for at, node in enumerate(graph.nodes):
        if node.op is None:
            if (id(node), 0) in var:
                continue
            value = node.extra.get('__value__')
            if value is None:
                raise MXNetError("hybridize: variable %s is neither an input nor a parameter of "
                                 "the block" % node.name)
            ident = names.make(node.name)
            glb[ident] = value.tensor
            var[(id(node), 0)] = ident
            consts += 1
            continue
        op = node.op
        args = ['None' if a is None else a for a in
                kernel_args(node, [var[(id(src), k)] for src, k in node.inputs])]
        while args and args[-1] == 'None' and len(args) > len(node.inputs):
            args.pop()
        defaults = _kernel_defaults(op)
        kw = ['%s=%s' % (k, _literal(v, glb, names)) for k, v in node.attrs.items()
              if not (k in defaults and _is_kernel_default(v, defaults[k]))]
        if op.graphs:
            codes = _inner_code(node, inferred, is_train, device)
            inner.extend(codes)
            idents = []
            for code in codes:
                ident = names.make(code.fn.__name__)
                glb[ident] = code.fn
                idents.append(ident)
            kw.append('graphs=(%s,)' % ', '.join(idents))
        kw += ['%s=%s' % kv for kv in
               op.kernel_kwargs('device', repr(bool(is_train)), 'generator').items()]
        call = None
        lower = LOWER.get(op.name)
        if lower is not None and inferred is not None:
            low = lower(node.attrs, *_input_specs(node, inferred))
            if low is not None:
                template, used = low
                glb.update(used)
                call = template.format(*args)
        if call is None:
            call = '%s(%s)' % (kernels[op.name], ', '.join(args + kw))
        if hook is None and _overwrites(node, readers, last_read):
            call = '({0} if {1}._base is None else {2})'.format(
                IN_PLACE[op.name](node.attrs).format(*args), args[0], call)
        nout = node.num_outputs()
        outs = [names.make(node.name if nout == 1 else '%s_%d' % (node.name, i))
                for i in range(nout)]
        comment = _comment(node, inferred)
        comment = '  # ' + comment if comment else ''
        count = _kernel_outputs(node, inferred)
        if nout == 1:
            lines.append('    %s = %s%s%s' % (outs[0], call, '[0]' if count > 1 else '', comment))
        else:
            lines.append('    %s = %s%s%s' % (', '.join(outs), call,
                                              '[:%d]' % nout if count > nout else '', comment))
        for i, o in enumerate(outs):
            var[(id(node), i)] = o
        if hook is not None:
            ident = names.make('_node_' + node.name)
            glb[ident] = node
            present = [var[(id(src), k)] for src, k in node.inputs]
            lines.append('    _op_hook(%s, (%s), (%s))' % (
                ident, ''.join(a + ', ' for a in present), ''.join(o + ', ' for o in outs)))
        dead = sorted(var[key] for key in dying.get(at, ()))
        dead += [o for j, o in enumerate(outs) if (id(node), j) not in last_read]
        if dead:
            lines.append('    del %s' % ', '.join(dead))
    rets = []
    for node, k in graph.heads:
        expr = var[(id(node), k)]
        if node.op is None or node.op.view:
            expr = '_own(%s)' % expr
        rets.append(expr)
    head = ['# %s' % title] if title else []
    sig = textwrap.fill(', '.join(params + ['generator=None', 'device=None']), 96,
                        initial_indent=' ' * 8, subsequent_indent=' ' * 8,
                        break_on_hyphens=False, break_long_words=False).strip()
    lines.append('    return (%s%s)' % (', '.join(rets), ',' if len(rets) == 1 else ''))
    src = '\n'.join(head + ['def %s(%s):' % (fname, sig)] + lines) + '\n'
    filename = '<neomx-generated-%d %s>' % (next(_COUNTER), name)
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, 'exec'), glb)
    shown = ''.join(code.source + '\n' for code in inner) + src
    return GeneratedCode(glb[fname], shown, filename, list(input_names))


def _inner_code(node, inferred, is_train, device):
    """The generated code of each graph control-flow ``node`` holds, for the shapes its
    inputs have (``inferred``), prepared as a program's graph is (passes.prepare)."""
    from .passes import prepare
    op = node.op
    specs = None
    if inferred is not None:
        shapes, dtypes = _input_specs(node, inferred)
        if all(s is not None for s in shapes):
            specs = op.inner_specs(node.attrs, shapes, dtypes)
    codes = []
    for i, (g, label) in enumerate(zip(op.graphs, op.labels)):
        names = [v.name for v in g.variables()]
        fname = '%s_%s' % (node.name, label)
        inf = None
        if specs is not None:
            g, inf = prepare(g, names, specs[i][0], specs[i][1], device, is_train,
                             name=fname)
        codes.append(generate(g, names, fname, is_train, inf, device=device))
    return codes


def _input_specs(node, inferred):
    """(shapes, dtypes) of a node's inputs in the kernel's argument order, None for an absent
    input or one not inferred."""
    shapes, dtypes = [], []
    for src, k in node.inputs:
        s = inferred.shapes.get(src)
        d = inferred.dtypes.get(src)
        shapes.append(None if s is None else s[k])
        dtypes.append(None if d is None else d[k])
    return kernel_args(node, shapes), kernel_args(node, dtypes)


_DEFAULTS = {}


def _kernel_defaults(op):
    """The keyword defaults of ``op``'s kernel: attributes equal to them are left out of the
    generated call, so it shows what is particular to the node."""
    d = _DEFAULTS.get(op.name)
    if d is None:
        try:
            sig = inspect.signature(op.kernel)
            d = {k: p.default for k, p in sig.parameters.items()
                 if p.default is not inspect.Parameter.empty}
        except (TypeError, ValueError):
            d = {}
        _DEFAULTS[op.name] = d
    return d


def _is_kernel_default(value, default):
    # By type as well as value: a float 0.0 where the kernel's default is the int 0 is passed,
    # as torch takes a result's dtype from such numbers.
    return type(value) is type(default) and value == default


def _kernel_outputs(node, inferred):
    """How many tensors the kernel returns: operators with hidden outputs (BatchNorm's batch
    mean and variance) return more than the node shows."""
    n = node.num_outputs()
    if inferred is None:
        return n
    return inferred.counts.get(node, n)


def _comment(node, inferred):
    if inferred is None or node not in inferred.shapes:
        return ''
    parts = []
    for s, d in zip(inferred.shapes[node], inferred.dtypes[node]):
        if s is not None:
            parts.append('%s %s' % (tuple(s), d or ''))
    return ', '.join(p.strip() for p in parts)


def _literal(value, glb, names):
    """Python source for an attribute value; what has none (inf, objects) becomes a global."""
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(value)
        ident = {math.inf: 'inf', -math.inf: 'ninf'}.get(value, 'nan')
        glb[ident] = value
        return ident
    if isinstance(value, tuple) and all(isinstance(v, (bool, int, str, type(None))) or
                                        (isinstance(v, float) and math.isfinite(v))
                                        for v in value):
        return repr(value)
    ident = names.make('_attr')
    glb[ident] = value
    return ident
