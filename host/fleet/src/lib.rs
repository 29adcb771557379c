//! aura's fleet: many people's live assistants spread over hosts on NATS, each person's on
//! exactly one host at a time, their state in JetStream so that it outlives any one machine.
//!
//! It owns the fleet's protocol ([`protocol`]: the lease, the fence, delivery) as decisions
//! that a model checker explores in `cargo test`, their carrying out as steps on a store
//! ([`store`]: one trait, with JetStream ([`jetstream`]) the store a fleet runs on and the
//! deterministic simulation's the other), a life's home on that store ([`life`]), and the hosts that hold people ([`placement`],
//! [`assistant`]). It must not decide what an assistant does: the orchestrator does, on
//! whichever host holds the person.

pub mod assistant;
pub mod jetstream;
pub mod life;
pub mod placement;
pub mod protocol;
pub mod store;
