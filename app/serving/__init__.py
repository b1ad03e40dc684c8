"""Docent as an MCP server: the local library (search, read a page, ask) for other MCP clients."""
