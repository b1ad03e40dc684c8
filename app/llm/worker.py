"""The local model's child process: llama.cpp runs here, never in the app's process.

`python -I -m app.llm.worker` reads one JSON request per line on stdin and answers with JSON lines
on stdout (`app.processes.open_channel`). The app's side, `app.llm.local`, restarts it after a
crash and chooses the settings it loads with; here a model only has to load and generate:

    {"op": "load", "path": …, "n_ctx": …, "threads": …, "gpu_layers": …, "seed": …,
     "extra_buffers": …}                        -> loaded {backend} | failed {reason}
    {"op": "generate", "id": n, "messages": [[role, content], …], "max_tokens": …,
     "temperature": …}                          -> prompt, prefill…, token…, done | failed
    {"op": "cancel", "id": n}                   -> the generation ends with done (cancelled)
    {"op": "probe"}                             -> backend {backend}: what would run a model

Only one thread uses the `Llama` object (the main one); a second thread reads stdin, so a cancel
arrives while a generation runs. The prompt is evaluated in slices and generation checks the
cancel flag before every token. The system prompt comes first and never changes, so the KV
cache of a shared prefix (a system prompt, a conversation's earlier turns) is reused.

Fault injection, for tests of the supervision: DOCENT_ENGINE_FAULT names a point where this
process crashes for real (an invalid memory access in native code) or hangs: `load` or
`first-token` (only while the app asks for llama.cpp's extra buffer types, as the AMX repacking
defect strikes: the safe settings take them off), `mid-answer` (after a few tokens), `hang`
(stops answering mid-answer). `POINT@FILE` fires only while FILE exists, and removes it: once.
"""

from __future__ import annotations

import codecs
import ctypes
import os
import queue
import re
import secrets
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from app.llm import native
from app.llm.engine import EngineError, Message
from app.processes import open_channel

PREFILL_SLICE = 128  # prompt tokens evaluated between two looks at the cancel flag
_FALLBACK_TEMPLATE = (  # ChatML, for GGUF files that carry no chat template
    "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
MID_ANSWER_TOKENS = 3  # where a `mid-answer` or `hang` fault strikes

Send = Callable[[dict[str, Any]], None]


def main() -> int:
    send = open_channel()
    inbox = _Inbox()
    model: _Model | None = None
    for request in inbox:
        try:
            if request["op"] == "load":
                model = _Model.load(request)
                send({"event": "loaded", "backend": model.backend})
            elif request["op"] == "probe":
                found = native.backend(native.load())
                send({"event": "backend", "backend": _backend(found, not found.has_amx)})
            elif model is None:
                send({"event": "failed", "reason": "the local model is not loaded"})
            else:
                model.generate(request, inbox.cancelled(request["id"]), send)
        except EngineError as error:
            send({"event": "failed", "reason": str(error)})
        except Exception as error:  # llama-cpp-python's own (a failed decode): that request's
            reason = str(error) or type(error).__name__
            send({"event": "failed", "reason": f"llama.cpp failed: {reason}"})
    if model is not None:
        model.close()  # a Llama left to the garbage collector at exit can crash the interpreter
    return 0


class _Inbox:
    """The requests, in order; cancels are taken out as they arrive (a generation is running)."""

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
        self._cancelled: set[int] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, name="requests", daemon=True).start()

    def _read(self) -> None:
        import json

        for line in sys.stdin:
            request = json.loads(line)
            if request["op"] == "cancel":
                with self._lock:
                    self._cancelled.add(request["id"])
            else:
                self._requests.put(request)
        self._requests.put(None)  # the app closed our input: finish

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._requests.get, None)

    def cancelled(self, request_id: int) -> Callable[[], bool]:
        def check() -> bool:
            with self._lock:
                return request_id in self._cancelled

        return check


class _Model:
    def __init__(self, llama: Any, backend: dict[str, Any], asked_extra_buffers: bool) -> None:
        self.llama = llama
        self.backend = backend
        self.asked_extra_buffers = asked_extra_buffers
        self.format = chat_formatter(llama)

    @classmethod
    def load(cls, request: dict[str, Any]) -> _Model:
        llama_cpp = native.load()
        from llama_cpp import Llama

        path = Path(request["path"])
        if not path.is_file():
            raise EngineError(f"model file {path} does not exist")
        asked = bool(request["extra_buffers"])
        found = native.backend(llama_cpp)
        extra_buffers = asked and not found.has_amx
        native.use_extra_buffers(llama_cpp, extra_buffers)
        if asked:
            _fault("load")
        try:
            llama = Llama(
                model_path=str(path),
                n_ctx=request["n_ctx"],
                n_threads=request["threads"],
                n_threads_batch=request["threads"],
                n_gpu_layers=request["gpu_layers"],
                seed=request["seed"],
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as error:
            raise EngineError(
                f"cannot load model {path.name}: not a valid GGUF file "
                f"or too large for this machine ({error})"
            ) from None
        return cls(llama, _backend(found, extra_buffers), asked)

    def close(self) -> None:
        self.llama.close()

    def generate(self, request: dict[str, Any], cancelled: Callable[[], bool], send: Send) -> None:
        import llama_cpp

        llama = self.llama
        messages = [Message(role, content) for role, content in request["messages"]]
        prompt = prompt_tokens(llama, self.format, messages)
        budget = llama.n_ctx() - len(prompt)
        if budget < 16:
            raise EngineError(
                f"the prompt ({len(prompt)} tokens) does not fit the model's context "
                f"({llama.n_ctx()} tokens): raise n_ctx or lower the source budget"
            )
        # Prefill in slices, after the KV prefix the previous request left (a shared system
        # prompt). eval() only decodes: slicing through generate() also sampled a token per slice
        # (+45..+222 ms TTFT against llama-cpp-python in `bench overhead`). The last prompt token
        # is always evaluated here, so the logits generate() samples first are this prompt's.
        cached = min(_common_prefix(llama, prompt), len(prompt) - 1)
        send({"event": "prompt", "tokens": len(prompt), "cached": cached})
        llama.n_tokens = cached  # eval() drops the KV cache from here on
        for start in range(cached, len(prompt), PREFILL_SLICE):
            if cancelled():
                send(_done(len(prompt), 0, "cancelled", cached))
                return
            llama.eval(prompt[start : start + PREFILL_SLICE])
            send({"event": "prefill", "done": min(start + PREFILL_SLICE, len(prompt))})
        if self.asked_extra_buffers:
            _fault("first-token")

        sampling = {
            "temp": request["temperature"],
            "top_k": 40,
            "top_p": 0.95,
            "repeat_penalty": 1.1,
        }
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        vocab = llama._model.vocab
        count, reason = 0, "length"
        max_tokens = min(request["max_tokens"], budget)
        if cancelled():
            send(_done(len(prompt), 0, "cancelled", cached))
            return
        for token in llama.generate(prompt, **sampling):
            if cancelled():
                reason = "cancelled"
                break
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                reason = "stop"
                break
            count += 1
            if count == MID_ANSWER_TOKENS:
                _fault("mid-answer")
                _fault("hang")
            if text := decoder.decode(llama.detokenize([token])):
                send({"event": "token", "text": text})
            if count >= max_tokens:
                break
        if tail := decoder.decode(b"", final=True):
            send({"event": "token", "text": tail})
        send(_done(len(prompt), count, reason, cached))


def _backend(found: native.Backend, extra_buffers: bool) -> dict[str, Any]:
    return {
        "variant": found.variant,
        "features": list(found.features),
        "gpu": found.gpu,
        "extra_buffers": extra_buffers,
    }


def _done(prompt: int, completion: int, reason: str, cached: int) -> dict[str, Any]:
    return {
        "event": "done",
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "finish_reason": reason,
        "cached_tokens": cached,
    }


def _fault(point: str) -> None:
    """Crash (or hang) here if DOCENT_ENGINE_FAULT names this point: see the module's doc."""
    wanted, _, once = os.environ.get("DOCENT_ENGINE_FAULT", "").partition("@")
    if wanted != point:
        return
    if once:
        try:
            os.remove(once)
        except FileNotFoundError:
            return
    if point == "hang":
        threading.Event().wait()
    ctypes.string_at(0)  # reads address 0: a segmentation fault in native code, like a real one


def chat_formatter(llama: Any) -> Callable[..., Any]:
    """The model's own chat template (ChatML when the GGUF file carries none)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llama.metadata.get("tokenizer.chat_template") or _FALLBACK_TEMPLATE
    eos, bos = llama.token_eos(), llama.token_bos()
    return Jinja2ChatFormatter(
        template=template,
        eos_token=llama._model.token_get_text(eos) if eos >= 0 else "",
        bos_token=llama._model.token_get_text(bos) if bos >= 0 else "",
    )


def prompt_tokens(llama: Any, format: Callable[..., Any], messages: Sequence[Message]) -> list[int]:
    """The prompt's tokens, where only the chat template's own markup may become control
    tokens: message contents (a document's text, a question) are tokenized as plain text, so
    `<|im_start|>system` in a PDF cannot open a turn of its own.

    The template is rendered around placeholders that no content can contain (a fresh random
    marker), then each piece is tokenized as what it is.
    """
    marker = f"\x00{secrets.token_hex(8)}:"
    placeholders = [
        {"role": m.role, "content": f"{marker}{number}\x00"} for number, m in enumerate(messages)
    ]
    pieces = re.split(f"{re.escape(marker)}(\\d+)\x00", format(messages=placeholders).prompt)
    tokens: list[int] = []
    for position, piece in enumerate(pieces):
        is_content = position % 2 == 1  # re.split puts each captured number between the pieces
        text = messages[int(piece)].content if is_content else piece
        if text:
            tokens += llama.tokenize(
                text.encode("utf-8"), add_bos=not tokens, special=not is_content
            )
    return tokens


def _common_prefix(llama: Any, prompt: list[int]) -> int:
    """How many leading prompt tokens are already in the KV cache from the previous request."""
    cached = list(llama._input_ids[: llama.n_tokens])
    length = 0
    for a, b in zip(cached, prompt, strict=False):
        if a != b:
            break
        length += 1
    return length


if __name__ == "__main__":
    sys.exit(main())
