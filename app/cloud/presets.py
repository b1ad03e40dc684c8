"""OpenAI-compatible providers a user is likely to add: the name and base URL each is reached at.

Settings → Cloud providers offers them in its "Add provider" menu; a preset only fills in the
form, so every value stays editable (a proxy, a server on another port)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProviderPreset:
    title: str  # as the menu shows it
    name: str  # the provider's short name in the settings (app.settings.NAME_PATTERN)
    base_url: str  # "" for Custom: the user types it
    local: bool = False  # a server on this computer: usually no key


PRESETS = (
    ProviderPreset("OpenAI", "openai", "https://api.openai.com/v1"),
    ProviderPreset("OpenRouter", "openrouter", "https://openrouter.ai/api/v1"),
    ProviderPreset("DeepSeek", "deepseek", "https://api.deepseek.com/v1"),
    ProviderPreset("Groq", "groq", "https://api.groq.com/openai/v1"),
    ProviderPreset("Mistral", "mistral", "https://api.mistral.ai/v1"),
    ProviderPreset("LM Studio (local server)", "lmstudio", "http://127.0.0.1:1234/v1", True),
    ProviderPreset("Ollama", "ollama", "http://127.0.0.1:11434/v1", True),
    ProviderPreset("llama.cpp server", "llamacpp", "http://127.0.0.1:8080/v1", True),
    ProviderPreset("Custom", "custom", ""),
)
