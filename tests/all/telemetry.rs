//! Traces across processes, with the real components: an OTLP/HTTP receiver inside the test
//! (a loopback listener that decodes what it receives with opentelemetry-proto; no collector
//! to install), a nats-server, an `aura worker`, and `aura mcp --nats` driven by the official
//! MCP TypeScript SDK over stdio. Both aura processes export with `--otlp`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message;
use serde_json::{Value, json};

use crate::mcp::mcp_dir;
use crate::support::{plugins_dir, shared_cache_dir, temp_dir};
use crate::wire::{NatsServer, Worker};

const AURA: &str = env!("CARGO_BIN_EXE_aura");

/// The caller's trace context: W3C Trace Context §3.2's example.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

/// A span as the receiver decoded it, with its process's resource attributes.
#[derive(Debug, Clone)]
struct Received {
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    name: String,
    attributes: BTreeMap<String, String>,
    resource: BTreeMap<String, String>,
}

/// An OTLP/HTTP receiver on a free loopback port: every POST body is decoded as an
/// ExportTraceServiceRequest (protobuf) and its spans kept; each request is answered 200 with
/// an empty ExportTraceServiceResponse. A body that does not decode fails the test.
struct Receiver {
    url: String,
    spans: Arc<Mutex<Vec<Received>>>,
    refused: Arc<Mutex<Vec<String>>>,
}

impl Receiver {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let spans = Arc::new(Mutex::new(Vec::new()));
        let refused = Arc::new(Mutex::new(Vec::new()));
        let (kept, bad) = (spans.clone(), refused.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (kept, bad) = (kept.clone(), bad.clone());
                std::thread::spawn(move || serve(stream, &kept, &bad));
            }
        });
        Self {
            url,
            spans,
            refused,
        }
    }

    fn spans(&self) -> Vec<Received> {
        let refused = self.refused.lock().unwrap();
        assert!(refused.is_empty(), "the receiver refused: {refused:?}");
        self.spans.lock().unwrap().clone()
    }
}

/// One connection: HTTP/1.1 requests with a Content-Length body, kept alive.
fn serve(stream: TcpStream, kept: &Mutex<Vec<Received>>, refused: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        // A bound for the test's own sake: a day's batch is a few hundred kB.
        assert!(length <= 16 << 20, "an OTLP body of {length} bytes");
        let mut body = vec![0u8; length];
        reader.read_exact(&mut body).unwrap();
        if !request_line.starts_with("POST /v1/traces ") {
            refused.lock().unwrap().push(request_line.clone());
        }
        match ExportTraceServiceRequest::decode(body.as_slice()) {
            Ok(request) => kept.lock().unwrap().extend(spans_of(request)),
            Err(error) => refused.lock().unwrap().push(error.to_string()),
        }
        let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\n\
                      content-length: 0\r\n\r\n";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

fn text_of(value: Option<&AnyValue>) -> String {
    match value.and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

fn map_of(attributes: &[KeyValue]) -> BTreeMap<String, String> {
    attributes
        .iter()
        .map(|kv| (kv.key.clone(), text_of(kv.value.as_ref())))
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn spans_of(request: ExportTraceServiceRequest) -> Vec<Received> {
    let mut spans = Vec::new();
    for resource_spans in request.resource_spans {
        let resource = map_of(
            &resource_spans
                .resource
                .map(|r| r.attributes)
                .unwrap_or_default(),
        );
        for scope in resource_spans.scope_spans {
            for span in scope.spans {
                spans.push(Received {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    name: span.name,
                    attributes: map_of(&span.attributes),
                    resource: resource.clone(),
                });
            }
        }
    }
    spans
}

/// One MCP call through `aura mcp --nats` to a worker is one trace: the caller's trace id on
/// every span of both processes, the MCP request's span under the caller's span, the crossing
/// under it, and the worker's crossing under the client's crossing (the span that sent the
/// request: its id travelled in the NATS `traceparent` header). A call with no traceparent
/// starts a trace of its own, the same across both processes.
#[test]
fn one_mcp_call_through_a_worker_is_one_trace_with_spans_from_both_processes() {
    crate::tools::npm_installed(&mcp_dir(), &["@modelcontextprotocol/sdk"]);
    let receiver = Receiver::start();
    let nats = NatsServer::start("otlp");
    let otlp = ["--otlp", receiver.url.as_str()];
    let worker = Worker::start_with(
        "otlp",
        &nats,
        &plugins_dir(),
        Some("wellness"),
        (crate::locked::Role::Worker, &otlp),
    );
    let data = temp_dir("mcp-otlp");
    // stress_score on these readings is 47, moderate (worked out in tests/all/wellness.rs).
    let arguments = json!({
        "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450},
        "readings": {"hrv_ms": 42, "resting_hr_bpm": 65, "sleep_minutes": 360}
    });
    let config = json!({
        "aura": AURA,
        "aura_args": ["--data-dir", data, "--cache-dir", shared_cache_dir(),
                      "--nats", nats.url, "--otlp", receiver.url],
        "tool": "wellness.stress_score",
        "arguments": arguments,
        "traceparent": TRACEPARENT,
    });
    let output = crate::mcp::run_client("traced_call.mjs", &config, &data);
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let answers: Value = serde_json::from_slice(output.stdout.trim_ascii()).unwrap();
    for answer in [&answers["traced"], &answers["untraced"]] {
        assert_eq!(answer["isError"], false, "{answer}");
        assert_eq!(answer["structuredContent"]["score"], 47, "{answer}");
    }
    // The MCP server ended when the client closed; the worker ends on SIGTERM. Both flushed
    // their spans on the way out.
    worker.stop();
    let spans = receiver.spans();

    let front = |span: &Received| span.resource["aura.front"].clone();
    let in_trace: Vec<&Received> = spans
        .iter()
        .filter(|s| s.trace_id == CALLER_TRACE)
        .collect();
    let request = single(&in_trace, "mcp", "mcp.tools_call");
    assert_eq!(request.parent_span_id, CALLER_SPAN);
    let client = single(&in_trace, "mcp", "crossing");
    assert_eq!(client.parent_span_id, request.span_id);
    let served = single(&in_trace, "worker", "crossing");
    assert_eq!(served.parent_span_id, client.span_id, "{served:?}");
    // Two processes, each named in its resource.
    assert_eq!(request.resource["service.name"], "aura");
    assert_ne!(
        client.resource["process.pid"],
        served.resource["process.pid"]
    );
    assert_eq!(in_trace.len(), 3, "{in_trace:#?}");
    // Seed 003's attributes and the crossing's own on both sides.
    for span in [client, served] {
        assert_eq!(span.attributes["agent.source"], "host", "{span:?}");
        assert_eq!(span.attributes["agent.target"], "wellness");
        assert_eq!(span.attributes["agent.action"], "stress_score");
        assert_eq!(span.attributes["outcome"], "ok");
        assert_eq!(span.attributes["tool"], "stress_score");
        assert!(span.attributes["call_id"].starts_with("t_"));
        assert!(span.attributes["fuel_used"].parse::<u64>().unwrap() > 0);
    }
    assert_eq!(client.attributes["call_id"], served.attributes["call_id"]);

    // The call without a traceparent: its own trace, still one across both processes.
    let others: Vec<&Received> = spans
        .iter()
        .filter(|s| s.trace_id != CALLER_TRACE)
        .collect();
    assert_eq!(others.len(), 3, "{others:#?}");
    let trace = &others[0].trace_id;
    assert!(others.iter().all(|s| &s.trace_id == trace));
    let request = single(&others, "mcp", "mcp.tools_call");
    assert_eq!(request.parent_span_id, "", "a root has no parent");
    let client = single(&others, "mcp", "crossing");
    let served = single(&others, "worker", "crossing");
    assert_eq!(client.parent_span_id, request.span_id);
    assert_eq!(served.parent_span_id, client.span_id);
    assert!(
        spans
            .iter()
            .all(|s| ["mcp", "worker"].contains(&front(s).as_str()))
    );
}

/// The one span named `name` that the process of role `front` sent.
fn single<'a>(spans: &[&'a Received], front: &str, name: &str) -> &'a Received {
    let found: Vec<&&Received> = spans
        .iter()
        .filter(|s| s.name == name && s.resource["aura.front"] == front)
        .collect();
    assert_eq!(found.len(), 1, "{front} {name}: {spans:#?}");
    found[0]
}
