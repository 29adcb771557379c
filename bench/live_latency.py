"""Signal-to-surface latency of `aura live` on the machine's clock (BENCHMARKS.md).

Starts `aura live --stdin` on a live.v1 setup made from scenarios/day.json's profile and
initial state (its offset moved so that the machine's now is the person's early afternoon,
outside quiet hours), waits for the first tick, then sends N urgent messages from the
person's first VIP, one every GAP seconds. For each, the time from writing its line to
reading the first decision of the tick it caused (a decision stamped at or after the
message's acknowledged time) on stdout. Prints the median, p90, p99 and max in ms, and the
count of messages that caused no decision within 5 s (none expected).

Then a burst of BURST readings written as fast as the session takes them: how many it
acknowledged (each fsynced first) and refused (past LIVE_SIGNALS_PER_SECOND_MAX), and the rate
of the acknowledgements while the rate bound's bucket was full (the journal's own speed).

Usage: python3 bench/live_latency.py AURA PLUGINS_DIR [N] [GAP] [BURST]
"""

import datetime
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

aura, plugins = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 200
gap = float(sys.argv[4]) if len(sys.argv) > 4 else 0.25
burst = int(sys.argv[5]) if len(sys.argv) > 5 else 1000
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
day = json.load(open(os.path.join(root, "scenarios", "day.json")))
# The person's offset such that it is 13:00-14:00 for them now.
utc = datetime.datetime.now(datetime.timezone.utc)
offset_minutes = ((13 - utc.hour) % 24) * 60 - utc.minute
if offset_minutes > 840:
    offset_minutes -= 1440
offset = datetime.timezone(datetime.timedelta(minutes=offset_minutes))
work = tempfile.mkdtemp(prefix="aura-live-latency-")
setup = os.path.join(work, "live.json")
json.dump(
    {
        "scenario": "latency",
        "tick_minutes": 15,
        "utc_offset_minutes": offset_minutes,
        "profile": day["profile"],
        "initial": day.get("initial", {}),
    },
    open(setup, "w"),
)
vip = day["profile"]["vip_senders"][0]
process = subprocess.Popen(
    [aura, "--data-dir", os.path.join(work, "data"), "--plugins-dir", plugins, "live", "--stdin", setup],
    stdin=subprocess.PIPE,
    stdout=subprocess.PIPE,
    stderr=subprocess.PIPE,
    text=True,
    bufsize=1,
)
lines = queue.Queue()


def read():
    for line in process.stdout:
        lines.put((time.perf_counter(), json.loads(line)))


threading.Thread(target=read, daemon=True).start()
# The first tick runs at the start: wait for its decisions to settle.
time.sleep(3)
while not lines.empty():
    lines.get()

latencies, silent = [], 0
for i in range(count):
    now = datetime.datetime.now(offset).replace(microsecond=0)
    message = {
        "id": f"bench-{i}",
        "kind": "message",
        "data": {
            "id": f"m-bench-{i}",
            "thread_id": f"th-bench-{i}",
            "sender": vip,
            "subject": f"URGENT: payments are down ({i}), can you join the bridge?",
            "body": "Checkout fails for every card since a minute ago. Please call me now.",
            "received_at": now.isoformat(),
        },
    }
    sent = time.perf_counter()
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()
    acked_at, decided = None, None
    deadline = sent + 5
    while decided is None and time.perf_counter() < deadline:
        try:
            at, line = lines.get(timeout=max(0.0, deadline - time.perf_counter()))
        except queue.Empty:
            break
        if "ack" in line:
            acked_at = line["ack"]["at"]
        elif "decision" in line and acked_at is not None:
            stamped = datetime.datetime.fromisoformat(line["decision"]["at"])
            if stamped >= datetime.datetime.fromisoformat(acked_at):
                decided = at
    if decided is None:
        silent += 1
    else:
        latencies.append((decided - sent) * 1000)
    time.sleep(gap)
    while not lines.empty():
        lines.get()

# The burst: readings (no tick of their own), written back to back.
time.sleep(1.5)
while not lines.empty():
    lines.get()
started = time.perf_counter()
for i in range(burst):
    reading = {"id": f"burst-{i}", "kind": "reading", "data": {"hrv_ms": 40 + i % 20}}
    process.stdin.write(json.dumps(reading) + "\n")
process.stdin.flush()
acked, refused, answered, acked_times = 0, 0, 0, []
while answered < burst:
    try:
        at, line = lines.get(timeout=30)
    except queue.Empty:
        break
    if "ack" in line:
        acked += 1
        answered += 1
        acked_times.append(at)
    elif "refused" in line:
        refused += 1
        answered += 1
first = min(100, len(acked_times))
burst_rate = (first - 1) / (acked_times[first - 1] - started) if first > 1 else 0.0

process.stdin.close()
process.terminate()
process.wait(timeout=30)
latencies.sort()


def rank(p):
    return latencies[min(len(latencies) - 1, max(0, -(-len(latencies) * p // 100) - 1))]


print(
    json.dumps(
        {
            "messages": count,
            "decided": len(latencies),
            "no_decision": silent,
            "p50_ms": round(rank(50), 2),
            "p90_ms": round(rank(90), 2),
            "p99_ms": round(rank(99), 2),
            "max_ms": round(latencies[-1], 2),
            "burst": burst,
            "burst_acknowledged": acked,
            "burst_refused": refused,
            "burst_elapsed_s": round(time.perf_counter() - started, 2),
            "durable_acks_per_s_while_the_bucket_was_full": round(burst_rate),
        }
    )
)
