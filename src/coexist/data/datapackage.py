"""The datapackage: every data file the book ships described once, in
``data/datapackage.json`` (Frictionless Data's format): each table kind's schema and units,
each file's sha256, and per campaign the provenance of its runs. :func:`verify` checks the
files on disk against it, so a changed, missing or stray file is named."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from ..core import files, sidecars
from ..core.paths import DATA
from .schemas import RUN_FILES, SCHEMAS
from .summary_file import read_summary


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _schema_json(schema: str) -> dict:
    return {"fields": [{k: v for k, v in (("name", f.name), ("type", f.type),
                                          ("unit", f.unit or None),
                                          ("description", f.description or None))
                        if v is not None} for f in SCHEMAS[schema]]}


def build_datapackage(data_dir: Path = DATA) -> dict:
    """Describe every data file: schema and units per table kind, sha256 per file,
    and per campaign the provenance of its runs (commits, kernel, CPU, tools, dates)."""
    data_dir = Path(data_dir)
    resources = []
    for spec_file in sorted((data_dir / "campaigns").glob("*.yaml")):
        name = spec_file.stem
        run_root = data_dir / "runs" / name
        runs = sorted(p for p in run_root.iterdir() if p.is_dir() and not
                      p.name.startswith((".", "_"))) if run_root.exists() else []
        invalid = sorted((run_root / "_invalid").iterdir()) \
            if (run_root / "_invalid").exists() else []
        summaries = [read_summary(r / "summary.json") for r in runs]
        provs = [s["provenance"] for s in summaries]
        provenance = {
            "produced_by": f"coexist campaign run data/campaigns/{spec_file.name}",
            "runs_valid": len(runs), "runs_invalid": len(invalid),
            "commits": sorted({p["commit"] for p in provs if p.get("commit")}),
            "kernels": sorted({p["kernel"] for p in provs}),
            "cpus": sorted({p["cpu"] for p in provs if p.get("cpu")}),
            "tools": sorted({json.dumps(p.get("tools"), sort_keys=True) for p in provs}),
            "first_run_utc": min((p["time_utc"] for p in provs), default=None),
            "last_run_utc": max((p["time_utc"] for p in provs), default=None),
        }
        files = [spec_file]
        table = data_dir / f"{name}.csv"
        resources.append({"name": f"{name}-spec", "path": _rel(spec_file, data_dir),
                          "format": "yaml", "sha256": sha256(spec_file),
                          "provenance": provenance})
        if table.exists():
            resources.append({"name": name, "path": _rel(table, data_dir), "format": "csv",
                              "schema": _schema_json("campaign"), "sha256": sha256(table)})
            files.append(table)
        summaries_paths = [r / "summary.json" for r in runs]
        if summaries_paths:
            resources.append({"name": f"{name}-summaries", "format": "json",
                              "path": [_rel(p, data_dir) for p in summaries_paths],
                              "sha256": {_rel(p, data_dir): sha256(p) for p in summaries_paths}})
        for kind, fname in RUN_FILES.items():
            paths = [r / fname for r in runs]
            if paths:
                resources.append({
                    "name": f"{name}-{kind}", "format": "csv",
                    "compression": "gz" if fname.endswith(".gz") else None,
                    "path": [_rel(p, data_dir) for p in paths], "schema": _schema_json(kind),
                    "sha256": {_rel(p, data_dir): sha256(p) for p in paths}})
    resources += (_reference_resources(data_dir) + _model_run_resources(data_dir)
                  + _external_resources(data_dir))
    return {"name": "coexist-measurements", "profile": "data-package",
            "description": "Real Linux CUBIC/BBR/Reno flows through an emulated drop-tail "
                           "dumbbell, measured by the coexist harness.",
            "licenses": [{"name": "CC-BY-4.0"}], "resources": resources}


#: the provenance ``pipelines/authors_reference.py`` records beside the authors' outputs
AUTHORS_META = sidecars.obj({
    **{k: sidecars.Key((str, dict, list)) for k in ("command", "source", "commit", "paper",
                                                    "entry_points", "host")},
    "runs": sidecars.listing(sidecars.obj({"python": sidecars.text(),
                                           "time_utc": sidecars.text()}), nonempty=True)})


def _reference_resources(data_dir: Path) -> list[dict]:
    """The outputs of the source papers' own code under ``reference/`` (made by
    ``pipelines/authors_reference.py``), with the provenance that script recorded."""
    ref = data_dir / "reference"
    meta_path = ref / "authors_fluid.json"
    if not meta_path.exists():
        return _model_resources(ref, data_dir)
    meta = sidecars.read_json(meta_path, AUTHORS_META, "reference provenance")
    provenance = {"produced_by": meta["command"], "source": meta["source"],
                  "commit": meta["commit"], "paper": meta["paper"],
                  "entry_points": meta["entry_points"], "host": meta["host"],
                  "interpreters": sorted({r["python"] for r in meta["runs"]}),
                  "runs": len(meta["runs"]),
                  "first_run_utc": min(r["time_utc"] for r in meta["runs"]),
                  "last_run_utc": max(r["time_utc"] for r in meta["runs"])}
    traces = sorted((ref / "authors_fluid_traces").glob("*.csv.gz"))
    return [
        {"name": "authors-fluid-provenance", "path": _rel(meta_path, data_dir),
         "format": "json", "sha256": sha256(meta_path), "provenance": provenance},
        {"name": "authors-fluid-runs", "path": "reference/authors_fluid_runs.csv",
         "format": "csv", "description": "the authors' fluid model: one row per configuration",
         "sha256": sha256(ref / "authors_fluid_runs.csv")},
        {"name": "authors-fluid-flows", "path": "reference/authors_fluid_flows.csv",
         "format": "csv", "description": "the authors' fluid model: one row per flow",
         "sha256": sha256(ref / "authors_fluid_flows.csv")},
        {"name": "authors-fluid-traces", "format": "csv", "compression": "gz",
         "description": "queue (packets) and per-flow rates (Mbit/s), 10-ms means",
         "path": [_rel(p, data_dir) for p in traces],
         "sha256": {_rel(p, data_dir): sha256(p) for p in traces}},
    ] + _model_resources(ref, data_dir)


#: tables under ``reference/`` that this project made itself, each ``<name>.csv`` with how it
#: was made in ``<name>.json``: the model's outputs too costly to recompute at every build
#: (made by a script in ``pipelines/``; a test re-runs some rows of each), and the first
#: edition's conclusions (quoted from that edition's files)
OWN_TABLES = {
    "fluid_run_length": "the fluid model's equilibrium-search runs read over 120 s and "
                        "240 s: per-flow goodput and its standard error per mix (csv), and "
                        "how they were made (json)",
    "fluid_step_equilibria": "the fluid model's equilibrium-search runs at half the "
                             "figures' step: per-flow goodput and its standard error per mix "
                             "(csv), and how they were made (json)",
    "first_edition": "the first edition's fluid-model conclusions, quoted from that "
                     "edition's files (csv), and how (json)",
}


def _model_resources(ref: Path, data_dir: Path) -> list[dict]:
    """:data:`OWN_TABLES` under ``reference/``, each with the provenance recorded beside it."""
    out = []
    for name, what in OWN_TABLES.items():
        meta_path = ref / f"{name}.json"
        if not meta_path.exists():
            continue
        files = [ref / f"{name}.csv", meta_path]
        out.append({"name": name.replace("_", "-"), "path": [_rel(f, data_dir) for f in files],
                    "format": "csv", "description": what,
                    "sha256": {_rel(f, data_dir): sha256(f) for f in files},
                    "provenance": sidecars.read_json(meta_path, sidecars.obj(),
                                                     "table provenance")})
    return out


def _model_run_resources(data_dir: Path) -> list[dict]:
    """The committed fluid-model runs under ``model-runs/`` (:mod:`coexist.runstore.store`):
    the index and every result object, with the provenance the index records."""
    root = data_dir / "model-runs"
    index = root / "index.jsonl"
    if not index.exists():
        return []
    entries = [json.loads(line) for line in index.read_text().splitlines() if line.strip()]
    provs = [e["provenance"] for e in entries]
    files = ([index] + [p for p in [root / "README.md"] if p.exists()]
             + sorted((root / "objects").glob("*/*.json.gz")))
    kinds = Counter(e["kind"] for e in entries)
    return [{"name": "model-runs", "format": "json", "compression": "gz",
             "description": "the fluid model's runs the book reads: index.jsonl (one line per "
                            "run: key, kind, inputs, result object, pages, provenance) and "
                            "objects/ (each result as canonical JSON, named by its sha256); "
                            "see model-runs/README.md",
             "path": [_rel(p, data_dir) for p in files],
             "sha256": {_rel(p, data_dir): sha256(p) for p in files},
             "provenance": {
                 "produced_by": "make store (coexist store refresh)",
                 "runs": len(entries), "kinds": dict(sorted(kinds.items())),
                 "commits": sorted({p["commit"] for p in provs if p.get("commit")}),
                 "kernels": sorted({p["kernel"] for p in provs}),
                 "cpus": sorted({p["cpu"] for p in provs if p.get("cpu")}),
                 "compute_s": round(sum(p.get("wall_s") or 0.0 for p in provs), 1),
                 "first_run_utc": min((p["time_utc"] for p in provs), default=None),
                 "last_run_utc": max((p["time_utc"] for p in provs), default=None)}}]


def _external_resources(data_dir: Path) -> list[dict]:
    """Third-party data under ``external/<source>/``, unchanged, each with its licence file
    and the README that names where it comes from."""
    out = []
    root = data_dir / "external"
    for src in sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []:
        files = sorted(p for p in src.rglob("*") if p.is_file())
        licence = (src / "LICENSE").read_text().splitlines()[0].strip() \
            if (src / "LICENSE").exists() else None
        out.append({"name": f"external-{src.name}", "format": "mixed",
                    "licenses": [{"name": licence, "path": _rel(src / "LICENSE", data_dir)}]
                    if licence else [],
                    "description": f"third-party data, unchanged: see {_rel(src, data_dir)}"
                                   "/README.md for its source",
                    "path": [_rel(p, data_dir) for p in files],
                    "sha256": {_rel(p, data_dir): sha256(p) for p in files}})
    return out


def _rel(path: Path, base: Path) -> str:
    return Path(path).relative_to(base).as_posix()


def write_datapackage(data_dir: Path = DATA) -> Path:
    path = Path(data_dir) / "datapackage.json"
    files.atomic_write(path, json.dumps(build_datapackage(data_dir), indent=1) + "\n")
    return path


def _sha256_text(value: str) -> str | None:
    ok = len(value) == 64 and all(c in "0123456789abcdef" for c in value)
    return None if ok else "a sha256 is 64 lower-case hex digits"


def _digests(value: str | dict) -> str | None:
    for digest in [value] if isinstance(value, str) else value.values():
        why = _sha256_text(digest) if isinstance(digest, str) else "a sha256 is a text"
        if why:
            return why
    return None


def _paths(value: str | list) -> str | None:
    paths = [value] if isinstance(value, str) else value
    ok = paths and all(isinstance(p, str) and p and not sidecars.CONTROL.search(p) for p in paths)
    return None if ok else "a path or a non-empty list of paths, without control characters"


def _hashes(resource: dict) -> str | None:
    """A resource's ``sha256`` is one digest for one ``path``, or a map from each of its
    paths to a digest."""
    digests, path = resource["sha256"], resource["path"]
    if isinstance(digests, str):
        return None if isinstance(path, str) else "one sha256 needs one path"
    paths = [path] if isinstance(path, str) else path
    return None if set(digests) == set(paths) else "the sha256 map names other paths than path"

#: what :func:`verify` reads of ``datapackage.json``: every resource's path(s) and hash(es)
DATAPACKAGE = sidecars.obj({"resources": sidecars.listing(sidecars.obj({
    "name": sidecars.text(nonempty=True),
    "path": sidecars.Key((str, list), test=_paths),
    "sha256": sidecars.Key((str, dict), test=_digests),
}, test=_hashes))})


def verify(data_dir: Path = DATA) -> list[str]:
    """Check every hash in datapackage.json against the files, and that every data file
    under ``runs/`` is described. Returns the problems found (empty when consistent)."""
    data_dir = Path(data_dir)
    pkg = sidecars.read_json(data_dir / "datapackage.json", DATAPACKAGE, "datapackage")
    problems, described = [], set()
    for res in pkg["resources"]:
        hashes = res["sha256"] if isinstance(res["sha256"], dict) else {res["path"]: res["sha256"]}
        for rel, digest in hashes.items():
            described.add(rel)
            p = data_dir / rel
            inside = p.resolve().is_relative_to(data_dir.resolve())
            if Path(rel).is_absolute() or ".." in Path(rel).parts or not inside:
                problems.append(f"{rel}: a resource path must be relative and inside "
                                f"{data_dir}")
            elif not p.exists():
                problems.append(f"{rel}: listed in datapackage.json but missing")
            elif not p.is_file():
                problems.append(f"{rel}: listed in datapackage.json but not a regular file")
            elif sha256(p) != digest:
                problems.append(f"{rel}: sha256 differs from datapackage.json")
    on_disk = {_rel(p, data_dir) for top in ("runs", "reference", "model-runs", "external")
               if (data_dir / top).exists() for p in (data_dir / top).rglob("*")
               if p.is_file() and "_invalid" not in p.parts
               and not any(part.startswith(".") for part in p.relative_to(data_dir).parts)}
    problems += [f"{rel}: not described in datapackage.json" for rel in sorted(on_disk - described)]
    return problems


