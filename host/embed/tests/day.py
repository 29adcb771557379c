"""The C ABI from Python (ctypes), as an app on a desktop would load it: open an assistant
over a recorded day (replayed clock), push every signal, count the decisions the callback
gets, end the input and close. Prints one JSON line: the acknowledgements, the refusals, the
decisions and the summary.

Usage: python3 day.py LIBRARY CONFIG_JSON SIGNALS_JSONL
"""

import ctypes
import json
import sys
import time
import threading

library, config, signals = sys.argv[1], sys.argv[2], sys.argv[3]
aura = ctypes.CDLL(library)
DECISION = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)
aura.aura_open.restype = ctypes.c_void_p
aura.aura_open.argtypes = [ctypes.c_char_p, DECISION, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
aura.aura_push.restype = ctypes.c_int32
aura.aura_push.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
aura.aura_push_read.restype = ctypes.c_int32
aura.aura_push_read.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                ctypes.POINTER(ctypes.c_void_p)]
aura.aura_positions.restype = ctypes.c_int32
aura.aura_positions.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
aura.aura_end_input.argtypes = [ctypes.c_void_p]
aura.aura_close.restype = ctypes.c_int32
aura.aura_close.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)]
aura.aura_string_free.argtypes = [ctypes.c_void_p]

decisions = []
lock = threading.Lock()


@DECISION
def on_decision(user, text):
    with lock:
        decisions.append(json.loads(text.decode()))


def taken(pointer):
    """The library's string as text, freed."""
    text = ctypes.cast(pointer, ctypes.c_char_p).value.decode()
    aura.aura_string_free(pointer)
    return json.loads(text)


error = ctypes.c_void_p()
assistant = aura.aura_open(config.encode(), on_decision, None, ctypes.byref(error))
if not assistant:
    sys.exit("open: " + json.dumps(taken(error)))
acks, refused, retried = 0, 0, 0
with open(signals) as lines:
    for line in lines:
        # As an app does with recovery.v1: told to retry (past the rate bound), it waits as
        # long as it is told and pushes the same signal again.
        while True:
            reply = ctypes.c_void_p()
            status = aura.aura_push(assistant, line.strip().encode(), ctypes.byref(reply))
            answer = taken(reply)
            recovery = (answer.get("refused") or {}).get("recovery", {})
            if status != 0 and recovery.get("action") == "retry":
                retried += 1
                time.sleep(recovery["retry_after_ms"] / 1000)
                continue
            break
        if status == 0 and answer["ack"]["seq"] == acks:
            acks += 1
        else:
            refused += 1
# A source that read nothing new moves its position alone (told to retry past the rate bound,
# it waits and sends it again, as above); it reads it back.
while True:
    reply = ctypes.c_void_p()
    moved = aura.aura_push_read(assistant, b"", b"mail", b"1700000000:4242", ctypes.byref(reply))
    moved_answer = taken(reply)
    recovery = (moved_answer.get("refused") or {}).get("recovery", {})
    if moved != 0 and recovery.get("action") == "retry":
        time.sleep(recovery["retry_after_ms"] / 1000)
        continue
    break
reply = ctypes.c_void_p()
status = aura.aura_positions(assistant, ctypes.byref(reply))
positions = taken(reply) if status == 0 else {"status": status}
aura.aura_end_input(assistant)
summary = ctypes.c_void_p()
closed = aura.aura_close(assistant, 1, ctypes.byref(summary))
summary = taken(summary)
with lock:
    ids = [d["id"] for d in decisions]
print(json.dumps({"acks": acks, "refused": refused, "retried": retried, "closed": closed, "decisions": len(ids),
                  "distinct": len(set(ids)), "summary": summary, "moved": [moved, moved_answer],
                  "positions": positions}))
