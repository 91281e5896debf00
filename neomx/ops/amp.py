"""Mixed precision: one table says in which float type each operator runs.

MXNet's AMP lists (``amp_lists.py``) sort operators into classes, and ``CastTable`` holds them
for one target type (float16 or bfloat16), with the user's overrides:

- ``LOW``: the operator runs in the target type (Convolution, FullyConnected): its float
  inputs are cast to it;
- ``FP32``: it runs in float32 (exp, softmax, norms, losses...): its 16-bit inputs are cast
  to float32; so are those of a conditional operator whose attribute takes a listed value
  (``Activation`` with ``act_type='softrelu'``);
- ``WIDEST``: it needs one type for all its inputs (add, concat, where...): they are cast to
  the widest float type among them;
- the rest run as their inputs come.

An operator's class follows its MXNet name, the registry's canonical one (``mxnet_name``):
MXNet's passes compare that name with the lists, so an alias alone in a list does nothing.

The one table drives everything: imperatively, ``casts`` gives an operator call's input casts
(applied where kernels' inputs are made); in graphs, the passes of ``symbol/amp.py`` insert
``amp_cast``/``amp_multicast`` nodes from ``kind``. ``activate`` makes a table the one in
force (``amp.init``).

>>> from neomx.ops import registry
>>> t = CastTable('bfloat16')
>>> t.kind(registry.get('FullyConnected'), {}), t.kind(registry.get('exp'), {})
('low', 'fp32')
>>> t.casts(registry.get('FullyConnected'), {}, ('float32', 'float32', 'float32'))
('bfloat16', 'bfloat16', 'bfloat16')
>>> t.casts(registry.get('broadcast_add'), {}, ('bfloat16', 'float32'))
('float32', None)
"""
from . import amp_lists as L

__all__ = ['LOW', 'FP32', 'WIDEST', 'CONDITIONAL', 'FLOATS', 'CastTable', 'mxnet_name', 'default_lists',
           'activate', 'table', 'widest']

LOW, FP32, WIDEST, CONDITIONAL = 'low', 'fp32', 'widest', 'conditional'
TARGETS = ('float16', 'bfloat16')
FLOATS = frozenset(('float16', 'bfloat16', 'float32', 'float64'))
_CASTABLE = frozenset(('float16', 'bfloat16', 'float32'))     # what AMP converts between
_WIDTH = {'float16': 16, 'bfloat16': 16, 'float32': 32, 'float64': 64}

# Operators neomx registers under another canonical name than MXNet's (symbol JSON writes
# MXNet's).
MXNET_NAMES = {'_elemwise_power': '_power', '_elemwise_mod': '_mod',
               '_elemwise_maximum': '_maximum', '_elemwise_minimum': '_minimum',
               '_elemwise_hypot': '_hypot', 'choose_element_0index': 'pick'}


def mxnet_name(op):
    """The name MXNet 1.9.1 gives operator ``op`` (its canonical name)."""
    return MXNET_NAMES.get(op.name, op.name)


def default_lists(target_dtype):
    """MXNet's lists for ``target_dtype``: a dict with keys ``low``, ``low_fp32``, ``fp32``,
    ``conditional``, ``widest``, ``loss_outputs`` and ``fp32_params`` (None for float16)."""
    if target_dtype == 'float16':
        return dict(low=L.FP16_FUNCS, low_fp32=L.FP16_FP32_FUNCS, fp32=L.FP16_FP32_ONLY_FUNCS,
                    conditional=L.FP16_CONDITIONAL_FP32_FUNCS, widest=L.FP16_WIDEST_TYPE_CASTS,
                    loss_outputs=L.FP16_LOSS_OUTPUT_FUNCTIONS, fp32_params=None)
    if target_dtype == 'bfloat16':
        return dict(low=L.BF16_FUNCS, low_fp32=L.BF16_FP32_FUNCS, fp32=L.BF16_FP32_ONLY_FUNCS,
                    conditional=L.BF16_CONDITIONAL_FP32_FUNCS, widest=L.BF16_WIDEST_TYPE_CASTS,
                    loss_outputs=L.BF16_LOSS_OUTPUT_FUNCTIONS, fp32_params=L.BF16_USE_FP32_PARAMS)
    raise ValueError("AMP supports target_dtype float16 or bfloat16, not %r" % (target_dtype,))


def widest(dtypes):
    """The widest float type among ``dtypes`` (names; others ignored), None without floats;
    float16 and bfloat16 together give float32, which holds both."""
    floats = [d for d in dtypes if d in FLOATS]
    if not floats:
        return None
    best = max(floats, key=_WIDTH.__getitem__)
    if _WIDTH[best] == 16 and 'float16' in floats and 'bfloat16' in floats:
        return 'float32'
    return best


class CastTable:
    """The classes of operators for one target type (see the module docstring): MXNet's lists,
    or the user's ``low``, ``fp32`` and ``conditional`` lists in their place (``amp.init``'s
    ``target_precision_ops``, ``fp32_ops``, ``conditional_fp32_ops``). ``excluded`` names graph
    nodes kept in float32 (``convert_symbol``'s ``excluded_sym_names``)."""

    def __init__(self, target_dtype, low=None, fp32=None, conditional=None, widest=None,
                 excluded=()):
        if target_dtype not in TARGETS:
            raise ValueError("AMP supports target_dtype float16 or bfloat16, not %r"
                             % (target_dtype,))
        lists = default_lists(target_dtype)
        self.target = target_dtype
        self.low = frozenset(lists['low'] if low is None else low)
        self.fp32 = frozenset(lists['fp32'] if fp32 is None else fp32)
        cond = lists['conditional'] if conditional is None else conditional
        self.conditional = {}
        for name, attr, values in cond:
            self.conditional.setdefault(name, []).append((attr, tuple(str(v) for v in values)))
        self.widest = frozenset(lists['widest'] if widest is None else widest)
        self.fp32_params = {name: frozenset(v) for name, v in
                            (lists['fp32_params'] or {}).items()}
        self.loss_outputs = frozenset(lists['loss_outputs'])
        self.excluded = frozenset(excluded)
        self.loss_scaler = None     # amp.init's LossScaler (scale_loss_output)
        self._memo = {}

    def kind(self, op, attrs):
        """``LOW``, ``FP32``, ``WIDEST`` or None for operator ``op`` with ``attrs`` (parsed)."""
        kind = self.kind_of(op, attrs)
        return FP32 if kind == CONDITIONAL else kind

    def kind_of(self, op, attrs):
        """As ``kind``, but ``CONDITIONAL`` for an operator in float32 for its attributes'
        values (MXNet's conversion treats its variable inputs differently). The lists are
        read in MXNet's order: float32, low precision, widest type, conditional."""
        name = mxnet_name(op)
        if name in self.fp32:
            return FP32
        if name in self.low:
            return LOW
        if name in self.widest:
            return WIDEST
        for attr, values in self.conditional.get(name, ()):
            if attr in attrs and _as_string(op, attr, attrs[attr]) in values:
                return CONDITIONAL
        return None

    def casts(self, op, attrs, dtypes, names=None):
        """The dtype each input of a call of ``op`` is cast to (None: left as it is), or None
        when no input changes; ``dtypes`` are the inputs' dtype names (None for an absent
        input), ``names`` their input names (for the inputs a low-precision operator keeps in
        float32: bfloat16 BatchNorm's parameters)."""
        key = (op, dtypes) if mxnet_name(op) not in self.conditional else None
        if key is not None:
            try:
                return self._memo[key]
            except KeyError:
                pass
        out = self._casts(op, attrs, dtypes, names)
        if key is not None and names is None:
            self._memo[key] = out
        return out

    def _casts(self, op, attrs, dtypes, names):
        kind = self.kind(op, attrs)
        if kind is None:
            return None
        keep = self.fp32_params.get(mxnet_name(op), ()) if kind == LOW else ()
        if names is None and (keep or op.mutate):
            names = op.input_names(attrs, len(dtypes), present_only=False)
        if kind == WIDEST:
            want = widest(dtypes)
            out = [want if d in FLOATS and d != want else None for d in dtypes]
        elif kind == FP32:
            out = ['float32' if d in _CASTABLE and d != 'float32' else None for d in dtypes]
        else:
            out = [self.target if d in _CASTABLE and d != self.target and
                   not (keep and _param_name(names[i]) in keep) else None
                   for i, d in enumerate(dtypes)]
        if op.mutate:
            # an input the kernel writes in place (BatchNorm's running statistics) is read as
            # it is: a cast copy would take the write
            for m in op.mutated(attrs):
                if m in names:
                    out[names.index(m)] = None
        return tuple(out) if any(c is not None for c in out) else None


    def scale_loss_output(self, op, attrs):
        """``attrs`` of a call of ``op``, with a loss output's ``grad_scale`` (SoftmaxOutput's,
        the regression outputs') multiplied by the loss scale of ``amp.init``, as MXNet's
        wrapped ``nd.<op>`` functions do; the trainer divides the gradients by it."""
        scaler = self.loss_scaler
        if scaler is None or mxnet_name(op) not in self.loss_outputs:
            return attrs
        return dict(attrs, grad_scale=attrs.get('grad_scale', 1.0) * scaler.loss_scale)


def _param_name(name):
    # MXNet's lists name BatchNorm's data input "" and its parameters by name
    return '' if name == 'data' else name


def _as_string(op, attr, value):
    """An attribute's value as MXNet's JSON writes it (how the lists give the values)."""
    parser = op.attrs.get(attr)
    if parser is None or value is None:
        return str(value)
    return parser.format(value)


# -- the table in force ---------------------------------------------------------------------

table = None


def activate(new):
    """Puts ``new`` (a CastTable, or None for none) in force for every operator call and every
    graph traced from now on; returns the one it replaces."""
    global table
    old, table = table, new
    return old
