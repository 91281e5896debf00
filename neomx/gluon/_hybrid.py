"""The hybridized call path of a HybridBlock.

``call_cached_op(block, x, *args)`` is what a hybridized block's call runs. The first call
in a train/predict mode traces ``hybrid_forward(F, x, **params)`` with ``F = neomx.symbol``
(so Python code around the operators runs once, and value-needing calls such as
``x.asnumpy()`` fail with MXNet's message); the graph is compiled per input signature
(shapes, dtypes, device) into generated Python (``hybridized_code(block)`` shows it) and each
later call is a dictionary lookup and one engine operation reading the inputs and parameters
and writing the outputs and auxiliary states. Graphs are kept per train/predict mode, so a
block that branches on ``autograd.is_training()`` takes the right branch in both modes
(MXNet froze whichever came first, apache/mxnet#16932).

Also here, for the block's methods: ``symbolic_call`` (a block called on Symbols),
``export`` (``-symbol.json`` and ``.params``), ``flatten``/``regroup`` of nested inputs.
"""
import inspect
import warnings

from ..base import MXNetError, mode
from ..ndarray.ndarray import NDArray, from_tensor
from ..ndarray.run import merge_leaves
from .. import symbol as _symbol
from ..symbol import Symbol
from ..symbol.cached_op import compile_program
from ..symbol.graph import CACHED_OP, Graph, Subgraph
from ..symbol.subgraph import has_backend
from ..ops import amp as _amp
from ..ops.contrib import DYNAMIC_SHAPE
from ..symbol.monitor_names import monitor_names
from ..util import is_np_shape, np_shape
from .parameter import _EPOCH, DeferredInitializationError, data_per_call

__all__ = ['call_cached_op', 'cache_of', 'symbolic_call', 'trace', 'export', 'hybridized_code',
           'clear', 'flatten', 'regroup', 'infer_param_shapes']


# -- nested inputs and outputs (MXNet's _flatten/_regroup) ------------------------------------

def flatten(args, inout_str):
    """(flat list, format) of a nested list of arrays/Symbols/None; the format rebuilds it."""
    if isinstance(args, NDArray):
        return [args], 0
    if isinstance(args, Symbol):
        n = len(args.list_outputs())
        return [args], n if n > 1 else 0
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise ValueError("When hybridized, the input of HybridBlock {} must be (nested) list of "
                         "Symbol or NDArray, but got {} of type {}"
                         .format(inout_str, str(args), str(type(args))))
    flat, fmts = [], []
    for a in args:
        f, fmt = flatten(a, inout_str)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def regroup(args, fmt):
    """The nested structure ``fmt`` (from ``flatten``) rebuilt from the flat ``args``."""
    def merge(args, fmt):
        if isinstance(fmt, int):
            if fmt == 0:
                return args[0], args[1:]
            if fmt == -1:
                return None, args[1:]
            return args[:fmt], args[fmt:]
        ret = []
        for f in fmt:
            r, args = merge(args, f)
            ret.append(r)
        return ret, args
    return merge(args, fmt)[0]


# -- tracing ----------------------------------------------------------------------------------

def _input_vars(flat, names=None):
    """The variables of a traced block's inputs: ``data`` (``data0``, ``data1``, ...), or a
    SymbolBlock's own input names, which its exported graph keeps (as MXNet's)."""
    real = sum(a is not None for a in flat)
    if real == 0:
        raise ValueError('All args are None and we do not support such a case.')
    if names is None or len(names) != real:
        names = ['data'] if real == 1 else ['data%d' % i for i in range(real)]
    out, i = [], 0
    for a in flat:
        if a is None:
            out.append(None)
        else:
            out.append(_symbol.var(names[i]))
            i += 1
    return out


def symbolic_call(block, *args):
    """``block`` called on Symbols: ``hybrid_forward(F=neomx.symbol, ...)`` with the
    parameters as variables, inside the block's name scope; NumPy-style symbols for a block
    on mx.np arrays."""
    params = {name: p.var() for name, p in block._reg_params.items()}
    if any(_is_np_symbol(a) for a in args):
        params = {k: v.as_np_ndarray() for k, v in params.items()}
    with block.name_scope():
        return block.hybrid_forward(_symbol, *args, **params)


def _is_np_symbol(s):
    from ..symbol.numpy import _Symbol
    return isinstance(s, _Symbol)


def trace(block, *args):
    """(input variables, output Symbol group, output format) of ``block`` on ``args``."""
    flat, fmt = flatten(list(args), 'input')
    inputs = _input_vars(flat, block.__dict__.get('_input_names'))
    inputs = [s.as_np_ndarray() if s is not None and a.__class__ is not NDArray and
              isinstance(a, NDArray) else s for s, a in zip(inputs, flat)]
    out = symbolic_call(block, *regroup(inputs, fmt))
    out_flat, out_fmt = flatten(out, 'output')
    for o in out_flat:
        if not isinstance(o, Symbol):
            raise MXNetError("%s.hybrid_forward returned %s; when hybridized it must return "
                             "Symbols built from F (or lists of them)"
                             % (type(block).__name__, type(o).__name__))
    return [i for i in inputs if i is not None], _symbol.Group(out_flat), out_fmt


def uses_deferred_compute(block, flat):
    """Whether ``block`` is hybridized by deferred compute: a Gluon 2 block (``forward``
    without ``hybrid_forward``), or one called on ``mx.np.ndarray``."""
    if is_gluon2(type(block)):
        return True
    if getattr(block, '_graph_given', False):     # SymbolBlock: the graph exists already
        return False
    return any(a is not None and a.__class__ is not NDArray and isinstance(a, NDArray)
               for a in flat)


_GLUON2 = {}


def is_gluon2(cls):
    """Whether HybridBlock subclass ``cls`` defines ``forward`` and not ``hybrid_forward``
    (looking through the wrappers of ``use_np``)."""
    r = _GLUON2.get(cls)
    if r is None:
        from .block import HybridBlock
        fwd = inspect.unwrap(cls.forward)
        hfw = inspect.unwrap(cls.hybrid_forward)
        r = _GLUON2[cls] = (fwd is not inspect.unwrap(HybridBlock.forward) and
                            hfw is inspect.unwrap(HybridBlock.hybrid_forward))
    return r


def deferred_trace(block, *args):
    """(input variables, output Symbol group, output format) of ``block`` run once on
    ``args`` with its operators recorded (symbol/deferred.py)."""
    from ..symbol.deferred import Trace
    flat, _ = flatten(list(args), 'input')
    real = [a for a in flat if a is not None]
    if not real:
        raise ValueError('All args are None and we do not support such a case.')
    names = ['data'] if len(real) == 1 else ['data%d' % i for i in range(len(real))]
    trace = Trace(_param_resolver(block))
    for a, n in zip(real, names):
        trace.add_input(a, n)
    prev = mode.tracing
    mode.tracing = trace
    try:
        # Node names under the block's prefix (not its whole name scope: a deferred
        # initialisation during the run traces the block again, inside its own scope).
        with _symbol.name.Prefix(block.prefix):
            out = block.forward(*args)
    finally:
        mode.tracing = prev
        # The run's own results are not returned: an operator that failed in it fails again
        # in the compiled program, where the caller sees it; here it is dropped.
        for a in trace.keep:
            try:
                a.wait_to_read()
            except Exception:   # pylint: disable=broad-except
                pass
    if trace.values_read:
        raise ValueDependent(out)
    out_flat, out_fmt = flatten(out, 'output')
    group = trace.symbol(out_flat)
    trace.out_classes = [o.__class__ for o in out_flat]
    return [_symbol.var(n) for n in names], group, out_fmt, trace.out_classes


class ValueDependent(Exception):
    """A deferred-compute run read array values: its graph would hold for these values only.
    Carries the run's outputs."""

    def __init__(self, out):
        super().__init__('the block reads array values while it runs')
        self.out = out


class ShapeDependent(MXNetError):
    """A block's graph depends on something the symbolic trace does not know (output shapes
    that depend on array values): hybridized, the block runs imperatively instead; raised
    outside hybridization, it is the error."""


def run_imperatively(block, args):
    """``block.forward(*args)`` with every operator run as it comes (no compiled graphs,
    children included)."""
    from ..symbol.deferred import NullTrace
    prev = mode.tracing
    mode.tracing = NullTrace()
    try:
        return block.forward(*args)
    finally:
        mode.tracing = prev


def _param_resolver(block):
    """A function naming the parameter an array is (same storage and shape), else None."""
    table = {}

    def build():
        table.clear()
        for name, p in block.collect_params().items():
            for d in p._data or ():
                table[id(d._var)] = (name, d._shape)

    def resolve(array):
        hit = table.get(id(array._var))
        if hit is None:
            build()         # parameters may have been initialised during the run
            hit = table.get(id(array._var))
            if hit is None:
                return None
        name, shape = hit
        return name if shape == array._shape and not array._view else None
    return resolve


# -- deferred initialisation ------------------------------------------------------------------

def infer_param_shapes(block, graph, data_names, arrays):
    """Fills the unknown parameter shapes of ``block`` from the data ``arrays`` through the
    graph's shape inference; the error names the parameter that stays unknown."""
    from ..symbol.amp import with_casts
    from ..symbol.passes import infer, known
    graph = with_casts(graph)
    # Parameter shapes mark unknown dimensions with 0 (MXNet 1.x's convention), NumPy shape
    # semantics or not: infer them with 0 as "unknown".
    with np_shape(False):
        res = infer(graph, {n: a.shape for n, a in zip(data_names, arrays)},
                    {n: a._dtype for n, a in zip(data_names, arrays)})
    params = _params_by_name(block)
    for node in graph.variables():
        p = params.get(node.name)
        if p is None:
            continue
        s = res.shapes[node][0]
        with np_shape(False):
            ok = known(s)
        if not ok:
            raise MXNetError("%s: cannot infer the shape of parameter %s (got %s) from inputs "
                             "%s" % (type(block).__name__, node.name, s,
                                     ', '.join('%s%s' % (n, a.shape)
                                               for n, a in zip(data_names, arrays))))
        p.shape = tuple(s)


def _params_by_name(block):
    return dict(block.collect_params().items())


# -- the compiled block ---------------------------------------------------------------------

class _Entry:
    """One compiled signature: the program and the parameter arrays it reads on its device
    (looked up again when parameter.py's epoch says some parameter's arrays were replaced, and
    at every call when a parameter computes its array in data())."""
    __slots__ = ('program', 'params', 'arrays', 'pvars', 'n_data', 'leaves', 'out_fmt', 'epoch',
                 'ctx', 'data_specs', 'out_classes', 'subgraph', 'per_call')

    def __init__(self, program, params, arrays, data, out_fmt, ctx):
        self.subgraph = None
        self.program = program
        self.params = params
        self.arrays = arrays
        self.pvars = [a._var for a in arrays]
        self.n_data = len(data)
        self.data_specs = [(a.shape, a._dtype) for a in data]
        self.leaves = merge_leaves([a._var for a in arrays])
        self.out_fmt = out_fmt
        self.epoch = _EPOCH[0]
        self.ctx = ctx
        self.per_call = any(data_per_call(p) for p in params)     # ask p.data() each call


class HybridCache:
    """What ``hybridize()`` attaches to a block: traced graphs per train/predict mode and
    compiled programs per input signature."""

    def __init__(self, block):
        self.block = block
        self.graphs = {}        # training flag -> (data names, Graph, out_fmt, in_fmt)
        self.entries = {}       # signature -> _Entry
        self.last = None
        flags = dict(getattr(block, '_flags', None) or ())
        self.np_shape = False
        self.imperative = False     # the graph depends on values (see ValueDependent)
        self.backend = flags.get('backend')
        self.static = bool(flags.get('static_alloc')) and bool(flags.get('static_shape'))
        hook = getattr(block, '_op_hook', None)
        self.hook = _op_hook(*hook) if hook is not None else None

    def _graph(self, args):
        training = mode.training
        g = self.graphs.get(training)
        if g is None:
            flat, in_fmt = flatten(list(args), 'input')
            deferred = uses_deferred_compute(self.block, flat)
            classes = None
            if deferred:
                inputs, out, out_fmt, classes = deferred_trace(self.block, *args)
            else:
                inputs, out, out_fmt = trace(self.block, *args)
            if self.backend is not None and has_backend(self.backend):
                out = out.optimize_for(self.backend)    # a subgraph backend partitions it
            graph = Graph.of(out)
            names = [i.name for i in inputs]
            self._check_inputs(graph, names)
            g = self.graphs[training] = (names, graph, out_fmt, in_fmt, out, classes)
            if not hasattr(self.block, '_cached_graph'):    # a SymbolBlock's are its own
                self.block._in_format, self.block._out_format = in_fmt, out_fmt
            # a graph recorded from real arrays has their shapes, 0-size dimensions included
            self.np_shape = deferred
        return g

    def _check_inputs(self, graph, names):
        params = _params_by_name(self.block)
        used = set()
        for node in graph.variables():
            if node.name in params:
                used.add(node.name)
            elif node.name not in names and '__value__' not in node.extra:
                raise MXNetError("%s: unknown input to HybridBlock: %s (neither an input nor a "
                                 "parameter of the block)" % (type(self.block).__name__,
                                                              node.name))
        unused_data = [i for i, n in enumerate(names)
                       if n not in {v.name for v in graph.variables()}]
        if unused_data:
            warnings.warn("The %s input to HybridBlock is not used by any computation. Is this "
                          "intended?" % ', '.join('%d-th' % i for i in unused_data), stacklevel=5)

    def compile(self, key, data):
        names, graph, out_fmt, in_fmt, _, classes = self._graph(self._args)
        dynamic = [n.name for n in graph.nodes if n.op is not None and
                   n.op.name in DYNAMIC_SHAPE]
        if dynamic:
            raise ShapeDependent("its graph's output shapes depend on array values (%s)"
                                 % ', '.join(dynamic))
        fmt = flatten(list(self._args), 'input')[1]
        if fmt != in_fmt and not _same_but_trailing_nones(fmt, in_fmt):
            raise ValueError("The argument structure of HybridBlock does not match the cached "
                             "version. Stored format = %s, input format = %s (%s was traced "
                             "with other inputs given or None)"
                             % (in_fmt, fmt, type(self.block).__name__))
        if len(data) != len(names):
            raise MXNetError("%s: called with %d inputs, traced with %d"
                             % (type(self.block).__name__, len(data), len(names)))
        ctx = data[0].context
        params = _params_by_name(self.block)
        pnames = [n.name for n in graph.variables() if n.name in params]
        plist = [params[n] for n in pnames]
        try:
            arrays = [p.data(ctx) for p in plist]
        except DeferredInitializationError:
            self.block._finish_deferred_init(self._args)
            arrays = [p.data(ctx) for p in plist]
        title = '%s %s (%s mode), inputs %s' % (
            type(self.block).__name__, getattr(self.block, 'prefix', ''),
            'train' if mode.training else 'predict',
            ', '.join('%s %s' % (a.shape, a._dtype) for a in data))
        with np_shape(self.np_shape or is_np_shape()):
            prog = compile_program(graph, names + pnames, [a.shape for a in data] +
                                   [a.shape for a in arrays], [a._dtype for a in data] +
                                   [a._dtype for a in arrays], ctx, mode.training,
                                   name=_py_name(self.block), title=title,
                                   backend=self.backend, static=self.static, hook=self.hook)
        entry = _Entry(prog, plist, arrays, data, out_fmt, ctx)
        entry.out_classes = classes
        self.entries[key] = entry
        self.last = entry
        return entry

    def _recipe(self, entry, data):
        """(_CachedOp, {'subgraph': Subgraph}, inputs): the recorded outputs' operator for
        autograd.get_symbol."""
        sub = entry.subgraph
        if sub is None:
            names, graph = self.graphs[mode.training][:2]
            params = _params_by_name(self.block)
            pnames = [n.name for n in graph.variables() if n.name in params]
            limit = dict(getattr(self.block, '_flags', ())).get('inline_limit', 2)
            sub = entry.subgraph = Subgraph(graph, list(names) + pnames, limit)
        return (CACHED_OP, {'subgraph': sub}, list(data) + list(entry.arrays))

    def __call__(self, args):
        x = args[0]
        if len(args) == 1 and (type(x) is NDArray or isinstance(x, NDArray)):
            c = x._ctx
            # a program holds the casts of the mixed-precision table in force (amp.init)
            key = (x._shape, x._dtype, c.device_typeid, c.device_id, mode.training,
                   x.__class__, _amp.table)
            data = args
        else:
            flat, fmt = flatten(list(args), 'input')
            data = [a for a in flat if a is not None]
            try:
                key = (mode.training, repr(fmt), _amp.table) + tuple(
                    None if a is None else (a._shape, a._dtype, a._ctx.device_typeid,
                                            a._ctx.device_id) for a in flat)
            except AttributeError:          # a Symbol among the arrays
                _check_call_inputs(data)
                raise
        if self.imperative:
            return run_imperatively(self.block, args)
        entry = self.entries.get(key)
        if entry is None:
            _check_call_inputs(data)
            self._args = args
            try:
                entry = self.compile(key, data)
            except ValueDependent as e:
                # MXNet compiles such blocks with dynamic shapes; here they run imperatively
                warnings.warn("%s reads array values while it runs (asnumpy, a boolean index, "
                              "unique, ...): it runs imperatively instead of hybridized"
                              % type(self.block).__name__, stacklevel=4)
                self.imperative = True
                return e.out
            except ShapeDependent as e:
                warnings.warn("%s: %s; it runs imperatively instead of hybridized"
                              % (type(self.block).__name__, e), stacklevel=4)
                self.imperative = True
                return run_imperatively(self.block, args)
            finally:
                self._args = None
        elif entry.epoch != _EPOCH[0] or entry.per_call:
            if entry.epoch != _EPOCH[0]:        # a parameter may have been replaced by another
                byname = _params_by_name(self.block)
                entry.params = [byname.get(p.name, p) for p in entry.params]
                entry.per_call = any(data_per_call(p) for p in entry.params)
            entry.arrays = [p.data(entry.ctx) for p in entry.params]
            entry.pvars = [a._var for a in entry.arrays]
            entry.leaves = merge_leaves(entry.pvars)
            entry.epoch = _EPOCH[0]
        leaves = recipe = None
        if mode.recording:
            leaves = self._leaves(entry, data)
            recipe = self._recipe(entry, data)
        outs = entry.program.call(data, entry.pvars, data[0]._ctx, leaves, recipe)
        classes = entry.out_classes
        if classes is not None:         # a deferred-compute graph: the classes it produced
            for o, c in zip(outs, classes):
                o.__class__ = c
        elif data[0].__class__ is not NDArray:      # mx.np.ndarray in, mx.np.ndarray out
            cls = data[0].__class__
            for o in outs:
                o.__class__ = cls
        if entry.out_fmt == 0:
            return outs[0]
        return regroup(outs, entry.out_fmt)

    def _leaves(self, entry, inputs):
        data = merge_leaves([a._var for a in inputs])
        if data is None:
            return entry.leaves or False
        if entry.leaves is None:
            return data
        return data | entry.leaves


def _op_hook(callback, monitor_all):
    """The hook the generated code calls after each operator (codegen.generate), calling
    ``callback(name, op_name, array)`` as MXNet 1.9.1's ``register_op_hook`` does: names as
    bytes (MXNet hands them over from C), with ``monitor_all`` first each input, then each
    output (``symbol.monitor_names``). The array is a copy; where MXNet passes an NDArray
    handle, this passes the NDArray."""
    names = {}

    def hook(node, inputs, outputs):
        op = node.op.name.encode()
        ins, outs = names.get(node) or names.setdefault(node, monitor_names(node))
        if monitor_all:
            for nm, t in zip(ins, inputs):
                callback(nm.encode(), op, from_tensor(t.detach().clone()))
        for nm, t in zip(outs, outputs):
            callback(nm.encode(), op, from_tensor(t.detach().clone()))
    return hook


def _py_name(block):
    name = getattr(block, 'name', None) or type(block).__name__
    return '%s_forward' % name


def _same_but_trailing_nones(a, b):
    """Whether two input formats differ only by trailing None arguments (left to their
    defaults), which MXNet accepts."""
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return list(long_[:len(short)]) == list(short) and all(f == -1 for f in long_[len(short):])


def _check_call_inputs(data):
    """A compiled graph runs on arrays of one device: no Symbols among them (MXNet's
    ValueErrors), checked once per input signature."""
    if any(isinstance(a, Symbol) for a in data):
        raise ValueError('In HybridBlock, we do not support mixed NDArrays and Symbols types for '
                         'the input. Please check the type of the args.\n')
    ctxs = {a._ctx for a in data}
    if len(ctxs) > 1:
        raise ValueError('Find multiple contexts in the input, After hybridized, the HybridBlock '
                         'only supports one input context. Find all contexts = {}'.format(ctxs))


def cache_of(block):
    """The block's HybridCache, made on first use; calling it with the inputs runs the
    hybridized block."""
    c = block.__dict__.get('_hybrid_cache')
    if c is None:
        c = block.__dict__['_hybrid_cache'] = HybridCache(block)
    return c


def clear(block):
    """Drops the traced graphs and compiled programs (on ``hybridize()``, ``cast()``, ...)."""
    block.__dict__.pop('_hybrid_cache', None)


def call_cached_op(block, x, *args):
    """The call of a hybridized block (see the module docstring)."""
    return cache_of(block)((x,) + args)


# -- reading the generated code, exporting ----------------------------------------------------

def hybridized_code(block):
    """The Python source a hybridized block runs for its latest input signature (every
    signature's, one after the other, with ``all``)."""
    c = block.__dict__.get('_hybrid_cache')
    if c is None or c.last is None:
        raise MXNetError("%s has no generated code yet: call hybridize() and run it once"
                         % type(block).__name__)
    return c.last.program.source


def export(block, path, epoch=0, remove_amp_cast=True):
    """Writes ``path-symbol.json`` and ``path-%04d.params`` (keys ``arg:name`` and
    ``aux:name``, MXNet's format); returns the two file names."""
    from .. import ndarray as nd
    c = block.__dict__.get('_hybrid_cache')
    if c is None or not c.graphs:
        raise RuntimeError("Please first call block.hybridize() and then run forward with this "
                           "block at least once before calling export.")
    sym = (c.graphs.get(False) or next(iter(c.graphs.values())))[4]
    if getattr(block, '_graph_given', False):
        # a SymbolBlock writes its own graph, its inputs named as they were given (MXNet)
        sym = block._cached_graph[1]
        if c.backend is not None and has_backend(c.backend):
            sym = sym.optimize_for(c.backend)
    sym_file = '%s-symbol.json' % path
    params_file = '%s-%04d.params' % (path, epoch)
    sym.save(sym_file, remove_amp_cast=remove_amp_cast)
    arg_names = set(sym.list_arguments())
    aux_names = set(sym.list_auxiliary_states())
    arrays = {}
    for name, p in block.collect_params().items():
        if name in arg_names:
            arrays['arg:%s' % name] = p._reduce()
        elif name in aux_names:
            arrays['aux:%s' % name] = p._reduce()
    # Arrays a deferred-compute trace captured from outside the block are saved as arguments,
    # so the exported graph loads and runs on its own.
    from ..ndarray.ndarray import from_tensor
    for node in Graph.of(sym).variables():
        value = node.extra.get('__value__')
        if value is not None and node.name in arg_names:
            arrays['arg:%s' % node.name] = from_tensor(value.tensor.detach().cpu().clone())
    nd.save(params_file, arrays)
    return sym_file, params_file
