//! `aura fleet`: many people's live assistants over hosts on a nats-server with JetStream.
//! `host` runs one host of the fleet; `enrol`, `send` and `decisions` are what a service's
//! other parts do: enrol a person, send them signals, read what was decided for them.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use aura_contract::limits::{
    FLEET_PEOPLE_PER_HOST_MAX, FLEET_RECORDS_PER_PERSON_MAX, LIVE_SIGNAL_BYTES_MAX,
};
use aura_contract::person::Person;
use aura_day::live::{Clock, LiveConfig};
use aura_fleet::jetstream;
use aura_fleet::placement::{FleetHost, serve};
use aura_fleet::store::Enrolment;

use super::{Globals, open_host, runtime, shutdown_signal, warn_load_failures};

/// Many people's assistants over hosts on --nats (JetStream): each person on one host at a
/// time, held by a lease, their journal in JetStream.
#[derive(clap::Args, Debug)]
pub struct FleetCommand {
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand, Debug)]
enum Action {
    /// Run one host of the fleet until SIGINT/SIGTERM: it takes the people it owns among the
    /// hosts present, lives each one's day, and lets them go when it stops.
    Host {
        /// This host's id in the fleet ([A-Za-z0-9_-], at most 64): unique per host.
        #[arg(long)]
        id: String,
        /// People this host holds at most.
        #[arg(long, default_value_t = 1000)]
        capacity: usize,
        /// `wall` or `replay` (a scenario's day as fast as its signals come).
        #[arg(long, default_value = "wall", value_parser = parse_clock)]
        clock: Clock,
    },
    /// Enrol a person (TENANT/USER) with a setup file (a live.v1, or a scenario whose signals
    /// are then sent): a host takes them within a lease.
    Enrol {
        /// TENANT/USER.
        #[arg(long)]
        person: String,
        /// The setup file.
        setup: PathBuf,
        /// Seed of the agents' random sources.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Send a person signals: JSON lines on stdin (one scenario.v1 signal each), each stored
    /// in JetStream before its `{"sent": SEQ}` line is printed.
    Send {
        /// TENANT/USER.
        #[arg(long)]
        person: String,
        /// Then say their inputs ended (a replayed day runs to its end).
        #[arg(long)]
        end: bool,
    },
    /// Print a person's decisions as delivered, one JSON line each, from the first.
    Decisions {
        /// TENANT/USER.
        #[arg(long)]
        person: String,
    },
}

fn parse_clock(text: &str) -> Result<Clock, String> {
    match Clock::parse(text) {
        Some(clock @ (Clock::Wall | Clock::Replay)) => Ok(clock),
        _ => Err(format!("`{text}`: wall or replay")),
    }
}

fn person(text: &str) -> anyhow::Result<Person> {
    let (tenant, user) = text
        .split_once('/')
        .with_context(|| format!("`{text}`: a person is TENANT/USER"))?;
    Ok(Person::new(tenant, user)?)
}

impl FleetCommand {
    /// Runs the action.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let access = globals
            .nats
            .clone()
            .context("aura fleet needs --nats nats://HOST:PORT (a server with JetStream)")?;
        runtime()?.block_on(async {
            let connection = aura_wire::connect(&access).await?;
            let fleet = jetstream::open(&connection.client).await?;
            match self.action {
                Action::Host {
                    id,
                    capacity,
                    clock,
                } => {
                    let valid = !id.is_empty()
                        && id.len() <= 64
                        && id
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                    anyhow::ensure!(valid, "--id `{id}`: [A-Za-z0-9_-], 1 to 64 of them");
                    anyhow::ensure!(
                        capacity <= FLEET_PEOPLE_PER_HOST_MAX,
                        "--capacity {capacity}: at most {FLEET_PEOPLE_PER_HOST_MAX}"
                    );
                    // The agents run here; only the fleet's state is on the server.
                    let (host, _) = open_host(globals.host_config(), None, None).await?;
                    warn_load_failures(&host);
                    let (stop, stopped) = tokio::sync::watch::channel(false);
                    let shutdown = shutdown_signal();
                    tokio::spawn(async move {
                        shutdown.await;
                        let _ = stop.send(true);
                    });
                    eprintln!("aura: fleet host {id} on {}", connection.shown);
                    let fleet_host = FleetHost {
                        fleet,
                        host,
                        root: globals.data_dir.join("people"),
                        me: id,
                        capacity,
                        clock,
                    };
                    serve(fleet_host, stopped).await;
                }
                Action::Enrol {
                    person: who,
                    setup,
                    seed,
                } => {
                    let who = person(&who)?;
                    // Checked here as a session would check it, so a host never meets a setup
                    // it cannot run.
                    let crossing = aura_contract::crossing::Crossing::new()?;
                    let config = LiveConfig::load(&setup, crossing.schemas(), seed, Clock::Replay)?;
                    let mut value = config.setup;
                    if let Some(signals) = value.get_mut("signals") {
                        *signals = serde_json::Value::Array(Vec::new());
                    }
                    fleet.enrol(&who, &Enrolment { setup: value, seed }).await?;
                    println!("{}", serde_json::json!({ "enrolled": who.to_string() }));
                }
                Action::Send { person: who, end } => {
                    let who = person(&who)?;
                    let stdin = std::io::stdin().lock();
                    let mut out = std::io::stdout().lock();
                    for line in stdin.lines() {
                        let line = line.context("cannot read stdin")?;
                        if line.trim().is_empty() {
                            continue;
                        }
                        anyhow::ensure!(
                            line.len() <= LIVE_SIGNAL_BYTES_MAX,
                            "a signal of {} bytes: at most {LIVE_SIGNAL_BYTES_MAX}",
                            line.len()
                        );
                        let seq = fleet.send(&who, Some(line.as_bytes())).await?;
                        writeln!(out, "{}", serde_json::json!({ "sent": seq }))?;
                    }
                    if end {
                        let seq = fleet.send(&who, None).await?;
                        writeln!(out, "{}", serde_json::json!({ "sent": seq, "end": true }))?;
                    }
                }
                Action::Decisions { person: who } => {
                    let who = person(&who)?;
                    let max = FLEET_RECORDS_PER_PERSON_MAX as usize;
                    let decisions = fleet.decisions(&who, 0, max).await?;
                    let mut out = std::io::stdout().lock();
                    for decision in &decisions {
                        writeln!(out, "{decision}")?;
                    }
                    if decisions.len() >= max {
                        eprintln!("aura: the first {max} decisions only");
                    }
                }
            }
            anyhow::Ok(ExitCode::SUCCESS)
        })
    }
}
