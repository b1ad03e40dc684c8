"""Commands that drive the whole app from outside the window: the installed app's smoke test
(`docent --smoke-test`), the GUI-stall and start-up bench (`docent bench gui`) with the start-up
probe it times, and the README's screenshots (`make screenshots`)."""
