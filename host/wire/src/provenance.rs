//! Where an answer comes from: a worker signs what it says with its host's identity, and a
//! client believes only the workers its configuration trusts.
//!
//! NATS credentials say who may join a subject, not who answered: any process holding a
//! worker's credentials (or a stolen copy) can sit in the queue group. So a worker with an
//! identity ([`aura_plugins::signing::Identity`], an `aura keygen` key) signs each answer over
//! the request it answers ([`answer_message`]: the subject, the request's random id, the
//! request's key (`aura_host::remote::request_key`: its body and every header that shapes the
//! run, as the worker read them: fuel, deadline, chain, the proof of a user's yes) and the
//! answer's digest) and its discovery info
//! ([`info_message`]), and a client with trusted workers ([`Provenance::trusted`]) refuses an
//! answer that is unsigned, signed by another key, or whose signature does not verify over
//! the request it sent: a forged answer, or an honest one replayed onto another request. It
//! owns the messages, the headers and both checks; it must not check what an answer says (the
//! host does) nor decide what to do with a refused one (the remote seam retries and the
//! client quarantines it).

use std::collections::BTreeMap;

use async_nats::HeaderMap;
use sha2::{Digest, Sha256};

use aura_contract::digest::hex;
use aura_plugins::signing::{Identity, SignatureRefusal, TrustedKeys};

/// Header of a request: its random id, the same on every attempt of one send, so an answer
/// signed for one request never verifies for another.
pub const REQUEST_ID_HEADER: &str = "Aura-Request-Id";
/// Header of an answer: the signer's public key (hex).
pub const SIGNER_HEADER: &str = "Aura-Signer";
/// Header of an answer: the signature (hex) over [`answer_message`].
pub const SIGNATURE_HEADER: &str = "Aura-Signature";
/// Discovery metadata: the signer's public key.
pub const SIGNER_METADATA: &str = "signer";
/// Discovery metadata: the signature over [`info_message`].
pub const SIGNATURE_METADATA: &str = "signature";

/// Who this process is on the wire, and whom it believes.
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    /// The key a worker signs its answers and discovery info with; `None`: it signs nothing
    /// (a client that trusts workers then refuses its answers).
    pub identity: Option<Identity>,
    /// The workers whose answers are believed; empty: every answer is (an open deployment,
    /// where NATS permissions are the only gate).
    pub trusted: TrustedKeys,
    /// The fronts whose proofs of a user's yes a worker takes for a confirm_required call
    /// (`aura_host::confirmation`); empty: such a call needs no proof.
    pub fronts: TrustedKeys,
}

/// What a worker signs of an answer: a domain tag, the subject, the request's id, the
/// request's key (its body and the frame that shaped its run, as the worker read them) and
/// the answer's sha256.
pub fn answer_message(
    subject: &str,
    request_id: &str,
    request_key: &[u8; 32],
    answer: &[u8],
) -> Vec<u8> {
    format!(
        "aura-answer.v1\n{subject}\n{request_id}\n{}\n{}",
        hex(request_key),
        hex(&Sha256::digest(answer))
    )
    .into_bytes()
}

/// What a worker signs of its discovery info: a domain tag and each metadata entry but the
/// signature, in key order.
pub fn info_message(metadata: &BTreeMap<String, String>) -> Vec<u8> {
    let mut message = b"aura-worker-info.v1".to_vec();
    for (key, value) in metadata {
        if key != SIGNATURE_METADATA {
            message.extend_from_slice(format!("\n{key}={value}").as_bytes());
        }
    }
    message
}

/// A new request id: 128 random bits, hex; `Err` (why) when the system's random source
/// fails, which is not something to go on without: a guessable id would let an old answer be
/// replayed onto this request.
pub fn request_id() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|error| format!("no random request id, the system's source failed: {error}"))?;
    Ok(hex(&bytes))
}

impl Provenance {
    /// The headers that sign `answer` to the request with `request_id` on `subject` whose key
    /// is `request_key` (empty without an identity).
    pub fn sign_answer(
        &self,
        subject: &str,
        request_id: &str,
        request_key: &[u8; 32],
        answer: &[u8],
    ) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(identity) = &self.identity {
            let signature =
                identity.sign(&answer_message(subject, request_id, request_key, answer));
            headers.insert(SIGNER_HEADER, identity.public());
            headers.insert(SIGNATURE_HEADER, signature.as_str());
        }
        headers
    }

    /// Accepts an answer (its headers and body) to the request `request_id` on `subject`
    /// whose key is `request_key`, when no worker is trusted (nothing to check) or it is
    /// signed by a trusted worker over that very request, as it was sent.
    pub fn check_answer(
        &self,
        subject: &str,
        request_id: &str,
        request_key: &[u8; 32],
        headers: Option<&HeaderMap>,
        answer: &[u8],
    ) -> Result<(), SignatureRefusal> {
        if self.trusted.is_empty() {
            return Ok(());
        }
        let header = |name: &str| headers.and_then(|h| h.get(name)).map(|v| v.as_str());
        self.trusted.check(
            header(SIGNER_HEADER),
            &answer_message(subject, request_id, request_key, answer),
            header(SIGNATURE_HEADER),
        )
    }

    /// Signs a worker's discovery metadata in place (nothing without an identity).
    pub fn sign_info(&self, metadata: &mut BTreeMap<String, String>) {
        if let Some(identity) = &self.identity {
            metadata.insert(SIGNER_METADATA.to_owned(), identity.public().to_owned());
            let signature = identity.sign(&info_message(metadata));
            metadata.insert(SIGNATURE_METADATA.to_owned(), signature);
        }
    }

    /// Accepts a worker's discovery metadata when no worker is trusted or it is signed by a
    /// trusted one.
    pub fn check_info(&self, metadata: &BTreeMap<String, String>) -> Result<(), SignatureRefusal> {
        if self.trusted.is_empty() {
            return Ok(());
        }
        self.trusted.check(
            metadata.get(SIGNER_METADATA).map(String::as_str),
            &info_message(metadata),
            metadata.get(SIGNATURE_METADATA).map(String::as_str),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trusting(identity: &Identity) -> Provenance {
        Provenance {
            identity: None,
            trusted: TrustedKeys::parse(identity.public()).unwrap(),
            fronts: TrustedKeys::none(),
        }
    }

    #[test]
    fn a_signed_answer_verifies_only_for_its_own_request_and_signer() {
        let worker = Identity::generate().unwrap();
        let signing = Provenance {
            identity: Some(worker.clone()),
            trusted: TrustedKeys::none(),
            fronts: TrustedKeys::none(),
        };
        let subject = "aura.tool.wellness.stress_score";
        const REQUEST: &[u8; 32] = &[1; 32];
        const OTHER: &[u8; 32] = &[2; 32];
        let headers = signing.sign_answer(subject, "id-1", REQUEST, b"answer");
        let client = trusting(&worker);
        assert_eq!(
            client.check_answer(subject, "id-1", REQUEST, Some(&headers), b"answer"),
            Ok(())
        );
        // Another answer body (forged), another request id (replayed), another request (its
        // body, or a header that shaped its run, changed on the way) or subject: the
        // signature no longer verifies.
        let bad = Err(SignatureRefusal::BadSignature {
            signer: worker.public().to_owned(),
        });
        let sleep = "aura.tool.wellness.sleep_summary";
        for (subject, id, request, answer) in [
            (subject, "id-1", REQUEST, &b"forged"[..]),
            (subject, "id-2", REQUEST, b"answer"),
            (subject, "id-1", OTHER, b"answer"),
            (sleep, "id-1", REQUEST, b"answer"),
        ] {
            assert_eq!(
                client.check_answer(subject, id, request, Some(&headers), answer),
                bad
            );
        }
        // Unsigned; signed by a key the client does not trust.
        assert_eq!(
            client.check_answer(subject, "id-1", REQUEST, None, b"answer"),
            Err(SignatureRefusal::Unsigned)
        );
        let impostor = Identity::generate().unwrap();
        let stranger = Provenance {
            identity: Some(impostor.clone()),
            trusted: TrustedKeys::none(),
            fronts: TrustedKeys::none(),
        }
        .sign_answer(subject, "id-1", REQUEST, b"answer");
        assert_eq!(
            client.check_answer(subject, "id-1", REQUEST, Some(&stranger), b"answer"),
            Err(SignatureRefusal::UntrustedSigner {
                signer: impostor.public().to_owned()
            })
        );
        // A client that trusts no one in particular takes every answer.
        assert_eq!(
            Provenance::default().check_answer(subject, "id-1", REQUEST, None, b"a"),
            Ok(())
        );
    }

    #[test]
    fn the_answer_message_is_the_documented_text() {
        // The key as hex, and sha256("abc") (FIPS 180-2's example).
        assert_eq!(
            String::from_utf8(answer_message("s", "i", &[0xab; 32], b"abc")).unwrap(),
            format!(
                "aura-answer.v1\ns\ni\n{}\n\
                 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                "ab".repeat(32)
            )
        );
    }

    #[test]
    fn discovery_info_is_signed_over_every_entry() {
        let worker = Identity::generate().unwrap();
        let mut metadata = BTreeMap::from([
            ("agents".to_owned(), "wellness".to_owned()),
            ("guest_seed".to_owned(), "7".to_owned()),
        ]);
        Provenance {
            identity: Some(worker.clone()),
            trusted: TrustedKeys::none(),
            fronts: TrustedKeys::none(),
        }
        .sign_info(&mut metadata);
        let client = trusting(&worker);
        assert_eq!(client.check_info(&metadata), Ok(()));
        metadata.insert("guest_seed".to_owned(), "8".to_owned());
        assert!(matches!(
            client.check_info(&metadata),
            Err(SignatureRefusal::BadSignature { .. })
        ));
        assert_eq!(
            client.check_info(&BTreeMap::new()),
            Err(SignatureRefusal::Unsigned)
        );
    }

    #[test]
    fn request_ids_are_128_random_bits() {
        let (one, other) = (request_id().unwrap(), request_id().unwrap());
        assert_eq!(one.len(), 32);
        assert_ne!(one, other);
    }
}
