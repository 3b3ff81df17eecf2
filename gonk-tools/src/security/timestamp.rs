//! RFC 3339 (UTC, millisecond) serialization of `SystemTime` for
//! principals, receipts and approval details.

use std::time::SystemTime;

use serde::{Deserialize, Deserializer, Serializer};

pub(crate) fn serialize<S: Serializer>(
    time: &SystemTime,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&humantime::format_rfc3339_millis(*time))
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<SystemTime, D::Error> {
    let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
    humantime::parse_rfc3339_weak(&text).map_err(serde::de::Error::custom)
}

/// The same for `Option<SystemTime>` (absent or `null` = `None`).
pub(crate) mod option {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        time: &Option<SystemTime>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match time {
            Some(time) => serializer.collect_str(&humantime::format_rfc3339_millis(*time)),
            None => serializer.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<SystemTime>, D::Error> {
        let text = Option::<std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.map(|t| humantime::parse_rfc3339_weak(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}
