// Side-by-side MCP benchmark, aura against Wassette (`bench/wassette/run`; figures in
// BENCHMARKS.md). One official TypeScript client (@modelcontextprotocol/sdk 1.32.2) drives both
// servers over stdio in one run, on the same machine, with the same calendar logic:
//
// - aura: `aura mcp`, tool `calendar.find_free_slots` (toolcall.v1 envelope built by the host,
//   args schema, sandbox with fuel, result schema, canonical JSON, structuredContent);
// - Wassette: `wassette serve --stdio` over a plugin dir holding calendar-peer.wasm, the same
//   `calendar_agent::free_slots::find_free_slots` exported as `find-free-slots(args: string)`.
//
//   node bench-wassette.mjs <aura> <aura-data-dir> <wassette> <wassette-plugin-dir> [calls]
//
// Both answers are first checked to be the same result object. Then, per server: round-trip
// p50/p99 of that call one at a time, measured in alternating blocks of BLOCK calls (A then B,
// then B then A, ...) so that drift on the machine hits both alike; the framing floor (a call
// of an unknown tool); start-up to the first `tools/list` answer; calls/s with 8 clients, each
// its own server process; and the peak RSS of the server process. aura is measured twice, the
// second time by a client that never listed the tools (see `aura_unvalidated`). Prints one
// JSON object.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { percentiles } from './percentiles.mjs';

const [aura, auraData, wassette, wassetteDir, callsArg] = process.argv.slice(2);
const CALLS = Number(callsArg ?? 2000);
const BLOCK = 100;
const WARMUP = 200;
const STARTS = 10;
const CLIENTS = 8;
const THROUGHPUT_MS = 5000;
// docs/using.md's find_free_slots example (the args schema's first example).
const ARGS = {
    busy: [
        { id: 'standup', start: '2026-11-23T10:00:00+01:00', end: '2026-11-23T11:00:00+01:00' },
        { start: '2026-11-24T12:00:00Z', end: '2026-11-24T13:30:00Z' },
    ],
    working_hours: { start: '09:00', end: '17:00', weekdays: [1, 2, 3, 4, 5] },
    utc_offset_minutes: 60,
    duration_minutes: 30,
    buffer_minutes: 15,
    from: '2026-11-23T08:00:00+01:00',
    horizon_days: 7,
    max_slots: 10,
};

const servers = {
    aura: {
        spawn: () => ({ command: aura, args: ['--data-dir', auraData, 'mcp'] }),
        tool: 'calendar.find_free_slots',
        args: ARGS,
        // The result object, from structuredContent.
        result: (answer) => answer.structuredContent,
    },
    // The same aura, called by a client that never listed the tools, so it has no outputSchema
    // to check structuredContent against (Wassette declares none, so its client checks nothing):
    // the client's own validation, taken out of the comparison.
    aura_unvalidated: {
        spawn: () => ({ command: aura, args: ['--data-dir', auraData, 'mcp'] }),
        tool: 'calendar.find_free_slots',
        list: false,
        args: ARGS,
        result: (answer) => answer.structuredContent,
    },
    wassette: {
        spawn: () => ({
            command: wassette,
            args: ['serve', '--stdio', '--plugin-dir', wassetteDir],
            env: { ...process.env, RUST_LOG: 'off' },
        }),
        tool: null, // found in tools/list: the export's name
        args: { args: JSON.stringify(ARGS) },
        // result<string, string> comes back as text: the ok string (the canonical result) or
        // a wrapper around it, depending on how Wassette renders a WIT result.
        result: (answer) => {
            let value = JSON.parse(answer.content[0].text);
            if (value && typeof value === 'object' && 'ok' in value) value = value.ok;
            if (value && typeof value === 'object' && 'Ok' in value) value = value.Ok;
            return typeof value === 'string' ? JSON.parse(value) : value;
        },
    },
};

async function connect(name) {
    const server = servers[name];
    const transport = new StdioClientTransport({ ...server.spawn(), stderr: 'ignore' });
    const client = new Client({ name: 'aura-bench', version: '1.0.0' });
    await client.connect(transport);
    if (server.list === false) return { client, pid: transport.pid };
    const { tools } = await client.listTools();
    if (server.tool === null) {
        const tool = tools.find((t) => t.name.endsWith('find-free-slots'));
        if (!tool) throw new Error(`${name} lists no find-free-slots: ${JSON.stringify(tools)}`);
        server.tool = tool.name;
    }
    return { client, pid: transport.pid };
}

const call = (name, client) => client.callTool({ name: servers[name].tool, arguments: servers[name].args });
const framing = (name, client) =>
    client.callTool({ name: 'no-such-tool', arguments: {} }).then(
        (answer) => {
            if (!answer.isError) throw new Error(`${name} answered an unknown tool`);
        },
        () => {},
    );

// Rotating blocks (A B C, B C A, C A B, ...) until each has `CALLS` samples.
async function interleaved(connected, once) {
    const names = Object.keys(connected);
    const samples = Object.fromEntries(names.map((n) => [n, []]));
    for (const name of names) for (let i = 0; i < WARMUP; i++) await once(name, connected[name].client);
    for (let block = 0; block * BLOCK < CALLS; block++) {
        const order = names.map((_, i) => names[(i + block) % names.length]);
        for (const name of order) {
            for (let i = 0; i < BLOCK; i++) {
                const started = process.hrtime.bigint();
                await once(name, connected[name].client);
                samples[name].push(Number(process.hrtime.bigint() - started) / 1000);
            }
        }
    }
    return Object.fromEntries(names.map((n) => [n, percentiles(samples[n])]));
}

async function startups() {
    const samples = { aura: [], wassette: [] };
    for (let i = 0; i < STARTS; i++) {
        for (const name of i % 2 === 0 ? ['aura', 'wassette'] : ['wassette', 'aura']) {
            const started = process.hrtime.bigint();
            const { client } = await connect(name);
            samples[name].push(Number(process.hrtime.bigint() - started) / 1000);
            await client.close();
        }
    }
    const ms = (s) => {
        const p = percentiles(s);
        return { p50_ms: +(p.p50_us / 1000).toFixed(1), n: p.n };
    };
    return { aura: ms(samples.aura), wassette: ms(samples.wassette) };
}

async function throughput(name) {
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connect(name)));
    for (const { client } of clients) for (let i = 0; i < 50; i++) await call(name, client);
    let done = 0;
    const until = Date.now() + THROUGHPUT_MS;
    const started = process.hrtime.bigint();
    await Promise.all(
        clients.map(async ({ client }) => {
            while (Date.now() < until) {
                const answer = await call(name, client);
                if (answer.isError) throw new Error(`${name}: ${JSON.stringify(answer)}`);
                done++;
            }
        }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await Promise.all(clients.map(({ client }) => client.close()));
    return { clients: CLIENTS, calls: done, calls_per_s: Math.round(done / seconds) };
}

const peakRssKiB = (pid) =>
    Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

const connected = {
    aura: await connect('aura'),
    aura_unvalidated: await connect('aura_unvalidated'),
    wassette: await connect('wassette'),
};

// The same answer from both, or the comparison means nothing.
const answers = {};
for (const name of Object.keys(connected)) {
    const answer = await call(name, connected[name].client);
    if (answer.isError) throw new Error(`${name} failed the call: ${JSON.stringify(answer)}`);
    answers[name] = servers[name].result(answer);
}
if (JSON.stringify(answers.aura) !== JSON.stringify(answers.wassette) ||
    JSON.stringify(answers.aura) !== JSON.stringify(answers.aura_unvalidated)) {
    throw new Error(`different answers:\naura ${JSON.stringify(answers.aura)}\nwassette ${JSON.stringify(answers.wassette)}`);
}

const round_trip = await interleaved(connected, call);
const framing_floor = await interleaved(connected, framing);
const rss = Object.fromEntries(
    Object.entries(connected).map(([name, { pid }]) => [name, peakRssKiB(pid)]),
);
for (const { client } of Object.values(connected)) await client.close();

const report = { slots_found: answers.aura.slots.length };
for (const name of Object.keys(connected)) {
    report[name] = {
        tool: servers[name].tool,
        round_trip: round_trip[name],
        framing_floor: framing_floor[name],
        beyond_framing_p50_us: round_trip[name].p50_us - framing_floor[name].p50_us,
        peak_rss_kib: rss[name],
    };
}
report.startup_to_tools_list = await startups();
for (const name of ['aura', 'wassette']) report[name].concurrent = await throughput(name);
const ratio = (a, b) => +(a / b).toFixed(2);
report.aura_over_wassette = {
    round_trip_p50: ratio(round_trip.aura.p50_us, round_trip.wassette.p50_us),
    round_trip_p50_client_not_validating: ratio(round_trip.aura_unvalidated.p50_us, round_trip.wassette.p50_us),
    beyond_framing_p50: ratio(report.aura.beyond_framing_p50_us, report.wassette.beyond_framing_p50_us),
    calls_per_s: ratio(report.aura.concurrent.calls_per_s, report.wassette.concurrent.calls_per_s),
};
console.log(JSON.stringify(report, null, 2));
