"""Data loading benchmark: an epoch of 512 JPEG images (64x64) read from a RecordIO file,
decoded, resized to 32x32, made CHW float tensors and normalised, in batches of 64, by one
process and by two worker processes: neomx's ``ImageRecordDataset`` + ``transforms`` +
``DataLoader`` against a PyTorch ``Dataset`` doing the same steps (the same record file, Pillow
decoding, torch resize and normalisation) in ``torch.utils.data.DataLoader``, in interleaved
rounds, and MXNet 1.9.1's ``ImageRecordDataset`` pipeline (OpenCV decoding) when its
environment is installed.

    python benchmarks/bench_data.py [--repeat 5] [--no-mxnet] [--json out.json]
"""
import io
import os
import shutil
import tempfile

import common  # noqa: F401  (puts the checkout on sys.path)
from common import finish, fmt, interleaved, parser, ratio, run_mxnet

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import neomx as mx  # noqa: E402
from neomx.gluon.data.vision import transforms  # noqa: E402

N, SIZE, OUT, BATCH = 512, 64, 32, 64
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def make_records(folder):
    from PIL import Image
    rng = np.random.RandomState(0)
    rec, idx = os.path.join(folder, 'data.rec'), os.path.join(folder, 'data.idx')
    w = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    for i in range(N):
        img = np.stack([(xx * (i % 7 + 1)) % 256, (yy * 3 + i) % 256, (xx + yy) % 256], -1)
        img = np.clip(img + rng.randint(-10, 10, img.shape), 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, 'JPEG', quality=90)
        w.write_idx(i, mx.recordio.pack((0, float(i % 10), i, 0), buf.getvalue()))
    w.close()
    return rec


def neomx_epoch(rec, workers):
    t = transforms.Compose([transforms.Resize(OUT), transforms.ToTensor(),
                            transforms.Normalize(MEAN, STD)])
    ds = mx.gluon.data.vision.ImageRecordDataset(rec).transform_first(t)
    loader = mx.gluon.data.DataLoader(ds, batch_size=BATCH, num_workers=workers)

    def run():
        for x, y in loader:
            x.wait_to_read()
    return run


class TorchRecords(torch.utils.data.Dataset):
    """The same record file read with os.pread, decoded with Pillow, resized and normalised
    with torch."""

    def __init__(self, rec):
        self.rec = rec
        self.offsets = [int(line.split()[1]) for line in open(rec[:-4] + '.idx')]
        self.fd = None
        self.mean = torch.tensor(MEAN).view(3, 1, 1)
        self.std = torch.tensor(STD).view(3, 1, 1)

    def __len__(self):
        return len(self.offsets)

    def __getitem__(self, i):
        from PIL import Image
        if self.fd is None:
            self.fd = os.open(self.rec, os.O_RDONLY)
        record = mx.recordio.read_record_at(lambda n, o: os.pread(self.fd, n, o),
                                            self.offsets[i], self.rec)
        header, jpg = mx.recordio.unpack(record)
        img = torch.from_numpy(np.array(Image.open(io.BytesIO(jpg)).convert('RGB')))
        x = img.permute(2, 0, 1).unsqueeze(0).float()
        x = F.interpolate(x, size=(OUT, OUT), mode='bilinear', align_corners=False)[0]
        x = (x.round().clamp(0, 255) / 255 - self.mean) / self.std
        return x, header.label


def torch_epoch(rec, workers):
    loader = torch.utils.data.DataLoader(TorchRecords(rec), batch_size=BATCH,
                                         num_workers=workers)

    def run():
        for x, y in loader:
            pass
    return run


MXNET = '''
import json, time
import mxnet as mx
from mxnet.gluon.data.vision import transforms
t = transforms.Compose([transforms.Resize(%d), transforms.ToTensor(),
                        transforms.Normalize(%r, %r)])
ds = mx.gluon.data.vision.ImageRecordDataset(%r).transform_first(t)
out = {}
for workers in (0, 2):
    loader = mx.gluon.data.DataLoader(ds, batch_size=%d, num_workers=workers)
    def run():
        for x, y in loader:
            x.wait_to_read()
    out[workers] = median_time(run, %%d, warmup=1)
print(json.dumps(out))
'''


def main():
    args = parser(__doc__).parse_args()
    repeat = args.repeat or 5
    folder = tempfile.mkdtemp()
    try:
        rec = make_records(folder)
        variants = {}
        for w in (0, 2):
            variants['neomx%d' % w] = neomx_epoch(rec, w)
            variants['torch%d' % w] = torch_epoch(rec, w)
        times = interleaved(variants, repeat, warmup=1)
        mxnet = None
        if not args.no_mxnet:
            out = run_mxnet(MXNET % (OUT, MEAN, STD, rec, BATCH) % repeat)
            mxnet = None if out is None else {int(k): v for k, v in out.items()}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rows = []
    for w in (0, 2):
        t = times['torch%d' % w]
        m = None if mxnet is None else mxnet.get(w)
        rows.append(['neomx, %d workers' % w, N / times['neomx%d' % w],
                     ratio(times['neomx%d' % w], t)])
        rows.append(['PyTorch, %d workers' % w, N / t, 1.0])
        rows.append(['MXNet 1.9.1, %d workers' % w, None if m is None else N / m, ratio(m, t)])
    finish({'title': 'Data loading (512 JPEG records, 64x64 -> 32x32 tensors, batch 64)',
            'about': 'Images per second for an epoch read from a RecordIO file: decode, resize, '
                     'ToTensor, Normalize, batch; neomx and PyTorch in interleaved rounds in one '
                     'process (median of %d), MXNet 1.9.1 in its own process. "x PyTorch" is the '
                     'epoch time against PyTorch with the same number of workers (lower is '
                     'better).' % repeat,
            'headers': ['pipeline', 'images/s', 'x PyTorch'],
            'rows': rows,
            'notes': ['neomx %s and %s x PyTorch with 0 and 2 workers'
                      % (fmt(ratio(times['neomx0'], times['torch0'])),
                         fmt(ratio(times['neomx2'], times['torch2']))),
                      'decoding: Pillow (neomx, PyTorch), OpenCV (MXNet)']}, args)


if __name__ == '__main__':
    main()
