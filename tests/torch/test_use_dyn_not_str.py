from collections import namedtuple

import torch

from patchport.torch import use_dyn_not_str

DYN = torch.export.Dim.DYNAMIC


def test_strings_become_dynamic_and_structure_is_kept():
    batch = torch.export.Dim("batch")
    Pair = namedtuple("Pair", "a b")
    spec = {
        "x": {0: "batch", 1: "seq"},
        "cache": [{0: "batch", 2: "past"}, ({0: batch}, None)],
        "pair": Pair({1: "d"}, 4),
    }
    out = use_dyn_not_str(spec)
    assert out["x"] == {0: DYN, 1: DYN}
    assert out["cache"][0] == {0: DYN, 2: DYN}
    assert isinstance(out["cache"][1], tuple) and out["cache"][1][0][0] is batch
    assert out["cache"][1][1] is None
    assert isinstance(out["pair"], Pair) and out["pair"].a == {1: DYN} and out["pair"].b == 4
    assert spec["x"] == {0: "batch", 1: "seq"}  # the input is not modified
