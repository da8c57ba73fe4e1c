"""The contract of every OpenCV replacement: OpenCV's signature and defaults, refusals that
name the argument, a traced session through all of them exported to ONNX and replayed."""

from __future__ import annotations

import inspect
import re
import warnings

import cv2
import numpy as np
import pytest

import patchport
from patchport import annotate
from patchport.patches import named_patch_sets, opencv
from patchport.patches.opencv import UnsupportedCaseError

from .helpers import assert_matches


def _binding(function: str):
    """cv2's callable for a registry name: ``resize``, or a method such as ``CLAHE.apply``."""
    owner, _, name = function.rpartition(".")
    return getattr(getattr(cv2, owner) if owner else cv2, name)


def _opencv_parameters(function: str) -> tuple[list[str], list[str]]:
    """(required, optional) parameter names from the binding's docstring, in order
    (a method's object first, as ``self``)."""
    line = _binding(function).__doc__.strip().splitlines()[0]
    inside = line[line.index("(") + 1 : line.rindex(")")]
    required_part = inside.split("[")[0]
    names = re.findall(r"\w+", inside)
    required = re.findall(r"\w+", required_part)
    optional = names[len(required) :]
    owner = function.rpartition(".")[0]
    method = bool(owner) and isinstance(getattr(cv2, owner), type)  # CLAHE.apply, not dnn.*
    return (["self", *required] if method else required), optional


_HINTED = ("remap", "warpAffine", "warpPerspective")  # OpenCV 5 added their hint=
_INTERPOLATED = ("dnn.blobFromImage", "dnn.blobFromImages")  # OpenCV 5 added interpolation=


@pytest.mark.parametrize("spec", opencv.supported(), ids=lambda s: s.function)
def test_signature_is_the_binding_s(spec):
    required, optional = _opencv_parameters(spec.function)
    if spec.function in _HINTED and "hint" not in optional:  # OpenCV 4: no hint yet; the
        optional.append("hint")  # replacement keeps OpenCV 5's trailing keyword (ignored)
    if spec.function in _INTERPOLATED and "interpolation" not in optional:
        optional.append("interpolation")  # OpenCV 5's trailing keyword (default INTER_LINEAR)
    parameters = list(inspect.signature(spec.replacement).parameters.values())
    assert [p.name for p in parameters] == required + optional
    assert [p.name for p in parameters if p.default is inspect.Parameter.empty] == required
    assert spec.replacement.__doc__ and spec.function in spec.replacement.__doc__


FRAME = np.random.default_rng(5).integers(0, 256, (20, 30, 3), dtype=np.uint8)
MAP_X, MAP_Y = np.meshgrid(np.linspace(-2, 31, 25), np.linspace(-1, 21, 15))
MAPS = (MAP_X.astype(np.float32), MAP_Y.astype(np.float32))
ROTATION = cv2.getRotationMatrix2D((15, 10), 20, 0.9)
PERSPECTIVE = np.vstack([ROTATION, [1e-3, 2e-3, 1.0]])
CAMERA = np.array([[24.0, 0, 14.7], [0, 24.5, 9.8], [0, 0, 1]])
FLOW = np.random.default_rng(6).normal(size=(20, 30, 2)).astype(np.float32)

REQUIRED_ONLY = {  # the fewest arguments OpenCV takes: our defaults must be OpenCV's
    "cvtColor": (FRAME, cv2.COLOR_BGR2GRAY),
    "resize": (FRAME, (17, 9)),
    "remap": (FRAME, *MAPS, cv2.INTER_LINEAR),
    "warpAffine": (FRAME, ROTATION, (33, 18)),
    "warpPerspective": (FRAME, PERSPECTIVE, (33, 18)),
    "perspectiveTransform": (np.float32([[[1, 2]], [[3, 4]], [[5, 6]]]), PERSPECTIVE),
    "invertAffineTransform": (ROTATION,),
    "Rodrigues": (np.array([0.1, -0.2, 0.3]),),
    "projectPoints": (np.ones((4, 3)) + [0, 0, 3], np.zeros(3), np.ones(3), PERSPECTIVE, None),
    "undistortPoints": (np.float32([[[100, 50]], [[20, 30]]]), PERSPECTIVE, np.full(5, 0.01)),
    "getAffineTransform": (
        np.float32([[0, 0], [5, 1], [1, 7]]),
        np.float32([[1, 1], [4, 2], [3, 9]]),
    ),
    "getRotationMatrix2D": ((15.5, 10.25), 20.0, 0.9),
    "reprojectImageTo3D": (FRAME[..., 0].astype(np.float32) / 8, np.eye(4) + 0.1),
    "GaussianBlur": (FRAME, (5, 3), 1.3),
    "blur": (FRAME, (4, 3)),
    "boxFilter": (FRAME, -1, (3, 5)),
    "copyMakeBorder": (FRAME, 2, 3, 4, 5, cv2.BORDER_CONSTANT),
    "flip": (FRAME, 1),
    "rotate": (FRAME, cv2.ROTATE_90_CLOCKWISE),
    "transpose": (FRAME,),
    "normalize": (FRAME, None),
    "convertScaleAbs": (FRAME,),
    "addWeighted": (FRAME, 0.3, FRAME[::-1].copy(), 0.8, 4.0),
    "threshold": (FRAME, 100, 255, cv2.THRESH_BINARY),
    "inRange": (FRAME, (10, 20, 30), (200, 220, 240)),
    "split": (FRAME,),
    "merge": ([FRAME[..., 0], FRAME[..., 2]],),
    "add": (FRAME, FRAME[::-1].copy()),
    "subtract": (FRAME, (10, 20, 30)),
    "absdiff": (FRAME, FRAME[::-1].copy()),
    "multiply": (FRAME, FRAME[::-1].copy()),
    "divide": (FRAME, FRAME[::-1].copy()),
    "bitwise_and": (FRAME, FRAME[::-1].copy()),
    "bitwise_or": (FRAME, FRAME[::-1].copy()),
    "bitwise_xor": (FRAME, FRAME[::-1].copy()),
    "bitwise_not": (FRAME,),
    "LUT": (FRAME, (255 - np.arange(256)).astype(np.uint8)),
    "applyColorMap": (FRAME, cv2.COLORMAP_JET),
    "erode": (FRAME, None),
    "dilate": (FRAME, np.ones((2, 3), np.uint8)),
    "morphologyEx": (FRAME, cv2.MORPH_GRADIENT, None),
    "medianBlur": (FRAME, 5),
    "adaptiveThreshold": (
        FRAME[..., 0].copy(),
        255,
        cv2.ADAPTIVE_THRESH_GAUSSIAN_C,
        cv2.THRESH_BINARY_INV,
        7,
        1.5,
    ),
    "Sobel": (FRAME, cv2.CV_16S, 1, 0),
    "cornerHarris": (FRAME[..., 0].copy(), 3, 3, 0.04),
    "cornerMinEigenVal": (FRAME[..., 0].copy(), 3),
    "moments": (FRAME[..., 0].copy(),),
    "calcHist": ([FRAME], [0, 2], None, [4, 8], [0, 256, 0, 256]),
    "matchTemplate": (FRAME, FRAME[3:9, 4:12].copy(), cv2.TM_CCOEFF_NORMED),
    "minMaxLoc": (FRAME[..., 1].copy(),),
    "compareHist": (np.float32([[1, 2], [3, 0]]), np.float32([[2, 2], [0, 1]]), 1),
    "CLAHE.apply": (cv2.createCLAHE(), FRAME[..., 0].copy()),
    "equalizeHist": (FRAME[..., 0].copy(),),
    "filter2D": (FRAME, -1, np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)),
    "Laplacian": (FRAME, cv2.CV_16S),
    "Scharr": (FRAME, cv2.CV_32F, 0, 1),
    "pyrDown": (FRAME,),
    "pyrUp": (FRAME,),
    "magnitude": (FLOW[..., 0], FLOW[..., 1]),
    "phase": (FLOW[..., 0], FLOW[..., 1]),
    "cartToPolar": (FLOW[..., 0], FLOW[..., 1]),
    "polarToCart": (np.abs(FLOW[..., 0]), FLOW[..., 1]),
    "hconcat": ([FRAME, FRAME[:, :7]],),
    "vconcat": ([FRAME, FRAME[:4]],),
    "transform": (FLOW, np.array([[0.5, 1.0, 2.0], [-1.0, 0.25, 3.0]])),
    "dnn.blobFromImage": (FRAME,),
    "dnn.blobFromImages": ([FRAME, FRAME[::-1].copy()],),
    "undistort": (FRAME, PERSPECTIVE * [[30], [30], [1]], np.array([-0.2, 0.05, 0, 0, 0])),
    "min": (FRAME, FRAME[::-1].copy()),
    "max": (FRAME, 100.5),
}


@pytest.mark.parametrize("spec", opencv.supported(), ids=lambda s: s.function)
def test_defaults_are_opencv_s(spec):
    args = REQUIRED_ONLY[spec.function]
    expected, got = _binding(spec.function)(*args), spec.replacement(*args)
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for e, g in zip(expected, got):
            if isinstance(e, np.ndarray):
                assert_matches(spec.function, e, g)
            else:
                assert g == e
    elif isinstance(expected, dict):  # cv2.moments: floats, as 0-d arrays
        assert sorted(got) == sorted(expected)
        for key, value in expected.items():
            assert_matches(spec.function, np.asarray(value), got[key])
    elif isinstance(expected, float):  # cv2.compareHist: a float, as a 0-d array
        assert_matches(spec.function, np.asarray(expected), got)
    else:
        assert_matches(spec.function, expected, got)


F = opencv
GRAY = FRAME[..., 0].copy()
REFUSED = [
    (F.color.cvtColor, (FRAME, cv2.COLOR_BGR2Lab), {}, "code=COLOR_BGR2LAB"),
    (F.color.cvtColor, (FRAME, cv2.COLOR_BGR2RGB), {"dstCn": 4}, "dstCn=4"),
    (F.color.cvtColor, (GRAY, cv2.COLOR_BGR2RGB), {}, "src channels=1"),
    (F.color.cvtColor, (FRAME.astype(np.uint16), cv2.COLOR_BGR2RGB), {}, "src.dtype=uint16"),
    (F.color.cvtColor, (FRAME, cv2.COLOR_BGR2RGB), {"dst": FRAME.copy()}, "dst="),
    (F.color.cvtColor, (FRAME.tolist(), cv2.COLOR_BGR2RGB), {}, "src=a list"),
    (
        F.geometry.resize,
        (FRAME, (9, 9)),
        {"interpolation": cv2.INTER_LINEAR_EXACT},
        "interpolation=",
    ),
    (F.geometry.resize, (FRAME, None), {}, "dsize=None"),
    (F.geometry.resize, (FRAME, (0, 0)), {"fx": 0.5}, "dsize=(0, 0)"),
    (F.geometry.remap, (FRAME, *MAPS, cv2.INTER_NEAREST), {}, "interpolation=INTER_NEAREST"),
    (F.geometry.remap, (FRAME, *MAPS, 1), {"borderMode": cv2.BORDER_WRAP}, "borderMode="),
    (F.geometry.remap, (FRAME, MAPS[0].astype(np.float64), MAPS[1], 1), {}, "map1/map2="),
    (F.geometry.warpAffine, (FRAME, ROTATION, (9, 9)), {"flags": cv2.INTER_CUBIC}, "flags="),
    (F.geometry.warpAffine, (FRAME, ROTATION.tolist(), (9, 9)), {}, "M=list"),
    (F.geometry.warpAffine, (FRAME[..., :2], ROTATION, (9, 9)), {}, "src channels=2"),
    (F.geometry.copyMakeBorder, (FRAME, 1, 1, 1, 1, cv2.BORDER_TRANSPARENT), {}, "borderType="),
    (F.geometry.flip, (FRAME.astype(np.float16), 0), {}, "src.dtype=float16"),
    (F.geometry.rotate, (FRAME, 7), {}, "rotateCode=7"),
    (F.geometry.transpose, (np.zeros((3, 3, 5), np.uint8),), {}, "src channels=5"),
    (F.filters.GaussianBlur, (FRAME, (4, 4), 0), {}, "ksize=(4, 4)"),
    (F.filters.GaussianBlur, (FRAME, (3, 3), 0), {"borderType": cv2.BORDER_WRAP}, "borderType="),
    (F.filters.blur, (FRAME, (3, 3)), {"anchor": (5, 0)}, "anchor=(5, 0)"),
    (F.filters.boxFilter, (FRAME, cv2.CV_16S, (3, 3)), {}, "ddepth=3"),
    (F.filters.blur, (FRAME, (2, 1)), {}, "ksize=(2, 1)"),
    (F.arithmetic.normalize, (FRAME, None), {"norm_type": cv2.NORM_HAMMING}, "norm_type="),
    (F.arithmetic.normalize, (FRAME, None), {"mask": GRAY}, "mask=ndarray"),
    (F.arithmetic.normalize, (FRAME, None), {"dtype": cv2.CV_16S}, "dtype=3"),
    (F.arithmetic.convertScaleAbs, (FRAME.astype(np.int8),), {}, "src.dtype=int8"),
    (F.arithmetic.addWeighted, (FRAME, 1, GRAY, 1, 0), {}, "src2=uint8[20, 30]"),
    (F.arithmetic.addWeighted, (FRAME, 1, FRAME, 1, 0), {"dtype": cv2.CV_32F}, "dtype=5"),
    (F.arithmetic.threshold, (FRAME, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_TRIANGLE), {}, "type="),
    (F.arithmetic.threshold, (FRAME, 0, 255, cv2.THRESH_OTSU), {}, "src channels=3"),
    (F.arithmetic.inRange, (FRAME, (1, 2), (3, 4)), {}, "lowerb=(1, 2)"),
    (F.channels.split, (np.zeros((3, 3, 5), np.uint8),), {}, "m channels=5"),
    (F.channels.merge, ([],), {}, "mv=list"),
    (F.elementwise.add, (FRAME, GRAY), {}, "src2=uint8[20, 30]"),
    (F.elementwise.add, (FRAME, FRAME), {"dtype": cv2.CV_16S}, "dtype=3"),
    (F.elementwise.add, (FRAME, FRAME), {"mask": FRAME}, "mask=uint8[20, 30, 3]"),
    (F.elementwise.multiply, (FRAME.astype(np.int16), 2), {}, "src1.dtype=int16"),
    (F.elementwise.divide, (FRAME.astype(np.float32), 2), {}, "src1.dtype=float32"),
    (F.elementwise.bitwise_and, (FRAME, 7), {}, "src2=7"),
    (F.elementwise.LUT, (FRAME, np.arange(100)), {}, "lut=int64[100]"),
    (F.color.applyColorMap, (FRAME, 99), {}, "colormap=99"),
    (F.color.applyColorMap, (FRAME[..., :2], 2), {}, "src channels=2"),
    (F.morphology.erode, (FRAME, [[1, 1]]), {}, "kernel=list[1, 2]"),
    (F.morphology.dilate, (FRAME, None), {"borderType": cv2.BORDER_WRAP}, "borderType="),
    (F.morphology.morphologyEx, (FRAME, cv2.MORPH_HITMISS, None), {}, "op="),
    (F.filters.medianBlur, (FRAME, 7), {}, "ksize=7"),
    (F.filters.Sobel, (FRAME, cv2.CV_8U, 1, 0), {}, "ddepth=0"),
    (F.filters.Sobel, (FRAME, cv2.CV_16S, 0, 0), {}, "dx/dy=(0, 0)"),
    (F.channels.merge, ([GRAY, GRAY[:5]],), {}, "mv[1]=uint8[5, 30]"),
    (F.channels.hconcat, ([GRAY, FRAME],), {}, "src[1]=uint8[20, 30, 3]"),
    (F.histogram.equalizeHist, (FRAME,), {}, "src channels=3"),
    (F.convolution.filter2D, (FRAME, -1, np.ones((8, 8))), {}, "kernel=8x8"),
    (F.convolution.Laplacian, (FRAME, cv2.CV_8S), {}, "ddepth=1"),
    (F.convolution.Scharr, (FRAME, cv2.CV_32F, 1, 1), {}, "dx/dy=(1, 1)"),
    (F.pyramids.pyrDown, (FRAME,), {"dstsize": (3, 3)}, "dstsize=(3, 3)"),
    (F.pyramids.pyrUp, (FRAME,), {"borderType": cv2.BORDER_CONSTANT}, "borderType="),
    (F.polar.magnitude, (FLOW[..., 0], GRAY), {}, "y.dtype=uint8"),
    (F.transforms.transform, (FRAME, np.eye(3)), {}, "src.dtype=uint8"),
]


@pytest.mark.parametrize(("replacement", "args", "kwargs", "named"), REFUSED)
def test_unsupported_cases_are_refused_with_the_argument_named(replacement, args, kwargs, named):
    with pytest.raises(ValueError, match="supported: ") as caught:
        replacement(*args, **kwargs)
    assert isinstance(caught.value, UnsupportedCaseError)
    message = str(caught.value)
    name = replacement.__name__
    function = f"dnn.{name}" if replacement.__module__.endswith(".dnn") else name
    assert message.startswith(f"cv2.{function} (patchport replacement): argument {named}"), message


def test_every_function_of_the_issue_is_replaced():
    wanted = (
        "cvtColor resize remap warpAffine warpPerspective GaussianBlur blur boxFilter "
        "copyMakeBorder flip rotate perspectiveTransform invertAffineTransform "
        "Rodrigues projectPoints undistortPoints getAffineTransform getRotationMatrix2D "
        "reprojectImageTo3D "
        "transpose normalize convertScaleAbs addWeighted threshold inRange split merge add "
        "subtract multiply divide absdiff bitwise_and bitwise_or bitwise_xor bitwise_not LUT "
        "applyColorMap erode dilate morphologyEx medianBlur Sobel CLAHE.apply "
        # the vision probe's (bench/real_pipelines_vision.py)
        "dnn.blobFromImage dnn.blobFromImages filter2D Laplacian Scharr pyrDown pyrUp "
        "equalizeHist magnitude phase cartToPolar polarToCart hconcat vconcat transform "
        "undistort "
        # the imaging probe's (bench/real_pipelines_imaging.py)
        "adaptiveThreshold "
        # the features probe's (bench/real_pipelines_features.py)
        "cornerHarris cornerMinEigenVal moments calcHist compareHist matchTemplate minMaxLoc "
        # the ISP probe's (bench/real_pipelines_isp.py)
        "min max"
    ).split()
    assert sorted(p.target_name.removeprefix("cv2.") for p in opencv.all()) == sorted(wanted)
    owners = {"apply": cv2.CLAHE, "blobFromImage": cv2.dnn, "blobFromImages": cv2.dnn}
    assert all(p.module is owners.get(p.function_name, cv2) for p in opencv.all())
    assert named_patch_sets()["opencv"]() == opencv.all()


def all_functions(bgr, gray):
    """Every replacement once, on traced (or ordinary) images; results keyed by function."""
    small = bgr[2:16, 5:25]  # each function reads exact values: no error compounds
    flow = (bgr[..., :2] - 128.0).astype(np.float32) / 16.0
    hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    h, s, v = cv2.split(hsv)
    out = {
        "cvtColor": cv2.cvtColor(small, cv2.COLOR_BGR2GRAY),
        "resize": cv2.resize(bgr, None, fx=1.5, fy=1.25),
        "resize_area": cv2.resize(bgr, (20, 14), interpolation=cv2.INTER_AREA),
        "remap": cv2.remap(bgr, *MAPS, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE),
        "warpAffine": cv2.warpAffine(gray, ROTATION, (26, 22), borderValue=7),
        "warpPerspective": cv2.warpPerspective(bgr, PERSPECTIVE, (26, 22)),
        "perspectiveTransform": cv2.perspectiveTransform(
            bgr[:3, :1, :2].astype(np.float32), PERSPECTIVE
        ),
        "invertAffineTransform": cv2.invertAffineTransform(bgr[:2, :3, 0] / 255.0 + ROTATION),
        "Rodrigues": cv2.Rodrigues(bgr[0, :3, 0] / 255.0)[0],
        "Rodrigues_back": cv2.Rodrigues(cv2.Rodrigues(bgr[1, :3, 0] / 255.0)[0])[0],
        "projectPoints": cv2.projectPoints(
            bgr[:4, 0] / 40.0 + [0.0, 0.0, 3.0],
            bgr[0, :3, 2] / 255.0,
            np.ones(3),
            PERSPECTIVE,
            None,
        )[0],
        "undistortPoints": cv2.undistortPoints(
            bgr[:3, :1, :2].astype(np.float32), PERSPECTIVE, np.full(5, 0.01)
        ),
        "getAffineTransform": cv2.getAffineTransform(
            bgr[:3, 0, :2].astype(np.float32), np.float32([[1, 1], [4, 2], [3, 9]])
        ),
        "getRotationMatrix2D": cv2.getRotationMatrix2D((15.0, 10.0), bgr[0, 0, 0] / 2.0, 0.9),
        "reprojectImageTo3D": cv2.reprojectImageTo3D(gray, np.eye(4) + 0.1, None, True),
        "resize_cubic": cv2.resize(bgr / 255.0, (41, 17), interpolation=cv2.INTER_CUBIC),
        "GaussianBlur": cv2.GaussianBlur(small, (5, 5), 0),
        "blur": cv2.blur(gray, (3, 3)),
        "boxFilter": cv2.boxFilter(small, cv2.CV_32F, (3, 5), normalize=False),
        "copyMakeBorder": cv2.copyMakeBorder(small, 1, 2, 3, 4, cv2.BORDER_REFLECT_101),
        "flip": cv2.flip(small, -1),
        "rotate": cv2.rotate(gray[::-1, 3:], cv2.ROTATE_90_COUNTERCLOCKWISE),  # a strided view
        "transpose": cv2.transpose(small),
        "normalize": cv2.normalize(gray, None, 0, 1, cv2.NORM_MINMAX, cv2.CV_32F),
        "convertScaleAbs": cv2.convertScaleAbs(gray, alpha=-1.5, beta=40),
        "addWeighted": cv2.addWeighted(small, 0.7, cv2.flip(small, 1), 0.3, 2.5),
        "threshold": cv2.threshold(s, 90, 255, cv2.THRESH_BINARY)[1],
        "threshold_otsu": cv2.threshold(gray, 0, 200, cv2.THRESH_TOZERO | cv2.THRESH_OTSU)[1],
        "adaptiveThreshold": cv2.adaptiveThreshold(
            gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, 5, -3
        ),
        "inRange": cv2.inRange(hsv, (0, 40, 40), (90, 255, 255)),
        "inRange_traced_bounds": cv2.inRange(hsv, np.minimum(hsv[0, 0], 100), hsv[1, 1]),
        "split": h,
        "merge": cv2.merge([v, s, h]),
        "add": cv2.add(small, cv2.flip(small, 0), mask=(s > 100).astype(np.uint8)),
        "subtract": cv2.subtract(gray, 40.5),
        "absdiff": cv2.absdiff(small, cv2.flip(small, 1)),
        "multiply": cv2.multiply(small, (1, 2, 3), scale=0.5),
        "divide": cv2.divide(h, s, scale=40),
        "bitwise_and": cv2.bitwise_and(small, cv2.flip(small, 0)),
        "bitwise_or": cv2.bitwise_or(h, s, mask=v),
        "bitwise_xor": cv2.bitwise_xor(h, v),
        "bitwise_not": cv2.bitwise_not(small),
        "LUT": cv2.LUT(gray, (np.arange(256) ** 0.5 * 16).astype(np.uint8)),
        "applyColorMap": cv2.applyColorMap(small, cv2.COLORMAP_TURBO),
        "erode": cv2.erode(gray, cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 5))),
        "dilate": cv2.dilate(small, None, iterations=2, borderType=cv2.BORDER_REFLECT),
        "morphologyEx": cv2.morphologyEx(
            gray, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
        ),
        "medianBlur": cv2.medianBlur(small, 5),
        "Sobel": cv2.Sobel(gray, cv2.CV_16S, 1, 1, ksize=5),
        "cornerHarris": cv2.cornerHarris(gray, 2, 3, 0.04),
        "cornerMinEigenVal": cv2.cornerMinEigenVal(gray, 3, ksize=5),
        "moments": np.stack([cv2.moments(gray)[k] for k in ("m00", "m21", "mu20", "nu03")]),
        "calcHist": cv2.calcHist([bgr], [0, 2], None, [4, 8], [0, 256, 0, 256]),
        "matchTemplate": cv2.matchTemplate(gray, gray[2:7, 3:9].copy(), cv2.TM_SQDIFF_NORMED),
        "minMaxLoc": np.stack(
            [np.asarray(v, dtype=np.float64) for v in cv2.minMaxLoc(gray)[:2]]
            + [np.asarray(v, dtype=np.float64) for v in cv2.minMaxLoc(gray)[3]]
        ),
        "compareHist": np.stack(
            [
                cv2.compareHist(
                    cv2.calcHist([gray], [0], None, [8], [0, 256]),
                    cv2.calcHist([bgr], [1], None, [8], [0, 256]),
                    method,
                )
                for method in range(6)
            ]
        ),
        "CLAHE_apply": cv2.createCLAHE(2.0, (3, 4)).apply(gray[1:, 3:]),  # padded to the grid
        "cvtColor_ycrcb": cv2.cvtColor(small, cv2.COLOR_BGR2YCrCb),
        "cvtColor_yuv": cv2.cvtColor(cv2.cvtColor(small, cv2.COLOR_BGR2YUV), cv2.COLOR_YUV2RGB),
        "equalizeHist": cv2.equalizeHist(gray),
        "filter2D": cv2.filter2D(small, -1, np.float32([[0, -1, 0], [-1, 5, -1], [0, -1, 0]])),
        "Laplacian": cv2.Laplacian(gray, cv2.CV_64F, ksize=3),
        "Scharr": cv2.Scharr(gray, cv2.CV_16S, 0, 1),
        "pyrDown": cv2.pyrDown(bgr),
        "pyrUp": cv2.pyrUp(small),
        "magnitude": cv2.magnitude(flow[..., 0], flow[..., 1]),
        "phase": cv2.phase(flow[..., 0], flow[..., 1], angleInDegrees=True),
        "cartToPolar": cv2.cartToPolar(flow[..., 0], flow[..., 1])[1],
        "polarToCart": cv2.polarToCart(flow[..., 0], flow[..., 1])[0],
        "hconcat": cv2.hconcat([small, cv2.flip(small, 1)]),
        "vconcat": cv2.vconcat([gray, gray[:3]]),
        "transform": cv2.transform(flow, np.array([[0.5, 1.0, 2.0], [-1.0, 0.25, 3.0]])),
        "dnn_blobFromImage": cv2.dnn.blobFromImage(bgr, 1 / 255.0, (24, 16), (1, 2, 3), True),
        "dnn_blobFromImages": cv2.dnn.blobFromImages([small, small], 1.0, (10, 8), crop=True),
        "undistort": cv2.undistort(bgr, CAMERA, np.array([-0.25, 0.07, 0.001, -0.002, 0.0])),
        "min": cv2.min(h, cv2.min(s, v)),
        "max": cv2.max(flow, 0.25),
    }
    return out


def test_all_replacements_trace_export_to_onnx_and_replay(tmp_path):
    rng = np.random.default_rng(11)
    frames = [rng.integers(0, 256, (20, 30, 3), dtype=np.uint8) for _ in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", patchport.TraceLossWarning)
        with patchport.session("every_op", tmp_path, patching=opencv.all(verify=True)):
            for frame in frames[:2]:
                bgr, gray = annotate.input_tensors(
                    "ops", {"bgr": frame, "gray": np.ascontiguousarray(frame[..., 1])}
                )
                # output names such as "transpose" equal operator names inside the graph
                annotate.output_tensors("ops", all_functions(bgr, gray), export_with="onnx")
            used = patchport.session_patches()
            assert all(used.find(f"cv2.{name}").calls >= 1 for name in REQUIRED_ONLY)
    # both passes ran through the replacements, so replay must match them exactly
    result = patchport.compile_graph(visualize=False)
    assert result.ok and result.validation[0].samples == 2
    manager = patchport.InferenceManager(result.yaml_path)
    for frame in frames[2:]:
        gray = np.ascontiguousarray(frame[..., 1])
        outputs = manager.run_policy({"ops/bgr": frame, "ops/gray": gray})
        for name, expected in all_functions(frame, gray).items():
            got = outputs[f"ops/{name}"].numpy()  # InferenceManager returns torch, as LEAPP's
            assert_matches(function_of(name), expected, got, scale=255.0)


def function_of(output: str) -> str:
    """The replaced function an output of all_functions comes from (resize_area: resize)."""
    for candidate in (output, output.replace("_", ".", 1), output.split("_")[0]):
        if candidate in opencv.REGISTRY:
            return candidate
    raise KeyError(output)


def test_ordinary_arrays_still_reach_opencv_during_a_session(tmp_path):
    with patchport.session("plain", tmp_path, patching=["opencv"]):
        assert cv2.resize is not opencv.geometry.resize
        out = cv2.resize(FRAME, (7, 5))  # plain data: OpenCV itself
        patched = patchport.session_patches().find("cv2.resize")
        assert patched is not None and patched.calls == 0
    np.testing.assert_array_equal(out, cv2.resize(FRAME, (7, 5)))


def test_all_can_leave_functions_out_for_user_replacements(tmp_path):
    def my_flip(src, flipCode, dst=None):
        return np.ascontiguousarray(np.flip(src, axis=0))  # traced NumPy: rows only

    patches = opencv.all(exclude=["flip"]) + [patchport.FunctionPatch(cv2, "flip", my_flip)]
    assert len(patches) == len(opencv.all())
    with patchport.session("mine", tmp_path, patching=patches):
        x = annotate.input_tensors("n", {"x": FRAME})
        annotate.output_tensors("n", {"y": cv2.flip(x, 0)})
        assert patchport.session_patches().find("cv2.flip").name == "my_flip"
    with pytest.raises(ValueError, match="no replacement named nope"):
        opencv.all(exclude=["nope"])


def test_remap_with_maps_computed_from_traced_data_exports(tmp_path):
    """Maps that depend on a traced input (a calibration shift) stay in the graph."""
    xs, ys = np.meshgrid(np.arange(30, dtype=np.float32), np.arange(20, dtype=np.float32))

    def shifted(image, shift):
        mapx, mapy = xs + shift[0], ys + shift[1]
        return cv2.remap(image, mapx, mapy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

    rng = np.random.default_rng(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", patchport.TraceLossWarning)
        with patchport.session("maps", tmp_path, patching=["opencv"]):
            for _ in range(2):
                shift = (rng.random(2) * 4 - 2).astype(np.float32)
                image, shift = annotate.input_tensors("n", {"image": FRAME, "shift": shift})
                annotate.output_tensors("n", {"out": shifted(image, shift)}, export_with="onnx")
    manager = patchport.InferenceManager(patchport.compile_graph(visualize=False).yaml_path)
    shift = np.array([1.37, -0.61], dtype=np.float32)
    got = manager.run_policy({"n/image": FRAME, "n/shift": shift})["n/out"].numpy()
    assert_matches("remap", shifted(FRAME, shift), got)
