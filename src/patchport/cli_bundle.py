"""``patchport bundle info|check|run|draw``: look inside an exported bundle, prove it loads
and runs, run it once on given inputs, draw its pipeline.

The YAML is read by the bundle runtime's own loader (:mod:`patchport.bundle.bundle_view`
for the description, :class:`~patchport.bundle.InferenceManager` to load and run), so the
command line sees a bundle exactly as a deployed program does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from .bundle.arrays import numpy_dtype
from .errors import BundleCommandError

_PROG = "patchport bundle"


def _view(path: str) -> Any:
    from .bundle.bundle_view import load_view

    yaml_path = Path(path)
    if not yaml_path.is_file():
        raise BundleCommandError(f"{path}: no such bundle description (a .yaml file).")
    try:
        return load_view(yaml_path)
    except Exception as exc:
        raise BundleCommandError(f"{path}: cannot read the bundle: {exc}") from exc


# --- info --------------------------------------------------------------------------------


def _port_line(view: Any, port: Any, direction: str) -> str:
    if direction == "in":
        feeds = [
            f"{'feedback ' if e.feedback else ''}<- {e.source}"
            for e in view.edges
            if e.target == port.key
        ]
        if port.key in view.inputs:
            feeds.append("<- pipeline input")
    else:
        feeds = [
            f"{'feedback ' if e.feedback else ''}-> {e.target}"
            for e in view.edges
            if e.source == port.key
        ]
        if port.key in view.outputs:
            feeds.append("-> pipeline output")
    dynamic = f"  dynamic dims {list(port.dynamic)}" if port.dynamic else ""
    semantics = "".join(f"  {k}={v}" for k, v in port.semantics.items())
    return (
        f"    {direction:<3} {port.name:<18} {port.describe():<22}{dynamic}{semantics}"
        f"  {', '.join(feeds) or '(unused)'}"
    ).rstrip()


def format_info(view: Any) -> str:
    """The human-readable ``info`` text."""
    lines = [f"bundle {view.name}  ({view.path})"]
    made = view.system
    versions = ", ".join(  # patchport writes torch_version, LEAPP "torch version"
        f"{key[: -len('version')].rstrip('_ ')} {value}"
        for key, value in made.items()
        if key.endswith(("_version", " version")) and value not in (None, "None", "")
    )
    lines.append(f"made with: {versions or 'unknown'}")
    platform = made.get("platform") or made.get("os")
    if platform:
        lines.append(f"made on:   {platform}")
    lines.append(f"run order: {' -> '.join(view.nodes) or '(no nodes)'}")
    for index, node in enumerate(view.nodes.values(), 1):
        digest = f"sha256 {node.sha256[:12]}…" if node.sha256 else "no sha256 recorded"
        lines.append("")
        lines.append(f"[{index}] {node.name}  backend {node.backend}  {node.model_path}  {digest}")
        lines += [_port_line(view, port, "in") for port in node.inputs]
        lines += [_port_line(view, port, "out") for port in node.outputs]
        if node.constants:
            lines.append(f"    constants ({len(node.constants)}):")
            for const in node.constants:
                shape = const.get("shape", [])
                origin = const.get("origin", "")
                lines.append(
                    f"      {const.get('name', '?')} {const.get('dtype', '?')}{list(shape)} "
                    f"{const.get('nbytes', '?')} B  {origin}".rstrip()
                )
        else:
            lines.append("    constants: none")
    lines.append("")
    forward = [e for e in view.edges if not e.feedback]
    feedback = [e for e in view.edges if e.feedback]
    lines.append(f"data flow ({len(forward)}):")
    lines += [f"  {e.source} -> {e.target}" for e in forward] or ["  (none)"]
    lines.append(f"feedback ({len(feedback)}):")
    lines += [f"  {e.source} -> {e.target}  (next step)" for e in feedback] or ["  (none)"]
    lines.append(f"pipeline inputs:  {', '.join(view.inputs) or '(none)'}")
    lines.append(f"pipeline outputs: {', '.join(view.outputs) or '(none)'}")
    for key, value in view.extra.items():
        lines.append(f"{key}: {value}")
    if made:
        lines.append("system:")
        lines += [f"  {key}: {value}" for key, value in made.items()]
    return "\n".join(lines)


def _cmd_info(args: argparse.Namespace) -> int:
    view = _view(args.bundle)
    if args.json:
        print(json.dumps(view.as_dict(), indent=2, default=str))
    else:
        print(format_info(view))
    return 0


# --- check -------------------------------------------------------------------------------


def mock_value(port: Any, rng: np.random.Generator) -> np.ndarray:
    """A random array for a port: recorded shape (2 for a dimension without a size)."""
    shape = tuple(d if isinstance(d, int) and d >= 0 else 2 for d in port.shape)
    dtype = numpy_dtype(port.dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 100 if dtype.itemsize > 1 else 256, size=shape).astype(dtype)
    return rng.standard_normal(size=shape).astype(dtype)


def _to_numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _matches(port: Any, value: np.ndarray) -> str | None:
    """Why ``value`` does not fit the declared port, or None."""
    shape, dims = tuple(value.shape), port.shape
    fixed = [i for i, d in enumerate(dims) if i not in port.dynamic]
    if len(shape) != len(dims) or any(shape[i] != dims[i] for i in fixed):
        return f"shape {list(shape)} instead of {list(dims)}"
    try:
        if value.dtype != numpy_dtype(port.dtype):
            return f"dtype {value.dtype} instead of {port.dtype}"
    except TypeError:
        pass
    return None


def check_bundle(view: Any) -> tuple[list[str], list[str]]:
    """Verify hashes, load and run each node, then the whole pipeline; (lines, problems)."""
    from .bundle.loaders import load_runner
    from .bundle.spec import sha256_of

    lines, problems = [], []
    rng = np.random.default_rng(0)
    folder = view.path.parent.resolve()
    header = (
        f"  {'node':<20} {'backend':<8} {'sha256':<9} {'load ms':>9} {'1st run ms':>11} "
        f"{'run ms':>9}  result"
    )
    lines.append(header)
    for node in view.nodes.values():
        path = view.model_file(node.name)
        state, load_ms, first_ms, run_ms, result = "-", "-", "-", "-", "ok"

        def fail(message: str, node: Any = node) -> None:
            problems.append(f"node {node.name!r}: {message}")

        if not path.is_relative_to(folder):
            fail(f"model path {node.model_path!r} points outside the bundle folder {folder}")
        elif not path.is_file():
            fail(f"model file {path} is missing")
        else:
            if not node.sha256:
                state = "none"
                fail("no sha256 recorded; the model cannot be verified")
            elif sha256_of(path) != node.sha256:
                state = "MISMATCH"
                fail(
                    f"{path.name} does not match the sha256 recorded in {view.path.name}; "
                    "it changed after export (re-run compile_graph() or restore the file)"
                )
            else:
                state = "ok"
        if state == "ok":
            try:
                started = time.perf_counter()
                runner = load_runner(node.backend, path, [p.name for p in node.inputs])
                load_ms = f"{(time.perf_counter() - started) * 1e3:.1f}"
                inputs = [mock_value(p, rng) for p in node.inputs]
                started = time.perf_counter()
                produced = runner(inputs)
                first_ms = f"{(time.perf_counter() - started) * 1e3:.2f}"
                started = time.perf_counter()  # a second call: without one-time warm-up
                runner(inputs)
                run_ms = f"{(time.perf_counter() - started) * 1e3:.2f}"
                if len(produced) != len(node.outputs):
                    fail(
                        f"returned {len(produced)} outputs, the bundle declares {len(node.outputs)}"
                    )
                for port, value in zip(node.outputs, produced):
                    why = _matches(port, _to_numpy(value))
                    if why:
                        fail(f"output {port.name!r} has {why}")
            except Exception as exc:
                fail(f"{type(exc).__name__}: {exc}")
        if any(p.startswith(f"node {node.name!r}") for p in problems):
            result = "FAILED"
        lines.append(
            f"  {node.name:<20} {node.backend:<8} {state:<9} {load_ms:>9} {first_ms:>11} "
            f"{run_ms:>9}  {result}"
        )
    lines.append(_check_pipeline(view, problems))
    return lines, problems


def _check_pipeline(view: Any, problems: list[str]) -> str:
    """Load the bundle as a deployed program does and run one mock input through it."""
    from .bundle.inference import InferenceManager

    try:
        started = time.perf_counter()
        manager = InferenceManager(view.path)
        load_ms = (time.perf_counter() - started) * 1e3
        inputs = manager.get_mock_input()
        started = time.perf_counter()
        outputs = manager.run_policy(inputs)
        run_ms = (time.perf_counter() - started) * 1e3
    except Exception as exc:
        problems.append(f"pipeline: {type(exc).__name__}: {exc}")
        return "  pipeline: FAILED to load or run (see below)"
    missing = [key for key in view.outputs if key not in outputs]
    if missing:
        problems.append(f"pipeline: run_policy did not return the outputs {missing}")
    return (
        f"  pipeline: InferenceManager loaded in {load_ms:.1f} ms; one run_policy on mock "
        f"inputs in {run_ms:.2f} ms, {len(outputs)} value(s) out"
    )


def _cmd_check(args: argparse.Namespace) -> int:
    view = _view(args.bundle)
    lines, problems = check_bundle(view)
    print(f"checking {view.path} ({len(view.nodes)} node(s))")
    print("\n".join(lines))
    if problems:
        print(f"{_PROG} check: {len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    print("ok: every hash verified, every model loaded and ran, the pipeline ran")
    return 0


# --- run ---------------------------------------------------------------------------------


def _read_inputs(path: str, expected: list[str]) -> dict[str, np.ndarray]:
    """Arrays from an .npz keyed ``node/port`` (a bare port name works when unique)."""
    if not Path(path).is_file():
        raise BundleCommandError(f"--inputs {path}: no such file.")
    with np.load(path, allow_pickle=False) as data:
        given = {key: data[key] for key in data.files}
    inputs, unknown = {}, []
    for key, value in given.items():
        if key in expected:
            inputs[key] = value
            continue
        matches = [e for e in expected if e.split("/", 1)[1] == key]
        if len(matches) == 1:
            inputs[matches[0]] = value
        else:
            unknown.append(key)
    missing = [key for key in expected if key not in inputs]
    if missing or unknown:
        raise BundleCommandError(
            f"--inputs {path}: "
            + (f"missing {missing}; " if missing else "")
            + (f"unknown arrays {unknown}; " if unknown else "")
            + f"the pipeline's inputs are {expected} (np.savez(file, **{{'node/port': array}}))."
        )
    return inputs


def _cmd_run(args: argparse.Namespace) -> int:
    from .bundle.inference import InferenceManager

    if bool(args.inputs) == bool(args.mock):
        raise BundleCommandError("run: give exactly one of --inputs FILE.npz or --mock.")
    view = _view(args.bundle)
    manager = InferenceManager(view.path)
    mock = manager.get_mock_input()
    if args.mock:
        inputs = mock
    else:
        inputs = _read_inputs(args.inputs, list(mock))
        for key, value in mock.items():  # hand values over as the manager's own type
            if hasattr(value, "detach"):
                import torch

                inputs[key] = torch.from_numpy(np.ascontiguousarray(inputs[key]))
    outputs = {key: _to_numpy(value) for key, value in manager.run_policy(inputs).items()}
    for key, value in outputs.items():
        flat = value.reshape(-1)[:6]
        more = " …" if value.size > 6 else ""
        print(f"{key}: {value.dtype}{list(value.shape)} {np.array2string(flat, precision=4)}{more}")
    if args.out:
        np.savez(args.out, **outputs)
        print(f"wrote {args.out}")
    return 0


# --- draw --------------------------------------------------------------------------------


def _cmd_draw(args: argparse.Namespace) -> int:
    from .export.drawing import draw_bundle

    view = _view(args.bundle)
    out = Path(args.output) if args.output else view.path.with_suffix(".png")
    if out.suffix.lower() not in (".png", ".svg"):
        raise BundleCommandError(f"draw -o {out}: write a .png or an .svg file.")
    draw_bundle(view, out)
    print(f"wrote {out}")
    return 0


def _guarded(command: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except BrokenPipeError:  # output piped into `head`: stop quietly, like other tools
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        except BundleCommandError as exc:
            print(f"{_PROG}: error: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:  # a load or run failure: one clear line, not a traceback
            print(f"{_PROG} {args.action}: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1

    return run


def add_bundle_commands(commands: Any) -> None:
    """Register ``bundle info|check|run|draw`` on the top-level subparsers."""
    bundle = commands.add_parser("bundle", help="inspect, check, run or draw an exported bundle")
    actions = bundle.add_subparsers(dest="action", required=True)
    info = actions.add_parser("info", help="nodes, ports, edges, constants, system")
    info.add_argument("bundle", help="the bundle's .yaml")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.set_defaults(run=_guarded(_cmd_info))
    check = actions.add_parser(
        "check", help="verify hashes, load and run every model; non-zero exit on a problem"
    )
    check.add_argument("bundle", help="the bundle's .yaml")
    check.set_defaults(run=_guarded(_cmd_check))
    run = actions.add_parser("run", help="one run_policy call on inputs from an .npz, or mock")
    run.add_argument("bundle", help="the bundle's .yaml")
    run.add_argument("--inputs", help="an .npz with one array per pipeline input (node/port)")
    run.add_argument("--mock", action="store_true", help="random inputs of the recorded shapes")
    run.add_argument("--out", help="write every output to this .npz")
    run.set_defaults(run=_guarded(_cmd_run))
    draw = actions.add_parser("draw", help="picture of the pipeline (.png or .svg)")
    draw.add_argument("bundle", help="the bundle's .yaml")
    draw.add_argument("--output", "-o", help="file to write; <bundle>.png beside the YAML")
    draw.set_defaults(run=_guarded(_cmd_draw))
