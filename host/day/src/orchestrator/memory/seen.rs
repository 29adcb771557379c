//! [`Seen`] as JSON: an object of keys to RFC 3339 times (scenario.v1 `initial.memory`
//! `shown`, `held`, `answered`). It must not decide what is remembered.

use super::Seen;
use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serializer};
use std::collections::BTreeMap;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

pub(super) fn serialize<S: Serializer>(seen: &Seen, serializer: S) -> Result<S::Ok, S::Error> {
    let mut texts = BTreeMap::new();
    for (key, at) in seen {
        texts.insert(key, at.format(&Rfc3339).map_err(S::Error::custom)?);
    }
    serializer.collect_map(texts)
}

pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Seen, D::Error> {
    let texts = BTreeMap::<String, String>::deserialize(deserializer)?;
    texts
        .into_iter()
        .map(|(key, text)| {
            let at = OffsetDateTime::parse(&text, &Rfc3339)
                .map_err(|e| D::Error::custom(format!("`{key}` at `{text}`: {e}")))?;
            Ok((key, at))
        })
        .collect()
}
