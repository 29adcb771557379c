"""aura's Python guest SDK: an agent is its tool functions.

What `aura_sdk::agent!` is for a Rust agent, `aura_sdk.agent(...)` is here: it makes the class
componentize-py exports for the `aura:agent/agent` world (wit/agent.wit) from

- the agent's name and version (its manifest),
- its tools, each a plain function `tool(args: dict) -> dict` (args already checked by the host
  against the tool's args schema; the result is checked against its result schema on the way
  out), raising `ToolError` for what the agent itself reports (reply.v1 `ok: false`),
- its tick, `tick(context: dict) -> dict` (`{"proposals": [...]}`), given only the context
  members it reads.

`call` and `emit` wrap the host's imports: another agent's tool through the host (always a
result.v1 back, never an exception for a refusal) and one structured event into the trace.
Nothing here reads a clock or a random source: an agent is a function of its input.
"""

import json

from . import time  # noqa: F401  (re-exported: aura_sdk.time)
from . import hours, round  # noqa: F401  (re-exported: aura_sdk.hours, aura_sdk.round)
from .contract import (CALL_ID_SUFFIX_CHARS, PRIORITY_MAX, REPLY_ERROR_KINDS,
                       REPLY_MESSAGE_CHARS_MAX, SIGNALS_MAX, TOOLS)

try:
    # Imported here, not where it is used: componentize-py bundles what the app imports when
    # it builds the component (a module first imported during a call is not there).
    from wit_world.imports import host as _host
except ImportError:  # natively, outside a component: there is no host to call
    _host = None

#: reply.v1's error kinds an agent may report (the schema's, through `contract`).
ERROR_KINDS = REPLY_ERROR_KINDS

#: reply.v1 caps an error message at this many characters (the schema's, through `contract`).
MESSAGE_CHARS_MAX = REPLY_MESSAGE_CHARS_MAX


class ToolError(Exception):
    """What a tool reports instead of a result: reply.v1 `{"ok": false, "error": ...}`."""

    def __init__(self, kind: str, message: str):
        if kind not in ERROR_KINDS:
            raise ValueError(f"not a reply.v1 error kind: {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.message = message[:MESSAGE_CHARS_MAX]

    @classmethod
    def invalid_args(cls, message: str) -> "ToolError":
        """The args passed their schema but do not make sense together (or out of range)."""
        return cls("invalid_args", message)

    @classmethod
    def failed(cls, message: str) -> "ToolError":
        """The tool could not do its work."""
        return cls("failed", message)

    def as_json(self) -> dict:
        return {"kind": self.kind, "message": self.message}


def canonical(value) -> str:
    """RFC 8785 text of what agents write: objects, arrays, strings, integers, booleans, null
    (no floats: agents compute in integers), keys sorted (by code point, which is RFC 8785's
    UTF-16 order for keys inside the BMP, the only keys agents write)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


_text = canonical


def quoted(text: str) -> str:
    """`text` in double quotes, escaped: how the Rust agents quote a value in a message."""
    return json.dumps(text, ensure_ascii=False)

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def call_id_from(seed: str) -> str:
    """The call_id every aura agent derives from `seed` (FNV-1a 64 of its UTF-8, written in
    base 36 from the low digit): the same seed, the same id, in any language."""
    hash_ = 0xCBF29CE484222325
    for byte in seed.encode("utf-8"):
        hash_ = ((hash_ ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    digits = []
    for _ in range(CALL_ID_SUFFIX_CHARS):
        digits.append(_ALPHABET[hash_ % 36])
        hash_ //= 36
    return "t_" + "".join(digits)


def tool_call(seed: str, agent: str, tool: str, args: dict, ts: str, deadline_ms=None) -> dict:
    """A toolcall.v1 envelope whose call_id derives from `seed` (agents have no clock and no
    randomness: `ts` is the instant the call is about)."""
    envelope = {"call_id": call_id_from(seed), "agent": agent, "tool": tool, "args": args,
                "ts": ts, "confirm_required": False}
    if deadline_ms is not None:
        envelope["deadline_ms"] = deadline_ms
    return envelope


def reply(outcome) -> str:
    """reply.v1 text for a result (a dict) or a ToolError."""
    if isinstance(outcome, ToolError):
        return _text({"ok": False, "error": outcome.as_json()})
    return _text({"ok": True, "result": outcome})


def check_range(value, field: str, low, high) -> None:
    """`value` within `low..=high`, or invalid_args naming the field (as the Rust SDK says it)."""
    if value < low or value > high:
        raise ToolError.invalid_args(f"{field}: {value} is outside {low}..{high}")


def check_len(items, field: str, most: int) -> None:
    """At most `most` items, or invalid_args."""
    if len(items) > most:
        raise ToolError.invalid_args(f"{field}: at most {most} items, got {len(items)}")



def capped(signals: list) -> list:
    """At most SIGNALS_MAX signals: past it, the first 15 and `more:<the rest>`."""
    if len(signals) <= SIGNALS_MAX:
        return list(signals)
    kept = SIGNALS_MAX - 1
    return list(signals[:kept]) + [f"more:{len(signals) - kept}"]


def proposal(call: dict, signals: list, priority: int) -> dict:
    """One proposals.v1 proposal: the call, its signals (capped), its priority (0..100)."""
    return {"call": call, "signals": capped(signals),
            "priority": max(0, min(PRIORITY_MAX, priority))}


def call(envelope: dict) -> dict:
    """Sends a toolcall.v1 envelope (see `tool_call`) to another agent through the host (the
    catalogue must allow it): the result.v1 it answers, `ok` or not. A refusal is data here,
    never an exception."""
    if _host is None:
        raise ToolError.failed("agent-to-agent calls need the aura host (not available natively)")
    answer = _host.call(canonical(envelope))
    try:
        return json.loads(answer)
    except ValueError as error:
        raise ToolError.failed(f"host answered with invalid JSON: {error}") from None


def emit(event: dict) -> None:
    """One structured event (`kind` and fields) into the host's trace."""
    if _host is not None:
        _host.emit(canonical(event))


def agent(name: str, version: str, tools: dict, tick, tick_reads):
    """The class componentize-py exports: assign it to `WitWorld` in the app module."""
    import wit_world

    if sorted(tools) != sorted(TOOLS.get(name, ())):
        raise ValueError(f"the tools of {name!r} are not those its schemas/ dir names: "
                         f"{sorted(tools)} against {sorted(TOOLS.get(name, ()))}")
    manifest = _text({"name": name, "tools": list(tools), "version": version})

    class Agent(wit_world.WitWorld):
        def manifest(self) -> str:
            return manifest

        def invoke(self, call: str) -> str:
            try:
                envelope = json.loads(call)
                tool = tools.get(envelope.get("tool"))
                if tool is None:
                    raise ToolError("unknown_tool", f"this agent has no tool `{envelope.get('tool')}`")
                return reply(tool(envelope.get("args", {})))
            except ToolError as error:
                return reply(error)
            except (ValueError, KeyError, TypeError) as error:
                return reply(ToolError.invalid_args(f"args do not match the tool: {error}"))

        def tick(self, context: str) -> str:
            try:
                whole = json.loads(context)
                if not isinstance(whole, dict):
                    raise ToolError.invalid_args("tick context: expected a JSON object")
                answer = tick({k: v for k, v in whole.items() if k in tick_reads})
            except ToolError as error:
                emit({"kind": "tick.failed", "error": error.as_json()})
                return '{"proposals":[]}'
            return _text(answer)

    return Agent
