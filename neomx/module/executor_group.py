"""Data parallelism for Module: one executor per device, each bound to its slice of the batch.

The batch is split along each input's batch axis (the ``N`` of its layout) in proportion to
the devices' work loads; each device's executor runs its slice as one compiled operation;
outputs and input gradients are joined back along the same axis. Parameters have one copy per
device (``param_arrays[i][k]``: parameter ``i`` on device ``k``), kept equal by Module's
update.
"""
import logging
from collections import OrderedDict

from .. import context as ctx
from .. import ndarray as nd
from ..base import MXNetError, dtype_np
from ..io import DataDesc

__all__ = ['DataParallelExecutorGroup']


def _split_input_slice(batch_size, work_load_list):
    """Slices of ``range(batch_size)``, one per device, sized by ``work_load_list``."""
    total = float(sum(work_load_list))
    counts = [round(w * batch_size / total) for w in work_load_list]
    if sum(counts) < batch_size:
        counts[-1] += batch_size - sum(counts)
    slices, end = [], 0
    for n in counts:
        begin = int(min(end, batch_size))
        end = int(min(begin + n, batch_size))
        if begin >= end:
            raise MXNetError('Module: cannot split a batch of %d over %d devices (work loads '
                             '%s): some slices would be empty'
                             % (batch_size, len(work_load_list), work_load_list))
        slices.append(slice(begin, end))
    return slices


def _load_general(data, targets, major_axis):
    """Copies each source array (or its slices) into the executors' arrays."""
    for src, dsts, axis in zip(data, targets, major_axis):
        if isinstance(dsts, nd.NDArray):
            src.copyto(dsts)
        elif isinstance(src, (list, tuple)):
            for s, d in zip(src, dsts):
                s.copyto(d)
        else:
            for islice, dst in dsts:
                if axis >= 0 and (islice.start != 0 or src.shape[axis] != islice.stop):
                    part = src[islice.start:islice.stop] if axis == 0 else \
                        nd.slice_axis(src, axis=axis, begin=islice.start, end=islice.stop)
                    part.copyto(dst)
                else:
                    src.copyto(dst)


def _load_batch(batch, targets, major_axis, field):
    if isinstance(batch, list):     # pre-sliced: one batch per device
        srcs = [[getattr(b, field)[i] for b in batch] for i in range(len(targets))]
        _load_general(srcs, [[dst for _, dst in t] for t in targets], major_axis)
    else:
        _load_general(getattr(batch, field), targets, major_axis)


def _merge_multi_context(outputs, major_axis):
    """Each output's per-device pieces joined along its batch axis (the first device's piece
    alone for outputs without one)."""
    merged = []
    for pieces, axis in zip(outputs, major_axis):
        if axis >= 0 and len(pieces) > 1:
            first = pieces[0].context
            merged.append(nd.concat(*[p.as_in_context(first) for p in pieces], dim=axis))
        else:
            merged.append(pieces[0])
    return merged


def _prepare_group2ctxs(group2ctxs, n):
    """``group2ctxs`` as one dict per device."""
    if group2ctxs is None:
        return [None] * n
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != n:
            raise MXNetError('Module: group2ctxs has %d entries for %d devices'
                             % (len(group2ctxs), n))
        return group2ctxs
    if isinstance(group2ctxs, dict):
        out = [{} for _ in range(n)]
        for group, where in group2ctxs.items():
            if isinstance(where, ctx.Context):
                where = [where] * n
            elif len(where) == 1:
                where = list(where) * n
            elif len(where) != n:
                raise MXNetError('Module: group2ctxs[%r] lists %d contexts; expected 1 or %d'
                                 % (group, len(where), n))
            for i in range(n):
                out[i][group] = where[i]
        return out
    raise MXNetError('Module: group2ctxs must be a dict of group names to contexts or a list '
                     'of such dicts, got %r' % (group2ctxs,))


class DataParallelExecutorGroup:
    """The executors of a Module, one per context (see the module docstring).

    ``shared_group``: another group (of a BucketingModule's other bucket) whose parameter
    arrays, gradients and data buffers this one reuses.
    """

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req='write', state_names=None, group2ctxs=None):
        self.param_names = param_names
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = contexts
        self.workload = workload
        self.group2ctxs = _prepare_group2ctxs(group2ctxs, len(contexts))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self._total_exec_bytes = 0
        self.fixed_param_names = fixed_param_names or []
        self.state_names = state_names or []
        if not for_training:
            grad_req = 'null'
        data_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in data_shapes]
        if label_shapes is not None:
            label_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in label_shapes]
        data_names = [x.name for x in data_shapes]
        self.grad_req = self._grad_reqs(grad_req, data_names)
        self.shared_data_arrays = (shared_group.shared_data_arrays if shared_group is not None
                                   else [{} for _ in contexts])
        self.batch_size = None
        self.slices = None
        self.execs = []
        self._default_execs = None
        self.data_arrays = self.label_arrays = self.param_arrays = self.state_arrays = None
        self.grad_arrays = self.aux_arrays = self.input_grad_arrays = None
        self.data_shapes = self.label_shapes = self.data_names = self.label_names = None
        self.data_layouts = self.label_layouts = None
        self.output_names = symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        self.output_layouts = [DataDesc.get_batch_axis(symbol[i].attr('__layout__'))
                               for i in range(self.num_outputs)]
        self.bind_exec(data_shapes, label_shapes, shared_group)

    def _grad_reqs(self, grad_req, data_names):
        if isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(self.arg_names):
                raise MXNetError('Module: grad_req lists %d values for %d arguments'
                                 % (len(grad_req), len(self.arg_names)))
            return dict(zip(self.arg_names, grad_req))
        if not isinstance(grad_req, (str, dict)):
            raise ValueError('grad_req must be one of str, list, tuple, or dict.')
        default = grad_req if isinstance(grad_req, str) else 'write'
        reqs = {}
        for name in self.arg_names:
            if name in self.param_names:
                reqs[name] = 'null' if name in self.fixed_param_names else default
            elif name in data_names:
                reqs[name] = default if self.inputs_need_grad else 'null'
            else:
                reqs[name] = 'null'
        if isinstance(grad_req, dict):
            reqs.update(grad_req)
        return reqs

    def decide_slices(self, data_shapes):
        """The batch axis of each input; fixes ``batch_size`` and the devices' slices."""
        if not data_shapes:
            raise MXNetError('Module: no data shapes to bind')
        axes = [DataDesc.get_batch_axis(x.layout) for x in data_shapes]
        for (name, shape), axis in zip(data_shapes, axes):
            if axis == -1:
                continue
            if self.batch_size is None:
                self.batch_size = shape[axis]
                self.slices = _split_input_slice(self.batch_size, self.workload)
            elif shape[axis] != self.batch_size:
                raise MXNetError('Module: all inputs must have the same batch size: batch_size '
                                 '= %d, but %s has shape %s' % (self.batch_size, name, shape))
        return axes

    def _collect_arrays(self):
        execs = self.execs
        if self.slices:
            self.data_arrays = [[(self.slices[i], e.arg_dict[name]) for i, e in enumerate(execs)]
                                for name, _ in self.data_shapes]
        else:
            self.data_arrays = [[(slice(i, i + 1), e.arg_dict[name])
                                 for i, e in enumerate(execs)] for name, _ in self.data_shapes]
        self.state_arrays = [[e.arg_dict[name] for e in execs] for name in self.state_names]
        if self.label_shapes is not None:
            self.label_arrays = [[(self.slices[i], e.arg_dict[name])
                                  for i, e in enumerate(execs)]
                                 for name, _ in self.label_shapes]
        else:
            self.label_arrays = None
        idx = [i for i, name in enumerate(self.arg_names) if name in self.param_names]
        self.param_arrays = [[e.arg_arrays[i] for e in execs] for i in idx]
        self.grad_arrays = [[e.grad_arrays[i] for e in execs] for i in idx] \
            if self.for_training else None
        if self.inputs_need_grad:
            self.input_grad_arrays = [[e.grad_arrays[self.arg_names.index(name)] for e in execs]
                                      for name, _ in self.data_shapes if name in self.arg_names]
        else:
            self.input_grad_arrays = None
        self.aux_arrays = [[e.aux_arrays[i] for e in execs] for i in range(len(self.aux_names))]

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Binds (or with ``reshape``, reshapes) one executor per device."""
        if self.execs and not reshape:
            raise MXNetError('Module: executors are already bound')
        self.batch_size = None
        self.data_layouts = self.decide_slices(data_shapes)
        if label_shapes is not None:
            self.label_layouts = self.decide_slices(label_shapes)
        for i in range(len(self.contexts)):
            data_i = self._sliced_shape(data_shapes, i, self.data_layouts)
            label_i = self._sliced_shape(label_shapes, i, self.label_layouts) \
                if label_shapes is not None else []
            if reshape:
                self.execs[i] = self._default_execs[i].reshape(
                    allow_up_sizing=True, **dict((d.name, d.shape) for d in data_i + label_i))
            else:
                self.execs.append(self._bind_ith_exec(i, data_i, label_i, shared_group))
        self.data_shapes = data_shapes
        self.label_shapes = label_shapes
        self.data_names = [d.name for d in data_shapes]
        if label_shapes is not None:
            self.label_names = [d.name for d in label_shapes]
        self._collect_arrays()

    def reshape(self, data_shapes, label_shapes):
        """Executors for new input shapes (sharing the parameters)."""
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        if self._default_execs is None:
            self._default_execs = list(self.execs)
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copies the parameters into every device's executor."""
        for e in self.execs:
            e.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """The devices' parameters averaged into ``arg_params`` / ``aux_params``."""
        for names, blocks, target in ((self.param_names, self.param_arrays, arg_params),
                                      (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                if len(block) == 1:
                    value = block[0]
                else:
                    value = sum(w.as_in_context(ctx.cpu()) for w in block) / len(block)
                dst = target[name]
                value = value.astype(dst.dtype) if value.dtype != dst.dtype else value
                value.copyto(dst)

    def forward(self, data_batch, is_train=None):
        """Loads the batch into the executors and runs them."""
        _load_batch(data_batch, self.data_arrays, self.data_layouts, 'data')
        if is_train is None:
            is_train = self.for_training
        first = data_batch[0] if isinstance(data_batch, list) else data_batch
        if self.label_arrays is not None and first is not None and \
                getattr(first, 'label', None):
            _load_batch(data_batch, self.label_arrays, self.label_layouts, 'label')
        for e in self.execs:
            e.forward(is_train=is_train)

    def get_output_shapes(self):
        """``(name, shape)`` of each output, for the whole batch."""
        shapes = []
        for name, out, axis in zip(self.output_names, self.execs[0].outputs,
                                   self.output_layouts):
            shape = list(out.shape)
            if axis >= 0:
                shape[axis] = self.batch_size
            shapes.append((name, tuple(shape)))
        return shapes

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        """The outputs (joined across devices, or ``[output][device]``)."""
        end = self.num_outputs if end is None else end
        outputs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            outputs = _merge_multi_context(outputs, self.output_layouts[begin:end])
        return outputs

    def get_states(self, merge_multi_context=True):
        if merge_multi_context:
            raise MXNetError('Module.get_states: merge_multi_context=True is not supported')
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Copies ``states`` (``[state][device]``) into the state inputs, or fills them with
        ``value``."""
        if states is not None:
            if value is not None:
                raise MXNetError('Module.set_states: give states or value, not both')
            _load_general(states, self.state_arrays, (0,) * len(states))
        else:
            if value is None:
                raise MXNetError('Module.set_states: give states or value')
            for arrays in self.state_arrays:
                for a in arrays:
                    a[:] = value

    def get_input_grads(self, merge_multi_context=True):
        if not self.inputs_need_grad:
            raise MXNetError('Module: bind with inputs_need_grad=True to get input gradients')
        if merge_multi_context:
            return _merge_multi_context(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def backward(self, out_grads=None):
        """Back-propagates ``out_grads`` (sliced per device; None for loss outputs)."""
        if not self.for_training:
            raise MXNetError('Module: re-bind with for_training=True to run backward')
        out_grads = [] if out_grads is None else \
            [out_grads] if isinstance(out_grads, nd.NDArray) else out_grads
        for i, (e, islice) in enumerate(zip(self.execs, self.slices)):
            mine = []
            for grad, axis in zip(out_grads, self.output_layouts):
                if axis >= 0 and len(self.execs) > 1:
                    part = nd.slice_axis(grad, axis=axis, begin=islice.start, end=islice.stop)
                    mine.append(part.as_in_context(self.contexts[i]))
                else:
                    mine.append(grad.as_in_context(self.contexts[i]))
            e.backward(out_grads=mine or None)

    def update_metric(self, eval_metric, labels, pre_sliced):
        """Updates ``eval_metric`` with each device's outputs and its slice of ``labels``."""
        for k, (e, islice) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                mine = labels[k]
            elif len(self.execs) == 1:
                mine = labels
            else:
                mine = []
                for label, axis in zip(labels, self.label_layouts):
                    if axis == 0:
                        mine.append(label[islice])
                    elif axis > 0:
                        mine.append(nd.slice_axis(label, axis=axis, begin=islice.start,
                                                  end=islice.stop))
                    else:
                        mine.append(label)
            eval_metric.update_dict(OrderedDict(zip(self.label_names or [], mine)),
                                    OrderedDict(zip(self.output_names, e.outputs)))

    def _bind_ith_exec(self, i, data_shapes, label_shapes, shared_group):
        shared_exec = None if shared_group is None else shared_group.execs[i]
        shapes = dict((d.name, d.shape) for d in data_shapes)
        shapes.update((d.name, d.shape) for d in label_shapes or [])
        types = {d.name: d.dtype for d in data_shapes}
        attrs = self.symbol.attr_dict()
        for name in self.symbol.list_inputs():
            dt = attrs.get(name, {}).get('__dtype__')
            if name in types and dt is not None and dt != '-1':
                types[name] = dtype_np(int(dt))
        types.update((d.name, d.dtype) for d in label_shapes or [])
        ex = self.symbol.simple_bind(ctx=self.contexts[i], grad_req=self.grad_req,
                                     type_dict=types, shared_arg_names=self.param_names,
                                     shared_exec=shared_exec, group2ctx=self.group2ctxs[i],
                                     shared_buffer=self.shared_data_arrays[i], **shapes)
        self._total_exec_bytes += int(ex.debug_str().split('\n')[-3].split()[1])
        return ex

    def _sliced_shape(self, shapes, i, major_axis):
        out = []
        for desc, axis in zip(shapes, major_axis):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            out.append(DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout))
        return out

    def install_monitor(self, mon):
        for e in self.execs:
            mon.install(e)
