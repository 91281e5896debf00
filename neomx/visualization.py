"""``mx.viz``: a network's layers as a table (``print_summary``) or a graph (``plot_network``,
with the optional ``graphviz`` package: ``pip install neomx[viz]``).

Both take a Symbol or a HybridBlock (a hybridized block that has run gives the graph it
traced; another is traced on a variable named ``data``). ``print_summary`` prints the table
MXNet 1.9.1 prints, figures included: a layer's parameter count comes from its attributes and
the shapes of the layers feeding it (Convolution, FullyConnected, BatchNorm, Embedding), so
without ``shape`` only what the attributes alone give is counted.

>>> import neomx as mx
>>> net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc')
>>> mx.viz.print_summary(net, shape={'data': (1, 3)}, line_length=60)
____________________________________________________________
Layer (type)              Output ShapeParam Previous Layer
============================================================
data(null)                3           0
____________________________________________________________
fc(FullyConnected)        4           16    data
============================================================
Total params: 16
____________________________________________________________
"""
import copy
import re
import warnings

from .symbol import Symbol
from .symbol.graph import Graph
from .symbol.json import _MXNET_NAME

__all__ = ['print_summary', 'plot_network']


def _symbol_of(net, what):
    if isinstance(net, Symbol):
        return net
    from .gluon.block import HybridBlock
    if isinstance(net, HybridBlock):
        cache = net.__dict__.get('_hybrid_cache')
        if cache is not None and cache.graphs:
            return next(iter(cache.graphs.values()))[4]
        from . import symbol
        out = net(symbol.var('data'))
        return out if isinstance(out, Symbol) else symbol.Group(list(out))
    raise TypeError("%s: expected a Symbol or a HybridBlock, got %s" % (what, type(net).__name__))


def _shapes(sym, shape, what):
    internals = sym.get_internals()
    _, out_shapes, _ = internals.infer_shape(**shape)
    if out_shapes is None:
        raise ValueError("%s: the input shapes %s do not determine every layer's" % (what, shape))
    return dict(zip(internals.list_outputs(), out_shapes))


def _layers(sym):
    """(index, node, MXNet's operator name, attributes as strings) in the graph's order."""
    for i, node in enumerate(Graph.of(sym).nodes):
        if node.op is None:
            yield i, node, 'null', {k: str(v) for k, v in node.extra.items()}
        else:
            attrs = dict(node.op.format_attrs(node.attrs))
            attrs.update({k: str(v) for k, v in node.extra.items()})
            yield i, node, _MXNET_NAME.get(node.op.name, node.op.name), attrs


def _dims(text):
    return [int(d) for d in re.findall(r'\d+', text)]


def _params(op, attrs, fan_in, out_shape):
    """A layer's parameter count as MXNet's summary computes it: ``fan_in`` is the sum of the
    channels (dimension 1) of the layers feeding it, when shapes are known."""
    if op == 'Convolution':
        n = fan_in * int(attrs['num_filter']) // int(attrs.get('num_group', '1'))
        for k in _dims(attrs['kernel']):
            n *= k
        return n + (0 if attrs.get('no_bias') == 'True' else int(attrs['num_filter']))
    if op == 'FullyConnected':
        bias = 0 if attrs.get('no_bias') == 'True' else 1
        return (fan_in + bias) * int(attrs['num_hidden'])
    if op == 'BatchNorm':
        return 2 * out_shape[0] if out_shape else 0
    if op == 'Embedding':
        return int(attrs['input_dim']) * int(attrs['output_dim'])
    return 0


def print_summary(symbol, shape=None, line_length=120, positions=(.44, .64, .74, 1.)):
    """Prints each layer (operator) of ``symbol`` with its output shape (without the batch
    axis, when ``shape`` gives the inputs' shapes), parameter count and the layers feeding it,
    then the total, in ``line_length`` columns split at ``positions`` (fractions of the line,
    or column numbers)."""
    sym = _symbol_of(symbol, 'print_summary')
    shapes = _shapes(sym, shape, 'print_summary') if shape is not None else None
    layers = list(_layers(sym))
    head = sym._outputs[0][0]
    index = {id(n): i for i, n, _, _ in layers}
    # (MXNet's quirk, kept for its figures: the first node, the data, counts as a layer)
    listed = {0, index[id(head)]}
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]

    def row(fields):
        line = ''
        for field, end in zip(fields, positions):
            line = (line + str(field))[:end]
            line += ' ' * (end - len(line))
        print(line)

    def out_shape(node):
        key = node.name if node.op is None else node.name + '_output'
        return list(shapes[key][1:]) if shapes and key in shapes else []

    print('_' * line_length)
    row(['Layer (type)', 'Output Shape', 'Param #', 'Previous Layer'])
    print('=' * line_length)
    total = 0
    for i, node, op, attrs in layers:
        if node.op is None and i not in listed:
            continue
        previous, fan_in = [], 0
        for src, _ in node.inputs:
            if src.op is not None or index[id(src)] in listed:
                previous.append(src.name)
                got = out_shape(src)
                if got:
                    fan_in += int(got[0])
        shp = out_shape(node)
        params = 0 if node.op is None else _params(op, attrs, fan_in, shp if shapes else None)
        total += params
        row(['%s(%s)' % (node.name, op), 'x'.join(str(d) for d in shp), params,
             previous[0] if previous else ''])
        for p in previous[1:]:
            row(['', '', '', p])
        print(('=' if i == len(layers) - 1 else '_') * line_length)
    print('Total params: %d' % total)
    print('_' * line_length)


_WEIGHT_LIKE = ('_weight', '_bias', '_beta', '_gamma', '_moving_var', '_moving_mean',
                '_running_var', '_running_mean')
_COLORS = ('#8dd3c7', '#fb8072', '#ffffb3', '#bebada', '#80b1d3', '#fdb462', '#b3de69',
           '#fccde5')


def _label_and_color(op, name, attrs):
    if op == 'Convolution':
        return ('Convolution\n%s/%s, %s' % ('x'.join(map(str, _dims(attrs['kernel']))),
                                            'x'.join(map(str, _dims(attrs['stride'])))
                                            if 'stride' in attrs else '1', attrs['num_filter']),
                _COLORS[1])
    if op == 'FullyConnected':
        return 'FullyConnected\n%s' % attrs['num_hidden'], _COLORS[1]
    if op == 'BatchNorm':
        return name, _COLORS[3]
    if op in ('Activation', 'LeakyReLU'):
        return '%s\n%s' % (op, attrs.get('act_type', 'Leaky')), _COLORS[2]
    if op == 'Pooling':
        return ('Pooling\n%s, %s/%s' % (attrs.get('pool_type', 'max'),
                                        'x'.join(map(str, _dims(attrs['kernel'])))
                                        if 'kernel' in attrs else '[]',
                                        'x'.join(map(str, _dims(attrs['stride'])))
                                        if 'stride' in attrs else '1'), _COLORS[4])
    if op in ('Concat', 'Flatten', 'Reshape'):
        return name, _COLORS[5]
    if op == 'Softmax':
        return name, _COLORS[6]
    return (attrs['op_type'] if op == 'Custom' else name), _COLORS[7]


def plot_network(symbol, title='plot', save_format='pdf', shape=None, dtype=None,
                 node_attrs=None, hide_weights=True):
    """A ``graphviz.Digraph`` of ``symbol``'s graph: a box per operator, an oval per input;
    edges labelled with shapes (``shape``) and dtypes (``dtype``, input name -> NumPy type)
    when given; weights and biases hidden unless ``hide_weights=False``. Warns when several
    nodes share a name (the drawing then merges them). Needs the ``graphviz`` package."""
    try:
        from graphviz import Digraph
    except ImportError:
        raise ImportError("plot_network needs the graphviz package (pip install graphviz, or "
                          "neomx[viz])") from None
    sym = _symbol_of(symbol, 'plot_network')
    shapes = _shapes(sym, shape, 'plot_network') if shape is not None else None
    types = None
    if dtype is not None:
        internals = sym.get_internals()
        _, out_types, _ = internals.infer_type(**dtype)
        if out_types is None:
            raise ValueError("plot_network: the input types %s do not determine every layer's"
                             % (dtype,))
        types = dict(zip(internals.list_outputs(), out_types))
    layers = list(_layers(sym))
    seen, repeated = set(), []
    for _, node, _, _ in layers:
        if node.name in seen and node.name not in repeated:
            repeated.append(node.name)
        seen.add(node.name)
    if repeated:
        warnings.warn("There are multiple variables with the same name in your graph, this may "
                      "result in cyclic graph. Repeated names: " + ','.join(repeated),
                      RuntimeWarning, stacklevel=2)
    base_attr = {'shape': 'box', 'fixedsize': 'true', 'width': '1.3', 'height': '0.8034',
                 'style': 'filled'}
    base_attr.update(node_attrs or {})
    dot = Digraph(name=title, format=save_format)
    hidden = set()
    for _, node, op, attrs in layers:
        attr = copy.deepcopy(base_attr)
        if op == 'null':
            if node.name.endswith(_WEIGHT_LIKE):
                if hide_weights:
                    hidden.add(node.name)
                continue
            attr.update(shape='oval', fillcolor=_COLORS[0])
            label = node.name
        else:
            label, attr['fillcolor'] = _label_and_color(op, node.name, attrs)
        dot.node(name=node.name, label=label, **attr)
    for _, node, op, _ in layers:
        inputs = node.inputs[:1] if op == '_contrib_BilinearResize2D' else node.inputs
        for src, k in inputs:
            if src.name in hidden:
                continue
            key = src.name if src.op is None else src.output_names()[k]
            label = ''
            if shapes is not None:
                label = 'x'.join(str(d) for d in shapes[key][1:])
            if types is not None:
                label += '(%s)' % types[key].__name__
            dot.edge(tail_name=node.name, head_name=src.name, dir='back', arrowtail='open',
                     label=label)
    return dot
