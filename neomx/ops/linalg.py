"""Matrix products: dot and batch_dot (with transpose_a / transpose_b)."""
import torch

from .registry import Bool, ShapeError, Str, register


def _dot_shapes(a, b, ta, tb):
    if not a or not b:
        raise ShapeError("dot needs arrays of at least 1 dim, got %s and %s" % (a, b))
    if len(a) == 1 and len(b) == 1:
        if a[0] != b[0]:
            raise ShapeError("vectors of lengths %d and %d" % (a[0], b[0]))
        return (1,)
    # MXNet's dot flattens: lhs (..., k) or transposed (k, ...); rhs (k, ...) or (..., k).
    if ta:
        k_a, rest_a = a[0], a[1:]
    else:
        k_a, rest_a = a[-1], a[:-1]
    if tb:
        k_b, rest_b = b[-1], b[:-1]
    else:
        k_b, rest_b = b[0], b[1:]
    if k_a != k_b:
        raise ShapeError("inner dimensions differ: lhs %s%s and rhs %s%s"
                         % (a, ' transposed' if ta else '', b, ' transposed' if tb else ''))
    return tuple(rest_a) + tuple(rest_b) or (1,)


def _dot_rule(attrs, shapes, dtypes):
    if dtypes[0] != dtypes[1]:
        raise ShapeError("inputs have different dtypes %s and %s" % dtypes)
    return (_dot_shapes(shapes[0], shapes[1], attrs['transpose_a'], attrs['transpose_b']),), \
        (dtypes[0],)


def _dot(lhs, rhs, transpose_a, transpose_b, forward_stype):
    """Matrix product; N-d arrays are flattened to matrices as MXNet does."""
    if lhs.dim() == 1 and rhs.dim() == 1:
        return torch.dot(lhs, rhs).reshape(1)
    if lhs.dim() == 2 and rhs.dim() == 2:
        a = lhs.t() if transpose_a else lhs
        b = rhs.t() if transpose_b else rhs
        return torch.mm(a, b)
    a = lhs.reshape(lhs.shape[0], -1).t() if transpose_a else lhs.reshape(-1, lhs.shape[-1])
    b = rhs.reshape(-1, rhs.shape[-1]).t() if transpose_b else rhs.reshape(rhs.shape[0], -1)
    if lhs.dim() == 1:
        a = lhs.reshape(1, -1)
    if rhs.dim() == 1:
        b = rhs.reshape(-1, 1)
    out = torch.mm(a, b)
    return out.reshape(_dot_shapes(tuple(lhs.shape), tuple(rhs.shape), transpose_a, transpose_b))


register('dot', inputs=('lhs', 'rhs'), infer=_dot_rule, heavy=True,
         attrs={'transpose_a': Bool(False), 'transpose_b': Bool(False),
                'forward_stype': Str('None')})(_dot)


def _batch_dot_rule(attrs, shapes, dtypes):
    a, b = shapes
    if len(a) != 3 or len(b) != 3:
        raise ShapeError("batch_dot needs 3-d inputs, got %s and %s" % (a, b))
    ta, tb = attrs['transpose_a'], attrs['transpose_b']
    m, ka = (a[2], a[1]) if ta else (a[1], a[2])
    kb, n = (b[2], b[1]) if tb else (b[1], b[2])
    if a[0] != b[0] or ka != kb:
        raise ShapeError("batch_dot of %s%s and %s%s" % (a, ' transposed' if ta else '', b,
                                                         ' transposed' if tb else ''))
    if dtypes[0] != dtypes[1]:
        raise ShapeError("inputs have different dtypes %s and %s" % dtypes)
    return ((a[0], m, n),), (dtypes[0],)


def _batch_dot(lhs, rhs, transpose_a, transpose_b, forward_stype):
    a = lhs.transpose(1, 2) if transpose_a else lhs
    b = rhs.transpose(1, 2) if transpose_b else rhs
    return torch.bmm(a, b)


register('batch_dot', inputs=('lhs', 'rhs'), infer=_batch_dot_rule, heavy=True,
         attrs={'transpose_a': Bool(False), 'transpose_b': Bool(False),
                'forward_stype': Str('None')})(_batch_dot)
