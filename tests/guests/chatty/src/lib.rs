#![cfg(target_arch = "wasm32")]
//! Test guest posing as calendar that writes 100 KiB to stdout, 1 KiB at a time, and reports
//! how many bytes the writes accepted before the first one failed (and why).

use std::io::Write;

aura_zoo::hostile!(Chatty, |call| {
    let line = [b'x'; 1024];
    let mut accepted = 0usize;
    let mut failure = String::from("none");
    let mut stdout = std::io::stdout();
    for _ in 0..100 {
        match stdout.write_all(&line).and_then(|()| stdout.flush()) {
            Ok(()) => accepted += line.len(),
            Err(error) => {
                failure = error.kind().to_string();
                break;
            }
        }
    }
    aura_zoo::report(&format!(
        "accepted {accepted} bytes; first failure: {failure}"
    ))
});
