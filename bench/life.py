#!/usr/bin/env python3
"""A life lived by `aura live`: CPU per day, resident memory, disk per day, rollover time.

    python3 bench/life.py AURA PLUGINS DAYS [--start 2026-10-05] [--work DIR]
        [--keep-days N] [--window-s 600]

Writes DAYS of the generated life (scenarios/gen_life.py), feeds its signals to `aura live
--stdin --clock replay --seed 7 --keep-days DAYS` one line after the other's acknowledgement
(as stdin goes) and, each time `life.json` names a new open day, reads the process's CPU time
(utime + stime) and resident memory (VmRSS, VmHWM) from /proc. At the end it reads each kept
day's size on disk and the rollovers' times from the session's log (RUST_LOG=aura_day=info:
`rollover_ms`, from the day's close to the next day's first tick ready). Prints one JSON
object: per day (1-based) its CPU seconds, RSS and peak RSS in MiB, its dir's KiB (0 for a day
past --keep-days, deleted by then); the medians; the signals acknowledged a second in each
whole window of the run (durable throughput over time). Linux only (/proc). PLUGINS may be
plugins/pulley64 (`aura compile --target pulley64`): the same life on the Pulley interpreter.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    # utime and stime: fields 14 and 15 of stat, 12 and 13 after the name.
    return (int(fields[11]) + int(fields[12])) / ticks


def memory_mib(pid):
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def open_day(data):
    try:
        with open(os.path.join(data, "life.json")) as f:
            return json.load(f)["open"]
    except (OSError, ValueError, KeyError):
        return None


def dir_kib(path):
    total = 0
    for base, _, files in os.walk(path):
        for name in files:
            total += os.path.getsize(os.path.join(base, name))
    return total / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("aura")
    parser.add_argument("plugins")
    parser.add_argument("days", type=int)
    parser.add_argument("--start", default="2026-10-05")
    parser.add_argument("--work", default="target/tmp/bench-life")
    parser.add_argument("--keep-days", type=int, default=None,
                        help="days kept (default: all of them, so each is measured on disk)")
    parser.add_argument("--window-s", type=int, default=600,
                        help="the throughput's window: signals acknowledged in each")
    args = parser.parse_args()
    work = os.path.abspath(args.work)
    life = os.path.join(work, "life")
    data = os.path.join(work, "data")
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(work)
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "scenarios/gen_life.py"), "--days",
         str(args.days), "--start", args.start, "--out", life],
        check=True,
    )
    with open(os.path.join(life, "signals.jsonl"), "rb") as f:
        lines = f.read().splitlines(keepends=True)
    env = dict(os.environ, RUST_LOG="aura_day=info")
    command = [
        args.aura, "--data-dir", data, "--plugins-dir", args.plugins, "live", "--stdin",
        "--clock", "replay", "--seed", "7", "--keep-days", str(args.keep_days or args.days),
        os.path.join(life, "setup.json"),
    ]
    started = time.monotonic()
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)

    def feed():
        for line in lines:
            child.stdin.write(line)
        child.stdin.close()

    acks = [0]
    refused = [0]
    # Signals acknowledged in each window of the run, from its start.
    windows = []

    def read_out():
        for line in child.stdout:
            if line.startswith(b'{"ack"'):
                acks[0] += 1
                window = int((time.monotonic() - started) // args.window_s)
                while len(windows) <= window:
                    windows.append(0)
                windows[window] += 1
            elif line.startswith(b'{"refused"'):
                refused[0] += 1

    log = []

    def read_err():
        for line in child.stderr:
            log.append(line.decode(errors="replace"))

    threads = [threading.Thread(target=t, daemon=True) for t in (feed, read_out, read_err)]
    for thread in threads:
        thread.start()
    # At each new open day: the CPU and memory the process had as the day before closed.
    marks = []
    seen = None
    while child.poll() is None:
        day = open_day(data)
        if day is not None and day != seen:
            try:
                cpu = cpu_seconds(child.pid)
                rss, hwm = memory_mib(child.pid)
            except OSError:
                break
            marks.append({"open": day, "cpu_s": cpu, "rss_mib": rss, "hwm_mib": hwm,
                          "wall_s": time.monotonic() - started})
            seen = day
        time.sleep(0.02)
    wall = time.monotonic() - started
    for thread in threads:
        thread.join(timeout=5)
    if child.returncode != 0:
        sys.stderr.write("".join(log[-20:]))
        sys.exit(f"aura live exited {child.returncode}")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", "".join(log))
    rollovers = [float(m) for m in re.findall(r"rollover_ms=([0-9.]+)", plain)]
    days = []
    for before, after in zip(marks, marks[1:]):
        name = before["open"]
        days.append({
            "day": name,
            "cpu_s": round(after["cpu_s"] - before["cpu_s"], 3),
            "rss_mib": round(after["rss_mib"], 1),
            "hwm_mib": round(after["hwm_mib"], 1),
            "kib": round(dir_kib(os.path.join(data, "days", name)), 1),
        })

    def at(n):
        return days[n - 1] if 0 < n <= len(days) else None

    summary = {
        "days_closed": len(days),
        "signals": len(lines),
        "acks": acks[0],
        "refused": refused[0],
        "wall_s": round(wall, 1),
        "signals_per_s": round(acks[0] / wall, 1),
        # Whole windows only: the last one is cut short by the end of the inputs.
        "window_s": args.window_s,
        "signals_per_s_by_window": [round(n / args.window_s, 1) for n in windows[:-1]],
        "start_cpu_s": round(marks[0]["cpu_s"], 3) if marks else None,
        "at_days": {n: at(n) for n in (1, 2, 30, 60, 90, 119, 120)},
        "cpu_s_median": statistics.median(d["cpu_s"] for d in days) if days else None,
        "kib_median": statistics.median(d["kib"] for d in days) if days else None,
        "kib_max": max(d["kib"] for d in days) if days else None,
        "rollover_ms_median": round(statistics.median(rollovers), 1) if rollovers else None,
        "rollover_ms_max": round(max(rollovers), 1) if rollovers else None,
        "days": days,
    }
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
