"""The Benchmark window (window.py) and its charts (plots.py): `docent bench inference` measured
and plotted from the app."""
