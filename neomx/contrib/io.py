"""``mx.contrib.io.DataLoaderIter``: a Gluon ``DataLoader`` as an ``mx.io.DataIter`` (for
``Module.fit``)."""
from ..io import DataBatch, DataDesc, DataIter

__all__ = ['DataLoaderIter']


class DataLoaderIter(DataIter):
    """Batches of ``loader`` (yielding ``(data, label)``) as ``DataBatch`` objects, the last
    short batch padded to the full size by repeating its last example.

    Parameters
    ----------
    loader : gluon.data.DataLoader
    data_name, label_name : str
    dtype : str, default 'float32'
        The dtype the batches are cast to.
    """

    def __init__(self, loader, data_name='data', label_name='softmax_label', dtype='float32'):
        super().__init__()
        self._loader = loader
        self._iter = iter(loader)
        data, label = next(self._iter)
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._current = None
        self.reset()

    def reset(self):
        self._iter = iter(self._loader)

    def iter_next(self):
        try:
            self._current = next(self._iter)
        except StopIteration:
            self._current = None
        return self._current is not None

    def getdata(self):
        return [self._pad(self._current[0])]

    def getlabel(self):
        return [self._pad(self._current[1])]

    def getpad(self):
        return self.batch_size - self._current[0].shape[0]

    def getindex(self):
        return None

    def _pad(self, x):
        from .. import ndarray as nd
        x = x.astype(self.dtype)
        short = self.batch_size - x.shape[0]
        if short:
            x = nd.concat(x, nd.repeat(x[-1:], short, axis=0), dim=0)
        return x

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return DataBatch(self.getdata(), self.getlabel(), pad=self.getpad())


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from .. import ndarray as nd  # noqa: E402,F401
