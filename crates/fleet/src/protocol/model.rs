//! The protocol as a model that stateright checks: one person, a few hosts, the signals stream,
//! the lease bucket, the journal and the decisions subject, with every interleaving of the
//! hosts' steps, their crashes and lost renewals (a host that stops for the person forgets all
//! it held for them, which is what a crash does to it) and the server's expiry of the key.
//!
//! The hosts decide with the protocol's own functions ([`lease_step`], [`Holding`], [`Outbox`],
//! [`replay`]) and the real chain check of agent-to-agent calls ([`check_chain`]); what is
//! modelled is only what NATS does: the bucket's create and compare-and-set, the streams'
//! expected-last-sequence check (which the `fencing: false` mutation removes), redelivery of
//! a signal nobody acknowledged. With `pauses`, the server may expire a key while its holder
//! still believes it holds it (a paused process, a partition, a clock that jumped); without,
//! a key expires only after its holder stopped or crashed. A write whose answer never comes
//! back (a lost ack, a step that timed out) is that write followed by [`Action::Stop`]: a host
//! that cannot know whether a record was stored stops for the person (`jetstream` returns the
//! timeout as an error), so it needs no action of its own (modelled as one, it added no state).
//! With [`Checkpoints::Compacted`], holders store checkpoints that move the person's head only
//! forward and purge the journal below it once its decisions were delivered, at any later
//! moment (the storing task outlives its hold); a takeover then reads only the kept records,
//! from the head, as the fleet does (`store::Fleet::read_journal`), and the mutations (a head
//! that moves back, a purge of undelivered decisions) are found.

use stateright::{Model, Property};

use aura_contract::crossing::check_chain;

use super::{
    AfterAppend, AfterPublish, Covered, Epoch, Holding, LeaseEntry, LeaseStep, Outbox, Record, Seq,
    Stored, lease_step,
};

/// A signal's payload in the model: its number. A decision's: how many signals it saw.
type Rec = Record<u8, u64>;

/// The model's bounds.
#[derive(Debug, Clone)]
pub(super) struct Fleet {
    pub hosts: usize,
    /// Signals in the stream at the start (when they were sent does not matter to the
    /// protocol: a signal is durable once the stream holds it, acknowledged once journaled).
    pub signals: u8,
    /// How many times the key may be written (creates and renewals) in all: revisions must
    /// stay finite for the search to end.
    pub revisions: u64,
    /// The agents a host's tick may call, by name.
    pub agents: &'static [&'static str],
    pub pauses: bool,
    /// The streams check the expected last sequence (the protocol); `false` is the mutation.
    pub fencing: bool,
    /// Whether holders store checkpoints, and when.
    pub checkpoints: Checkpoints,
}

/// When a holder captures its checkpoint of the person, and what the store does with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Checkpoints {
    /// None are stored.
    Off,
    /// Of what the journal holds up to the host's fence (`assistant` captures right after an
    /// append was stored, under its writer); the last one written, by whichever host, is the
    /// one a takeover reads, and the journal is never purged.
    AfterAppend,
    /// The mutation: of a signal taken before its append was answered.
    BeforeAppend,
    /// As `store::checkpoints` does: captured after the append, the person's head moved to it
    /// only forward, then (at any later moment, whoever holds the person by then) the journal
    /// purged below its fence if every decision it covers was delivered.
    Compacted,
    /// The mutation: the head is the last one written (it may move back), and purged below.
    HeadBack,
    /// The mutation: purged below the head whether its decisions were delivered or not.
    PurgeUndelivered,
}

impl Checkpoints {
    fn purges(self) -> bool {
        matches!(
            self,
            Self::Compacted | Self::HeadBack | Self::PurgeUndelivered
        )
    }
}

/// A stored checkpoint: the journal sequence it covers, the signals applied and the decisions
/// made by then (what each saw), and the first inbox signal it does not hold.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Snapshot {
    fence: Seq,
    epoch: Epoch,
    applied: Vec<u8>,
    decided: Vec<u64>,
    inbox_next: u8,
}

impl Snapshot {
    fn covered(&self) -> Covered {
        Covered {
            fence: self.fence,
            decisions: self.decided.len() as u64,
            epoch: self.epoch,
            inbox_next: u64::from(self.inbox_next),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct State {
    /// The lease bucket's key for the person: its holder and revision.
    key: Option<(usize, u64)>,
    /// The bucket's last revision.
    revision: u64,
    /// The journal: each record with the epoch of the host that wrote it (its sequence is its
    /// index + 1), the purged ones too (the properties read its whole history).
    journal: Vec<(Epoch, Rec)>,
    /// The journal's records before this sequence are purged: a host reads from it on.
    purged_below: Seq,
    /// A holder had to deliver a decision the journal no longer held.
    lost_decision: bool,
    /// The decisions subject: each message's decision number and what it saw.
    delivered: Vec<(u64, u64)>,
    /// The signals stream: what no holder acknowledged yet (redelivered until one does).
    stream: Vec<u8>,
    /// Signals the sender was told are durable.
    acked: Vec<u8>,
    hosts: Vec<Host>,
    /// The person's checkpoint a takeover reads (the object store's last, or the head's).
    checkpoint: Option<Snapshot>,
    /// Whether a holder's append was ever refused by the fence, a takeover ever read the
    /// journal again, and a holder ever started from a checkpoint: that the search reached the
    /// races the fence is for, and the restore.
    fenced: bool,
    reread: bool,
    restored: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Host {
    run: Option<Run>,
    /// A purge this host will make once its checkpoint's store was answered: its storing task
    /// runs on after the host stopped for the person.
    purge: Option<Covered>,
}

/// What a host holds in memory for the person.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Run {
    holding: Holding,
    outbox: Outbox,
    applied: Vec<u8>,
    /// The decisions made, each with what it saw (the session's, from its checkpoint on).
    decided: Vec<u64>,
    /// The first decision the host holds as journaled (what it may deliver): the journal was
    /// read from a checkpoint that covers the ones before.
    base: u64,
    /// A signal journaled and not yet acknowledged.
    unacked: Option<u8>,
    /// The tick's chain of agent calls.
    stack: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Action {
    Acquire(usize),
    Takeover(usize),
    Renew(usize),
    Take(usize),
    Ack(usize),
    Decide(usize),
    Deliver(usize),
    Call(usize, usize),
    Return(usize),
    /// The host stores its checkpoint of the person.
    Checkpoint(usize),
    /// The host's storing task purges the journal below the checkpoint it stored.
    Purge(usize),
    /// The host stops for the person: it crashed, or could not renew in time.
    Stop(usize),
    Expire,
}

impl Fleet {
    /// Appends `record` for `epoch` where the journal's last sequence must be `expected`.
    fn append(&self, state: &mut State, expected: Seq, epoch: Epoch, record: Rec) -> Stored {
        if self.fencing && state.journal.len() as Seq != expected {
            return Stored::Conflict;
        }
        state.journal.push((epoch, record));
        Stored::At(state.journal.len() as Seq)
    }

    /// Appends `record` for host `h` under its fence: its run once the record is durable; a
    /// refused host stops for the person (`None`).
    fn journal<'s>(&self, state: &'s mut State, h: usize, record: Rec) -> Option<&'s mut Run> {
        let holding = &state.hosts[h].run.as_ref()?.holding;
        let (expected, epoch) = (holding.expected(), holding.epoch);
        let answer = self.append(state, expected, epoch, record);
        if state.hosts[h].run.as_mut()?.holding.appended(answer) == AfterAppend::Go {
            return state.hosts[h].run.as_mut();
        }
        state.hosts[h].run = None;
        state.fenced = true;
        None
    }

    /// The sender is told `signal` is durable, and the stream lets it go.
    fn acknowledge(state: &mut State, signal: u8) {
        state.stream.retain(|s| *s != signal);
        if !state.acked.contains(&signal) {
            state.acked.push(signal);
        }
    }

    /// The decisions subject's last message, as (number, sequence).
    fn last_delivered(state: &State) -> Option<(u64, Seq)> {
        state
            .delivered
            .last()
            .map(|(number, _)| (*number, state.delivered.len() as Seq))
    }

    fn host_name(host: usize) -> String {
        format!("host-{host}")
    }
}

impl Model for Fleet {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            key: None,
            revision: 0,
            journal: Vec::new(),
            purged_below: 0,
            lost_decision: false,
            delivered: Vec::new(),
            stream: (0..self.signals).collect(),
            acked: Vec::new(),
            checkpoint: None,
            fenced: false,
            reread: false,
            restored: false,
            hosts: vec![
                Host {
                    run: None,
                    purge: None,
                };
                self.hosts
            ],
        }]
    }

    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        if let Some((holder, _)) = state.key {
            let holder_stopped = state.hosts[holder].run.is_none();
            if self.pauses || holder_stopped {
                actions.push(Action::Expire);
            }
        }
        for (h, host) in state.hosts.iter().enumerate() {
            if host.purge.is_some() {
                actions.push(Action::Purge(h));
            }
            let Some(run) = &host.run else {
                if state.key.is_none() && state.revision < self.revisions {
                    actions.push(Action::Acquire(h));
                }
                continue;
            };
            actions.push(Action::Stop(h));
            if state.revision < self.revisions {
                actions.push(Action::Renew(h));
            }
            if !run.holding.taken_over {
                actions.push(Action::Takeover(h));
                continue;
            }
            if run.unacked.is_some() {
                actions.push(Action::Ack(h));
            } else if !state.stream.is_empty() {
                actions.push(Action::Take(h));
            }
            if (run.decided.len() as u64) < u64::from(self.signals)
                && run.decided.last().copied().unwrap_or(0) < run.applied.len() as u64
            {
                actions.push(Action::Decide(h));
            }
            if run.outbox.due(run.decided.len() as u64) {
                actions.push(Action::Deliver(h));
            }
            for agent in 0..self.agents.len() {
                actions.push(Action::Call(h, agent));
            }
            if !run.stack.is_empty() {
                actions.push(Action::Return(h));
            }
            // As `assistant` does: right after a signal's append was stored (and before it is
            // acknowledged), whatever other hosts did meanwhile.
            let after_append = !matches!(
                self.checkpoints,
                Checkpoints::Off | Checkpoints::BeforeAppend
            );
            if after_append && run.unacked.is_some() {
                actions.push(Action::Checkpoint(h));
            }
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let mut state = last.clone();
        match action {
            Action::Expire => state.key = None,
            Action::Stop(h) => state.hosts[h].run = None,
            Action::Acquire(h) => {
                let holder_name = state.key.map(|(holder, _)| Self::host_name(holder));
                let entry = match (state.key, &holder_name) {
                    (Some((_, revision)), Some(name)) => LeaseEntry::Held {
                        host: name,
                        revision,
                    },
                    _ => LeaseEntry::Absent,
                };
                if lease_step(&Self::host_name(h), None, entry) != LeaseStep::Create {
                    return None;
                }
                state.revision += 1;
                state.key = Some((h, state.revision));
                // A journal this host cannot rebuild: the claim fails (the lease is let go).
                let TakenOver {
                    applied,
                    decided,
                    base,
                    restored,
                    ..
                } = Self::taken_over(&state)?;
                state.restored |= restored;
                state.hosts[h].run = Some(Run {
                    holding: Holding::acquired(state.revision, state.journal.len() as Seq),
                    outbox: Outbox::read(Self::last_delivered(&state)),
                    applied,
                    decided,
                    base,
                    unacked: None,
                    stack: Vec::new(),
                });
            }
            Action::Renew(h) => {
                let me = Self::host_name(h);
                let holder_name = state.key.map(|(holder, _)| Self::host_name(holder));
                let entry = match (state.key, &holder_name) {
                    (Some((_, revision)), Some(name)) => LeaseEntry::Held {
                        host: name,
                        revision,
                    },
                    _ => LeaseEntry::Absent,
                };
                let run = state.hosts[h].run.as_ref()?;
                match lease_step(&me, Some(&run.holding), entry) {
                    LeaseStep::Renew { revision } => {
                        // Compare-and-set: the key is still at `revision`.
                        debug_assert_eq!(state.key, Some((h, revision)));
                        state.revision += 1;
                        state.key = Some((h, state.revision));
                        let revision = state.revision;
                        if let Some(run) = state.hosts[h].run.as_mut() {
                            run.holding.renewed(revision);
                        }
                    }
                    LeaseStep::Lost => state.hosts[h].run = None,
                    LeaseStep::Create | LeaseStep::Wait => return None,
                }
            }
            Action::Takeover(h) => {
                let run = state.hosts[h].run.clone()?;
                let record = Record::Takeover {
                    host: Self::host_name(h),
                    epoch: run.holding.epoch,
                };
                let answer = self.append(
                    &mut state,
                    run.holding.expected(),
                    run.holding.epoch,
                    record,
                );
                let reread = Self::taken_over(&state);
                let fence = state.journal.len() as Seq;
                let run = state.hosts[h].run.as_mut()?;
                match run.holding.appended(answer) {
                    AfterAppend::Go => {}
                    AfterAppend::Reread => {
                        state.reread = true;
                        // Read again and not rebuilt: the hold fails, the host stops.
                        let Some(TakenOver {
                            applied,
                            decided,
                            base,
                            newest,
                            ..
                        }) = reread
                        else {
                            state.hosts[h].run = None;
                            return Some(state);
                        };
                        if run.holding.reread(fence, newest) == AfterAppend::Fenced {
                            state.hosts[h].run = None;
                            state.fenced = true;
                        } else {
                            run.applied = applied;
                            run.decided = decided;
                            run.base = base;
                        }
                    }
                    AfterAppend::Fenced => unreachable!("a takeover is not fenced"),
                }
            }
            Action::Take(h) => {
                let run = state.hosts[h].run.clone()?;
                let signal = state.stream[0];
                if run.applied.contains(&signal) {
                    // Journaled by a holder that died before acknowledging it: applied once.
                    Self::acknowledge(&mut state, signal);
                    return Some(state);
                }
                let record = Record::Signal {
                    id: signal.to_string(),
                    signal,
                };
                if self.checkpoints == Checkpoints::BeforeAppend {
                    let mut applied = run.applied.clone();
                    applied.push(signal);
                    state.checkpoint = Some(Snapshot {
                        fence: run.holding.fence + 1,
                        epoch: run.holding.epoch,
                        applied,
                        decided: run.decided.clone(),
                        inbox_next: signal + 1,
                    });
                }
                if let Some(run) = self.journal(&mut state, h, record) {
                    run.applied.push(signal);
                    run.unacked = Some(signal);
                }
            }
            Action::Ack(h) => {
                let run = state.hosts[h].run.as_mut()?;
                let signal = run.unacked.take()?;
                Self::acknowledge(&mut state, signal);
            }
            Action::Decide(h) => {
                let run = state.hosts[h].run.clone()?;
                let saw = run.applied.len() as u64;
                let record = Record::Decision {
                    number: run.decided.len() as u64,
                    decision: saw,
                };
                if (run.decided.len() as u64) < run.base {
                    return None;
                }
                if let Some(run) = self.journal(&mut state, h, record) {
                    run.decided.push(saw);
                }
            }
            Action::Deliver(h) => {
                let run = state.hosts[h].run.clone()?;
                let mut number = run.outbox.next;
                // Below what it holds as journaled: delivered by another holder (the journal
                // is purged only below what was delivered), as the subject's last message
                // says; else purged before it was delivered.
                if number < run.base {
                    let last = Self::last_delivered(&state);
                    let run = state.hosts[h].run.as_mut()?;
                    if run.outbox.caught_up(last).is_err() || run.outbox.next < run.base {
                        state.lost_decision = true;
                        state.hosts[h].run = None;
                        return Some(state);
                    }
                    number = run.outbox.next;
                    if !run.outbox.due(run.decided.len() as u64) {
                        return Some(state);
                    }
                }
                let run = state.hosts[h].run.clone()?;
                let saw = run.decided[number as usize];
                let answer = if self.fencing && state.delivered.len() as Seq != run.outbox.last {
                    Stored::Conflict
                } else {
                    state.delivered.push((number, saw));
                    Stored::At(state.delivered.len() as Seq)
                };
                let last = Self::last_delivered(&state);
                let run = state.hosts[h].run.as_mut()?;
                if run.outbox.published(answer) == AfterPublish::ReadLast {
                    run.outbox
                        .caught_up(last)
                        .expect("decisions only go forward");
                }
            }
            Action::Call(h, agent) => {
                let run = state.hosts[h].run.as_mut()?;
                let chain: Vec<&str> = run.stack.iter().map(|a| self.agents[*a]).collect();
                // The host's own check: a cycle or a call too deep is refused (quarantined),
                // and nothing is pushed.
                check_chain(&chain, self.agents[agent]).ok()?;
                run.stack.push(agent);
            }
            Action::Return(h) => {
                state.hosts[h].run.as_mut()?.stack.pop()?;
            }
            Action::Checkpoint(h) => {
                let run = state.hosts[h].run.as_ref()?;
                let snapshot = Snapshot {
                    fence: run.holding.fence,
                    epoch: run.holding.epoch,
                    applied: run.applied.clone(),
                    decided: run.decided.clone(),
                    inbox_next: run.applied.iter().max().map_or(0, |s| s + 1),
                };
                let forward = state
                    .checkpoint
                    .as_ref()
                    .is_none_or(|head| head.fence < snapshot.fence);
                let moves = match self.checkpoints {
                    Checkpoints::Compacted | Checkpoints::PurgeUndelivered => forward,
                    _ => true,
                };
                if moves {
                    if self.checkpoints.purges() {
                        state.hosts[h].purge = Some(snapshot.covered());
                    }
                    state.checkpoint = Some(snapshot);
                }
            }
            Action::Purge(h) => {
                let covered = state.hosts[h].purge.take()?;
                let delivered = state.delivered.len() as u64;
                if delivered >= covered.decisions
                    || self.checkpoints == Checkpoints::PurgeUndelivered
                {
                    state.purged_below = state.purged_below.max(covered.fence);
                }
            }
        }
        Some(state)
    }

    fn within_boundary(&self, state: &State) -> bool {
        state.revision <= self.revisions
    }

    fn properties(&self) -> Vec<Property<Self>> {
        properties::properties()
    }
}

#[cfg(test)]
mod checks;
mod properties;
mod read;
use read::TakenOver;
