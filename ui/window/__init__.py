"""The main window and what frames it: the conversation list, the session panel, the
first-run screen and the window's saved state."""
