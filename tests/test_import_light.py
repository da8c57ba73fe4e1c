import subprocess
import sys

HEAVY = ["torch.export", "torch._dynamo", "onnx", "onnxruntime", "transformers", "cv2", "scipy"]


def test_import_patchport_stays_light():
    code = (
        "import sys, patchport; patchport.PatchInfo; patchport.PatchDetails;"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
