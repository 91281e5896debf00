"""A backend for ONNX's backend test suite (``onnx.backend.base.Backend``) over neomx's import.

``prepare(model)`` imports the model (``onnx2mx.import_model.translate``) into a Symbol and its
parameters; ``run(inputs)`` binds them with the inputs and runs the Symbol's forward pass in
predict mode, under NumPy shape semantics (ONNX has 0-d tensors). Graph inputs that an
operator takes as an attribute (a Reshape's shape fed as an input: MXNet's Reshape has no
shape input) are bound as constants when ``run`` knows their values: such a model is imported
again per call (``NeomxRep.bound`` names those inputs).

>>> import onnx.backend.test                                            # doctest: +SKIP
>>> from neomx.contrib.onnx import backend                              # doctest: +SKIP
>>> suite = onnx.backend.test.BackendTest(backend, __name__)            # doctest: +SKIP
"""
import numpy as np

try:
    from onnx.backend.base import Backend, BackendRep
except ImportError:     # the optional extra 'onnx' is absent: prepare() says so (load)
    Backend = BackendRep = object

from ... import context, ndarray as nd
from ...util import np_shape
from .onnx2mx.import_model import load, translate
from .onnx2mx.import_onnx import NeedsConstant, to_ndarray

__all__ = ['NeomxBackend', 'NeomxRep', 'prepare', 'run_model', 'run_node', 'supports_device',
           'to_ndarray', 'to_numpy']


def _context(device):
    kind = str(device).split(':')[0].upper()
    if kind == 'CUDA':
        return context.gpu(0)
    return context.cpu()


def to_numpy(array):
    """A numpy array of an NDArray (bfloat16 as ml_dtypes' bfloat16, which onnx uses)."""
    if array._dtype == 'bfloat16':
        import ml_dtypes
        return array.astype('float32').asnumpy().astype(ml_dtypes.bfloat16)
    return array.asnumpy()


class NeomxRep(BackendRep):
    """An imported model ready to run: ``run(inputs)`` gives its outputs as numpy arrays."""

    def __init__(self, model, device='CPU', check=True):
        self.model = load(model, check)
        self.ctx = _context(device)
        init = {t.name for t in self.model.graph.initializer}
        self.input_names = [i.name for i in self.model.graph.input if i.name not in init]
        self.bound = ()
        self._imported = None
        try:
            self._imported = translate(self.model)[1:]
        except NeedsConstant as e:
            self.bound = e.names

    def _import(self, feeds):
        """The Symbol and parameters with the graph inputs in ``bound`` taken as the constants
        of ``feeds`` (growing ``bound`` while the import asks for more)."""
        while True:
            try:
                return translate(self.model, {k: feeds[k] for k in self.bound})[1:]
            except NeedsConstant as e:
                more = [k for k in e.names if k not in self.bound and k in feeds]
                if not more:
                    raise
                self.bound = tuple(self.bound) + tuple(more)

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            feeds = dict(inputs)
        else:
            if not isinstance(inputs, (list, tuple)):
                inputs = [inputs]
            feeds = dict(zip(self.input_names, inputs))
        feeds = {k: np.asarray(v) for k, v in feeds.items()}
        with np_shape(True):
            sym, arg_params, aux_params = self._imported or self._import(feeds)
            args = {k: v.as_in_context(self.ctx) for k, v in arg_params.items()}
            aux = {k: v.as_in_context(self.ctx) for k, v in aux_params.items()}
            for names, table in ((sym.list_arguments(), args),
                                 (sym.list_auxiliary_states(), aux)):
                for name in names:
                    if name in feeds and name not in table:
                        table[name] = to_ndarray(feeds[name], self.ctx)
            ex = sym.bind(self.ctx, args, aux_states=aux, grad_req='null')
            outs = ex.forward(is_train=False)
            return [to_numpy(o) for o in outs]


class NeomxBackend(Backend):
    """ONNX's backend interface over neomx."""

    @classmethod
    def prepare(cls, model, device='CPU', **kwargs):
        """A ``NeomxRep`` of ``model`` (a ModelProto or a file name) on ``device``."""
        return NeomxRep(model, device)

    @classmethod
    def supports_device(cls, device):
        kind = str(device).split(':')[0].upper()
        if kind == 'CPU':
            return True
        if kind == 'CUDA':
            return context.num_gpus() > 0
        return False

    @classmethod
    def run_model(cls, model, inputs, device='CPU', **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device='CPU', outputs_info=None, opset_version=None,
                 **kwargs):
        """Runs one NodeProto on numpy ``inputs`` (in the node's input order): a model of
        that node alone (for the default domain's ``opset_version``, the newest by
        default) is imported and run."""
        from onnx import TensorProto, defs, helper
        from .onnx2mx.import_onnx import _ONNX_DTYPES
        codes = {v: k for k, v in _ONNX_DTYPES.items()}
        values = [np.asarray(v) for v in inputs]
        ins = [helper.make_tensor_value_info(name, codes.get(v.dtype.name, TensorProto.FLOAT),
                                             v.shape)
               for name, v in zip(node.input, values) if name]
        outs = [helper.make_tensor_value_info(name, TensorProto.UNDEFINED, None)
                for name in node.output if name]
        graph = helper.make_graph([node], 'run_node', ins, outs)
        version = opset_version or defs.onnx_opset_version()
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', version)])
        return NeomxRep(model, device, check=False).run(
            [v for name, v in zip(node.input, values) if name])


prepare = NeomxBackend.prepare
run_model = NeomxBackend.run_model
run_node = NeomxBackend.run_node
supports_device = NeomxBackend.supports_device
