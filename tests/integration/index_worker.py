"""A child process for tests that must kill or measure indexing: prints one line per event
(outcomes as JSON, with the reason or note).

python -m tests.integration.index_worker DATABASE FILE...
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from pathlib import Path

from app.documents.reader import DocumentReader, ReadLimits
from app.index import Library
from app.intake import FileFailed, FileIndexed, FileSkipped, FileStarted, Intake, PagesParsed
from app.settings import LibrarySettings


async def main(database: Path, files: list[Path]) -> None:
    library = Library(database, None)
    await library.open()
    reader = DocumentReader(ReadLimits.from_settings(LibrarySettings()))
    ocr_reader = DocumentReader(ReadLimits.for_ocr(LibrarySettings()), name="ocr")
    intake = Intake(library, reader, ocr_reader)
    started = time.monotonic()
    try:
        async for event in intake.index(files):
            if isinstance(event, FileStarted):
                started = time.monotonic()
            elif isinstance(event, PagesParsed):
                print(f"pages {event.path.name} {event.done}/{event.total}", flush=True)
            elif isinstance(event, FileIndexed | FileFailed | FileSkipped):
                print(f"{type(event).__name__} {event.path.name}", flush=True)
                says = event.note if isinstance(event, FileIndexed) else event.reason
                outcome = {
                    "path": str(event.path),
                    "event": type(event).__name__,
                    "says": says,
                    "seconds": time.monotonic() - started,
                }
                print(f"outcome {json.dumps(outcome)}", flush=True)
    finally:
        await intake.close()
        await reader.close()
        await ocr_reader.close()
        await library.close()
    # The largest of the readers (the OCR one only started if a scan was among the files).
    reader_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"reader_peak_rss_mib {reader_kib / 1024:.1f}", flush=True)
    print(f"peak_rss_mib {peak_kib() / 1024:.1f}", flush=True)


def peak_kib() -> int:
    """This process's peak RSS. Linux keeps ru_maxrss across exec, so there it would be the
    test runner's that started this process: the address space's own high-water mark instead."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]))
