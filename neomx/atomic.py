"""Files written whole or not at all: a temporary file beside the target, renamed over it;
and read whole, from regular files only.

A process killed while writing leaves the target as it was, and its temporary file behind;
the next write of the same target removes such leftovers (those of processes of this machine
that no longer run), so they do not pile up beside a checkpoint saved every epoch. A path
that is not a regular file (a FIFO, a directory, a device) is refused by ``read`` at once:
a FIFO with no writer would block a reader for ever.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), 'w.params')
>>> write(path, b'data')
>>> with replacing(path) as tmp:
...     with open(tmp, 'wb') as f:
...         _ = f.write(b'more data')
>>> open(path, 'rb').read(), os.listdir(os.path.dirname(path))
(b'more data', ['w.params'])
"""
import contextlib
import errno
import os
import re
import socket
import stat

__all__ = ['replacing', 'write', 'read', 'temporaries']

_HOST = re.sub(r'[^A-Za-z0-9_-]', '_', socket.gethostname())[:64] or 'host'


def _pattern(base):
    # .<target>.<host>.<pid>.<random>.tmp
    return re.compile(r'^\.%s\.([A-Za-z0-9_-]+)\.(\d+)\.[0-9a-f]{12}\.tmp$' % re.escape(base))


def temporaries(path):
    """The temporary files of writes of ``path`` that are still there, as
    ``[(file, host, pid)]``."""
    folder, base = os.path.split(os.path.abspath(path))
    pat = _pattern(base)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    out = []
    for name in names:
        m = pat.match(name)
        if m:
            out.append((os.path.join(folder, name), m.group(1), int(m.group(2))))
    return out


def _running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:     # someone else's process
        return True
    return True


def _remove_stale(path):
    """Removes the temporaries of ``path`` left by processes of this machine that have ended
    (a writer still running keeps its own; other machines' are theirs to remove)."""
    for tmp, host, pid in temporaries(path):
        if host == _HOST and pid != os.getpid() and not _running(pid):
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _check_folder(path):
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, 'the folder %s does not exist' % folder, path)


@contextlib.contextmanager
def replacing(path):
    """A path for a temporary file beside ``path``, created empty with mode 0o666 less the
    umask (as ``open`` gives, not mkstemp's 0o600); when the block ends it is renamed over
    ``path``, or removed if the block raised. Errors name ``path``, not the temporary file.
    A link is followed (the file it names is replaced); a target that is not a regular file
    (``os.devnull``, a FIFO) is ``path`` itself, written in place."""
    path = os.fspath(path)
    _check_folder(path)
    target = os.path.realpath(path)     # a symbolic link is kept, pointing at the new file
    if os.path.exists(target) and not os.path.isfile(target):
        # /dev/null, a FIFO, a terminal: written in place (a rename would put a regular file
        # where the device was)
        yield path
        return
    _remove_stale(target)
    folder, base = os.path.split(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_BINARY', 0)
    while True:
        tmp = os.path.join(folder, '.%s.%s.%d.%s.tmp' % (base, _HOST, os.getpid(),
                                                         os.urandom(6).hex()))
        try:
            os.close(os.open(tmp, flags, 0o666))
            break
        except FileExistsError:
            continue
        except OSError as e:
            raise type(e)(e.errno, e.strerror, path) from None
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write(path, payload):
    """Writes the bytes ``payload`` to ``path`` through a temporary file, flushed to disk
    before the rename (without that, a power loss after the rename can leave an empty file)."""
    with replacing(path) as tmp:
        with open(tmp, 'wb') as f:
            f.write(payload)
            f.flush()
            if stat.S_ISREG(os.fstat(f.fileno()).st_mode):     # fsync refuses devices
                os.fsync(f.fileno())


_KINDS = ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO (named pipe)'),
          (stat.S_ISSOCK, 'a socket'), (stat.S_ISCHR, 'a character device'),
          (stat.S_ISBLK, 'a block device'))


def read(path):
    """The bytes of the regular file ``path``. Anything else raises an OSError naming
    ``path`` and what it is, without waiting: the file is opened without blocking (opening a
    FIFO waits for a writer, reading one with none never ends) and checked before it is read.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> read(folder)
    Traceback (most recent call last):
    ...
    IsADirectoryError: [Errno 21] a directory, not a regular file: '...'
    """
    path = os.fspath(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0) | getattr(os, 'O_BINARY', 0))
    try:
        mode = os.fstat(fd).st_mode
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((name for test, name in _KINDS if test(mode)), 'not a file')
        code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
        raise OSError(code, '%s, not a regular file' % kind, path)
    with open(fd, 'rb') as f:
        return f.read()
