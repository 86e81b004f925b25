"""Animations of any env with ``render_rgb``: frames of a rollout, and GIF export.

>>> from alem.render import render_gif
>>> render_gif("mpe/simple_spread-v0", "spread.gif", num_steps=50, seed=0)  # doctest: +SKIP

From the shell, with random play or a trained run's actor (``python -m alem.train``'s run
directory; feed-forward or recurrent)::

    python -m alem.render smax_2s3z-v0 battle.gif --run outputs/<run> --steps 120 --greedy

:func:`rollout_frames` steps one env (jitted ``reset``/``step``, a fresh episode when one
ends) and renders every state on the host; :func:`save_gif` writes frames with Pillow
(``pip install pillow``), imported only when a GIF is written.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from alem.core import MultiAgentEnv, TimeStep
from alem.errors import DependencyNotInstalled, EnvArgumentError
from alem.rollout import random_actions

__all__ = ["rollout_frames", "save_gif", "render_gif", "main"]

#: ``policy(key, timestep) -> actions`` for one (unbatched) env.
PolicyFn = Callable[[jax.Array, TimeStep], Any]


def rollout_frames(
    env: MultiAgentEnv,
    key: jax.Array,
    num_steps: int,
    params: Any = None,
    policy: PolicyFn | None = None,
) -> list[np.ndarray]:
    """``num_steps + 1`` RGB frames (uint8 ``[H, W, 3]``): the reset state, then one per step.

    ``policy(key, ts)`` returns the actions after timestep ``ts`` (default: uniform random legal
    actions); a policy with a ``reset()`` method (a recurrent one, e.g.
    :class:`alem.algos.checkpoint_player.TrainedActor`) has it called at every episode start.
    Every frame after the first is the state a step made, so an episode's last frame is its
    terminal state (the winning move, a one-shot game's joint action); the next step starts
    from a fresh reset, which is not shown.
    """
    if int(num_steps) < 0:
        raise EnvArgumentError(f"rollout_frames: num_steps must be >= 0, got {num_steps}")
    params = env.default_params if params is None else params
    act = policy if policy is not None else (lambda k, ts: random_actions(env, k, ts))
    reset = jax.jit(env.reset)
    step = jax.jit(env.step)
    key, k0 = jax.random.split(key)
    new_episode = getattr(policy, "reset", lambda: None)
    state, ts = reset(k0, params)
    new_episode()
    frames = [_frame(env, state, params)]
    for _ in range(int(num_steps)):
        if bool(ts.done):
            key, k_reset = jax.random.split(key)
            state, ts = reset(k_reset, params)
            new_episode()
        key, k_act, k_step = jax.random.split(key, 3)
        state, ts = step(k_step, state, act(k_act, ts), params)
        frames.append(_frame(env, state, params))
    return frames


def _frame(env: MultiAgentEnv, state: Any, params: Any) -> np.ndarray:
    img = np.asarray(env.render_rgb(jax.device_get(state), params))
    if img.ndim != 3 or img.shape[-1] != 3:
        raise ValueError(f"{env.id}.render_rgb must return [H, W, 3], got shape {img.shape}")
    return img.astype(np.uint8, copy=False)


def save_gif(frames: Sequence[np.ndarray], path: str | Path, fps: float = 10.0, loop: int = 0) -> Path:
    """Write uint8 ``[H, W, 3]`` frames to an animated GIF at ``path`` (needs Pillow)."""
    try:
        from PIL import Image
    except ImportError:
        raise DependencyNotInstalled(
            "writing GIFs needs Pillow; install it with: pip install 'alem[render]' (or pip install pillow)"
        ) from None
    if not frames:
        raise EnvArgumentError("save_gif: no frames to write")
    if fps <= 0:
        raise EnvArgumentError(f"save_gif: fps must be > 0, got {fps}")
    shapes = {np.shape(f) for f in frames}
    if len(shapes) != 1:
        raise EnvArgumentError(f"save_gif: frames must share one shape, got {sorted(shapes)}")
    images = [Image.fromarray(np.asarray(f, dtype=np.uint8)) for f in frames]
    path = Path(path)
    images[0].save(
        path,
        save_all=True,
        append_images=images[1:],
        duration=max(int(round(1000.0 / fps)), 1),
        loop=loop,
        optimize=False,
    )
    return path


def render_gif(
    env_or_id: MultiAgentEnv | str,
    path: str | Path,
    num_steps: int = 50,
    seed: int = 0,
    fps: float = 10.0,
    params: Any = None,
    policy: PolicyFn | None = None,
    **make_kwargs: Any,
) -> Path:
    """One call: make the env (if given an id), roll it out with ``policy`` (random by default)
    for ``num_steps`` steps from ``seed``, and write the GIF to ``path``; returns the path."""
    if isinstance(env_or_id, str):
        import alem

        env = alem.make(env_or_id, **make_kwargs)
    else:
        if make_kwargs:
            raise EnvArgumentError(
                f"render_gif: keyword arguments {sorted(make_kwargs)} need an env id, not an env"
            )
        env = env_or_id
    frames = rollout_frames(env, jax.random.key(seed), num_steps, params=params, policy=policy)
    return save_gif(frames, path, fps=fps)


def main(argv: Sequence[str] | None = None) -> Path:
    """``python -m alem.render ENV_ID OUT.gif [--run DIR] [--seed-index I] [--greedy] ...``."""
    import alem
    from alem.cli import ArgumentParser, refuse_bad_args, refuse_unwritable

    p = ArgumentParser(prog="python -m alem.render", description="Write a GIF of an env's rollout.")
    p.add_argument("env_id", help="a registered id (alem.registry())")
    p.add_argument("out", type=Path, help="the GIF to write (refused if it exists)")
    p.add_argument("--steps", type=int, default=100, help="env steps (frames: steps + 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fps", type=float, default=10.0)
    p.add_argument("--run", type=Path, help="a `python -m alem.train` run directory: play its trained actor")
    p.add_argument("--seed-index", type=int, help="which of the run's seeds plays (default 0)")
    p.add_argument("--greedy", action="store_true", help="the actor's most likely action (default: sampled)")
    args = p.parse_args(argv)
    if args.out.suffix.lower() != ".gif":
        p.error(f"argument out: the file must end in .gif, got {args.out}")
    if args.out.exists():
        p.error(f"{args.out} exists; choose another path (a GIF is never overwritten)")
    refuse_unwritable(p, args.out)
    if args.run is None:  # options that only a trained actor reads would be ignored
        for option, given in (("--seed-index", args.seed_index is not None), ("--greedy", args.greedy)):
            if given:
                p.error(f"argument {option}: is read with --run <train run dir> only")
    seed_index = 0 if args.seed_index is None else args.seed_index
    refuse_bad_args(
        p,
        [
            ("--steps", args.steps, args.steps >= 1, "an integer >= 1"),
            ("--seed", args.seed, 0 <= args.seed < 2**32, "an integer in [0, 2**32 - 1]"),
            ("--fps", args.fps, math.isfinite(args.fps) and args.fps > 0, "a number > 0"),
            ("--seed-index", seed_index, seed_index >= 0, "an integer >= 0"),
        ],
    )
    try:
        env = alem.make(args.env_id)
        policy = None
        if args.run is not None:
            from alem.algos.checkpoint_player import TrainedActor

            policy = TrainedActor(args.run, env, seed_index, greedy=args.greedy)
        path = render_gif(env, args.out, num_steps=args.steps, seed=args.seed, fps=args.fps, policy=policy)
    except alem.AlemError as e:
        p.error(str(e))
    print(f"GIF written to {path}")
    return path


if __name__ == "__main__":
    main()
