"""The fused recurrent operator ``RNN``: MXNet's packed parameter vector on ATen's fused
recurrent kernels (``torch._VF.lstm`` / ``gru`` / ``rnn_tanh`` / ``rnn_relu``; cuDNN on GPU).

The packed vector holds every weight, then every bias (``rnn_param_layout`` lists them):
for each layer and direction (``l`` forward, ``r`` backward) the input-to-hidden weight
``(gates * state_size, input)``, the hidden-to-hidden weight ``(gates * state_size, state)``
and, with ``projection_size``, the projection ``(projection_size, state_size)``; then for each
layer and direction the two biases. Gates are ordered as in cuDNN and torch (LSTM: input,
forget, cell, output; GRU: reset, update, new), so the pieces are torch's weights as they are.

``p`` drops out the outputs of every layer but the last, in training, with the device's
generator. ``use_sequence_length`` gives each sequence its own length (the outputs past it
are 0 and the states are those at its last step; MXNet 1.9 honours it on GPU only).
``lstm_state_clip_min/max`` clip the LSTM cell state at every step, as cuDNN does (MXNet 1.9
on CPU ignores them); ``lstm_state_clip_nan`` turns a NaN cell state into the minimum.

>>> import neomx as mx
>>> x = mx.nd.ones((5, 2, 3))                      # (sequence, batch, input)
>>> n = rnn_param_size('lstm', 3, 4, 1, False)
>>> out = mx.nd.RNN(x, mx.nd.ones((n,)) * 0.1, mx.nd.zeros((1, 2, 4)), mx.nd.zeros((1, 2, 4)),
...                 state_size=4, num_layers=1, mode='lstm')
>>> out.shape
(5, 2, 4)
"""
from math import prod

import torch
import torch.nn.functional as F

from .registry import (Bool, Enum, Float, FloatOrNone, Int, IntOrNone, ShapeError, register)
from .shape import _concat, _concat_rule, concat_back

__all__ = ['rnn_param_layout', 'rnn_param_size', 'GATES']

GATES = {'rnn_relu': 1, 'rnn_tanh': 1, 'lstm': 4, 'gru': 3}

_KERNELS = {'lstm': torch._VF.lstm, 'gru': torch._VF.gru, 'rnn_tanh': torch._VF.rnn_tanh,
            'rnn_relu': torch._VF.rnn_relu}


def rnn_param_layout(mode, input_size, state_size, num_layers, bidirectional,
                     projection_size=None):
    """``[(name, shape)]`` of the pieces of the packed parameter vector, in order; names as
    Gluon's layers call them (``l0_i2h_weight``, ..., ``r1_h2h_bias``)."""
    g, h, p = GATES[mode], state_size, projection_size
    r = p or h                  # the size of the recurrent state h
    weights, biases = [], []
    ni = input_size
    for layer in range(num_layers):
        for d in 'lr'[:2 if bidirectional else 1]:
            weights.append(('%s%d_i2h_weight' % (d, layer), (g * h, ni)))
            weights.append(('%s%d_h2h_weight' % (d, layer), (g * h, r)))
            if p:
                weights.append(('%s%d_h2r_weight' % (d, layer), (p, h)))
            biases.append(('%s%d_i2h_bias' % (d, layer), (g * h,)))
            biases.append(('%s%d_h2h_bias' % (d, layer), (g * h,)))
        ni = r * (2 if bidirectional else 1)
    return weights + biases


def rnn_param_size(mode, input_size, state_size, num_layers, bidirectional,
                   projection_size=None):
    """The length of the packed parameter vector."""
    return sum(prod(s) for _, s in rnn_param_layout(mode, input_size, state_size, num_layers,
                                                    bidirectional, projection_size))


def _unpack(parameters, mode, input_size, state_size, num_layers, bidirectional, proj):
    """torch's per-layer weight lists ``[w_ih, w_hh, b_ih, b_hh(, w_hr)]``, one per layer and
    direction, as views of the packed vector."""
    layout = rnn_param_layout(mode, input_size, state_size, num_layers, bidirectional, proj)
    total = sum(prod(s) for _, s in layout)
    if parameters.numel() != total:
        raise ShapeError("RNN: parameters has %d elements, expected %d for mode=%s, input size "
                         "%d, state_size=%d, num_layers=%d, bidirectional=%s%s"
                         % (parameters.numel(), total, mode, input_size, state_size, num_layers,
                            bidirectional, ', projection_size=%d' % proj if proj else ''))
    # one split (its gradient is one concatenation), not a slice per piece (each of whose
    # gradients would be a zero-filled vector of the full size)
    parts = parameters.reshape(-1).split([prod(shape) for _, shape in layout])
    pieces = {name: part.view(shape) for (name, shape), part in zip(layout, parts)}
    out = []
    for layer in range(num_layers):
        for d in 'lr'[:2 if bidirectional else 1]:
            key = '%s%d_' % (d, layer)
            w = [pieces[key + 'i2h_weight'], pieces[key + 'h2h_weight'],
                 pieces[key + 'i2h_bias'], pieces[key + 'h2h_bias']]
            if proj:
                w.append(pieces[key + 'h2r_weight'])
            out.append(w)
    return out


def _dropout(x, p, generator):
    keep = torch.empty_like(x).bernoulli_(1.0 - p, generator=generator)
    return x * keep / (1.0 - p)


def _fused(mode, x, hx, weights, num_layers, bidirectional, batch_sizes=None):
    """One call of ATen's fused kernel over ``num_layers`` layers (no dropout); ``hx`` is h,
    or (h, c) for an LSTM. Returns (output, h_n) or (output, (h_n, c_n))."""
    flat = [w for ws in weights for w in ws]
    fn = _KERNELS[mode]
    if batch_sizes is None:
        res = fn(x, hx, flat, True, num_layers, 0.0, False, bidirectional, False)
    else:
        res = fn(x, batch_sizes, hx, flat, True, num_layers, 0.0, False, bidirectional)
    if mode == 'lstm':
        return res[0], (res[1], res[2])
    return res[0], res[1]


def _lstm_clipped(x, h0, c0, ws, lo, hi, clip_nan, reverse, lengths):
    """One LSTM layer in one direction, step by step, clipping the cell state at each step
    (ATen's kernels do not clip); ``lengths`` (N,) or None masks the steps past each
    sequence's end (their output is 0 and the states stay)."""
    w_ih, w_hh, b_ih, b_hh = ws[:4]
    w_hr = ws[4] if len(ws) > 4 else None
    xs = F.linear(x, w_ih, b_ih)
    h, c = h0, c0
    outs = [None] * x.shape[0]
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    for t in steps:
        i, f, g, o = (xs[t] + F.linear(h, w_hh, b_hh)).chunk(4, 1)
        c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        if clip_nan:
            c_new = torch.nan_to_num(c_new, nan=lo)
        c_new = c_new.clamp(lo, hi)
        h_new = torch.sigmoid(o) * torch.tanh(c_new)
        if w_hr is not None:
            h_new = F.linear(h_new, w_hr)
        if lengths is not None:
            live = (t < lengths).unsqueeze(1)
            h = torch.where(live, h_new, h)
            c = torch.where(live, c_new, c)
            outs[t] = torch.where(live, h_new, torch.zeros_like(h_new))
        else:
            h, c = h_new, c_new
            outs[t] = h_new
    return torch.stack(outs), h, c


def _rnn(data, parameters, state, state_cell=None, sequence_length=None, state_size=0,
         num_layers=1, bidirectional=False, mode='lstm', p=0.0, state_outputs=False,
         projection_size=None, lstm_state_clip_min=None, lstm_state_clip_max=None,
         lstm_state_clip_nan=False, use_sequence_length=False, is_train=False, generator=None):
    """A stack of recurrent layers over ``data`` (sequence, batch, input) from the initial
    states, with the weights unpacked from ``parameters`` (see the module docstring)."""
    dirs = 2 if bidirectional else 1
    weights = _unpack(parameters, mode, data.shape[2], state_size, num_layers, bidirectional,
                      projection_size)
    lstm = mode == 'lstm'
    lengths = None
    if use_sequence_length:
        lengths = sequence_length.to(device=data.device, dtype=torch.int64)
        if bool((lengths < 1).any()) or bool((lengths > data.shape[0]).any()):
            raise ShapeError("RNN: sequence_length must lie in [1, %d], got %s"
                             % (data.shape[0], lengths.tolist()))
    clip = lstm and lstm_state_clip_min is not None and lstm_state_clip_max is not None
    drop = p if (is_train and p > 0 and num_layers > 1) else 0.0
    if clip:
        return _outputs(_run_clipped(data, state, state_cell, weights, num_layers, dirs, lengths,
                                     lstm_state_clip_min, lstm_state_clip_max,
                                     lstm_state_clip_nan, drop, generator),
                        lstm, state_outputs)
    if drop:        # layer by layer, with dropout between
        x, hs, cs = data, [], []
        for layer in range(num_layers):
            sl = slice(layer * dirs, (layer + 1) * dirs)
            hx = (state[sl], state_cell[sl]) if lstm else state[sl]
            x, hn = _run(mode, x, hx, weights[sl], 1, bidirectional, lengths)
            hs.append(hn[0] if lstm else hn)
            if lstm:
                cs.append(hn[1])
            if layer < num_layers - 1:
                x = _dropout(x, drop, generator)
        res = (x, torch.cat(hs), torch.cat(cs) if lstm else None)
    else:
        x, hn = _run(mode, data, (state, state_cell) if lstm else state, weights, num_layers,
                     bidirectional, lengths)
        res = (x,) + (hn if lstm else (hn, None))
    return _outputs(res, lstm, state_outputs)


def _outputs(res, lstm, state_outputs):
    out, h, c = res
    if not state_outputs:
        return out
    return (out, h, c) if lstm else (out, h)


def _run(mode, x, hx, weights, num_layers, bidirectional, lengths):
    """The fused kernel on padded ``x``, or, with ``lengths``, on the packed sequences
    (the outputs past each length are 0)."""
    if lengths is None:
        return _fused(mode, x, hx, weights, num_layers, bidirectional)
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), enforce_sorted=False)
    order, back = packed.sorted_indices, packed.unsorted_indices
    if mode == 'lstm':
        hx = (hx[0].index_select(1, order), hx[1].index_select(1, order))
    else:
        hx = hx.index_select(1, order)
    out, hn = _fused(mode, packed.data, hx, weights, num_layers, bidirectional,
                     packed.batch_sizes)
    out, _ = torch.nn.utils.rnn.pad_packed_sequence(
        torch.nn.utils.rnn.PackedSequence(out, packed.batch_sizes, order, back),
        total_length=x.shape[0])
    if mode == 'lstm':
        return out, (hn[0].index_select(1, back), hn[1].index_select(1, back))
    return out, hn.index_select(1, back)


def _run_clipped(data, state, state_cell, weights, num_layers, dirs, lengths, lo, hi,
                 clip_nan, drop, generator):
    x, hs, cs = data, [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            i = layer * dirs + d
            o, h, c = _lstm_clipped(x, state[i], state_cell[i], weights[i], lo, hi, clip_nan,
                                    d == 1, lengths)
            outs.append(o)
            hs.append(h)
            cs.append(c)
        x = torch.cat(outs, 2) if dirs == 2 else outs[0]
        if drop and layer < num_layers - 1:
            x = _dropout(x, drop, generator)
    return x, torch.stack(hs), torch.stack(cs)


# -- shapes ------------------------------------------------------------------------------------

def _state_shapes(attrs, data):
    """(state, state_cell) shapes for data (sequence, batch, input)."""
    dirs = 2 if attrs['bidirectional'] else 1
    h = attrs['state_size']
    r = attrs['projection_size'] or h
    n = attrs['num_layers'] * dirs
    return (n, data[1], r), (n, data[1], h)


def _rnn_fill(attrs, shapes):
    out = list(shapes)
    data = shapes[0]
    if data is None or len(data) != 3:
        return out
    state, cell = _state_shapes(attrs, data)
    if data[2]:
        out[1] = (rnn_param_size(attrs['mode'], data[2], attrs['state_size'],
                                 attrs['num_layers'], attrs['bidirectional'],
                                 attrs['projection_size']),)
    out[2] = state
    if attrs['mode'] == 'lstm':
        out[3] = cell
    if attrs['use_sequence_length']:
        out[4] = (data[1],)
    return out


def _rnn_infer(attrs, shapes, dtypes):
    data = shapes[0]
    if data is None or len(data) != 3:
        raise ShapeError("RNN: data must be 3-d (sequence, batch, input), got shape %s"
                         % (None if data is None else tuple(data),))
    expected = _rnn_fill(attrs, [data, None, None, None, None])
    names = ('data', 'parameters', 'state', 'state_cell', 'sequence_length')
    for i in range(1, 5):
        if shapes[i] is not None and expected[i] is not None and \
                tuple(shapes[i]) != tuple(expected[i]):
            raise ShapeError("RNN: %s has shape %s, expected %s (mode=%s, state_size=%d, "
                             "num_layers=%d, bidirectional=%s, data %s)"
                             % (names[i], tuple(shapes[i]), tuple(expected[i]), attrs['mode'],
                                attrs['state_size'], attrs['num_layers'],
                                attrs['bidirectional'], tuple(data)))
    state, cell = _state_shapes(attrs, data)
    dirs = 2 if attrs['bidirectional'] else 1
    out = [(data[0], data[1], dirs * state[2])]
    if attrs['state_outputs']:
        out.append(state)
        if attrs['mode'] == 'lstm':
            out.append(cell)
    return out, [dtypes[0]] * len(out)


def _rnn_cost(attrs, shapes, out_shapes):
    layout = rnn_param_layout(attrs['mode'], shapes[0][2], attrs['state_size'],
                              attrs['num_layers'], attrs['bidirectional'],
                              attrs['projection_size'])
    return shapes[0][0] * shapes[0][1] * sum(prod(s) for n, s in layout if n.endswith('weight'))


def _rnn_drop(attrs):
    dropped = ()
    if attrs['mode'] != 'lstm':
        dropped += ('state_cell',)
    if not attrs['use_sequence_length']:
        dropped += ('sequence_length',)
    return dropped


def _num_outputs(attrs):
    if not attrs['state_outputs']:
        return 1
    return 3 if attrs['mode'] == 'lstm' else 2


register('RNN', inputs=('data', 'parameters', 'state', 'state_cell', 'sequence_length'),
         drop_inputs=_rnn_drop, num_outputs=_num_outputs,
         output_names=lambda attrs: ('output', 'state_output',
                                       'statecell_output')[:_num_outputs(attrs)],
         fill=_rnn_fill, infer=_rnn_infer, rng=True, train=True, heavy=True, cost=_rnn_cost,
         attrs={'state_size': Int(), 'num_layers': Int(), 'bidirectional': Bool(False),
                'mode': Enum('gru', 'lstm', 'rnn_relu', 'rnn_tanh'), 'p': Float(0.0),
                'state_outputs': Bool(False), 'projection_size': IntOrNone(None),
                'lstm_state_clip_min': FloatOrNone(None),
                'lstm_state_clip_max': FloatOrNone(None),
                'lstm_state_clip_nan': Bool(False),
                'use_sequence_length': Bool(False)})(_rnn)


def _param_concat_back(attrs, in_shapes, out_shapes):
    """Concat's backward rule, except that several pieces of unknown size share what is left
    equally: the input weights of both directions of a bidirectional layer's first layer."""
    out = out_shapes[0]
    unknown = [i for i, s in enumerate(in_shapes) if not s or not all(s)]
    if len(unknown) < 2:
        return concat_back(attrs, in_shapes, out_shapes)
    axis = attrs['dim'] % len(out)
    rest = out[axis] - sum(s[axis] for i, s in enumerate(in_shapes) if i not in unknown)
    if rest <= 0 or rest % len(unknown):
        return in_shapes
    filled = list(in_shapes)
    for i in unknown:
        filled[i] = tuple(out[:axis]) + (rest // len(unknown),) + tuple(out[axis + 1:])
    return filled


# The packed vector of Gluon's recurrent layers: a Concat that also tells the pieces of
# unknown size from the vector's (so a layer's input size is inferred from the data).
register('_rnn_param_concat', inputs=('*data',), key_var_num_args='num_args',
         infer=_concat_rule, back=_param_concat_back,
         attrs={'num_args': Int(0), 'dim': Int(1)})(_concat)
