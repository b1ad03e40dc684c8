"""The `docent` command end to end, as a user runs it (a real process each time)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import docent
from tests.documents import write_encrypted_pdf, write_pdf


def test_index_ask_docs_remove(tmp_path: Path) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    locked = write_encrypted_pdf(tmp_path / "locked.pdf")

    indexed = docent("index", str(report), str(locked))
    assert indexed.returncode == 0, indexed.stderr  # one file failed, not all
    assert f"indexed {report}: 4 pages, 4 chunks" in indexed.stderr
    assert f"error: {locked}: encrypted: it needs a password" in indexed.stderr
    assert "embedded 4 chunks" in indexed.stderr
    assert "1 indexed, 0 unchanged, 1 failed" in indexed.stderr

    listed = docent("docs", "--json")
    (document,) = json.loads(listed.stdout)
    assert (document["name"], document["pages"], document["embedded"]) == ("report.pdf", 4, 4)

    asked = docent("ask", "--json", "--doc", "report.pdf", "How long are invoices kept?")
    assert asked.returncode == 0, asked.stderr
    result = json.loads(asked.stdout)
    assert result["route"]["route"] == "local"
    assert "seven" in result["answer"].lower() or "7" in result["answer"]
    assert result["citations"][0]["page"] == 2
    # The sentence the citation check tied to the page ends in that source's marker, as the
    # window shows it (the model wrote none itself).
    assert f" [{result['citations'][0]['number']}]" in result["answer"]
    assert result["citations"][0]["where"] == (
        "report.pdf, p. 1 (page 2 of the file) — Section 3: Retention"
    )
    assert result["metrics"]["ttft_s"] > 0
    assert result["metrics"]["cost_usd"] == 0

    streamed = docent("ask", "What protects personal data?")
    assert streamed.returncode == 0, streamed.stderr
    answer, _, rest = streamed.stdout.partition("\n\nSources:\n")
    assert "AES" in answer or "encrypt" in answer.lower()
    assert "[1] report.pdf, p. 2 (page 3 of the file) — Section 4: Privacy" in rest
    assert rest.strip().splitlines()[-1].startswith("route: local (qwen2.5-coder-0.5b) · why: ")

    unanswered = docent("ask", "--json", "What is the capital of Australia?")
    assert unanswered.returncode == 0, unanswered.stderr
    declined = json.loads(unanswered.stdout)
    assert declined["unsupported_draft"]  # the model's guess from memory, not the answer
    assert declined["answer"].startswith("The documents do not seem to answer this: ")
    assert declined["citations"] == []

    removed = docent("remove", "report.pdf")
    assert removed.returncode == 0
    assert json.loads(docent("docs", "--json").stdout) == []
    # The answer above quoted it: said, and deleted only when asked.
    quoting = re.search(r"(\d+) recorded answers quote them: `--forget-answers`", removed.stdout)
    assert quoting is not None, removed.stdout
    assert int(quoting[1]) == len(json.loads(docent("history", "--json").stdout))  # all kept


def test_index_fails_only_when_every_file_failed(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    result = docent("index", str(empty), str(tmp_path / "missing.pdf"))
    assert result.returncode == 1
    assert f"error: {empty}: empty file (0 bytes)" in result.stderr
    assert "no such file or folder" in result.stderr


def test_asking_an_empty_library_says_so(tmp_path: Path) -> None:
    result = docent("ask", "anything?")
    assert result.returncode == 1
    assert "No documents are indexed yet" in result.stderr


def test_unknown_document_in_scope_is_a_usage_error(tmp_path: Path) -> None:
    result = docent("ask", "--doc", "nope.pdf", "anything?")
    assert result.returncode == 2
    assert "no indexed document matches 'nope.pdf'" in result.stderr
