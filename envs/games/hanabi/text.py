"""Hanabi's text hooks: move names and their variants, the parser, the rules and each player's
view (its own hand only as the hints told it)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from alem.envs.games.hanabi.types import (
    _HINT_VERBS,
    _NUMBER_WORDS,
    _ORDINALS,
    _RANK_PLURALS,
    COLOUR,
    COLOUR_NAMES,
    DISCARD,
    PLAY,
    RANK,
    HanabiParams,
    HanabiState,
)
from alem.text_hooks import TextHooks, words


class HanabiText(TextHooks):
    """The text hooks of :class:`~alem.envs.games.hanabi.env.Hanabi` (a mixin: it reads the
    env's move tables ``_kind``, ``_slot``, ``_offset``, ``_value`` and its sizes)."""

    def _move_name(self, action: int, agent: int) -> str:
        kind, slot = int(self._kind[action]), int(self._slot[action])
        offset, value = int(self._offset[action]), int(self._value[action])
        if kind == DISCARD:
            return f"discard card {slot + 1}"
        if kind == PLAY:
            return f"play card {slot + 1}"
        target = (agent + offset) % self.num_players
        what = COLOUR_NAMES[value] if kind == COLOUR else f"rank {value + 1}"
        return f"hint {what} to player {target}"

    def action_names(self, agent: int = 0) -> list[str]:
        return [self._move_name(a, agent) for a in range(self.num_moves)]

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        aliases: dict[str, int] = {}
        for a in range(self.num_moves):
            kind, slot = int(self._kind[a]), int(self._slot[a])
            if kind in (PLAY, DISCARD):
                verb = "play" if kind == PLAY else "discard"
                aliases[f"{verb} {slot + 1}"] = a
                aliases[f"{verb} the {_ORDINALS[slot]} card"] = a
                aliases[f"{verb} {_ORDINALS[slot]} card"] = a
        return aliases

    def parse_action(self, text: str, agent: int = 0) -> int | None:
        """Move named in ``text``, or None when it names none or several.

        Accepts the move names (``"play card 2"``, ``"hint red to player 1"``), a bare
        action index, ``"play 2"``, ``"discard the first card"``, and hints written with any
        of hint/tell/reveal/clue/give, a colour word or a rank (``"rank 3"``, ``"3s"``,
        ``"threes"``), and ``"player N"`` for the target (optional with two players).
        """
        said = words(text)
        _, table = self._name_table(agent)  # names and aliases, normalised, built once
        if said in table:
            return table[said]
        if re.fullmatch(r"(action )?\d+", said):
            j = int(said.split()[-1])
            return j if 0 <= j < self.num_moves else None
        tokens = said.split()
        hits = set(self._removals_in(tokens)) | set(self._hints_in(tokens, agent))
        return hits.pop() if len(hits) == 1 else None

    def _removals_in(self, tokens: list[str]):
        for i, tok in enumerate(tokens):
            if tok not in ("play", "discard", "plays", "discards", "playing", "discarding"):
                continue
            base = PLAY if tok.startswith("play") else DISCARD
            for nxt in tokens[i + 1 : i + 5]:
                slot = None
                if nxt.isdigit():
                    slot = int(nxt) - 1
                elif nxt in _ORDINALS:
                    slot = _ORDINALS.index(nxt)
                elif nxt in _NUMBER_WORDS:
                    slot = _NUMBER_WORDS.index(nxt) - 1
                if slot is not None:
                    if 0 <= slot < self.hand_size:
                        yield (0 if base == DISCARD else self.hand_size) + slot
                    break

    def _hints_in(self, tokens: list[str], agent: int):
        if not any(t in _HINT_VERBS or t.startswith(("hint", "clue")) for t in tokens):
            return
        values = set()
        for i, tok in enumerate(tokens):
            if tok in COLOUR_NAMES[: self.colours]:
                values.add((COLOUR, COLOUR_NAMES.index(tok)))
            m = re.fullmatch(r"(\d)s?", tok)
            prev = tokens[i - 1] if i else ""
            if (
                m
                and prev not in ("player", "players", "p")
                and (prev in ("rank", "number") or tok.endswith("s"))
            ):
                values.add((RANK, int(m.group(1)) - 1))
            if tok in _RANK_PLURALS:
                values.add((RANK, _RANK_PLURALS.index(tok)))
        targets = {
            int(tokens[i + 1])
            for i, t in enumerate(tokens[:-1])
            if t in ("player", "p") and tokens[i + 1].isdigit()
        }
        if not targets and self.num_players == 2:
            targets = {1 - agent}
        for kind, value in values:
            if not 0 <= value < (self.colours if kind == COLOUR else self.ranks):
                continue
            for target in targets:
                offset = (target - agent) % self.num_players
                if offset == 0:
                    continue
                base = 2 * self.hand_size + (0 if kind == COLOUR else (self.num_players - 1) * self.colours)
                n = self.colours if kind == COLOUR else self.ranks
                yield base + (offset - 1) * n + value

    def rules_text(self, params: HanabiParams | None = None, agent: int = 0) -> str:
        P, C, R, H = self.num_players, self.colours, self.ranks, self.hand_size
        colours = ", ".join(COLOUR_NAMES[:C])
        copies = ", ".join(f"{n} of rank {r + 1}" for r, n in enumerate(self.copies))
        return "\n".join(
            [
                f"You are player {agent} in Hanabi, a cooperative card game for {P} players. Everyone wins "
                "or loses together: the team's score is what counts.",
                f"The deck has {self.deck_size} cards in {C} colours ({colours}) and ranks 1 to {R}; each "
                f"colour has {copies}. Each player holds {H} cards, numbered from card 1 (oldest) to card "
                f"{H} (newest).",
                "You cannot see your own cards, but you see everyone else's. You only know about your own "
                "cards what hints have told you.",
                f"The team builds one firework per colour, from 1 up to {R}, in order. The score is the "
                f"number of cards played on the fireworks (at most {self.max_score}).",
                "On your turn do exactly one of:",
                "- play a card: if it is the next rank of its colour it joins the firework, otherwise it is "
                "discarded and the team loses a life. Completing a firework returns an information token.",
                f"- discard a card to regain an information token (not allowed with all {self.max_info} "
                "tokens).",
                "- give a hint (costs one information token): tell another player about ALL of their cards "
                "of one colour or of one rank. The hint must match at least one of their cards.",
                "After playing or discarding you draw a new card into your last position; later cards move "
                "down one position.",
                f"The team has {self.max_life} lives; losing the last one ends the game with score 0. "
                "When the deck runs out, every player gets one more turn.",
                f"Moves: 'play card N', 'discard card N' (N from 1 to {H}), 'hint <colour> to player K', "
                "'hint rank N to player K'.",
            ]
        )

    def _knowledge_text(self, state: HanabiState, player: int, slot: int) -> str:
        cp = np.asarray(state.colour_plausible[player, slot])
        rp = np.asarray(state.rank_plausible[player, slot])
        ch, rh = int(state.colour_hinted[player, slot]), int(state.rank_hinted[player, slot])
        bits = []
        if ch >= 0 and rh >= 0:
            bits.append(f"{COLOUR_NAMES[ch]} {rh + 1}")
        elif ch >= 0:
            bits.append(COLOUR_NAMES[ch])
        elif rh >= 0:
            bits.append(f"rank {rh + 1}")
        if ch < 0 and not cp.all():
            bits.append("not " + "/".join(COLOUR_NAMES[c] for c in np.flatnonzero(~cp)))
        if rh < 0 and not rp.all():
            bits.append("not rank " + "/".join(str(r + 1) for r in np.flatnonzero(~rp)))
        return ", ".join(bits) if bits else "unknown"

    def json_view(self, state: HanabiState, agent: int, params: HanabiParams | None = None) -> dict[str, Any]:
        """``score``, ``fireworks`` (cards played per colour), ``info_tokens``, ``lives``,
        ``deck_left``, ``discarded`` (card: count), ``your_hand`` (per card what the hints told
        you), ``hands`` (other players: per card ``{"card", "they_know"}``), ``last_move``,
        ``to_act`` (null once over). Your own cards are never shown."""
        hands, fireworks = np.asarray(state.hands), np.asarray(state.fireworks)
        held = lambda q: [s for s in range(self.hand_size) if hands[q, s] >= 0]
        others = [(agent + k) % self.num_players for k in range(1, self.num_players)]
        over = bool(self.terminal(state))
        return {
            "score": int(fireworks.sum()) if int(state.life_tokens) > 0 else 0,
            "fireworks": {COLOUR_NAMES[c]: int(fireworks[c]) for c in range(self.colours)},
            "info_tokens": int(state.info_tokens),
            "lives": int(state.life_tokens),
            "deck_left": self.deck_size - int(state.drawn),
            "discarded": {self.card_name(t): int(n) for t, n in enumerate(np.asarray(state.discards)) if n},
            "your_hand": [self._knowledge_text(state, agent, s) for s in held(agent)],
            "hands": {
                str(q): [
                    {"card": self.card_name(hands[q, s]), "they_know": self._knowledge_text(state, q, s)}
                    for s in held(q)
                ]
                for q in others
            },
            "last_move": self._last_move_text(state, lambda q: "you" if q == agent else f"player {q}")
            if int(state.last_player) >= 0
            else None,
            "to_act": None if over else int(state.player),
        }

    def render_text(
        self,
        state: HanabiState,
        agent: int | None = None,
        params: HanabiParams | None = None,
        *,
        moves: bool = True,
    ) -> str:
        """Player ``agent``'s view: others' cards, its own only as hints; ``agent=None``: all. It
        names no available moves, so ``moves`` changes nothing."""
        P, C = self.num_players, self.colours
        hands = np.asarray(state.hands)
        fireworks = np.asarray(state.fireworks)

        def who(q: int) -> str:
            return "you" if q == agent else f"player {q}"

        # self.score in NumPy (its jnp.where costs a dispatch, half of a render on the host)
        score = int(fireworks.sum()) if int(state.life_tokens) > 0 else 0
        lines = [
            f"Hanabi, {P} players. Score: {score} of {self.max_score}.",
            "Fireworks: " + ", ".join(f"{COLOUR_NAMES[c]} {fireworks[c]}" for c in range(C)) + ".",
            f"Information tokens: {int(state.info_tokens)} of {self.max_info}. "
            f"Lives: {int(state.life_tokens)} of {self.max_life}. "
            f"Cards left in the deck: {self.deck_size - int(state.drawn)}.",
        ]
        pile = np.asarray(state.discards)
        gone = [f"{self.card_name(t)}" + (f" x{n}" if n > 1 else "") for t, n in enumerate(pile) if n]
        lines.append("Discarded: " + (", ".join(gone) if gone else "nothing") + ".")
        order = range(P) if agent is None else [(agent + k) % P for k in range(P)]
        for q in order:
            held = [s for s in range(self.hand_size) if hands[q, s] >= 0]
            if q == agent:
                lines.append("Your hand (hidden from you; what the hints told you):")
                lines += [f"  card {s + 1}: {self._knowledge_text(state, q, s)}" for s in held]
            else:
                lines.append(f"Player {q}'s hand:")
                lines += [
                    f"  card {s + 1}: {self.card_name(hands[q, s])} (they know: "
                    f"{self._knowledge_text(state, q, s)})"
                    for s in held
                ]
        last = int(state.last_player)
        if last >= 0:
            lines.append("Last move: " + self._last_move_text(state, who))
        if bool(self.terminal(state)):
            lines.append(f"Game over. Final score: {score}.")
        else:
            turn = int(state.player)
            lines.append("It is your turn." if turn == agent else f"It is player {turn}'s turn.")
        return "\n".join(lines)

    def _last_move_text(self, state: HanabiState, who) -> str:
        last, a = int(state.last_player), int(state.last_move)
        kind, slot = int(self._kind[a]), int(self._slot[a])
        if kind in (PLAY, DISCARD):
            card = self.card_name(int(state.last_card))
            if kind == DISCARD:
                return f"{who(last)} discarded card {slot + 1}, {card}."
            outcome = (
                "it joined the firework" if bool(state.last_scored) else "it did not fit: a life was lost"
            )
            return f"{who(last)} played card {slot + 1}, {card}; {outcome}."
        target = (last + int(self._offset[a])) % self.num_players
        value = int(self._value[a])
        what = COLOUR_NAMES[value] if kind == COLOUR else f"rank {value + 1}"
        touched = [str(s + 1) for s in np.flatnonzero(np.asarray(state.last_reveal))]
        return f"{who(last)} hinted {what} to {who(target)}: card(s) {', '.join(touched)}."
