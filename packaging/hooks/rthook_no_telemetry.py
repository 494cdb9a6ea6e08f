"""PyInstaller runtime hook: runs in the frozen app before any of Memex's code.

onnxruntime (1.32 on Linux) records a telemetry event -- a device id, OS, CPU, container and
executable path -- in ~/.cache/Microsoft/DeveloperTools/.onnxruntime/ for upload, unless
ORT_DISABLE_TELEMETRY is set before it loads. Memex promises that nothing leaves the machine
with the local embedder, so the bundle sets it (a value the user set wins).
"""

import os

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
