"""The benchmarks' window side: the Benchmark window and its charts, the GUI-stall and start-up
benches (`docent bench gui`), and the start-up probe they time."""
