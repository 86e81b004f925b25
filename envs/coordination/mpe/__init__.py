"""Multi-agent particle environments (MPE), step-for-step equal to mpe2.

One particle-physics core (:mod:`.physics`: entity layout and step), the env base class
(:mod:`.core`) and the scenarios grouped by kind:
:mod:`.navigation` (simple, simple_spread), :mod:`.communication` (simple_reference,
simple_speaker_listener, simple_crypto) and :mod:`.adversarial` (simple_tag,
simple_adversary, simple_push, simple_world_comm). Registered as ``mpe/<scenario>-v0``.
"""

from __future__ import annotations

from alem.envs.coordination.mpe.adversarial import SimpleAdversary, SimplePush, SimpleTag, SimpleWorldComm
from alem.envs.coordination.mpe.communication import SimpleCrypto, SimpleReference, SimpleSpeakerListener
from alem.envs.coordination.mpe.core import MPEEnv, MPEParams, MPEState
from alem.envs.coordination.mpe.navigation import Simple, SimpleSpread
from alem.envs.coordination.mpe.physics import Layout

__all__ = [
    "Layout",
    "MPEEnv",
    "MPEParams",
    "MPEState",
    "Simple",
    "SimpleAdversary",
    "SimpleCrypto",
    "SimplePush",
    "SimpleReference",
    "SimpleSpeakerListener",
    "SimpleSpread",
    "SimpleTag",
    "SimpleWorldComm",
]
