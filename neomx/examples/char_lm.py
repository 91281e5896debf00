"""A character-level LSTM language model, hybridized, trained on text that ships with Python
(the documentation topics of ``pydoc_data``: English prose and code; nothing is
downloaded). Each epoch prints the training and validation perplexity, then a sample.

    python -m neomx.examples.char_lm                      # 10 epochs on 100,000 characters
    python -m neomx.examples.char_lm --epochs 3 --chars 30000 --hidden 128
    python -m neomx.examples.char_lm --help

The model: an embedding of the characters, a 2-layer ``gluon.rnn.LSTM`` (one fused RNN
operator call per batch), a dense decoder to the vocabulary; trained with truncated
backpropagation through time (the state carried from batch to batch, detached), Adam and
gradient clipping. Perplexity is exp of the mean cross-entropy per character.
"""
import argparse
import math
import time

import numpy as np

import neomx as mx
from neomx import autograd, gluon, nd
from neomx.gluon import nn, rnn

__all__ = ['load_text', 'CharLM', 'batchify', 'perplexity', 'main']


def load_text(chars):
    """The first ``chars`` characters of Python's documentation topics, in a fixed order."""
    from pydoc_data.topics import topics
    return '\n'.join(topics[k] for k in sorted(topics))[:chars]


class CharLM(gluon.HybridBlock):
    """Embedding -> LSTM -> Dense over (sequence, batch) character ids; returns the logits and
    the LSTM's new states."""

    def __init__(self, vocab, embed=64, hidden=256, layers=2, dropout=0.2, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.embed = nn.Embedding(vocab, embed)
            self.lstm = rnn.LSTM(hidden, num_layers=layers, dropout=dropout, input_size=embed)
            self.decoder = nn.Dense(vocab, flatten=False, in_units=hidden)

    def hybrid_forward(self, F, x, h, c):
        y, (h, c) = self.lstm(self.embed(x), [h, c])
        return self.decoder(y), h, c

    def begin_state(self, batch_size):
        return self.lstm.begin_state(batch_size)


def batchify(ids, batch_size):
    """(steps, batch) array: the id sequence cut into ``batch_size`` contiguous streams."""
    n = len(ids) // batch_size
    return nd.array(np.asarray(ids[:n * batch_size]).reshape(batch_size, n).T)


def perplexity(model, data, seq_len, batch_size, loss):
    """Perplexity of ``model`` on ``data`` (predict mode, state carried over)."""
    h, c = model.begin_state(batch_size)
    total, count = 0.0, 0
    for i in range(0, data.shape[0] - 1, seq_len):
        n = min(seq_len, data.shape[0] - 1 - i)
        x, y = data[i:i + n], data[i + 1:i + 1 + n]
        out, h, c = model(x, h, c)
        total += loss(out.reshape((-1, out.shape[2])), y.reshape((-1,))).sum().asscalar()
        count += y.size
    return math.exp(total / count)


def sample(model, chars, index, start, length, rng):
    """``length`` characters drawn from the model after the text ``start``."""
    h, c = model.begin_state(1)
    out = None
    for ch in start:
        out, h, c = model(nd.array([[index[ch]]]), h, c)
    text = []
    for _ in range(length):
        p = nd.softmax(out[-1, 0]).asnumpy().astype(np.float64)
        k = rng.choice(len(p), p=p / p.sum())
        text.append(chars[k])
        out, h, c = model(nd.array([[k]]), h, c)
    return ''.join(text)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument('--chars', type=int, default=100000, help='characters of text to use')
    p.add_argument('--epochs', type=int, default=10)
    p.add_argument('--batch-size', type=int, default=32)
    p.add_argument('--seq-len', type=int, default=35)
    p.add_argument('--hidden', type=int, default=256)
    p.add_argument('--layers', type=int, default=2)
    p.add_argument('--lr', type=float, default=3e-3)
    p.add_argument('--clip', type=float, default=1.0)
    p.add_argument('--seed', type=int, default=1)
    args = p.parse_args(argv)
    mx.random.seed(args.seed)
    rng = np.random.RandomState(args.seed)

    text = load_text(args.chars)
    chars = sorted(set(text))
    index = {ch: i for i, ch in enumerate(chars)}
    ids = [index[ch] for ch in text]
    split = len(ids) * 9 // 10
    train, valid = batchify(ids[:split], args.batch_size), batchify(ids[split:], args.batch_size)
    print('%d characters (%d distinct); train %s, valid %s (steps x streams)'
          % (len(text), len(chars), train.shape, valid.shape))

    model = CharLM(len(chars), hidden=args.hidden, layers=args.layers)
    model.initialize(mx.init.Xavier())
    model.hybridize()
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(model.collect_params(), 'adam', {'learning_rate': args.lr})
    params = [p for p in model.collect_params().values() if p.grad_req != 'null']
    print('epoch  train ppl  valid ppl  chars/s')
    for epoch in range(args.epochs):
        start = time.time()
        h, c = model.begin_state(args.batch_size)
        total, count = 0.0, 0
        for i in range(0, train.shape[0] - 1, args.seq_len):
            n = min(args.seq_len, train.shape[0] - 1 - i)
            x, y = train[i:i + n], train[i + 1:i + 1 + n]
            h, c = h.detach(), c.detach()
            with autograd.record():
                out, h, c = model(x, h, c)      # one loss per character:
                l = loss(out.reshape((-1, out.shape[2])), y.reshape((-1,)))
            l.backward()
            gluon.utils.clip_global_norm([p.grad() for p in params], args.clip * y.size)
            trainer.step(y.size)
            total += l.sum().asscalar()
            count += y.size
        seconds = time.time() - start
        print('%5d  %9.2f  %9.2f  %7.0f' % (epoch + 1, math.exp(total / count),
                                            perplexity(model, valid, args.seq_len,
                                                       args.batch_size, loss),
                                            count / seconds))
    print('sample:', repr('The ' + sample(model, chars, index, 'The ', 120, rng)))


if __name__ == '__main__':
    main()
