"""The LLM player: an LLM plays alem envs through their text hooks.

- :mod:`alem.text.llm.prompts`: chat prompts from ``rules_text`` / ``render_text`` / action names.
- :mod:`alem.text.llm.parsing`: structured (JSON schema) answers and a tolerant text parser.
- :mod:`alem.text.llm.chat`: the :class:`~alem.text.llm.chat.ChatBackend` interface and its ``Reply``.
- :mod:`alem.text.llm.openai`: the OpenAI-compatible HTTP backend (retries, limits, health check)
  and the checks of its request settings.
- :mod:`alem.text.llm.completions`: reading chat-completions reply bodies (malformed ones raise).
- :mod:`alem.text.llm.cache`: ``RequestCache``, replies on disk (read-write, replay, re-record).
- :mod:`alem.text.llm.scripted`: ``ScriptedBackend``, a stand-in without a model.
- :mod:`alem.text.llm.sanitize`: URLs without secrets, text UTF-8 can hold.
- :mod:`alem.text.llm.local_server`: the embedded llama.cpp server with SmolLM2-135M-Instruct.
- :mod:`alem.text.llm.testing`: ``FakeChatServer``, a local server with fault injection.
- :mod:`alem.text.llm.player`: ``LLMPlayer``, the ``"llm"`` player of ``python -m alem.evaluate``.
- :mod:`alem.text.llm.settings`: ``LLMSettings``, the player's options (frozen, checked when built).
- :mod:`alem.text.llm.seat`: what a text seat is shown and what an invalid reply plays, shared by
  the player and :class:`~alem.text.train.pool.TextEnvPool`.

The errors are in :mod:`alem.errors`; the async bridge and the decision counters in
:mod:`alem.engine`. Nothing here imports :mod:`alem.arena` or :mod:`alem.text.train`.
"""
