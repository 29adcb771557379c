// One traced MCP call as an instrumented LLM client makes it: the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.32) spawns `aura ... mcp` over stdio and calls one tool with
// `_meta.traceparent` (W3C trace context), then the same tool with none. Run by
// tests/all/telemetry.rs: `node traced_call.mjs <config.json>`; prints both results as one
// JSON line. Closing the client ends the server, which then flushes its spans.

import { readFileSync } from 'node:fs';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const client = new Client({ name: 'aura-traced-call', version: '1.0.0' }, { capabilities: {} });
await client.connect(
    new StdioClientTransport({
        command: config.aura,
        args: [...config.aura_args, 'mcp'],
        stderr: 'inherit',
    }),
);
const traced = await client.callTool({
    name: config.tool,
    arguments: config.arguments,
    _meta: { traceparent: config.traceparent },
});
const untraced = await client.callTool({ name: config.tool, arguments: config.arguments });
await client.close();
console.log(JSON.stringify({ traced, untraced }));
