"""llama.cpp's OpenAI-compatible server as tests/peers/llama_server.py runs it, that also reports
its usage when it streams, as llama.cpp's own `llama-server` does: a last chunk with `usage`
(its `prompt_tokens_details.cached_tokens`: the prompt's leading tokens the KV cache already
held) and `timings.cache_n`. llama-cpp-python's server sends no usage when streaming, and the
C++ `llama-server` is not installable here; the counts are the real model's, from the prefix its
`Llama.generate` keeps (the "prefix-match hit" it logs)."""

from __future__ import annotations

import runpy
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from app.llm import native


def _counting(generate: Callable[..., Any]) -> Callable[..., Any]:
    def counted(self: Any, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Any:
        tokens = list(tokens)
        held = 0
        if self.n_tokens > 0 and kwargs.get("reset", True):
            held = self.longest_token_prefix(self._input_ids.tolist(), tokens)
            if held == len(tokens):
                held -= 1  # the last prompt token is evaluated again, for its logits
        self.docent_prompt = (len(tokens), held)
        return generate(self, tokens, *args, **kwargs)

    return counted


def _reporting(create: Callable[..., Any]) -> Callable[..., Any]:
    def created(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = create(self, *args, **kwargs)
        return _with_usage(self, result) if kwargs.get("stream") else result

    return created


def _with_usage(llama: Any, chunks: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    last: dict[str, Any] = {}
    completion = 0
    for chunk in chunks:
        last = chunk
        completion += sum(bool(c.get("delta", {}).get("content")) for c in chunk["choices"])
        yield chunk
    prompt, cached = llama.docent_prompt
    yield {
        "id": last.get("id", ""),
        "object": "chat.completion.chunk",
        "created": last.get("created", 0),
        "model": last.get("model", ""),
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
        "timings": {"cache_n": cached, "prompt_n": prompt - cached, "predicted_n": completion},
    }


if __name__ == "__main__":
    loaded = native.load()
    native.use_extra_buffers(loaded, not native.backend(loaded).has_amx)
    llama = loaded.Llama
    llama.generate = _counting(llama.generate)
    llama.create_chat_completion = _reporting(llama.create_chat_completion)
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
