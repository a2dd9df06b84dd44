"""Install footprint of er-expectations over Great Expectations (issue 30: light installs).

Builds the wheel of this checkout, then makes fresh virtual environments side by side in a
temporary folder and measures the size on disk of each one's site-packages:

* ``gx``: great-expectations alone (the version the package requires);
* ``base``: ``er-expectations`` from the wheel (what a validation worker installs);
* ``charts``: ``er-expectations[charts]`` (vl-convert: the charts of Data Docs and ``--chart``);
* ``workbench``: ``er-expectations[workbench]`` (the labelling server);
* ``ethnicity``: ``er-expectations[ethnicity]`` (the surname checks: nothing more since the
  Census tables ship with the package).

It prints, and writes to ``benchmarks/results/install-footprint-<date>.json``, each
environment's size, its difference to ``gx`` and the largest distributions it adds. Targets:
base ≤ 120 MB over GX, the ethnicity extra ≤ 50 MB more than base. Needs the package index
(pip) and about 3 GB of temporary disk; takes a few minutes::

    python benchmarks/install_footprint.py
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MB = 1024 * 1024


def size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def site_packages(env: Path) -> Path:
    return next((env / "lib").glob("python*/site-packages"))


def distributions(env: Path) -> dict[str, int]:
    """Bytes on disk per installed distribution (from each RECORD file)."""
    out: dict[str, int] = {}
    site = site_packages(env)
    for record in site.glob("*.dist-info/RECORD"):
        name = record.parent.name.split("-")[0].lower().replace("_", "-")
        total = 0
        for line in record.read_text(encoding="utf-8").splitlines():
            rel = line.split(",")[0]
            target = (site / rel).resolve()
            if target.is_file():
                total += target.stat().st_size
        out[name] = total
    return out


def make(env: Path, *requirements: str) -> None:
    venv.EnvBuilder(with_pip=True).create(env)
    subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", *requirements], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    gx = next(d for d in project["dependencies"] if d.startswith("great-expectations"))
    with tempfile.TemporaryDirectory(prefix="erx-footprint-") as tmp:
        tmp_path = Path(tmp)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--disable-pip-version-check",
                        "-w", str(tmp_path / "dist"), str(ROOT)], check=True)
        wheel = next((tmp_path / "dist").glob("er_expectations-*.whl"))
        envs = {"gx": (gx,), "base": (str(wheel),), "charts": (f"{wheel}[charts]",),
                "workbench": (f"{wheel}[workbench]",),
                "ethnicity": (f"{wheel}[ethnicity]",)}
        sizes: dict[str, int] = {}
        added: dict[str, dict[str, float]] = {}
        reference: dict[str, int] = {}
        for name, requirements in envs.items():
            env = tmp_path / name
            make(env, *requirements)
            sizes[name] = size(site_packages(env))
            dists = distributions(env)
            if name == "gx":
                reference = dists
            added[name] = {d: round(b / MB, 1) for d, b in sorted(dists.items(), key=lambda kv: -kv[1])
                           if d not in reference}
            print(f"{name:10s} {sizes[name] / MB:8.1f} MB  (+{(sizes[name] - sizes['gx']) / MB:6.1f} MB over GX)",
                  flush=True)
        result = {
            "date": datetime.date.today().isoformat(), "wheel_mb": round(wheel.stat().st_size / MB, 2),
            "gx_requirement": gx,
            "site_packages_mb": {k: round(v / MB, 1) for k, v in sizes.items()},
            "over_gx_mb": {k: round((v - sizes["gx"]) / MB, 1) for k, v in sizes.items()},
            "ethnicity_over_base_mb": round((sizes["ethnicity"] - sizes["base"]) / MB, 1),
            "added_distributions_mb": added,
            "targets": {"base_over_gx_mb": 120, "ethnicity_over_base_mb": 50},
        }
    for name, dists in added.items():
        if dists:
            print(f"{name}: adds " + ", ".join(f"{d} {mb} MB" for d, mb in list(dists.items())[:8]))
    out = args.out or ROOT / "benchmarks" / "results" / f"install-footprint-{result['date']}.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
