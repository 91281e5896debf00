"""The two-device experiment of the "automatic parallelism" notes, as a profiled script.

Draws docs/img/two_device_timeline.png (from the repository root):

    neomx profile -o two_device.json docs/img/two_device_timeline.py
    python -c "import neomx; neomx.profiler.timeline_png('two_device.json', \
        'docs/img/two_device_timeline.png', title='60 x dot(400x400) on cpu(0), then on cpu(1)')"
"""
import mxnet as mx
from mxnet import nd


def run(x):
    return [nd.dot(x, x) for _ in range(60)]


x_cpu0 = nd.random.uniform(shape=(400, 400), ctx=mx.cpu(0))
x_cpu1 = nd.random.uniform(shape=(400, 400), ctx=mx.cpu(1))
nd.waitall()
run(x_cpu0)     # queued on cpu(0)'s worker: returns at once
run(x_cpu1)     # queued on cpu(1)'s worker while cpu(0) computes
nd.waitall()
