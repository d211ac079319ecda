"""Installing evlog as a tool: one version everywhere, and a built wheel that installs and runs in a fresh venv."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile

import pytest

from eventlog._version import __version__
from tests.conftest import REPO


def test_the_version_is_written_once_and_every_surface_reads_it(cli_runner):
    import eventlog
    from eventlog.cli import cli

    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)
    assert "version" not in project["project"], "pyproject.toml must not repeat the version"
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "eventlog._version.__version__"}
    assert eventlog.__version__ == __version__
    result = cli_runner.invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"evlog, version {__version__}"


def test_the_changelog_has_a_section_for_this_version():
    with open(os.path.join(REPO, "CHANGELOG.md"), encoding="utf-8") as f:
        text = f.read()
    base = __version__.split(".dev")[0]
    assert f"## {base}" in text or f"## v{base}" in text
    for old in ("0.1.0", "0.2.0"):
        assert f"## {old}" in text


def _build_wheel(dest: str, tmp: str) -> str:
    """Build the wheel from a copy of the sources (the repository gets no build/ folder)."""
    src = os.path.join(tmp, "src")
    os.makedirs(src)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(REPO, name), src)
    for pkg in ("eventlog", "projections", "processors"):
        shutil.copytree(os.path.join(REPO, pkg), os.path.join(src, pkg),
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                        "--disable-pip-version-check", "-q", "-w", dest, src], capture_output=True, text=True)
    assert r.returncode == 0, ("building the wheel failed (the test extra brings setuptools>=70.1: "
                               f"pip install -e '.[test]'):\n{r.stderr[-3000:]}")
    (wheel,) = [f for f in os.listdir(dest) if f.endswith(".whl")]
    return os.path.join(dest, wheel)


@pytest.mark.slow
def test_the_built_wheel_installs_into_a_fresh_venv_and_runs(tmp_path):
    """pipx/uv tool install build this same wheel; here: build it, install it alone, run evlog from the venv's bin."""
    wheel = _build_wheel(str(tmp_path / "dist"), str(tmp_path))
    assert os.path.basename(wheel) == f"evlog-{__version__}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    for data in ("eventlog/app/web/templates/base.html", "eventlog/app/web/templates/why.html",
                 "eventlog/app/web/static/app.css", "eventlog/app/web/static/app.js"):
        assert data in names, f"package data missing from the wheel: {data}"
    assert not [n for n in names if n.startswith("tests/") or n.startswith("tools/")]

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", py, "install", "--no-deps", "--no-index",
                        "--disable-pip-version-check", "-q", wheel], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    # The dependencies come from the test's own environment (already downloaded): a .pth adds its
    # site-packages after the fresh venv's own, and a .pth inside it (an editable evlog) is not run.
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    with open(os.path.join(site, "deps.pth"), "w") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EVLOG_HOME")}
    env["HOME"] = str(tmp_path / "user")
    evlog = str(venv / "bin" / "evlog")
    assert os.access(evlog, os.X_OK), "the wheel puts no evlog on the venv's PATH"
    out = subprocess.run([evlog, "--version"], env=env, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"evlog, version {__version__}"
    where = subprocess.run([py, "-c", "import eventlog, eventlog.app.web.app as w; print(eventlog.__file__); "
                            "print(w.HERE)"], env=env, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert all(line.startswith(site) for line in where.stdout.split()), where.stdout  # the installed copy ran
    home = tmp_path / "ws"
    subprocess.run([evlog, "--home", str(home), "init"], env=env, cwd=tmp_path, check=True, capture_output=True)
    assert (home / "evlog.json").is_file()
    setup = subprocess.run([evlog, "--home", str(home), "setup", "claude-code"], env=env, cwd=tmp_path,
                           capture_output=True, text=True, check=True)
    settings = (tmp_path / "user" / ".claude" / "settings.json").read_text()
    assert evlog in settings and "hook claude-code" in settings, setup.stderr
    env.pop("XDG_CONFIG_HOME", None)
    daemon = subprocess.run([evlog, "--home", str(home), "daemon", "install", "--platform", "systemd"], env=env,
                            cwd=tmp_path, capture_output=True, text=True)
    assert daemon.returncode == 0, daemon.stderr
    (unit,) = (tmp_path / "user" / ".config" / "systemd" / "user").iterdir()
    assert f"ExecStart={evlog} --home {home} daemon" in unit.read_text()
    status = subprocess.run([evlog, "--home", str(home), "status", "--json"], env=env, cwd=tmp_path,
                            capture_output=True, text=True, check=True)
    assert '"service":"' + str(unit) + '"' in status.stdout
