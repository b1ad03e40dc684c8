"""Reading documents: format detection, decoding, page-by-page text, chunks with page numbers."""

from app.documents.chunking import Chunk, chunk_pages
from app.documents.formats import EXTENSIONS, Format
from app.documents.parse import DocumentError, PageText, ParsedDocument, open_document

__all__ = [
    "EXTENSIONS",
    "Chunk",
    "DocumentError",
    "Format",
    "PageText",
    "ParsedDocument",
    "chunk_pages",
    "open_document",
]
