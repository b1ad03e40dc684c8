"""Cloud routes over MCP: the gateway Docent ships, the client that reaches any MCP server."""
