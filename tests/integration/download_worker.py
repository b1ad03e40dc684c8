"""A child process for the download tests: downloads one model as another Docent process (a
second window, the CLI) would, printing a line per progress report and the path at the end.

python -m tests.integration.download_worker MODELS_DIR NAME FILE SIZE SHA256 URL
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from app.catalog import CatalogModel
from app.downloads import DownloadProgress, download


def report(progress: DownloadProgress) -> None:
    print(f"progress {progress.done} {int(progress.elsewhere)}", flush=True)


def main(models_dir: str, name: str, file: str, size: str, sha256: str, url: str) -> None:
    model = CatalogModel(
        name, name, "chat", file, int(size), sha256, "Apache-2.0", "test server", url, (), url=url
    )
    path = asyncio.run(download(model, Path(models_dir), report))
    print(f"downloaded {path}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
