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
import torch

from .. import engine as _engine
from ..base import MXNetError, dtype_name, mode
from ..ndarray.ndarray import NDArray, Storage, _make, rng_var, user_line
from ..ops.layout import dense
from .cached_op import compile_program
from .graph import Graph

__all__ = ['Executor', 'simple_bind']


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
        self._graph = Graph.of(symbol)
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
        self.outputs = []
        self._programs = {}
        self._saved = None

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
        key = (is_train,) + tuple((a._shape, a._dtype) for a in inputs)
        prog = self._programs.get(key)
        if prog is None:
            prog = self._programs[key] = compile_program(
                self._graph, self._input_names, [a._shape for a in inputs],
                [a._dtype for a in inputs], self._ctx, is_train,
                name=self._symbol.name or 'executor')
        return prog

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
        prog = self._program(inputs, bool(is_train))
        where = user_line()
        if is_train and any(r != 'null' for r in self._grad_req):
            self.outputs = self._forward_recorded(prog, inputs, where)
        else:
            prev = mode.training
            mode.training = bool(is_train)
            try:
                self.outputs = prog.run(inputs, self._ctx, where)
            finally:
                mode.training = prev
            self._saved = None
        return self.outputs

    def _forward_recorded(self, prog, inputs, where):
        outs = [_make(Storage(), s, d, self._ctx) for s, d in prog.out_specs]
        wants = set(self._arg_names[i] for i, r in enumerate(self._grad_req) if r != 'null')
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
        fn, dev, saved = prog.code.fn, self._ctx.torch_device, {}
        self._saved = saved

        def run():
            ts = [x._tensor().detach().requires_grad_(d) if d else x._tensor()
                  for x, d in zip(inputs, diff)]
            torch.set_grad_enabled(True)
            try:
                rs = fn(*ts, generator=gen, device=dev)
            finally:
                torch.set_grad_enabled(False)
            for o, r in zip(outs, rs):
                o._var.tensor = r.detach()
            saved['inputs'] = [t for t, d in zip(ts, diff) if d]
            saved['names'] = [nm for nm, d in zip(self._input_names, diff) if d]
            saved['outputs'] = rs
        _engine._engine.push(run, reads, writes, self._ctx, prog.name, where)
        return outs

    def backward(self, out_grads=None, is_train=True):
        """Back-propagates ``out_grads`` (ones for a None) into ``grad_arrays``."""
        saved = self._saved
        if saved is None:
            raise MXNetError("backward: call forward(is_train=True) first (with some argument "
                             "whose grad_req is not 'null')")
        if out_grads is None:
            out_grads = [None] * len(self.outputs)
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        if len(out_grads) != len(self.outputs):
            raise MXNetError("backward: %d outputs but %d out_grads"
                             % (len(self.outputs), len(out_grads)))
        targets = {nm: (g, r) for nm, g, r in zip(self._arg_names, self.grad_arrays,
                                                   self._grad_req) if r != 'null'}
        reads = [o._var for o in self.outputs] + [g._var for g in out_grads if g is not None]
        writes = [g._var for g, _ in targets.values()]

        def run():
            rs = saved['outputs']
            heads, hgrads = [], []
            for r, g in zip(rs, out_grads):
                if r.requires_grad:
                    heads.append(r)
                    hgrads.append(torch.ones_like(r) if g is None else g._tensor().to(r.dtype))
            grads = torch.autograd.grad(heads, saved['inputs'], hgrads, allow_unused=True,
                                        retain_graph=True) if heads else \
                [None] * len(saved['inputs'])
            for nm, t, g in zip(saved['names'], saved['inputs'], grads):
                arr, req = targets[nm]
                g = torch.zeros_like(t) if g is None else g
                if req == 'add':
                    arr._var.tensor = arr._tensor() + g
                else:
                    arr._var.tensor = dense(g)
        _engine._engine.push(run, reads, writes, self._ctx, '_backward', user_line())

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
        """A new executor for new input shapes, sharing the arrays whose shape is unchanged."""
        shapes = {nm: a.shape for nm, a in zip(self._arg_names, self.arg_arrays)}
        shapes.update(kwargs)
        arg_s, _, aux_s = self._symbol.infer_shape(**{k: v for k, v in kwargs.items()})
        from ..ndarray import zeros
        args = [a if a.shape == s else zeros(s, self._ctx, a.dtype)
                for a, s in zip(self.arg_arrays, arg_s)]
        grads = [None if g is None else (g if g.shape == s else zeros(s, self._ctx, g.dtype))
                 for g, s in zip(self.grad_arrays, arg_s)]
        aux = [a if a.shape == s else zeros(s, self._ctx, a.dtype)
               for a, s in zip(self.aux_arrays, aux_s)]
        return Executor(self._symbol, self._ctx, args, grads, self._grad_req, aux)


def simple_bind(symbol, ctx, grad_req, type_dict, shapes):
    """An executor with zero-filled arrays of the shapes inferred from ``shapes``."""
    from ..ndarray import zeros
    arg_s, _, aux_s = symbol.infer_shape(**shapes)
    if arg_s is None:
        raise MXNetError("simple_bind: the shapes %s do not determine every argument's shape "
                         "(see the warning above)" % (shapes,))
    arg_t, _, aux_t = symbol.infer_type_partial(**(type_dict or {}))
    arg_names = symbol.list_arguments()
    arg_t = [dtype_name(t) if t is not None else 'float32' for t in arg_t]
    aux_t = [dtype_name(t) if t is not None else 'float32' for t in aux_t]
    args = [zeros(s, ctx, t) for s, t in zip(arg_s, arg_t)]
    if isinstance(grad_req, str):
        reqs = {nm: grad_req for nm in arg_names}
    elif isinstance(grad_req, (list, tuple)):
        reqs = dict(zip(arg_names, grad_req))
    else:
        reqs = {nm: grad_req.get(nm, 'null') for nm in arg_names}
    grads = [zeros(s, ctx, t) if reqs[nm] != 'null' else None
             for nm, s, t in zip(arg_names, arg_s, arg_t)]
    aux = [zeros(s, ctx, t) for s, t in zip(aux_s, aux_t)]
    return Executor(symbol, ctx, args, grads, [reqs[nm] for nm in arg_names], aux)
