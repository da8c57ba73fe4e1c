"""The ``patchport`` command line: shipped patches (list, diff, docs) and exported bundles
(info, check, run, draw)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .cli_bundle import add_bundle_commands

# the shipped replacement sets: family (the patching name) -> (title, library module)
_SETS = {"opencv": ("OpenCV", "cv2"), "scipy": ("SciPy", "scipy"), "pil": ("Pillow", "PIL")}


def _set_supported(family: str) -> list:
    """A shipped replacement set's declarations, or none when its library is not installed."""
    try:
        module = importlib.import_module(f".patches.{family}", __package__)
    except ImportError:
        return []
    return module.supported()


def _cmd_list(args: argparse.Namespace) -> int:
    from .torch.catalog import catalog_rows

    rows = catalog_rows(args.family) if args.family not in _SETS else []
    headers = ("family", "name", "target", "versions", "here")
    table = [headers] + [(r.family, r.name, r.target, r.versions, r.status) for r in rows]
    shown = []
    for family, (_, library) in _SETS.items():
        specs = _set_supported(family) if args.family in (None, family) else []
        if specs:
            tested = f"{family} (tested {importlib.import_module(library).__version__})"
            table += [(family, s.function, s.target, tested, "applies") for s in specs]
            shown.append((family, specs))
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    for family, specs in shown:
        title = _SETS[family][0]
        print(f'\n{title} replacements, supported cases (start(patching=["{family}"])):')
        for spec in specs:
            print(f"  {spec.target}: {spec.cases()}; accuracy: {spec.accuracy}")
    return 0


def _cmd_diff(args: argparse.Namespace) -> int:
    from .torch.builtin import builtin_patches
    from .torch.catalog import builtin_diff, find_builtin

    if args.name:
        spec = find_builtin(args.name)
        if spec is None:
            known = ", ".join(p.name for p in builtin_patches())
            print(
                f"patchport patches diff: no shipped patch named {args.name!r}; known: {known}",
                file=sys.stderr,
            )
            return 2
        specs = [spec]
    else:
        specs = list(builtin_patches())
    print("\n\n".join(builtin_diff(spec) for spec in specs))
    return 0


def _write_or_print(text: str, output: str | None) -> int:
    """Write generated text to ``output``, or to stdout when no file is given."""
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
        print(f"wrote {output}")
    else:
        sys.stdout.write(text)
    return 0


def _cmd_docs(args: argparse.Namespace) -> int:
    from .torch.catalog import render_patches_markdown

    return _write_or_print(render_patches_markdown(), args.output)


def _cmd_set_docs(args: argparse.Namespace) -> int:
    """``patchport patches <set>-docs``: the set's replacement table (an optional set's
    import raises an ImportError naming its install command when the library is missing)."""
    module = importlib.import_module(f"patchport.patches.{args.family}")
    return _write_or_print(module.render_markdown(), args.output)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``patchport`` command."""
    parser = argparse.ArgumentParser(prog="patchport", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    patches = commands.add_parser("patches", help="shipped patches")
    actions = patches.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="family, name, target, versions, applies here")
    listing.add_argument(
        "--family", help="only this family (torch, transformers, opencv, scipy, pil)"
    )
    listing.set_defaults(run=_cmd_list)
    diff = actions.add_parser("diff", help="unified diff of one shipped patch, or of all")
    diff.add_argument("name", nargs="?", help="patch name or dotted target")
    diff.set_defaults(run=_cmd_diff)
    docs = actions.add_parser("docs", help="write the markdown catalogue (docs/patches.md)")
    docs.add_argument("--output", "-o", help="file to write; stdout when omitted")
    docs.set_defaults(run=_cmd_docs)
    for family, (title, _library) in _SETS.items():
        set_docs = actions.add_parser(
            f"{family}-docs", help=f"write the {title} replacement table (docs/{family}.md)"
        )
        set_docs.add_argument("--output", "-o", help="file to write; stdout when omitted")
        set_docs.set_defaults(run=_cmd_set_docs, family=family)
    add_bundle_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``patchport`` command."""
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
