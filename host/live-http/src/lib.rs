//! aura's live HTTP front: a live session's inputs and decisions over local HTTP.
//!
//! It owns four routes on a loopback address or a unix socket: `POST /signals` (one
//! scenario.v1 signal, `at` and `id` optional; or a batch of them, as a JSON array or as
//! NDJSON with `Content-Type: application/x-ndjson`, each answered on its own), `POST
//! /answers` (`{"question", "reply"}`, `at` and `id` optional), `GET /decisions` (each decision as it is delivered, one JSON line
//! each, for as long as the client reads) and `GET /narrations` (each narration record, the
//! same way, of a session that narrates). A body is read up to the session's bound and no
//! further; what the session answers becomes the status: 200 with the acknowledgement, or the
//! refusal's recovery.v1 with 400 (correct it), 409 (nothing to do), 413 (too large), 429
//! (busy: `Retry-After`) or 503 (stopped). Requests whose `Host` is not a name the guard serves
//! or whose `Origin` it does not allow are refused (DNS rebinding). Behind a guard that asks
//! bearer tokens, reading decisions or narrations needs `aura.read`, a signal `aura.signal`, an answer
//! `aura.act`; only such a guard (with TLS) lets it listen beyond the machine. It must not
//! check, journal or decide anything: every input goes through the session's one handle
//! ([`aura_day::live::Live`]).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use aura_contract::limits::{LIVE_BATCH_BYTES_MAX, LIVE_SIGNAL_BYTES_MAX};
use aura_contract::recovery::Action;
use aura_day::live::{Ack, BatchForm, Live, Refused};

/// Where the front listens.
#[derive(Debug)]
pub enum Listener {
    /// A loopback TCP address.
    Tcp(tokio::net::TcpListener),
    /// A unix socket.
    Unix(tokio::net::UnixListener),
}

/// Why the front could not serve.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// Serving failed.
    #[error("the live HTTP front failed")]
    Io(#[from] std::io::Error),
    /// Its guard (TLS) failed.
    #[error("the live HTTP front failed")]
    Guard(#[from] aura_http::GuardError),
}

/// Binds `address`: `unix:<path>` for a unix socket (an old socket file at the path is
/// replaced), else an `ip:port` (port 0 picks a free one): loopback, or any other when `guard`
/// has TLS and tokens.
pub async fn bind(address: &str, guard: &aura_http::Guard) -> Result<Listener, HttpError> {
    if let Some(path) = address.strip_prefix("unix:") {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
        return Ok(Listener::Unix(tokio::net::UnixListener::bind(path)?));
    }
    let address: std::net::SocketAddr = address.parse().map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("`{address}`: ip:port or unix:PATH ({e})"),
        )
    })?;
    guard.check_listen(address)?;
    Ok(Listener::Tcp(tokio::net::TcpListener::bind(address).await?))
}

impl Listener {
    /// Where it listens, as a URL (`scheme`: `http` or `https`) or a socket path.
    pub fn shown(&self, scheme: &str) -> String {
        match self {
            Listener::Tcp(tcp) => tcp
                .local_addr()
                .map_or_else(|e| e.to_string(), |a| format!("{scheme}://{a}")),
            Listener::Unix(unix) => unix
                .local_addr()
                .ok()
                .and_then(|a| a.as_pathname().map(|p| format!("unix:{}", p.display())))
                .unwrap_or_else(|| "unix socket".to_owned()),
        }
    }
}

/// Serves `live`'s routes on `listener` behind `guard` (TLS on TCP if it has a certificate;
/// its Origin policy) until `shutdown` completes.
pub async fn serve(
    live: Live,
    listener: Listener,
    guard: &aura_http::Guard,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), HttpError> {
    let router = axum::Router::new()
        .route("/signals", post(signals))
        .route("/answers", post(answers))
        .route("/decisions", get(decisions))
        .route("/narrations", get(narrations))
        .with_state(Arc::new(live.clone()));
    let router =
        guard
            .protect(router, Arc::new(RouteScopes))
            .layer(axum::middleware::from_fn_with_state(
                (
                    Arc::new(live),
                    guard.origins.clone(),
                    Arc::new(guard.hosts()),
                ),
                loopback_only,
            ));
    match listener {
        Listener::Tcp(tcp) => {
            guard
                .serve_checking_origins_itself(tcp, router, shutdown)
                .await?;
        }
        Listener::Unix(unix) => {
            axum::serve(unix, router)
                .with_graceful_shutdown(shutdown)
                .await?;
        }
    }
    Ok(())
}

/// What the host and origin check holds: the session (to record a refusal), the origins and
/// the host names the guard serves.
type Served = (Arc<Live>, Arc<aura_http::OriginPolicy>, Arc<Vec<String>>);

/// The scopes of the live routes (when the guard asks tokens).
struct RouteScopes;

impl aura_http::auth::ScopeRule for RouteScopes {
    fn body_bytes_max(&self, _parts: &axum::http::request::Parts) -> usize {
        0
    }

    fn needed(&self, parts: &axum::http::request::Parts, _body: &[u8]) -> Vec<&'static str> {
        use aura_http::auth::{SCOPE_ACT, SCOPE_READ, SCOPE_SIGNAL};
        match parts.uri.path() {
            "/signals" => vec![SCOPE_SIGNAL],
            // The person's yes: what lets a confirm_required call run.
            "/answers" => vec![SCOPE_ACT],
            _ => vec![SCOPE_READ],
        }
    }
}

/// Refuses a request whose `Host` names another machine than the guard serves, or whose
/// `Origin` is neither loopback nor one the guard allows: a page a browser loaded from
/// elsewhere must not reach the person's assistant through a rebound name. Each refusal is
/// recorded by the session.
async fn loopback_only(
    State((live, origins, hosts)): State<Served>,
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    let headers = request.headers();
    let named = |value: Option<&HeaderValue>, origin: bool| {
        let Some(value) = value else {
            return true;
        };
        let text = value.to_str().unwrap_or_default();
        let authority = match origin {
            true => match text.split_once("://") {
                Some((_, rest)) => rest,
                None => return false,
            },
            false => text,
        };
        let host = match authority.strip_prefix('[') {
            Some(rest) => rest.split(']').next().unwrap_or_default(),
            None => authority.split(':').next().unwrap_or_default(),
        };
        host.is_empty() || hosts.iter().any(|served| served.eq_ignore_ascii_case(host))
    };
    let origin_allowed = headers
        .get(header::ORIGIN)
        .is_none_or(|origin| origin.to_str().is_ok_and(|text| origins.allows(text)));
    if !named(headers.get(header::HOST), false) || !origin_allowed {
        let shown = |name| {
            headers
                .get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_default()
        };
        let offending = format!(
            "{} {} Host: {} Origin: {}",
            request.method(),
            request.uri().path(),
            shown(header::HOST),
            shown(header::ORIGIN)
        );
        let refused = live.refuse_request(
            "forbidden_origin",
            "aura live answers its own host names only, from loopback origins or allowed ones"
                .to_owned(),
            &offending,
        );
        return (
            StatusCode::FORBIDDEN,
            axum::Json(json!({ "refused": refused })),
        )
            .into_response();
    }
    next.run(request).await
}

/// `POST /signals`: one signal, or a batch (a JSON array, or NDJSON by its content type):
/// `{"results": [{"ack": …} or {"refused": …}, …], "acked": n, "refused": m}`, one result
/// each in order, once every signal acknowledged is durable.
async fn signals(State(live): State<Arc<Live>>, request: Request) -> Response {
    let ndjson = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| {
            let media = media.trim();
            media.eq_ignore_ascii_case("application/x-ndjson")
                || media.eq_ignore_ascii_case("application/jsonl")
        });
    let bytes = match body(&live, request, LIVE_BATCH_BYTES_MAX).await {
        Ok(bytes) => bytes,
        Err(refused) => return answer(Err(refused)),
    };
    let form = match ndjson {
        true => BatchForm::Ndjson,
        false => match BatchForm::of(&bytes) {
            Some(form) => form,
            None => return answer(live.push(&bytes).await),
        },
    };
    match live.push_batch(&bytes, form).await {
        Ok(results) => (
            StatusCode::OK,
            axum::Json(aura_day::live::batch_answers(results)),
        )
            .into_response(),
        Err(refused) => answer(Err(refused)),
    }
}

/// `POST /answers`: `{"question": …, "reply": …}` (and `at`, `id`), as the answer signal it is.
async fn answers(State(live): State<Arc<Live>>, request: Request) -> Response {
    let bytes = match body(&live, request, LIVE_SIGNAL_BYTES_MAX).await {
        Ok(bytes) => bytes,
        Err(refused) => return answer(Err(refused)),
    };
    // What is not a JSON object goes as it came, to be refused as what it is.
    let signal = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(mut data)) => {
            let mut signal = json!({"kind": "answer"});
            for outer in ["at", "id"] {
                if let Some(value) = data.remove(outer) {
                    signal[outer] = value;
                }
            }
            signal["data"] = Value::Object(data);
            Bytes::from(signal.to_string())
        }
        _ => bytes,
    };
    answer(live.push(&signal).await)
}

/// `GET /decisions`: each decision from now on, a JSON line each (`{"decision": …}`, or
/// `{"missed": n}` for a reader that fell behind).
async fn decisions(State(live): State<Arc<Live>>) -> Response {
    follow(live.subscribe(), |delivery| json!({ "decision": delivery }))
}

/// `GET /narrations`: each narration record from now on, once durable, a JSON line each
/// (`{"narration": …}`, or `{"missed": n}`); nothing from a session that does not narrate.
async fn narrations(State(live): State<Arc<Live>>) -> Response {
    follow(live.narrations(), |record| json!({ "narration": record }))
}

/// What `receiver` gets from now on as a stream of JSON lines, each as `shown` writes it.
fn follow<T: Send + Sync + 'static>(
    receiver: tokio::sync::broadcast::Receiver<Arc<T>>,
    shown: fn(&T) -> serde_json::Value,
) -> Response {
    let stream = futures_util::stream::unfold(receiver, move |mut receiver| async move {
        use tokio::sync::broadcast::error::RecvError;
        let line = match receiver.recv().await {
            Ok(item) => format!("{}\n", shown(&item)),
            Err(RecvError::Lagged(missed)) => format!("{}\n", json!({ "missed": missed })),
            Err(RecvError::Closed) => return None,
        };
        Some((
            Ok::<_, std::convert::Infallible>(Bytes::from(line)),
            receiver,
        ))
    });
    let mut response = Body::from_stream(stream).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    response
}

/// The request's body, read up to `max` bytes and no further (a longer one is refused with
/// what was read of it).
async fn body(live: &Live, request: Request, max: usize) -> Result<Bytes, Refused> {
    let mut body = request.into_body();
    let mut read = Vec::new();
    let mut total: u64 = 0;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            break;
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        total += data.len() as u64;
        if read.len() <= max {
            let room = max + 1 - read.len();
            read.extend_from_slice(&data[..data.len().min(room)]);
        }
        if total > max as u64 {
            // Stop reading: the connection is closed after the answer.
            read.truncate(LIVE_SIGNAL_BYTES_MAX);
            return Err(live.refuse_unread(total, max, &read));
        }
    }
    Ok(Bytes::from(read))
}

/// The session's answer as an HTTP response.
fn answer(taken: Result<Ack, Refused>) -> Response {
    match taken {
        Ok(ack) => (StatusCode::OK, axum::Json(json!({ "ack": ack }))).into_response(),
        Err(refused) => {
            let status = match (refused.kind.as_str(), &refused.recovery.action) {
                ("too_large", _) => StatusCode::PAYLOAD_TOO_LARGE,
                ("busy", _) => StatusCode::TOO_MANY_REQUESTS,
                ("closed" | "not_durable", _) => StatusCode::SERVICE_UNAVAILABLE,
                (_, Action::Finish) => StatusCode::CONFLICT,
                _ => StatusCode::BAD_REQUEST,
            };
            let mut headers = HeaderMap::new();
            if let Some(ms) = refused.recovery.retry_after_ms {
                let seconds = ms.div_ceil(1000).max(1);
                if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
                    headers.insert(header::RETRY_AFTER, value);
                }
            }
            (status, headers, axum::Json(json!({ "refused": refused }))).into_response()
        }
    }
}
