#!/usr/bin/env python3
"""An urgent message during a flood of readings, and a backlog in batches, on `aura live` over
HTTP on the machine's clock (BENCHMARKS.md, "A flood").

    python3 bench/flood.py AURA PLUGINS [--urgent 100] [--gap 0.1] [--readings 20000]
        [--batch 2000] [--flooders 2] [--singles 2000]

Starts `aura live --listen 127.0.0.1:PORT --seed 7` on a live.v1 of scenarios/day.json's
person (every 15 minutes; the offset moved so that it is their early afternoon now) and
follows `GET /decisions`. Then, in one run:

1. quiet: URGENT messages from the person's first VIP, one every GAP seconds, each a POST of
   its own: the time from sending it to reading the decision that names it on the stream
   (median, p99, max, in ms);
2. flood: the same while FLOODERS clients post readings (a watch's backlog, stamped over the
   hours before) in NDJSON batches of BATCH as fast as they are answered, at least READINGS
   and until the last urgent message was decided: the same figures, how many of the urgent
   POSTs were told to retry, and how many readings were taken and refused;
3. ingest: 2,016-reading batches (a week at 5 minutes) posted one after the other, then
   SINGLES readings posted one by one (each waiting for its answer, retrying on 429 after the
   time it names): durable signals acknowledged a second each way.

Prints one JSON object. Linux or macOS; stdlib only.
"""

import argparse
import datetime
import http.client
import json
import os
import queue
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def figures(values):
    if not values:
        return None
    return {
        "count": len(values),
        "p50_ms": round(statistics.median(values), 2),
        "p99_ms": round(percentile(values, 99), 2),
        "max_ms": round(max(values), 2),
    }


class Client:
    """One keep-alive connection to the session."""

    def __init__(self, address):
        host, port = address.split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=120)

    def post(self, body, content_type="application/json"):
        """Posts to /signals until it is not told to retry: (answer, retries)."""
        retries = 0
        while True:
            self.connection.request(
                "POST", "/signals", body=body, headers={"Content-Type": content_type}
            )
            response = self.connection.getresponse()
            answer = json.loads(response.read())
            if response.status == 429:
                retries += 1
                time.sleep(answer["refused"]["recovery"]["retry_after_ms"] / 1000)
                continue
            if response.status != 200:
                raise SystemExit(f"POST answered {response.status}: {answer}")
            return answer, retries


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("aura")
    parser.add_argument("plugins")
    parser.add_argument("--urgent", type=int, default=100)
    parser.add_argument("--gap", type=float, default=0.25)
    parser.add_argument("--readings", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=2_000)
    parser.add_argument("--flooders", type=int, default=2)
    parser.add_argument("--singles", type=int, default=2_000)
    args = parser.parse_args()

    day = json.load(open(os.path.join(ROOT, "scenarios", "day.json")))
    utc = datetime.datetime.now(datetime.timezone.utc)
    offset_minutes = ((13 - utc.hour) % 24) * 60 - utc.minute
    if offset_minutes > 840:
        offset_minutes -= 1440
    offset = datetime.timezone(datetime.timedelta(minutes=offset_minutes))
    work = tempfile.mkdtemp(prefix="aura-flood-")
    setup = os.path.join(work, "live.json")
    json.dump(
        {
            "scenario": "flood",
            "tick_minutes": 15,
            "utc_offset_minutes": offset_minutes,
            "profile": day["profile"],
            "initial": day.get("initial", {}),
        },
        open(setup, "w"),
    )
    process = subprocess.Popen(
        [args.aura, "--data-dir", os.path.join(work, "data"), "--plugins-dir", args.plugins,
         "live", setup, "--seed", "7", "--listen", "127.0.0.1:0"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    address = None
    for line in process.stderr:
        found = re.search(r"live at http://(\S+)", line)
        if found:
            address = found.group(1)
            break
    if address is None:
        raise SystemExit("the session never said where it listens")
    threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()

    # The decisions as they come: each message id they name, with when it was read.
    decided = {}
    decided_lock = threading.Condition()

    def follow():
        stream = socket.create_connection(tuple([address.split(":")[0], int(address.split(":")[1])]))
        stream.sendall(f"GET /decisions HTTP/1.1\r\nHost: {address}\r\n\r\n".encode())
        for raw in stream.makefile("rb"):
            line = raw.strip()
            if not line.startswith(b"{"):
                continue
            read = time.monotonic()
            text = line.decode()
            with decided_lock:
                for found in re.findall(r"m-urgent-[a-z]+-\d+", text):
                    decided.setdefault(found, read)
                decided_lock.notify_all()

    threading.Thread(target=follow, daemon=True).start()
    time.sleep(0.5)
    vip = day["profile"]["vip_senders"][0]

    def urgent_round(phase):
        client = Client(address)
        latencies, retries, missing = [], 0, 0
        for i in range(args.urgent):
            key = f"m-urgent-{phase}-{i}"
            now = datetime.datetime.now(offset).replace(microsecond=0).isoformat()
            message = {"id": key, "kind": "message", "data": {
                "id": key, "thread_id": f"th-{key}", "sender": f"Markus Vogel <{vip}>",
                "subject": "URGENT: settlement batch failed", "received_at": now,
                "body": "The settlement batch failed and payouts are stuck."}}
            sent = time.monotonic()
            _, tried = client.post(json.dumps(message))
            retries += tried
            with decided_lock:
                decided_lock.wait_for(lambda: key in decided, timeout=30)
                if key in decided:
                    latencies.append((decided[key] - sent) * 1000)
                else:
                    missing += 1
            time.sleep(args.gap)
        return latencies, retries, missing

    quiet, quiet_retries, quiet_missing = urgent_round("quiet")

    # The flood: a watch's backlog stamped over the hours before now.
    start = datetime.datetime.now(offset).replace(microsecond=0)
    taken = {"acked": 0, "refused": 0, "retries": 0}
    taken_lock = threading.Lock()
    next_batch = {"from": 0}

    urgent_done = threading.Event()

    def flooder():
        client = Client(address)
        while True:
            with taken_lock:
                first = next_batch["from"]
                if first >= args.readings and urgent_done.is_set():
                    return
                next_batch["from"] = first + args.batch
            lines = []
            for i in range(first, first + args.batch):
                # 10 ms apart, all before now (one stamped ahead would wait for its time).
                at = (start - datetime.timedelta(milliseconds=10**8 - 10 * i)).isoformat()
                lines.append(json.dumps({"at": at, "id": f"flood-{i}", "kind": "reading",
                                         "data": {"hrv_ms": 30 + i % 50}}))
            answer, tried = client.post("\n".join(lines) + "\n", "application/x-ndjson")
            with taken_lock:
                taken["acked"] += answer["acked"]
                taken["refused"] += answer["refused"]
                taken["retries"] += tried

    flood_started = time.monotonic()
    flooders = [threading.Thread(target=flooder) for _ in range(args.flooders)]
    for thread in flooders:
        thread.start()
    during, during_retries, during_missing = urgent_round("flood")
    urgent_done.set()
    for thread in flooders:
        thread.join()
    flood_s = time.monotonic() - flood_started

    # Ingest: week batches one after the other, then one by one.
    client = Client(address)
    week = 2_016
    batches = max(1, args.singles * 5 // week)
    base = datetime.datetime.now(offset).replace(microsecond=0)
    began = time.monotonic()
    batch_acked = 0
    for b in range(batches):
        lines = [json.dumps({"at": (base - datetime.timedelta(seconds=week * batches - b * week - i)).isoformat(),
                             "id": f"week-{b}-{i}", "kind": "reading", "data": {"hrv_ms": 40 + i % 20}})
                 for i in range(week)]
        answer, _ = client.post("\n".join(lines) + "\n", "application/x-ndjson")
        batch_acked += answer["acked"]
    batch_s = time.monotonic() - began
    began = time.monotonic()
    single_retries = 0
    for i in range(args.singles):
        at = (base - datetime.timedelta(seconds=args.singles - i)).isoformat()
        _, tried = client.post(json.dumps({"at": at, "id": f"single-{i}", "kind": "reading",
                                           "data": {"hrv_ms": 40 + i % 20}}))
        single_retries += tried
    single_s = time.monotonic() - began

    process.terminate()
    process.wait(timeout=60)
    days = sorted(os.listdir(os.path.join(work, "data", "days")))
    print(json.dumps({
        "urgent_without_flood": figures(quiet) | {"retried": quiet_retries, "undecided": quiet_missing},
        "urgent_during_flood": figures(during) | {"retried": during_retries, "undecided": during_missing},
        "flood": {"readings_acked": taken["acked"], "refused": taken["refused"],
                  "told_to_retry": taken["retries"], "seconds": round(flood_s, 2),
                  "batch": args.batch, "flooders": args.flooders},
        "ingest_batches": {"signals": batch_acked, "seconds": round(batch_s, 3),
                           "signals_per_s": round(batch_acked / batch_s)},
        "ingest_one_by_one": {"signals": args.singles, "seconds": round(single_s, 3),
                              "signals_per_s": round(args.singles / single_s),
                              "told_to_retry": single_retries},
        "days": days,
    }, indent=1))


if __name__ == "__main__":
    main()
