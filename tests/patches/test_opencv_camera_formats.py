"""cvtColor of raw camera frames (YUV 4:2:0 buffers, packed 4:2:2, Bayer mosaics) vs real
cv2 on random frames, OpenCV's own shape conditions as refusals, and a traced session of
them exported to ONNX, TorchScript and torch.export and replayed on fresh frames."""

from __future__ import annotations

import cv2
import numpy as np
import onnx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import patchport
from patchport import annotate
from patchport.patches.opencv import UnsupportedCaseError, color, color_bayer, color_yuv
from patchport.patches.opencv._base import constant_name

from .helpers import PROPERTY, seeds

YUV420 = sorted(c for c, s in color_yuv.codes().items() if s.subsampling == "420")
YUV422 = sorted(c for c, s in color_yuv.codes().items() if s.subsampling == "422")
BAYER = sorted(color_bayer.codes())


def _same(src: np.ndarray, code: int) -> None:
    expected = cv2.cvtColor(src, code)
    got = color.cvtColor(src, code)
    assert type(got) is np.ndarray and got.flags.c_contiguous
    assert (got.shape, got.dtype) == (expected.shape, expected.dtype)
    np.testing.assert_array_equal(got, expected, err_msg=constant_name(code, "COLOR_"))


@PROPERTY
@given(
    code=st.sampled_from(YUV420), half_h=st.integers(1, 20), half_w=st.integers(1, 36), seed=seeds
)
def test_yuv420_buffers_match_opencv_bit_for_bit(code, half_h, half_w, seed):
    buffer = np.random.default_rng(seed).integers(0, 256, (half_h * 3, half_w * 2), np.uint8)
    _same(buffer, code)


@PROPERTY
@given(
    code=st.sampled_from(YUV422),
    height=st.integers(1, 30),
    width=st.integers(1, 36).map(lambda w: 2 * w),
    seed=seeds,
)
def test_packed_422_frames_match_opencv_bit_for_bit(code, height, width, seed):
    _same(np.random.default_rng(seed).integers(0, 256, (height, width, 2), np.uint8), code)


@PROPERTY
@given(
    code=st.sampled_from(BAYER),
    dtype=st.sampled_from(["uint8", "uint16"]),
    height=st.integers(1, 40),
    width=st.integers(1, 70),
    seed=seeds,
)
def test_bayer_mosaics_match_opencv_bit_for_bit_at_any_size(code, dtype, height, width, seed):
    """Odd and tiny sizes included: OpenCV's border rows and columns, zeros below 3x3."""
    high = 256 if dtype == "uint8" else 65536
    mosaic = np.random.default_rng(seed).integers(0, high, (height, width)).astype(dtype)
    _same(mosaic, code)


def test_full_frames_and_extreme_values_match_opencv():
    """A VGA frame of each layout, and saturating chroma (0 and 255) and luma below 16."""
    rng = np.random.default_rng(7)
    extreme = rng.choice(np.array([0, 1, 15, 16, 17, 128, 235, 254, 255], np.uint8), (720, 640))
    for buffer in (rng.integers(0, 256, (720, 640), np.uint8), extreme):
        for code in (cv2.COLOR_YUV2BGR_NV12, cv2.COLOR_YUV2RGBA_YV12, cv2.COLOR_BayerGB2RGB):
            _same(buffer if code != cv2.COLOR_BayerGB2RGB else buffer[:480], code)
        _same(np.ascontiguousarray(buffer[:480].reshape(480, 320, 2)), cv2.COLOR_YUV2BGR_UYVY)


@pytest.mark.parametrize(
    "code, dst_cn",
    [
        (cv2.COLOR_YUV2BGR_NV12, 4),
        (cv2.COLOR_YUV2RGBA_I420, 3),
        (cv2.COLOR_YUV2GRAY_NV21, 3),
        (cv2.COLOR_BayerBG2BGR, 4),
        (cv2.COLOR_BayerRG2RGBA, 3),
        (cv2.COLOR_BayerGR2GRAY, 1),
    ],
)
def test_dst_cn_picks_three_or_four_channels_like_opencv(code, dst_cn):
    """OpenCV lets dstCn turn a camera code's BGR into BGRA and back (gray ignores it)."""
    src = np.random.default_rng(4).integers(0, 256, (12, 10), np.uint8)
    expected = cv2.cvtColor(src, code, dstCn=dst_cn)
    np.testing.assert_array_equal(color.cvtColor(src, code, dstCn=dst_cn), expected)


def test_gray_of_packed_422_takes_any_width_like_opencv():
    frame = np.random.default_rng(3).integers(0, 256, (5, 7, 2), np.uint8)
    for code in (cv2.COLOR_YUV2GRAY_YUY2, cv2.COLOR_YUV2GRAY_UYVY):
        _same(frame, code)


def test_every_camera_code_name_of_cv2_is_supported_but_vng_and_edge_aware():
    prefixes = ("COLOR_YUV2", "COLOR_YUV420sp2", "COLOR_YUV420p2", "COLOR_YUV420SP2")
    prefixes += ("COLOR_YUV420P2", "COLOR_Bayer")
    formats = ("NV12", "NV21", "I420", "IYUV", "YV12", "YUY2", "YUYV", "YUNV", "UYVY", "Y422")
    formats += ("UYNV", "YVYU", "_420")
    names = [n for n in dir(cv2) if n.startswith(prefixes)]
    camera = [
        n
        for n in names
        if n.startswith(("COLOR_YUV420", "COLOR_Bayer")) or n.endswith(formats)
        if not n.endswith(("_VNG", "_EA"))
    ]
    assert len(camera) > 100
    assert set(camera) <= set(color.supported_codes())
    assert not {n for n in names if n.endswith(("_VNG", "_EA"))} & set(color.supported_codes())


Z = np.zeros
REFUSED = [  # (src, code, the argument named): OpenCV refuses each of these too
    (Z((6, 5), np.uint8), cv2.COLOR_YUV2BGR_NV12, "src.shape"),  # odd width
    (Z((4, 4), np.uint8), cv2.COLOR_YUV2RGB_I420, "src.shape"),  # rows not a multiple of 3
    (Z((6, 4), np.uint8), cv2.COLOR_YUV2GRAY_NV21, None),  # accepted: the Y plane
    (Z((9, 6), np.uint8), cv2.COLOR_YUV2GRAY_420, None),
    (Z((6, 5), np.uint8), cv2.COLOR_YUV2GRAY_420, "src.shape"),
    (Z((6, 4, 3), np.uint8), cv2.COLOR_YUV2BGR_NV12, "src channels"),
    (Z((6, 4), np.float32), cv2.COLOR_YUV2BGR_NV21, "src.dtype"),
    (Z((4, 5, 2), np.uint8), cv2.COLOR_YUV2BGR_YUY2, "src.shape"),  # odd width
    (Z((4, 4), np.uint8), cv2.COLOR_YUV2BGR_UYVY, "src channels"),
    (Z((4, 4, 2), np.uint16), cv2.COLOR_YUV2BGR_YVYU, "src.dtype"),
    (Z((6, 6, 3), np.uint8), cv2.COLOR_BayerBG2BGR, "src channels"),
    (Z((6, 6), np.float32), cv2.COLOR_BayerRG2GRAY, "src.dtype"),
    (Z((6, 6), np.uint8), cv2.COLOR_YUV2BGR_NV12, "dstCn"),  # dstCn=1 below
    (Z((6, 6), np.uint8), cv2.COLOR_BayerGB2GRAY, "dstCn"),  # dstCn=1 below: fine
]


@pytest.mark.parametrize("src, code, argument", REFUSED)
def test_refusals_follow_opencv_s_own_conditions_and_name_the_argument(src, code, argument):
    dst_cn = 1 if argument == "dstCn" else 0
    if code == cv2.COLOR_BayerGB2GRAY:
        src, dst_cn = src[:, :, None], 3  # OpenCV's Bayer gray takes dstCn 0 or 1 only
    if argument is None:
        _same(src, code)
        return
    with pytest.raises(cv2.error):
        cv2.cvtColor(src, code, dstCn=dst_cn)
    with pytest.raises(UnsupportedCaseError, match=f"argument {argument}="):
        color.cvtColor(src, code, dstCn=dst_cn)


@pytest.mark.parametrize("code", [cv2.COLOR_BayerBG2BGR_VNG, cv2.COLOR_BayerGR2RGB_EA])
def test_other_demosaicing_methods_are_refused_by_name(code):
    mosaic = np.zeros((8, 8), np.uint8)
    cv2.cvtColor(mosaic, code)  # OpenCV runs them; the replacement does not
    with pytest.raises(UnsupportedCaseError, match=r"argument code=COLOR_Bayer.*bilinear"):
        color.cvtColor(mosaic, code)


HEIGHT, WIDTH = 48, 64


def calls(nv12, yuy2, bayer, raw16):
    """One conversion of each kind, keyed by name."""
    return {
        "nv12": cv2.cvtColor(nv12, cv2.COLOR_YUV2BGR_NV12),
        "nv21_rgba": cv2.cvtColor(nv12, cv2.COLOR_YUV420sp2RGBA),
        "i420": cv2.cvtColor(nv12, cv2.COLOR_YUV2RGB_I420),
        "yv12_bgra": cv2.cvtColor(nv12, cv2.COLOR_YUV2BGRA_YV12),
        "y_plane": cv2.cvtColor(nv12, cv2.COLOR_YUV2GRAY_NV12),
        "yuy2": cv2.cvtColor(yuy2, cv2.COLOR_YUV2BGR_YUY2),
        "uyvy_rgb": cv2.cvtColor(yuy2, cv2.COLOR_YUV2RGB_UYVY),
        "yvyu_gray": cv2.cvtColor(yuy2, cv2.COLOR_YUV2GRAY_YVYU),
        "bayer_bg": cv2.cvtColor(bayer, cv2.COLOR_BayerBG2BGR),
        "bayer_gr_rgba": cv2.cvtColor(bayer, cv2.COLOR_BayerGR2RGBA),
        "bayer_gray": cv2.cvtColor(bayer, cv2.COLOR_BayerGB2GRAY),
        "bayer16": cv2.cvtColor(raw16, cv2.COLOR_BayerRG2BGR),
    }


def _frames(seed):
    rng = np.random.default_rng(seed)
    return {
        "nv12": rng.integers(0, 256, (HEIGHT * 3 // 2, WIDTH), np.uint8),
        "yuy2": rng.integers(0, 256, (HEIGHT, WIDTH, 2), np.uint8),
        "bayer": rng.integers(0, 256, (HEIGHT - 1, WIDTH + 3), np.uint8),  # odd sizes
        "raw16": rng.integers(0, 4096, (HEIGHT, WIDTH)).astype(np.uint16),  # 12-bit sensor
    }


def _export(folder, backend):
    with patchport.session("camera", folder, patching=["opencv"]):
        traced = annotate.input_tensors("calls", _frames(0))
        annotate.output_tensors("calls", calls(*traced), export_with=backend)
    result = patchport.compile_graph(visualize=False)
    assert result.ok
    return result


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    return _export(tmp_path_factory.mktemp("camera"), "onnx")


def _assert_replays_match(exported, seeds=(1, 2)):
    manager = patchport.InferenceManager(exported.yaml_path)
    for seed in seeds:
        frames = _frames(seed)
        outputs = manager.run_policy({f"calls/{k}": v for k, v in frames.items()})
        for name, expected in calls(*frames.values()).items():
            got = outputs[f"calls/{name}"].numpy()
            assert got.dtype == expected.dtype, name
            np.testing.assert_array_equal(got, expected, err_msg=name)


def test_onnx_replay_matches_opencv_on_fresh_frames(exported):
    _assert_replays_match(exported)


@pytest.mark.parametrize("backend", [pytest.param("pt2", marks=pytest.mark.slow), "jit"])
def test_pt2_and_jit_replays_match_opencv(tmp_path, backend):
    _assert_replays_match(_export(tmp_path, backend), seeds=(3,))


def test_onnx_lowering_has_no_per_pixel_gather_or_where(exported):
    """Chroma is repeated by Expand/Reshape and Bayer sites picked by 0/1 products."""
    ops = {node.op_type for node in onnx.load(str(exported.models["calls"])).graph.node}
    assert not ops & {"Gather", "GatherElements", "GatherND", "Where"}, ops
