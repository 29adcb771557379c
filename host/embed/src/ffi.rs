//! The C ABI of an embedded assistant: what `include/aura.h` declares.
//!
//! It owns turning C strings into the Rust API's calls and back: JSON in, JSON out, every
//! string the library returns freed with [`aura_string_free`], no panic crossing into the app
//! (each entry catches one and reports it as an error). It must not do anything the Rust API
//! ([`crate::Assistant`]) does not.
//!
//! Threads: the functions may be called from any thread, one call at a time per assistant; the
//! decision and narration callbacks are called on threads of the library's, each one call at a
//! time, and must not call back into the same assistant.

use aura_contract::caused::caused;
use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::{Assistant, AssistantConfig};

/// An open assistant (opaque).
pub struct AuraAssistant {
    inner: Assistant,
}

/// Called with each decision as JSON (`{"id", "seq", "surface", "text", "at", "question"?,
/// "trace"}`), and the `user` pointer given to `aura_open`. The string is the library's: valid
/// for the call only.
pub type AuraDecisionFn =
    Option<unsafe extern "C" fn(user: *mut c_void, decision_json: *const c_char)>;

/// Called with each narration record as JSON (`{"trace_id", "run", "case", "outcome",
/// "rationale"?, "reason"?, "fuel_used", "prompt_tokens", "tokens", "memory_bytes"}`; a `kept`
/// one's `rationale` replaces its decision's template), and the `user` pointer given to
/// `aura_on_narration`. The string is the library's: valid for the call only.
pub type AuraNarrationFn =
    Option<unsafe extern "C" fn(user: *mut c_void, narration_json: *const c_char)>;

/// The app's callback and its pointer, called from the library's threads (the app promises it
/// may be: see the module's doc).
struct AppCallback {
    call: unsafe extern "C" fn(*mut c_void, *const c_char),
    user: *mut c_void,
}

// SAFETY: the ABI's contract (aura.h) says the callback and its pointer are used from the
// library's threads, one decision at a time; the app provides a callback that allows it.
unsafe impl Send for AppCallback {}
// SAFETY: as above; the library never calls one from two threads at once (one sink task for
// decisions, one task for narrations, each awaiting its call before the next).
unsafe impl Sync for AppCallback {}

/// The assistant's answer to a call: 0, taken (an acknowledgement); 1, refused (recovery.v1);
/// -1, the call itself was wrong (a null pointer, a string that is not UTF-8, a panic).
const TAKEN: i32 = 0;
const REFUSED: i32 = 1;
const MISUSED: i32 = -1;

/// A C string the app must free with `aura_string_free`.
fn give(text: String) -> *mut c_char {
    // Interior NULs cannot come from JSON text (they are escaped); cut there if one did.
    let text = match text.find('\0') {
        Some(at) => text[..at].to_owned(),
        None => text,
    };
    CString::new(text).map_or(std::ptr::null_mut(), CString::into_raw)
}

/// Writes `text` to `*out` when `out` is not null.
///
/// # Safety
/// `out` is null or points to writable memory for one pointer.
unsafe fn put(out: *mut *mut c_char, text: String) {
    if !out.is_null() {
        // SAFETY: the caller's promise.
        unsafe { *out = give(text) };
    }
}

/// The UTF-8 text of a C string, if it is one.
///
/// # Safety
/// `text` is null or a NUL-terminated string.
unsafe fn read<'a>(text: *const c_char) -> Option<&'a str> {
    if text.is_null() {
        return None;
    }
    // SAFETY: the caller's promise.
    unsafe { CStr::from_ptr(text) }.to_str().ok()
}

/// `{"error": message}`.
fn error(message: impl std::fmt::Display) -> String {
    serde_json::json!({ "error": message.to_string() }).to_string()
}

/// Opens an assistant from its configuration as JSON (`setup`, `data_dir`, `plugins_dir`,
/// and optionally `cache_dir`, `clock`, `tick_on`, `seed`, `fresh`); `on_decision` (may be
/// null) gets each decision. Null on failure, with `{"error": …, "kind": …}` in `*error` (if
/// not null): `kind` is `busy` when another assistant holds the data dir's life (an app
/// opened twice: close the first), else `config`, `runtime`, `host`, `live` or `ended`.
///
/// # Safety
/// `config_json` is a NUL-terminated string; `error` is null or writable; `on_decision`, if
/// not null, may be called with `user` from another thread until the assistant is closed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aura_open(
    config_json: *const c_char,
    on_decision: AuraDecisionFn,
    user: *mut c_void,
    error_json: *mut *mut c_char,
) -> *mut AuraAssistant {
    // SAFETY: the caller's promise.
    let Some(text) = (unsafe { read(config_json) }) else {
        // SAFETY: the caller's promise.
        unsafe {
            put(
                error_json,
                error("the configuration is not a UTF-8 C string"),
            )
        };
        return std::ptr::null_mut();
    };
    let opened = catch_unwind(AssertUnwindSafe(|| {
        let config: AssistantConfig =
            serde_json::from_str(text).map_err(|e| error(format!("the configuration: {e}")))?;
        let callback = on_decision.map(|call| AppCallback { call, user });
        Assistant::open(config, move |delivery| {
            if let Some(callback) = &callback {
                let json = serde_json::to_string(delivery).unwrap_or_default();
                if let Ok(json) = CString::new(json) {
                    // SAFETY: the app's callback, with its pointer, as aura.h describes.
                    unsafe { (callback.call)(callback.user, json.as_ptr()) };
                }
            }
        })
        .map_err(|e| serde_json::json!({ "error": caused(&e), "kind": e.kind() }).to_string())
    }));
    match opened {
        Ok(Ok(inner)) => Box::into_raw(Box::new(AuraAssistant { inner })),
        Ok(Err(message)) => {
            // SAFETY: the caller's promise.
            unsafe { put(error_json, message) };
            std::ptr::null_mut()
        }
        Err(_) => {
            // SAFETY: the caller's promise.
            unsafe { put(error_json, error("the assistant panicked while opening")) };
            std::ptr::null_mut()
        }
    }
}

/// Pushes one signal (a scenario.v1 signal as JSON; `at` and `id` optional). 0 and
/// `{"ack": …}` once it is durable; 1 and `{"refused": recovery.v1}`; -1 on misuse.
///
/// # Safety
/// `assistant` is one `aura_open` returned and not closed; `signal_json` a NUL-terminated
/// string; `reply_json` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aura_push(
    assistant: *mut AuraAssistant,
    signal_json: *const c_char,
    reply_json: *mut *mut c_char,
) -> i32 {
    // SAFETY: the caller's promise.
    let (Some(assistant), Some(signal)) =
        (unsafe { assistant.as_ref() }, unsafe { read(signal_json) })
    else {
        // SAFETY: the caller's promise.
        unsafe {
            put(
                reply_json,
                error("a null assistant, or a signal that is not UTF-8"),
            )
        };
        return MISUSED;
    };
    // SAFETY: the caller's promise.
    unsafe { answer(reply_json, || acked(assistant.inner.push(signal))) }
}

/// Pushes a batch of signals (a JSON array of them, or NDJSON: one a line). 0 and
/// `{"results": [{"ack": …} or {"refused": …}, …], "acked": n, "refused": m}` once every
/// signal acknowledged is durable (one result each, in order); 1 and `{"refused":
/// recovery.v1}` when the batch is refused whole; -1 on misuse.
///
/// # Safety
/// As `aura_push`; `batch_json` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aura_push_batch(
    assistant: *mut AuraAssistant,
    batch_json: *const c_char,
    reply_json: *mut *mut c_char,
) -> i32 {
    // SAFETY: the caller's promise.
    let (Some(assistant), Some(batch)) =
        (unsafe { assistant.as_ref() }, unsafe { read(batch_json) })
    else {
        // SAFETY: the caller's promise.
        unsafe {
            put(
                reply_json,
                error("a null assistant, or a batch that is not UTF-8"),
            )
        };
        return MISUSED;
    };
    // SAFETY: the caller's promise.
    unsafe {
        answer(reply_json, || {
            assistant
                .inner
                .push_batch(batch)
                .map(aura_day::live::batch_answers)
        })
    }
}

/// Pushes what a source read (`batch_json` as for `aura_push_batch`, maybe empty) with the
/// position it read up to (`source`, `position`: an IMAP UIDVALIDITY and UID, a sync token, a
/// file's digest), durable together; answers as `aura_push_batch`. A restarted app resumes
/// its source from `aura_positions`.
///
/// # Safety
/// As `aura_push_batch`; `source` and `position` are NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aura_push_read(
    assistant: *mut AuraAssistant,
    batch_json: *const c_char,
    source: *const c_char,
    position: *const c_char,
    reply_json: *mut *mut c_char,
) -> i32 {
    // SAFETY: the caller's promise.
    let read = unsafe { (read(batch_json), read(source), read(position)) };
    // SAFETY: the caller's promise.
    let (Some(assistant), (Some(batch), Some(source), Some(position))) =
        (unsafe { assistant.as_ref() }, read)
    else {
        // SAFETY: the caller's promise.
        unsafe {
            put(
                reply_json,
                error("a null assistant, or a batch, source or position that is not UTF-8"),
            )
        };
        return MISUSED;
    };
    // SAFETY: the caller's promise.
    unsafe {
        answer(reply_json, || {
            assistant
                .inner
                .push_read(batch, source, position)
                .map(aura_day::live::batch_answers)
        })
    }
}

/// Where each source's read position stands: 0 and `{"positions": {source: position}}`; 1
/// and `{"refused": recovery.v1}` when the session cannot say (it stopped); -1 on misuse.
///
/// # Safety
/// As `aura_push`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aura_positions(
    assistant: *mut AuraAssistant,
    reply_json: *mut *mut c_char,
) -> i32 {
    // SAFETY: the caller's promise.
    let Some(assistant) = (unsafe { assistant.as_ref() }) else {
        // SAFETY: the caller's promise.
        unsafe { put(reply_json, error("a null assistant")) };
        return MISUSED;
    };
    // SAFETY: the caller's promise.
    unsafe {
        answer(reply_json, || {
            let positions = assistant.inner.positions()?;
            Ok(serde_json::json!({ "positions": positions }))
        })
    }
}

/// Answers a question by its id with `yes`, `no` or `later`; as `aura_push`.
///
/// # Safety
/// As `aura_push`; `question` and `reply` are NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aura_answer(
    assistant: *mut AuraAssistant,
    question: *const c_char,
    reply: *const c_char,
    reply_json: *mut *mut c_char,
) -> i32 {
    // SAFETY: the caller's promise.
    let parts = unsafe { (assistant.as_ref(), read(question), read(reply)) };
    let (Some(assistant), Some(question), Some(reply)) = parts else {
        // SAFETY: the caller's promise.
        unsafe {
            put(
                reply_json,
                error("a null assistant, or a string that is not UTF-8"),
            )
        };
        return MISUSED;
    };
    // SAFETY: the caller's promise.
    unsafe {
        answer(reply_json, || {
            acked(assistant.inner.answer(question, reply))
        })
    }
}

/// Runs `take` (a push), writes its answer to `reply_json`, returns its status.
///
/// # Safety
/// `reply_json` is null or writable.
unsafe fn answer(
    reply_json: *mut *mut c_char,
    take: impl FnOnce() -> Result<serde_json::Value, crate::Refused>,
) -> i32 {
    let (status, text) = match catch_unwind(AssertUnwindSafe(take)) {
        Ok(Ok(taken)) => (TAKEN, taken.to_string()),
        Ok(Err(refused)) => (
            REFUSED,
            serde_json::json!({ "refused": refused }).to_string(),
        ),
        Err(_) => (MISUSED, error("the assistant panicked")),
    };
    // SAFETY: the caller's promise.
    unsafe { put(reply_json, text) };
    status
}

/// A push's acknowledgement as the ABI writes it: `{"ack": …}`.
fn acked(taken: Result<crate::Ack, crate::Refused>) -> Result<serde_json::Value, crate::Refused> {
    taken.map(|ack| serde_json::json!({ "ack": ack }))
}

/// Hands each narration record of an assistant opened with `"narrate": true`, from its start,
/// to `on_narration` with `user`, one at a time on a thread of the library's, until it is
/// closed. 0; 1 and nothing set when a narration callback is already set; -1 on misuse (a null
/// assistant or callback).
///
/// # Safety
/// `assistant` is one `aura_open` returned and not closed; `on_narration` may be called with
/// `user` from another thread until the assistant is closed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aura_on_narration(
    assistant: *mut AuraAssistant,
    on_narration: AuraNarrationFn,
    user: *mut c_void,
) -> i32 {
    // SAFETY: the caller's promise.
    let (Some(assistant), Some(call)) = (unsafe { assistant.as_ref() }, on_narration) else {
        return MISUSED;
    };
    let callback = AppCallback { call, user };
    let set = catch_unwind(AssertUnwindSafe(|| {
        assistant.inner.on_narration(move |record| {
            // The callback whole (Send and Sync), not its fields (a closure captures only the
            // fields it uses, and a raw pointer is neither).
            let callback = &callback;
            let json = serde_json::to_string(record).unwrap_or_default();
            if let Ok(json) = CString::new(json) {
                // SAFETY: the app's callback, with its pointer, as aura.h describes.
                unsafe { (callback.call)(callback.user, json.as_ptr()) };
            }
        })
    }));
    match set {
        Ok(Ok(())) => TAKEN,
        Ok(Err(_)) => REFUSED,
        Err(_) => MISUSED,
    }
}

/// Says no more input will come (a replayed day then runs to its end). 0, or -1 on misuse.
///
/// # Safety
/// `assistant` is one `aura_open` returned and not closed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aura_end_input(assistant: *mut AuraAssistant) -> i32 {
    // SAFETY: the caller's promise.
    match unsafe { assistant.as_ref() } {
        Some(assistant) => match catch_unwind(AssertUnwindSafe(|| assistant.inner.end_input())) {
            Ok(()) => TAKEN,
            Err(_) => MISUSED,
        },
        None => MISUSED,
    }
}

/// Closes the assistant and frees it: `finish` non-zero waits for the session to end by itself
/// (a replayed day's end, after `aura_end_input`), zero stops it now (the tick it is in
/// finishes and checkpoints). 0 and `{"summary": …}`, or 1 and `{"error": …}`; -1 on misuse.
///
/// # Safety
/// `assistant` is one `aura_open` returned, not closed, and not used again after this call;
/// `summary_json` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aura_close(
    assistant: *mut AuraAssistant,
    finish: i32,
    summary_json: *mut *mut c_char,
) -> i32 {
    if assistant.is_null() {
        return MISUSED;
    }
    // SAFETY: the caller's promise: one `aura_open` returned, never freed before.
    let assistant = unsafe { Box::from_raw(assistant) };
    let closed = catch_unwind(AssertUnwindSafe(|| match finish {
        0 => assistant.inner.close(),
        _ => assistant.inner.finish(),
    }));
    let (status, text) = match closed {
        Ok(Ok(summary)) => (TAKEN, serde_json::json!({ "summary": summary }).to_string()),
        Ok(Err(e)) => (REFUSED, error(e)),
        Err(_) => (MISUSED, error("the assistant panicked while closing")),
    };
    // SAFETY: the caller's promise.
    unsafe { put(summary_json, text) };
    status
}

/// Frees a string the library returned (null is allowed).
///
/// # Safety
/// `text` is null or a string this library returned, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aura_string_free(text: *mut c_char) {
    if !text.is_null() {
        // SAFETY: the caller's promise: a CString this library made with into_raw.
        drop(unsafe { CString::from_raw(text) });
    }
}
