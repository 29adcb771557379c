// The MCP benchmarks' summary of timed samples (µs): p50 and p99 by nearest rank, and n.
export function percentiles(samples) {
    const sorted = [...samples].sort((a, b) => a - b);
    const rank = (p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
    return { p50_us: Math.round(rank(50)), p99_us: Math.round(rank(99)), n: sorted.length };
}
