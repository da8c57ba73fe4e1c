"""Cost of patchport's export patches: entering/leaving the context, and one patched call.

Prints absolute times and ratios against the unpatched function. Not part of the tests.
Run: python bench/patch_overhead.py
"""

from __future__ import annotations

import statistics
import sys
import time
import timeit
import types


def per_call_ns(func, number: int = 200_000, repeat: int = 7) -> float:
    """Best-of-``repeat`` time of one call, in nanoseconds."""
    times = timeit.repeat(func, number=number, repeat=repeat)
    return min(times) / number * 1e9


def main() -> None:
    start = time.perf_counter()
    import torch  # noqa: F401
    import torch._subclasses.fake_impls as fake_impls

    from patchport.patching import PatchInfo
    from patchport.torch import apply_patches_for_model

    print(f"python {sys.version.split()[0]}, torch {torch.__version__}")
    print(f"import torch + patchport: {time.perf_counter() - start:.2f} s\n")

    start = time.perf_counter()
    with apply_patches_for_model(patch_torch=True):
        pass
    first = time.perf_counter() - start
    samples = []
    for _ in range(50):
        start = time.perf_counter()
        with apply_patches_for_model(patch_torch=True):
            pass
        samples.append(time.perf_counter() - start)
    print("enter + leave apply_patches_for_model(patch_torch=True)")
    print(f"  first (imports torch.export internals): {first * 1e3:8.2f} ms")
    print(f"  warm, median of 50:                     {statistics.median(samples) * 1e6:8.1f} us")
    print()

    module = types.ModuleType("bench_target")

    def add_one(x):
        return x + 1

    module.add_one = add_one
    plain = per_call_ns(lambda: module.add_one(1))
    with_same = PatchInfo.make(add_one, module, "add_one")
    with_same.do()
    try:
        patched = per_call_ns(lambda: module.add_one(1))
    finally:
        with_same.undo()
    print("one call through an applied patch whose replacement is the original function")
    print(
        f"  unpatched: {plain:7.1f} ns   patched: {patched:7.1f} ns   "
        f"ratio: {patched / plain:5.2f}x   added: {patched - plain:6.1f} ns"
    )

    shapes = ((8, 1, 5), (8, 4, 1))
    plain = per_call_ns(lambda: fake_impls.infer_size(*shapes), number=50_000)
    with apply_patches_for_model(patch_torch=True):
        patched = per_call_ns(lambda: fake_impls.infer_size(*shapes), number=50_000)
    print("built-in infer_size_any_size on integer shapes (wrapper + replacement)")
    print(
        f"  unpatched: {plain:7.1f} ns   patched: {patched:7.1f} ns   "
        f"ratio: {patched / plain:5.2f}x"
    )


if __name__ == "__main__":
    main()
