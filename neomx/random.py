"""``mx.random``: seeding and sampling (the same functions as ``mx.nd.random``)."""
from .ndarray.random import (exponential, gamma, generalized_negative_binomial,  # noqa: F401
                             multinomial, negative_binomial, normal, poisson, randint, randn,
                             seed, shuffle, uniform)

__all__ = ['seed', 'uniform', 'normal', 'randn', 'randint', 'exponential', 'gamma', 'poisson',
           'negative_binomial', 'generalized_negative_binomial', 'multinomial', 'shuffle']
