"""Bargaining's text hooks: offer names, the parser, the rules and each player's view (its own
values only)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from alem.envs.games.bargaining.types import (
    AGREE,
    ITEMS,
    NUM_ITEMS,
    NUM_PLAYERS,
    OFFERS,
    POOL_MAX,
    BargainingParams,
    BargainingState,
    split_text,
)
from alem.text_hooks import TextHooks, words

_NUMBER_WORDS = {w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven"])}
_NUMBER_WORDS.update({"no": 0, "a": 1, "an": 1})
_ITEM_WORDS = {
    "book": 0,
    "books": 0,
    "hat": 1,
    "hats": 1,
    "ball": 2,
    "balls": 2,
    "basketball": 2,
    "basketballs": 2,
}
_ME = {"i", "me", "my", "mine", "myself"}
_YOU = {"you", "your", "yours", "yourself"}
_AGREE_WORDS = {"agree", "agreed", "accept", "accepted", "deal"}
_NEGATIONS = {"not", "no", "never", "t", "dont", "cannot", "cant", "wont", "reject", "refuse", "decline"}


class BargainingText(TextHooks):
    """The text hooks of :class:`~alem.envs.games.bargaining.env.Bargaining` (a mixin: it reads
    the env's ``max_turns`` and default params)."""

    def text_vocabulary(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        return {
            "game": ("name", ("Deal or No Deal",)),
            "seat": ("name", ("0", "1")),
            "item": ("word", ITEMS),
            "agree": ("word", ("agree",)),
        }

    def action_names(self, agent: int = 0) -> list[str]:
        items, (agree,) = self.labels("item"), self.labels("agree")
        return [f"I get {split_text(q, items)}" for q in OFFERS] + [agree]

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        return {
            w: AGREE for w in ("accept", "deal", "i agree", "i accept", "it s a deal", "accept the offer")
        }

    def parse_action(self, text: str, agent: int = 0) -> int | None:
        """Action named in ``text``, or None when it names none or several (see the module card).

        Accepts the action names, a bare index, offers written as the speaker's share in digits
        or words (``"I get 2 books, 1 hat, 0 balls"``, ``"I'll take two books and a hat"``, a bare
        ``"1 book, 2 hats, 0 balls"``; parts after ``you``/``your`` are the other player's and
        are skipped), and "agree"/"accept"/"deal" when no offer is named and no negation
        (``no``, ``not``, ``don't``, ``reject``, ...) stands up to three words before it.
        Any other free text is ignored.
        """
        said = words(text)
        _, table = self._name_table(agent)
        if said in table:
            return table[said]
        if re.fullmatch(r"(action )?\d+", said):
            j = int(said.split()[-1])
            return j if 0 <= j <= AGREE else None
        tokens = said.split()
        offers = _offers_in(tokens)
        if offers is None or len(offers) > 1:
            return None
        if offers:
            q = offers.pop()
            if max(q) > POOL_MAX or sum(q) > POOL_MAX:
                return None
            return int(np.flatnonzero((q == OFFERS).all(1))[0])
        for i, tok in enumerate(tokens):
            if tok in _AGREE_WORDS and not _NEGATIONS.intersection(tokens[max(0, i - 3) : i]):
                return AGREE
        return None

    def rules_text(self, params: BargainingParams | None = None, agent: int = 0) -> str:
        params = self.default_params if params is None else params
        discount, prob_end = float(params.discount), float(params.prob_end)
        (game,), seat, items, (agree,) = (
            self.labels("game"),
            self.labels("seat"),
            self.labels("item"),
            self.labels("agree"),
        )
        named = (
            f"{game}, a negotiation game for 2 players"
            if self.relabeled_text
            else f"a negotiation game for 2 players ({game})"
        )
        lines = [
            f"You are player {seat[agent]} in {named}. A pool of {items[0]}s, "
            f"{items[1]}s and {items[2]}s (5 to 7 items) is to be split between the players. Each player has private values "
            "for the items (whole numbers; the whole pool is worth 10 to each player); you see only your own.",
            f"Player {seat[0]} makes the first offer; then the players take turns. On your turn you either make an "
            f"offer, naming what you get (the other player gets the rest of the pool), or {agree} to the other "
            "player's last offer. You can offer only items that are in the pool.",
            f"If you {agree}, the deal is done: each player scores the value of what it gets. "
            f"After {self.max_turns} offers without agreement the game ends with no deal: both score 0.",
        ]
        if discount < 1.0:
            lines.append(
                f"From the third move on, every move multiplies both scores of a deal by {discount:g}."
            )
        if prob_end > 0.0:
            lines.append(
                f"After each offer but the first, the negotiation breaks off (no deal) with probability {prob_end:g}."
            )
        lines.append(
            f"Actions: an offer such as '{self.action_names(agent)[OFFERS.tolist().index([1, 2, 0])]}', "
            f"or '{agree}'. Anything you write besides your move is ignored."
        )
        return "\n".join(lines)

    def json_view(
        self, state: BargainingState, agent: int, params: BargainingParams | None = None
    ) -> dict[str, Any]:
        """``pool`` and ``your_values`` (per item), ``offers`` (``[seat, {item: count the proposer
        gets}]`` oldest first), ``to_act`` (null once over), ``agreed``, ``max_offers``."""
        items, seat = self.labels("item"), self.labels("seat")
        offers, n = np.asarray(state.offers), int(state.num_offers)
        over = bool(state.agreed) or bool(state.ended) or n >= self.max_turns
        return {
            "pool": {items[i]: int(c) for i, c in enumerate(np.asarray(state.pool))},
            "your_values": {items[i]: int(v) for i, v in enumerate(np.asarray(state.values)[agent])},
            "offers": [
                [seat[k % NUM_PLAYERS], {items[i]: int(c) for i, c in enumerate(offers[k])}] for k in range(n)
            ],
            "to_act": None if over else seat[int(state.player)],
            "agreed": bool(state.agreed),
            "max_offers": self.max_turns,
        }

    def render_text(
        self,
        state: BargainingState,
        agent: int | None = None,
        params: BargainingParams | None = None,
        *,
        moves: bool = True,
    ) -> str:
        """Player ``agent``'s view (its own values only); ``agent=None`` shows both players' values.
        It names no available offers (the pool is the state), so ``moves`` changes nothing."""
        params = self.default_params if params is None else params
        pool, values = np.asarray(state.pool), np.asarray(state.values)
        offers, n = np.asarray(state.offers), int(state.num_offers)
        player, agreed, ended = int(state.player), bool(state.agreed), bool(state.ended)

        (game,), seat, items, (agree,) = (
            self.labels("game"),
            self.labels("seat"),
            self.labels("item"),
            self.labels("agree"),
        )

        def who(p: int) -> str:
            return "you" if p == agent else f"player {seat[p]}"

        def worth(p: int) -> str:
            return ", ".join(f"{items[i]} {int(values[p, i])}" for i in range(NUM_ITEMS))

        title = game if self.relabeled_text else "Bargaining"
        lines = [f"{title}: split a pool of {split_text(pool, items)}."]
        if agent is None:
            lines += [f"Player {seat[p]}'s values: {worth(p)}." for p in range(NUM_PLAYERS)]
        else:
            lines.append(
                f"You are player {seat[agent]}. Your values: {worth(agent)} (the other player's are hidden)."
            )
        if n:
            lines.append("Offers so far (oldest first):")
            for k in range(n):
                p = k % NUM_PLAYERS
                gets = f"{who(p)} {'get' if p == agent else 'gets'} {split_text(offers[k], items)}"
                rest = f"{who(1 - p)} {'get' if 1 - p == agent else 'gets'} {split_text(pool - offers[k], items)}"
                lines.append(f"  {who(p)}: {gets}; {rest}")
        else:
            lines.append("No offers yet.")
        if agreed:
            proposer, last = 1 - player, offers[n - 1]
            scores = [values[proposer] @ last, values[1 - proposer] @ (pool - last)]
            factor = float(params.discount) ** max(n - 1, 0)
            by = {proposer: scores[0] * factor, 1 - proposer: scores[1] * factor}
            whose = "your" if proposer == agent else f"player {seat[proposer]}'s"
            agreed = f"said {agree} to" if self.relabeled_text else "agreed to"
            lines.append(f"{who(player).capitalize()} {agreed} {whose} offer.")
            lines.append("Deal: " + ", ".join(f"{who(p)} {by[p]:g}" for p in range(NUM_PLAYERS)) + ".")
        elif ended:
            lines.append("The negotiation broke off by chance: no deal, both score 0.")
        elif n >= self.max_turns:
            lines.append(f"No deal after {self.max_turns} offers: both score 0.")
        else:
            turn = "your turn" if player == agent else f"player {seat[player]}'s turn"
            lines.append(f"It is {turn} (offer {n + 1} of at most {self.max_turns}).")
        return "\n".join(lines)


def _offers_in(tokens: list[str]) -> set[tuple[int, ...]] | None:
    """The speaker's shares named in ``tokens``: one per run of ``<count> <item>`` pairs that
    follows ``I``/``me``/``my`` (or starts the text); None when a run names an item twice."""
    found: set[tuple[int, ...]] = set()
    mine, share = True, {}
    for i, tok in enumerate(tokens + ["you"]):  # a final "you" closes the last run
        owner = True if tok in _ME else False if tok in _YOU else None
        if owner is not None and owner != mine:
            if mine and share:
                found.add(tuple(share.get(k, 0) for k in range(NUM_ITEMS)))
            mine, share = owner, {}
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if nxt in _ITEM_WORDS and (tok.isdigit() or tok in _NUMBER_WORDS):
            item, n = _ITEM_WORDS[nxt], int(tok) if tok.isdigit() else _NUMBER_WORDS[tok]
            if share.get(item, n) != n:
                return None
            share[item] = n
    return found
