// The MCP round trip with bearer-token checking against without, side by side (`just
// bench-tokens`; figures in BENCHMARKS.md): the official TypeScript client
// (@modelcontextprotocol/sdk 1.32.2) calling wellness.stress_score on several `aura serve`s,
// one call to each in turn, so that every target sees the same machine at the same moment.
//
//   node bench-tokens.mjs '[{"name":"open","url":…},{"name":"token","url":…,"token":…},…]' [calls]
//
// Prints one JSON object: p50/p99 (µs) per target, and each target's p50 over the first's.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { percentiles } from './percentiles.mjs';

const targets = JSON.parse(process.argv[2]);
const CALLS = Number(process.argv[3] ?? 2000);
const WARMUP = 200;
const ARGS = {
    readings: { hrv_ms: 42, resting_hr_bpm: 65, sleep_minutes: 360 },
    baselines: { hrv_ms: 60, resting_hr_bpm: 58, sleep_minutes: 450 },
};

async function connect(target) {
    const client = new Client({ name: 'aura-bench-tokens', version: '1.0.0' });
    const headers = target.token ? { Authorization: `Bearer ${target.token}` } : {};
    await client.connect(
        new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers } }),
    );
    await client.listTools();
    return client;
}

const clients = [];
for (const target of targets) clients.push(await connect(target));
const call = async (client) => {
    const result = await client.callTool({ name: 'wellness.stress_score', arguments: ARGS });
    if (result.isError) throw new Error(JSON.stringify(result));
};
for (let i = 0; i < WARMUP; i++) for (const client of clients) await call(client);
const samples = targets.map(() => []);
for (let i = 0; i < CALLS; i++) {
    for (const [at, client] of clients.entries()) {
        const started = process.hrtime.bigint();
        await call(client);
        samples[at].push(Number(process.hrtime.bigint() - started) / 1000);
    }
}
const report = { calls: CALLS, targets: {} };
const first = percentiles(samples[0]);
for (const [at, target] of targets.entries()) {
    const measured = percentiles(samples[at]);
    report.targets[target.name] = {
        ...measured,
        p50_over_first: Number((measured.p50_us / first.p50_us).toFixed(3)),
    };
}
await Promise.all(clients.map((c) => c.close()));
console.log(JSON.stringify(report));
