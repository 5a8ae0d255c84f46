"""A wheel built from the tree carries every data file: the packaged venues run from it."""

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).parents[1]


def run(*args, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, timeout=600, **kwargs
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result


def test_wheel_installs_in_a_fresh_venv_and_runs_the_packaged_venues(tmp_path):
    dist = tmp_path / "dist"
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
        "-w", dist, ROOT)  # fmt: skip
    [wheel] = dist.glob("stellar_testing-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    data = [n for n in names if not n.endswith(".py") and n.startswith("stellar/")]
    assert any(n.endswith("restaurant_db.json") for n in data), data
    assert any(n.endswith("entry_points.txt") for n in names)
    for shipped in ("stellar/review/page/review.js", "stellar/scaffold/usecase.yaml.j2"):
        assert shipped in data, shipped  # the review page and the scaffold are package data

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", wheel)
    # dependencies come from this environment, after the fresh one's own site-packages
    purelib = run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").stdout
    Path(purelib.strip(), "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")

    where = run(python, "-c", "import stellar; print(stellar.__file__)", cwd=tmp_path).stdout
    assert where.startswith(str(venv)), where
    result = run(venv / "bin" / "stellar", "run", "--tests", "30", "--option", "pois=multiwoz",
                 "--quiet", "--show", "0", "--out", tmp_path / "runs", cwd=tmp_path)  # fmt: skip
    assert "tests 30" in result.stdout  # on Cambridge venues most random requests are excluded
    config = next((tmp_path / "runs").glob("*/config.yaml")).read_text()
    assert "pois: multiwoz" in config
