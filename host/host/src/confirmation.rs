//! The user's yes, carried to the host that runs the call: a confirming front's signed proof.
//!
//! A confirm_required tool (`calendar.schedule_event`) changes the user's world, so it runs only
//! once the user said yes. In one process the front that asked is the host that runs it; a
//! worker across the wire cannot see the question, so a client host that dispatches a call the
//! user confirmed ([`crate::CallRequest::confirmed`]) sends a proof with it: its identity's
//! signature over the call's canonical text's sha256 and an expiry at most
//! [`CONFIRMATION_TTL_MS`] away ([`proof_message`]). A worker that trusts fronts
//! ([`Confirmations::required`]) refuses a confirm_required call without a proof signed by one of
//! them over that very call, or with an expired one, or one it already took (a replay: the
//! same call and proof sent again with another frame, so not a retry its answer cache
//! answers); the refusal is quarantined there like any other. It owns the proof's text, its
//! message, making one and checking one; it must not ask the user (the fronts do) nor decide
//! which tools need a yes (the catalogue does).

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use aura_contract::digest::hex;
use aura_contract::limits::{
    CONFIRMATION_CLOCK_SKEW_MS, CONFIRMATION_TTL_MS, CONFIRMATIONS_SEEN_MAX,
};
use aura_plugins::signing::{Identity, TrustedKeys};

/// The version tag a proof's text starts with.
const PROOF_VERSION: &str = "v1";

/// What a front signs: a domain tag, the sha256 of the call's canonical text, and when the
/// proof expires (ms since the Unix epoch).
pub fn proof_message(canonical_call: &str, expires_unix_ms: u64) -> Vec<u8> {
    format!(
        "aura-confirmation.v1\n{}\n{expires_unix_ms}",
        hex(&Sha256::digest(canonical_call.as_bytes()))
    )
    .into_bytes()
}

/// Now, in ms since the Unix epoch.
pub fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A host's side of confirmations: the identity it proves its users' yeses with, the fronts
/// whose proofs it takes, and the proofs it already took (until they expire).
#[derive(Debug, Default)]
pub struct Confirmations {
    identity: Option<Identity>,
    fronts: TrustedKeys,
    /// sha256 of a confirmed call → when its proof expires.
    seen: Mutex<HashMap<[u8; 32], u64>>,
}

impl Confirmations {
    /// A host that signs with `identity` (if any) and takes proofs from `fronts`.
    pub fn new(identity: Option<Identity>, fronts: TrustedKeys) -> Self {
        Self {
            identity,
            fronts,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// Whether a confirm_required call needs a proof here (some front is trusted).
    pub fn required(&self) -> bool {
        !self.fronts.is_empty()
    }

    /// The proof of the user's yes to `canonical_call`, made `now_ms`: `v1 SIGNER EXPIRES
    /// SIGNATURE`; `None` without an identity (a worker that needs one then refuses).
    pub fn prove(&self, canonical_call: &str, now_ms: u64) -> Option<String> {
        let identity = self.identity.as_ref()?;
        let expires = now_ms.saturating_add(CONFIRMATION_TTL_MS);
        let signature = identity.sign(&proof_message(canonical_call, expires));
        Some(format!(
            "{PROOF_VERSION} {} {expires} {signature}",
            identity.public()
        ))
    }

    /// Takes `proof` for `canonical_call` at `now_ms`, or says why not: none, not a proof,
    /// signed by a front not trusted here or not over this call, expired (or expiring further
    /// off than a proof may), or already taken. A taken proof is kept until it expires.
    pub fn check(
        &self,
        canonical_call: &str,
        proof: Option<&str>,
        now_ms: u64,
    ) -> Result<(), String> {
        let Some(proof) = proof else {
            return Err("it carries no proof of the user's yes".into());
        };
        let parts: Vec<&str> = proof.split(' ').collect();
        let [PROOF_VERSION, signer, expires, signature] = parts.as_slice() else {
            return Err("its proof of the user's yes is not one".into());
        };
        // One spelling per value: digits only, no sign, no leading zero.
        let canonical = !expires.is_empty()
            && expires.bytes().all(|b| b.is_ascii_digit())
            && (expires.len() == 1 || !expires.starts_with('0'));
        let Some(expires) = expires.parse::<u64>().ok().filter(|_| canonical) else {
            return Err("its proof of the user's yes is not one".into());
        };
        self.fronts
            .check(
                Some(signer),
                &proof_message(canonical_call, expires),
                Some(signature),
            )
            .map_err(|refusal| format!("its proof of the user's yes is refused: {refusal}"))?;
        if expires.saturating_add(CONFIRMATION_CLOCK_SKEW_MS) < now_ms {
            return Err(format!(
                "its proof of the user's yes expired {} ms ago",
                now_ms - expires
            ));
        }
        if expires > now_ms.saturating_add(CONFIRMATION_TTL_MS + CONFIRMATION_CLOCK_SKEW_MS) {
            return Err(format!(
                "its proof of the user's yes expires further off than {CONFIRMATION_TTL_MS} ms"
            ));
        }
        // Keyed on the call alone: a confirmed call runs once here within its proof's life,
        // however its proof is spelled or whichever front proved it.
        let key: [u8; 32] = Sha256::digest(canonical_call.as_bytes()).into();
        let Ok(mut seen) = self.seen.lock() else {
            return Err("the host's record of proofs is unusable".into());
        };
        seen.retain(|_, until| until.saturating_add(CONFIRMATION_CLOCK_SKEW_MS) >= now_ms);
        if seen.contains_key(&key) {
            return Err("its proof of the user's yes was already used (a replay)".into());
        }
        if seen.len() >= CONFIRMATIONS_SEEN_MAX {
            return Err(format!(
                "{CONFIRMATIONS_SEEN_MAX} confirmed calls are still within their proofs' lifetime; send it again shortly"
            ));
        }
        seen.insert(key, expires);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALL: &str = r#"{"agent":"calendar","call_id":"t_confirm001","tool":"schedule_event"}"#;

    fn front() -> (Confirmations, Confirmations) {
        let identity = Identity::generate().unwrap();
        let trusted = TrustedKeys::parse(identity.public()).unwrap();
        (
            Confirmations::new(Some(identity), TrustedKeys::none()),
            Confirmations::new(None, trusted),
        )
    }

    #[test]
    fn a_proof_is_taken_once_for_its_own_call_within_its_lifetime() {
        let (client, worker) = front();
        let now = 1_800_000_000_000;
        let proof = client.prove(CALL, now).unwrap();
        assert!(worker.required() && !client.required());
        assert_eq!(worker.check(CALL, Some(&proof), now + 10), Ok(()));
        assert_eq!(
            worker.check(CALL, Some(&proof), now + 20),
            Err("its proof of the user's yes was already used (a replay)".into())
        );
        // Another call: the signature is not over it.
        let other = CALL.replace("t_confirm001", "t_confirm002");
        assert!(
            worker
                .check(&other, Some(&proof), now)
                .unwrap_err()
                .contains("does not verify")
        );
        // Past its expiry (and the skew allowed).
        let late = client.prove(CALL, now).unwrap();
        let after = now + CONFIRMATION_TTL_MS + CONFIRMATION_CLOCK_SKEW_MS + 1;
        assert_eq!(
            worker.check(CALL, Some(&late), after),
            Err("its proof of the user's yes expired 5001 ms ago".into())
        );
        // From a front the worker does not trust; none; garbage.
        let (stranger, _) = front();
        let foreign = stranger.prove(CALL, now).unwrap();
        assert!(
            worker
                .check(CALL, Some(&foreign), now)
                .unwrap_err()
                .contains("a key this host does not trust")
        );
        assert_eq!(
            worker.check(CALL, None, now),
            Err("it carries no proof of the user's yes".into())
        );
        assert_eq!(
            worker.check(CALL, Some("v1 x"), now),
            Err("its proof of the user's yes is not one".into())
        );
        // A host without an identity proves nothing.
        assert_eq!(worker.prove(CALL, now), None);
    }

    /// The same proof spelled another way (a `+` or leading zeros on the expiry, upper-case
    /// hex) is not a new proof: refused as not one, or as the replay it is.
    #[test]
    fn a_proof_respelled_is_not_a_new_one() {
        let (client, worker) = front();
        let now = 1_800_000_000_000;
        let proof = client.prove(CALL, now).unwrap();
        assert_eq!(worker.check(CALL, Some(&proof), now), Ok(()));
        let parts: Vec<&str> = proof.split(' ').collect();
        let respelled = [
            format!("v1 {} +{} {}", parts[1], parts[2], parts[3]),
            format!("v1 {} 0{} {}", parts[1], parts[2], parts[3]),
            format!("v1 {} {} {}", parts[1], parts[2], parts[3].to_uppercase()),
            format!("v1 {} {} {}", parts[1].to_uppercase(), parts[2], parts[3]),
        ];
        for proof in respelled {
            let refused = worker.check(CALL, Some(&proof), now).unwrap_err();
            assert!(
                refused.contains("is not one")
                    || refused.contains("does not verify")
                    || refused.contains("a key this host does not trust"),
                "{proof}: {refused}"
            );
        }
        // A second, honestly made proof of the same call is a replay of the call.
        let again = client.prove(CALL, now + 1).unwrap();
        assert_eq!(
            worker.check(CALL, Some(&again), now + 2),
            Err("its proof of the user's yes was already used (a replay)".into())
        );
    }

    #[test]
    fn a_proof_made_to_last_longer_than_allowed_is_refused() {
        let identity = Identity::generate().unwrap();
        let worker = Confirmations::new(None, TrustedKeys::parse(identity.public()).unwrap());
        let now = 1_800_000_000_000;
        let expires = now + 10 * CONFIRMATION_TTL_MS;
        let signature = identity.sign(&proof_message(CALL, expires));
        let proof = format!("v1 {} {expires} {signature}", identity.public());
        assert!(
            worker
                .check(CALL, Some(&proof), now)
                .unwrap_err()
                .contains("expires further off than 120000 ms")
        );
    }

    #[test]
    fn the_message_is_the_documented_text() {
        // sha256("abc"), FIPS 180-2's example.
        assert_eq!(
            String::from_utf8(proof_message("abc", 7)).unwrap(),
            "aura-confirmation.v1\nba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n7"
        );
    }
}
