"""SWE-bench's spec table as data: regenerated from swebench 4.1.0 (never a hand copy), keyed by (repo, version), and
turned into a polar environment's requirements and pytest command."""

import json

import pytest

from polar.envs.swe.environment import PYTEST, TEST_FILES
from polar.envs.swe.swebench_specs import PACKAGE, TABLE, environment_from_spec, read_mapping, spec_for, table

LITE_DEV_REPOS = ("marshmallow-code/marshmallow", "sqlfluff/sqlfluff", "pylint-dev/astroid", "pydicom/pydicom",
                  "pvlib/pvlib-python", "pyvista/pyvista")
"""The repositories of SWE-bench Lite's dev split."""


def test_the_table_names_its_source_and_covers_swe_bench_s_python_repositories():
    data = json.loads(TABLE.read_text())
    assert PACKAGE in data["source"] and "MAP_REPO_VERSION_TO_SPECS_PY" in data["source"]
    assert all(repo in table() for repo in (*LITE_DEV_REPOS, "django/django", "sympy/sympy", "astropy/astropy"))
    assert sum(map(len, table().values())) >= 300
    assert spec_for("marshmallow-code/marshmallow", "3.0")["install"] == "python -m pip install -e '.[dev]'"
    assert spec_for("marshmallow-code/marshmallow", "0.0") is None and spec_for("no/such", "1.0") is None


def test_the_table_is_what_the_module_it_comes_from_defines():
    """The reader runs a constants module in the package's shape (helpers, comprehensions, updates) and keeps only
    the mapping, as JSON values."""
    source = ('TEST = "pytest -rA"\nSPECS_A = {k: {"python": "3.9", "test_cmd": TEST} for k in ["1.0", "1.1"]}\n'
              'SPECS_A.update({"2.0": {"python": "3.11", "pip_packages": ["x==1"], "test_cmd": [TEST]}})\n'
              'MAP_REPO_VERSION_TO_SPECS_PY = {"o/a": SPECS_A}\nOTHER = 1\n')
    assert read_mapping(source) == {"o/a": {"1.0": {"python": "3.9", "test_cmd": "pytest -rA"},
                                            "1.1": {"python": "3.9", "test_cmd": "pytest -rA"},
                                            "2.0": {"python": "3.11", "pip_packages": ["x==1"],
                                                    "test_cmd": ["pytest -rA"]}}}


def test_a_pytest_spec_becomes_requirements_and_a_command_on_the_test_patch_s_files():
    requirements, command = environment_from_spec(spec_for("pydicom/pydicom", "2.3"), PYTEST, TEST_FILES)
    assert requirements == ["pytest", "numpy"] and command == f"{PYTEST} -rA {TEST_FILES}"
    spec = {"packages": "requirements.txt", "pip_packages": ["a==1"], "test_cmd": "pytest --no-header -rA"}
    assert environment_from_spec(spec, PYTEST, TEST_FILES) == (["a==1", "pytest"],
                                                               f"{PYTEST} --no-header -rA {TEST_FILES}")


@pytest.mark.parametrize("repo,version,runner", [("django/django", "4.0", "runtests.py"),
                                                 ("sympy/sympy", "1.12", "bin/test")])
def test_a_spec_whose_tests_do_not_run_under_pytest_is_refused_naming_its_runner(repo, version, runner):
    with pytest.raises(ValueError, match=f"{runner}.*pytest runs only"):
        environment_from_spec(spec_for(repo, version), PYTEST, TEST_FILES)
