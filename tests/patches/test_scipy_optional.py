"""SciPy is optional: without it patchport imports and traces, and asking for the SciPy
replacements is an ImportError naming the fix, raised before a session starts."""

from __future__ import annotations

import subprocess
import sys
import textwrap

WITHOUT_SCIPY = textwrap.dedent(
    """
    import sys
    sys.modules["scipy"] = None  # as if SciPy were not installed: importing it fails
    import numpy as np
    import patchport
    from patchport import annotate

    try:
        patchport.start("needs_scipy", patching=["scipy"])
    except ImportError as error:
        print("refused:", error)
    with patchport.session("plain"):
        x = annotate.input_tensors("n", {"x": np.arange(4.0)})
        annotate.output_tensors("n", {"y": np.sqrt(x) + 1.0})
    print("loaded:", sorted(m for m in sys.modules if m.startswith("patchport.patches.scipy")))
    """
)


def test_patchport_works_without_scipy_and_refuses_the_scipy_set_naming_the_fix() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_SCIPY], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("refused: patchport.patches.scipy needs SciPy >= 1.16")
    assert "pip install 'patchport[scipy]'" in lines[0]
    assert lines[1] == "loaded: []"  # the session ran; no half-imported SciPy set left
