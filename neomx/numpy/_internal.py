"""``mx.np._internal``: the internal operators MXNet exposes there (boolean-mask assignment,
which ``a[mask] = value`` uses)."""
import numpy as onp

from ..ndarray.ndarray import NDArray
from .multiarray import _as_np, _invoke

__all__ = ['boolean_mask_assign_scalar', 'boolean_mask_assign_tensor']


def boolean_mask_assign_scalar(data, mask, value, start_axis=0, out=None):
    """``data`` with the positions ``mask`` selects (from axis ``start_axis``) set to
    ``value``; into ``out`` when given."""
    if isinstance(value, (NDArray, onp.ndarray)):
        value = float(value.item())
    return _invoke('_npi_boolean_mask_assign_scalar', (_as_np(data), _as_np(mask)), out=out,
                   value=float(value), start_axis=int(start_axis))


def boolean_mask_assign_tensor(data, mask, value, start_axis=0, out=None):
    """``data`` with the positions ``mask`` selects set to ``value`` (an array broadcast to
    the selection)."""
    return _invoke('_npi_boolean_mask_assign_tensor',
                   (_as_np(data), _as_np(mask), _as_np(value)), out=out,
                   start_axis=int(start_axis))
