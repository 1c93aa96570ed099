"""A repository environment's preload (the modules its warm workers import, and the
libraries whose classes a repository run's judge rebuilds) is made of import names, read
from what the environment installed: scikit-learn is `sklearn`. With distribution names
(`scikit_learn`) every cleanlab reference whose function returns a fitted estimator
failed with "a value of type sklearn...LogisticRegression cannot cross from the solution
process to the judge", and its triage called those tests upstream failures."""

from __future__ import annotations

from pathlib import Path

from curator.execution.job import Job
from curator.execution.worker import repo_roots
from curator.repos import environments, requirements


def fake_env(prefix: Path) -> Path:
    site = prefix / "lib" / "python3.11" / "site-packages"
    dists = {
        # meson-built wheels have no top_level.txt: the RECORD says where files went
        "scikit_learn-1.5.2.dist-info": {"RECORD": "sklearn/__init__.py,sha256=x,1\n"
                                         "sklearn/linear_model/_logistic.py,sha256=x,1\n"
                                         "scikit_learn.libs/libgomp.so,sha256=x,1\n"
                                         "scikit_learn-1.5.2.dist-info/RECORD,,\n"},
        "PyYAML-6.0.2.dist-info": {"top_level.txt": "_yaml\nyaml\n"},
        "pillow-10.4.0.dist-info": {"top_level.txt": "PIL\n"},
        "six-1.16.0.dist-info": {"RECORD": "six.py,sha256=x,1\n"
                                 "six-1.16.0.dist-info/RECORD,,\n"},
        "torch-2.4.0.dist-info": {"top_level.txt": "functorch\ntorch\ntorchgen\n"},
        "tqdm-4.66.5.dist-info": {"top_level.txt": "tqdm\n"},
    }
    for folder, files in dists.items():
        (site / folder).mkdir(parents=True)
        for name, text in files.items():
            (site / folder / name).write_text(text, encoding="utf-8")
    return site


def test_preloads_are_the_modules_the_distributions_installed(tmp_path):
    site = fake_env(tmp_path / "env")
    runtime = ["numpy>=1.22", "scikit-learn>=1.1", "PyYAML", "pillow", "six", "tqdm>=4",
               "not-installed-here>=1"]
    assert requirements.preload_modules(runtime, site) == [
        "torch", "numpy", "sklearn", "yaml", "PIL", "six", "tqdm", "not_installed_here"]
    # without the environment, as before: the distribution's name as a module name
    assert requirements.preload_modules(["scikit-learn"]) == ["torch", "numpy",
                                                              "scikit_learn"]


def test_an_environment_recorded_with_distribution_names_is_read_again(tmp_path):
    prefix = tmp_path / "env"
    fake_env(prefix)
    assert environments.site_packages(prefix) == prefix / "lib/python3.11/site-packages"
    stored = ("torch", "numpy", "scikit_learn", "tqdm", "pyyaml")
    assert environments._import_names(stored, str(prefix)) == [
        "torch", "numpy", "sklearn", "tqdm", "yaml"]
    assert environments._import_names(stored, str(tmp_path / "gone")) == list(stored)


def test_the_judge_rebuilds_classes_of_the_preloaded_libraries(tmp_path):
    site = fake_env(tmp_path / "env")
    checkout = tmp_path / "repo"
    (checkout / "cleanlab").mkdir(parents=True)
    (checkout / "cleanlab" / "__init__.py").write_text("")
    (checkout / "cleanlab" / "classification.py").write_text("def fit():\n    pass\n")
    job = Job(problem_id="p", solution="def fit():\n    pass\n",
              overlay={"cleanlab/classification.py": "def fit():\n    pass\n"},
              env_preload=requirements.preload_modules(["numpy", "scikit-learn"], site))
    roots = repo_roots(checkout, job)
    assert roots[:4] == ["cleanlab", "torch", "numpy", "sklearn"]
    # then what the installed scikit-learn requires: its estimators hold scipy's classes
    assert "scipy" in roots[4:]
