"""Name registries for families of classes (MXNet's ``mx.registry``): register subclasses of a
base class under lower-case names, then create instances from a name, a ``[name, kwargs]``
JSON string, a ``{nickname: name, ...}`` dict or JSON string, or an instance.

>>> class Shape: pass
>>> register = get_register_func(Shape, 'shape')
>>> create = get_create_func(Shape, 'shape')
>>> @register
... class Square(Shape):
...     def __init__(self, side=1):
...         self.side = side
>>> create('square', side=3).side, create('["square", {"side": 2}]').side
(3, 2)
"""
import json
import warnings

from .base import MXNetError

__all__ = ['get_registry', 'get_register_func', 'get_alias_func', 'get_create_func']

_REGISTRY = {}


def get_registry(base_class):
    """A copy of ``{name: class}`` registered for ``base_class``."""
    return dict(_REGISTRY.setdefault(base_class, {}))


def get_register_func(base_class, nickname):
    """A decorator ``register(klass, name=None)`` recording a subclass of ``base_class`` under
    ``name`` (default: its class name), lower-cased; a name registered again is replaced, with
    a warning."""
    registry = _REGISTRY.setdefault(base_class, {})

    def register(klass, name=None):
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise MXNetError("register: can only register a subclass of %s as a %s, got %r"
                             % (base_class.__name__, nickname, klass))
        name = (name or klass.__name__).lower()
        if name in registry:
            old = registry[name]
            warnings.warn("New %s %s.%s registered with name %s is overriding existing %s %s.%s"
                          % (nickname, klass.__module__, klass.__name__, name, nickname,
                             old.__module__, old.__name__), UserWarning, stacklevel=2)
        registry[name] = klass
        return klass
    register.__doc__ = "Registers a %s for the %s factory." % (nickname, nickname)
    return register


def get_alias_func(base_class, nickname):
    """A decorator factory ``alias(*names)`` registering a class under each of ``names``."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases):
        def reg(klass):
            for name in aliases:
                register(klass, name)
            return klass
        return reg
    return alias


def get_create_func(base_class, nickname):
    """A function ``create(name_or_config, *args, **kwargs)`` making a registered
    ``base_class`` (see the module's docstring for the forms it takes)."""
    registry = _REGISTRY.setdefault(base_class, {})

    def create(*args, **kwargs):
        if args:
            name, args = args[0], args[1:]
        elif nickname in kwargs:
            name = kwargs.pop(nickname)
        else:
            raise MXNetError("create: give the %s to make (a name, a config or an instance)"
                             % nickname)
        if isinstance(name, base_class):
            if args or kwargs:
                raise MXNetError("create: %s is already an instance; further arguments are "
                                 "invalid" % nickname)
            return name
        if isinstance(name, dict):
            return create(**name)
        if not isinstance(name, str):
            raise MXNetError("create: the %s must be a name (str), got %r" % (nickname, name))
        if name.startswith('[') or name.startswith('{'):
            if args or kwargs:
                raise MXNetError("create: a JSON %s config takes no further arguments"
                                 % nickname)
            config = json.loads(name)
            return create(config[0], **config[1]) if name.startswith('[') else create(**config)
        klass = registry.get(name.lower())
        if klass is None:
            raise MXNetError("create: %s is not a registered %s (known: %s); register it with "
                             "%s.register first" % (name, nickname,
                                                    ', '.join(sorted(registry)) or 'none',
                                                    nickname))
        return klass(*args, **kwargs)
    create.__doc__ = "Makes a %s from a name, a config or an instance." % nickname
    return create
