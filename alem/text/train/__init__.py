"""Tools for training LLMs on alem envs (SPIRAL- and MARS-style self-play, SFT data).

- :mod:`alem.text.train.pool`: ``TextEnvPool``, N envs in lock-step as chat prompts and replies;
  :mod:`alem.text.train.turns`: the records it hands out (turns, decisions, episodes).
- :mod:`alem.text.train.advantages`: GRPO, SPIRAL's role-conditioned and turn-level advantages.
- :mod:`alem.text.train.export`: trajectories as chat-format JSONL (arena runs, scripted
  experts); ``python -m alem.text.train.export``.
- :mod:`alem.text.train.adapters`: rollouts through any chat backend, a TRL-style one-move reward.
- :mod:`alem.text.train.trl_env`: ``AlemRollout``, whole episodes as the multi-turn rollouts of
  TRL's ``GRPOTrainer`` (its ``rollout_func``; the ``llmtrain`` extra).
- :mod:`alem.text.train.verifiers_env`: any text game as a ``verifiers`` (v1) environment for
  ``vf-eval`` and prime-rl, plugin id ``alem_verifiers`` (the ``verifiers`` extra).
- :mod:`alem.text.train.grpo`: GRPO's game side without torch (opponents, seeds, groups,
  summaries). The repository's ``examples/grpo_demo.py`` (not in the wheel) trains a LoRA
  chat model in torch with them (``python -m examples.grpo_demo``, the ``llmtrain`` extra).

These sit above the player (:mod:`alem.text.llm`) and the arena, which they use.
"""
