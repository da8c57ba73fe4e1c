"""Run LEAPP's own test files against patchport, with only their import lines changed.

The user fetches LEAPP's tests (github nvidia-isaac/leapp, folder ``tests/``); we do not
vendor them. This script copies that folder to a temporary directory, rewrites each import
of ``leapp`` to ``patchport`` (``import leapp`` becomes ``import patchport as leapp``;
``from leapp.x import y`` becomes ``from patchport.x import y``), runs pytest there and
prints passed / failed / errors / skipped per file.

    python bench/leapp_own_tests.py /path/to/leapp/tests [-k EXPR] [--keep]

Files that need packages patchport does not support (Warp, Triton, TensorRT, LEAPP's
visualization package) are listed as "not run" unless ``--all`` is given.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

#: Files whose subject is outside patchport's scope, by a word in their path.
OUT_OF_SCOPE = ("warp", "triton", "tensorrt", "visualization")

_IMPORT = re.compile(r"^(\s*)import leapp(\s*(#.*)?)$")
_IMPORT_AS = re.compile(r"^(\s*)import leapp(\.[\w.]+)?(\s+as\s+\w+)")
_IMPORT_DOTTED = re.compile(r"^(\s*)import leapp\.")
_FROM = re.compile(r"^(\s*)from leapp(?=[\s.])")


def rewrite_imports(source: str) -> str:
    """Return ``source`` with every import of ``leapp`` pointed at ``patchport``.

    Only import statements change; a bare ``import leapp`` keeps the name ``leapp``
    bound so the rest of the file reads as written.
    """
    lines = []
    for line in source.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        end = line[len(body) :]
        if m := _IMPORT.match(body):
            body = f"{m.group(1)}import patchport as leapp{m.group(2)}"
        elif _IMPORT_AS.match(body):
            body = body.replace("import leapp", "import patchport", 1)
        elif _IMPORT_DOTTED.match(body):
            body = body.replace("import leapp.", "import patchport.", 1)
            body += "\nimport patchport as leapp"
        elif _FROM.match(body):
            body = _FROM.sub(r"\1from patchport", body, count=1)
        lines.append(body + end)
    return "".join(lines)


def prepare(source_dir: Path, work: Path) -> Path:
    """Copy LEAPP's ``tests`` folder into ``work`` with rewritten imports; return the copy."""
    target = work / "tests"
    shutil.copytree(source_dir, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in target.rglob("*.py"):
        path.write_text(rewrite_imports(path.read_text()))
    return target


def _file_of(case: ET.Element) -> str:
    if case.get("file"):
        return case.get("file", "")
    classname = case.get("classname", "") or case.get("name", "")
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        if parts[cut - 1].startswith("test_") or parts[cut - 1] == "base_example_test":
            return "/".join(parts[:cut]) + ".py"
    return classname


def tally(junit: Path) -> dict[str, dict[str, int]]:
    """Count outcomes per test file from a pytest junit XML report."""
    counts: dict[str, dict[str, int]] = defaultdict(
        lambda: {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    )
    for case in ET.parse(junit).getroot().iter("testcase"):
        row = counts[_file_of(case)]
        if case.find("failure") is not None:
            row["failed"] += 1
        elif case.find("error") is not None:
            row["errors"] += 1
        elif case.find("skipped") is not None:
            row["skipped"] += 1
        else:
            row["passed"] += 1
    return dict(counts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests", type=Path, help="LEAPP's tests/ folder")
    parser.add_argument("-k", default=None, help="pytest -k expression")
    parser.add_argument("--all", action="store_true", help="also run out-of-scope files")
    parser.add_argument("--keep", action="store_true", help="keep and print the temp copy")
    parser.add_argument("--timeout", type=int, default=3600)
    parser.add_argument(
        "--per-file",
        action="store_true",
        help="one pytest process per file (a session one file leaves open cannot leak)",
    )
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="leapp_own_tests_"))
    try:
        tests = prepare(args.tests.resolve(), work)
        files = sorted(p for p in tests.rglob("test_*.py"))
        skipped = [p for p in files if any(w in str(p.relative_to(work)) for w in OUT_OF_SCOPE)]
        chosen = files if args.all else [p for p in files if p not in skipped]
        counts: dict[str, dict[str, int]] = {}
        batches = [[p] for p in chosen] if args.per_file else [chosen]
        for number, batch in enumerate(batches):
            junit = work / f"junit{number}.xml"
            cmd = [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-o",
                "junit_family=xunit1",
                f"--junitxml={junit}",
                "--continue-on-collection-errors",
                "-W",
                "ignore::DeprecationWarning",
            ]
            if args.k:
                cmd += ["-k", args.k]
            cmd += [str(p.relative_to(work)) for p in batch]
            subprocess.run(cmd, cwd=work, timeout=args.timeout, check=False)
            if junit.exists():
                counts.update(tally(junit))
        print(f"\n{'file':58} {'pass':>5} {'fail':>5} {'err':>5} {'skip':>5}")
        total = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
        for path in chosen:
            rel = str(path.relative_to(work))
            row = counts.get(rel, {"passed": 0, "failed": 0, "errors": 0, "skipped": 0})
            for key in total:
                total[key] += row[key]
            print(
                f"{rel:58} {row['passed']:5} {row['failed']:5} {row['errors']:5} {row['skipped']:5}"
            )
        print(
            f"{'TOTAL':58} {total['passed']:5} {total['failed']:5} {total['errors']:5} "
            f"{total['skipped']:5}"
        )
        if skipped and not args.all:
            print("not run (out of scope):", ", ".join(p.name for p in skipped))
        if args.keep:
            print("copy kept at", work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
