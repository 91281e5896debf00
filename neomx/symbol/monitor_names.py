"""The names MXNet 1.9.1's monitors give an operator node's arrays (``Executor``'s
``set_monitor_callback``, a block's ``register_op_hook``), by operator name.

An input is ``<node>_<input name>``, except for the operators MXNet registers no input names
for (``POSITIONAL_INPUTS``, and every ``*_scalar`` operator: ``<node>_input0, ...``) and
those of any number of inputs (``<node>_arg0, ...``). An output is ``<node>_<output name>``
for the operators MXNet registers output names for (``NAMED_OUTPUTS``), else ``<node>_0,
...``. Check a new operator's names against MXNet 1.9.1 (FListInputNames, FListOutputNames).

>>> import neomx as mx
>>> from neomx.symbol.graph import Graph
>>> node = Graph.of(mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2, name='fc')).nodes[-1]
>>> monitor_names(node)
(['fc_data', 'fc_weight', 'fc_bias'], ['fc_output'])
"""

__all__ = ['POSITIONAL_INPUTS', 'NAMED_OUTPUTS', 'monitor_names']

# unary maths, reductions, reshapes and the like
POSITIONAL_INPUTS = frozenset((
    'Activation', 'BlockGrad', 'Cast', 'Flatten', 'Reshape', 'SoftmaxActivation', '_copy', 'abs',
    'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh', 'argmax', 'argmin',
    'argsort', 'broadcast_axis', 'broadcast_to', 'cbrt', 'ceil', 'clip', 'cos', 'cosh',
    'degrees', 'erf', 'erfinv', 'exp', 'expand_dims', 'expm1', 'fix', 'floor', 'gamma',
    'gammaln', 'hard_sigmoid', 'log', 'log10', 'log1p', 'log2', 'log_sigmoid', 'logical_not',
    'make_loss', 'max', 'mean', 'min', 'mish', 'nanprod', 'nansum', 'negative', 'norm',
    'ones_like', 'prod', 'radians', 'rcbrt', 'reciprocal', 'relu', 'rint', 'round', 'rsqrt',
    'shape_array', 'sigmoid', 'sign', 'sin', 'sinh', 'size_array', 'slice', 'slice_axis',
    'smooth_l1', 'softmin', 'softrelu', 'softsign', 'sort', 'sqrt', 'square', 'sum', 'tan',
    'tanh', 'topk', 'transpose', 'trunc', 'zeros_like'))

NAMED_OUTPUTS = frozenset((
    'Activation', 'BatchNorm', 'Concat', 'Convolution', 'Deconvolution', 'Dropout',
    'FullyConnected', 'GroupNorm', 'InstanceNorm', 'L2Normalization', 'LRN', 'LayerNorm',
    'LeakyReLU', 'MakeLoss', 'Pad', 'Pooling', 'SequenceLast', 'SequenceMask',
    'SequenceReverse', 'SliceChannel', 'SoftmaxActivation', 'SoftmaxOutput', 'SwapAxis',
    'UpSampling', 'elemwise_add', 'make_loss', 'softmax', 'softmin'))


def monitor_names(node):
    """(input names, output names) that MXNet's monitors give the arrays of operator node
    ``node``."""
    op, attrs, num_inputs = node.op, node.attrs, len(node.inputs)
    if op.name in POSITIONAL_INPUTS or op.name.endswith('_scalar'):
        ins = ['input%d' % i for i in range(num_inputs)]
    elif op.variadic:
        ins = ['arg%d' % i for i in range(num_inputs)]
    else:
        ins = op.input_names(attrs, num_inputs)
    if op.name in NAMED_OUTPUTS:
        outs = op.output_names(attrs)
    else:
        outs = range(op.num_outputs(attrs))
    return (['%s_%s' % (node.name, i) for i in ins], ['%s_%s' % (node.name, o) for o in outs])
