//! aura's fleet: many people's live assistants spread over hosts on NATS, each person's on
//! exactly one host at a time, their state in JetStream so that it outlives any one machine.
//!
//! It owns the fleet's protocol ([`protocol`]: the lease, the fence, delivery) as decisions
//! that a model checker explores in `cargo test`, and their carrying out on JetStream
//! ([`jetstream`]). It must not decide what an assistant does: the orchestrator does, on
//! whichever host holds the person.

pub mod assistant;
pub mod checkpoint;
pub mod jetstream;
pub mod placement;
pub mod protocol;
