//! A held person's lease kept while their hold runs: renewed every `FLEET_RENEW_EVERY_MS`,
//! whatever the session and its inbox are doing, until it is not this host's any more. It
//! must not decide who holds a person (the protocol's lease step does).

use std::sync::Arc;
use std::time::Duration;

use aura_contract::limits::FLEET_RENEW_EVERY_MS;

use super::{Ended, Holder};
use crate::protocol::LeaseStep;

/// Renews the lease every `FLEET_RENEW_EVERY_MS`, whatever the session and its inbox are
/// doing, until it is not this host's any more (the hold then ends).
pub(super) async fn renewals(holder: Arc<Holder>) {
    let mut renew = tokio::time::interval(Duration::from_millis(FLEET_RENEW_EVERY_MS));
    renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        renew.tick().await;
        if let Err(why) = renewed(&holder).await {
            holder.end(why);
            return;
        }
    }
}

/// Renews the lease once; `Err` when it is not this host's any more.
async fn renewed(holder: &Holder) -> Result<(), Ended> {
    let mut holding = holder.holding();
    match holder
        .fleet
        .renew(&holder.person, &holder.me, &mut holding)
        .await
    {
        Ok(LeaseStep::Renew { .. }) => {
            if let Ok(mut held) = holder.holding.lock() {
                held.revision = holding.revision;
            }
            Ok(())
        }
        Ok(_) => Err(Ended::Lost),
        Err(error) => Err(Ended::Failed(error.to_string())),
    }
}
