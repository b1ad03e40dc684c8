"""A child process for tests that must kill or measure indexing: prints one line per event
(outcomes as JSON, with the reason or note).

python -m tests.integration.index_worker DATABASE FILE...
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
from pathlib import Path

from app.documents.reader import DocumentReader, ReadLimits
from app.index import Library
from app.intake import FileFailed, FileIndexed, FileSkipped, Intake, PagesParsed
from app.settings import LibrarySettings


async def main(database: Path, files: list[Path]) -> None:
    library = Library(database, None)
    await library.open()
    reader = DocumentReader(ReadLimits.from_settings(LibrarySettings()))
    intake = Intake(library, reader)
    try:
        async for event in intake.index(files):
            if isinstance(event, PagesParsed):
                print(f"pages {event.path.name} {event.done}/{event.total}", flush=True)
            elif isinstance(event, FileIndexed | FileFailed | FileSkipped):
                print(f"{type(event).__name__} {event.path.name}", flush=True)
                says = event.note if isinstance(event, FileIndexed) else event.reason
                outcome = {"path": str(event.path), "event": type(event).__name__, "says": says}
                print(f"outcome {json.dumps(outcome)}", flush=True)
    finally:
        await intake.close()
        await reader.close()
        await library.close()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reader_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the reader, ended
    print(f"reader_peak_rss_mib {reader_kib / 1024:.1f}", flush=True)
    print(f"peak_rss_mib {peak_kib / 1024:.1f}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]))
