"""Replacements are checked against the original library on every traced call, by default."""

import math
import sys
import warnings

import cv2
import numpy as np
import pytest
import torch

import patchport
from patchport import PatchMismatchError, PatchMismatchWarning, annotate
from patchport.patches.opencv import filters
from patchport.sessions.dispatch import _same_data
from patchport.sessions.verify import check_results, same_bytes


def flip_channels(src, code, dst=None, dstCn=0):
    return torch.from_numpy(src).flip((-1,)).numpy()


def off_by_one(src, code, dst=None, dstCn=0):
    flipped = torch.from_numpy(src).flip((-1,))
    return (flipped.to(torch.int16) + (flipped < 255)).to(torch.uint8).numpy()


def run(frame, replacement, **options):
    declared = {k: options.pop(k) for k in ("atol", "verify_patch") if k in options}
    patch = patchport.FunctionPatch(
        cv2,
        "cvtColor",
        replacement,
        atol=declared.get("atol", 0.0),
        verify=declared.get("verify_patch"),
    )
    with patchport.session("verify", patching=[patch], **options):
        traced = annotate.input_tensors("n", {"bgr": frame})
        rgb = cv2.cvtColor(traced, cv2.COLOR_BGR2RGB)  # the call site named in the warning
        annotate.output_tensors("n", {"rgb": rgb})
    return patchport.session_patches()


def test_mismatch_warns_by_default_at_the_call_site(frame, tmp_path):
    with pytest.warns(PatchMismatchWarning, match="off_by_one disagrees with cv2.cvtColor") as rec:
        run(frame, off_by_one, save_path=tmp_path)
    assert rec[0].filename == __file__
    message = str(rec[0].message)
    assert "largest difference 1" in message and f"{__file__}:" in message
    summary = patchport.compile_graph(visualize=False).summary()
    assert "patch cv2.cvtColor: largest difference from cv2.cvtColor 1 " in summary


def test_declared_accuracy_is_respected(frame, recwarn):
    run(frame, off_by_one, atol=1.0)
    assert not [w for w in recwarn if issubclass(w.category, PatchMismatchWarning)]


def test_verify_true_raises_and_false_turns_it_off(frame, recwarn):
    with pytest.raises(PatchMismatchError, match="largest difference 1"):
        run(frame, off_by_one, verify=True)
    run(frame, off_by_one, verify=False)
    run(frame, off_by_one, verify_patch=False)  # the declaration's own switch wins
    assert not [w for w in recwarn if issubclass(w.category, PatchMismatchWarning)]


def test_exact_replacement_is_quiet_and_listed_as_exact(frame, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PatchMismatchWarning)
        run(frame, flip_channels, save_path=tmp_path)
    summary = patchport.compile_graph(visualize=False).summary()
    assert (
        "patch cv2.cvtColor: largest difference from cv2.cvtColor 0 over 1 traced call(s)"
        in summary
    )


def test_original_refusing_the_values_is_reported(frame):
    two_channels = frame[..., :2].copy()  # OpenCV refuses BGR2RGB on two channels
    with patchport.session(
        "verify", patching=[patchport.FunctionPatch(cv2, "cvtColor", flip_channels)]
    ):
        traced = annotate.input_tensors("n", {"bgr": two_channels})
        with pytest.warns(PatchMismatchWarning, match="cv2.cvtColor itself raised error"):
            rgb = cv2.cvtColor(traced, cv2.COLOR_BGR2RGB)
        annotate.output_tensors("n", {"rgb": rgb})


def test_equal_results_report_what_the_full_comparison_reports():
    def check(want, got):
        return check_results("f", "g", np.array(want), np.array(got), 0.0, 0.0)

    assert check([1, 2], [1, 2]) == (0.0, None)
    assert check([1.0, np.nan], [1.0, np.nan]) == (0.0, None)
    assert check([1.0, np.inf], [1.0, np.inf]) == (0.0, None)  # equal infinities: no difference
    largest, problem = check([1.0, np.inf], [1.0, -np.inf])
    assert largest == math.inf and "1 of 2 values differ" in problem
    largest, problem = check([1.0, np.inf], [1.0, 5.0])
    assert largest == math.inf and "1 of 2 values differ" in problem
    largest, problem = check([1.0, np.nan], [1.0, 2.0])
    assert largest == math.inf and "1 of 2 values differ" in problem
    largest, problem = check([1, 2], [1, 3])
    assert largest == 1.0 and "1 of 2 values differ" in problem


def test_a_0d_array_stands_for_a_returned_python_number():
    """A replacement returns a number it computes in the graph (Otsu's level) as a 0-d
    array, which keeps it traced; it is compared with the original's float by value."""
    assert check_results("f", "g", (3.0, np.ones(2)), (np.array(3.0), np.ones(2)), 0, 0) == (
        0.0,
        None,
    )
    largest, problem = check_results("f", "g", 3.0, np.array(4.0), 0.0, 0.0)
    assert largest == 1.0 and "1 of 1 values differ" in problem
    _, problem = check_results("f", "g", 3.0, np.zeros(2), 0.0, 0.0)
    assert "shape (2,) instead of ()" in problem


def test_the_byte_comparison_is_only_a_shortcut_for_equal_values():
    """Same bytes skip the value comparison; other bytes of equal values (-0.0 and 0.0,
    two NaN payloads) still compare equal, and other dtypes or shapes never match."""
    other_nan = np.frombuffer(np.uint64(0x7FF8000000000001).tobytes(), np.float64)
    assert check_results("f", "g", np.array([0.0, 1.0]), np.array([-0.0, 1.0]), 0.0, 0.0) == (
        0.0,
        None,
    )
    assert check_results("f", "g", np.array([np.nan]), other_nan, 0.0, 0.0) == (0.0, None)
    assert same_bytes(np.arange(4.0), np.arange(4.0))
    assert not same_bytes(np.zeros(2, np.int32), np.zeros(2, np.int64))
    assert not same_bytes(np.zeros((2, 1)), np.zeros((1, 2)))
    assert not same_bytes(np.zeros(2, object), np.zeros(2, object))  # pointers, not values


def test_a_write_into_a_float_input_is_seen_by_the_mutation_check():
    before = np.array([[0.5, np.nan], [1.0, 2.0]], np.float32)
    after = before.copy()
    assert _same_data(after, before)
    after[1, 0] = 7.0
    assert not _same_data(after, before)


def _cancelling(seed: int = 1) -> np.ndarray:
    """Signed data of magnitude 1000 whose 5x5 Gaussian cancels to about 1 (as gradient
    products do in a Harris response): float32 sums in any order differ by ~1e-8 of 1000."""
    checker = np.indices((32, 40)).sum(0) % 2 * 2.0 - 1.0
    noise = np.random.default_rng(seed).normal(0, 1, (32, 40))
    return (1000 * checker + noise).astype(np.float32)


def test_float_filters_are_checked_against_the_datas_magnitude(tmp_path, recwarn):
    """OpenCV's float promise is 1e-5 of the data's magnitude (the source's or the result's,
    the larger): a blur or gradient that cancels near zero is not a mismatch."""
    src = _cancelling()
    with patchport.session("mag", save_path=tmp_path, patching=["opencv"]):
        traced = annotate.input_tensors("n", {"x": src})
        blurred = cv2.GaussianBlur(traced, (5, 5), 1.0)
        gradient = cv2.Sobel(traced * 0.01, cv2.CV_32F, 1, 0, ksize=5)
        annotate.output_tensors("n", {"blur": blurred, "gradient": gradient})
    assert not [w for w in recwarn if issubclass(w.category, PatchMismatchWarning)]


def test_magnitude_tolerance_still_reports_a_real_difference(tmp_path):
    """A replacement off by 1e-3 of the data's magnitude is still a mismatch."""

    def blur_off(src, ksize, sigmaX, dst=None, sigmaY=0, borderType=None, hint=None):
        return filters.GaussianBlur(src, ksize, sigmaX) + np.float32(1.0)

    patch = patchport.FunctionPatch(cv2, "GaussianBlur", blur_off, magnitude_rtol=1e-5)
    with pytest.warns(PatchMismatchWarning, match=r"magnitude_rtol=1e-05 of 100[0-9.]+\)"):
        with patchport.session("off", save_path=tmp_path, patching=[patch]):
            traced = annotate.input_tensors("n", {"x": _cancelling()})
            annotate.output_tensors("n", {"y": cv2.GaussianBlur(traced, (5, 5), 1.0)})


def test_magnitude_tolerance_leaves_integer_results_exact():
    src = np.full((4, 4), 1000.0, np.float32)
    want = np.arange(16, dtype=np.int32).reshape(4, 4)
    got = want + np.eye(4, dtype=np.int32)
    _, problem = check_results("f", "g", want, got, 0.0, 0.0, magnitude_rtol=1e-3, scale=1e6)
    assert problem is not None and "4 of 16 values differ" in problem
    _, problem = check_results("f", "g", src, src + 0.005, 0.0, 0.0, magnitude_rtol=1e-5)
    assert problem is None
    with pytest.raises(patchport.PatchportError, match="magnitude_rtol"):
        patchport.FunctionPatch(cv2, "GaussianBlur", cv2.GaussianBlur, magnitude_rtol="1e-5")


def test_a_0d_array_stands_for_a_returned_python_int():
    """minMaxLoc's points: (x, y) ints returned as 0-d arrays (traced), compared by value."""
    got = (np.array(1.5), (np.array(3), np.array(4)))
    assert check_results("f", "g", (1.5, (3, 4)), got, 0, 0) == (0.0, None)
    _, problem = check_results("f", "g", (1.5, (3, 5)), got, 0, 0)
    assert problem is not None and "1 of 1 values differ" in problem
    _, problem = check_results("f", "g", True, np.array(True), 0, 0)
    assert "structure differs" in problem  # a bool stays a bool


def test_a_declared_unit_is_no_slack_for_values_whose_whole_range_it_is():
    """A 0/1 mask (lane binaries, np.zeros_like(...)[cond] = 1) off by one pixel by 1 is
    off entirely: a declared accuracy of 1 unit cannot cover integer results whose range
    is 1 unit, so the difference is reported."""
    want = np.zeros((4, 6), np.uint8)
    want[1:3, 2:4] = 1
    got = want.copy()
    got[0, 0] = 1
    largest, problem = check_results("cv2.warpPerspective", "r", want, got, 0.0, 1.0)
    assert largest == 1.0 and problem is not None and "range" in problem, problem
    assert check_results("cv2.warpPerspective", "r", want * 200, got * 200, 0.0, 1.0)[1]
    wide = want * 200
    nudged = wide.copy()
    nudged[1, 2] = 199  # 1 off on a 0..200 image: within the declared unit
    assert check_results("cv2.warpPerspective", "r", wide, nudged, 0.0, 1.0)[1] is None
    assert check_results("cv2.warpPerspective", "r", want, want.copy(), 0.0, 1.0)[1] is None
    floats = want.astype(np.float32)  # float results keep their relative and absolute slack
    assert check_results("f", "r", floats, floats + 0.5, 0.0, 1.0)[1] is None


def test_a_binary_mask_warped_off_by_one_warns_at_the_call_site(tmp_path):
    """The lane-detection bird's-eye warp of a 0/1 binary, which OpenCV 5.1 hands to Intel
    IPP (declared within 1 there): where the replacement differs from it on the traced
    mask, the session warns at the user's line instead of exporting a different mask."""
    src = np.float32([[12, 47], [26, 28], [38, 28], [52, 47]])
    dst = np.float32([[16, 47], [16, 0], [48, 0], [48, 47]])
    matrix = cv2.getPerspectiveTransform(src, dst)
    binary = np.zeros((48, 64), np.uint8)
    binary[:, 40:42] = 1  # a stripe whose edge a half-pixel position splits
    binary[:, 20:22] = 1
    from patchport.patches.opencv import geometry

    if np.array_equal(
        geometry.warpPerspective(binary, matrix, (64, 48)),
        cv2.warpPerspective(binary, matrix, (64, 48)),
    ):
        pytest.skip("this OpenCV warps the mask as the replacement does (IPP off or absent)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with patchport.session("mask", str(tmp_path), patching=["opencv"]):
            traced = annotate.input_tensors("n", {"binary": binary})
            warped = cv2.warpPerspective(traced, matrix, (64, 48))  # the line warned about
            line = sys._getframe().f_lineno - 1
            annotate.output_tensors("n", {"warped": warped})
    found = [w for w in caught if issubclass(w.category, PatchMismatchWarning)]
    assert found and found[0].filename == __file__ and found[0].lineno == line, [
        str(w.message) for w in caught
    ]
