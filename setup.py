"""Only here to ship `polar_gym.pth` (see `_polar_gym_hook.py`); everything else is in pyproject.toml."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithPth(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "polar_gym.pth"
        target.parent.mkdir(parents=True, exist_ok=True)
        self.copy_file("polar_gym.pth", str(target))

    def get_outputs(self, include_bytecode=True):
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / "polar_gym.pth")]


setup(cmdclass={"build_py": BuildWithPth})
