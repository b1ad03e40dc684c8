"""`docent bench …` and `docent eval`: each suite measures Docent beside a baseline run in the same
process and reports ratios (common.py holds what they share; run.py picks and prints a suite)."""
