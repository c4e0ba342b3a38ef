"""Only here to ship `polar_gym.pth` (see `_polar_gym_hook.py`); everything else is in pyproject.toml.

Regular wheels get the file through `build_py`; editable installs through setuptools' editable strategy
(a private hook: if a future setuptools drops it, editable installs just need `import polar.envs`).
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "polar_gym.pth"


class BuildWithPth(build_py):
    def run(self):
        super().run()
        self.copy_file(PTH, str(Path(self.build_lib) / PTH))

    def get_outputs(self, include_bytecode=True):
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / PTH)]


class EditableWithPth(editable_wheel):
    def _select_strategy(self, *args, **kwargs):
        strategy = super()._select_strategy(*args, **kwargs)

        class WithPth:
            def __enter__(self):
                strategy.__enter__()
                return self

            def __exit__(self, *exc):
                return strategy.__exit__(*exc)

            def __call__(self, wheel, files, mapping):
                strategy(wheel, files, mapping)
                wheel.writestr(PTH, Path(PTH).read_bytes())

        return WithPth()


setup(cmdclass={"build_py": BuildWithPth, "editable_wheel": EditableWithPth})
