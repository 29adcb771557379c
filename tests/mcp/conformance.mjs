// aura's MCP server driven by the official TypeScript SDK clients, as an MCP client user runs
// them: @modelcontextprotocol/sdk 1.32 (protocol 2025-11-25, `initialize`) or
// @modelcontextprotocol/client 2.4 pinned to 2026-07-28 (stateless, `server/discover`), over
// stdio (the client spawns `aura mcp`) or streamable HTTP (`aura serve`, started by the Rust
// test). Run by tests/all/mcp.rs: `node conformance.mjs <config.json>`; every check is an
// assertion, and what the Rust side compares with the quarantine log is printed as JSON.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const MODERN = config.client === 'v2';

const sdk = MODERN
    ? {
          ...(await import('@modelcontextprotocol/client')),
          ...(await import('@modelcontextprotocol/client/stdio')),
      }
    : {
          ...(await import('@modelcontextprotocol/sdk/client/index.js')),
          ...(await import('@modelcontextprotocol/sdk/client/stdio.js')),
          ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
          ...(await import('@modelcontextprotocol/sdk/types.js')),
      };

/** A connected client. `answer` is how the test user answers a confirmation form
 * ({action, content}), or null for a client that declares no elicitation. */
async function connect(answer = null, asked = []) {
    const capabilities = answer ? { elicitation: { form: {} } } : {};
    const options = MODERN
        ? { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } }
        : { capabilities };
    const client = new sdk.Client({ name: 'aura-conformance', version: '1.0.0' }, options);
    if (answer) {
        const handler = async (request) => {
            asked.push(request.params);
            return answer;
        };
        if (MODERN) client.setRequestHandler('elicitation/create', handler);
        else client.setRequestHandler(sdk.ElicitRequestSchema, handler);
    }
    const transport =
        config.transport === 'stdio'
            ? new sdk.StdioClientTransport({
                  command: config.aura,
                  args: [...config.aura_args, 'mcp'],
                  stderr: 'inherit',
              })
            : new sdk.StreamableHTTPClientTransport(
                  new URL(config.url),
                  // A bearer token, as a client configured with one sends it on every request.
                  config.token
                      ? { requestInit: { headers: { Authorization: `Bearer ${config.token}` } } }
                      : undefined,
              );
    await client.connect(transport);
    return client;
}

const out = { refusals: [] };
const client = await connect();
if (MODERN) assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
else assert.equal(client.getServerVersion().name, 'aura');

// tools/list: one tool per catalogue entry, each schema exactly its file.
const listed = await client.listTools();
const tools = listed.tools;
const names = tools.map((t) => t.name).sort();
assert.deepEqual(names, [...config.tools].sort());
for (const tool of tools) {
    const [agent, name] = tool.name.split('.');
    const file = (kind) =>
        JSON.parse(readFileSync(join(config.schemas_dir, agent, `${name}.${kind}.json`), 'utf8'));
    assert.deepEqual(tool.inputSchema, file('args'), tool.name);
    assert.deepEqual(tool.outputSchema, file('result'), tool.name);
    assert.equal(tool.title, `${agent}: ${name.replaceAll('_', ' ')}`);
    assert.ok(tool.description.length > 40, tool.name);
    const confirm = config.confirm_required.includes(tool.name);
    assert.equal(tool.annotations.readOnlyHint, !confirm, tool.name);
    assert.equal(tool.annotations.openWorldHint, false, tool.name);
}
if (MODERN) {
    // 2026-07-28 caching: a locked list, the same for everyone, for an hour.
    assert.equal(listed.ttlMs, 3600000);
    assert.equal(listed.cacheScope, 'public');
}

// Every example call of docs/using.md: a result the client checked against the tool's outputSchema, and a
// text block holding the same object as canonical JSON.
for (const { name, args } of config.examples) {
    if (config.confirm_required.includes(name)) continue; // below, with a user to ask
    const result = await client.callTool({ name, arguments: args });
    assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result)}`);
    assert.equal(typeof result.structuredContent, 'object');
    assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent, name);
}

// The failure a refused call answers: recovery.v1 as text (both revisions) and as
// structuredContent (2026-07-28; 2025-11-25 clients check structuredContent against the
// tool's outputSchema even on an error, so they get the text alone).
function failureOf(result, what) {
    assert.equal(result.isError, true, `${what}: ${JSON.stringify(result)}`);
    const failure = JSON.parse(result.content[0].text);
    if (MODERN) assert.deepEqual(result.structuredContent, failure, what);
    else assert.equal(result.structuredContent, undefined, what);
    return failure;
}

// A bad call per constraint kind: the right field and constraint, worked out by hand from
// the schemas.
const baselines = { hrv_ms: 60, resting_hr_bpm: 58, sleep_minutes: 450 };
const message = { sender: 'ann@example.com', subject: 'Budget', body: 'Can we meet?' };
const event = (patch) => ({ id: 'standup', start: '2026-11-23T09:00:00Z', end: '2026-11-23T09:30:00Z', ...patch });
const slots = (hours) => ({ working_hours: hours, utc_offset_minutes: 60, duration_minutes: 30,
    from: '2026-11-23T08:00:00+01:00', horizon_days: 7 });
const bad = [
    ['wellness.stress_score', { readings: { hrv_ms: 42 } },
        [{ field: '/baselines', constraint: 'missing_field' }]],
    ['wellness.stress_score', { readings: { hrv_ms: 42 }, baselines, mood: 'fine' },
        [{ field: '/mood', constraint: 'unknown_field' }]],
    ['wellness.stress_score', { readings: { hrv_ms: '42' }, baselines },
        [{ field: '/readings/hrv_ms', constraint: 'invalid_field_type', expected_type: 'integer', actual_type: 'string' }]],
    ['comms.draft_reply', { message, intent: 'maybe', tone: 'friendly' },
        [{ field: '/intent', constraint: 'invalid_enum_value', allowed: ['accept', 'decline', 'defer', 'ask_details'] }]],
    ['calendar.detect_conflicts', { events: [event({ start: 'tomorrow at 9' })] },
        [{ field: '/events/0/start', constraint: 'invalid_format', format: 'date-time' }]],
    ['calendar.find_free_slots', slots({ start: '09-00', end: '17:00' }),
        [{ field: '/working_hours/start', constraint: 'invalid_pattern', pattern: '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$' }]],
    ['wellness.stress_score', { readings: { sleep_minutes: 1441 }, baselines },
        [{ field: '/readings/sleep_minutes', constraint: 'invalid_range', maximum: 1440 }]],
    ['calendar.detect_conflicts', { events: [event({ id: '' })] },
        [{ field: '/events/0/id', constraint: 'invalid_length', min_length: 1 }]],
];
for (const [name, args, issues] of bad) {
    const failure = failureOf(await client.callTool({ name, arguments: args }), name);
    assert.equal(failure.kind, 'schema_error', name);
    assert.equal(failure.phase, 'args', name);
    assert.equal(failure.recovery.action, 'correct_call', name);
    assert.deepEqual(failure.recovery.issues, issues, name);
    assert.equal(typeof failure.recovery.example, 'object', `${name}: an example to follow`);
    out.refusals.push(failure);
}
// The deadline from _meta: out of toolcall.v1's range is an envelope correction; in range runs.
const stress = config.examples.find((e) => e.name === 'wellness.stress_score').args;
const late = failureOf(
    await client.callTool({ name: 'wellness.stress_score', arguments: stress, _meta: { 'dev.aura/deadlineMs': 5 } }),
    'deadline 5 ms',
);
assert.equal(late.phase, 'envelope');
assert.deepEqual(late.recovery.issues, [{ field: '/deadline_ms', constraint: 'invalid_range', minimum: 50 }]);
out.refusals.push(late);
const timed = await client.callTool({
    name: 'wellness.stress_score',
    arguments: stress,
    _meta: { 'dev.aura/deadlineMs': 2000, traceparent: config.traceparent },
});
assert.notEqual(timed.isError, true);
// A tool the catalogue does not have: the spec's JSON-RPC error, -32602.
await assert.rejects(client.callTool({ name: 'calendar.delete_everything', arguments: {} }), (error) => {
    assert.equal(error.code, -32602);
    assert.match(error.message, /Unknown tool: calendar\.delete_everything/);
    return true;
});

// Confirmation through the client: schedule_event never runs unasked.
const schedule = config.examples.find((e) => e.name === 'calendar.schedule_event').args;
const unasked = failureOf(await client.callTool({ name: 'calendar.schedule_event', arguments: schedule }), 'no elicitation');
assert.equal(unasked.kind, 'confirmation_unavailable');
assert.equal(unasked.recovery.action, 'finish');
assert.match(unasked.message, /did not declare form elicitation/);
await client.close();

for (const [answer, kind] of [
    [{ action: 'accept', content: { approve: true } }, null],
    [{ action: 'accept', content: { approve: false } }, 'declined'],
    [{ action: 'decline' }, 'declined'],
    [{ action: 'cancel' }, 'cancelled'],
]) {
    const asked = [];
    const user = await connect(answer, asked);
    await user.listTools();
    const result = await user.callTool({ name: 'calendar.schedule_event', arguments: schedule });
    assert.equal(asked.length, 1, 'asked once');
    assert.match(asked[0].message, /Add " Dentist " 2026-11-23T14:00:00\+01:00 to 2026-11-23T14:45:00\+01:00\?/);
    assert.equal(asked[0].requestedSchema.properties.approve.type, 'boolean');
    assert.deepEqual(asked[0].requestedSchema.required, ['approve']);
    if (kind === null) {
        assert.notEqual(result.isError, true, JSON.stringify(result));
        assert.equal(result.structuredContent.event.title, 'Dentist');
    } else {
        const failure = failureOf(result, JSON.stringify(answer));
        assert.equal(failure.kind, kind);
        assert.equal(failure.recovery.action, 'finish');
        assert.match(failure.message, /nothing ran/);
    }
    await user.close();
}

if (config.transport === 'http') {
    // 200 concurrent calls, every answer the one a call alone gets.
    const many = await connect();
    await many.listTools();
    const slotsExample = config.examples.find((e) => e.name === 'calendar.find_free_slots').args;
    const variants = Array.from({ length: 20 }, (_, i) => ({ ...slotsExample, duration_minutes: 15 + 5 * i }));
    const expected = [];
    for (const args of variants) {
        expected.push((await many.callTool({ name: 'calendar.find_free_slots', arguments: args })).structuredContent);
    }
    const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
            many.callTool({ name: 'calendar.find_free_slots', arguments: variants[i % 20] }),
        ),
    );
    answers.forEach((answer, i) => assert.deepEqual(answer.structuredContent, expected[i % 20], `call ${i}`));
    await many.close();
    out.concurrent_calls = answers.length;
}
console.log(JSON.stringify(out));
