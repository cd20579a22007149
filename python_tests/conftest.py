"""Shared setup: the h5zgpu helper, the plugin on HDF5's search path, and the tools' locations.

Runs under any h5py: Debian's python3-h5py (HDF5 1.10) and the pip wheel (its own HDF5 2.x).
scripts/test.sh sets HDF5_PLUGIN_PATH to the build's plugin/ and H5ZGPU_BIN to its bin/h5zgpu.
"""
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import h5zgpu
except ImportError:  # not pip-installed: use the source tree's copy
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import h5zgpu

# HDF5 reads HDF5_PLUGIN_PATH when it starts, and h5repack/h5dump inherit it: set it before h5py.
try:
    PLUGIN_DIR = h5zgpu.plugin_dir()
    os.environ.setdefault("HDF5_PLUGIN_PATH", PLUGIN_DIR)
    PLUGIN_ERROR = None
except FileNotFoundError as e:
    PLUGIN_DIR, PLUGIN_ERROR = None, str(e)

import h5py  # noqa: E402


def pytest_report_header(config):
    return [f"python {sys.executable} {sys.version.split()[0]}",
            f"h5py {h5py.version.version} from {os.path.dirname(h5py.__file__)}, "
            f"HDF5 {h5py.version.hdf5_version}",
            f"h5zgpu helper {os.path.dirname(h5zgpu.__file__)}, plugin dir {PLUGIN_DIR}",
            f"H5ZGPU_DEVICE={os.environ.get('H5ZGPU_DEVICE', '(unset: auto)')}"]


@pytest.fixture(scope="session", autouse=True)
def plugin():
    """Every test needs the real plugin; without it they fail, they do not skip."""
    if PLUGIN_ERROR:
        pytest.fail(PLUGIN_ERROR)
    h5zgpu.register()
    return PLUGIN_DIR


def _h5zgpu_bin():
    explicit = os.environ.get("H5ZGPU_BIN")
    if explicit:
        return explicit
    if PLUGIN_DIR:
        candidate = os.path.join(os.path.dirname(PLUGIN_DIR), "bin", "h5zgpu")
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("h5zgpu")


@pytest.fixture(scope="session")
def h5zgpu_bin():
    path = _h5zgpu_bin()
    if not path:
        pytest.skip("no h5zgpu command: set H5ZGPU_BIN or build bin/h5zgpu beside plugin/ "
                    "(scripts/test.sh builds it and runs these tests)")
    return path


def tool(name):
    """A fixture body for an HDF5 command-line tool, skipping when it is not installed."""
    path = shutil.which(name)
    if not path:
        pytest.skip(f"{name} is not on PATH (Debian package hdf5-tools; scripts/test.sh "
                    "installs it and runs these tests)")
    return path


@pytest.fixture(scope="session")
def h5repack():
    return tool("h5repack")


@pytest.fixture(scope="session")
def h5dump():
    return tool("h5dump")


_MEASUREMENTS = []


@pytest.fixture
def report():
    """report(line): a measurement (e.g. a compression ratio) printed in the run's summary."""
    return _MEASUREMENTS.append


def pytest_terminal_summary(terminalreporter):
    if _MEASUREMENTS:
        terminalreporter.section("h5zgpu measurements")
        for line in _MEASUREMENTS:
            terminalreporter.write_line(line)
