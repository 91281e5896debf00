"""``nd.linalg``: the operators registered as ``_linalg_<name>`` (gemm, gemm2, potrf, potri,
trmm, trsm, syrk, sumlogdiag, inverse, det, slogdet, gelqf, syevd, extractdiag, makediag,
extracttrian, maketrian). Leading axes are a batch; the matrices are the last two.

>>> import neomx as mx
>>> a = mx.nd.array([[4.0, 2.0], [2.0, 3.0]])
>>> mx.nd.linalg.potrf(a).asnumpy().tolist()[1][0]
1.0
>>> mx.nd.linalg.gemm2(a, a, transpose_b=True).shape
(2, 2)
"""
from ..ops import registry as _registry
from .ndarray import _op as _nd_op


def __getattr__(name):
    full = '_linalg_' + name
    if _registry.exists(full):
        return _nd_op(full)
    raise AttributeError("neomx.nd.linalg has no operator %r" % name)


def __dir__():
    return sorted(n[len('_linalg_'):] for n in _registry.all_ops() if n.startswith('_linalg_'))
