"""``mx.mon.Monitor``: statistics of every intermediate array of the executors it is installed
on (``Module.install_monitor``), collected every ``interval`` batches.

>>> import neomx as mx
>>> mon = mx.mon.Monitor(1, pattern='fc.*')
>>> ex = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc').simple_bind(
...     mx.cpu(), data=(1, 3))
>>> mon.install(ex)
>>> mon.tic(); _ = ex.forward(); [name for _, name, _ in mon.toc()]
['fc_output', 'fc_weight', 'fc_bias']
"""
import logging
import re
from math import sqrt

from . import ndarray
from .ndarray import NDArray

__all__ = ['Monitor']


class Monitor:
    """Calls ``stat_func(array)`` (default: the root mean square, ``norm(x)/sqrt(size)``) on
    the arrays whose names match ``pattern``: each operator's outputs (and, with
    ``monitor_all``, inputs) as the executor runs, the gradients of backward, and at ``toc``
    the arguments and auxiliary states. ``toc`` returns ``(step, name, text)`` triples,
    sorted by name with ``sort``."""

    def __init__(self, interval, stat_func=None, pattern='.*', sort=False, monitor_all=False):
        if stat_func is None:
            def asum_stat(x):
                return ndarray.norm(x) / sqrt(x.size)
            stat_func = asum_stat
        self.stat_func = stat_func
        self.interval = interval
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

        def stat_helper(name, array):
            if self.activated and self.re_prog.match(name):
                self.queue.append((self.step, name, self.stat_func(array)))
        self.stat_helper = stat_helper

    def install(self, exe):
        """Watches executor ``exe``."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def _wait(self):
        for exe in self.exes:
            for array in exe.arg_arrays + exe.aux_arrays:
                array.wait_to_read()

    def tic(self):
        """Starts collecting if this batch is one of every ``interval``."""
        if self.step % self.interval == 0:
            self._wait()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """Ends collecting; the statistics as ``(step, name, text)``."""
        if not self.activated:
            return []
        self._wait()
        for exe in self.exes:
            for name, array in zip(exe._symbol.list_arguments(), exe.arg_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
            for name, array in zip(exe._symbol.list_auxiliary_states(), exe.aux_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = []
        for step, name, values in self.queue:
            values = [values] if isinstance(values, NDArray) else values
            if not isinstance(values, list):
                raise TypeError("Monitor: stat_func must return an NDArray or a list of them, "
                                "got %s" % type(values).__name__)
            text = ''
            for v in values:
                text += (str(v.asscalar()) if v.shape == (1,) else str(v.asnumpy())) + '\t'
            res.append((step, name, text))
        self.queue = []
        return res

    def toc_print(self):
        """``toc`` and log each line."""
        for step, name, text in self.toc():
            logging.info('Batch: {:7d} {:30s} {:s}'.format(step, name, text))
