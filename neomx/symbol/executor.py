"""Executor: a Symbol bound to arrays (``bind``/``simple_bind``), MXNet 1.x's module-era API.

The forward pass is the symbol's compiled program (cached_op.py). A training forward keeps
torch's graph of that one operation and ``backward`` differentiates it into the gradient
arrays, honouring each argument's ``grad_req`` ('write', 'add', 'null').

>>> import neomx as mx
>>> x = mx.sym.var('x')
>>> ex = (x * x).simple_bind(mx.cpu(), x=(3,))
>>> ex.arg_dict['x'][:] = mx.nd.array([1.0, 2.0, 3.0])
>>> ex.forward(is_train=True)[0].asnumpy().tolist()
[1.0, 4.0, 9.0]
>>> ex.backward(mx.nd.ones((3,)))
>>> ex.grad_dict['x'].asnumpy().tolist()
[2.0, 4.0, 6.0]
"""
import numpy as np
import torch

from .. import engine as _engine
from ..base import MXNetError, dtype_name, env_int, mode
from ..ops import amp as amp_table
from ..ndarray.ndarray import NDArray, Storage, _make, from_tensor, rng_var
from ..ndarray.run import Kept, closure, store_gradient
from . import passes
from .cached_op import compile_program
from .graph import Graph, evaluate
from .monitor_names import monitor_names

__all__ = ['Executor', 'simple_bind']

# What a training forward pass leaves for backward when no argument needs a gradient.
_NOTHING = {}


def _as_list(what, values, names, required):
    """Arrays in ``names`` order from a list or a dict; None where absent and not required."""
    if values is None:
        values = {}
    if isinstance(values, (list, tuple)):
        if len(values) != len(names):
            raise ValueError("Length of %s do not match number of arguments: %d given, %d "
                             "expected (%s)" % (what, len(values), len(names), ', '.join(names)))
        out = list(values)
    elif isinstance(values, dict):
        out = []
        for nm in names:
            if nm not in values and required:
                raise ValueError("key `%s` is missing in `%s`" % (nm, what))
            out.append(values.get(nm))
    else:
        raise TypeError("Only accept list of NDArrays or dict of str to NDArray for %s" % what)
    for nm, v in zip(names, out):
        if v is not None and not isinstance(v, NDArray):
            raise TypeError("%s: %s must be an NDArray, got %s" % (what, nm, type(v).__name__))
    return out


class Executor:
    """See the module docstring. ``arg_dict``, ``grad_dict``, ``aux_dict`` and ``outputs``
    are as in MXNet."""

    def __init__(self, symbol, ctx, args, args_grad=None, grad_req='write', aux_states=None):
        self._symbol = symbol
        self._ctx = ctx
        self._graph = passes.inline_subgraphs(Graph.of(symbol))
        self._arg_names = [n.name for n in self._graph.arguments()]
        self._aux_names = [n.name for n in self._graph.auxiliary()]
        self._input_names = [n.name for n in self._graph.variables()]
        self.arg_arrays = _as_list('args', args, self._arg_names, True)
        self.aux_arrays = _as_list('aux_states', aux_states, self._aux_names, True)
        self.grad_arrays = _as_list('args_grad', args_grad, self._arg_names, False)
        if isinstance(grad_req, str):
            reqs = [grad_req] * len(self._arg_names)
        elif isinstance(grad_req, (list, tuple)):
            reqs = list(grad_req)
        else:
            reqs = [grad_req.get(nm, 'null') for nm in self._arg_names]
        self._grad_req = [r if g is not None else 'null' for r, g in zip(reqs, self.grad_arrays)]
        for r in self._grad_req:
            if r not in ('write', 'add', 'null'):
                raise MXNetError("grad_req must be 'write', 'add' or 'null', got %r" % (r,))
        # Arguments a gradient reaches (through no BlockGrad); a forward pass records only
        # when there are some, as MXNet plans no backward pass otherwise.
        self._reached = _gradient_reach(self._graph, {
            nm for nm, r in zip(self._arg_names, self._grad_req) if r != 'null'})
        self._cse = (env_int('MXNET_ELIMINATE_COMMON_EXPR', default=1) or 0) != 0
        self._programs = {}
        self._saved = None
        self._monitor = None
        # operators whose results may be sparse whatever their inputs' storage types
        self._sparse_ops = any(n.op is not None and n.op.name in ('cast_storage', 'dot')
                               for n in self._graph.nodes)
        self.outputs = self._bound_outputs()

    def _bound_outputs(self):
        """The outputs as MXNet allocates them at bind time: arrays of the inferred shapes and
        dtypes (zeros until the first forward); none when the bound arrays do not determine
        them."""
        inputs = self._inputs()
        if any(a is None for a in inputs):
            return []
        try:
            res = passes.infer(self._graph, {n: a.shape for n, a in zip(self._input_names, inputs)},
                               {n: a._dtype for n, a in zip(self._input_names, inputs)})
        except MXNetError:
            return []
        from ..ndarray import zeros
        outs = []
        for node, k in self._graph.heads:
            shape = res.shapes[node][k]
            if not passes.known(shape):
                return []
            outs.append(zeros(shape, self._ctx, res.dtypes[node][k] or 'float32'))
        return outs

    # -- dictionaries --
    @property
    def arg_dict(self):
        return dict(zip(self._arg_names, self.arg_arrays))

    @property
    def grad_dict(self):
        return {nm: g for nm, g in zip(self._arg_names, self.grad_arrays) if g is not None}

    @property
    def aux_dict(self):
        return dict(zip(self._aux_names, self.aux_arrays))

    @property
    def output_dict(self):
        return dict(zip(self._symbol.list_outputs(), self.outputs))

    def _inputs(self):
        by_name = dict(zip(self._arg_names, self.arg_arrays))
        by_name.update(zip(self._aux_names, self.aux_arrays))
        return [by_name[nm] for nm in self._input_names]

    def _program(self, inputs, is_train):
        # compiled with the casts of the mixed-precision table in force (amp.init)
        key = (is_train, amp_table.table) + tuple((a._shape, a._dtype) for a in inputs)
        prog = self._programs.get(key)
        if prog is None:
            prog = self._programs[key] = compile_program(
                self._graph, self._input_names, [a._shape for a in inputs],
                [a._dtype for a in inputs], self._ctx, is_train,
                name=self._symbol.name or 'executor', cse=self._cse)
        return prog

    def get_optimized_symbol(self):
        """The graph this executor runs, after its passes (dead code and common
        subexpressions eliminated, constants folded), as a Symbol."""
        g = passes.optimize(self._graph, self._ctx.torch_device, False, self._cse)
        g = passes.copy_repeated_heads(g)
        from .symbol import Symbol      # symbol.py binds executors: imported when used
        return Symbol(g.heads)

    # -- running --
    def forward(self, is_train=False, **kwargs):
        """Runs the graph (after copying the arrays in ``kwargs`` into the arguments); returns
        ``outputs``."""
        for nm, v in kwargs.items():
            if nm not in self._arg_names:
                raise MXNetError("forward: unknown argument %s (arguments: %s)"
                                 % (nm, ', '.join(self._arg_names)))
            dst = self.arg_arrays[self._arg_names.index(nm)]
            if isinstance(v, NDArray):
                v.copyto(dst)
            else:
                dst[:] = v
        inputs = self._inputs()
        if self._monitor is not None:
            self.outputs = self._forward_monitored(inputs, bool(is_train))
            return self.outputs
        if not self._reached and any(x._sparse for x in inputs):
            self._saved = _NOTHING
            self.outputs = self._into_outputs(self._forward_sparse(inputs, is_train))
            return self.outputs
        prog = self._program(inputs, bool(is_train))
        if self._reached:
            # As in MXNet, backward may follow a forward pass with is_train=False too (which
            # only puts Dropout, BatchNorm and the like in their inference behaviour).
            outs = self._forward_recorded(prog, inputs)
        elif any(x._ctx != self._ctx for x in inputs):
            outs = self._forward_recorded(prog, inputs, record=False)
            self._saved = _NOTHING
        else:
            prev = mode.training
            mode.training = bool(is_train)
            try:
                outs = prog.run(inputs, self._ctx)
            finally:
                mode.training = prev
            # nothing to differentiate: backward has nothing to do
            self._saved = _NOTHING
        self.outputs = self._into_outputs(self._with_stypes(outs, inputs))
        return self.outputs

    def _forward_sparse(self, inputs, is_train):
        """A forward pass without gradients on sparse arrays: node by node, each operator
        on the storage MXNet runs it on (``ops.sparse.kernel_for``), so that the outputs are
        what the operators give imperatively (a scatter operator's result stores the rows of
        its input, not its non-zeros)."""
        from ..ndarray.sparse import _new
        from ..ops.sparse import kernel_for
        inferred = passes.infer(self._graph, {n: a.shape for n, a in zip(self._input_names,
                                                                          inputs)},
                                {n: a._dtype for n, a in zip(self._input_names, inputs)})
        stypes = passes.infer_stypes(self._graph, {n: x.stype for n, x in
                                                   zip(self._input_names, inputs)})
        outs = [_new(inferred.shapes[node][k], inferred.dtypes[node][k] or 'float32',
                     self._ctx, stypes[node][k]) for node, k in self._graph.heads]
        graph, names, dev = self._graph, self._input_names, self._ctx.torch_device
        gen = None
        reads = [x._var for x in inputs]
        if any(n.op is not None and n.op.rng for n in graph.nodes):
            rv = rng_var(self._ctx)
            gen = rv.generator
            reads.append(rv)

        def run(*ts, generator=None):
            feed = {nm: t.detach().to(dev) for nm, t in zip(names, ts)}
            return evaluate(graph, feed, dev, is_train, generator, kernel=kernel_for)
        _engine.push(closure(run, inputs, outs, {'generator': gen}, stypes=True), reads,
                     [o._var for o in outs] + reads[len(inputs):], self._ctx,
                     self._symbol.name or 'executor')
        return outs

    def _with_stypes(self, outs, inputs):
        """The outputs as arrays of the storage types MXNet's rules give them for the bound
        arrays' storage types (``passes.infer_stypes``; the graph itself computes densely)."""
        stypes = {nm: x.stype for nm, x in zip(self._input_names, inputs)}
        if all(st == 'default' for st in stypes.values()) and not self._sparse_ops:
            return outs
        from ..ndarray.sparse import with_stype
        inferred = passes.infer_stypes(self._graph, stypes)
        for o, (node, k) in zip(outs, self._graph.heads):
            st = inferred[node][k]
            if st != o.stype:
                with_stype(o, st, 'forward')
        return outs

    def _into_outputs(self, outs):
        """The arrays of ``outputs`` holding the results ``outs``: as in MXNet an executor's
        outputs are the same memory from one forward pass to the next (and a reshaped
        executor's may be part of another's), so the results go into them, by handing over
        the storage where an output is a whole array and by a copy where it is a view."""
        old = self.outputs
        if len(old) != len(outs) or any(o._shape != n._shape or o._dtype != n._dtype
                                        or o._ctx != n._ctx or o.stype != n.stype
                                        for o, n in zip(old, outs)):
            return outs

        def move():
            for o, n in zip(old, outs):
                t = n._var.tensor
                if o._view is None:
                    o._var.tensor = t
                else:
                    with torch.no_grad():
                        o._tensor(write=True).copy_(t)
        _engine.push(move, [n._var for n in outs], [o._var for o in old], self._ctx,
                     '_output', work=sum(o.size for o in old))
        return old

    def _forward_recorded(self, prog, inputs, record=True, fn=None):
        """Pushes the forward pass as one operation; with ``record`` it keeps torch's graph
        for ``backward`` (a ``run.Kept``). Arrays on other devices (``group2ctx``) are moved to
        this one inside the operation. ``fn`` replaces the compiled program (monitoring)."""
        outs = [_make(Storage(), s, d, self._ctx) for s, d in prog.out_specs]
        wants = self._reached if record else set()
        diff = [nm in wants for nm in self._input_names]
        in_vars = [x._var for x in inputs]
        reads, writes = list(in_vars), [o._var for o in outs]
        writes += [in_vars[i] for i in prog.aux]
        gen = None
        if prog.rng:
            rv = rng_var(self._ctx)
            reads.append(rv)
            writes.append(rv)
            gen = rv.generator
        if fn is None and record and prog.integer_nodes:
            # integer values in the graph: node by node, so that their gradients are MXNet's
            # (cut at mod and floor division, whole elsewhere; cached_op.integer_hook)
            fn = prog.interpret_shadowed
        dev = self._ctx.torch_device
        kept = Kept(diff, [x._ctx != self._ctx for x in inputs], dev, record)
        # (the program's size, for the engine's thread policy: a small graph's kernels run
        # on one intra-op thread, and its backward pass, about twice the work, too)
        self._saved = {'kept': kept, 'work': prog.work,
                       'names': [nm for nm, d in zip(self._input_names, diff) if d]}
        op = closure(fn or prog.code.fn, inputs, outs, {'generator': gen, 'device': dev},
                     kept=kept)
        _engine.push(op, reads, writes, self._ctx, prog.name, work=prog.work)
        return outs

    # -- monitoring (Monitor.install): every node's outputs, and in backward the gradient
    # each node passes to each of its inputs, reported through the callback by name --
    def set_monitor_callback(self, callback, monitor_all=False):
        """Calls ``callback(name, array)`` for the output of every operator in ``forward``
        (``<node>_output``), for the gradients each operator hands its inputs in ``backward``
        (``<node>_backward_output[<i>]``) and, with ``monitor_all``, for each operator's
        inputs (``<node>_<input>``). Monitored passes run node by node and synchronously."""
        self._monitor = (callback, bool(monitor_all))

    def _forward_monitored(self, inputs, is_train):
        # the program's graph, as prepared for these inputs (mixed precision's casts included)
        prog = self._program(inputs, is_train)
        graph, names = prog.graph, prog.input_names
        trace = []              # (node, input tensors, output tensors) in execution order

        def monitor(node, run, args):
            # each consumer's own view of a value, whose .grad is its share of the gradient
            args = [_retained(t) for t in args]
            out = run(args)
            trace.append((node, [t for t in args if t is not None], out))
            return out

        def interpret(*ts, generator=None, device=None):
            return evaluate(graph, dict(zip(names, ts)), device, is_train, generator, monitor)

        record = is_train and any(r != 'null' for r in self._grad_req)
        outs = self._forward_recorded(prog, inputs, record=record, fn=interpret)
        if not record:
            self._saved = _NOTHING if is_train else None
        else:
            self._saved['trace'] = trace
        for o in outs:
            o.wait_to_read()
        callback, monitor_all = self._monitor
        for node, fed, out in trace:
            if monitor_all:
                # as MXNet: each input by the operator's name for it, a variable's value
                # under the variable's name first
                for (src, _), nm, t in zip(node.inputs, monitor_names(node)[0], fed):
                    value = from_tensor(t.detach().clone(), self._ctx)
                    if src.op is None:
                        callback(src.name, value)
                    callback(nm, value)
            for nm, t in zip(node.output_names(), out):
                callback(nm, from_tensor(t.detach().clone(), self._ctx))
        return outs

    def _report_backward(self, trace):
        callback = self._monitor[0]
        for node, fed, _ in reversed(trace):
            for i, t in enumerate(fed):
                g = t.grad if t.requires_grad and t.grad is not None else torch.zeros_like(t)
                nm = '%s_backward_output%s' % (node.name, i if len(fed) > 1 else '')
                callback(nm, from_tensor(g.detach().clone(), self._ctx))

    def backward(self, out_grads=None, is_train=True):
        """Back-propagates ``out_grads`` (ones for a None) into ``grad_arrays``."""
        if all(r == 'null' for r in self._grad_req):
            return                      # nothing to differentiate, as in MXNet
        saved = self._saved
        outputs = self.outputs
        if saved is None:
            # MXNet differentiates the bound arrays as they are when backward comes first (an
            # operator whose gradient needs no forward output), leaving the outputs alone; a
            # forward of them is what gives torch the graph.
            inputs = self._inputs()
            outputs = self._forward_recorded(self._program(inputs, bool(is_train)), inputs)
            saved = self._saved
        if saved is _NOTHING:   # nothing differentiable: 'write' gradients are zeros
            for g, r in zip(self.grad_arrays, self._grad_req):
                if r == 'write':
                    g[:] = 0
            return
        if out_grads is None:
            out_grads = [None] * len(outputs)
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        if len(out_grads) < len(outputs):
            raise MXNetError("backward: %d outputs but %d out_grads"
                             % (len(outputs), len(out_grads)))
        out_grads = list(out_grads)[:len(outputs)]     # MXNet ignores extra ones
        targets = {nm: (g, r) for nm, g, r in zip(self._arg_names, self.grad_arrays,
                                                   self._grad_req) if r != 'null'}
        reads = [o._var for o in outputs] + [g._var for g in out_grads if g is not None]
        writes = [g._var for g, _ in targets.values()]

        def run():
            kept = saved['kept']
            heads, hgrads = [], []
            for r, g in zip(kept.outputs, out_grads):
                if r.requires_grad:
                    heads.append(r)
                    hgrads.append(torch.ones_like(r) if g is None else
                                  g._tensor().to(r.device, r.dtype))
            if 'trace' in saved:    # monitored: .grad of every node's inputs is kept too
                for t in kept.inputs:
                    t.grad = None
                for _, fed, _ in saved['trace']:
                    for t in fed:
                        t.grad = None
                if heads:
                    torch.autograd.backward(heads, hgrads, retain_graph=True)
                grads = [t.grad for t in kept.inputs]
            else:
                grads = torch.autograd.grad(heads, kept.inputs, hgrads, allow_unused=True,
                                            retain_graph=True) if heads else \
                    [None] * len(kept.inputs)
            for nm, t, g in zip(saved['names'], kept.inputs, grads):
                arr, req = targets[nm]
                g = torch.zeros_like(t) if g is None else g
                if g.layout is not torch.strided and (req == 'add' or not arr._sparse):
                    g = g.to_dense()        # (Embedding's sparse gradient, for a dense array)
                store_gradient(arr, g, req)
        work = saved['work']
        _engine.push(run, reads, writes, self._ctx, '_backward',
                     work=None if work is None else 2 * work)
        if 'trace' in saved:
            for g, _ in targets.values():
                g.wait_to_read()
            for o in self.outputs:
                o.wait_to_read()
            self._report_backward(saved['trace'])

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copies arrays by name into the arguments and auxiliary states."""
        for src, names, arrays in ((arg_params, self._arg_names, self.arg_arrays),
                                   (aux_params or {}, self._aux_names, self.aux_arrays)):
            for nm, v in src.items():
                if nm in names:
                    dst = arrays[names.index(nm)]
                    v.astype(dst.dtype).copyto(dst) if v.dtype != dst.dtype else v.copyto(dst)
                elif not allow_extra_params:
                    raise ValueError('Find name "%s" that is not in the %s'
                                     % (nm, 'arguments' if names is self._arg_names
                                        else 'auxiliary states'))

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new input shapes, sharing the arrays whose shape is unchanged
        (new arrays stay on the device of the ones they replace)."""
        from ..ndarray import zeros
        arg_s, _, aux_s = self._symbol.infer_shape(**kwargs)
        if arg_s is None:
            raise MXNetError("Executor.reshape: the shapes %s do not determine every "
                             "argument's shape" % (kwargs,))

        def share(a, s, name):
            # As in MXNet: the same array for the same shape, a part of its memory for a
            # smaller one, a new array for a larger one only with allow_up_sizing.
            if a is None or a.shape == s:
                return a
            n = int(np.prod(s))
            if n <= a.size:
                return a.reshape((-1,))[:n].reshape(s)
            if not allow_up_sizing:
                raise MXNetError("Executor.reshape: new shape %s of %s is larger than the "
                                 "original %s; first making a big executor and then down "
                                 "sizing it is more efficient than the reverse. If you really "
                                 "want to up size, set allow_up_sizing=True"
                                 % (s, name, a.shape))
            return zeros(s, a.context, a.dtype)
        args = [share(a, s, nm) for a, s, nm in zip(self.arg_arrays, arg_s, self._arg_names)]
        grads = [share(g, s, nm) for g, s, nm in zip(self.grad_arrays, arg_s, self._arg_names)]
        aux = [share(a, s, nm) for a, s, nm in zip(self.aux_arrays, aux_s, self._aux_names)]
        ex = Executor(self._symbol, self._ctx, args, grads, self._grad_req, aux)
        ex._monitor = self._monitor
        out_s = self._symbol.infer_shape(**kwargs)[1]
        if out_s is not None and len(out_s) == len(self.outputs):
            ex.outputs = [share(o, s, 'output') for o, s in zip(self.outputs, out_s)]
        else:
            ex.outputs = _output_arrays(self._symbol, self._ctx, kwargs)
        return ex

    def debug_str(self):
        """The symbol's listing followed by the memory the executor allocates, as MXNet ends it
        (``Total <n> MB allocated``): its outputs and, when a forward pass keeps a graph for
        backward, the outputs of the operators on the way to the arguments differentiated
        (what the backward pass may need; the arguments and gradients are the caller's)."""
        total = sum(a.size * np.dtype(a.dtype).itemsize for a in self.outputs)
        if self._reached:
            shapes = {nm: a.shape for nm, a in zip(self._input_names, self._inputs())}
            types = {nm: a.dtype for nm, a in zip(self._input_names, self._inputs())}
            inferred = passes.infer(self._graph, shapes, types)
            for node in _on_gradient_path(self._graph, self._reached):
                for s, d in zip(inferred.shapes[node], inferred.dtypes[node]):
                    if s is not None:
                        total += int(np.prod(s)) * np.dtype(d or 'float32').itemsize
        return (self._symbol.debug_str() + 'Total %d MB allocated\n' % (total >> 20) +
                'Total 0 TempSpace resource requested\n')


def _retained(t):
    """A view of ``t`` that keeps its ``.grad`` (when ``t`` needs a gradient)."""
    if t is not None and t.requires_grad:
        t = t.view_as(t)
        t.retain_grad()
    return t


def _on_gradient_path(graph, reached):
    """The operator nodes between the heads and the arguments ``reached``."""
    leads = {}
    for node in graph.nodes:
        if node.op is None:
            leads[id(node)] = node.name in reached
        else:
            leads[id(node)] = not node.op.stops_gradient and any(
                leads[id(src)] for src, _ in node.inputs)
    return [n for n in graph.nodes if n.op is not None and leads[id(n)]]


def _gradient_reach(graph, wanted):
    """The names of the arguments in ``wanted`` that a gradient from the heads reaches;
    raises, as MXNet's gradient pass, when it would have to pass an operator without one."""
    if not wanted:
        return set()
    leads = {}          # id(node) -> whether its output depends on a wanted argument
    for node in graph.nodes:
        if node.op is None:
            leads[id(node)] = node.name in wanted
        else:
            leads[id(node)] = not node.op.stops_gradient and any(
                leads[id(src)] for src, _ in node.inputs)
    gets = {id(n) for n, _ in graph.heads}
    reached = set()
    for node in reversed(graph.nodes):
        if id(node) not in gets or not leads[id(node)]:
            continue
        if node.op is None:
            reached.add(node.name)
            continue
        if not node.op.differentiable:
            raise MXNetError("Operator %s is non-differentiable because it didn't register "
                             "FGradient attribute." % node.op.name)
        for src, _ in node.inputs:
            gets.add(id(src))
    return reached


def _output_arrays(symbol, ctx, shapes, type_dict=None):
    """Zero arrays of the outputs' shapes and dtypes (what ``outputs`` holds before the first
    ``forward``, as MXNet allocates them at bind time); [] when they cannot be inferred."""
    from ..ndarray import zeros
    try:
        _, out_s, _ = symbol.infer_shape(**shapes)
        _, out_t, _ = symbol.infer_type_partial(**(type_dict or {}))
    except MXNetError:
        return []
    if out_s is None:
        return []
    return [zeros(sh, ctx, dtype_name(t) if t is not None else 'float32')
            for sh, t in zip(out_s, out_t)]


def _group_of(node):
    return node.extra.get('__ctx_group__', node.extra.get('ctx_group'))


_STYPE_OF_FLAG = {'0': 'default', '1': 'row_sparse', '2': 'csr'}


def _zeros_of(shape, ctx, dtype, stype):
    from ..ndarray import zeros
    if stype in (None, 'default'):
        return zeros(shape, ctx, dtype)
    from ..ndarray.sparse import zeros as sparse_zeros
    return sparse_zeros(stype, shape, ctx, dtype)


def simple_bind(symbol, ctx, grad_req, type_dict, shapes, group2ctx=None,
                shared_arg_names=None, shared_exec=None, shared_buffer=None, stype_dict=None):
    """An executor with zero-filled arrays of the shapes inferred from ``shapes``.

    ``group2ctx`` places the arrays of variables made under ``AttrScope(ctx_group=g)`` on
    ``group2ctx[g]`` (the computation runs on ``ctx``). ``shared_exec``: the arguments named in
    ``shared_arg_names`` (and their gradients) and the auxiliary states are that executor's
    arrays when the shapes agree. ``shared_buffer``: a dict of the other arguments by name,
    used when the shape agrees and updated with the arrays made here (Module's executor groups
    share their data arrays so). Arguments get the storage type of ``stype_dict`` or of their
    variable's ``stype`` (kept dense; see ``nd.sparse``).
    """
    from ..ndarray import zeros
    # as MXNet: only tuples are shapes; other keyword arguments are passed over
    shapes = {k: v for k, v in shapes.items() if isinstance(v, tuple)}
    arg_s, _, aux_s = symbol.infer_shape(**shapes)
    if arg_s is None:
        raise MXNetError("simple_bind: the shapes %s do not determine every argument's shape "
                         "(see the warning above)" % (shapes,))
    arg_t, _, aux_t = symbol.infer_type_partial(**(type_dict or {}))
    graph = Graph.of(symbol)
    group2ctx = group2ctx or {}
    arg_ctx = [group2ctx.get(_group_of(n), ctx) for n in graph.arguments()]
    aux_ctx = [group2ctx.get(_group_of(n), ctx) for n in graph.auxiliary()]
    arg_names = [n.name for n in graph.arguments()]
    stypes = {n.name: _STYPE_OF_FLAG.get(n.extra.get('__storage_type__'), 'default')
              for n in graph.arguments()}
    stypes.update(stype_dict or {})
    arg_t = [dtype_name(t) if t is not None else 'float32' for t in arg_t]
    aux_t = [dtype_name(t) if t is not None else 'float32' for t in aux_t]
    if isinstance(grad_req, str):
        reqs = {nm: grad_req for nm in arg_names}
    elif isinstance(grad_req, (list, tuple)):
        reqs = dict(zip(arg_names, grad_req))
    else:
        reqs = {nm: grad_req.get(nm, 'null') for nm in arg_names}
    grad_stypes = passes.gradient_stypes(graph, stypes)
    shared_names = set(shared_arg_names or ())
    shared_args = shared_exec.arg_dict if shared_exec is not None else {}
    shared_grads = shared_exec.grad_dict if shared_exec is not None else {}

    def reuse(pool, nm, s, t, c):
        a = pool.get(nm)
        return a if a is not None and a.shape == s and dtype_name(a.dtype) == t and \
            a.context == c else None

    args, grads = [], []
    for nm, s, t, c in zip(arg_names, arg_s, arg_t, arg_ctx):
        if nm in shared_names:
            a = reuse(shared_args, nm, s, t, c)
            g = reuse(shared_grads, nm, s, t, c) if reqs[nm] != 'null' else None
        else:
            a = reuse(shared_buffer, nm, s, t, c) if shared_buffer is not None else None
            g = None
        a = _zeros_of(s, c, t, stypes[nm]) if a is None else a
        if shared_buffer is not None and nm not in shared_names:
            shared_buffer[nm] = a
        if reqs[nm] != 'null' and g is None:
            g = zeros(s, c, t, stype=grad_stypes.get(nm))
        args.append(a)
        grads.append(g if reqs[nm] != 'null' else None)
    # auxiliary states (BatchNorm's moving statistics) are the shared executor's, as MXNet
    # shares them: what one bucket's training updates, another bucket predicts with
    shared_aux = shared_exec.aux_dict if shared_exec is not None else {}
    aux = [reuse(shared_aux, n.name, s, t, c) for n, s, t, c in
           zip(graph.auxiliary(), aux_s, aux_t, aux_ctx)]
    aux = [zeros(s, c, t) if a is None else a for a, s, t, c in zip(aux, aux_s, aux_t, aux_ctx)]
    ex = Executor(symbol, ctx, args, grads, [reqs[nm] for nm in arg_names], aux)
    ex.outputs = _output_arrays(symbol, ctx, shapes, type_dict)
    return ex
