"""Registers polar's envs the moment Gymnasium's env registry is first imported.

Gymnasium up to 0.29 loaded every `gymnasium.envs` entry point itself; 1.0 dropped that loader. The
one-line `polar_gym.pth` that ships with the package imports this module at start-up, which only adds an
import hook (nothing heavy is imported), so `gym.make("polar/Code-v0")` works without importing polar.
"""

import importlib.abc
import importlib.util
import sys


class _RegisterAfterLoad(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        from importlib.metadata import entry_points

        for ep in entry_points(group="gymnasium.envs"):
            if ep.name == "polar":
                try:
                    ep.load()()
                except Exception as e:  # never break Gymnasium's own import
                    import warnings

                    warnings.warn(f"polar-gym could not register its envs: {e!r}", stacklevel=2)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "gymnasium.envs":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisterAfterLoad(spec.loader)
        return spec


if "gymnasium.envs" not in sys.modules and not any(isinstance(f, _Finder) for f in sys.meta_path):
    sys.meta_path.insert(0, _Finder())
