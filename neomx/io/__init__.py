"""``mx.io``: data iterators for the symbolic API (Module, FeedForward)."""
from . import io
from .io import DataBatch, DataDesc, DataIter, NDArrayIter, PrefetchingIter, ResizeIter
from .native import CSVIter, LibSVMIter, MNISTIter, MXDataIter
from .image_record import (ImageRecordInt8Iter, ImageRecordIter, ImageRecordIter_v1,
                           ImageRecordUInt8Iter, ImageRecordUInt8Iter_v1)

__all__ = ['io', 'DataBatch', 'DataDesc', 'DataIter', 'NDArrayIter', 'PrefetchingIter',
           'ResizeIter', 'CSVIter', 'LibSVMIter', 'MNISTIter', 'MXDataIter', 'ImageRecordIter',
           'ImageRecordUInt8Iter', 'ImageRecordInt8Iter', 'ImageRecordIter_v1',
           'ImageRecordUInt8Iter_v1']
