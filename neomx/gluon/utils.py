"""Gluon helpers: splitting a batch across devices, clipping gradients by their global norm,
and downloading files.

>>> import neomx as mx
>>> from neomx.gluon import utils
>>> parts = utils.split_and_load(mx.nd.arange(8).reshape((4, 2)), [mx.cpu(0), mx.cpu(1)])
>>> [(p.shape, str(p.context)) for p in parts]
[((2, 2), 'cpu(0)'), ((2, 2), 'cpu(1)')]
"""
import os
import uuid
import warnings
import weakref
from collections import OrderedDict

import numpy as np
import torch

from .. import engine as _engine
from .. import ndarray as nd
from ..base import MXNetError
from ..ndarray import NDArray
from ..ndarray.ndarray import empty_like_spec, new_array
from .data._download import check_sha1 as _check_sha1, fetch as _fetch, repo_url as _repo_url

__all__ = ['split_data', 'split_and_load', 'clip_global_norm', 'check_sha1', 'download',
           'replace_file', 'shape_is_known']


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Splits ``data`` into ``num_slice`` slices along ``batch_axis`` (the first
    ``size % num_slice`` slices one longer when ``even_split`` is False). Slices along axis 0
    are views, as in MXNet.

    >>> import neomx as mx
    >>> from neomx.gluon.utils import split_data
    >>> [s.shape for s in split_data(mx.nd.zeros((5, 2)), 2, even_split=False)]
    [(3, 2), (2, 2)]
    """
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            "data with shape %s cannot be evenly split into %d slices along axis %d. "
            "Use a batch size that's multiple of %d or set even_split=False to allow "
            "uneven partitioning of data." % (str(data.shape), num_slice, batch_axis, num_slice))
    step, extras = divmod(size, num_slice)
    bounds = [0]
    for i in range(num_slice):
        bounds.append(bounds[-1] + step + (1 if i < extras else 0))
    if batch_axis == 0:
        return [data[bounds[i]:bounds[i + 1]] for i in range(num_slice)]
    return [nd.slice_axis(data, axis=batch_axis, begin=bounds[i], end=bounds[i + 1])
            for i in range(num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Splits ``data`` (an NDArray or anything ``nd.array`` takes; ``mx.np.array`` under NumPy
    semantics) into one slice per context of ``ctx_list`` and copies each slice there.

    >>> import neomx as mx
    >>> from neomx.gluon.utils import split_and_load
    >>> xs = split_and_load(mx.nd.ones((4, 3)), [mx.cpu(0), mx.cpu(1)])
    >>> [str(x.context) for x in xs]
    ['cpu(0)', 'cpu(1)']
    """
    if not isinstance(data, NDArray):
        data = new_array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [s.as_in_context(ctx) for s, ctx in zip(slices, ctx_list)]


def _push(fn, reads, writes, ctx, name):
    _engine.push(fn, [a._var for a in reads], [a._var for a in writes], ctx, name)


def _sum_of_squares(arrays, ctx):
    """A (1,) float32 array on ``ctx`` holding the sum of the squared elements of ``arrays``
    (all on ``ctx``), computed by one engine operation."""
    out = empty_like_spec((1,), 'float32', ctx)

    def fn():
        parts = []
        for a in arrays:
            x = a._tensor().reshape(-1)
            if x.dtype != torch.float64:
                x = x.float()
            parts.append(torch.dot(x, x).float())
        out._var.tensor = torch.stack(parts).sum().reshape(1)
    _push(fn, arrays, [out], ctx, 'clip_global_norm')
    return out


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scales ``arrays`` in place so that the 2-norm of all of them together is at most
    ``max_norm``; returns that norm before scaling (a float, or with ``check_isfinite=False``
    a (1,) NDArray, which avoids waiting for it). Costs two engine operations per device.

    >>> import neomx as mx
    >>> from neomx.gluon.utils import clip_global_norm
    >>> gs = [mx.nd.ones((4,)) * 3, mx.nd.ones((4,)) * 4]
    >>> float(clip_global_norm(gs, 1.0))
    10.0
    >>> [round(float(x), 2) for x in gs[0].asnumpy()]
    [0.3, 0.3, 0.3, 0.3]
    """
    if len(arrays) == 0:
        raise MXNetError("clip_global_norm: no arrays given")
    groups = OrderedDict()
    for a in arrays:
        if not isinstance(a, NDArray):
            raise MXNetError("clip_global_norm: arrays must be NDArrays, got %s"
                             % type(a).__name__)
        groups.setdefault(a.context, []).append(a)
    ctx = arrays[0].context
    total = None
    for c, group in groups.items():
        part = _sum_of_squares(group, c).as_in_context(ctx)
        total = part if total is None else total + part
    total = nd.sqrt(total)
    if check_isfinite and not np.isfinite(total.asscalar()):
        warnings.warn(UserWarning('nan or inf is detected. Clipping results will be undefined.'),
                      stacklevel=2)
    max_norm = float(max_norm)
    for c, group in groups.items():
        norm = total.as_in_context(c)

        def fn(group=group, norm=norm):
            scale = torch.clamp(max_norm / (norm._tensor() + 1e-8), max=1.0)
            ts = [a._tensor(write=True) for a in group]
            torch._foreach_mul_(ts, scale.reshape(()).to(ts[0].dtype))
        _push(fn, [norm] + group, group, c, 'clip_global_norm')
    return total.asscalar() if check_isfinite else total


# -- files -------------------------------------------------------------------------------

def check_sha1(filename, sha1_hash):
    """Whether the SHA-1 of the file ``filename`` is ``sha1_hash`` (hex digits)."""
    return _check_sha1(filename, sha1_hash)


def replace_file(src, dst):
    """Renames ``src`` over ``dst`` atomically; on failure removes ``src`` and raises OSError."""
    try:
        os.replace(src, dst)
    except OSError as e:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError('Moving downloaded temp file - {}, to {} failed ({}). Please retry the '
                      'download.'.format(src, dst, e.strerror or e)) from None


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Downloads ``url`` to ``path`` (a file, or a folder to keep the URL's file name in; the
    current folder by default) unless the file is there already with the right SHA-1;
    returns the file's path. The file is written under a temporary name and renamed, so a
    failed download leaves nothing behind, and processes downloading the same file at once
    leave one file. With the ``requests`` package (the ``download`` extra) it fetches as
    MXNet does (``requests.get``, ``verify_ssl`` passed on); without it, with the standard
    library, which always verifies certificates.

    Raises MXNetError naming the URL when every attempt fails (no network, for instance).
    """
    if path is None:
        fname = url.split('/')[-1]
        if not fname:
            raise MXNetError("download: cannot construct a file name from the URL %r; pass "
                             "path=" % url)
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, url.split('/')[-1]) if os.path.isdir(path) else path
    if retries < 0:
        raise ValueError("Number of retries should be at least 0, currently it's %d" % retries)
    if not verify_ssl:
        warnings.warn('Unverified HTTPS request is being made (verify_ssl=False). '
                      'Adding certificate verification is strongly advised.')
    if not (overwrite or not os.path.exists(fname)
            or (sha1_hash and not check_sha1(fname, sha1_hash))):
        return fname
    folder = os.path.dirname(os.path.abspath(fname))
    os.makedirs(folder, exist_ok=True)
    attempts = max(retries, 1)
    error = None
    for attempt in range(attempts):
        try:
            print('Downloading {} from {}...'.format(fname, url))
            tmp = '{}.{}'.format(fname, uuid.uuid4())
            try:
                _fetch_with_requests(url, tmp, verify_ssl)
            except ImportError:
                _fetch(url, tmp)
            replace_file(tmp, fname)
            error = None
            break
        except OSError as e:
            error = e
            if attempt + 1 < attempts:
                print('download failed due to {}, retrying, {} attempt{} left'
                      .format(repr(e), attempts - attempt - 1,
                              's' if attempts - attempt - 1 > 1 else ''))
    if error is not None:
        raise MXNetError("download: cannot fetch %s (%d attempt%s): %s"
                         % (url, attempts, 's' if attempts > 1 else '', error)) from error
    if sha1_hash and not check_sha1(fname, sha1_hash):
        raise UserWarning('File {} is downloaded but the content hash does not match. The repo '
                          'may be outdated or download may be incomplete. If the "repo_url" is '
                          'overridden, consider switching to the default repo.'.format(fname))
    return fname


def _fetch_with_requests(url, path, verify_ssl):
    """Streams an http(s) ``url`` into ``path`` with ``requests`` (ImportError without it or
    for another scheme); OSError (requests' errors are OSErrors) unless the server answers
    200."""
    if not url.lower().startswith(('http://', 'https://')):
        raise ImportError("requests fetches http(s) URLs only")     # file://: the fallback
    import requests
    r = requests.get(url, stream=True, verify=verify_ssl)
    if r.status_code != 200:
        raise OSError("HTTP status %d for %s" % (r.status_code, url))
    try:
        with open(path, 'wb') as f:
            for chunk in r.iter_content(chunk_size=1 << 16):
                if chunk:
                    f.write(chunk)
    except BaseException:
        if os.path.exists(path):
            os.remove(path)
        raise


def _get_repo_url():
    """The base URL of MXNet's file repository (``$MXNET_GLUON_REPO`` overrides it)."""
    return _repo_url('', '').rstrip('/') + '/'


def _get_repo_file_url(namespace, filename):
    """The URL of ``filename`` under ``namespace`` in MXNet's file repository."""
    return _repo_url(namespace, filename)


# -- helpers of Block and Parameter ------------------------------------------------------

def shape_is_known(shape):
    """Whether every dimension of ``shape`` is known (0 marks an unknown one)."""
    if shape is None:
        return False
    if len(shape) == 0:
        return False
    for d in shape:
        if d == 0:
            return False
        if d < 0:
            raise MXNetError("shape dimension size cannot be less than 0, while received %d "
                             "(shape %s)" % (d, shape))
    return True


def _indent(s_, num_spaces):
    """Indents every line of ``s_`` but the first by ``num_spaces``."""
    lines = s_.split('\n')
    if len(lines) == 1:
        return s_
    return '\n'.join([lines[0]] + [(num_spaces * ' ') + line for line in lines[1:]])


def _brief_print_list(lst, limit=7):
    """At most ``limit`` items of ``lst``, quoted, the middle elided."""
    lst = list(lst)
    if len(lst) > limit:
        return _brief_print_list(lst[:limit // 2], limit) + ', ..., ' + \
            _brief_print_list(lst[-limit // 2:], limit)
    return ', '.join(["'%s'" % str(i) for i in lst])


class HookHandle:
    """A handle that attaches a hook to a dict of hooks and detaches it (``with`` works)."""

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        if self._hooks_dict_ref is not None:
            raise MXNetError('The same handle cannot be attached twice.')
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self):
        hooks_dict = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks_dict is not None and self._id in hooks_dict:
            del hooks_dict[self._id]

    def __getstate__(self):
        return (self._hooks_dict_ref() if self._hooks_dict_ref is not None else None, self._id)

    def __setstate__(self, state):
        if state[0] is None:
            self._hooks_dict_ref = weakref.ref(OrderedDict())
        else:
            self._hooks_dict_ref = weakref.ref(state[0])
        self._id = state[1]

    def __enter__(self):
        return self

    def __exit__(self, ptype, value, trace):
        self.detach()


# Names MXNet 1.9.1's module holds too (code written for MXNet imports them from here)
from .. import ndarray  # noqa: E402,F401
from ..util import is_np_array, is_np_shape  # noqa: E402,F401
