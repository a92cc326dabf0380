# SPDX-License-Identifier: GPL-2.0-or-later
"""Stand-ins for what a framework's modules import and this Python lacks.

install() puts an empty, permissive module in place of each named module
only where importing the real one fails, and a stand-in for each named
attribute only where it is missing; any attribute of a stand-in is another
stand-in (a class, callable, subscriptable).  The framework code a test
runs stays the framework's own: only the names its imports reach for are
supplied.  Each test names what it stubs and why.
"""
import abc
import importlib
import importlib.abc
import importlib.machinery
import sys
import types


class _Meta(abc.ABCMeta):
    """A stub class: any attribute is another stub class; a base beside ABC;
    applied to a class (a decorator), that class; iterates as empty."""

    def __call__(cls, *a, **k):
        if len(a) == 1 and not k and isinstance(a[0], type):
            return a[0]
        return super().__call__(*a, **k)

    def __iter__(cls):
        return iter(())

    def __contains__(cls, item):
        return False

    def register(cls, *a, **k):  # a registry's, not ABCMeta's
        return a[0] if a else None

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Meta(name, (_Any,), {})

    def __getitem__(cls, key):
        return cls

    def __or__(cls, other):
        return cls

    __ror__ = __or__


class _Any(metaclass=_Meta):
    def __init__(self, *a, **k):
        pass

    def __init_subclass__(cls, **k):
        pass

    def __call__(self, *a, **k):
        if len(a) == 1 and not k and isinstance(a[0], type):
            return a[0]  # a decorator made by a stub
        return _Any()

    def __iter__(self):
        return iter(())

    def __contains__(self, item):
        return False

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Any()


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Meta(name, (_Any,), {})


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: the submodules of a stubbed module."""

    def __init__(self):
        self.roots = []

    def find_spec(self, fullname, path, target=None):
        if any(fullname.startswith(r + ".") for r in self.roots):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return _stub_module(spec.name)

    def exec_module(self, module):
        pass


def _stub_module(name):
    m = _StubModule(name)
    m.__path__ = []
    m.__version__ = "0.0.0"
    return m


def install(modules, attrs, versions=None):
    """Stubs each of modules that fails to import and each of attrs
    ("module.name": a list, or a dict to the value to give it, None for a
    stand-in) that is missing; versions: module -> the __version__ of its
    stand-in.  Returns the names stubbed."""
    stubbed = []
    versions = versions or {}
    finder = _Finder()
    sys.meta_path.append(finder)
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # missing, or failing to import (torch 1.13's _shard)
            for k in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
                del sys.modules[k]
            sys.modules[name] = _stub_module(name)
            if name in versions:
                sys.modules[name].__version__ = versions[name]
            parent, _, leaf = name.rpartition(".")
            if parent in sys.modules:
                setattr(sys.modules[parent], leaf, sys.modules[name])
            finder.roots.append(name)
            stubbed.append(name)
    if not isinstance(attrs, dict):
        attrs = dict.fromkeys(attrs)
    for name, value in attrs.items():
        mod, _, leaf = name.rpartition(".")
        m = importlib.import_module(mod)
        if not hasattr(m, leaf):
            setattr(m, leaf, _Meta(leaf, (_Any,), {}) if value is None else value)
            stubbed.append(name)
    return stubbed


def identity(f):
    """typing.override and other decorators that return what they decorate."""
    return f


def custom_op(name, fn=None, **kw):
    """torch.library.custom_op (PyTorch 2.4): the op NAMESPACE::NAME as the
    Python function it decorates, under torch.ops."""
    import torch

    def register(f):
        ns, _, op = name.partition("::")
        setattr(getattr(torch.ops, ns), op, f)
        f.default = f  # the overload torch.ops.NS.NAME.default
        f.register_fake = f.register_autograd = lambda *a, **k: identity
        return f

    return register if fn is None else register(fn)


def run_sweep(plans, check, passed):
    """Runs check(plan) on every plan file: "ok PLAN" or "FAIL PLAN: WHY" a
    line each (None from check is a pass, a string the reason), then "N of M
    PASSED"; exits 1 when any failed."""
    bad = 0
    for plan in plans:
        why = check(plan)
        if why is None:
            print(f"ok {plan}")
        else:
            bad += 1
            print(f"FAIL {plan}: {why}")
    print(f"{len(plans) - bad} of {len(plans)} {passed}")
    sys.exit(1 if bad else 0)


def tree_and_plans(doc):
    """The check's arguments, a framework's source tree and plan files (the
    tree first on sys.path), or its usage (the doc's second paragraph) and
    exit 2."""
    if len(sys.argv) < 3:
        print(doc.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    sys.path.insert(0, sys.argv[1])
    return sys.argv[1], sys.argv[2:]
