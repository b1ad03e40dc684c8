"""The local route: a llama.cpp model owned by one worker thread.

Only one thread may use a `Llama` object, so every call to it runs on the engine's SerialWorker;
concurrent questions queue there in order. Tokens cross to the event loop through
`call_soon_threadsafe` into an asyncio queue. The prompt is evaluated in slices and generation
checks the cancel token before every token, so Stop takes effect within one slice or one token.
The system prompt comes first and never changes, so llama.cpp's prefix reuse keeps its KV cache.
"""

from __future__ import annotations

import codecs
import os
import re
import secrets
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.llm.engine import (
    CancelToken,
    EngineError,
    GenerationDone,
    GenerationEvent,
    GenerationRequest,
    Message,
    PromptEvaluated,
    Queued,
    TokenGenerated,
)
from app.workers import Emitter, SerialWorker

PREFILL_SLICE = 128  # prompt tokens evaluated between two looks at the cancel token
_FALLBACK_TEMPLATE = (  # ChatML, for GGUF files that carry no chat template
    "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


# llama-cpp-python silences a model's loading by pointing file descriptors 1 and 2 at /dev/null
# and back: two engines loading at once (the first-run speed check beside the answering model)
# could "restore" /dev/null, and the process's stdout and stderr were lost for good.
_LOADING = threading.Lock()


@dataclass(frozen=True, slots=True)
class LocalModelConfig:
    name: str  # shown on the badge
    path: Path
    n_ctx: int = 4096
    n_threads: int | None = None
    n_gpu_layers: int = 0
    # Fixed, non-zero (llama-cpp-python treats 0 as "random"): the same question over the same
    # sources gets the same answer, which users expect and tests need.
    seed: int = 1234

    @property
    def threads(self) -> int:
        # llama-cpp-python decodes on half the CPUs by default; all cores decode faster here.
        return self.n_threads or max(1, os.cpu_count() or 1)


class LocalEngine:
    route = "local"

    def __init__(self, config: LocalModelConfig) -> None:
        self.config = config
        self.model = config.name
        self._worker = SerialWorker("llm")
        # One llama.cpp context answers one request at a time; later ones queue (FIFO) and are
        # told how many are ahead. Parallel sequences would share the same 2-8 cores: no faster
        # in total, and every answer would start later.
        self._requests = 0
        self._llama: Any = None
        self._format: Callable[..., Any] | None = None
        self._stop_tokens: set[int] = set()

    async def start(self) -> None:
        """Load the model on its thread (mmap: about a second for the bundled 0.5B model)."""
        await self._worker.run(self._load)

    def _load(self) -> None:
        from llama_cpp import Llama

        if not self.config.path.is_file():
            raise EngineError(f"model file {self.config.path} does not exist")
        try:
            with _LOADING:
                llama = Llama(
                    model_path=str(self.config.path),
                    n_ctx=self.config.n_ctx,
                    n_threads=self.config.threads,
                    n_threads_batch=self.config.threads,
                    n_gpu_layers=self.config.n_gpu_layers,
                    seed=self.config.seed,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as error:
            raise EngineError(
                f"cannot load model {self.config.path.name}: not a valid GGUF file "
                f"or too large for this machine ({error})"
            ) from None
        self._format = chat_formatter(llama)
        self._llama = llama

    async def close(self) -> None:
        await self._worker.run(self._unload)
        self._worker.shutdown()

    def _unload(self) -> None:
        # Close explicitly: a Llama left to the garbage collector at exit can crash the interpreter.
        if self._llama is not None:
            self._llama.close()
            self._llama = None

    async def stream(
        self, request: GenerationRequest, cancel: CancelToken
    ) -> AsyncIterator[GenerationEvent]:
        def produce(emit: Emitter[GenerationEvent]) -> None:
            for event in self._generate(request, cancel):
                emit(event)

        ahead = self._requests
        self._requests += 1
        try:
            if ahead:
                yield Queued(ahead)
            async for event in self._worker.stream(produce):
                yield event
        finally:
            self._requests -= 1

    def _generate(
        self, request: GenerationRequest, cancel: CancelToken
    ) -> Iterator[GenerationEvent]:
        import llama_cpp

        llama = self._llama
        if llama is None or self._format is None:
            raise EngineError("the local model is not loaded")
        prompt = prompt_tokens(llama, self._format, request.messages)
        budget = self.config.n_ctx - len(prompt)
        if budget < 16:
            raise EngineError(
                f"the prompt ({len(prompt)} tokens) does not fit the model's context "
                f"({self.config.n_ctx} tokens): raise n_ctx or lower the source budget"
            )
        yield PromptEvaluated(len(prompt))
        sampling = {"temp": request.temperature, "top_k": 40, "top_p": 0.95, "repeat_penalty": 1.1}
        done = GenerationDone(len(prompt), 0, "cancelled", None, None)

        # Prefill in slices, after the KV prefix the previous request left (a shared system
        # prompt). eval() only decodes: slicing through generate() also sampled a token per slice
        # (+45..+222 ms TTFT against llama-cpp-python in `bench overhead`). The last prompt token
        # is always evaluated here, so the logits generate() samples first are this prompt's.
        cached = min(_common_prefix(llama, prompt), len(prompt) - 1)
        llama.n_tokens = cached  # eval() drops the KV cache from here on
        for start in range(cached, len(prompt), PREFILL_SLICE):
            if cancel.is_cancelled():
                yield done
                return
            llama.eval(prompt[start : start + PREFILL_SLICE])

        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        vocab = llama._model.vocab
        count = 0
        first_at: float | None = None
        last_at: float | None = None
        reason: str = "length"
        max_tokens = min(request.max_tokens, budget)
        if cancel.is_cancelled():
            yield done
            return
        for token in llama.generate(prompt, **sampling):
            if cancel.is_cancelled():
                reason = "cancelled"
                break
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                reason = "stop"
                break
            count += 1
            last_at = time.perf_counter()
            first_at = first_at or last_at
            text = decoder.decode(llama.detokenize([token]))
            if text:
                yield TokenGenerated(text)
            if count >= max_tokens:
                break
        if tail := decoder.decode(b"", final=True):
            yield TokenGenerated(tail)
        yield GenerationDone(len(prompt), count, reason, first_at, last_at, 0.0, cached)  # type: ignore[arg-type]


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
