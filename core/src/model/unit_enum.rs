//! One reader for every enum of unit variants read by serde (`Role`, `Tier`, `WireFormat`...),
//! instead of a reader derived per enum.
//!
//! Why: serde's derived `Deserialize` compiles the same few functions (the variant's name
//! matched, the `{"variant": null}` form, the errors) once per enum and per reader; the npm
//! package's .wasm had 15 such enums, about 15 KB of code. [`unit_enum_deserialize!`] gives an
//! enum a `Deserialize` that calls [`read`], generic only over the reader, with the enum's
//! serde names and variants as data.
//!
//! Guarantees: [`read`] does what the derived reader does, step for step (the same calls on
//! the deserializer, the same errors: `unknown variant `x`, expected one of `a`, `b``,
//! `invalid type: ..., expected enum Tier`); the tests below compare it with a derived enum
//! input by input, and each enum's names with its `Serialize` output.

use std::fmt;

use serde::de::{self, DeserializeSeed, EnumAccess, Expected, Unexpected, VariantAccess, Visitor};

/// The index in `names` of the unit variant `deserializer` holds, read as serde's derived
/// reader of an enum named `name` with variants `names` reads it.
pub(crate) fn read<'de, D: de::Deserializer<'de>>(
    deserializer: D,
    name: &'static str,
    names: &'static [&'static str],
) -> Result<usize, D::Error> {
    deserializer.deserialize_enum(name, names, EnumVisitor { name, names })
}

/// The visitor of the enum itself (derived: `__Visitor`).
struct EnumVisitor {
    name: &'static str,
    names: &'static [&'static str],
}

impl<'de> Visitor<'de> for EnumVisitor {
    type Value = usize;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(formatter, "enum {}", self.name)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<usize, A::Error> {
        let (index, variant) = data.variant_seed(Identifier(self.names))?;
        variant.unit_variant()?;
        Ok(index)
    }
}

/// The variant's identifier (derived: `__Field` and `__FieldVisitor`).
#[derive(Clone, Copy)]
struct Identifier(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Identifier {
    type Value = usize;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

/// The derived reader's "variant index 0 <= i < N", for an index out of range.
struct IndexRange(usize);

impl Expected for IndexRange {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(formatter, "variant index 0 <= i < {}", self.0)
    }
}

impl<'de> Visitor<'de> for Identifier {
    type Value = usize;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("variant identifier")
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<usize, E> {
        usize::try_from(value)
            .ok()
            .filter(|index| *index < self.0.len())
            .ok_or_else(|| E::invalid_value(Unexpected::Unsigned(value), &IndexRange(self.0.len())))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<usize, E> {
        self.0
            .iter()
            .position(|name| *name == value)
            .ok_or_else(|| E::unknown_variant(value, self.0))
    }

    fn visit_bytes<E: de::Error>(self, value: &[u8]) -> Result<usize, E> {
        self.0
            .iter()
            .position(|name| name.as_bytes() == value)
            .ok_or_else(|| E::unknown_variant(&String::from_utf8_lossy(value), self.0))
    }
}

/// `impl Deserialize for $ty` through [`read`]: `$ty` named `$name` in errors, its variants
/// in declaration order with their serde names (the names the derived `Serialize` writes,
/// which the tests check).
macro_rules! unit_enum_deserialize {
    ($ty:ident, $name:literal, [$($variant:ident = $serde:literal),+ $(,)?]) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                const VARIANTS: &[$ty] = &[$($ty::$variant),+];
                let index = $crate::model::unit_enum::read(deserializer, $name, &[$($serde),+])?;
                // `read` gives an index into the names, which are as many as VARIANTS.
                VARIANTS.get(index).copied().ok_or_else(|| {
                    <D::Error as serde::de::Error>::custom("variant index out of range")
                })
            }
        }
    };
}

pub(crate) use unit_enum_deserialize;

#[cfg(test)]
mod tests;
