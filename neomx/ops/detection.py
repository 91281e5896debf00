"""Object detection operators: boxes (box_iou, box_nms, box_encode, box_decode,
bipartite_matching), SSD's MultiBoxPrior / MultiBoxTarget / MultiBoxDetection and Faster
R-CNN's region proposals (Proposal, MultiProposal).

Boxes are ``[xmin, ymin, xmax, ymax]`` ('corner') or ``[x, y, width, height]`` ('center').
The selection steps (sorting, matching, suppression) are index computations on the values,
made once per call; the outputs gather the input rows, so gradients flow to the boxes kept
(box_nms) and are zero where MXNet defines none (matching, proposals).
"""
import math

import numpy as np
import torch

from ..engine.threads import single_threaded
from .registry import Bool, Enum, Float, Int, ShapeError, Shape, register


class Floats(Shape):
    """A tuple of numbers (``sizes=(0.75, 0.5)``, ``'(0.1,0.1,0.2,0.2)'``)."""
    kind = 'tuple of numbers'

    def parse(self, value):
        if isinstance(value, str):
            import ast
            s = value.strip()
            value = ast.literal_eval(s) if s not in ('', '()', '[]') else ()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return (float(value),)
        return tuple(float(v) for v in value)

    def format(self, value):
        return '(' + ', '.join(repr(v) for v in value) + (',)' if len(value) == 1 else ')')


def _corner(boxes, fmt):
    """(..., 4) boxes as corners."""
    if fmt == 'corner':
        return boxes
    x, y, w, h = boxes.unbind(-1)
    return torch.stack([x - w / 2, y - h / 2, x + w / 2, y + h / 2], dim=-1)


def _center(boxes):
    l, t, r, b = boxes.unbind(-1)
    return torch.stack([(l + r) / 2, (t + b) / 2, r - l, b - t], dim=-1)


def _iou(a, b, plus=0.0):
    """IoU of corner boxes a (P, 4) and b (Q, 4): (P, Q); ``plus`` 1 counts pixels
    inclusively (Faster R-CNN's convention)."""
    lt = torch.maximum(a[:, None, :2], b[None, :, :2])
    rb = torch.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt + plus).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    area_a = ((a[:, 2] - a[:, 0] + plus).clamp(min=0) * (a[:, 3] - a[:, 1] + plus).clamp(min=0))
    area_b = ((b[:, 2] - b[:, 0] + plus).clamp(min=0) * (b[:, 3] - b[:, 1] + plus).clamp(min=0))
    union = area_a[:, None] + area_b[None, :] - inter
    return torch.where(inter > 0, inter / torch.where(union > 0, union, torch.ones_like(union)),
                       torch.zeros_like(inter))


def _overlapping(a, b, thresh, plus=0.0):
    """(P, Q) bool: the IoU of corner boxes a[p] and b[q] (the numbers ``_iou`` gives) is above
    ``thresh``; in place where it can (non-maximum suppression compares millions of pairs)."""
    w = torch.minimum(a[:, None, 2], b[None, :, 2])
    w -= torch.maximum(a[:, None, 0], b[None, :, 0])
    w += plus
    h = torch.minimum(a[:, None, 3], b[None, :, 3])
    h -= torch.maximum(a[:, None, 1], b[None, :, 1])
    h += plus
    inter = w.clamp_(min=0).mul_(h.clamp_(min=0))
    area_a = ((a[:, 2] - a[:, 0] + plus).clamp(min=0) * (a[:, 3] - a[:, 1] + plus).clamp(min=0))
    area_b = ((b[:, 2] - b[:, 0] + plus).clamp(min=0) * (b[:, 3] - b[:, 1] + plus).clamp(min=0))
    union = area_a[:, None] + area_b[None, :]
    union -= inter
    union.masked_fill_(union <= 0, 1.0)
    return inter.div_(union) > thresh     # no overlap: 0 / union is 0, as in _iou


def _greedy_nms(boxes, order, thresh, classes=None, limit=None, plus=0.0, block=256):
    """Indices (into ``boxes``) kept by greedy non-maximum suppression over ``order`` (best
    first): a box is dropped when its IoU with a kept one exceeds ``thresh`` (and, with
    ``classes``, it has the kept one's class). Stops after ``limit`` kept boxes.

    The boxes are taken ``block`` at a time (Faster R-CNN suppresses among 12,000): the
    survivors of a block decide among themselves from one IoU matrix, then the kept ones
    suppress every later box at once; the IoUs are the same numbers as one pair at a time.
    It runs on one thread (``threads.single_threaded``)."""
    with single_threaded():
        return _greedy_nms_blocks(boxes, order, thresh, classes, limit, plus, block)


def _greedy_nms_blocks(boxes, order, thresh, classes, limit, plus, block):
    keep = []
    n = len(order)
    alive = np.ones(n, dtype=bool)
    b = boxes[order]
    cls = None if classes is None else classes[order]
    for start in range(0, n, block):
        end = min(start + block, n)
        idx = np.flatnonzero(alive[start:end]) + start
        if not len(idx):
            continue
        sel = torch.from_numpy(idx)
        over = _overlapping(b[sel], b[sel], thresh, plus)
        if cls is not None:
            over &= cls[sel][:, None] == cls[sel][None, :]
        over = over.numpy()
        dropped = np.zeros(len(idx), dtype=bool)
        kept = []
        for j in range(len(idx)):
            if dropped[j]:
                continue
            kept.append(j)
            keep.append(int(order[idx[j]]))
            if limit is not None and len(keep) >= limit:
                return keep
            dropped[j + 1:] |= over[j, j + 1:]
        rest = np.flatnonzero(alive[end:]) + end
        if len(rest):
            ks, rs = sel[kept], torch.from_numpy(rest)
            later = _overlapping(b[ks], b[rs], thresh, plus)
            if cls is not None:
                later &= cls[ks][:, None] == cls[rs][None, :]
            alive[rest[later.any(dim=0).numpy()]] = False
    return keep


# -- box_iou ----------------------------------------------------------------------------------

def _box_iou(lhs, rhs, format='corner'):
    """IoU of every box of ``lhs`` (..., 4) with every box of ``rhs`` (..., 4): shape
    lhs.shape[:-1] + rhs.shape[:-1]."""
    a = _corner(lhs.reshape(-1, 4), format)
    b = _corner(rhs.reshape(-1, 4), format)
    return _iou(a, b).reshape(tuple(lhs.shape[:-1]) + tuple(rhs.shape[:-1]))


def _box_iou_rule(attrs, shapes, dtypes):
    a, b = shapes
    if a[-1] != 4 or b[-1] != 4:
        raise ShapeError("box_iou: the last axis of both inputs must be 4, got %s and %s"
                         % (tuple(a), tuple(b)))
    return (tuple(a[:-1]) + tuple(b[:-1]),), (dtypes[0],)


register('_contrib_box_iou', inputs=('lhs', 'rhs'), infer=_box_iou_rule,
         attrs={'format': Enum('corner', 'center', default='corner')})(_box_iou)


# -- box_nms ----------------------------------------------------------------------------------

def _box_nms(data, overlap_thresh=0.5, valid_thresh=0.0, topk=-1, coord_start=2, score_index=1,
             id_index=-1, background_id=-1, force_suppress=False, in_format='corner',
             out_format='corner'):
    """Non-maximum suppression of each batch of boxes (data (..., n, k): rows of k values
    holding a score, 4 coordinates and optionally a class id): rows with a score above
    ``valid_thresh`` (and a class other than ``background_id``) are sorted by score, the
    best ``topk`` kept, and a row whose IoU with a better kept one exceeds ``overlap_thresh``
    (of its class, unless ``force_suppress``) is dropped. The rows kept come first, best
    first; the others are -1. Gradients return to the rows kept."""
    shape = tuple(data.shape)
    if len(shape) < 2:
        raise ShapeError("box_nms: data must have at least 2 axes (boxes, values), got %s"
                         % (shape,))
    n, k = shape[-2], shape[-1]
    flat = data.reshape(-1, n, k)
    if data.device.type == 'meta':
        return data.new_empty(shape)
    values = flat.detach().to(torch.float32).cpu()
    outs = []
    for b in range(flat.shape[0]):
        rows = values[b]
        score = rows[:, score_index]
        valid = score > valid_thresh
        if id_index >= 0 and background_id >= 0 or id_index >= 0 and background_id == -1:
            valid &= rows[:, id_index] != background_id
        idx = torch.nonzero(valid).reshape(-1)
        idx = idx[torch.argsort(-score[idx], stable=True)]
        if topk > 0:
            idx = idx[:topk]
        boxes = _corner(rows[:, coord_start:coord_start + 4], in_format)
        classes = None if (force_suppress or id_index < 0) else rows[:, id_index]
        keep = _greedy_nms(boxes, idx, overlap_thresh, classes)
        picked = flat[b, torch.tensor(keep, dtype=torch.int64, device=data.device)]
        if in_format != out_format:
            coords = picked[:, coord_start:coord_start + 4]
            coords = _corner(coords, in_format) if out_format == 'corner' else \
                _center(coords)
            picked = torch.cat([picked[:, :coord_start], coords, picked[:, coord_start + 4:]],
                               dim=1)
        filler = torch.full((n - len(keep), k), -1.0, dtype=data.dtype, device=data.device)
        outs.append(torch.cat([picked, filler], dim=0))
    return torch.stack(outs).reshape(shape)


register('_contrib_box_nms', aliases=('_contrib_box_non_maximum_suppression',),
         infer=lambda attrs, shapes, dtypes: ((tuple(shapes[0]),), (dtypes[0],)), heavy=True,
         attrs={'overlap_thresh': Float(0.5), 'valid_thresh': Float(0.0), 'topk': Int(-1),
                'coord_start': Int(2), 'score_index': Int(1), 'id_index': Int(-1),
                'background_id': Int(-1), 'force_suppress': Bool(False),
                'in_format': Enum('corner', 'center', default='corner'),
                'out_format': Enum('corner', 'center', default='corner')})(_box_nms)


# -- box_encode / box_decode ------------------------------------------------------------------------

def _box_encode(samples, matches, anchors, refs, means, stds):
    """Regression targets of the positive samples (``samples`` > 0.5): the offsets of the
    matched reference box from the anchor, in the anchor's centre and size, normalised by
    ``means`` and ``stds``; and a mask of 1s at those samples."""
    b, n = samples.shape
    idx = matches.to(torch.int64).clamp(min=0)
    ref = torch.gather(refs, 1, idx.unsqueeze(-1).expand(b, n, 4))
    a = _center(anchors)
    g = _center(ref)
    t = torch.stack([(g[..., 0] - a[..., 0]) / a[..., 2], (g[..., 1] - a[..., 1]) / a[..., 3],
                     torch.log(g[..., 2] / a[..., 2]), torch.log(g[..., 3] / a[..., 3])], -1)
    t = (t - means.reshape(1, 1, 4)) / stds.reshape(1, 1, 4)
    pos = (samples > 0.5).unsqueeze(-1).to(t.dtype)
    return t * pos, pos.expand(b, n, 4).clone()


def _box_encode_rule(attrs, shapes, dtypes):
    samples = tuple(shapes[0])
    if len(samples) != 2:
        raise ShapeError("box_encode: samples must be (batch, anchors), got %s" % (samples,))
    return (samples + (4,), samples + (4,)), (dtypes[2], dtypes[2])


register('_contrib_box_encode', inputs=('samples', 'matches', 'anchors', 'refs', 'means', 'stds'),
         num_outputs=2, infer=_box_encode_rule)(_box_encode)


def _box_decode(data, anchors, std0=1.0, std1=1.0, std2=1.0, std3=1.0, clip=-1.0,
                format='center'):
    """Corner boxes from regression offsets ``data`` relative to ``anchors`` (in
    ``format``): the inverse of box_encode with zero means; the size offsets are clipped to
    ``clip`` when it is positive."""
    a = anchors if format == 'center' else _center(anchors)
    dx, dy = data[..., 0] * std0, data[..., 1] * std1
    dw, dh = data[..., 2] * std2, data[..., 3] * std3
    if clip > 0:
        dw, dh = dw.clamp(max=clip), dh.clamp(max=clip)
    x = dx * a[..., 2] + a[..., 0]
    y = dy * a[..., 3] + a[..., 1]
    w = torch.exp(dw) * a[..., 2] / 2
    h = torch.exp(dh) * a[..., 3] / 2
    return torch.stack([x - w, y - h, x + w, y + h], dim=-1)


register('_contrib_box_decode', inputs=('data', 'anchors'),
         infer=lambda attrs, shapes, dtypes: ((tuple(shapes[0]),), (dtypes[0],)),
         attrs={'std0': Float(1.0), 'std1': Float(1.0), 'std2': Float(1.0), 'std3': Float(1.0),
                'clip': Float(-1.0),
                'format': Enum('corner', 'center', default='center')})(_box_decode)


# -- bipartite_matching ---------------------------------------------------------------------------

def _bipartite_matching(data, is_ascend=False, threshold=0.0, topk=-1):
    """Greedy bipartite matching of a score matrix (..., N, M): pairs are taken best score
    first (lowest with ``is_ascend``) while the score passes ``threshold`` and both row and
    column are free (with ``topk``, until topk + 1 pairs are matched, as MXNet counts).
    Returns the column matched to each row and the row matched to each column (-1 for
    none)."""
    shape = tuple(data.shape)
    n, m = shape[-2], shape[-1]
    if data.device.type == 'meta':
        return data.new_empty(shape[:-1]), data.new_empty(shape[:-2] + (m,))
    flat = data.detach().to(torch.float64).cpu().reshape(-1, n, m)
    rows_out, cols_out = [], []
    for s in flat:
        order = torch.argsort(s.reshape(-1), descending=not is_ascend, stable=True)
        row = torch.full((n,), -1.0, dtype=torch.float64)
        col = torch.full((m,), -1.0, dtype=torch.float64)
        count = 0
        for flat_i in order.tolist():
            r, c = divmod(flat_i, m)
            if row[r] >= 0 or col[c] >= 0:
                continue
            v = float(s.reshape(-1)[flat_i])
            if (v <= threshold) if not is_ascend else (v >= threshold):
                break
            row[r], col[c] = c, r
            count += 1
            if 0 < topk < count:    # MXNet stops after topk + 1 matches
                break
        rows_out.append(row)
        cols_out.append(col)
    return (torch.stack(rows_out).reshape(shape[:-1]).to(data.dtype).to(data.device),
            torch.stack(cols_out).reshape(shape[:-2] + (m,)).to(data.dtype).to(data.device))


register('_contrib_bipartite_matching', num_outputs=2,
         infer=lambda attrs, shapes, dtypes: ((tuple(shapes[0][:-1]),
                                               tuple(shapes[0][:-2]) + (shapes[0][-1],)),
                                              (dtypes[0], dtypes[0])),
         attrs={'is_ascend': Bool(False), 'threshold': Float(), 'topk': Int(-1)})(
    _bipartite_matching)


# -- SSD: MultiBoxPrior, MultiBoxTarget, MultiBoxDetection -------------------------------------------

def _num_priors(attrs):
    return len(attrs['sizes']) + len(attrs['ratios']) - 1


def _multibox_prior(data, sizes=(1.0,), ratios=(1.0,), clip=False, steps=(-1.0, -1.0),
                    offsets=(0.5, 0.5)):
    """Anchor boxes (1, H*W*A, 4) centred on every feature-map cell: the sizes with the first
    ratio, then the first size with the other ratios (A = sizes + ratios - 1); corners in
    [0, 1] of the image (clipped with ``clip``)."""
    h, w = data.shape[2], data.shape[3]
    step_y = steps[0] if steps[0] > 0 else 1.0 / h
    step_x = steps[1] if steps[1] > 0 else 1.0 / w
    dev = data.device
    cy = (torch.arange(h, dtype=torch.float32, device=dev) + offsets[0]) * step_y
    cx = (torch.arange(w, dtype=torch.float32, device=dev) + offsets[1]) * step_x
    halves = []         # (half width, half height) of each anchor
    r0 = math.sqrt(ratios[0])
    for s in sizes:
        halves.append((s * h / w * r0 / 2, s / r0 / 2))
    for r in ratios[1:]:
        rr = math.sqrt(r)
        halves.append((sizes[0] * h / w * rr / 2, sizes[0] / rr / 2))
    hw = torch.tensor(halves, dtype=torch.float32, device=dev)          # (A, 2)
    yy, xx = torch.meshgrid(cy, cx, indexing='ij')
    ctr = torch.stack([xx, yy], dim=-1).reshape(h * w, 1, 2)
    boxes = torch.cat([ctr - hw, ctr + hw], dim=-1).reshape(1, -1, 4)
    if clip:
        boxes = boxes.clamp(0, 1)
    return boxes


def _multibox_prior_rule(attrs, shapes, dtypes):
    data = tuple(shapes[0])
    if len(data) != 4:
        raise ShapeError("MultiBoxPrior: data must be NCHW, got %s" % (data,))
    return ((1, data[2] * data[3] * _num_priors(attrs), 4),), ('float32',)


register('_contrib_MultiBoxPrior', infer=_multibox_prior_rule,
         attrs={'sizes': Floats((1.0,)), 'ratios': Floats((1.0,)), 'clip': Bool(False),
                'steps': Floats((-1.0, -1.0)), 'offsets': Floats((0.5, 0.5))})(_multibox_prior)


def _encode_ssd(anchors, gt, variances):
    a = _center(anchors)
    g = _center(gt)
    return torch.stack([(g[:, 0] - a[:, 0]) / a[:, 2] / variances[0],
                        (g[:, 1] - a[:, 1]) / a[:, 3] / variances[1],
                        torch.log(g[:, 2] / a[:, 2]) / variances[2],
                        torch.log(g[:, 3] / a[:, 3]) / variances[3]], dim=1)


def _multibox_target(anchor, label, cls_pred, overlap_threshold=0.5, ignore_label=-1.0,
                     negative_mining_ratio=-1.0, negative_mining_thresh=0.5,
                     minimum_negative_samples=0, variances=(0.1, 0.1, 0.2, 0.2)):
    """SSD training targets: each ground-truth box (label rows ``[class, corners]``, class -1
    for padding) takes its best anchor, then every anchor whose IoU with some box exceeds
    ``overlap_threshold`` takes that box; matched anchors get the box's class + 1 and its
    offsets (``variances``-scaled) with a mask of 1s. The others are background (0), or with
    ``negative_mining_ratio`` only the hardest negatives (lowest background probability
    among those below ``negative_mining_thresh``), ``ratio`` per positive, the rest
    ``ignore_label``."""
    b, n = label.shape[0], anchor.shape[1]
    dev = anchor.device
    anchors = anchor.reshape(-1, 4)[:n].detach().to(torch.float32).cpu()
    labels = label.detach().to(torch.float32).cpu()
    preds = cls_pred.detach().to(torch.float32).cpu()
    loc_t = torch.zeros((b, n, 4))
    loc_m = torch.zeros((b, n, 4))
    cls_t = torch.zeros((b, n))
    for i in range(b):
        rows = labels[i]
        valid = []
        for r in range(rows.shape[0]):
            if rows[r, 0] == -1:
                break           # padding ends the list of boxes, as in MXNet
            valid.append(r)
        gt = rows[valid, 1:5] if valid else torch.zeros((0, 4))
        match = torch.full((n,), -1, dtype=torch.int64)
        if len(valid):
            iou = _iou(anchors, gt)                                   # (n, g)
            work = iou.clone()
            for _ in range(len(valid)):                  # each box takes its best anchor
                best = int(torch.argmax(work))
                a_i, g_i = divmod(best, len(valid))
                if work[a_i, g_i] <= 1e-6:
                    break
                match[a_i] = g_i
                work[a_i, :] = -1
                work[:, g_i] = -1
            best_iou, best_gt = iou.max(dim=1)
            extra = (match < 0) & (best_iou > overlap_threshold)
            match[extra] = best_gt[extra]
        else:
            best_iou = torch.zeros(n)
        pos = match >= 0
        if pos.any():
            loc_t[i, pos] = _encode_ssd(anchors[pos], gt[match[pos]], variances)
            loc_m[i, pos] = 1
            cls_t[i, pos] = rows[valid][match[pos], 0] + 1
        if negative_mining_ratio > 0:
            cls_t[i, ~pos] = ignore_label
            num_pos = int(pos.sum())
            cand = torch.nonzero(~pos & (best_iou < negative_mining_thresh)).reshape(-1)
            num_neg = min(max(int(num_pos * negative_mining_ratio), minimum_negative_samples),
                          len(cand))
            if num_neg > 0:
                logits = preds[i][:, cand]                       # (classes, candidates)
                background = torch.softmax(logits, dim=0)[0]
                hardest = cand[torch.argsort(background, stable=True)[:num_neg]]
                cls_t[i, hardest] = 0
    return (loc_t.reshape(b, n * 4).to(anchor.dtype).to(dev),
            loc_m.reshape(b, n * 4).to(anchor.dtype).to(dev), cls_t.to(anchor.dtype).to(dev))


def _multibox_target_rule(attrs, shapes, dtypes):
    anchor, label, pred = (tuple(s) for s in shapes)
    if len(anchor) != 3 or anchor[-1] != 4 or len(label) != 3 or label[-1] < 5:
        raise ShapeError("MultiBoxTarget: anchor must be (1, N, 4) and label (batch, boxes, 5+),"
                         " got %s and %s" % (anchor, label))
    b, n = label[0], anchor[1]
    return ((b, n * 4), (b, n * 4), (b, n)), (dtypes[0],) * 3


register('_contrib_MultiBoxTarget', inputs=('anchor', 'label', 'cls_pred'), num_outputs=3,
         infer=_multibox_target_rule, heavy=True,
         attrs={'overlap_threshold': Float(0.5), 'ignore_label': Float(-1.0),
                'negative_mining_ratio': Float(-1.0), 'negative_mining_thresh': Float(0.5),
                'minimum_negative_samples': Int(0),
                'variances': Floats((0.1, 0.1, 0.2, 0.2))})(_multibox_target)


def _multibox_detection(cls_prob, loc_pred, anchor, clip=True, threshold=0.01, background_id=0,
                        nms_threshold=0.5, force_suppress=False,
                        variances=(0.1, 0.1, 0.2, 0.2), nms_topk=-1):
    """SSD detections (batch, anchors, 6) rows ``[class, score, corners]``: each anchor's best
    non-background class (numbered without the background) and probability, its box decoded
    from ``loc_pred``; rows scoring below ``threshold`` are dropped, the others sorted by
    score and suppressed (IoU above ``nms_threshold``, within a class unless
    ``force_suppress``, among the ``nms_topk`` best); dropped and suppressed rows have class
    -1."""
    b, c, n = cls_prob.shape
    dev, dtype = cls_prob.device, cls_prob.dtype
    probs = cls_prob.detach().to(torch.float32).cpu()
    locs = loc_pred.detach().to(torch.float32).cpu().reshape(b, n, 4)
    a = _center(anchor.reshape(-1, 4)[:n].detach().to(torch.float32).cpu())
    out = torch.full((b, n, 6), -1.0)
    for i in range(b):
        p = probs[i].clone()
        p[background_id] = -1
        score, cls = p.max(dim=0)
        keep = score >= threshold
        loc = locs[i]
        x = loc[:, 0] * variances[0] * a[:, 2] + a[:, 0]
        y = loc[:, 1] * variances[1] * a[:, 3] + a[:, 1]
        w = torch.exp(loc[:, 2] * variances[2]) * a[:, 2] / 2
        h = torch.exp(loc[:, 3] * variances[3]) * a[:, 3] / 2
        boxes = torch.stack([x - w, y - h, x + w, y + h], dim=1)
        if clip:
            boxes = boxes.clamp(0, 1)
        ids = (cls - (cls > background_id).to(cls.dtype)).to(torch.float32)
        valid = torch.cat([ids[:, None], score[:, None], boxes], dim=1)[keep]  # anchor order
        if len(valid):
            top = len(valid) if nms_topk <= 0 else min(nms_topk, len(valid))
            # as MXNet: the best ``top`` rows, sorted, then the other valid rows in anchor
            # order (unsorted, and suppressed)
            rows = valid.clone()
            rows[:top] = valid[torch.argsort(-valid[:, 1], stable=True)[:top]]
            rows[top:, 0] = -1
            kept = set(_greedy_nms(rows[:top, 2:], torch.arange(top), nms_threshold,
                                   None if force_suppress else rows[:top, 0]))
            for j in range(top):
                if j not in kept:
                    rows[j, 0] = -1
            out[i, :len(rows)] = rows
    return out.to(dtype).to(dev)


def _multibox_detection_rule(attrs, shapes, dtypes):
    prob = tuple(shapes[0])
    if len(prob) != 3:
        raise ShapeError("MultiBoxDetection: cls_prob must be (batch, classes, anchors), got %s"
                         % (prob,))
    return ((prob[0], prob[2], 6),), (dtypes[0],)


register('_contrib_MultiBoxDetection', inputs=('cls_prob', 'loc_pred', 'anchor'), heavy=True,
         infer=_multibox_detection_rule,
         attrs={'clip': Bool(True), 'threshold': Float(0.01), 'background_id': Int(0),
                'nms_threshold': Float(0.5), 'force_suppress': Bool(False),
                'variances': Floats((0.1, 0.1, 0.2, 0.2)), 'nms_topk': Int(-1)})(
    _multibox_detection)


# -- Faster R-CNN region proposals ------------------------------------------------------------------

def _base_anchors(stride, scales, ratios):
    """py-faster-rcnn's anchors around the cell (0, 0, stride-1, stride-1): for each ratio,
    each scale."""
    base = np.array([0, 0, stride - 1, stride - 1], dtype=np.float64)
    w, h = base[2] - base[0] + 1, base[3] - base[1] + 1
    cx, cy = base[0] + 0.5 * (w - 1), base[1] + 0.5 * (h - 1)
    out = []
    for r in ratios:
        size = w * h
        ws = np.round(np.sqrt(size / r))
        hs = np.round(ws * r)
        for s in scales:
            sw, sh = ws * s, hs * s
            out.append([cx - 0.5 * (sw - 1), cy - 0.5 * (sh - 1),
                        cx + 0.5 * (sw - 1), cy + 0.5 * (sh - 1)])
    return torch.tensor(out, dtype=torch.float32)


def _proposals(cls_prob, bbox_pred, im_info, rpn_pre_nms_top_n=6000, rpn_post_nms_top_n=300,
               threshold=0.7, rpn_min_size=16, scales=(4.0, 8.0, 16.0, 32.0),
               ratios=(0.5, 1.0, 2.0), feature_stride=16, output_score=False, iou_loss=False):
    b, _, h, w = cls_prob.shape
    base = _base_anchors(feature_stride, scales, ratios)                  # (A, 4)
    a = base.shape[0]
    sy = torch.arange(h, dtype=torch.float32) * feature_stride
    sx = torch.arange(w, dtype=torch.float32) * feature_stride
    yy, xx = torch.meshgrid(sy, sx, indexing='ij')
    shifts = torch.stack([xx, yy, xx, yy], dim=-1).reshape(h, w, 1, 4)
    anchors = (shifts + base.reshape(1, 1, a, 4)).reshape(-1, 4)         # (h*w*a, 4)
    probs = cls_prob.detach().to(torch.float32).cpu()
    deltas = bbox_pred.detach().to(torch.float32).cpu()
    info = im_info.detach().to(torch.float32).cpu()
    rois, scores = [], []
    for i in range(b):
        score = probs[i, a:].permute(1, 2, 0).reshape(-1).clone()        # (h, w, a)
        d = deltas[i].reshape(a, 4, h, w).permute(2, 3, 0, 1).reshape(-1, 4)
        im_h, im_w, im_scale = info[i].tolist()
        if iou_loss:
            boxes = anchors + d
        else:
            aw = anchors[:, 2] - anchors[:, 0] + 1
            ah = anchors[:, 3] - anchors[:, 1] + 1
            acx = anchors[:, 0] + 0.5 * (aw - 1)
            acy = anchors[:, 1] + 0.5 * (ah - 1)
            cx = d[:, 0] * aw + acx
            cy = d[:, 1] * ah + acy
            pw = torch.exp(d[:, 2]) * aw
            ph = torch.exp(d[:, 3]) * ah
            boxes = torch.stack([cx - 0.5 * (pw - 1), cy - 0.5 * (ph - 1),
                                 cx + 0.5 * (pw - 1), cy + 0.5 * (ph - 1)], dim=1)
        boxes[:, 0::2] = boxes[:, 0::2].clamp(0, im_w - 1)
        boxes[:, 1::2] = boxes[:, 1::2].clamp(0, im_h - 1)
        # cells beyond the image (padding of the batch) and boxes below the minimum size
        # do not propose
        real_h, real_w = int(im_h / feature_stride), int(im_w / feature_stride)
        cell = torch.arange(h * w * a) // a
        outside = (cell // w >= real_h) | (cell % w >= real_w)
        min_size = rpn_min_size * im_scale
        small = ((boxes[:, 2] - boxes[:, 0] + 1) < min_size) | \
            ((boxes[:, 3] - boxes[:, 1] + 1) < min_size)
        score[outside | small] = -1
        order = torch.argsort(-score, stable=True)[:rpn_pre_nms_top_n]
        keep = _greedy_nms(boxes, order, threshold, limit=rpn_post_nms_top_n, plus=1.0)
        if not keep:
            keep = [int(order[0])]
        picked = [keep[j % len(keep)] for j in range(rpn_post_nms_top_n)]
        sel = torch.tensor(picked, dtype=torch.int64)
        rois.append(torch.cat([torch.full((rpn_post_nms_top_n, 1), float(i)), boxes[sel]],
                              dim=1))
        scores.append(score[sel].reshape(-1, 1))
    dev, dtype = cls_prob.device, cls_prob.dtype
    return torch.cat(rois).to(dtype).to(dev), torch.cat(scores).to(dtype).to(dev)


def _proposal_kernel(cls_prob, bbox_pred, im_info, **attrs):
    """Region proposals of a region proposal network: anchors of every ``scales`` x
    ``ratios`` at every cell, moved by ``bbox_pred``, clipped to the image, the small ones
    and those beyond the image dropped, the ``rpn_pre_nms_top_n`` best by foreground
    probability suppressed at IoU ``threshold``; ``rpn_post_nms_top_n`` rows ``[batch index,
    corners]`` per image (repeating the kept ones when fewer), and their scores with
    ``output_score``."""
    if cls_prob.device.type == 'meta':
        n = cls_prob.shape[0] * attrs['rpn_post_nms_top_n']
        return cls_prob.new_empty((n, 5)), cls_prob.new_empty((n, 1))
    # computed from detached values: no gradient reaches the inputs (MXNet's proposals
    # have none)
    return _proposals(cls_prob, bbox_pred, im_info, **attrs)


def _proposal_rule(attrs, shapes, dtypes):
    prob, pred, info = (tuple(s) for s in shapes)
    a = len(attrs['scales']) * len(attrs['ratios'])
    if len(prob) != 4 or prob[1] != 2 * a or len(pred) != 4 or pred[1] != 4 * a:
        raise ShapeError("Proposal: cls_prob must be (batch, 2 x %d anchors, H, W) and bbox_pred "
                         "(batch, 4 x %d, H, W), got %s and %s" % (a, a, prob, pred))
    n = prob[0] * attrs['rpn_post_nms_top_n']
    return ((n, 5), (n, 1)), (dtypes[0], dtypes[0])


_PROPOSAL = {'rpn_pre_nms_top_n': Int(6000), 'rpn_post_nms_top_n': Int(300),
             'threshold': Float(0.7), 'rpn_min_size': Int(16),
             'scales': Floats((4.0, 8.0, 16.0, 32.0)), 'ratios': Floats((0.5, 1.0, 2.0)),
             'feature_stride': Int(16), 'output_score': Bool(False), 'iou_loss': Bool(False)}
for _name in ('_contrib_Proposal', '_contrib_MultiProposal'):
    register(_name, inputs=('cls_prob', 'bbox_pred', 'im_info'), heavy=True,
             num_outputs=lambda attrs: 2 if attrs['output_score'] else 1,
             infer=_proposal_rule, attrs=_PROPOSAL)(_proposal_kernel)
