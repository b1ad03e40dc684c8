"""Docent's Qt-free core: every capability, usable from the CLI, the GUI, tests and MCP."""

import os

# The embedder and llama.cpp each load an OpenMP runtime (libgomp), which by default spins its
# idle threads for 300,000 rounds after every parallel region: after each query embedding they
# held a core for milliseconds, while SQLite's BM25 search ran beside them. 50,000 rounds costs
# the embedder and llama.cpp nothing measurable (17-20 ms per query, same decode tok/s) and cut
# hybrid search at 100k chunks from 12-13 to 8-10 ms p50. Read when each runtime loads, so here,
# before any native library; a value the user sets wins.
os.environ.setdefault("GOMP_SPINCOUNT", "50000")
