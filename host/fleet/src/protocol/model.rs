//! The protocol as a model that stateright checks: one person, a few hosts, their inbox, the
//! lease bucket, their life (the fleet's home of lives: the signals it took, in one log that
//! each opener fences with its marker) and their journal (takeovers and decisions) and
//! decisions subject, with every interleaving of the hosts' steps, their crashes and lost
//! renewals (a host that stops for the person forgets all it held for them, which is what a
//! crash does to it) and the server's expiry of the key.
//!
//! The hosts decide with the protocol's own functions ([`lease_step`], [`Holding`], [`Outbox`],
//! [`replay_from`](crate::protocol::replay_from)) and the real chain check of agent-to-agent
//! calls ([`check_chain`]); what is modelled is only what NATS does: the bucket's create and
//! compare-and-set, the journal's expected-last-sequence check (which the `fencing: false`
//! mutation removes) and the life's, over all its subjects, from each open's marker on (which
//! `life_fencing: false` removes). A host takes the person over (its takeover in the journal),
//! opens the life (its marker, then what the life holds: the signals it applies, the inbox read
//! on after them), takes each next inbox signal into the life in one write with its position,
//! and makes, journals and delivers decisions. With `pauses`, the server may expire a key while
//! its holder still believes it holds it (a paused process, a partition, a clock that jumped);
//! without, a key expires only after its holder stopped or crashed. A write whose answer never
//! comes back is that write followed by [`Action::Stop`] (`jetstream` returns the timeout as an
//! error, and the host stops for the person). With [`Compaction::Compacted`], a holder moves
//! the person's head to its last journaled decision (as the hold does at a new day's first),
//! only forward, and purges the journal below it once the decisions it covers were delivered,
//! at any later moment (the task outlives its hold); a takeover then reads only the kept
//! records, from the head, as the fleet does (`store::Fleet::read_journal`), and the mutations
//! (a head that moves back, a purge of undelivered decisions) are found.

use stateright::{Model, Property};

use aura_contract::crossing::check_chain;

use super::{
    AfterAppend, AfterPublish, Covered, Epoch, Holding, LeaseEntry, LeaseStep, Outbox, Record, Seq,
    Stored, lease_step,
};

/// A journal record in the model: a decision's payload is how many signals it saw (the model
/// journals no signals: they are the life's).
type Rec = Record<u8, u64>;

/// The model's bounds.
#[derive(Debug, Clone)]
pub(super) struct Fleet {
    pub hosts: usize,
    /// Signals in the inbox at the start (when they were sent does not matter to the
    /// protocol: a signal is durable once the inbox holds it, the life's once it took it).
    pub signals: u8,
    /// How many times the key may be written (creates and renewals) in all: revisions must
    /// stay finite for the search to end.
    pub revisions: u64,
    /// The agents a host's tick may call, by name.
    pub agents: &'static [&'static str],
    pub pauses: bool,
    /// The journal checks the expected last sequence (the protocol); `false` is the mutation.
    pub fencing: bool,
    /// The life checks its last sequence from each open's marker on; `false` is the mutation.
    pub life_fencing: bool,
    /// Whether holders compact the journal, and how.
    pub compaction: Compaction,
}

/// Whether a holder moves the person's head and purges the journal below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Compaction {
    /// Never.
    Off,
    /// As the hold does: the head moved to a holder's last journaled decision only forward,
    /// then (at any later moment, whoever holds the person by then) the journal purged below
    /// it if every decision it covers was delivered.
    Compacted,
    /// The mutation: the head is the last one written (it may move back), and purged below.
    HeadBack,
    /// The mutation: purged below the head whether its decisions were delivered or not.
    PurgeUndelivered,
}

impl Compaction {
    fn purges(self) -> bool {
        self != Self::Off
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
    /// The life: each entry with the number of the open that wrote it (from 1), a marker
    /// (`None`: each open writes one first) or a signal it took.
    life: Vec<(u8, Option<u8>)>,
    /// The life's opens so far.
    opens: u8,
    hosts: Vec<Host>,
    /// What the person's head covers, if it moved.
    head: Option<Covered>,
    /// Whether a holder's append was ever refused by a fence, a takeover ever read the
    /// journal again, and a holder ever opened a life another had taken signals into: that
    /// the search reached the races the fences are for, and the resume.
    fenced: bool,
    reread: bool,
    resumed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Host {
    run: Option<Run>,
    /// A purge this host will make once its head's move was answered: its task runs on after
    /// the host stopped for the person.
    purge: Option<Covered>,
}

/// What a host holds in memory for the person.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Run {
    holding: Holding,
    outbox: Outbox,
    /// Once it opened the life: its open's number, and the life's length as it last wrote or
    /// read it (what its next write must find).
    life: Option<(u8, usize)>,
    /// The signals applied, in the order the life holds them.
    applied: Vec<u8>,
    /// The decisions made from decision `base` on, each with what it saw.
    decided: Vec<u64>,
    /// The first decision the host holds as journaled (the journal was read from a head that
    /// covers the ones before).
    base: u64,
    /// The tick's chain of agent calls.
    stack: Vec<usize>,
}

impl Run {
    /// The number of the next decision.
    fn made(&self) -> u64 {
        self.base + self.decided.len() as u64
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Action {
    Acquire(usize),
    Takeover(usize),
    /// The host opens the person's life.
    Open(usize),
    Renew(usize),
    /// The host takes the next inbox signal into the life.
    Take(usize),
    Decide(usize),
    Deliver(usize),
    Call(usize, usize),
    Return(usize),
    /// The host moves the person's head to its last journaled decision.
    Compact(usize),
    /// The host's task purges the journal below the head it moved.
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

    /// The signals the life holds, in order.
    fn life_signals(state: &State) -> Vec<u8> {
        state
            .life
            .iter()
            .filter_map(|(_, signal)| *signal)
            .collect()
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

    /// What host `h` reads of the lease's key.
    fn entry<'a>(state: &State, name: &'a Option<String>) -> LeaseEntry<'a> {
        match (state.key, name) {
            (Some((_, revision)), Some(name)) => LeaseEntry::Held {
                host: name,
                revision,
            },
            _ => LeaseEntry::Absent,
        }
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
            life: Vec::new(),
            opens: 0,
            head: None,
            fenced: false,
            reread: false,
            resumed: false,
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
            if run.life.is_none() {
                actions.push(Action::Open(h));
                continue;
            }
            if run.applied.len() < usize::from(self.signals) {
                actions.push(Action::Take(h));
            }
            if run.made() < u64::from(self.signals)
                && run.decided.last().copied().unwrap_or(0) < run.applied.len() as u64
            {
                actions.push(Action::Decide(h));
            }
            if run.outbox.due(run.made()) {
                actions.push(Action::Deliver(h));
            }
            for agent in 0..self.agents.len() {
                actions.push(Action::Call(h, agent));
            }
            if !run.stack.is_empty() {
                actions.push(Action::Return(h));
            }
            // As the hold does: right after it journaled a decision, whatever other hosts did
            // meanwhile.
            let last = usize::try_from(run.holding.fence)
                .ok()
                .and_then(|f| f.checked_sub(1));
            let decided = last
                .and_then(|at| state.journal.get(at))
                .is_some_and(|(epoch, r)| {
                    *epoch == run.holding.epoch && matches!(r, Record::Decision { .. })
                });
            if self.compaction.purges() && decided {
                actions.push(Action::Compact(h));
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
                let entry = Self::entry(&state, &holder_name);
                if lease_step(&Self::host_name(h), None, entry) != LeaseStep::Create {
                    return None;
                }
                state.revision += 1;
                state.key = Some((h, state.revision));
                // A journal this host cannot rebuild: the claim fails (the lease is let go).
                let TakenOver { decided, base, .. } = Self::taken_over(&state)?;
                state.hosts[h].run = Some(Run {
                    holding: Holding::acquired(state.revision, state.journal.len() as Seq),
                    outbox: Outbox::read(Self::last_delivered(&state)),
                    life: None,
                    applied: Vec::new(),
                    decided,
                    base,
                    stack: Vec::new(),
                });
            }
            Action::Renew(h) => {
                let me = Self::host_name(h);
                let holder_name = state.key.map(|(holder, _)| Self::host_name(holder));
                let entry = Self::entry(&state, &holder_name);
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
            Action::Takeover(h) => self.takeover(&mut state, h)?,
            Action::Open(h) => {
                // Its marker first, then what the life holds.
                state.opens += 1;
                let me = state.opens;
                state.life.push((me, None));
                let applied = Self::life_signals(&state);
                state.resumed |= !applied.is_empty();
                let length = state.life.len();
                let run = state.hosts[h].run.as_mut()?;
                run.life = Some((me, length));
                run.applied = applied;
            }
            Action::Take(h) => {
                let run = state.hosts[h].run.as_ref()?;
                let (me, length) = run.life?;
                // The inbox read on after the life's position: the next signal.
                let signal = run.applied.len() as u8;
                if self.life_fencing && state.life.len() != length {
                    state.hosts[h].run = None;
                    state.fenced = true;
                    return Some(state);
                }
                state.life.push((me, Some(signal)));
                let length = state.life.len();
                let run = state.hosts[h].run.as_mut()?;
                run.life = Some((me, length));
                run.applied.push(signal);
            }
            Action::Decide(h) => {
                let run = state.hosts[h].run.clone()?;
                let saw = run.applied.len() as u64;
                let record = Record::Decision {
                    number: run.made(),
                    decision: saw,
                };
                if let Some(run) = self.journal(&mut state, h, record) {
                    run.decided.push(saw);
                }
            }
            Action::Deliver(h) => self.deliver(&mut state, h)?,
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
            Action::Compact(h) => {
                let run = state.hosts[h].run.as_ref()?;
                let covered = Covered {
                    fence: run.holding.fence,
                    decisions: run.made(),
                    epoch: run.holding.epoch,
                    inbox_next: run.applied.len() as u64,
                };
                let forward = state.head.is_none_or(|head| head.fence < covered.fence);
                if forward || self.compaction == Compaction::HeadBack {
                    state.hosts[h].purge = Some(covered);
                    state.head = Some(covered);
                }
            }
            Action::Purge(h) => {
                let covered = state.hosts[h].purge.take()?;
                let delivered = state.delivered.len() as u64;
                if delivered >= covered.decisions || self.compaction == Compaction::PurgeUndelivered
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

impl Fleet {
    /// Host `h` appends its takeover; a refusal reads the journal again (and the host stops
    /// when it cannot rebuild it, or a newer holder took the person over).
    fn takeover(&self, state: &mut State, h: usize) -> Option<()> {
        let run = state.hosts[h].run.clone()?;
        let record = Record::Takeover {
            host: Self::host_name(h),
            epoch: run.holding.epoch,
        };
        let answer = self.append(state, run.holding.expected(), run.holding.epoch, record);
        let reread = Self::taken_over(state);
        let fence = state.journal.len() as Seq;
        let run = state.hosts[h].run.as_mut()?;
        match run.holding.appended(answer) {
            AfterAppend::Go => {}
            AfterAppend::Reread => {
                state.reread = true;
                // Read again and not rebuilt: the hold fails, the host stops.
                let Some(TakenOver {
                    decided,
                    base,
                    newest,
                }) = reread
                else {
                    state.hosts[h].run = None;
                    return Some(());
                };
                if run.holding.reread(fence, newest) == AfterAppend::Fenced {
                    state.hosts[h].run = None;
                    state.fenced = true;
                } else {
                    run.decided = decided;
                    run.base = base;
                }
            }
            AfterAppend::Fenced => unreachable!("a takeover is not fenced"),
        }
        Some(())
    }

    /// Host `h` delivers its next decision due.
    fn deliver(&self, state: &mut State, h: usize) -> Option<()> {
        let run = state.hosts[h].run.clone()?;
        let mut number = run.outbox.next;
        // Below what it holds as journaled: delivered by another holder (the journal is
        // purged only below what was delivered), as the subject's last message says; else
        // purged before it was delivered.
        if number < run.base {
            let last = Self::last_delivered(state);
            let run = state.hosts[h].run.as_mut()?;
            if run.outbox.caught_up(last).is_err() || run.outbox.next < run.base {
                state.lost_decision = true;
                state.hosts[h].run = None;
                return Some(());
            }
            number = run.outbox.next;
            if !run.outbox.due(run.made()) {
                return Some(());
            }
        }
        let run = state.hosts[h].run.clone()?;
        let saw = run.decided[(number - run.base) as usize];
        let answer = if self.fencing && state.delivered.len() as Seq != run.outbox.last {
            Stored::Conflict
        } else {
            state.delivered.push((number, saw));
            Stored::At(state.delivered.len() as Seq)
        };
        let last = Self::last_delivered(state);
        let run = state.hosts[h].run.as_mut()?;
        if run.outbox.published(answer) == AfterPublish::ReadLast {
            run.outbox
                .caught_up(last)
                .expect("decisions only go forward");
        }
        Some(())
    }
}

#[cfg(test)]
mod checks;
mod properties;
mod read;
use read::TakenOver;
