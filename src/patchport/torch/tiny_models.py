"""Tiny models with random weights that reproduce real export problems, for tests and docs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch


class TinyBroadcastAddModel(torch.nn.Module):
    """``x + y`` with ``x: (batch, d1)`` and ``y: (batch, d2)``, all four dims dynamic.

    The example input has ``d2 == 1``, so the output's second dimension is ``max(d1, d2)``
    symbolically. Plain ``torch.export`` specializes ``d2`` to 1; with
    ``backed_size_oblivious=True`` it fails; with ``patch_torch=True`` as well it exports a
    program that accepts every broadcastable ``(d1, d2)`` pair (the two batch sizes, traced
    equal, stay one size as in torch).
    """

    @staticmethod
    def _export_inputs() -> dict[str, torch.Tensor]:
        return {"x": torch.randn(2, 5), "y": torch.randn(2, 1)}

    @staticmethod
    def _dynamic_shapes() -> dict[str, Any]:
        return {"x": {0: "batch", 1: "d1"}, "y": {0: "batch", 1: "d2"}}

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class TinyAddModel(torch.nn.Module):
    """``x + y`` of two ``(batch, dim)`` inputs (yobx's ``"add"``); its dynamic shapes are
    ``Dim.DYNAMIC`` already, so they go to ``torch.export.export`` as they are."""

    @staticmethod
    def _export_inputs() -> dict[str, torch.Tensor]:
        return {"x": torch.randn(2, 3), "y": torch.randn(2, 3)}

    @staticmethod
    def _dynamic_shapes() -> dict[str, Any]:
        dynamic = torch.export.Dim.DYNAMIC
        return {"x": {0: dynamic, 1: dynamic}, "y": {0: dynamic, 1: dynamic}}

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class TinyBroadcastMultiplyModel(torch.nn.Module):
    """``x * w`` with ``x: (batch, dim)`` and ``w: (1, dim)`` broadcast along the batch
    (yobx's ``"broadcast_multiply"``); dynamic shapes as ``Dim.DYNAMIC``."""

    @staticmethod
    def _export_inputs() -> dict[str, torch.Tensor]:
        return {"x": torch.randn(2, 3), "w": torch.randn(1, 3)}

    @staticmethod
    def _dynamic_shapes() -> dict[str, Any]:
        dynamic = torch.export.Dim.DYNAMIC
        return {"x": {0: dynamic, 1: dynamic}, "w": {1: dynamic}}

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return x * w


_SMALL_MODELS: dict[str, type[torch.nn.Module]] = {
    "local/BroadcastAdd": TinyBroadcastAddModel,
    "add": TinyAddModel,
    "broadcast_multiply": TinyBroadcastMultiplyModel,
}


@dataclass
class ModelData:
    """A tiny model with everything needed to export it (yobx's ``get_tiny_model`` result).

    ``dynamic_shapes`` names dimensions with strings; torch.export needs them replaced
    (:func:`patchport.torch.use_dyn_not_str`, or :attr:`dynamic_shapes_for_torch_export_export`).
    """

    model_id: str
    model: torch.nn.Module
    export_inputs: dict[str, Any]
    dynamic_shapes: dict[str, Any]
    inputs_batch1: dict[str, Any] | None = None

    @property
    def dynamic_shapes_for_torch_export_export(self) -> dict[str, Any]:
        """``dynamic_shapes`` with every dimension name replaced by ``Dim.DYNAMIC``."""
        from .dynamic_shapes import use_dyn_not_str

        return use_dyn_not_str(self.dynamic_shapes)


# The published configuration of the Hugging Face model arnir0/Tiny-LLM (a one-layer
# LLaMA); only the configuration is built in, weights are random and nothing is downloaded.
TINY_LLM_CONFIG: dict[str, Any] = {
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "head_dim": 96,
    "hidden_act": "silu",
    "hidden_size": 192,
    "initializer_range": 0.02,
    "intermediate_size": 1024,
    "max_position_embeddings": 1024,
    "mlp_bias": False,
    "num_attention_heads": 2,
    "num_hidden_layers": 1,
    "num_key_value_heads": 1,
    "pretraining_tp": 1,
    "rms_norm_eps": 1e-05,
    "tie_word_embeddings": False,
    "use_cache": True,
    "vocab_size": 32000,
}


def _tiny_llm_inputs(model: torch.nn.Module, batch: int, seq: int, past: int) -> dict[str, Any]:
    """Tokens, a mask over past + new tokens, their positions, and a filled cache."""
    from .transformers_inputs import make_dynamic_cache

    config = model.config
    shape = (batch, config.num_key_value_heads, past, config.head_dim)
    layers = range(config.num_hidden_layers)
    return {
        "input_ids": torch.randint(0, config.vocab_size, (batch, seq), dtype=torch.int64),
        "attention_mask": torch.ones((batch, past + seq), dtype=torch.int64),
        "position_ids": torch.arange(past, past + seq, dtype=torch.int64)
        .unsqueeze(0)
        .expand(batch, -1),
        _cache_argument(model): make_dynamic_cache(
            config, [torch.randn(shape) for _ in layers], [torch.randn(shape) for _ in layers]
        ),
    }


def _cache_argument(model: torch.nn.Module) -> str:
    """``cache`` in transformers >= 5.20's ``forward``, ``past_key_values`` before."""
    import inspect

    parameters = inspect.signature(model.forward).parameters
    return "cache" if "cache" in parameters else "past_key_values"


def _update_config(config: Any, updates: dict[str, Any]) -> None:
    """Apply ``config_updates`` as yobx does: a dict merges into the dict (or sub-config)
    already there, so ``{"rope_parameters": {"rope_type": "dynamic", "factor": 10.0}}``
    keeps ``rope_theta``; ``attn_implementation`` selects the attention kernel."""
    for key, value in updates.items():
        if key == "attn_implementation":
            config._attn_implementation = value
            continue
        current = config.get(key) if isinstance(config, dict) else getattr(config, key, None)
        if isinstance(value, dict) and isinstance(current, dict):
            current.update(value)
        elif isinstance(value, dict) and current is not None:
            _update_config(current, value)
        elif isinstance(config, dict):
            config[key] = value
        else:
            setattr(config, key, value)


def _tiny_llm(config_updates: dict[str, Any] | None) -> ModelData:
    import transformers

    config = transformers.LlamaConfig(
        **TINY_LLM_CONFIG,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    )
    _update_config(config, config_updates or {})
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    per_layer = [{0: "batch", 2: "past_length"} for _ in range(config.num_hidden_layers)]
    return ModelData(
        model_id="arnir0/Tiny-LLM",
        model=model,
        export_inputs=_tiny_llm_inputs(model, batch=2, seq=3, past=30),
        dynamic_shapes={
            "input_ids": {0: "batch", 1: "seq_length"},
            "attention_mask": {0: "batch", 1: "past_length+seq_length"},
            "position_ids": {0: "batch", 1: "seq_length"},
            # the cache flattens to [keys per layer, values per layer]
            _cache_argument(model): [per_layer, [dict(d) for d in per_layer]],
        },
        inputs_batch1=_tiny_llm_inputs(model, batch=1, seq=3, past=30),
    )


TINY_MODEL_IDS = (*_SMALL_MODELS, "arnir0/Tiny-LLM")


def get_tiny_model(model_id: str, config_updates: dict[str, Any] | None = None) -> ModelData:
    """A tiny random model, its export inputs and string-named dynamic shapes.

    ``"local/BroadcastAdd"``: :class:`TinyBroadcastAddModel`; yobx's ``"add"`` and
    ``"broadcast_multiply"``: :class:`TinyAddModel`, :class:`TinyBroadcastMultiplyModel`
    (their dynamic shapes are ``Dim.DYNAMIC``, not names). ``"arnir0/Tiny-LLM"``: a
    LLaMA built from that model's published configuration (changed by ``config_updates``),
    random weights, with a filled ``DynamicCache`` as ``past_key_values``.
    """
    small = _SMALL_MODELS.get(model_id)
    if small is not None:
        return ModelData(
            model_id=model_id,
            model=small(),
            export_inputs=small._export_inputs(),
            dynamic_shapes=small._dynamic_shapes(),
        )
    if model_id == "arnir0/Tiny-LLM":
        return _tiny_llm(config_updates)
    raise ValueError(
        f"get_tiny_model({model_id!r}): unknown model id; choose one of {list(TINY_MODEL_IDS)}."
    )
