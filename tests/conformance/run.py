"""Run the MCP conformance suite's client scenarios against Docent's client; print a table.

    python -m tests.conformance.run [--scenario NAME ...] [--out DIR] [--jobs N]

Without --scenario, every client scenario `conformance list` names. Each scenario is one run of
`conformance client` (the npm package in tests/peers/node, on its local Node 22), whose scenario
servers are pinned to 127.0.0.1 by force-loopback.cjs. The grading it writes (checks.json) gives the
count of checks passed; the scenario passes when the CLI does (no failed or warning check, client
exit 0 unless the scenario expects an error). Exit status 0 only if every scenario that must pass
passed; a known failure counts only when it failed for its documented reason.

Without --out, the results go to a temporary folder that is deleted afterwards: the suite's own
files quote its (synthetic) credentials and tokens.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

REPO = Path(__file__).resolve().parents[2]
NODE_BIN = REPO / "tests" / "peers" / "node" / "node_modules" / ".bin"
CONFORMANCE = NODE_BIN / "conformance"
FORCE_LOOPBACK = REPO / "tests" / "peers" / "force-loopback.cjs"
# The CLI splits this on spaces and appends the server URL.
CLIENT_COMMAND = f"{sys.executable} -m tests.conformance.client"
SCENARIO_TIMEOUT_S = 90.0  # the CLI gives its client 30 s; the rest is its own start and stop


@dataclass(frozen=True, slots=True)
class KnownFailure:
    reason: str
    evidence: str  # what the client's stderr must say, so a failure for another cause still fails


KNOWN_FAILURES = {
    "auth/2025-03-26-oauth-metadata-backcompat": KnownFailure(
        reason="suite bug in conformance 0.1.16: its authorization server serves metadata at "
        "the root well-known URL with issuer <origin>/oauth, which RFC 8414 §3.3 forbids; mcp "
        "2.3.0 rightly rejects it (SEP-2468). Fixed upstream after 0.1.16 (conformance PR #359, "
        "#361).",
        evidence="Authorization server metadata issuer mismatch",
    ),
}


@dataclass(frozen=True, slots=True)
class Outcome:
    scenario: str
    passed: int
    total: int
    ok: bool
    result: str


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}"  # its Node 22 first
    env["NODE_OPTIONS"] = f"--require {FORCE_LOOPBACK}"
    return env


def client_scenarios() -> list[str]:
    """The client scenarios `conformance list` names, in its order."""
    listing = subprocess.run(
        [str(CONFORMANCE), "list"],
        env=environment(),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    _, _, client_part = listing.partition("Client scenarios")
    return re.findall(r"^\s*-\s+(\S+)", client_part, flags=re.MULTILINE)


class Runner:
    """Runs scenarios in parallel; every CLI gets its own process group so that it and the
    client it started can be stopped together."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self._running: set[subprocess.Popen[str]] = set()
        self._lock = threading.Lock()
        self._stopped = False

    def stop_all(self) -> None:
        with self._lock:
            self._stopped = True
            for process in self._running:
                kill_group(process)

    def run(self, scenario: str) -> Outcome:
        folder = self.out / scenario.replace("/", "__")
        command = [
            str(CONFORMANCE),
            "client",
            "--command",
            CLIENT_COMMAND,
            "--scenario",
            scenario,
            "-o",
            str(folder),
        ]
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env=environment(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        with self._lock:
            self._running.add(process)
            if self._stopped:  # started while everything was being stopped
                kill_group(process)
        try:
            _, cli_errors = process.communicate(timeout=SCENARIO_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            kill_group(process)
            process.communicate()
            return Outcome(scenario, 0, 0, False, f"FAIL: no result within {SCENARIO_TIMEOUT_S} s")
        finally:
            with self._lock:
                self._running.discard(process)
        return grade(scenario, folder, process.returncode, cli_errors)


def kill_group(process: subprocess.Popen[str]) -> None:
    """The CLI, its scenario servers and the client it started."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.killpg(process.pid, signal.SIGKILL)


def grade(scenario: str, folder: Path, returncode: int, cli_errors: str) -> Outcome:
    results = sorted(folder.rglob("checks.json"))
    if not results:
        reason = cli_errors.strip().splitlines()[-1:] or ["no output"]
        return Outcome(scenario, 0, 0, False, f"FAIL: no grading written ({reason[0]})")
    checks = json.loads(results[-1].read_text(encoding="utf-8"))
    statuses = [check.get("status") for check in checks]
    passed = statuses.count("SUCCESS")
    total = passed + statuses.count("FAILURE")
    if returncode == 0:
        return Outcome(scenario, passed, total, True, "pass")
    failed = [
        str(check.get("name")) for check in checks if check.get("status") in ("FAILURE", "WARNING")
    ]
    client_errors = results[-1].with_name("stderr.txt")
    said = client_errors.read_text(encoding="utf-8") if client_errors.exists() else ""
    known = KNOWN_FAILURES.get(scenario)
    if known is not None and known.evidence in said:
        return Outcome(scenario, passed, total, True, f"known failure: {known.reason}")
    why = ", ".join(failed) if failed else _last_line(said) or f"CLI exit {returncode}"
    return Outcome(scenario, passed, total, False, f"FAIL: {why}")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def table(outcomes: list[Outcome]) -> str:
    rows = ["| scenario | checks passed / total | result |", "|---|---|---|"]
    rows += [
        f"| {outcome.scenario} | {outcome.passed}/{outcome.total} | {outcome.result} |"
        for outcome in outcomes
    ]
    return "\n".join(rows)


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through `finally`, which stops the CLIs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.run", description=__doc__)
    parser.add_argument("--scenario", action="append", help="a client scenario (repeatable)")
    parser.add_argument("--out", type=Path, help="keep the suite's results in this folder")
    parser.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1))
    options = parser.parse_args(argv)
    if not CONFORMANCE.exists():
        print(f"{CONFORMANCE} is missing: run npm install in tests/peers/node", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _terminate)
    scenarios = options.scenario or client_scenarios()
    with tempfile.TemporaryDirectory(prefix="docent-conformance-") as scratch:
        runner = Runner(options.out or Path(scratch))
        pool = ThreadPoolExecutor(max_workers=max(1, options.jobs))
        try:
            outcomes = list(pool.map(runner.run, scenarios))
        finally:
            runner.stop_all()  # a no-op unless interrupted
            pool.shutdown(cancel_futures=True)
    print(table(outcomes))
    return 0 if all(outcome.ok for outcome in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
