"""Constants of the contrib datasets (MXNet's ``gluon.contrib.data._constants``)."""
EOS_TOKEN = '<eos>'
