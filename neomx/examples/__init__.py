"""Runnable examples. ``python -m neomx.examples.train`` trains LeNet and ResNet-18 on every
device available, on a real data set that needs no network (see ``datasets``)."""
