//! A person: whose assistant, signals, decisions and records these are (seed 003's `tenant_id`
//! and `user_id`).
//!
//! It owns the ids' form: each 1 to [`PERSON_ID_BYTES_MAX`] bytes of lowercase ASCII letters,
//! digits, `_` and `-`, so that an id is one NATS subject token and one key-value key as it
//! stands, and no id can name a wildcard (`*`, `>`) or a deeper subject (`.`). It must not
//! decide what a person may do: the fronts and the fleet do.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::limits::PERSON_ID_BYTES_MAX;

/// A person of a tenant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "PersonIds", into = "PersonIds")]
pub struct Person {
    tenant: String,
    user: String,
}

/// A person's ids as they are written (seed 003's field names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonIds {
    /// The tenant (a household, a company).
    pub tenant_id: String,
    /// The person within it.
    pub user_id: String,
}

/// Why an id cannot name a person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PersonError {
    /// Empty.
    #[error("the {field} is empty")]
    Empty {
        /// `tenant_id` or `user_id`.
        field: &'static str,
    },
    /// Longer than [`PERSON_ID_BYTES_MAX`].
    #[error("the {field} is {bytes} bytes, more than the {PERSON_ID_BYTES_MAX} an id may have")]
    TooLong {
        /// `tenant_id` or `user_id`.
        field: &'static str,
        /// Its length.
        bytes: usize,
    },
    /// A character outside `a-z`, `0-9`, `_`, `-`.
    #[error(
        "the {field} has {found:?} at byte {at}: an id is lowercase letters, digits, '_' and '-'"
    )]
    Character {
        /// `tenant_id` or `user_id`.
        field: &'static str,
        /// The first such character.
        found: char,
        /// Its byte offset.
        at: usize,
    },
}

fn check(field: &'static str, id: &str) -> Result<(), PersonError> {
    if id.is_empty() {
        return Err(PersonError::Empty { field });
    }
    if id.len() > PERSON_ID_BYTES_MAX {
        return Err(PersonError::TooLong {
            field,
            bytes: id.len(),
        });
    }
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-';
    match id.char_indices().find(|(_, c)| !allowed(*c)) {
        Some((at, found)) => Err(PersonError::Character { field, found, at }),
        None => Ok(()),
    }
}

impl Person {
    /// The person `user` of `tenant`, if both ids have an id's form.
    pub fn new(tenant: &str, user: &str) -> Result<Self, PersonError> {
        check("tenant_id", tenant)?;
        check("user_id", user)?;
        Ok(Self {
            tenant: tenant.to_owned(),
            user: user.to_owned(),
        })
    }

    /// The tenant's id.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// The user's id.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The person as two subject tokens, `<tenant>.<user>`: the tail of each of their
    /// subjects, and their key in a key-value bucket.
    pub fn key(&self) -> String {
        format!("{}.{}", self.tenant, self.user)
    }
}

impl fmt::Display for Person {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.tenant, self.user)
    }
}

impl TryFrom<PersonIds> for Person {
    type Error = PersonError;

    fn try_from(ids: PersonIds) -> Result<Self, Self::Error> {
        Self::new(&ids.tenant_id, &ids.user_id)
    }
}

impl From<Person> for PersonIds {
    fn from(person: Person) -> Self {
        Self {
            tenant_id: person.tenant,
            user_id: person.user,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_seed_003_name_a_person_and_make_two_subject_tokens() {
        let alice = Person::new("tenant_acme", "user_alice").unwrap();
        assert_eq!(alice.key(), "tenant_acme.user_alice");
        assert_eq!(alice.to_string(), "tenant_acme/user_alice");
        let uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
        assert_eq!(Person::new(uuid, "u1").unwrap().tenant(), uuid);
    }

    #[test]
    fn an_id_that_could_reach_another_subject_or_key_is_refused() {
        for (tenant, user, error) in [
            (
                "acme",
                "alice.bob",
                PersonError::Character {
                    field: "user_id",
                    found: '.',
                    at: 5,
                },
            ),
            (
                "*",
                "alice",
                PersonError::Character {
                    field: "tenant_id",
                    found: '*',
                    at: 0,
                },
            ),
            (
                "acme",
                ">",
                PersonError::Character {
                    field: "user_id",
                    found: '>',
                    at: 0,
                },
            ),
            (
                "Acme",
                "alice",
                PersonError::Character {
                    field: "tenant_id",
                    found: 'A',
                    at: 0,
                },
            ),
            (
                "acme",
                "al ice",
                PersonError::Character {
                    field: "user_id",
                    found: ' ',
                    at: 2,
                },
            ),
            (
                "acme",
                "alicé",
                PersonError::Character {
                    field: "user_id",
                    found: 'é',
                    at: 4,
                },
            ),
            ("", "alice", PersonError::Empty { field: "tenant_id" }),
        ] {
            assert_eq!(Person::new(tenant, user), Err(error), "{tenant:?} {user:?}");
        }
    }

    #[test]
    fn an_id_may_be_as_long_as_the_bound_and_no_longer() {
        let longest = "a".repeat(PERSON_ID_BYTES_MAX);
        assert!(Person::new("t", &longest).is_ok());
        let over = "a".repeat(PERSON_ID_BYTES_MAX + 1);
        assert_eq!(
            Person::new("t", &over),
            Err(PersonError::TooLong {
                field: "user_id",
                bytes: PERSON_ID_BYTES_MAX + 1
            })
        );
    }

    #[test]
    fn a_person_is_read_and_written_with_seed_003_s_field_names() {
        let alice: Person =
            serde_json::from_str(r#"{"tenant_id":"acme","user_id":"alice"}"#).unwrap();
        assert_eq!(alice, Person::new("acme", "alice").unwrap());
        assert_eq!(
            serde_json::to_string(&alice).unwrap(),
            r#"{"tenant_id":"acme","user_id":"alice"}"#
        );
        let forged = r#"{"tenant_id":"acme","user_id":"alice.bob"}"#;
        assert!(serde_json::from_str::<Person>(forged).is_err());
        let extra = r#"{"tenant_id":"acme","user_id":"alice","admin":true}"#;
        assert!(serde_json::from_str::<Person>(extra).is_err());
    }
}
