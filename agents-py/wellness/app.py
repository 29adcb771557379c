"""aura's wellness agent in Python: the Rust agent's three tools and tick, the same rules and
the same answers, built with componentize-py against wit/agent.wit."""

import aura_sdk

from wellness.breaks import suggest_break
from wellness.sleep import sleep_summary
from wellness.stress import stress_score
from wellness.tick import tick


WitWorld = aura_sdk.agent(
    name="wellness",
    version="0.1.0",
    tools={"stress_score": stress_score, "sleep_summary": sleep_summary,
           "suggest_break": suggest_break},
    tick=tick,
    tick_reads=("now", "utc_offset_minutes", "profile", "readings", "sleep_sessions", "events"),
)
