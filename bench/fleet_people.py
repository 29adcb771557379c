"""People per fleet host: the CPU and memory one person's live assistant costs (BENCHMARKS.md).

Starts a nats-server with JetStream and one `aura fleet host` (--clock replay), enrols K people
with scenarios/day.json's setup (215 signals, 69 ticks; each person their own seed), and sends
every person their day's signals, without the end of their inputs: all K sessions are then
alive at once, each holding its day so far, and the host's resident memory is sampled. Then
the ends go out and the days run to their last tick. It reads the host's CPU time (user +
system, /proc/PID/stat) around the days, and its resident memory (VmRSS) before anyone was
enrolled and with all K alive, and prints per person: CPU seconds for a whole day (every
signal taken into the person's life in JetStream, every tick, every decision journaled and delivered) and the
resident memory of a live session. From them, how many people one such host serves at the
day's own pace (its signals come over 17 hours; its ticks every 15 minutes) at a 50% CPU
target, and what memory that takes.

Usage: python3 bench/fleet_people.py AURA PLUGINS_DIR NATS_SERVER [K]
"""

import json
import shutil
import os
import socket
import subprocess
import sys
import tempfile
import time

aura, plugins, nats_server = sys.argv[1], sys.argv[2], sys.argv[3]
people = int(sys.argv[4]) if len(sys.argv) > 4 else 20
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
day_path = os.path.join(root, "scenarios", "day.json")
day = json.load(open(day_path))
signals = sorted(day["signals"], key=lambda s: s["at"])
work = tempfile.mkdtemp(prefix="aura-fleet-people-")
ticks = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks


def rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def events(log, name, records=None):
    count = 0
    with open(log) as f:
        for line in f:
            try:
                fields = json.loads(line).get("fields", {})
            except json.JSONDecodeError:
                continue
            names = name if isinstance(name, tuple) else (name,)
            if fields.get("event") in names and (records is None or fields.get("record") in records):
                count += 1
    return count


def wait_for(log, name, want, limit_s, records=None):
    started = time.time()
    while events(log, name, records) < want:
        if time.time() - started > limit_s:
            sys.exit(f"only {events(log, name, records)} of {want} `{name}` after {limit_s} s")
        time.sleep(0.2)


port, monitor = free_port(), free_port()
# The file store frees the blocks of purged messages (a replaced checkpoint) at its sync, every
# 2 minutes by default: within a run that short a default server still shows every checkpoint
# ever written. A sync each second shows what a server keeps in its steady state.
STORE_SYNC_S = 1
conf = os.path.join(work, "nats.conf")
with open(conf, "w") as f:
    f.write('jetstream { store_dir: "%s", sync_interval: "%ds" }\n' % (os.path.join(work, "js"), STORE_SYNC_S))
server = subprocess.Popen(
    [nats_server, "-c", conf, "-a", "127.0.0.1", "-p", str(port), "-m", str(monitor)],
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
time.sleep(1)
url = f"nats://127.0.0.1:{port}"
base = [aura, "--plugins-dir", plugins, "--nats", url]
log = os.path.join(work, "host.log")
env = dict(os.environ, RUST_LOG="aura_fleet=info")
host = subprocess.Popen(
    base
    + ["--log-json", "--data-dir", os.path.join(work, "host"), "--cache-dir", os.path.join(work, "cache")]
    + ["fleet", "host", "--id", "bench", "--clock", "replay", "--capacity", str(people)],
    stdout=subprocess.DEVNULL,
    stderr=open(log, "w"),
    env=env,
)
try:
    wait_for(log, "host_start", 1, 120)
    time.sleep(5)
    idle_rss = rss_mib(host.pid)
    for i in range(people):
        subprocess.run(
            base + ["fleet", "enrol", "--person", f"bench/p{i:05}", "--seed", str(i), day_path],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    wait_for(log, "hold", people, 300)
    held_rss = rss_mib(host.pid)
    cpu_before = cpu_seconds(host.pid)
    server_before = cpu_seconds(server.pid)
    started = time.time()
    lines = "".join(json.dumps(s) + "\n" for s in signals)
    for i in range(people):
        subprocess.run(
            base + ["fleet", "send", "--person", f"bench/p{i:05}"],
            input=lines.encode(),
            check=True,
            stdout=subprocess.DEVNULL,
        )
    # Every signal taken into its person's life: each session is alive with its day so far.
    wait_for(log, ("taken", "refused"), people * len(signals), 900)
    alive_rss = rss_mib(host.pid)
    for i in range(people):
        subprocess.run(
            base + ["fleet", "send", "--person", f"bench/p{i:05}", "--end"],
            input=b"",
            check=True,
            stdout=subprocess.DEVNULL,
        )
    wait_for(log, "day_finished", people, 900)
    elapsed = time.time() - started
    cpu = cpu_seconds(host.pid) - cpu_before
    server_cpu = cpu_seconds(server.pid) - server_before
    # Held, their days over: what holding costs (a lease renewal a second, an idle inbox).
    idle_before, server_idle_before = cpu_seconds(host.pid), cpu_seconds(server.pid)
    time.sleep(30)
    holding = (cpu_seconds(host.pid) - idle_before) / 30 / people
    server_holding = (cpu_seconds(server.pid) - server_idle_before) / 30 / people
    # A day's CPU spread over its 86,400 s, and holding the person all along.
    per_day = cpu / people
    served = int(2 * 0.5 / (per_day / 86400 + holding))
    per_person_mib = (alive_rss - idle_rss) / people
    print(f"people: {people} whole days on one host (--clock replay), {elapsed:.1f} s wall")
    print(f"host CPU for the days: {cpu:.1f} s -> {per_day:.2f} CPU s per person-day")
    print(
        f"host RSS: {idle_rss:.1f} MiB idle, {held_rss:.1f} MiB with {people} held, "
        f"{alive_rss:.1f} MiB with {people} sessions alive -> {per_person_mib:.2f} MiB per live person"
    )
    print(f"nats-server CPU for the days: {server_cpu:.1f} s -> {server_cpu / people:.2f} CPU s per person-day")
    print(
        f"holding a person (renewals, an idle inbox): {holding * 1000:.2f} ms CPU per second on the host, "
        f"{server_holding * 1000:.2f} ms on the nats-server"
    )
    time.sleep(3 * STORE_SYNC_S)
    stored = sum(
        os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(work, "js")) for f in fs
    )
    print(f"JetStream store after the days: {stored / 1024 / 1024:.1f} MiB -> {stored / people / 1024:.0f} KiB per person-day")
    streams = {}
    for d, _, fs in os.walk(os.path.join(work, "js")):
        parts = os.path.relpath(d, os.path.join(work, "js")).split(os.sep)
        # <store>/jetstream/<account>/streams/<stream>/msgs/<block>.blk
        name = parts[3] if len(parts) > 3 and parts[2] == "streams" else "other"
        streams[name] = streams.get(name, 0) + sum(os.path.getsize(os.path.join(d, f)) for f in fs)
    import urllib.request

    jsz = json.load(urllib.request.urlopen(f"http://127.0.0.1:{monitor}/jsz?streams=true"))
    held = {
        stream["name"]: (stream["state"]["messages"], stream["state"]["bytes"])
        for account in jsz.get("account_details", [])
        for stream in account.get("stream_detail", [])
    }
    print("  held (messages, MiB): " + ", ".join(f"{n} {m} {b / 1024 / 1024:.1f}" for n, (m, b) in sorted(held.items())))
    print("  by stream: " + ", ".join(f"{n} {b / 1024 / 1024:.1f} MiB" for n, b in sorted(streams.items(), key=lambda x: -x[1])))
    print(
        f"at the day's own pace, 2 cores at 50%: {served} people per host, "
        f"{idle_rss + served * per_person_mib:.0f} MiB resident"
    )
finally:
    host.terminate()
    host.wait()
    server.terminate()
    server.wait()
    # Its store and the host's data dirs (hundreds of MiB a run) go with the run.
    shutil.rmtree(work, ignore_errors=True)
