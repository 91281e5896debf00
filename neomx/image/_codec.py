"""Image decoding and encoding with Pillow (the optional extra ``neomx[image]``).

Pillow rather than OpenCV: it is a small wheel (OpenCV's headless wheel is ten times larger),
it is already what matplotlib installs, and it decodes JPEG with the same libjpeg-turbo that
OpenCV uses. What MXNet's OpenCV calls do that Pillow does not is done here: BGR channel
order where asked, grayscale JPEGs decoded from the luma plane directly (as libjpeg does for
OpenCV's grayscale flag), 16-bit images scaled to 8 bits for color and grayscale output.
"""
import io

import numpy as np

from ..base import MXNetError


def _pil():
    try:
        from PIL import Image
    except ImportError:
        raise MXNetError("decoding and encoding images needs Pillow, which is not installed: "
                         "pip install 'neomx[image]' (or pip install Pillow)") from None
    return Image


def _as_bytes(buf, op):
    if isinstance(buf, (bytes, bytearray, memoryview)):
        return bytes(buf)
    if isinstance(buf, np.ndarray):
        return buf.astype(np.uint8, copy=False).tobytes()
    raise ValueError("%s: buf must be of type bytes, bytearray or numpy.ndarray, got %s; if you "
                     "would like to input type str, please convert to bytes"
                     % (op, type(buf).__name__))


def _to_uint8(a):
    """8-bit values of a decoded array (16-bit and 32-bit integer images keep their high byte,
    as OpenCV's color and grayscale reads do)."""
    if a.dtype == np.uint8:
        return a
    if a.dtype == np.bool_:
        return a.astype(np.uint8) * 255
    if a.dtype in (np.uint16, np.int32, np.uint32) or a.dtype.kind in 'iu':
        return (np.clip(a, 0, 65535).astype(np.uint32) >> 8).astype(np.uint8)
    return np.clip(a, 0, 255).astype(np.uint8)


def decode(buf, flag=1, to_rgb=True, squeeze_gray=False, what='imdecode'):
    """The image in ``buf`` as a NumPy array: ``flag`` 1 color (HxWx3), 0 grayscale (HxWx1, or
    HxW with ``squeeze_gray``), -1 as stored (alpha kept). Channels are RGB(A) with ``to_rgb``,
    else BGR(A) as OpenCV gives them."""
    data = _as_bytes(buf, what)
    if not data:
        raise MXNetError("%s: the image buffer is empty" % what)
    Image = _pil()
    try:
        img = Image.open(io.BytesIO(data))
        if flag == 0 and img.format == 'JPEG' and img.mode in ('RGB', 'YCbCr', 'L'):
            img.draft('L', img.size)   # libjpeg outputs the luma plane, as for OpenCV
        img.load()
    except Exception as e:   # Pillow raises many types for bad data
        raise MXNetError("%s: cannot decode the image (%d bytes, starting %r): %s"
                         % (what, len(data), data[:8], e)) from None
    wide = img.mode in ('I;16', 'I;16B', 'I;16L', 'I')
    if flag == 0:
        out = _to_uint8(np.asarray(img)) if wide else np.asarray(img.convert('L'))
    elif flag == 1:
        out = np.repeat(_to_uint8(np.asarray(img))[:, :, None], 3, axis=2) if wide else \
            np.asarray(img if img.mode == 'RGB' else img.convert('RGB'))
    else:   # as stored: gray stays one channel (16-bit stays 16-bit), alpha stays
        if img.mode in ('LA', 'PA') or img.mode == 'P' and 'transparency' in img.info:
            img = img.convert('RGBA')
        elif img.mode not in ('L', 'RGB', 'RGBA') and not wide:
            img = img.convert('RGB')
        out = np.asarray(img)
    if out.ndim == 2 and not squeeze_gray:
        out = out[:, :, None]
    if out.ndim == 3 and out.shape[2] in (3, 4) and not to_rgb:
        out = out[:, :, [2, 1, 0] + ([3] if out.shape[2] == 4 else [])]
    return np.ascontiguousarray(out)


def read(filename, flag=1, to_rgb=True):
    """The decoded image of the file ``filename`` (see ``decode``)."""
    try:
        with open(filename, 'rb') as f:
            data = f.read()
    except OSError as e:
        raise MXNetError("imread: cannot open the image file %r: %s"
                         % (filename, e.strerror or e)) from None
    return decode(data, flag, to_rgb, what='imread(%r)' % (filename,))


_FORMATS = {'.JPG': 'JPEG', '.JPEG': 'JPEG', '.PNG': 'PNG', '.BMP': 'BMP', '.TIF': 'TIFF',
            '.TIFF': 'TIFF', '.WEBP': 'WEBP', '.PPM': 'PPM', '.PGM': 'PPM'}


def encode(img, img_fmt='.jpg', quality=95, from_rgb=True):
    """The bytes of the ``uint8`` image ``img`` (HxW, HxWx1, HxWx3 or HxWx4; RGB(A) with
    ``from_rgb``, else BGR(A)) in the format ``img_fmt``. ``quality`` is JPEG's 0-100 or PNG's
    compression level 0-9 (larger values mean 9), as OpenCV's ``imencode`` parameters."""
    fmt = _FORMATS.get(str(img_fmt).upper())
    if fmt is None:
        raise MXNetError("encode: unknown image format %r (expected one of %s)"
                         % (img_fmt, ', '.join(sorted(k.lower() for k in _FORMATS))))
    a = np.asarray(img)
    if a.dtype != np.uint8:
        a = np.clip(a, 0, 255).astype(np.uint8)
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    if a.ndim == 3 and a.shape[2] in (3, 4) and not from_rgb:
        a = a[:, :, [2, 1, 0] + ([3] if a.shape[2] == 4 else [])]
    if a.ndim not in (2, 3) or a.ndim == 3 and a.shape[2] not in (3, 4):
        raise MXNetError("encode: an image is HxW, HxWx1, HxWx3 or HxWx4, got shape %s"
                         % (np.shape(img),))
    Image = _pil()
    out = io.BytesIO()
    pil = Image.fromarray(np.ascontiguousarray(a))
    if fmt == 'JPEG':
        if pil.mode == 'RGBA':
            pil = pil.convert('RGB')
        pil.save(out, 'JPEG', quality=int(quality))
    elif fmt == 'PNG':
        pil.save(out, 'PNG', compress_level=min(max(int(quality), 0), 9))
    else:
        pil.save(out, fmt)
    return out.getvalue()
