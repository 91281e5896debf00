"""MXNet's ``mxnet.runtime``: which features this build has, asked at run time.

MXNet reported the options its C++ library was compiled with; neomx reports what the torch
build underneath it and the installed optional packages provide, under MXNet's feature names,
so code that checks ``Features().is_enabled('CUDA')`` takes the right branch.

>>> from neomx import runtime
>>> features = runtime.Features()
>>> features.is_enabled('INT64_TENSOR_SIZE')
True
>>> features is runtime.Features()
True
"""
import collections
import importlib.util
import platform

import torch

__all__ = ['Feature', 'feature_list', 'Features']


class Feature:
    """One feature: ``name`` and whether it is ``enabled``."""

    __slots__ = ('name', 'enabled')

    def __init__(self, name, enabled):
        self.name = name
        self.enabled = bool(enabled)

    def __repr__(self):
        return ('\u2714 ' if self.enabled else '\u2716 ') + self.name


def _has_module(name):
    return importlib.util.find_spec(name) is not None


def _cpu_flags():
    """The x86 instruction-set extensions of this CPU, from /proc/cpuinfo where it exists."""
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('flags'):
                    return set(line.split(':', 1)[1].split())
    except OSError:
        pass
    return set()


def _features():
    cuda = torch.cuda.is_available()
    dist = torch.distributed.is_available()
    flags = _cpu_flags() if platform.machine() in ('x86_64', 'AMD64', 'i686') else set()
    return [
        ('CUDA', cuda),
        ('CUDNN', cuda and torch.backends.cudnn.is_available()),
        ('NCCL', cuda and dist and torch.distributed.is_nccl_available()),
        ('CUDA_RTC', False),
        ('TENSORRT', False),
        ('CPU_SSE', 'sse' in flags),
        ('CPU_SSE2', 'sse2' in flags),
        ('CPU_SSE3', 'pni' in flags),
        ('CPU_SSE4_1', 'sse4_1' in flags),
        ('CPU_SSE4_2', 'sse4_2' in flags),
        ('CPU_SSE4A', 'sse4a' in flags),
        ('CPU_AVX', 'avx' in flags),
        ('CPU_AVX2', 'avx2' in flags),
        ('OPENMP', torch.backends.openmp.is_available()),
        ('SSE', 'sse' in flags),
        ('F16C', 'f16c' in flags),
        ('JEMALLOC', False),
        ('BLAS_OPEN', 'openblas' in torch.__config__.show().lower()),
        ('BLAS_ATLAS', False),
        ('BLAS_MKL', torch.backends.mkl.is_available()),
        ('BLAS_APPLE', False),
        ('LAPACK', torch.backends.mkl.is_available() or 'lapack' in torch.__config__.show().lower()),
        ('MKLDNN', torch.backends.mkldnn.is_available()),
        ('OPENCV', _has_module('cv2') or _has_module('PIL')),
        ('CAFFE', False),
        ('PROFILER', True),
        ('DIST_KVSTORE', dist),
        ('CXX14', True),
        ('INT64_TENSOR_SIZE', True),       # torch tensors index with 64-bit integers
        ('SIGNAL_HANDLER', True),
        ('DEBUG', False),
        ('TVM_OP', False),
    ]


def feature_list():
    """Every feature, as a list of ``Feature``."""
    return [Feature(name, enabled) for name, enabled in _features()]


class Features(collections.OrderedDict):
    """The features by name (one instance per process)."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super().__init__(cls.instance, [(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self):
        pass                            # filled once, in __new__

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        """Whether feature ``feature_name`` (any case) is enabled; RuntimeError naming the known
        features for an unknown name."""
        name = feature_name.upper()
        if name not in self:
            raise RuntimeError("Feature '%s' is unknown, known features are: %s"
                               % (feature_name, list(self.keys())))
        return self[name].enabled
