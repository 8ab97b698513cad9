# The example runs its whole sandbox lifecycle against the live server and prints the same numbered steps as the
# TypeScript example (examples/guarded-tool.ts).
from __future__ import annotations

import os
import re
import subprocess
import sys

from .conftest import REPOSITORY_ROOT

TYPESCRIPT_EXAMPLE = REPOSITORY_ROOT / "examples" / "guarded-tool.ts"
PYTHON_EXAMPLE = REPOSITORY_ROOT / "python" / "examples" / "guarded_tool.py"


def typescript_step_titles() -> list[str]:
    return re.findall(r"step\(\s*'([^']+)'", TYPESCRIPT_EXAMPLE.read_text(encoding="utf-8"))


def test_the_example_prints_the_typescript_steps(live_server):
    environment = {**os.environ, "SVC_API_KEY": live_server["sandbox_key"], "SVC_GATEWAY_URL": live_server["base_url"], "PYTHONPATH": str(REPOSITORY_ROOT / "python")}
    completed = subprocess.run([sys.executable, "-B", str(PYTHON_EXAMPLE)], capture_output=True, text=True, env=environment, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    titles = re.findall(r"^\d+\. (.+)$", completed.stdout, re.MULTILINE)
    assert len(typescript_step_titles()) == 9
    assert titles == typescript_step_titles()
    assert "402 challenge: pay" in completed.stdout
    assert "signature valid, chain matches" in completed.stdout
    assert completed.stdout.rstrip().endswith("ledger verified")


def test_the_example_asks_for_a_key():
    environment = {key: value for key, value in os.environ.items() if key != "SVC_API_KEY"}
    environment["PYTHONPATH"] = str(REPOSITORY_ROOT / "python")
    completed = subprocess.run([sys.executable, "-B", str(PYTHON_EXAMPLE)], capture_output=True, text=True, env=environment, timeout=60, check=False)
    assert completed.returncode == 2 and "Set SVC_API_KEY" in completed.stderr
