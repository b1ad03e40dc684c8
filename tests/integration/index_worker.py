"""A child process for tests that must kill or measure indexing: prints one line per event.

python -m tests.integration.index_worker DATABASE FILE...
"""

from __future__ import annotations

import asyncio
import resource
import sys
from pathlib import Path

from app.index import Library
from app.ingest import FileFailed, FileIndexed, Ingestor, PagesParsed


async def main(database: Path, files: list[Path]) -> None:
    library = Library(database, None)
    await library.open()
    try:
        async for event in Ingestor(library).index(files):
            if isinstance(event, PagesParsed):
                print(f"pages {event.path.name} {event.done}/{event.total}", flush=True)
            elif isinstance(event, FileIndexed | FileFailed):
                print(f"{type(event).__name__} {event.path.name}", flush=True)
    finally:
        await library.close()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak_rss_mib {peak_kib / 1024:.1f}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]))
