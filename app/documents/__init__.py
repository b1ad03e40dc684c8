"""Reading documents: format detection, decoding, page-by-page text, chunks with page numbers."""

from app.documents.chunking import Chunk, chunk_pages
from app.documents.formats import EXTENSIONS, Format, is_document_name
from app.documents.parse import DocumentError, PageText, ParsedDocument, open_document

__all__ = [
    "EXTENSIONS",
    "Chunk",
    "DocumentError",
    "Format",
    "PageText",
    "ParsedDocument",
    "chunk_pages",
    "is_document_name",
    "open_document",
]
