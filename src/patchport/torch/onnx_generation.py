"""Greedy generation with an ONNX file that is fed its own cache, against
``model.generate(do_sample=False)``: the check that the exported decode step is right over
many steps, not only on one."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..dtype_table import numpy_dtype_of_onnx


def greedy_onnx(session: Any, input_ids: np.ndarray, new_tokens: int) -> np.ndarray:
    """``new_tokens`` greedy tokens from an ONNX decoder with inputs ``input_ids``,
    ``attention_mask`` (optional ``position_ids``) and ``past_key_values.N.key/value``; each
    step feeds the ``present.N.key/value`` of the step before, starting from an empty past."""
    inputs = {item.name: item for item in session.get_inputs()}
    outputs = [item.name for item in session.get_outputs()]
    batch = input_ids.shape[0]
    past = {}
    for name, item in inputs.items():
        if name.startswith("past_key_values."):
            shape = [batch if i == 0 else 0 if i == 2 else d for i, d in enumerate(item.shape)]
            if not all(isinstance(d, int) for d in shape):
                raise ValueError(f"greedy_onnx: cannot size an empty past for {name} {item.shape}")
            past[name] = np.zeros(shape, dtype=numpy_dtype_of_onnx(item.type) or np.float32)
    ids, length, produced = input_ids.astype(np.int64), 0, []
    for _ in range(new_tokens):
        seq = ids.shape[1]
        feed = {"input_ids": ids, **past}
        if "attention_mask" in inputs:
            feed["attention_mask"] = np.ones((batch, length + seq), dtype=np.int64)
        if "position_ids" in inputs:
            feed["position_ids"] = np.tile(np.arange(length, length + seq), (batch, 1))
        named = dict(zip(outputs, session.run(None, feed)))
        token = named["logits"][:, -1].argmax(-1)
        produced.append(token)
        past = {
            "past_key_values." + name[len("present.") :]: value
            for name, value in named.items()
            if name.startswith("present.")
        }
        ids, length = token[:, None].astype(np.int64), length + seq
    return np.stack(produced, axis=1)


def check_generation(
    session: Any, model: torch.nn.Module, kwargs: dict[str, Any], new_tokens: int
) -> tuple[bool, str]:
    """Greedy tokens of the ONNX file against ``model.generate`` on the traced prompt;
    ``(same, words)``. ``generate`` may stop early at the end-of-sequence token; the tokens
    it gave must then be the file's first ones."""
    prompt = kwargs.get("input_ids")
    if not isinstance(prompt, torch.Tensor):
        return False, "not checked: the model takes no input_ids"
    try:
        got = greedy_onnx(session, prompt.numpy(), new_tokens)
    except Exception as exc:  # the file cannot run a generation loop: say why
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return False, f"the ONNX loop failed: {type(exc).__name__}: {first[:300]}"
    with torch.no_grad():
        reference = model.generate(
            input_ids=prompt,
            attention_mask=torch.ones_like(prompt),
            max_new_tokens=new_tokens,
            do_sample=False,
        )[:, prompt.shape[1] :].numpy()
    same = bool(np.array_equal(got[:, : reference.shape[1]], reference))
    steps = reference.shape[1]
    if same:
        return True, (
            f"{steps} greedy tokens x batch {prompt.shape[0]} from the ONNX file fed its own "
            f"cache equal model.generate(do_sample=False)"
        )
    first = int(np.argmax((got[:, :steps] != reference).any(axis=0)))
    return False, (
        f"the ONNX loop differs from model.generate(do_sample=False) from new token {first} "
        f"(onnx {got[:, first].tolist()}, generate {reference[:, first].tolist()})"
    )
