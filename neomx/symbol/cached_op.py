"""CachedOp: a graph compiled once per input signature and run as one engine operation.

``compile_program`` runs the passes on a graph for given input shapes, dtypes, device and
train/predict mode and generates its Python (codegen.py); a ``Program`` pushes that function
as a single engine operation reading the inputs (data and parameters) and writing the
outputs and the auxiliary states. While autograd records, the function runs under torch
autograd, so gradients flow through it exactly as through the operators one by one.

>>> import neomx as mx
>>> x = mx.sym.var('x')
>>> op = mx.sym.CachedOp(mx.sym.relu(x * 2))
>>> op(mx.nd.array([-1.0, 3.0])).asnumpy().tolist()
[0.0, 6.0]
"""
import torch

from .. import engine as _engine
from ..base import MXNetError, mode
from ..context import current_context
from ..ops import amp as amp_table
from ..ndarray.ndarray import NDArray, Storage, _make, rng_var
from ..ndarray.run import (INTEGERS, closure, integer_gradient, merge_leaves, record_outputs,
                           shadowed)
from . import passes
from .codegen import generate
from .graph import Graph, evaluate
from .subgraph import backends, has_backend

__all__ = ['CachedOp', 'Program', 'compile_program']


class Program:
    """A compiled graph for one signature: the generated code, the output shapes and dtypes,
    which inputs it writes (auxiliary states) and whether it draws random numbers."""
    __slots__ = ('code', 'out_specs', 'aux', 'rng', 'work', 'name', 'graph', 'replay',
                 'input_names', 'integer_nodes', 'float_to_integer', 'is_train')

    def __init__(self, code, out_specs, aux, rng, work, name, graph):
        self.code = code
        self.out_specs = out_specs
        self.aux = aux
        self.rng = rng
        self.work = work
        self.name = name
        self.graph = graph
        self.replay = None
        self.input_names = ()
        self.integer_nodes = frozenset()    # ids of nodes with an integer first output
        self.float_to_integer = False       # some integer node reads a floating-point value
        self.is_train = False

    @property
    def source(self):
        return self.code.source

    def run(self, inputs, ctx, leaves=None):
        """Pushes the program on NDArrays ``inputs`` (in the program's input order); returns
        the output NDArrays at once. ``leaves``: the autograd variables the outputs depend on
        when the caller knows them (False for none), else found from the inputs."""
        return self.call(inputs, (), ctx, leaves)

    def call(self, data, pvars, ctx, leaves=None, recipe=None):
        """``run`` with the inputs split in two: NDArrays ``data`` (possibly views) and the
        Vars ``pvars`` of whole arrays (parameters), which a caller can keep from call to
        call. Kept lean: this is the per-call cost of a hybridized block. ``recipe``: what
        ``autograd.get_symbol`` shows for the outputs when they are recorded."""
        outs = [_make(Storage(), s, d, ctx) for s, d in self.out_specs]
        out_vars = [o._var for o in outs]
        reads = [x._var for x in data]
        if pvars:
            reads += pvars
        writes = out_vars
        if self.aux:
            writes = out_vars + [reads[i] for i in self.aux]
        gen = None
        if self.rng:
            rv = rng_var(ctx)
            reads = reads + [rv]
            writes = writes + [rv]
            gen = rv.generator
        rec = False
        if mode.recording:
            if leaves is None:
                leaves = merge_leaves(reads)
            if leaves:
                rec = record_outputs(out_vars, [x._var for x in data] + list(pvars), leaves,
                                     recipe)
        kw = {'generator': gen, 'device': ctx.torch_device}
        if rec and (self.float_to_integer or shadowed(reads, [d for _, d in self.out_specs])):
            # integer values autograd follows: node by node on float64 shadows, so that their
            # gradients are MXNet's (see integer_hook)
            fn = closure(self.interpret_shadowed, data, outs, kw, rec, params=pvars,
                         shadows=True)
        else:
            fn = closure(self.code.fn if (rec or self.replay is None) else self.replay, data,
                         outs, kw, rec, params=pvars)
        _engine.push(fn, reads, writes, ctx, self.name, work=self.work)
        return outs

    def interpret_shadowed(self, *ts, generator=None, device=None):
        """The program's graph run by the interpreter with ``integer_hook``: what a recorded
        call runs on the float64 shadows of integer arrays."""
        return evaluate(self.graph, dict(zip(self.input_names, ts)), device, self.is_train,
                        generator, integer_hook(self.integer_nodes))


def integer_hook(integer_nodes):
    """The interpreter hook (``graph.evaluate``) for graphs run on float64 shadows: results of
    the nodes ``integer_nodes`` (ids) whose operator's integer gradient MXNet defines as zero
    (``kernel.int_no_grad``: mod, floor division) are cut from the graph, and the gradients
    reaching the other integer results are truncated to integers, as MXNet's."""
    def hook(node, run, args):
        out = run(args)
        if id(node) not in integer_nodes:
            return out
        if getattr(node.op.kernel, 'int_no_grad', False):
            return tuple(o.detach() for o in out)
        first = out[0]
        return (integer_gradient(first) if first.is_floating_point() else first,) + out[1:]
    return hook


def _work(graph, inferred):
    """The engine's work estimate of a whole program: the sum of its operators' (None when
    one of them is large without saying how large)."""
    total = 0
    for node in graph.nodes:
        if node.op is None:
            continue
        shapes = [inferred.shapes[src][k] for src, k in node.inputs]
        w = node.op.work(node.attrs, shapes, inferred.shapes[node])
        if w is None:
            return None
        total += w
    return total


def compile_program(graph, input_names, shapes, dtypes, ctx, is_train, name='forward',
                    title=None, backend=None, static=False, cse=True, hook=None):
    """Compiles ``graph`` for inputs ``input_names`` of ``shapes`` and ``dtypes`` (lists, in
    that order) on ``ctx``; ``is_train`` is baked into train-dependent operators. ``hook``
    is called after each operator (see codegen.generate)."""
    g, inferred = passes.prepare(graph, input_names, shapes, dtypes, ctx.torch_device,
                                 is_train, cse, name)
    code = generate(g, input_names, name=name, is_train=is_train, inferred=inferred,
                    title=title, hook=hook, device=ctx.torch_device)
    out_specs = [(inferred.shapes[n][k], inferred.dtypes[n][k] or 'float32')
                 for n, k in g.heads]
    # the inputs it writes in this mode: predicting, BatchNorm reads its moving statistics
    # only, and calls of the program on other threads need not wait for one another
    aux_names = {n.name for n in g.aux_nodes(is_train).values()}
    aux = tuple(i for i, nm in enumerate(input_names) if nm in aux_names)
    rng = any(n.op is not None and n.op.rng for n in g.nodes)
    prog = Program(code, out_specs, aux, rng, _work(g, inferred), name, g)
    prog.input_names = tuple(input_names)
    prog.is_train = is_train
    prog.integer_nodes = frozenset(id(n) for n in g.nodes if n.op is not None and
                                   (inferred.dtypes[n] or [None])[0] in INTEGERS)
    # a gradient flows through such a node as through a cast (MXNet): recorded, the program
    # runs on float shadows, as the same operators do imperatively
    prog.float_to_integer = any(
        (inferred.dtypes[src] or [None])[k] not in INTEGERS
        for n in g.nodes if id(n) in prog.integer_nodes for src, k in n.inputs)
    if backend == 'inductor':
        compiled = torch.compile(code.fn, dynamic=False)
        code.fn = compiled
    elif backend not in (None, '') and not has_backend(backend):
        raise MXNetError("%s: unknown backend %r (expected None, 'inductor' or a subgraph "
                         "backend: %s)" % (name, backend, ', '.join(backends())))
    # (a captured CUDA graph replays one path: not for loops and branches that read values)
    if static and ctx.device_typeid == 2 and not rng and not aux and hook is None and \
            not any(n.op is not None and n.op.graphs and n.op.reads_values for n in g.nodes):
        prog.replay = _cuda_graph(code.fn, shapes, dtypes, ctx)
    return prog


def _cuda_graph(fn, shapes, dtypes, ctx):
    """A function replaying ``fn`` captured as a CUDA graph: the inputs are copied into the
    captured buffers and the outputs copied out (static_alloc + static_shape on GPU)."""
    from ..base import dtype_torch
    dev = ctx.torch_device
    holder = {}

    def replay(*ts, generator=None, device=None):
        g = holder.get('graph')
        if g is None:
            static_in = [torch.empty(s, dtype=dtype_torch(d), device=dev)
                         for s, d in zip(shapes, dtypes)]
            for dst, src in zip(static_in, ts):
                dst.copy_(src)
            stream = torch.cuda.Stream(dev)
            stream.wait_stream(torch.cuda.current_stream(dev))
            with torch.cuda.stream(stream):
                for _ in range(2):         # warm-up outside the capture (allocator, kernels)
                    fn(*static_in, device=dev)
            torch.cuda.current_stream(dev).wait_stream(stream)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                static_out = fn(*static_in, device=dev)
            holder.update(graph=g, inputs=static_in, outputs=static_out)
        for dst, src in zip(holder['inputs'], ts):
            dst.copy_(src, non_blocking=True)
        g.replay()
        return tuple(o.clone() for o in holder['outputs'])
    return replay


class CachedOp:
    """MXNet's ``CachedOp(sym, flags)``: call it with NDArrays for ``sym.list_inputs()`` (in
    that order); compiled once per input signature (shapes, dtypes, device) and train/predict
    mode, then one engine operation per call. Returns an NDArray, or a list for several
    outputs."""

    def __init__(self, sym, flags=()):
        self.symbol = sym
        self.flags = dict(flags)
        self._graph = passes.inline_subgraphs(Graph.of(sym))
        self._inputs = [n.name for n in self._graph.variables()]
        self._programs = {}
        self._static = (str(self.flags.get('static_alloc', False)).lower() in ('true', '1') and
                        str(self.flags.get('static_shape', False)).lower() in ('true', '1'))

    def __call__(self, *args, out=None, default_ctx=None):
        if len(args) != len(self._inputs):
            raise MXNetError("CachedOp: expected %d inputs (%s), got %d"
                             % (len(self._inputs), ', '.join(self._inputs), len(args)))
        for nm, a in zip(self._inputs, args):
            if not isinstance(a, NDArray):
                raise MXNetError("CachedOp: input %s must be an NDArray, got %s"
                                 % (nm, type(a).__name__))
        ctx = args[0]._ctx if args else (default_ctx or current_context())
        key = (mode.training, ctx, amp_table.table) + tuple((a._shape, a._dtype) for a in args)
        prog = self._programs.get(key)
        if prog is None:
            prog = self._programs[key] = compile_program(
                self._graph, self._inputs, [a._shape for a in args], [a._dtype for a in args],
                ctx, mode.training, name=self.symbol.name or 'cached_op', static=self._static)
        outs = prog.run(list(args), ctx)
        if out is not None:
            targets = out if isinstance(out, (list, tuple)) else [out]
            for t, o in zip(targets, outs):
                o.copyto(t)
            return out
        return outs[0] if len(outs) == 1 else outs
