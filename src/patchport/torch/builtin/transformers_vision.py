"""Vision layers that branch in Python on an image's size, replaced by code without the
branch that computes the same values, so height and width stay dynamic under
``torch.export``.

MobileViT's ``MobileViTLayer.unfolding`` rounds each feature map up to whole patches with
float arithmetic on the size (``int(math.ceil(h / p) * p)``) and interpolates only ``if``
the rounded size differs. torch.export keeps the branch the traced size took and guards
the float ``ceil`` on it: the program accepts the traced height and width only (and, at
the sizes where the last map is one patch, not even batch 1). The replacement rounds up
with integer arithmetic and always interpolates. Bilinear interpolation to the same size
(``align_corners=False``) samples each pixel at its own position with weight exactly 1,
so where nothing needs rounding the features are unchanged (finite values bit for bit);
``folding`` then interpolates back to the original size as before. The cost is that
extra identity resize per MobileViT block in the exported program.

The vision transformers (ViT, DeiT, CLIP, SigLIP, DINOv2, BEiT... 55 copies in
transformers 5) resize their position embeddings to the image in
``interpolate_pos_encoding``, except ``if not torch.jit.is_tracing() and num_patches ==
num_positions and height == width``: then they return the stored ones. transformers
means "always resize when exporting", but ``torch.jit.is_tracing()`` is False under
``torch.export``, so a trace at the configured image size (the natural example) pins the
program to square images of that size. When the height or width is symbolic, the
replacement runs the model's own method with ``torch.jit.is_tracing()`` answering True
for the call: the resize path, which at the configured size resizes the grid to itself
(bicubic or bilinear at scale 1: weights 1 and 0, so the same embeddings bit for bit).

MobileNet (V1, V2) pads "SAME" as TensorFlow does in ``apply_tf_padding``, with an
``if`` on ``size % stride`` (V2 after ``int(features.shape[-2])``, which fixes the size:
plain ``torch.export`` refuses a dynamic height or width). The replacement computes the
same padding from the symbolic size without a branch (``k - ((size - 1) % s + 1)`` is
``k - s`` when the stride divides the size and ``k - size % s`` otherwise).

Depth Anything's depth head resizes its map to ``(int(patch_height * patch_size),
int(patch_width * patch_size))``: ``int()`` of a symbolic size fixes it to the traced value
(plain ``torch.export`` then accepts the traced image size only, and ONNX files give a map
of that size for every image). The replacement computes the same size through
:func:`torch_int_keeping_symbolic`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn


def mobilevit_unfolding_without_size_branch(
    self: Any, features: torch.Tensor
) -> tuple[torch.Tensor, dict]:
    """``MobileViTLayer.unfolding`` with the map rounded up to whole patches by integer
    arithmetic and interpolated unconditionally (an identity when no rounding is needed)."""
    patch_width, patch_height = self.patch_width, self.patch_height
    patch_area = int(patch_width * patch_height)
    batch_size, channels, orig_height, orig_width = features.shape
    new_height = (orig_height + patch_height - 1) // patch_height * patch_height
    new_width = (orig_width + patch_width - 1) // patch_width * patch_width
    features = nn.functional.interpolate(
        features, size=(new_height, new_width), mode="bilinear", align_corners=False
    )
    num_patch_width = new_width // patch_width
    num_patch_height = new_height // patch_height
    num_patches = num_patch_height * num_patch_width
    # (batch, channels, height, width) -> (batch * patch_area, num_patches, channels)
    patches = features.reshape(
        batch_size * channels * num_patch_height, patch_height, num_patch_width, patch_width
    )
    patches = patches.transpose(1, 2)
    patches = patches.reshape(batch_size, channels, num_patches, patch_area)
    patches = patches.transpose(1, 3)
    patches = patches.reshape(batch_size * patch_area, num_patches, -1)
    info_dict = {
        "orig_size": (orig_height, orig_width),
        "batch_size": batch_size,
        "channels": channels,
        "interpolate": True,  # folding resizes back: an identity where nothing was rounded
        "num_patches": num_patches,
        "num_patches_width": num_patch_width,
        "num_patches_height": num_patch_height,
    }
    return patches, info_dict


def tf_same_padding_any_size(features: torch.Tensor, conv_layer: nn.Conv2d) -> torch.Tensor:
    """transformers' ``apply_tf_padding`` of MobileNetV2 (TensorFlow's "SAME" padding
    before a convolution, scaled by its dilation) computed from the symbolic height and
    width, without ``int()`` or an ``if`` on the size modulo the stride."""
    return _same_padding(features, conv_layer, conv_layer.dilation)


def tf_same_padding_any_size_undilated(
    features: torch.Tensor, conv_layer: nn.Conv2d
) -> torch.Tensor:
    """MobileNetV1's ``apply_tf_padding`` (the same padding, not scaled by the dilation)
    without an ``if`` on the size modulo the stride."""
    return _same_padding(features, conv_layer, (1, 1))


def _same_padding(features: torch.Tensor, conv_layer: nn.Conv2d, dilation: Any) -> torch.Tensor:
    in_height, in_width = features.shape[-2], features.shape[-1]
    stride_height, stride_width = conv_layer.stride
    kernel_height, kernel_width = conv_layer.kernel_size
    dilation_height, dilation_width = dilation
    along_height = torch.sym_max(kernel_height - ((in_height - 1) % stride_height + 1), 0)
    along_width = torch.sym_max(kernel_width - ((in_width - 1) % stride_width + 1), 0)
    pad_left = along_width // 2
    pad_top = along_height // 2
    padding = (
        pad_left * dilation_width,
        (along_width - pad_left) * dilation_width,
        pad_top * dilation_height,
        (along_height - pad_top) * dilation_height,
    )
    return nn.functional.pad(features, padding, "constant", 0.0)


def reads_jit_tracing(module: Any) -> bool:
    """True when the module's class resizes its position embeddings in a method that asks
    ``torch.jit.is_tracing()`` (transformers' "always resize when tracing" branch)."""
    import inspect

    method = getattr(type(module), "interpolate_pos_encoding", None)
    if not inspect.isfunction(method):
        return False
    names = set(getattr(inspect.unwrap(method), "__code__", None).co_names)
    return {"jit", "is_tracing"} <= names


def always_resized(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` (an ``interpolate_pos_encoding``) run with ``torch.jit.is_tracing()``
    answering True when the image size is symbolic, so it takes its resize path at every
    size; a static size keeps the original path (no resize added to the program)."""

    def position_embeddings_always_resized(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not any(isinstance(value, torch.SymInt) for value in (*args, *kwargs.values())):
            return method(self, *args, **kwargs)  # a static size: the branch fixes nothing
        with answering_tracing():
            return method(self, *args, **kwargs)

    position_embeddings_always_resized.__doc__ = always_resized.__doc__
    return position_embeddings_always_resized


@contextlib.contextmanager
def answering_tracing() -> Iterator[None]:
    """``torch.jit.is_tracing()`` answers True inside the block."""
    original = torch.jit.is_tracing
    torch.jit.is_tracing = _tracing
    try:
        yield
    finally:
        torch.jit.is_tracing = original


def _tracing() -> bool:
    return True


def torch_int_keeping_symbolic(x: Any) -> Any:
    """transformers' ``torch_int`` (a size as a Python int, or an int64 tensor while jit
    tracing) returning a symbolic size as it is: its ``int(x)`` on a ``torch.SymInt``
    fixed the size to the traced value (DINOv2 with registers sizes its resized position
    grid with it, so the program accepted the traced image size only). A symbolic float
    is truncated symbolically, as ``int()`` truncates."""
    if isinstance(x, torch.SymInt):
        return x
    if isinstance(x, torch.SymFloat):
        return torch.sym_int(x)
    if torch.jit.is_tracing() and isinstance(x, torch.Tensor):
        return x.to(torch.int64)
    return int(x)


def depth_head_at_symbolic_size(
    self: Any, hidden_states: list[torch.Tensor], patch_height: Any, patch_width: Any
) -> torch.Tensor:
    """``DepthAnythingDepthEstimationHead.forward`` resizing to the image's size in
    patches times the patch size without ``int()`` fixing a symbolic size."""
    predicted_depth = self.conv1(hidden_states[self.head_in_index])
    size = (
        torch_int_keeping_symbolic(patch_height * self.patch_size),
        torch_int_keeping_symbolic(patch_width * self.patch_size),
    )
    predicted_depth = nn.functional.interpolate(
        predicted_depth, size, mode="bilinear", align_corners=True
    )
    predicted_depth = self.activation1(self.conv2(predicted_depth))
    predicted_depth = self.activation2(self.conv3(predicted_depth)) * self.max_depth
    return predicted_depth.squeeze(dim=1)  # (batch, height, width)
