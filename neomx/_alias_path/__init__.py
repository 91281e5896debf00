"""A directory that ``neomx run`` puts in front of PYTHONPATH: its ``mxnet`` package makes
``import mxnet`` give neomx in the Python processes a script starts."""
