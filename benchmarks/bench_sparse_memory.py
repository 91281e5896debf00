"""Memory of sparse arrays: a 10^6 x 10^6 csr matrix with 10^6 non-zeros, and what the
operations MXNet runs on sparse storage add to it.

Each step's peak resident memory (``ru_maxrss``, in a fresh process per run) and the bytes of
the storage's tensors are printed; the dense form of the matrix would take 4 TB (float32).

    .venv/bin/python benchmarks/bench_sparse_memory.py [--n 1000000] [--nnz 1000000]
"""
import argparse
import resource
import time

import numpy as np


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def storage_mb(arr):
    t = arr._sparse_now()
    parts = [t.values()] + ([t.crow_indices(), t.col_indices()] if arr.stype == 'csr'
                            else [t.indices()])
    return sum(p.numel() * p.element_size() for p in parts) / 2 ** 20


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--n', type=int, default=10 ** 6)
    ap.add_argument('--nnz', type=int, default=10 ** 6)
    args = ap.parse_args()
    import neomx as mx
    n, nnz = args.n, args.nnz
    rng = np.random.default_rng(0)
    rows = np.sort(rng.integers(0, n, size=nnz))
    cols = rng.integers(0, n, size=nnz)
    # one value per (row, col): sort the columns within each row, drop repeats
    key = np.unique(rows.astype(np.int64) * n + cols)
    rows, cols = key // n, key % n
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    data = rng.random(len(key), dtype=np.float32)
    base = peak_mb()
    print('| step | peak RSS (MB, above the start) | result storage (MB) | seconds |')
    print('|---|---|---|---|')

    def step(name, fn):
        t0 = time.perf_counter()
        out = fn()
        if isinstance(out, mx.nd.NDArray):
            out.wait_to_read()
        mx.nd.waitall()
        dt = time.perf_counter() - t0
        size = storage_mb(out) if getattr(out, 'stype', 'default') != 'default' else \
            out.size * np.dtype(out.dtype).itemsize / 2 ** 20
        print('| %s | %.0f | %.1f | %.2f |' % (name, peak_mb() - base, size, dt))
        return out

    a = step('csr_matrix((data, indices, indptr)), %d x %d, %d stored' % (n, n, len(key)),
             lambda: mx.nd.sparse.csr_matrix((data, cols, indptr), shape=(n, n)))
    v = mx.nd.ones((n, 1))
    step('dot(csr, dense (n, 1)) -> dense', lambda: mx.nd.dot(a, v))
    r = step('dot(csr.T, dense (n, 1)) -> row_sparse',
             lambda: mx.nd.dot(a, v, transpose_a=True))
    step('csr * 2 -> csr', lambda: a * 2)
    step('sqrt(csr) -> csr', lambda: mx.nd.sqrt(a))
    step('csr + csr -> csr', lambda: a + a)
    step('csr[1000:200000] -> csr', lambda: a[1000:200000])
    step('retain(row_sparse, 10 rows)', lambda: mx.nd.sparse.retain(r, mx.nd.arange(10)))
    step('copyto(cpu(1))', lambda: a.copyto(mx.cpu(1)))


if __name__ == '__main__':
    main()
