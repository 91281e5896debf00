"""Storage types: which operators give csr and row_sparse results, and their kernels on torch's
sparse tensors.

A ``csr`` array's storage is a ``torch.sparse_csr`` tensor (int64 row pointers and column
indices); a ``row_sparse`` array's is a coalesced ``torch.sparse_coo`` tensor with one sparse
dimension: its indices are the stored rows, its values those rows (a block of shape
``(rows, *shape[1:])``). Both hold only what they store, so their memory is proportional to
the non-zeros.

``RULES`` is MXNet 1.9.1's storage-type inference (its ``FInferStorageType``), as its
operators answer it (checked against it): ``rule(attrs, stypes)`` gives the output storage
types for the inputs' storage types, or None where MXNet falls back to dense (the operator
then runs on dense copies of its sparse inputs and its results are dense). ``KERNELS`` holds
the operators that run on the sparse storage itself; an operator with a rule and no kernel
here computes densely and its result is converted (the values are the same; only the memory
differs).

>>> import torch
>>> from neomx.ops.sparse import to_stype, rule_of
>>> c = to_stype(torch.tensor([[0.0, 1.0], [2.0, 0.0]]), 'csr')
>>> c.values().tolist(), c.col_indices().tolist()
([1.0, 2.0], [1, 0])
>>> rule_of('sin')({}, ('csr',))
('csr',)
"""
import warnings

import torch

from ..base import MXNetError
from .shape import rows as as_rows

__all__ = ['STYPES', 'stype_of', 'to_stype', 'to_dense', 'rule_of', 'kernel_of', 'RULES',
           'KERNELS', 'GRAD_RULES', 'kernel_for', 'rows_of', 'csr_from_coords', 'csr_tensor', 'rsp_tensor']

STYPES = ('default', 'row_sparse', 'csr')

# torch warns once per process that its CSR support is in beta; neomx relies only on its
# construction, conversions and products.
warnings.filterwarnings('ignore', message='Sparse CSR tensor support is in beta')


def stype_of(t):
    """The storage type a tensor's layout stands for."""
    if t.layout is torch.sparse_csr:
        return 'csr'
    if t.layout is torch.sparse_coo:
        return 'row_sparse'
    return 'default'


# -- conversions ----------------------------------------------------------------------------

def to_dense(t):
    return t if t.layout is torch.strided else t.to_dense()


def rsp_tensor(indices, values, shape):
    """A row_sparse tensor storing the rows ``indices`` (ascending, unique) as ``values``."""
    return torch.sparse_coo_tensor(indices.reshape(1, -1), values, tuple(shape),
                                   is_coalesced=True, check_invariants=False)


def csr_tensor(crow, cols, values, shape):
    return torch.sparse_csr_tensor(crow, cols, values, tuple(shape), check_invariants=False)


_rsp = rsp_tensor


def _dense_to_rsp(t):
    nonzero = (as_rows(t) != 0).any(dim=1).nonzero().reshape(-1)
    return _rsp(nonzero, t[nonzero], t.shape)


def _coo_to_rsp(t):
    """A coo tensor (any split of sparse and dense dimensions) as a row_sparse one."""
    if t.sparse_dim() == 1:
        return t.coalesce()
    # more sparse dims: gather the entries' rows into dense blocks
    t = t.coalesce()
    idx, vals = t.indices(), t.values()
    rows, inverse = torch.unique(idx[0], return_inverse=True)
    block = torch.zeros((len(rows),) + tuple(t.shape[1:]), dtype=t.dtype, device=t.device)
    block[(inverse,) + tuple(idx[1:])] = vals
    return _rsp(rows, block, t.shape)


def csr_from_coords(rows, cols, values, shape):
    """A csr tensor of the entries at (``rows``, ``cols``), given in row-major order."""
    counts = torch.bincount(rows, minlength=shape[0]) if rows.numel() else \
        torch.zeros(shape[0], dtype=torch.int64, device=values.device)
    crow = torch.zeros(shape[0] + 1, dtype=torch.int64, device=values.device)
    torch.cumsum(counts, 0, out=crow[1:])
    return csr_tensor(crow, cols.to(torch.int64), values, shape)


def _coo2d_to_csr(t):
    t = t.coalesce()
    rows, cols = t.indices()
    return csr_from_coords(rows, cols, t.values(), t.shape)


def _rsp_to_csr(t):
    t = t.coalesce()
    idx, block = t.indices()[0], t.values()
    nz = (block != 0).nonzero()
    return csr_from_coords(idx[nz[:, 0]], nz[:, 1], block[nz[:, 0], nz[:, 1]], t.shape)


def to_stype(t, stype):
    """Tensor ``t`` (dense, csr or coo) in storage type ``stype``; ``t`` itself when it is."""
    have = stype_of(t)
    if stype == 'default':
        return to_dense(t)
    if stype == 'csr':
        if t.dim() != 2:
            raise ValueError("a csr array is 2-d, got shape %s" % (tuple(t.shape),))
        if have == 'csr':
            return t
        if have == 'default':
            return t.to_sparse_csr()
        return _coo2d_to_csr(t) if t.sparse_dim() == 2 else _rsp_to_csr(t)
    if have == 'row_sparse':
        return _coo_to_rsp(t)
    if have == 'csr':
        coo = t.to_sparse_coo().coalesce()
        return _coo_to_rsp(coo)
    return _dense_to_rsp(t)


def rows_of(t, rows):
    """The dense rows ``rows`` (int64) of ``t``, a tensor of any storage type."""
    if t.layout is torch.strided:
        return t[rows]
    if t.layout is torch.sparse_csr:
        t = to_stype(t, 'row_sparse')
    t = t.coalesce()
    idx = t.indices()[0]
    out = torch.zeros((len(rows),) + tuple(t.shape[1:]), dtype=t.dtype, device=t.device)
    if idx.numel():
        pos = torch.searchsorted(idx, rows).clamp(max=idx.numel() - 1)
        hit = idx[pos] == rows
        out[hit] = t.values()[pos[hit]]
    return out


def _with_values(t, values):
    """``t``'s sparsity pattern with other stored values."""
    if t.layout is torch.sparse_csr:
        return csr_tensor(t.crow_indices(), t.col_indices(), values, t.shape)
    return _rsp(t.indices()[0], values, t.shape)


def _coords(t):
    """(rows, cols) of a csr tensor's stored entries, row-major."""
    crow = t.crow_indices()
    rows = torch.repeat_interleave(torch.arange(t.shape[0], device=crow.device), crow.diff())
    return rows, t.col_indices()


# -- storage-type rules ---------------------------------------------------------------------

RULES = {}
KERNELS = {}
_SPARSE = ('csr', 'row_sparse')


def rule_of(name):
    return RULES.get(name)


def kernel_of(name):
    return KERNELS.get(name)


def _rule(*names):
    def wrap(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return wrap


def _kernel(*names):
    def wrap(fn):
        for n in names:
            KERNELS[n] = fn
        return fn
    return wrap


# Operators whose value at 0 is 0 keep the storage type: MXNet runs them on the stored values.
_ZERO_AT_ZERO = ('abs', 'sign', 'round', 'rint', 'ceil', 'floor', 'trunc', 'fix', 'square',
                 'sqrt', 'cbrt', 'expm1', 'log1p', 'sin', 'tan', 'arcsin', 'arctan', 'degrees',
                 'radians', 'sinh', 'tanh', 'arcsinh', 'arctanh', 'relu', 'negative',
                 '_copy', 'BlockGrad', 'make_loss', '_detach',
                 # MXNet clips the stored values only, and scatters a number onto them
                 'clip', '_scatter_plus_scalar', '_scatter_minus_scalar',
                 '_mul_scalar', '_div_scalar')


@_rule(*_ZERO_AT_ZERO)
def _keep(attrs, stypes):
    return (stypes[0],) if stypes[0] in _SPARSE else None


def _values_kernel(op):
    def run(t, **attrs):
        return _with_values(t, op.kernel(t.values(), **attrs))
    return run


# x + s and x - s keep the storage type for s == 0 only; a comparison with a number keeps it
# where 0 (op) s is false (so the result is 0 wherever x stores nothing)
_AT_ZERO = {'_plus_scalar': lambda s: s, '_minus_scalar': lambda s: -s,
            '_equal_scalar': lambda s: 0 == s, '_not_equal_scalar': lambda s: 0 != s,
            '_greater_scalar': lambda s: 0 > s, '_greater_equal_scalar': lambda s: 0 >= s,
            '_lesser_scalar': lambda s: 0 < s, '_lesser_equal_scalar': lambda s: 0 <= s}


def _scalar_rule(at_zero):
    def rule(attrs, stypes):
        if stypes[0] in _SPARSE and not at_zero(float(attrs.get('scalar', 0.0))):
            return (stypes[0],)
        return None
    return rule


for _n, _f in _AT_ZERO.items():
    RULES[_n] = _scalar_rule(_f)


@_rule('zeros_like')
def _zeros_like_rule(attrs, stypes):
    return _keep(attrs, stypes)


@_kernel('zeros_like')
def _zeros_like(t):
    if t.layout is torch.sparse_csr:
        return csr_from_coords(torch.zeros(0, dtype=torch.int64, device=t.device),
                               torch.zeros(0, dtype=torch.int64, device=t.device),
                               t.values()[:0], t.shape)
    return _rsp(t.indices()[0][:0], t.values()[:0], t.shape)


@_rule('cast_storage')
def _cast_rule(attrs, stypes):
    return (attrs['stype'],)


@_kernel('cast_storage')
def _cast_storage(t, stype):
    out = to_stype(t, stype)
    return out.clone() if out is t else out


# -- two arrays ----------------------------------------------------------------------------

@_rule('elemwise_add', 'elemwise_sub', '_elemwise_maximum', '_elemwise_minimum',
       '_elemwise_hypot')
def _same_type_rule(attrs, stypes):
    a, b = stypes
    return (a,) if a == b and a in _SPARSE else None


@_rule('elemwise_mul')
def _mul_rule(attrs, stypes):
    a, b = stypes
    if a in _SPARSE and b in (a, 'default'):
        return (a,)
    if b in _SPARSE and a == 'default':
        return (b,)
    return None


@_rule('broadcast_mul', 'broadcast_div')
def _broadcast_rule(attrs, stypes):
    return ('csr',) if tuple(stypes) == ('csr', 'default') else None


@_rule('_scatter_elemwise_div')
def _scatter_div_rule(attrs, stypes):
    return ('row_sparse',) if stypes[0] == 'row_sparse' else None


def _union_rows(a, b):
    """(rows, a's rows there, b's rows there) over the rows either row_sparse tensor stores."""
    rows = torch.unique(torch.cat([a.indices()[0], b.indices()[0]]))
    return rows, rows_of(a, rows), rows_of(b, rows)


def _union_entries(a, b):
    """(rows, cols, a's values there, b's values there) over the entries either csr stores."""
    (ra, ca), (rb, cb) = _coords(a), _coords(b)
    n = a.shape[1]
    la, lb = ra * n + ca, rb * n + cb
    lin = torch.unique(torch.cat([la, lb]))
    return lin // n, lin % n, _gather(lin, la, a.values()), _gather(lin, lb, b.values())


def _gather(lin, have, values):
    out = torch.zeros(lin.shape, dtype=values.dtype, device=values.device)
    if have.numel():
        pos = torch.searchsorted(have, lin).clamp(max=have.numel() - 1)
        hit = have[pos] == lin
        out[hit] = values[pos[hit]]
    return out


def _pairwise(op):
    """A binary operator of two arrays of one sparse type (or a sparse and a dense one, for
    multiplication) on the entries either stores."""
    def run(a, b, **attrs):
        la, lb = a.layout, b.layout
        if la is torch.strided or lb is torch.strided:        # sparse times dense
            s, d = (a, b) if lb is torch.strided else (b, a)
            if s.layout is torch.sparse_csr:
                r, c = _coords(s)
                return _with_values(s, op.kernel(s.values(), d[r, c]) if s is a
                                    else op.kernel(d[r, c], s.values()))
            rows = s.indices()[0]
            return _with_values(s, op.kernel(s.values(), d[rows]) if s is a
                                else op.kernel(d[rows], s.values()))
        if la is torch.sparse_csr:
            r, c, va, vb = _union_entries(a, b)
            return csr_from_coords(r, c, op.kernel(va, vb, **attrs), a.shape)
        rows, va, vb = _union_rows(a.coalesce(), b.coalesce())
        return _rsp(rows, op.kernel(va, vb, **attrs), a.shape)
    return run


def _broadcast_csr(op):
    def run(a, b):
        r, c = _coords(a)
        d = b.expand(a.shape) if b.dim() == 2 else b.reshape((1,) * (2 - b.dim()) + tuple(
            b.shape)).expand(a.shape)
        return _with_values(a, op.kernel(a.values(), d[r, c]))
    return run


def _scatter_div(a, b):
    rows = a.indices()[0]
    return _with_values(a, a.values() / rows_of(b, rows))


KERNELS['_scatter_elemwise_div'] = _scatter_div


@_rule('add_n')
def _add_n_rule(attrs, stypes):
    return ('row_sparse',) if all(s == 'row_sparse' for s in stypes) else None


@_kernel('add_n')
def _add_n(*ts, **attrs):
    rows = torch.unique(torch.cat([t.indices()[0] for t in ts]))
    total = rows_of(ts[0], rows)
    for t in ts[1:]:
        total = total + rows_of(t, rows)
    return _rsp(rows, total, ts[0].shape)


# -- dot ------------------------------------------------------------------------------------

@_rule('dot')
def _dot_rule(attrs, stypes):
    a, b = stypes
    fs = attrs.get('forward_stype')
    if fs not in (None, 'None'):
        return (fs,) if fs != 'default' or a == 'csr' else None
    ta = attrs.get('transpose_a', False)
    if a == 'default' and b == 'csr' and not ta:
        return ('csr',)
    if a == 'csr' and b in ('default', 'row_sparse'):
        # csr times dense or row_sparse: row_sparse transposed, else dense (from the stored
        # values alone, as MXNet's kernels compute it)
        return ('row_sparse',) if ta else ('default',)
    return None


def _dot_dense_result(a, b, ta, tb):
    """lhs^(T?) rhs^(T?) as a dense tensor, keeping a csr lhs sparse in the product."""
    if b.layout is not torch.strided:
        b = to_dense(b)
    if tb:
        b = b.t()
    vec = b.dim() == 1
    if vec:
        b = b.reshape(-1, 1)
    if a.layout is torch.sparse_csr:
        out = torch.sparse.mm(a.t().to_sparse_csr() if ta else a, b)
    else:
        a = to_dense(a)
        out = (a.t() if ta else a) @ b
    return out.reshape(-1) if vec else out


def _dot_csr_t(a, b):
    """csr^T times dense (or row_sparse) as row_sparse: only the rows a column of ``a`` holds
    anything in are computed."""
    r, c = _coords(a)
    cols, inverse = torch.unique(c, return_inverse=True)
    compact = csr_from_coords_unsorted(inverse, r, a.values(), (len(cols), a.shape[0]))
    b = to_dense(b)
    vec = b.dim() == 1
    out = torch.sparse.mm(compact, b.reshape(-1, 1) if vec else b)
    shape = (a.shape[1],) if vec else (a.shape[1], b.shape[1])
    return _rsp(cols, out.reshape(-1) if vec else out, shape)


def csr_from_coords_unsorted(rows, cols, values, shape):
    order = torch.argsort(rows * shape[1] + cols)
    return csr_from_coords(rows[order], cols[order], values[order], shape)


def _dot_kernel(dense_dot):
    def run(a, b, transpose_a=False, transpose_b=False, forward_stype=None):
        if a.layout is torch.strided and b.layout is torch.strided:
            fs = 'default' if forward_stype in (None, 'None') else forward_stype
            return to_stype(dense_dot(a, b, transpose_a, transpose_b, None), fs)
        return _dot(a, b, transpose_a, transpose_b, forward_stype)
    return run


def _dot(a, b, transpose_a=False, transpose_b=False, forward_stype=None):
    fs = None if forward_stype in (None, 'None') else forward_stype
    if fs is None:
        fs = _dot_rule({'transpose_a': transpose_a}, (stype_of(a), stype_of(b)))
        fs = fs[0] if fs else 'default'
    if a.layout is torch.sparse_csr and transpose_a and not transpose_b and fs == 'row_sparse':
        return _dot_csr_t(a, b)
    if b.layout is torch.sparse_csr and a.layout is torch.strided and not transpose_a:
        # dense times csr: (csr^T times dense^T)^T, so the csr stays sparse in the product
        bt = b.to_sparse_coo().t().coalesce()
        bt = csr_from_coords(bt.indices()[0], bt.indices()[1], bt.values(), bt.shape)
        out = torch.sparse.mm(b if transpose_b else bt, a.t()).t()
        return to_stype(out.contiguous(), fs)
    return to_stype(_dot_dense_result(a, b, transpose_a, transpose_b).contiguous(), fs)


# -- reductions, rows, slices ------------------------------------------------------------------

@_rule('sum', 'mean')
def _csr_sum_rule(attrs, stypes):
    # a csr matrix summed over one axis: a dense result from the stored values
    axis = attrs.get('axis')
    axis = axis[0] if isinstance(axis, (tuple, list)) and len(axis) == 1 else axis
    if stypes[0] == 'csr' and axis in (0, 1, -1, -2) and not attrs.get('exclude'):
        return ('default',)
    return None


def _csr_reduce(mean):
    def run(t, axis=None, keepdims=False, exclude=False):
        axis = axis[0] if isinstance(axis, (tuple, list)) else axis
        axis %= 2
        rows, cols = _coords(t)
        v = t.values()
        idx, n = (cols, t.shape[1]) if axis == 0 else (rows, t.shape[0])
        out = torch.zeros(n, dtype=v.dtype, device=v.device).index_add_(0, idx, v)
        if mean:
            out = out / t.shape[axis]
        return out.reshape((1, n) if axis == 0 else (n, 1)) if keepdims else out
    return run


KERNELS['sum'], KERNELS['mean'] = _csr_reduce(False), _csr_reduce(True)


@_rule('_square_sum')
def _square_sum_rule(attrs, stypes):
    axis = attrs.get('axis')
    if stypes[0] == 'row_sparse' and attrs.get('keepdims') and axis in (1, (1,), -1, (-1,)):
        return ('row_sparse',)
    return None


@_kernel('_square_sum')
def _square_sum_rsp(t, axis=None, keepdims=False, exclude=False):
    t = t.coalesce()
    v = t.values()
    sums = (v * v).flatten(1).sum(dim=1, keepdim=True) if v.dim() > 1 else (v * v)[:, None]
    return _rsp(t.indices()[0], sums, (t.shape[0], 1))


@_rule('_sparse_retain')
def _retain_rule(attrs, stypes):
    return ('row_sparse',) if stypes[0] == 'row_sparse' else None


@_kernel('_sparse_retain')
def _retain(t, indices):
    t = to_stype(t, 'row_sparse').coalesce()
    idx = t.indices()[0]
    keep = torch.isin(idx, indices.reshape(-1).to(torch.int64))
    return _rsp(idx[keep], t.values()[keep], t.shape)


@_rule('slice')
def _slice_rule(attrs, stypes):
    return ('csr',) if stypes[0] == 'csr' else None


@_kernel('slice')
def _slice_csr(t, begin, end, step=()):
    if any(s not in (None, 1) for s in (step or ())):
        return to_stype(to_dense(t)[tuple(slice(b, e, s) for b, e, s in zip(
            begin, end, tuple(step) + (None,) * (len(begin) - len(step))))], 'csr')
    bounds = []
    for ax in range(2):
        n = t.shape[ax]
        b = begin[ax] if ax < len(begin) and begin[ax] is not None else 0
        e = end[ax] if ax < len(end) and end[ax] is not None else n
        b, e = (b + n if b < 0 else b), (e + n if e < 0 else e)
        bounds.append((max(0, min(b, n)), max(0, min(e, n))))
    (r0, r1), (c0, c1) = bounds
    return _csr_block(t, r0, max(r0, r1), c0, max(c0, c1))


def _csr_block(t, r0, r1, c0, c1):
    crow = t.crow_indices()
    lo, hi = int(crow[r0]), int(crow[r1])
    cols, vals = t.col_indices()[lo:hi], t.values()[lo:hi]
    rows = torch.repeat_interleave(torch.arange(r1 - r0, device=crow.device),
                                   crow[r0:r1 + 1].diff())
    if c0 > 0 or c1 < t.shape[1]:
        keep = (cols >= c0) & (cols < c1)
        rows, cols, vals = rows[keep], cols[keep] - c0, vals[keep]
    return csr_from_coords(rows, cols, vals, (r1 - r0, c1 - c0))


@_rule('take')
def _take_rule(attrs, stypes):
    # rows of a csr matrix (axis 0) stay csr; mode 'raise' falls back to dense in MXNet
    if stypes[0] == 'csr' and attrs.get('axis', 0) == 0 and attrs.get('mode', 'clip') != 'raise':
        return ('csr',)
    return None


@_kernel('take')
def _take_rows(t, indices, axis=0, mode='clip'):
    n = t.shape[0]
    idx = indices.reshape(-1).to(torch.int64)
    idx = idx.clamp(0, n - 1) if mode == 'clip' else idx.remainder(n)
    crow = t.crow_indices()
    starts, counts = crow[idx], crow[idx + 1] - crow[idx]
    pos = torch.repeat_interleave(starts - torch.cumsum(counts, 0) + counts, counts) + \
        torch.arange(int(counts.sum()), device=crow.device)
    rows = torch.repeat_interleave(torch.arange(len(idx), device=crow.device), counts)
    return csr_from_coords(rows, t.col_indices()[pos], t.values()[pos], (len(idx), t.shape[1]))


@_rule('Concat')
def _concat_rule(attrs, stypes):
    return ('csr',) if attrs.get('dim', 1) == 0 and all(s == 'csr' for s in stypes) else None


@_kernel('Concat')
def _concat_rows(*ts, num_args=None, dim=0):
    crows, off = [ts[0].crow_indices()[:1]], 0
    for t in ts:
        crows.append(t.crow_indices()[1:] + off)
        off += t.values().shape[0]
    shape = (sum(t.shape[0] for t in ts), ts[0].shape[1])
    return csr_tensor(torch.cat(crows), torch.cat([t.col_indices() for t in ts]),
                      torch.cat([t.values() for t in ts]), shape)


@_rule('BatchNorm')
def _batch_norm_rule(attrs, stypes):
    # dense results; MXNet refuses fix_gamma with sparse inputs (its issue #11647)
    if attrs.get('fix_gamma', True) and any(s != 'default' for s in stypes):
        raise MXNetError("BatchNorm: fix_gamma=True is not supported for sparse arrays (inputs "
                         "of storage types %s); convert them with tostype('default') or set "
                         "fix_gamma=False" % (list(stypes),))
    return None


@_rule('_contrib_quadratic')
def _quadratic_rule(attrs, stypes):
    return ('csr',) if stypes[0] == 'csr' and float(attrs.get('c', 0.0)) == 0.0 else None


# The storage types of gradients: ``GRAD_RULES[name](attrs, input stypes)`` gives the storage
# type of the gradient an operator hands each input, where MXNet makes it sparse (an executor
# bound with simple_bind makes such an argument's gradient array of that type).
GRAD_RULES = {
    'Embedding': lambda attrs, st: ('default', 'row_sparse' if attrs.get('sparse_grad')
                                    else 'default'),
    '_contrib_SparseEmbedding': lambda attrs, st: ('default', 'row_sparse'),
    'dot': lambda attrs, st: ('default', 'row_sparse') if tuple(st) == ('csr', 'default') and
    not attrs.get('transpose_a') and not attrs.get('transpose_b') else None,
}


def kernel_for(op):
    """The function running ``op`` on tensors of any storage type, as an operator on sparse
    arrays runs imperatively: its sparse kernel where MXNet's rule gives sparse results for
    the inputs' storage types, else its kernel on dense forms of the inputs (a graph
    interpreter's ``kernel``)."""
    rule, sparse_kernel = RULES.get(op.name), KERNELS.get(op.name)

    def run(*args, **kw):
        stypes = tuple(stype_of(a) for a in args if a is not None)
        if all(s == 'default' for s in stypes) and op.name not in ('cast_storage', 'dot'):
            return op.kernel(*args, **kw)
        out = rule(kw, stypes) if rule is not None else None
        if out is not None and sparse_kernel is not None:
            return sparse_kernel(*args, **kw)
        res = op.kernel(*[None if a is None else to_dense(a) for a in args], **kw)
        if out is None:
            return res
        if isinstance(res, torch.Tensor):
            return to_stype(res, out[0])
        return type(res)(to_stype(r, s) for r, s in zip(res, out))
    return run


def register_value_kernels(get):
    """Fills ``KERNELS`` for the operators that run on the stored values or entries, given the
    registry's ``get`` (called once the operators are registered)."""
    for name in _ZERO_AT_ZERO + tuple(_AT_ZERO) + ('_contrib_quadratic',):
        KERNELS.setdefault(name, _values_kernel(get(name)))
    for name in ('elemwise_add', 'elemwise_sub', 'elemwise_mul', '_elemwise_maximum',
                 '_elemwise_minimum', '_elemwise_hypot'):
        KERNELS.setdefault(name, _pairwise(get(name)))
    for name in ('broadcast_mul', 'broadcast_div'):
        KERNELS.setdefault(name, _broadcast_csr(get(name)))
    KERNELS.setdefault('dot', _dot_kernel(get('dot').kernel))
