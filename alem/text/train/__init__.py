"""Tools for training LLMs on alem envs (SPIRAL- and MARS-style self-play, SFT data).

- :mod:`alem.text.train.pool`: ``TextEnvPool``, N envs in lock-step as chat prompts and replies;
  :mod:`alem.text.train.turns`: the records it hands out (turns, decisions, episodes).
- :mod:`alem.text.train.advantages`: GRPO, SPIRAL's role-conditioned and turn-level advantages.
- :mod:`alem.text.train.export`: trajectories as chat-format JSONL (arena runs, scripted
  experts); ``python -m alem.text.train.export``.
- :mod:`alem.text.train.adapters`: rollouts through any chat backend, a TRL-style one-move reward.
- :mod:`alem.text.train.grpo`: GRPO's game side without torch (opponents, seeds, groups,
  summaries); :mod:`alem.text.train.lora_policy`: a LoRA chat model in torch and its update;
  :mod:`alem.text.train.grpo_demo`: the two as a small GRPO run (``python -m
  alem.text.train.grpo_demo``, the ``llmtrain`` extra).

These sit above the player (:mod:`alem.text.llm`) and the arena, which they use.
"""
