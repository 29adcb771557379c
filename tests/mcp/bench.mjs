// MCP round-trip benchmark (`just bench-mcp`; figures in BENCHMARKS.md): the official
// TypeScript client (@modelcontextprotocol/sdk 1.32.2, 2025-11-25) calling aura over stdio
// (`aura mcp`, spawned) and over streamable HTTP (`aura serve`, URL given).
//
//   node bench.mjs <aura> <data-dir> <http-url> [calls]
//
// For each transport: p50/p99 of a `tools/call` round trip (wellness.stress_score, the
// example of docs/using.md) one at a time; the same for a call of an unknown tool, which the server
// answers from its tool table without reaching the crossing (the MCP framing floor: client,
// transport, JSON-RPC, rmcp); and calls/s with 8 clients calling at once, each on its own
// connection. Prints one JSON object.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { percentiles } from './percentiles.mjs';

const [aura, dataDir, url, callsArg] = process.argv.slice(2);
const CALLS = Number(callsArg ?? 2000);
const WARMUP = 200;
const CLIENTS = 8;
const THROUGHPUT_MS = 5000;
const ARGS = {
    readings: { hrv_ms: 42, resting_hr_bpm: 65, sleep_minutes: 360 },
    baselines: { hrv_ms: 60, resting_hr_bpm: 58, sleep_minutes: 450 },
};

async function connect(transport) {
    const client = new Client({ name: 'aura-bench', version: '1.0.0' });
    await client.connect(
        transport === 'stdio'
            ? new StdioClientTransport({ command: aura, args: ['--data-dir', dataDir, 'mcp'] })
            : new StreamableHTTPClientTransport(new URL(url)),
    );
    await client.listTools();
    return client;
}

const call = (client) => client.callTool({ name: 'wellness.stress_score', arguments: ARGS });
const framing = (client) =>
    client.callTool({ name: 'wellness.no_such_tool', arguments: {} }).then(
        () => {
            throw new Error('an unknown tool was answered');
        },
        () => {},
    );

async function timed(client, once) {
    for (let i = 0; i < WARMUP; i++) await once(client);
    const samples = [];
    for (let i = 0; i < CALLS; i++) {
        const started = process.hrtime.bigint();
        await once(client);
        samples.push(Number(process.hrtime.bigint() - started) / 1000);
    }
    return percentiles(samples);
}

async function throughput(transport) {
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connect(transport)));
    for (const client of clients) for (let i = 0; i < 50; i++) await call(client);
    let done = 0;
    const until = Date.now() + THROUGHPUT_MS;
    const started = process.hrtime.bigint();
    await Promise.all(
        clients.map(async (client) => {
            while (Date.now() < until) {
                const result = await call(client);
                if (result.isError) throw new Error(JSON.stringify(result));
                done++;
            }
        }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    await Promise.all(clients.map((c) => c.close()));
    return { clients: CLIENTS, calls: done, calls_per_s: Math.round(done / seconds) };
}

const report = {};
for (const transport of ['stdio', 'http']) {
    const client = await connect(transport);
    const round_trip = await timed(client, call);
    const framing_floor = await timed(client, framing);
    await client.close();
    report[transport] = {
        round_trip,
        framing_floor,
        beyond_framing_p50_us: round_trip.p50_us - framing_floor.p50_us,
        concurrent: await throughput(transport),
    };
}
console.log(JSON.stringify(report, null, 2));
