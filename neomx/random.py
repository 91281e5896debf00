"""``mx.random``: seeding and sampling (the same functions as ``mx.nd.random``)."""
from .ndarray.random import (exponential, gamma, multinomial, normal, poisson, randint, randn,  # noqa: F401
                             seed, shuffle, uniform)

__all__ = ['seed', 'uniform', 'normal', 'randn', 'randint', 'exponential', 'gamma', 'poisson',
           'multinomial', 'shuffle']
