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

use stateright::{Model, Property};

use aura_contract::crossing::check_chain;
use aura_contract::limits::AGENT_CALL_DEPTH_MAX;

use super::{
    AfterAppend, AfterPublish, Epoch, Holding, LeaseEntry, LeaseStep, Outbox, Record, Seq, Stored,
    lease_step, replay,
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

/// When a holder captures its checkpoint of the person (the object store keeps the last one
/// written, by whichever host: it has no compare-and-set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Checkpoints {
    /// None are stored.
    Off,
    /// Of what the journal holds up to the host's fence (`assistant` captures right after an
    /// append was stored, under its writer).
    AfterAppend,
    /// The mutation: of a signal taken before its append was answered.
    BeforeAppend,
}

/// A stored checkpoint: the journal sequence it covers, the signals applied by then, and the
/// first inbox signal it does not hold.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Snapshot {
    fence: Seq,
    epoch: Epoch,
    applied: Vec<u8>,
    inbox_next: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct State {
    /// The lease bucket's key for the person: its holder and revision.
    key: Option<(usize, u64)>,
    /// The bucket's last revision.
    revision: u64,
    /// The journal: each record with the epoch of the host that wrote it (its sequence is its
    /// index + 1).
    journal: Vec<(Epoch, Rec)>,
    /// The decisions subject: each message's decision number and what it saw.
    delivered: Vec<(u64, u64)>,
    /// The signals stream: what no holder acknowledged yet (redelivered until one does).
    stream: Vec<u8>,
    /// Signals the sender was told are durable.
    acked: Vec<u8>,
    hosts: Vec<Host>,
    /// The object store's checkpoint of the person.
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
}

/// What a host holds in memory for the person.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Run {
    holding: Holding,
    outbox: Outbox,
    applied: Vec<u8>,
    /// The decisions journaled, each with what it saw.
    decided: Vec<u64>,
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

    /// A host's state rebuilt from the journal, as at takeover, or `None` when the journal
    /// does not replay (two decisions under one number: written without the fence).
    fn replay(state: &State) -> Option<(Vec<u8>, Vec<u64>, Epoch)> {
        let records = state
            .journal
            .iter()
            .enumerate()
            .map(|(index, (_, record))| (index as Seq + 1, record.clone()));
        let replayed = replay(records).ok()?;
        let applied = replayed.signals.into_iter().map(|(_, s)| s).collect();
        Some((applied, replayed.decisions, replayed.epoch))
    }

    /// [`Fleet::replay`], or nothing when the journal does not replay (a property says so).
    fn replayed(state: &State) -> (Vec<u8>, Vec<u64>, Epoch) {
        Self::replay(state).unwrap_or_default()
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
            delivered: Vec::new(),
            stream: (0..self.signals).collect(),
            acked: Vec::new(),
            checkpoint: None,
            fenced: false,
            reread: false,
            restored: false,
            hosts: vec![Host { run: None }; self.hosts],
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
            if self.checkpoints == Checkpoints::AfterAppend && run.unacked.is_some() {
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
                let (mut applied, decided, newest) = Self::replayed(&state);
                // The newest checkpoint that fits the journal, then the journal's signals after
                // it (`assistant::session_dir::restore`, then the inbox ids it does not hold).
                if let Some(snapshot) = &state.checkpoint {
                    let fits =
                        snapshot.fence <= state.journal.len() as Seq && snapshot.epoch <= newest;
                    if fits {
                        let after = applied.iter().filter(|s| **s >= snapshot.inbox_next);
                        applied = snapshot.applied.iter().chain(after).copied().collect();
                        state.restored = true;
                    }
                }
                state.hosts[h].run = Some(Run {
                    holding: Holding::acquired(state.revision, state.journal.len() as Seq),
                    outbox: Outbox::read(Self::last_delivered(&state)),
                    applied,
                    decided,
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
                let (applied, decided, newest) = Self::replayed(&state);
                let fence = state.journal.len() as Seq;
                let run = state.hosts[h].run.as_mut()?;
                match run.holding.appended(answer) {
                    AfterAppend::Go => {}
                    AfterAppend::Reread => {
                        state.reread = true;
                        if run.holding.reread(fence, newest) == AfterAppend::Fenced {
                            state.hosts[h].run = None;
                            state.fenced = true;
                        } else {
                            run.applied = applied;
                            run.decided = decided;
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
                if let Some(run) = self.journal(&mut state, h, record) {
                    run.decided.push(saw);
                }
            }
            Action::Deliver(h) => {
                let run = state.hosts[h].run.clone()?;
                let number = run.outbox.next;
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
                state.checkpoint = Some(Snapshot {
                    fence: run.holding.fence,
                    epoch: run.holding.epoch,
                    applied: run.applied.clone(),
                    inbox_next: run.applied.iter().max().map_or(0, |s| s + 1),
                });
            }
        }
        Some(state)
    }

    fn within_boundary(&self, state: &State) -> bool {
        state.revision <= self.revisions
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("the journal replays", |_, s: &State| {
                Fleet::replay(s).is_some()
            }),
            Property::always(
                "one writer at a time (no stale record after a takeover)",
                |_, s: &State| {
                    let mut newest = 0;
                    s.journal.iter().all(|(epoch, record)| {
                        if let Record::Takeover { epoch: taken, .. } = record {
                            newest = newest.max(*taken);
                        }
                        *epoch >= newest
                    })
                },
            ),
            Property::always("no acknowledged signal lost", |_, s: &State| {
                let journaled: Vec<u8> = s
                    .journal
                    .iter()
                    .filter_map(|(_, r)| match r {
                        Record::Signal { signal, .. } => Some(*signal),
                        _ => None,
                    })
                    .collect();
                s.acked.iter().all(|a| journaled.contains(a))
            }),
            Property::always(
                "the current holder applied every journaled signal once",
                |_, s: &State| {
                    let (applied, _, _) = Fleet::replayed(s);
                    s.hosts.iter().filter_map(|h| h.run.as_ref()).all(|run| {
                        let current =
                            run.holding.taken_over && run.holding.fence == s.journal.len() as Seq;
                        !current || run.applied == applied
                    })
                },
            ),
            Property::always(
                "no decision delivered twice or out of order",
                |_, s: &State| {
                    s.delivered
                        .iter()
                        .enumerate()
                        .all(|(index, (number, _))| *number == index as u64)
                },
            ),
            Property::always(
                "every decision delivered is the journal's",
                |_, s: &State| {
                    let (_, decided, _) = Fleet::replayed(s);
                    s.delivered
                        .iter()
                        .all(|(number, saw)| decided.get(*number as usize) == Some(saw))
                },
            ),
            Property::always(
                "at most one active host (when the lease's timing holds)",
                |m: &Fleet, s: &State| {
                    m.pauses || s.hosts.iter().filter(|h| h.run.is_some()).count() <= 1
                },
            ),
            Property::always("no agent twice in a call stack", |_, s: &State| {
                s.hosts.iter().filter_map(|h| h.run.as_ref()).all(|run| {
                    let mut seen = run.stack.clone();
                    seen.sort_unstable();
                    seen.windows(2).all(|w| w[0] != w[1])
                })
            }),
            Property::always("call depth bounded", |_, s: &State| {
                s.hosts
                    .iter()
                    .filter_map(|h| h.run.as_ref())
                    .all(|run| run.stack.len() <= AGENT_CALL_DEPTH_MAX)
            }),
            Property::always("pending calls bounded", |m: &Fleet, s: &State| {
                let pending: usize = s
                    .hosts
                    .iter()
                    .filter_map(|h| h.run.as_ref())
                    .map(|run| run.stack.len())
                    .sum();
                pending <= m.agents.len() * AGENT_CALL_DEPTH_MAX
            }),
            Property::sometimes(
                "a stale holder's append refused by the fence",
                |_, s: &State| s.fenced,
            ),
            Property::sometimes(
                "a takeover refused, the journal read again",
                |_, s: &State| s.reread,
            ),
            Property::sometimes(
                "a holder started from a checkpoint",
                |m: &Fleet, s: &State| m.checkpoints == Checkpoints::Off || s.restored,
            ),
            Property::sometimes(
                "a takeover, then every signal acknowledged and every decision delivered",
                |m: &Fleet, s: &State| {
                    let takeovers = s
                        .journal
                        .iter()
                        .filter(|(_, r)| matches!(r, Record::Takeover { .. }))
                        .count();
                    let (_, decided, _) = Fleet::replayed(s);
                    takeovers >= 2
                        && s.acked.len() == usize::from(m.signals)
                        && !decided.is_empty()
                        && s.delivered.len() == decided.len()
                },
            ),
        ]
    }
}

#[cfg(test)]
mod checks;
