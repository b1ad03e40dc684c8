"""Settings: the dialog, the cloud routes and keys, the model manager, and serving the
library over MCP."""
