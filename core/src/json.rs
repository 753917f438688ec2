//! JSON as floe reads it: every reader of a configuration, an instance or a plan goes through
//! [`from_str`], which refuses an object that names a key twice (serde_json alone keeps the
//! last, silently, or, for a struct, refuses only the struct's own fields), so no reader has to
//! say which of two values wins.

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};

/// `text` as a `T`, after checking that no object in it names a key twice.
///
/// # Errors
/// The first duplicate key (`duplicate key "seed" in one object ... at line 1 column 20`), or
/// what `serde_json::from_str` says.
pub fn from_str<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    unique_keys(text)?;
    serde_json::from_str(text)
}

/// Checks that no object in `text` names a key twice (and that `text` is JSON).
///
/// # Errors
/// The first duplicate key, with its line and column, or a JSON syntax error.
pub fn unique_keys(text: &str) -> serde_json::Result<()> {
    serde_json::from_str::<UniqueKeys>(text).map(|_| ())
}

/// Any JSON value, read through with every object's keys checked.
struct UniqueKeys;

impl<'de> de::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueKeys)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let mut seen = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                return Err(de::Error::custom(format_args!(
                    "duplicate key \"{key}\" in one object (each key may appear once)"
                )));
            }
            map.next_value::<UniqueKeys>()?;
            seen.insert(key);
        }
        Ok(UniqueKeys)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(UniqueKeys)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(UniqueKeys)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(UniqueKeys)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(UniqueKeys)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(UniqueKeys)
    }

    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(UniqueKeys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_named_twice_is_refused_at_any_depth() {
        for text in [
            r#"{"seed": 1, "seed": 2}"#,
            r#"{"a": {"b": 1, "c": [{"d": 1, "d": 1}]}}"#,
            r#"[{"x": 1}, {"y": 1, "y": 2}]"#,
        ] {
            let e = unique_keys(text).expect_err(text).to_string();
            assert!(e.starts_with("duplicate key \""), "{text}: {e}");
            assert!(e.contains("line 1 column"), "{text}: {e}");
        }
        // The same key in two objects, escapes and every kind of value are fine.
        unique_keys(r#"[{"x": 1}, {"x": 2}, {"a\"b": null, "a": true, "n": -1.5e3, "s": "x"}]"#).unwrap();
        let v: serde_json::Value = from_str(r#"{"a": 1}"#).unwrap();
        assert_eq!(v["a"], 1);
        assert!(from_str::<serde_json::Value>(r#"{"a": 1, "a": 1}"#).is_err());
    }
}
