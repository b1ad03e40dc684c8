"""Docent's Qt-free core: every capability, usable from the CLI, the GUI, tests and MCP."""
