"""transformers patches found from a model's own modules, and transformers' own export patches.

A :class:`BuiltinPatch` names its target as text. Rotary embeddings cannot be named that
way: each model family has its own class, and versions move them. :class:`ModulePatch`
declares instead how to recognize a module that needs a patch, and produces one
:class:`PatchInfo` per class the given model actually uses; :class:`CopiedHelperPatch` does
the same for helpers copied into each ``modeling_<name>.py`` (``repeat_kv``, eager
attention), patching only copies whose code equals the reference it was written against.
:class:`ExporterPatches` turns the registry transformers ships for its own exporter
(``transformers.exporters``) into PatchInfo objects, so they are listed, diffed, counted
and restored like ours. All are :class:`~patchport.patching.declaration.PatchDeclaration`:
``resolve(model)`` only builds patches; :class:`PatchDetails` applies and restores them.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import PatchDefinitionError
from ..patching import PatchFamily, PatchInfo, SkippedPatch
from ..patching.declaration import VersionedDeclaration, split_resolved
from ..versions import installed_version

FAMILY = PatchFamily.TRANSFORMERS


_ROTARY = {"rotary_forward_without_state"}
_SCAN = {"mamba_selective_scan_closed_form", "mamba2_chunk_scan_padded_symbolically"}
_IMAGE_SIZE = {
    "mobilevit_unfolding_without_size_branch",
    "depth_head_at_symbolic_size",
    "position_embeddings_always_resized",
    "tf_same_padding_any_size",
    "tf_same_padding_any_size_undilated",
    "torch_int_keeping_symbolic",
}
_POSITIONS = {"sinusoidal_table_sized_for_the_call"}


@dataclass(frozen=True)
class ModulePatch(VersionedDeclaration):
    """A shipped patch of a method on the classes of a model's submodules.

    ``wants(module)`` says whether a submodule needs the patch; ``build(method)`` returns
    the replacement of that class's ``method`` or None when the method does not have the
    shape the replacement was written for (then the class is skipped with a reason).
    """

    name: str
    method: str
    wants: Callable[[Any], bool]
    build: Callable[[Any], Callable[..., Any] | None]
    distribution: str
    versions: str
    why: str

    family = FAMILY

    def resolve(self, model: Any = None) -> list[PatchInfo | SkippedPatch]:
        """One PatchInfo per class of ``model``'s submodules that needs it, and the skips."""
        reason = self.version_skip_reason()
        if reason is not None:
            return [SkippedPatch(self.name, FAMILY, f"*.{self.method}", reason)]
        resolved: list[PatchInfo | SkippedPatch] = []
        seen: set[type] = set()
        for module in model.modules() if model is not None else ():
            klass = type(module)
            if klass in seen or not self.wants(module):
                continue
            seen.add(klass)
            target = f"{klass.__module__}.{klass.__qualname__}.{self.method}"
            method = getattr(klass, self.method, None)
            replacement = self.build(method) if method is not None else None
            if replacement is None:
                resolved.append(
                    SkippedPatch(
                        self.name,
                        FAMILY,
                        target,
                        f"{klass.__qualname__}.{self.method} is not the code this patch was "
                        f"written for ({self.why}); left unpatched, export may fail or narrow",
                    )
                )
                continue
            resolved.append(
                PatchInfo.make(
                    replacement,
                    klass,
                    self.method,
                    family=FAMILY,
                    versions=self.written_for,
                    description=self.why,
                )
            )
        return resolved


def _wants_stateless_rope(module: Any) -> bool:
    from .builtin.transformers_rope import needs_stateless_rope

    rope_type = getattr(module, "rope_type", None)
    return rope_type is not None and needs_stateless_rope(rope_type)


def _build_stateless_rope(forward: Any) -> Callable[..., Any] | None:
    from .builtin.transformers_rope import decorated_rope_body, make_stateless_rotary_forward

    try:
        body = decorated_rope_body(forward)
    except ImportError:  # a transformers without dynamic_rope_update: nothing to recognize
        return None
    return None if body is None else make_stateless_rotary_forward(body)


def copies_of(reference: str) -> Callable[[Any], bool]:
    """``wants(module)`` for a :class:`ModulePatch` of a method transformers copies from
    model to model: True when the module's class has ``reference``'s method (a dotted
    ``module.Class.method``) with the same code. The reference's module is imported only
    when a class has a method of that name."""
    module_name, class_name, method = reference.rsplit(".", 2)

    def wants(module: Any) -> bool:
        import inspect

        candidate = getattr(type(module), method, None)
        if not inspect.isfunction(candidate):
            return False
        try:
            original = getattr(getattr(importlib.import_module(module_name), class_name), method)
        except (ImportError, AttributeError):
            return False
        return same_code(candidate, original)

    return wants


def copies_of_any(*references: str) -> Callable[[Any], bool]:
    """``wants(module)``: :func:`copies_of` any of ``references`` (one replacement for
    methods that compute the same thing in different code)."""
    checks = [copies_of(reference) for reference in references]
    return lambda module: any(check(module) for check in checks)


def _builtin(module: str, name: str) -> Callable[[Any], Any]:
    """A function of ``patchport.torch.builtin.<module>``, imported when called."""

    def call(value: Any) -> Any:
        return getattr(importlib.import_module(f"{__package__}.builtin.{module}"), name)(value)

    return call


def _replacement(module: str, name: str) -> Callable[[Any], Callable[..., Any] | None]:
    """``build(method)`` of a :class:`ModulePatch` that only recognized copies want: the
    replacement ``name`` of ``patchport.torch.builtin.<module>``, imported when used."""

    def build(_method: Any) -> Callable[..., Any] | None:
        return getattr(importlib.import_module(f"{__package__}.builtin.{module}"), name)

    return build


def same_code(candidate: Any, reference: Any) -> bool:
    """True when two functions compile to the same code (docstrings aside).

    transformers copies helpers into each ``modeling_<name>.py``; a copy with the same
    code computes the same thing, a copy that differs in any way is not ours to replace.
    Decorated functions are compared by what they wrap (``functools.wraps``): transformers'
    kernel-hub wrappers all share one code object, whatever they wrap.
    """
    import inspect

    a = getattr(inspect.unwrap(candidate), "__code__", None)
    b = getattr(inspect.unwrap(reference), "__code__", None)
    if a is None or b is None:
        return False
    return (
        a.co_code == b.co_code
        and a.co_names == b.co_names
        and a.co_varnames == b.co_varnames
        and a.co_argcount == b.co_argcount
        and a.co_kwonlyargcount == b.co_kwonlyargcount
        and _constants(a) == _constants(b)
    )


def _constants(code: Any) -> tuple:
    values = list(code.co_consts)
    if values and isinstance(values[0], str):
        values = values[1:]  # the docstring
    return tuple(
        (c.co_code, c.co_names, _constants(c)) if hasattr(c, "co_code") else c for c in values
    )


@dataclass(frozen=True)
class CopiedHelperPatch(VersionedDeclaration):
    """A shipped patch of a helper function copied into transformers' modeling modules.

    ``reference`` names the function the replacement was written against; every copy in
    the Python modules of the model's classes with the same code is patched, and a copy
    that differs is skipped with a reason.
    """

    name: str
    function: str
    reference: str
    replacement: Callable[..., Any]
    distribution: str
    versions: str
    why: str

    family = FAMILY

    def resolve(self, model: Any = None) -> list[PatchInfo | SkippedPatch]:
        """One PatchInfo per module of ``model``'s classes holding a copy of the reference."""
        import inspect
        import sys

        reason = self.version_skip_reason()
        if reason is None:
            module_name, _, attribute = self.reference.rpartition(".")
            try:
                reference = getattr(importlib.import_module(module_name), attribute)
            except (ImportError, AttributeError) as exc:
                version = installed_version(self.distribution)
                reason = f"reference {self.reference} not found in transformers {version}: {exc}"
        if reason is not None:
            return [SkippedPatch(self.name, FAMILY, f"*.{self.function}", reason)]
        resolved: list[PatchInfo | SkippedPatch] = []
        modules = model.modules() if model is not None else ()
        names = dict.fromkeys(type(module).__module__ for module in modules)
        for module_name in names:
            owner = sys.modules.get(module_name)
            function = getattr(owner, self.function, None)
            if owner is None or not inspect.isfunction(function):
                continue
            target = f"{module_name}.{self.function}"
            if not same_code(function, reference):
                resolved.append(
                    SkippedPatch(
                        self.name,
                        FAMILY,
                        target,
                        f"differs from {self.reference}, the code this patch was written "
                        f"for; left unpatched",
                    )
                )
                continue
            resolved.append(
                PatchInfo.make(
                    self.replacement,
                    owner,
                    self.function,
                    family=FAMILY,
                    versions=self.written_for,
                    description=self.why,
                )
            )
        return resolved


MODULE_PATCHES: tuple[ModulePatch, ...] = (
    ModulePatch(
        name="rotary_forward_without_state",
        method="forward",
        wants=_wants_stateless_rope,
        build=_build_stateless_rope,
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="dynamic and longrope rotary embeddings choose their frequencies with torch.where "
        "instead of a data-dependent branch, and keep no state from the export",
    ),
    ModulePatch(
        name="fused_qkv_split_dense",
        method="_reshape",
        wants=copies_of("transformers.models.bloom.modeling_bloom.BloomAttention._reshape"),
        build=_replacement("transformers_attention", "fused_qkv_split_dense"),
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="Bloom splits its fused query/key/value projection into contiguous tensors, not "
        "strided views whose reshape made torch guard seq != 1 (the decode step)",
    ),
    ModulePatch(
        name="merged_heads_dense",
        method="_merge_heads",
        wants=copies_of("transformers.models.bloom.modeling_bloom.BloomAttention._merge_heads"),
        build=_replacement("transformers_attention", "merged_heads_dense"),
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="Bloom merges its attention heads from a contiguous copy, not a permuted view "
        "whose reshape made torch guard seq != 1 (the decode step)",
    ),
    ModulePatch(
        name="causal_buffer_read_by_index",
        method="_attn",
        wants=copies_of("transformers.models.gpt_neo.modeling_gpt_neo.GPTNeoSelfAttention._attn"),
        build=_replacement("transformers_attention", "causal_buffer_read_by_index"),
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="GPT-Neo reads its causal buffer by index, not by a slice whose clamping bounded "
        "and guarded the lengths, on contiguous copies of its permuted heads (matmul "
        "guarded seq != 1 on the views), so the decode step from a one-token past is kept",
    ),
    ModulePatch(
        name="imagegpt_causal_buffer_read_by_index",
        method="_attn",
        wants=copies_of("transformers.models.imagegpt.modeling_imagegpt.ImageGPTAttention._attn"),
        build=_replacement("transformers_attention", "imagegpt_causal_buffer_read_by_index"),
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="ImageGPT reads its causal buffer by index, not by a slice whose clamping "
        "bounded and guarded the lengths, on contiguous copies of its permuted heads, so "
        "the decode step from a one-token past is kept",
    ),
    ModulePatch(
        name="bark_causal_buffer_read_by_index",
        method="_attn",
        wants=copies_of("transformers.models.bark.modeling_bark.BarkSelfAttention._attn"),
        build=_replacement("transformers_attention", "bark_causal_buffer_read_by_index"),
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="Bark reads its causal buffer by index, not by a slice whose clamping bounded "
        "and guarded the lengths, on contiguous copies of its permuted heads, so the "
        "decode step from a one-token past is kept",
    ),
    ModulePatch(
        name="heads_merged_dense",
        method="_merge_heads",
        wants=copies_of_any(
            "transformers.models.gpt_neo.modeling_gpt_neo.GPTNeoSelfAttention._merge_heads",
            "transformers.models.bark.modeling_bark.BarkSelfAttention._merge_heads",
        ),
        build=_replacement("transformers_attention", "heads_merged_dense"),
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="GPT-Neo, ImageGPT and Bark merge their attention heads from a contiguous copy, not "
        ".contiguous() of a permuted view, which made torch guard seq != 1 (the decode step)",
    ),
    ModulePatch(
        name="relative_shift_by_flat_reshapes",
        method="rel_shift_bnij",
        wants=copies_of(
            "transformers.models.xlnet.modeling_xlnet.XLNetRelativeAttention.rel_shift_bnij"
        ),
        build=_replacement("transformers_attention", "relative_shift_by_flat_reshapes"),
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="XLNet shifts its relative attention scores with reshapes through the flat axis, "
        "not between (seq, 2 * seq - 1) and (2 * seq - 1, seq) directly, which made torch "
        "guard seq != 1",
    ),
    ModulePatch(
        name="latent_keys_concatenated",
        method="expand_kv",
        wants=copies_of(
            "transformers.models.deepseek_v3.modeling_deepseek_v3.DeepseekV3Attention.expand_kv"
        ),
        build=_replacement("transformers_attention", "latent_keys_concatenated"),
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="multi-head latent attention (DeepSeek and its copies) concatenates the key parts "
        "instead of copying them into slices of an empty tensor, which made torch guard "
        "past + seq != 1 and batch >= 2",
    ),
    ModulePatch(
        name="position_embeddings_always_resized",
        method="interpolate_pos_encoding",
        wants=_builtin("transformers_vision", "reads_jit_tracing"),
        build=_builtin("transformers_vision", "always_resized"),
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="vision transformers resize their position embeddings at every image size (their "
        "own 'always interpolate when tracing' path, which torch.export did not take), so a "
        "trace at the configured size does not pin height and width",
    ),
    ModulePatch(
        name="sinusoidal_table_sized_for_the_call",
        method="forward",
        wants=_builtin("transformers_positions", "grows_sinusoidal_table"),
        build=_builtin("transformers_positions", "table_sized_for_the_call"),
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="sinusoidal position tables (M2M100, NLLB, XGLM, Speech2Text, MusicGen...) are "
        "built for each call a few rows longer than it can read, instead of grown by an if "
        "on the traced length, so sequence and past stay dynamic past the table",
    ),
    ModulePatch(
        name="mobilevit_unfolding_without_size_branch",
        method="unfolding",
        wants=copies_of(
            "transformers.models.mobilevit.modeling_mobilevit.MobileViTLayer.unfolding"
        ),
        build=_replacement("transformers_vision", "mobilevit_unfolding_without_size_branch"),
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="MobileViT rounds each feature map up to whole patches with integer arithmetic "
        "and always resizes (an identity when nothing is rounded) instead of a float ceil "
        "and an if on the size, so image height and width stay dynamic",
    ),
    ModulePatch(
        name="depth_head_at_symbolic_size",
        method="forward",
        wants=copies_of(
            "transformers.models.depth_anything.modeling_depth_anything."
            "DepthAnythingDepthEstimationHead.forward"
        ),
        build=_replacement("transformers_vision", "depth_head_at_symbolic_size"),
        distribution="transformers",
        versions=">=5.0,<6.0",
        why="Depth Anything's depth head resizes to the image's size without int() fixing "
        "a symbolic height and width to the traced ones",
    ),
)


def copied_helper_patches() -> tuple[CopiedHelperPatch, ...]:
    """The shipped :class:`CopiedHelperPatch` declarations."""
    from .builtin import transformers_attention as attention
    from .builtin import transformers_scan as scan
    from .builtin import transformers_vision as vision

    models = "transformers.models"
    return (
        CopiedHelperPatch(
            name="repeat_kv_without_reshape",
            function="repeat_kv",
            reference=f"{models}.llama.modeling_llama.repeat_kv",
            replacement=attention.repeat_kv_without_reshape,
            distribution="transformers",
            versions=">=5.0,<6.0",
            why="grouped key/value heads are repeated without reshaping an expanded view, "
            "which made torch guard past + seq != 1",
        ),
        CopiedHelperPatch(
            name="eager_attention_dense",
            function="eager_attention_forward",
            reference=f"{models}.llama.modeling_llama.eager_attention_forward",
            replacement=attention.eager_attention_dense,
            distribution="transformers",
            versions=">=5.0,<6.0",
            why="eager attention multiplies contiguous operands, so matmul does not guard seq != 1",
        ),
        CopiedHelperPatch(
            name="eager_attention_softcap_dense",
            function="eager_attention_forward",
            reference=f"{models}.gemma2.modeling_gemma2.eager_attention_forward",
            replacement=attention.eager_attention_softcap_dense,
            distribution="transformers",
            versions=">=5.0,<6.0",
            why="eager attention with soft-capping multiplies contiguous operands, so matmul "
            "does not guard seq != 1",
        ),
        CopiedHelperPatch(
            name="mamba_selective_scan_closed_form",
            function="mamba_selective_scan",
            reference=f"{models}.mamba.modeling_mamba.mamba_selective_scan",
            replacement=scan.mamba_selective_scan_closed_form,
            distribution="transformers",
            versions=">=5.0,<6.0",
            why="Mamba's selective scan sums its recurrence in closed form instead of a Python "
            "loop over the positions, so the sequence length stays dynamic",
        ),
        CopiedHelperPatch(
            name="mamba2_chunk_scan_padded_symbolically",
            function="mamba2_chunk_scan",
            reference=f"{models}.mamba2.modeling_mamba2.mamba2_chunk_scan",
            replacement=scan.mamba2_chunk_scan_padded_symbolically,
            distribution="transformers",
            versions=">=5.0,<6.0",
            why="Mamba2's chunked scan pads the sequence by a symbolic amount (one chunk more "
            "than needed) instead of branching on pad_size > 0, so torch does not fix "
            "seq % chunk_size",
        ),
        CopiedHelperPatch(
            name="tf_same_padding_any_size",
            function="apply_tf_padding",
            reference=f"{models}.mobilenet_v2.modeling_mobilenet_v2.apply_tf_padding",
            replacement=vision.tf_same_padding_any_size,
            distribution="transformers",
            versions=">=5.0,<6.0",
            why="MobileNetV2's TensorFlow 'SAME' padding is computed from the symbolic image "
            "size, not int() and an if on size % stride, so height and width stay dynamic",
        ),
        CopiedHelperPatch(
            name="tf_same_padding_any_size_undilated",
            function="apply_tf_padding",
            reference=f"{models}.mobilenet_v1.modeling_mobilenet_v1.apply_tf_padding",
            replacement=vision.tf_same_padding_any_size_undilated,
            distribution="transformers",
            versions=">=5.0,<6.0",
            why="MobileNetV1's TensorFlow 'SAME' padding is computed without an if on "
            "size % stride, so torch does not fix the image size modulo the stride",
        ),
        CopiedHelperPatch(
            name="torch_int_keeping_symbolic",
            function="torch_int",
            reference="transformers.utils.generic.torch_int",
            replacement=vision.torch_int_keeping_symbolic,
            distribution="transformers",
            versions=">=5.0,<6.0",
            why="transformers' torch_int returns a symbolic size as it is instead of int() "
            "on it, which fixed the size to the traced one (DINOv2 with registers' resized "
            "position grid: the program took the traced image size only)",
        ),
    )


def model_patches(model: Any) -> tuple[list[PatchInfo], list[SkippedPatch]]:
    """All :data:`MODULE_PATCHES` and :func:`copied_helper_patches` resolved for ``model``."""
    patches, skipped = split_resolved(
        item for declaration in MODULE_PATCHES for item in declaration.resolve(model)
    )
    by_target: dict[str, list[PatchInfo]] = {}
    differing: dict[str, list[SkippedPatch]] = {}
    for declaration in copied_helper_patches():
        found, missed = split_resolved(declaration.resolve(model))
        for patch in found:
            by_target.setdefault(patch.target_name, []).append(patch)
        for skip in missed:
            differing.setdefault(skip.target, []).append(skip)
    for found in by_target.values():
        patches.append(found[0])  # the code matched one reference: one patch per target
    for target, skips in differing.items():
        if target not in by_target and (target.startswith("*") or len(skips) >= _copies(target)):
            skipped.extend(skips)
    return patches, skipped


def _copies(target: str) -> int:
    """How many declarations replace the function named by ``target``."""
    return sum(1 for d in copied_helper_patches() if target.endswith(f".{d.function}"))


def _model_packages(model: Any) -> set[str]:
    """``transformers.models.<name>`` packages the model's submodules come from."""
    packages = set()
    for module in model.modules():
        parts = type(module).__module__.split(".")
        if len(parts) >= 3 and parts[:2] == ["transformers", "models"]:
            packages.add(".".join(parts[:3]))
    return packages


def _resolve_owner(path: str) -> Any:
    """The module or class at a dotted path, importing modules on the way."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            owner = getattr(owner, part)
        return owner
    raise ImportError(f"cannot import any prefix of {path!r}")


# transformers export patches patchport lists but does not apply, and why
EXPORTER_PATCHES_NOT_APPLIED: dict[str, str] = {
    "torch.nn.functional.scaled_dot_product_attention": (
        "forces SDPA's MATH backend on CPU, whose matmul decomposition makes torch guard "
        "seq != 1 under backed_size_oblivious (the exported program then rejects the decode "
        "step); measured on transformers 5.24 / torch 2.13"
    ),
}


def _exporter_registry(backend: str) -> list[tuple[str, str, Callable[..., Any]]] | str:
    """transformers' own list of ``(owner path, attribute, factory)`` or why there is none."""
    version = installed_version("transformers")
    if version is None:
        return "transformers is not installed"
    try:
        importlib.import_module(f"transformers.exporters.exporter_{backend}")
        registry = importlib.import_module("transformers.exporters.utils")._PATCHES
    except (ImportError, AttributeError) as exc:
        return f"transformers {version} ships no exporter patch registry for {backend!r}: {exc}"
    if not isinstance(registry, dict):
        return f"transformers {version}: exporters.utils._PATCHES is not a dict"
    return list(registry.get(backend, []))


@dataclass(frozen=True)
class ExporterPatches:
    """The export patches transformers ships for ``backend``, as one declaration.

    Patches of a ``transformers.models.<name>`` package apply only when ``model`` uses
    that package (importing every model package would take minutes and patch nothing
    useful); the others always apply. They are written for the installed transformers.
    """

    backend: str = "dynamo"
    name = "transformers.exporters"
    family = FAMILY

    def resolve(self, model: Any = None) -> list[PatchInfo | SkippedPatch]:
        """One PatchInfo per registry entry that resolves here, a SkippedPatch for the rest."""
        registry = _exporter_registry(self.backend)
        if isinstance(registry, str):
            return [SkippedPatch(self.name, FAMILY, self.backend, registry)]
        used = _model_packages(model) if model is not None else set()
        resolved: list[PatchInfo | SkippedPatch] = []
        taken: set[tuple[int, str]] = set()
        for owner_path, attribute, factory in registry:
            target = f"{owner_path}.{attribute}"
            name = getattr(factory, "__name__", "patch")
            parts = owner_path.split(".")
            if parts[:2] == ["transformers", "models"] and ".".join(parts[:3]) not in used:
                continue  # another model family: not relevant, and importing it is slow
            if target in EXPORTER_PATCHES_NOT_APPLIED:
                reason = EXPORTER_PATCHES_NOT_APPLIED[target]
                resolved.append(SkippedPatch(name, FAMILY, target, reason))
                continue
            try:
                info = self._patch_info(owner_path, attribute, factory, name)
            except Exception as exc:  # a registry entry that does not resolve here is skipped
                resolved.append(SkippedPatch(name, FAMILY, target, f"{type(exc).__name__}: {exc}"))
                continue
            if info.target_key() in taken:
                resolved.append(SkippedPatch(name, FAMILY, target, "target listed twice"))
                continue
            taken.add(info.target_key())
            resolved.append(info)
        return resolved

    def _patch_info(
        self, owner_path: str, attribute: str, factory: Callable[..., Any], name: str
    ) -> PatchInfo:
        owner = _resolve_owner(owner_path)
        replacement = factory(getattr(owner, attribute))
        if getattr(replacement, "__name__", "<lambda>") == "<lambda>":
            replacement.__name__ = f"{name}_{attribute}"
        return PatchInfo.make(
            replacement,
            owner,
            attribute,
            family=FAMILY,
            versions=f"transformers=={installed_version('transformers')}",
            description=f"from transformers.exporters ({self.backend}): "
            + ((factory.__doc__ or "").strip().splitlines() or [""])[0],
        )


def exporter_patches(
    model: Any = None, backend: str = "dynamo"
) -> tuple[list[PatchInfo], list[SkippedPatch]]:
    """transformers' own export patches for ``backend`` as ``(patches, skipped)``."""
    return split_resolved(ExporterPatches(backend).resolve(model))


class TransformersPatch(str, enum.Enum):
    """Groups of transformers patches; ``patch_transformers=`` takes True (all) or some."""

    ATTENTION = "attention"  # one SDPA path, dense eager attention, repeat_kv without reshape
    ROTARY = "rotary"  # stateless dynamic / longrope rotary embeddings (found from the model)
    EXPORTERS = "exporters"  # the export patches transformers itself ships
    CACHE = "cache"  # cache layers traced without constant tensors (ONNX conversion)
    SCAN = "scan"  # state-space scans (Mamba, Mamba2) without a loop or padding over seq
    IMAGE_SIZE = "image_size"  # vision layers without Python branches on the image size
    POSITIONS = "positions"  # position tables built for the call's length, not grown in Python


TransformersPatchEnum = TransformersPatch  # yobx's name for the groups


def transformers_groups(value: Any) -> frozenset[TransformersPatch]:
    """``patch_transformers=`` as a set of groups; refuses anything else with the fix."""
    if value is True:
        return frozenset(TransformersPatch)
    if value is False or value is None:
        return frozenset()
    items = [value] if isinstance(value, (str, TransformersPatch)) else value
    try:
        return frozenset(TransformersPatch(item) for item in items)
    except (TypeError, ValueError):
        valid = ", ".join(f"TransformersPatch.{g.name}" for g in TransformersPatch)
        raise PatchDefinitionError(
            f"apply_patches_for_model(patch_transformers={value!r}): expected True, False, or "
            f"some of {valid} (or their names as strings)."
        ) from None


def iter_transformers_patches(model: Any, groups: Any = True) -> Iterator[PatchInfo | SkippedPatch]:
    """The transformers patches of ``groups`` for ``model`` (None: model-independent ones)."""
    from .builtin import builtin_patches

    wanted = transformers_groups(groups)
    for spec in builtin_patches(FAMILY):
        if TransformersPatch(spec.group) in wanted:
            yield from spec.resolve(model)
    if model is not None:
        patches, skipped = model_patches(model)
        for item in (*patches, *skipped):
            group = (
                TransformersPatch.ROTARY
                if item.name in _ROTARY
                else TransformersPatch.SCAN
                if item.name in _SCAN
                else TransformersPatch.IMAGE_SIZE
                if item.name in _IMAGE_SIZE
                else TransformersPatch.POSITIONS
                if item.name in _POSITIONS
                else TransformersPatch.ATTENTION
            )
            if group in wanted:
                yield item
    if TransformersPatch.EXPORTERS in wanted:
        patches, skipped = exporter_patches(model)
        yield from patches  # patches first, then the skips, as the report lists them
        yield from skipped
