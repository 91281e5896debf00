"""Files written whole or not at all, and the temporary files of a killed save cleaned up by
the next save of the same target."""
import os
import stat
import subprocess
import sys
import textwrap

import pytest

import neomx as mx
from neomx import atomic, nd
from neomx.gluon import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A save killed in the middle: os._exit inside the block, as SIGKILL would, runs no cleanup.
KILLED_SAVE = '''
import os, sys
import neomx as mx
from neomx import atomic
path = sys.argv[1]
with atomic.replacing(path) as tmp:
    with open(tmp, 'wb') as f:
        f.write(b'half a checkpoint')
        f.flush()
    os._exit(9)
'''


def killed_save(path):
    r = subprocess.run([sys.executable, '-c', textwrap.dedent(KILLED_SAVE), str(path)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 9, r.stderr


def test_killed_save_leaves_the_target_and_the_next_save_cleans_up(tmp_path):
    path = tmp_path / 'net.params'
    nd.save(str(path), {'w': nd.ones((3,))})
    killed_save(path)
    killed_save(path)           # removes the first one's temporary before writing its own
    left = atomic.temporaries(path)
    assert len(left) == 1 and os.path.getsize(left[0][0]) == 17
    assert nd.load(str(path))['w'].asnumpy().tolist() == [1, 1, 1]    # the target is intact
    nd.save(str(path), {'w': nd.zeros((3,))})
    assert atomic.temporaries(path) == []
    assert sorted(os.listdir(tmp_path)) == ['net.params']
    assert nd.load(str(path))['w'].asnumpy().tolist() == [0, 0, 0]


def test_live_and_foreign_temporaries_are_kept(tmp_path):
    path = tmp_path / 'x.bin'
    # A write in progress in this process (another thread's) and one of another machine.
    mine = tmp_path / ('.x.bin.%s.%d.%s.tmp' % (atomic._HOST, os.getpid(), 'a' * 12))
    other = tmp_path / ('.x.bin.otherhost.%d.%s.tmp' % (os.getpid(), 'b' * 12))
    unrelated = tmp_path / '.y.bin.somehost.1.cccccccccccc.tmp'
    for p in (mine, other, unrelated):
        p.write_bytes(b'')
    atomic.write(path, b'data')
    assert sorted(os.listdir(tmp_path)) == sorted([mine.name, other.name, unrelated.name,
                                                   'x.bin'])


def test_errors_name_the_target(tmp_path):
    missing = tmp_path / 'no' / 'such'
    with pytest.raises(mx.MXNetError, match=r'save: cannot write .*no/such/a\.params: the '
                                            r'folder .*no/such does not exist'):
        nd.save(str(missing / 'a.params'), [nd.ones((1,))])
    net = nn.HybridSequential()
    net.add(nn.Dense(2))
    net.initialize()
    net.hybridize()
    net(nd.ones((1, 3)))
    with pytest.raises(FileNotFoundError) as e:
        net.export(str(missing / 'net'))
    assert 'net-symbol.json' in str(e.value) and '.tmp' not in str(e.value)
    assert 'does not exist' in str(e.value)


@pytest.mark.skipif(not hasattr(os, 'mkfifo'), reason='needs FIFOs')
def test_targets_that_are_not_files_are_written_in_place(tmp_path):
    """os.devnull, a FIFO: a rename over one would leave a regular file where the device was
    (a save to /dev/null once did that to the machine's /dev/null). Shown on a FIFO."""
    fifo = tmp_path / 'pipe'
    os.mkfifo(str(fifo))
    reader = os.open(str(fifo), os.O_RDONLY | os.O_NONBLOCK)
    try:
        atomic.write(fifo, b'through the pipe')
        assert os.read(reader, 100) == b'through the pipe'
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(str(fifo)).st_mode)
    assert os.listdir(tmp_path) == ['pipe']


def test_links_are_followed(tmp_path):
    real = tmp_path / 'real.params'
    link = tmp_path / 'latest.params'
    nd.save(str(real), {'w': nd.ones((2,))})
    os.symlink(real.name, str(link))
    nd.save(str(link), {'w': nd.zeros((2,))})
    assert os.path.islink(str(link))
    assert nd.load(str(real))['w'].asnumpy().tolist() == [0, 0]
    assert sorted(os.listdir(tmp_path)) == ['latest.params', 'real.params']


def test_symbol_json_is_written_atomically(tmp_path):
    data = mx.sym.var('data')
    out = mx.sym.FullyConnected(data, num_hidden=2, name='fc')
    path = tmp_path / 'net-symbol.json'
    out.save(str(path))
    assert mx.sym.load(str(path)).list_arguments() == ['data', 'fc_weight', 'fc_bias']
    assert os.listdir(tmp_path) == ['net-symbol.json']
