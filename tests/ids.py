"""The ids the per-id sweeps run (tests/test_smoke.py, tests/test_conformance.py, the PettingZoo API sweep).

Every registered id, except that a family of many maps over one code path is represented by a
few of them: SMAX's 14 maps differ only in their armies, so the sweeps take a fixed map, the one
with most unit types and a SMACv2 draw. Every SMAX map is compiled, stepped and checked step
for step against JaxMARL in tests/envs/coordination/test_smax.py (exhaustive tier).
"""

from __future__ import annotations

import alem

SMAX_REPRESENTATIVES = ("smax_3m-v0", "smax_3s5z_vs_3s6z-v0", "smax_smacv2_5_units-v0")


def contract_ids() -> list[str]:
    return sorted(i for i in alem.registry() if not i.startswith("smax_") or i in SMAX_REPRESENTATIVES)
