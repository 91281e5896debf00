"""Shape inference on torch's 'meta' device imports torch's symbolic-shape machinery (sympy,
sometimes torch._dynamo: seconds at first use). The operators a training script uses infer
shapes by rule instead; this keeps it so."""
import json
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import json, sys
    import neomx as mx
    from neomx import autograd, gluon, nd
    from neomx.gluon import nn
    from neomx.gluon.model_zoo import vision
    from neomx.ops import registry
    metas = []
    original = registry._infer_on_meta
    def spy(op, *args):
        metas.append(op.name)
        return original(op, *args)
    registry._infer_on_meta = spy

    lenet = nn.HybridSequential()
    lenet.add(nn.Conv2D(6, kernel_size=5, activation='sigmoid'), nn.MaxPool2D(2, 2),
              nn.Conv2D(16, kernel_size=5, activation='sigmoid'), nn.AvgPool2D(2, 2),
              nn.Dense(120, activation='relu'), nn.Dropout(0.5), nn.Dense(10))
    resnet = vision.resnet18_v1(classes=10)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    ctx = [mx.cpu(0), mx.cpu(1)]
    for net, shape in ((lenet, (4, 1, 28, 28)), (resnet, (2, 3, 32, 32))):
        net.initialize(mx.init.Xavier(), ctx=ctx)
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1, 'momentum': 0.9})
        for hybrid in (False, True):
            net.hybridize(hybrid)
            X = nd.random.uniform(shape=shape)
            y = nd.array([1, 2] * (shape[0] // 2))
            xs = gluon.utils.split_and_load(X, ctx)
            ys = gluon.utils.split_and_load(y, ctx)
            with autograd.record():
                ls = [loss(net(a), b) for a, b in zip(xs, ys)]
            for l in ls:
                l.backward()
            trainer.step(shape[0])
            acc = mx.metric.Accuracy()
            acc.update([y], [net(X.as_in_context(ctx[0])).softmax()])
    x = nd.random.normal(shape=(3, 5))
    outs = [x.topk(k=2), x.sort(), x.argsort(), x.argmax(axis=1), nd.pick(x, nd.array([0, 1, 2])),
            x.tile((2,)), x.flip(0), x.norm(), nd.one_hot(nd.array([1, 0]), 3), x.T, x.clip(0, 1),
            nd.concat(x, x, dim=0), nd.stack(x, x), x.mean(axis=0), x.expand_dims(0).squeeze(0)]
    nd.waitall()
    print(json.dumps({'meta': sorted(set(metas)), 'sympy': 'sympy' in sys.modules,
                      'dynamo': 'torch._dynamo' in sys.modules}))
''')


def test_training_path_infers_shapes_without_torch_meta_machinery():
    r = subprocess.run([sys.executable, '-c', SCRIPT], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got == {'meta': [], 'sympy': False, 'dynamo': False}
