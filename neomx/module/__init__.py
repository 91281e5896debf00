"""``mx.mod``: the module API for symbolic models (Module, BucketingModule)."""
from .base_module import BaseModule
from .bucketing_module import BucketingModule
from .module import Module

__all__ = ['BaseModule', 'Module', 'BucketingModule']
