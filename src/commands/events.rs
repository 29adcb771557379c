//! `aura events`: the event stream's events as JSON lines.

use std::process::ExitCode;

use anyhow::Context;

use super::{Globals, runtime, shutdown_signal};

/// Print the events of AURA_EVENTS on --nats as JSON lines (event.v1), read through a
/// durable consumer: each event once per consumer name, from the first.
#[derive(clap::Args, Debug)]
pub struct EventsCommand {
    /// Keep waiting for new events (until SIGINT) instead of stopping at the last.
    #[arg(long)]
    follow: bool,
    /// The durable consumer's name: another name reads the stream again from the start.
    #[arg(long, default_value = "aura-events")]
    durable: String,
}

impl EventsCommand {
    /// Prints the events until the last (or, following, until a signal).
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        use std::io::Write;
        let access = globals
            .nats
            .context("aura events needs --nats nats://HOST:PORT")?;
        runtime()?.block_on(async {
            let connection = aura_wire::connect(&access).await?;
            let client = connection.client.clone();
            let mut stdout = std::io::stdout().lock();
            let read = aura_wire::stream::read(&client, &self.durable, self.follow, |event| {
                // Events are canonical JSON built by hosts; agent text in them is escaped JSON.
                writeln!(stdout, "{event}").is_ok()
            });
            tokio::select! {
                read = read => {
                    if let Err(error) = read {
                        // A JetStream request this user may not make times out: the server's
                        // refusal says why.
                        connection.check("this reader's requests").await?;
                        return Err(error.into());
                    }
                }
                () = shutdown_signal() => {}
            }
            anyhow::Ok(ExitCode::SUCCESS)
        })
    }
}
