"""``mx.io``: data iterators for the symbolic API (Module, FeedForward)."""
from . import io
from .io import DataBatch, DataDesc, DataIter, NDArrayIter, PrefetchingIter, ResizeIter
from .native import CSVIter, LibSVMIter, MNISTIter, MXDataIter

__all__ = ['io', 'DataBatch', 'DataDesc', 'DataIter', 'NDArrayIter', 'PrefetchingIter',
           'ResizeIter', 'CSVIter', 'LibSVMIter', 'MNISTIter', 'MXDataIter']
