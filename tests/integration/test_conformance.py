"""Docent's MCP client against the official conformance suite (`@modelcontextprotocol/conformance`,
npm): every scenario without OAuth, and representative OAuth flows, pass every check.

The whole list runs with `python -m tests.conformance.run`; this keeps to a sample that runs in
seconds."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

from tests.conformance.run import REPO

SCENARIOS = (
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "auth/metadata-default",
    "auth/token-endpoint-auth-basic",
    "auth/scope-step-up",
    "auth/pre-registration",
    "auth/client-credentials-basic",
)
ROW = re.compile(r"^\| (\S+) \| (\d+)/(\d+) \| (.+) \|$", re.MULTILINE)


def test_docent_passes_the_conformance_scenarios() -> None:
    command = [sys.executable, "-m", "tests.conformance.run"]
    for scenario in SCENARIOS:
        command += ["--scenario", scenario]
    process = subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        output, errors = process.communicate(timeout=100)
    finally:
        if process.poll() is None:  # timed out: the runner stops its CLIs on SIGTERM
            process.send_signal(signal.SIGTERM)
            process.communicate()
    rows = {
        name: (int(passed), int(total), result)
        for name, passed, total, result in ROW.findall(output)
    }
    assert sorted(rows) == sorted(SCENARIOS), output + errors
    for scenario, (passed, total, result) in rows.items():
        assert result == "pass", f"{scenario}: {result}"
        assert passed == total > 0, f"{scenario}: {passed}/{total}"
    assert process.returncode == 0, output + errors
