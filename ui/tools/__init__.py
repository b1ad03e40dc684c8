"""Run from the command line, not from the window: the installed app's smoke test
(`docent --smoke-test`) and the README's screenshots (`make screenshots`)."""
