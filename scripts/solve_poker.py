"""Solve Kuhn poker (2 players) and Leduc hold'em with OpenSpiel's CFR+ and ship the tables.

Writes ``envs/games/data/kuhn_poker_cfr.json`` and ``envs/games/data/leduc_holdem_cfr.json``:
the CFR+ average strategy at every information state, keyed by alem's observation
of that information state (its bit string; the observation equals OpenSpiel's
``information_state_tensor``), with the exploitability measured by OpenSpiel and by
``alem.game_tree`` recorded in the metadata.

Needs ``open_spiel`` (``pip install open_spiel``); the envs and players do not.

    python scripts/solve_poker.py                      # both games, default iterations
    python scripts/solve_poker.py --games kuhn_poker --kuhn-iterations 20000
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import time
from pathlib import Path

import pyspiel

import alem
from alem import game_tree as ex
from alem.envs.games.poker import DATA_DIR, obs_key

GAMES = {
    # alem env id -> (OpenSpiel game, output file)
    "kuhn_poker": ("kuhn_poker-v0", "kuhn_poker", "kuhn_poker_cfr.json"),
    "leduc_holdem": ("leduc_holdem-v0", "leduc_poker", "leduc_holdem_cfr.json"),
}


def decision_states(game: pyspiel.Game) -> dict[str, pyspiel.State]:
    """One OpenSpiel state per information state (keyed by its info-state string)."""
    found: dict[str, pyspiel.State] = {}
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            found.setdefault(state.information_state_string(), state)
        for action in state.legal_actions():
            stack.append(state.child(action))
    return found


def solve(name: str, iterations: int, out_dir: Path) -> dict:
    env_id, spiel_name, filename = GAMES[name]
    game = pyspiel.load_game(spiel_name)
    solver = pyspiel.CFRPlusSolver(game)
    start = time.perf_counter()
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    seconds = time.perf_counter() - start
    average = solver.average_policy()
    spiel_expl = float(pyspiel.exploitability(game, average))

    env = alem.make(env_id)
    rows = []
    for state in decision_states(game).values():
        player = state.current_player()
        obs = state.information_state_tensor(player)
        probs = [0.0] * env.num_actions
        for action, p in average.get_state_policy(state):
            probs[action] = float(p)
        rows.append({"obs": obs_key(obs), "label": env.infoset_label(obs), "probs": probs})
    rows.sort(key=lambda r: r["obs"])
    table = {
        "format": "alem-poker-strategy-v1",
        "env_id": env_id,
        "env_kwargs": {"num_players": 2} if name == "kuhn_poker" else {},
        "actions": env.action_names(),
        "key": "observation bit string (alem observation = OpenSpiel information_state_tensor)",
        "solver": f"OpenSpiel CFRPlusSolver, average policy after {iterations} iterations",
        "open_spiel_game": spiel_name,
        "open_spiel_version": importlib.metadata.version("open_spiel"),
        "solve_seconds": round(seconds, 1),
        "exploitability_convention": "NashConv / 2 in chips per game (open_spiel exploitability.exploitability)",
        "exploitability_open_spiel": spiel_expl,
        "infosets": rows,
    }
    table["exploitability"] = ex.exploitability(env, table)
    out = out_dir / filename
    with open(out, "w") as f:
        # One information state per line keeps the file diffable.
        f.write("{\n")
        for k, v in table.items():
            if k != "infosets":
                f.write(f"  {json.dumps(k)}: {json.dumps(v)},\n")
        f.write('  "infosets": [\n')
        f.write(",\n".join("    " + json.dumps(r) for r in rows))
        f.write("\n  ]\n}\n")
    print(
        f"{name}: {len(rows)} information states, {iterations} CFR+ iterations in {seconds:.1f}s, "
        f"exploitability {table['exploitability']:.3g} (OpenSpiel: {spiel_expl:.3g}) -> {out}"
    )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", nargs="+", default=list(GAMES), choices=list(GAMES))
    parser.add_argument("--kuhn-iterations", type=int, default=100_000)
    parser.add_argument("--leduc-iterations", type=int, default=2_000)
    parser.add_argument("--out", type=Path, default=DATA_DIR)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.games:
        iterations = args.kuhn_iterations if name == "kuhn_poker" else args.leduc_iterations
        solve(name, iterations, args.out)


if __name__ == "__main__":
    main()
