//! An error as a person reads it: its own message, then each cause's, once.
//!
//! It owns the one convention for errors with causes: a variant's message says what failed and
//! never repeats its cause; its cause is its `#[source]`, and whatever shows the error to a
//! person (the binary's edge through anyhow's `{:#}`, a front's answer, a log line, the C ABI)
//! prints the chain with [`caused`] or [`Caused`], so each cause appears once. It must not
//! make text visible (the `visible` module does) nor decide what an error means.

use std::error::Error;
use std::fmt;

/// `error`'s message and each cause's, joined by `": "`, as anyhow's `{:#}` prints them.
pub fn caused(error: &(dyn Error + 'static)) -> String {
    Caused(error).to_string()
}

/// `error` shown with its causes ([`caused`]), for a log line's field (`error = %Caused(&e)`)
/// or a message built around it.
#[derive(Clone, Copy)]
pub struct Caused<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for Caused<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(error) = cause {
            write!(f, ": {error}")?;
            cause = error.source();
        }
        Ok(())
    }
}

impl fmt::Debug for Caused<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read scenario {path}")]
    struct Read {
        path: String,
        source: std::io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("the run stopped")]
    struct Stopped(#[source] Read);

    #[test]
    fn each_cause_is_printed_once_in_order() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let read = Read {
            path: "/x.json".to_owned(),
            source: io,
        };
        assert_eq!(
            caused(&Stopped(read)),
            "the run stopped: cannot read scenario /x.json: no such file"
        );
    }
}
