#!/usr/bin/env python3
"""What a day tells the person, and when: the figures issue 34 asks for, from a run's traces.

    python3 bench/told.py [--aura target/debug/aura] [--rules-from AURA] scenarios/day.json ...

For each scenario it runs `aura run` (seed 0) into a fresh data dir, then reads traces.jsonl:
- shown decisions per surface (WATCH, PHONE_CARD, EARBUD_TTS), and SILENT records;
- words per spoken line (EARBUD_TTS): median and largest;
- how long from a signal's arrival (its `at`) to the first decision on an interrupting surface
  that names its item (a message, a charge, an event, an invitation, by the id the signals and
  digests carry), median per importance level; items never told are counted.

An item's importance is the highest the catalogue's news rules (`aura catalogue` of
--rules-from, by default --aura: an aura before its catalogue listed them is measured with a
newer one's rules) give the
signals that name it in any trace: urgent from 85 (never held by the budget), high 60-84,
normal 40-59 (it may interrupt), minor below 40 (it waits for the digest). An item no rule
names (a message that needs no one now) is minor.

Standard library only. Prints one Markdown table per scenario.
"""

import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

INTERRUPTING = ("WATCH", "PHONE_CARD", "EARBUD_TTS")
LEVELS = (("urgent", 85), ("high", 60), ("normal", 40), ("minor", 0))
ITEM_KINDS = ("message", "transaction", "event", "invitation")


def level_of(importance):
    for name, floor in LEVELS:
        if importance >= floor:
            return name
    return "minor"


def news_rules(aura):
    """Signal kind -> highest importance any tool's news rule gives it."""
    catalogue = json.loads(subprocess.run([aura, "catalogue"], check=True,
                                          capture_output=True, text=True).stdout)
    rules = {}
    for agent in catalogue["agents"]:
        for tool in agent["tools"]:
            for rule in tool.get("news", []):
                rules[rule["kind"]] = max(rules.get(rule["kind"], 0), rule["importance"])
    return rules


def when(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def tokens(signal):
    return set(re.split(r"[:/,]", signal))


def figures(aura, scenario_path, rules):
    scenario = json.load(open(scenario_path))
    with tempfile.TemporaryDirectory() as data:
        subprocess.run([aura, "--data-dir", data, "run", scenario_path], check=True,
                       capture_output=True)
        traces = [json.loads(line) for line in open(os.path.join(data, "traces.jsonl"))]
    shown = {surface: 0 for surface in INTERRUPTING + ("SILENT",)}
    for trace in traces:
        shown[trace["surface"]] += 1
    spoken = [len(t["outcome"]["summary"].split()) for t in traces
              if t["surface"] == "EARBUD_TTS"]
    delays = {name: [] for name, _ in LEVELS}
    never = {name: 0 for name, _ in LEVELS}
    for signal in scenario["signals"]:
        if signal["kind"] not in ITEM_KINDS or "id" not in signal["data"]:
            continue
        item = signal["data"]["id"]
        arrived = when(signal["at"])
        naming = [t for t in traces if any(item in tokens(s) for s in t["signals"])
                  and when(t["at"]) >= arrived]
        if not naming:
            continue  # never news: no rule names it
        importance = max((rules.get(s.split(":")[0], 0) for t in naming for s in t["signals"]
                          if item in tokens(s)), default=0)
        level = level_of(importance)
        told = [t for t in naming if t["surface"] in INTERRUPTING]
        if told:
            delays[level].append((when(told[0]["at"]) - arrived).total_seconds() / 60)
        else:
            never[level] += 1
    return shown, spoken, delays, never


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--aura", default="target/debug/aura")
    parser.add_argument("--rules-from", default=None)
    parser.add_argument("scenarios", nargs="+")
    args = parser.parse_args()
    rules = news_rules(args.rules_from or args.aura)
    for path in args.scenarios:
        shown, spoken, delays, never = figures(args.aura, path, rules)
        print(f"### {path}\n")
        print("| shown | WATCH | PHONE_CARD | EARBUD_TTS | SILENT |")
        print("|---|---|---|---|---|")
        print(f"| decisions | {shown['WATCH']} | {shown['PHONE_CARD']} | "
              f"{shown['EARBUD_TTS']} | {shown['SILENT']} |\n")
        if spoken:
            print(f"Spoken lines: {len(spoken)}, words per line median "
                  f"{statistics.median(spoken):g}, largest {max(spoken)}.\n")
        else:
            print("Spoken lines: none.\n")
        print("| importance | items told | median minutes to told | never told |")
        print("|---|---|---|---|")
        for name, _ in LEVELS:
            told = delays[name]
            median = f"{statistics.median(told):g}" if told else "-"
            print(f"| {name} | {len(told)} | {median} | {never[name]} |")
        print()


if __name__ == "__main__":
    sys.exit(main())
