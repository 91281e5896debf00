"""Shape operators: reshape (with MXNet's special codes), transpose, expand_dims, squeeze,
flatten, concat, stack, split, slicing, tile, repeat, flip, swapaxes, broadcast_to, Cast.

Kernels that torch answers with a view are flagged ``view=True``: the caller copies the
result, since an MXNet operator never returns memory shared with its input.
"""
from math import prod

import torch

from ..base import dtype_torch
from .registry import Axis, Bool, DType, Enum, Float, Int, IntOrNone, ShapeError, Shape, register


def infer_reshape(src, target, reverse=False, unknown=None):
    """The shape MXNet's Reshape gives ``src`` for ``target``, whose codes are
    0 (copy this dim), -1 (infer), -2 (copy all remaining), -3 (merge two dims),
    -4 (split a dim into the next two, one of which may be -1). Dimensions of ``src`` equal
    to ``unknown`` (partial inference) are unknown: so is what depends on them."""
    src = tuple(src)
    target = tuple(target)
    if reverse:
        out = infer_reshape(src[::-1], _reverse_codes(target), False, unknown)
        return out[::-1]
    partial = unknown is not None and unknown in src
    out = []
    i = 0          # position in src
    j = 0
    infer_at = None
    while j < len(target):
        t = target[j]
        if t > 0:
            out.append(t)
            i += 1
        elif t == 0:
            if i >= len(src):
                raise ShapeError("code 0 at position %d has no matching input dim in %s" % (j, src))
            out.append(src[i])
            i += 1
        elif t == -1:
            if infer_at is not None:
                raise ShapeError("more than one -1 in target shape %s" % (target,))
            infer_at = len(out)
            out.append(-1)
            i += 1
        elif t == -2:
            out.extend(src[i:])
            i = len(src)
        elif t == -3:
            if i + 1 >= len(src):
                raise ShapeError("code -3 needs two input dims at position %d of %s" % (i, src))
            pair = src[i:i + 2]
            out.append(unknown if partial and unknown in pair else pair[0] * pair[1])
            i += 2
        elif t == -4:
            if j + 2 >= len(target) or i >= len(src):
                raise ShapeError("code -4 needs two following dims in %s" % (target,))
            d, a, b = src[i], target[j + 1], target[j + 2]
            if partial and d == unknown:
                out.extend([unknown if a == -1 else a, unknown if b == -1 else b])
                i += 1
                j += 3
                continue
            if a == -1:
                a = d // b if b else 0
            if b == -1:
                b = d // a if a else 0
            if a * b != d:
                raise ShapeError("code -4 splits dim %d into %d x %d" % (d, a, b))
            out.extend([a, b])
            i += 1
            j += 2
        else:
            raise ShapeError("invalid code %d in target shape %s" % (t, target))
        j += 1
    if partial:
        return tuple(unknown if d == -1 else d for d in out)
    total = 1
    for d in src:
        total *= d
    if infer_at is not None:
        known = 1
        for k, d in enumerate(out):
            if k != infer_at:
                known *= d
        if known == 0 or total % known:
            raise ShapeError("cannot reshape %s into %s" % (src, target))
        out[infer_at] = total // known
    n = 1
    for d in out:
        n *= d
    if n != total:
        raise ShapeError("cannot reshape array of shape %s (size %d) into %s (size %d)"
                         % (src, total, tuple(out), n))
    return tuple(out)


def _reverse_codes(target):
    # -4 takes the two dims after it: keep such groups together when reversing.
    groups, j = [], 0
    while j < len(target):
        if target[j] == -4:
            groups.append(target[j:j + 3])
            j += 3
        else:
            groups.append(target[j:j + 1])
            j += 1
    out = []
    for g in reversed(groups):
        out.extend((g[0], g[2], g[1]) if len(g) == 3 else g)
    return tuple(out)


def _reshape_to(src, shape, reverse, target_shape, keep_highest, unknown=None):
    if shape or not target_shape:
        return infer_reshape(src, shape, reverse, unknown)
    # the legacy form: 0 in target_shape is the one dimension to infer; keep_highest keeps
    # the first dimension and reshapes the others
    codes = tuple(-1 if d == 0 else d for d in target_shape)
    if keep_highest:
        return (src[0],) + infer_reshape(tuple(src[1:]), codes, False, unknown)
    return infer_reshape(src, codes, False, unknown)


def reshape_rule(attrs, shapes, dtypes):
    return (_reshape_to(tuple(shapes[0]), attrs['shape'], attrs['reverse'],
                        attrs['target_shape'], attrs['keep_highest']),), (dtypes[0],)


def partial_reshape_shapes(attrs, shapes, unknown):
    """Reshape's output for an input with ``unknown`` dimensions, as MXNet's partial
    inference gives it: the dimension to infer is unknown, the codes' others are kept."""
    return (_reshape_to(tuple(shapes[0]), attrs['shape'], attrs['reverse'],
                        attrs['target_shape'], attrs['keep_highest'], unknown),)


def _reshape(data, shape, reverse, target_shape=(), keep_highest=False):
    return data.reshape(_reshape_to(tuple(data.shape), shape, reverse, target_shape,
                                    keep_highest))


def _reshape_back(attrs, in_shapes, out_shapes):
    """The one unknown dimension of the input from the output's size."""
    src, out = in_shapes[0], out_shapes[0]
    if src is None or list(src).count(0) != 1:
        return in_shapes
    rest = prod(d for d in src if d)
    if rest == 0 or prod(out) % rest:
        return in_shapes
    return [tuple(d or prod(out) // rest for d in src)] + list(in_shapes[1:])


register('Reshape', aliases=('reshape',), view=True, infer=reshape_rule,
         back=_reshape_back,
         attrs={'shape': Shape(()), 'reverse': Bool(False), 'target_shape': Shape(()),
                'keep_highest': Bool(False)})(_reshape)


def _like_shape(lhs, rhs, lhs_begin, lhs_end, rhs_begin, rhs_end):
    """lhs's shape with its axes [lhs_begin, lhs_end) replaced by rhs's [rhs_begin, rhs_end)
    (None: the start or the end; negative: from the end)."""
    def bounds(shape, b, e):
        n = len(shape)
        b = 0 if b is None else (b + n if b < 0 else b)
        e = n if e is None else (e + n if e < 0 else e)
        if not 0 <= b <= e <= n:
            raise ShapeError("reshape_like: axes [%s, %s) do not fit shape %s" % (b, e, shape))
        return b, e
    lb, le = bounds(lhs, lhs_begin, lhs_end)
    rb, re = bounds(rhs, rhs_begin, rhs_end)
    out = tuple(lhs[:lb]) + tuple(rhs[rb:re]) + tuple(lhs[le:])
    if prod(out) != prod(lhs):
        raise ShapeError("reshape_like: cannot reshape %s into %s" % (tuple(lhs), out))
    return out


def _reshape_like(lhs, rhs, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None):
    return lhs.reshape(_like_shape(tuple(lhs.shape), tuple(rhs.shape), lhs_begin, lhs_end,
                                   rhs_begin, rhs_end))


register('reshape_like', inputs=('lhs', 'rhs'), view=True,
         infer=lambda a, s, d: ((_like_shape(s[0], s[1], **a),), (d[0],)),
         attrs={'lhs_begin': IntOrNone(None), 'lhs_end': IntOrNone(None),
                'rhs_begin': IntOrNone(None), 'rhs_end': IntOrNone(None)})(_reshape_like)


def _norm_axis(axis, ndim, op='axis'):
    if not -ndim <= axis < max(ndim, 1):
        raise ShapeError("%s %d is out of range for %d dims" % (op, axis, ndim))
    return axis % max(ndim, 1)


def _transpose(data, axes):
    if not axes:
        return data.permute(*reversed(range(data.dim())))
    if len(axes) != data.dim():
        raise ShapeError("axes %s do not match %d dims" % (axes, data.dim()))
    return data.permute(*axes)


def _transpose_rule(attrs, shapes, dtypes):
    shape, axes = tuple(shapes[0]), attrs['axes']
    if not axes:
        return (shape[::-1],), (dtypes[0],)
    if sorted(a % max(len(shape), 1) for a in axes) != list(range(len(shape))):
        raise ShapeError("axes %s are not a permutation of the %d dims of %s"
                         % (axes, len(shape), shape))
    return (tuple(shape[a] for a in axes),), (dtypes[0],)


def _transpose_back(attrs, in_shapes, out_shapes):
    """The input's shape is the output's, permuted back."""
    out = tuple(out_shapes[0])
    axes = attrs['axes'] or tuple(reversed(range(len(out))))
    if len(axes) != len(out):
        return in_shapes
    src = [0] * len(out)
    for i, a in enumerate(axes):
        src[a] = out[i]
    return [tuple(src)] + list(in_shapes[1:])


register('transpose', view=True, infer=_transpose_rule, back=_transpose_back,
         attrs={'axes': Shape(())})(_transpose)


def _expand_dims(data, axis):
    return data.unsqueeze(_norm_axis(axis, data.dim() + 1))


def _expand_dims_rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    axis = _norm_axis(attrs['axis'], len(shape) + 1)
    return (shape[:axis] + (1,) + shape[axis:],), (dtypes[0],)


register('expand_dims', view=True, infer=_expand_dims_rule,
         attrs={'axis': Int()})(_expand_dims)


def _squeeze(data, axis):
    if axis is None:
        out = data.squeeze()
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        axes = [_norm_axis(a, data.dim()) for a in axes]
        for a in axes:
            if data.shape[a] != 1:
                raise ShapeError("cannot squeeze axis %d of size %d" % (a, data.shape[a]))
        out = data.squeeze(tuple(axes))
    return out.reshape(1) if out.dim() == 0 else out


def _squeeze_rule(attrs, shapes, dtypes):
    shape, axis = tuple(shapes[0]), attrs['axis']
    if axis is None:
        out = tuple(d for d in shape if d != 1)
    else:
        axes = {_norm_axis(a, len(shape)) for a in (axis if isinstance(axis, tuple) else (axis,))}
        for a in axes:
            if shape[a] != 1:
                raise ShapeError("cannot squeeze axis %d of size %d" % (a, shape[a]))
        out = tuple(d for i, d in enumerate(shape) if i not in axes)
    return (out or (1,),), (dtypes[0],)


register('squeeze', view=True, infer=_squeeze_rule,
         attrs={'axis': Axis(None)})(_squeeze)


def rows(data):
    """``data`` as a matrix of one row per item of its first axis (a scalar: 1 x 1); an empty
    batch is (0, features), which reshape(0, -1) cannot say."""
    return data.flatten(1) if data.dim() > 1 else data.reshape(-1, 1)


def _flatten(data):
    return rows(data)


register('Flatten', aliases=('flatten',), view=True)(_flatten)


def _concat(*data, dim, num_args):
    return torch.cat(data, dim=dim)


def _concat_rule(attrs, shapes, dtypes):
    dim = attrs['dim']
    base = shapes[0]
    axis = _norm_axis(dim, len(base), 'dim')
    total = 0
    for s, d in zip(shapes, dtypes):
        if len(s) != len(base) or any(a != b for k, (a, b) in enumerate(zip(s, base)) if k != axis):
            raise ShapeError("inputs of shapes %s do not match except on dim %d"
                             % (list(shapes), dim))
        if d != dtypes[0]:
            raise ShapeError("inputs have different dtypes %s" % (list(dtypes),))
        total += s[axis]
    out = list(base)
    out[axis] = total
    return (tuple(out),), (dtypes[0],)


def concat_back(attrs, in_shapes, out_shapes):
    """One input of unknown size along ``dim`` from the output and the other inputs."""
    out = out_shapes[0]
    if not out:
        return in_shapes
    axis = attrs['dim'] % len(out)
    # The other axes are the output's (MXNet fills them in every input).
    in_shapes = [tuple(d or (o if i != axis else 0) for i, (d, o) in enumerate(zip(s, out)))
                 if s and len(s) == len(out) else s for s in in_shapes]
    unknown = [i for i, s in enumerate(in_shapes) if s is None or len(s) != len(out) or
               not all(s)]
    if len(unknown) != 1:
        return in_shapes
    rest = sum(s[axis] for i, s in enumerate(in_shapes) if i != unknown[0])
    if rest >= out[axis]:
        return in_shapes
    filled = list(in_shapes)
    filled[unknown[0]] = tuple(out[:axis]) + (out[axis] - rest,) + tuple(out[axis + 1:])
    return filled


register('Concat', aliases=('concat',), inputs=('*data',), key_var_num_args='num_args',
         infer=_concat_rule, back=concat_back,
         attrs={'num_args': Int(0), 'dim': Int(1)})(_concat)


def _stack(*data, axis, num_args):
    return torch.stack(data, dim=axis)


def _stack_rule(attrs, shapes, dtypes):
    for s in shapes:
        if s != shapes[0]:
            raise ShapeError("stack needs inputs of one shape, got %s" % (list(shapes),))
    axis = _norm_axis(attrs['axis'], len(shapes[0]) + 1)
    out = list(shapes[0])
    out.insert(axis, len(shapes))
    return (tuple(out),), (dtypes[0],)


register('stack', inputs=('*data',), key_var_num_args='num_args', infer=_stack_rule,
         attrs={'axis': Int(0), 'num_args': Int(0)})(_stack)


def _split(data, num_outputs, axis, squeeze_axis):
    axis = _norm_axis(axis, data.dim())
    if data.shape[axis] % num_outputs:
        raise ShapeError("axis %d of size %d does not split into %d equal parts"
                         % (axis, data.shape[axis], num_outputs))
    parts = torch.chunk(data, num_outputs, dim=axis)
    if squeeze_axis:
        parts = [p.squeeze(axis) for p in parts]
    return parts[0] if num_outputs == 1 else tuple(parts)     # one output: one tensor


def _split_back(attrs, in_shapes, out_shapes):
    """The data's unknown dimensions from any output's: the split axis is num_outputs times
    the output's (or num_outputs, where it was squeezed away)."""
    data = in_shapes[0]
    outs = [o for o in out_shapes if o]
    out = max(outs, key=lambda o: sum(1 for d in o if d)) if outs else None    # most known
    if not data or out is None:
        return in_shapes
    n = attrs['num_outputs']
    axis = attrs['axis'] % len(data)
    if attrs['squeeze_axis']:
        whole = tuple(out[:axis]) + (n,) + tuple(out[axis:])
    else:
        whole = tuple(o * n if i == axis else o for i, o in enumerate(out))
    if len(whole) != len(data):
        return in_shapes
    return [tuple(d or w for d, w in zip(data, whole))]


register('SliceChannel', aliases=('split',), view=True, back=_split_back,
         num_outputs=lambda attrs: attrs['num_outputs'],
         attrs={'num_outputs': Int(), 'axis': Int(1), 'squeeze_axis': Bool(False)})(_split)


def _split_v2(data, indices, axis, squeeze_axis, sections):
    """Pieces of ``data`` along ``axis`` starting at each of ``indices`` (the first is 0)."""
    axis = _norm_axis(axis, data.dim())
    n = data.shape[axis]
    if sections > 0:        # equal parts (sym.split_v2 with a number: the size is not known)
        if n % sections:
            raise ShapeError("axis %d of length %d does not split into %d equal parts"
                             % (axis, n, sections))
        indices = [i * (n // sections) for i in range(sections)]
    bounds = list(indices) + [n]
    if any(b < a for a, b in zip(bounds, bounds[1:])) or bounds[0] != 0:
        raise ShapeError("split indices %s are not ascending from 0 within axis %d of length %d"
                         % (tuple(indices[1:]), axis, n))
    parts = [data.narrow(axis, a, b - a) for a, b in zip(bounds, bounds[1:])]
    if squeeze_axis:
        parts = [p.squeeze(axis) for p in parts]
    return parts[0] if len(parts) == 1 else tuple(parts)


register('_split_v2', view=True,
         num_outputs=lambda attrs: attrs['sections'] or len(attrs['indices']),
         attrs={'indices': Shape(), 'axis': Int(0), 'squeeze_axis': Bool(False),
                'sections': Int(0)})(_split_v2)


def _slice_tuple(shape, begin, end, step):
    if len(begin) > len(shape) or len(end) != len(begin):
        raise ShapeError("begin %s / end %s do not fit shape %s" % (begin, end, shape))
    index = []
    for k, b in enumerate(begin):
        e = end[k]
        s = step[k] if k < len(step) and step[k] is not None else 1
        if s == 0:
            raise ShapeError("slice step must not be 0")
        index.append(slice(b, e, s))
    return tuple(index)


def _slice(data, begin, end, step):
    """``data[begin[0]:end[0]:step[0], ...]``; None bounds and negative steps as in Python."""
    index = _slice_tuple(tuple(data.shape), begin, end, step)
    if all(s.step is None or s.step > 0 for s in index):
        return data[index]
    out = data
    for axis, s in enumerate(index):    # torch has no negative steps: gather those axes
        if s.step is not None and s.step < 0:
            picked = list(range(out.shape[axis])[s])
            out = out.index_select(axis, torch.tensor(picked, dtype=torch.long,
                                                      device=out.device))
        else:
            out = out[(slice(None),) * axis + (s,)]
    return out


register('slice', aliases=('crop',), view=True,
         attrs={'begin': Shape(allow_none=True), 'end': Shape(allow_none=True),
                'step': Shape((), allow_none=True)})(_slice)


def _slice_index(data, begin, end, step):
    """A torch index for MXNet's slice bounds: slices, with each negative-step axis given as
    an index tensor shaped to select an outer product (torch has no negative steps)."""
    index = list(_slice_tuple(tuple(data.shape), begin, end, step))
    negative = [k for k, s in enumerate(index) if s.step is not None and s.step < 0]
    if not negative:
        return tuple(index)
    for k, s in enumerate(index):
        r = torch.tensor(list(range(data.shape[k])[s]), dtype=torch.long, device=data.device)
        index[k] = r.reshape((-1,) + (1,) * (len(index) - k - 1))
    return tuple(index)


def _slice_assign(lhs, rhs, begin, end, step):
    """A copy of ``lhs`` whose slice (as ``slice``'s bounds) is replaced by ``rhs``."""
    out = lhs.clone()
    out[_slice_index(lhs, begin, end, step)] = rhs
    return out


def _slice_assign_scalar(data, scalar, begin, end, step):
    """A copy of ``data`` whose slice (as ``slice``'s bounds) is set to ``scalar``."""
    out = data.clone()
    out[_slice_index(data, begin, end, step)] = scalar
    return out


_SLICE = {'begin': Shape(allow_none=True), 'end': Shape(allow_none=True),
          'step': Shape((), allow_none=True)}
register('_slice_assign', inputs=('lhs', 'rhs'), aliases=('_crop_assign',), attrs=_SLICE)(
    _slice_assign)
register('_slice_assign_scalar', aliases=('_crop_assign_scalar',),
         attrs=dict(scalar=Float(0.0), **_SLICE))(_slice_assign_scalar)


def _slice_axis(data, axis, begin, end):
    """``data`` restricted to [begin, end) along ``axis`` (negative bounds count from the end,
    ``end=None`` is the end)."""
    axis = _norm_axis(axis, data.dim())
    n = data.shape[axis]
    b = begin + n if begin < 0 else begin
    e = n if end is None else end + n if end < 0 else end
    if not 0 <= b < e <= n:
        raise ShapeError("begin=%d, end=%s select nothing of axis %d (size %d); expected "
                         "begin < end within the axis" % (begin, end, axis, n))
    return data.narrow(axis, b, e - b)


register('slice_axis', view=True,
         attrs={'axis': Int(), 'begin': Int(), 'end': IntOrNone()})(_slice_axis)


def _slice_like(data, shape_like, axes):
    if not axes:
        if data.dim() != shape_like.dim():
            raise ShapeError("without axes, data %s and shape_like %s need the same number of "
                             "dims" % (tuple(data.shape), tuple(shape_like.shape)))
        axes = tuple(range(shape_like.dim()))
    index = [slice(None)] * data.dim()
    for a in axes:
        a = _norm_axis(a, data.dim())
        if a >= shape_like.dim() or shape_like.shape[a] > data.shape[a]:
            raise ShapeError("axis %d of shape_like %s does not fit data %s"
                             % (a, tuple(shape_like.shape), tuple(data.shape)))
        index[a] = slice(0, shape_like.shape[a])
    return data[tuple(index)]


register('slice_like', inputs=('data', 'shape_like'), view=True,
         attrs={'axes': Shape(())})(_slice_like)


def _np_shape():
    from ..util import is_np_shape     # the setting lives with mx.util; read at call time
    return is_np_shape()


def _tile(data, reps):
    """``data`` repeated ``reps[i]`` times along each axis; the shorter of ``reps`` and the
    shape is padded with leading 1s."""
    return data.repeat(*((1,) * (data.dim() - len(reps)) + tuple(reps)))


def _tile_rule(attrs, shapes, dtypes):
    shape, reps = tuple(shapes[0]), tuple(attrs['reps'])
    if any(r < 0 for r in reps) or (0 in reps and not _np_shape()):
        raise ShapeError("tile: reps=%s must be positive (0 only under NumPy shape semantics)"
                         % (reps,))
    n = max(len(shape), len(reps))
    shape = (1,) * (n - len(shape)) + shape
    reps = (1,) * (n - len(reps)) + reps
    return (tuple(d * r for d, r in zip(shape, reps)),), (dtypes[0],)


register('tile', infer=_tile_rule, attrs={'reps': Shape()})(_tile)


def _repeat(data, repeats, axis):
    if axis is None:
        return data.reshape(-1).repeat_interleave(repeats)
    return data.repeat_interleave(repeats, dim=_norm_axis(axis, data.dim()))


register('repeat', attrs={'repeats': Int(), 'axis': IntOrNone(None)})(_repeat)


def _flip(data, axis):
    axes = axis if isinstance(axis, tuple) else (axis,)
    return torch.flip(data, [_norm_axis(a, data.dim()) for a in axes])


def _flip_rule(attrs, shapes, dtypes):
    axis = attrs['axis']
    for a in (axis if isinstance(axis, tuple) else (axis,)):
        _norm_axis(a, len(shapes[0]))
    return (shapes[0],), (dtypes[0],)


register('reverse', aliases=('flip',), infer=_flip_rule,
         attrs={'axis': Axis()})(_flip)


def _swapaxes(data, dim1, dim2):
    return data.transpose(_norm_axis(dim1, data.dim()), _norm_axis(dim2, data.dim()))


register('SwapAxis', aliases=('swapaxes',), view=True,
         attrs={'dim1': Int(0), 'dim2': Int(0)})(_swapaxes)


def _broadcast_to(data, shape):
    """``data`` broadcast to ``shape`` (same number of dims; 0 keeps a dim)."""
    if len(shape) != data.dim():
        raise ShapeError("cannot broadcast shape %s to %s: broadcast_to needs the same number "
                         "of dims (reshape or expand_dims first)" % (tuple(data.shape), shape))
    target = tuple(s if t == 0 else t for s, t in zip(data.shape, shape))
    for s, t in zip(data.shape, target):
        if s != t and s != 1:
            raise ShapeError("cannot broadcast shape %s to %s" % (tuple(data.shape), shape))
    return data.expand(target)


register('broadcast_to', view=True, attrs={'shape': Shape()})(_broadcast_to)


def _broadcast_like(lhs, rhs, lhs_axes=None, rhs_axes=None):
    if lhs_axes is None and rhs_axes is None:
        return lhs.expand(rhs.shape)
    if not lhs_axes or not rhs_axes or len(lhs_axes) != len(rhs_axes):
        raise ShapeError("lhs_axes %s and rhs_axes %s must be non-empty and of one length "
                         "(or both left out)" % (lhs_axes, rhs_axes))
    target = list(lhs.shape)
    for a, b in zip(lhs_axes, rhs_axes):
        target[_norm_axis(a, lhs.dim())] = rhs.shape[_norm_axis(b, rhs.dim())]
    return lhs.expand(target)


register('broadcast_like', inputs=('lhs', 'rhs'), view=True,
         attrs={'lhs_axes': Shape(None), 'rhs_axes': Shape(None)})(_broadcast_like)


def _broadcast_axis(data, axis, size):
    target = list(data.shape)
    for a, s in zip(axis, size):
        a = _norm_axis(a, data.dim())
        if target[a] != 1:
            raise ShapeError("axis %d has size %d, only size-1 axes broadcast" % (a, target[a]))
        target[a] = s
    return data.expand(target)


register('broadcast_axis', aliases=('broadcast_axes',), view=True,
         attrs={'axis': Shape(()), 'size': Shape(())})(_broadcast_axis)


def _cast(data, dtype):
    target = dtype_torch(dtype)
    if data.requires_grad and not (target.is_floating_point or target.is_complex):
        # recorded into an integer result: MXNet passes the head gradient straight back, so
        # the result's float shadow (ndarray.py) is the cast value with an identity gradient
        return data + (data.to(target).to(data.dtype) - data).detach()
    return data.to(target, copy=True)


register('Cast', aliases=('cast',), infer=lambda a, s, d: ((s[0],), (a['dtype'],)),
         attrs={'dtype': DType()})(_cast)


def _shape_array(data):
    return torch.tensor(tuple(data.shape), dtype=torch.int64, device=data.device)


def _size_array(data):
    return torch.tensor([data.numel()], dtype=torch.int64, device=data.device)


register('shape_array', infer=lambda a, s, d: (((len(s[0]),),), ('int64',)))(_shape_array)
register('size_array', infer=lambda a, s, d: (((1,),), ('int64',)))(_size_array)


def _pad(data, mode, pad_width, constant_value):
    # MXNet gives (before, after) per axis from the first; torch wants them from the last.
    pairs = [pad_width[i:i + 2] for i in range(0, len(pad_width), 2)]
    flat = []
    for before, after in reversed(pairs):
        flat.extend([before, after])
    if mode == 'constant':
        return torch.nn.functional.pad(data, flat, mode='constant', value=constant_value)
    # torch pads the trailing spatial dims only: MXNet pads N and C by 0 for these modes.
    return torch.nn.functional.pad(data, flat[:2 * (data.dim() - 2)], mode=mode)


def _pad_kernel(data, mode, pad_width, constant_value):
    """Pads a 4-d or 5-d array; ``pad_width`` gives (before, after) for every axis, and
    must be 0 for the first two (as MXNet's Pad)."""
    if data.dim() not in (4, 5):
        raise ShapeError("pad supports 4-d and 5-d arrays only, got %d dims" % data.dim())
    if len(pad_width) != 2 * data.dim():
        raise ShapeError("pad_width %s needs 2 entries per axis (%d)" % (pad_width, 2 * data.dim()))
    if any(pad_width[:4]):
        raise ShapeError("pad_width %s pads the first two axes; expected zeros there"
                         % (pad_width,))
    return _pad(data, {'edge': 'replicate'}.get(mode, mode), pad_width, constant_value)


register('Pad', aliases=('pad',),
         attrs={'mode': Enum('constant', 'edge', 'reflect', default='constant'),
                'pad_width': Shape(), 'constant_value': Float(0.0)})(_pad_kernel)


def _depth_to_space(data, block_size):
    """Moves blocks of channels into spatial blocks (MXNet's DCR order): (N, C, H, W) to
    (N, C / b^2, H * b, W * b)."""
    n, c, h, w = _nchw(data, 'depth_to_space')
    b = block_size
    if h <= 0 or w <= 0 or c <= 0:
        raise ShapeError("depth_to_space: data of shape %s has an empty axis"
                         % (tuple(data.shape),))
    if b <= 0 or c % (b * b):
        raise ShapeError("channels %d are not a multiple of block_size^2 = %d" % (c, b * b))
    out = data.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    return out.reshape(n, c // (b * b), h * b, w * b)


def _space_to_depth(data, block_size):
    """The inverse of depth_to_space: (N, C, H, W) to (N, C * b^2, H / b, W / b)."""
    n, c, h, w = _nchw(data, 'space_to_depth')
    b = block_size
    if h <= 0 or w <= 0 or c <= 0:
        raise ShapeError("space_to_depth: data of shape %s has an empty axis"
                         % (tuple(data.shape),))
    if b <= 0 or h % b or w % b:
        raise ShapeError("height %d and width %d are not multiples of block_size %d" % (h, w, b))
    out = data.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
    return out.reshape(n, c * b * b, h // b, w // b)


def _nchw(data, name):
    if data.dim() != 4:
        raise ShapeError("%s needs a 4-d (N, C, H, W) array, got shape %s"
                         % (name, tuple(data.shape)))
    return data.shape


register('depth_to_space', attrs={'block_size': Int()})(_depth_to_space)
register('space_to_depth', attrs={'block_size': Int()})(_space_to_depth)


def _diag(data, k, axis1, axis2):
    """A vector's diagonal matrix (on diagonal ``k``), or the ``k``-th diagonal of an array
    over ``axis1`` and ``axis2`` (appended as the last axis)."""
    if data.dim() == 1:
        return torch.diag(data, k)
    if data.dim() == 0:
        raise ShapeError("diag needs an array of at least 1 dim")
    a1, a2 = _norm_axis(axis1, data.dim()), _norm_axis(axis2, data.dim())
    if a1 == a2:
        raise ShapeError("axis1 and axis2 are both %d" % a1)
    return torch.diagonal(data, offset=k, dim1=a1, dim2=a2)


def _diag_rule(attrs, shapes, dtypes):
    shape, k = shapes[0], attrs['k']
    if len(shape) == 1:
        n = shape[0] + abs(k)
        return ((n, n),), (dtypes[0],)
    if not shape:
        raise ShapeError("diag needs an array of at least 1 dim")
    a1, a2 = _norm_axis(attrs['axis1'], len(shape)), _norm_axis(attrs['axis2'], len(shape))
    if a1 == a2:
        raise ShapeError("axis1 and axis2 are both %d" % a1)
    if k > shape[a2] or -k > shape[a1]:
        raise ShapeError("diag: k=%d is beyond the matrix of %d rows and %d columns"
                         % (k, shape[a1], shape[a2]))
    n = max(0, min(shape[a1], shape[a2] - k) if k >= 0 else min(shape[a1] + k, shape[a2]))
    rest = tuple(d for i, d in enumerate(shape) if i not in (a1, a2))
    return (rest + (n,),), (dtypes[0],)


register('diag', view=True, infer=_diag_rule,
         attrs={'k': Int(0), 'axis1': Int(0), 'axis2': Int(1)})(_diag)


def _cast_storage(data, stype):
    """A copy of ``data`` in storage type ``stype``. neomx keeps every storage type on dense
    storage (see ``nd.sparse``), so the values are copied as they are."""
    return data.clone()


register('cast_storage', attrs={'stype': Enum('default', 'row_sparse', 'csr')},
         infer=lambda a, s, d: ((s[0],), (d[0],)))(_cast_storage)


def _sparse_retain(data, indices):
    """The rows of ``data`` listed in ``indices``; the other rows are 0."""
    keep = torch.zeros(data.shape[0], dtype=torch.bool, device=data.device)
    keep[indices.reshape(-1).long()] = True
    keep = keep.reshape((-1,) + (1,) * (data.dim() - 1))
    return torch.where(keep, data, torch.zeros((), dtype=data.dtype, device=data.device))


register('_sparse_retain', inputs=('data', 'indices'),
         infer=lambda a, s, d: ((s[0],), (d[0],)))(_sparse_retain)
