//! Sample values of any `Deserialize` type, for tests that must cover every variant of an enum
//! without listing them (a new variant cannot be forgotten): a serde `Deserializer` that invents
//! each field — true, 1, 0.5, "x", one element per sequence and map (none below a few levels),
//! `Some` — and picks the n-th variant of the outermost enum; enums inside take their first.

use std::cell::Cell;

use serde::de::value::{Error, U32Deserializer};
use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess,
    SeqAccess, VariantAccess, Visitor,
};

/// Sequences and maps deeper than this are empty, so recursive types end.
const MAX_DEPTH: usize = 4;

/// Every variant of the enum `T`, each with invented fields, in declaration order.
pub fn every_variant<T: DeserializeOwned>() -> Result<Vec<T>, Error> {
    variants(false)
}

/// [`every_variant`], but every `Option` inside is `None` (a field skipped when empty would
/// then show in a codec's round trip).
pub fn every_variant_without_options<T: DeserializeOwned>() -> Result<Vec<T>, Error> {
    variants(true)
}

fn variants<T: DeserializeOwned>(none: bool) -> Result<Vec<T>, Error> {
    let count = Cell::new(None);
    let first = T::deserialize(Invent::top(0, &count, none))?;
    let total = count
        .get()
        .ok_or_else(|| <Error as serde::de::Error>::custom("not an enum"))?;
    let mut all = vec![first];
    for variant in 1..total {
        all.push(T::deserialize(Invent::top(variant, &count, none))?);
    }
    Ok(all)
}

struct Invent<'a> {
    /// The variant to take at the outermost enum (`None` below it: the first).
    pick: Option<usize>,
    /// Where the outermost enum's number of variants is written.
    count: &'a Cell<Option<usize>>,
    depth: usize,
    /// Whether every `Option` is `None` (else `Some`).
    none: bool,
}

impl<'a> Invent<'a> {
    fn top(variant: usize, count: &'a Cell<Option<usize>>, none: bool) -> Self {
        Self {
            pick: Some(variant),
            count,
            depth: 0,
            none,
        }
    }

    fn inner(&self) -> Invent<'a> {
        Invent {
            pick: None,
            count: self.count,
            depth: self.depth + 1,
            none: self.none,
        }
    }

    fn elements(&self) -> usize {
        usize::from(self.depth < MAX_DEPTH)
    }
}

/// `remaining` invented elements of a sequence, tuple or struct.
struct Elements<'a> {
    parent: Invent<'a>,
    remaining: usize,
}

impl<'de> SeqAccess<'de> for Elements<'_> {
    type Error = Error;
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        seed.deserialize(self.parent.inner()).map(Some)
    }
}

impl<'de> MapAccess<'de> for Elements<'_> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        seed.deserialize(self.parent.inner()).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        seed.deserialize(self.parent.inner())
    }
}

impl<'de> EnumAccess<'de> for Invent<'_> {
    type Error = Error;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), Error> {
        let index: U32Deserializer<Error> = (self.pick.unwrap_or(0) as u32).into_deserializer();
        Ok((seed.deserialize(index)?, self))
    }
}

impl<'de> VariantAccess<'de> for Invent<'_> {
    type Error = Error;
    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self.inner())
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        self.inner().deserialize_tuple(len, visitor)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.inner().deserialize_tuple(fields.len(), visitor)
    }
}

impl<'de> Deserializer<'de> for Invent<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(1)
    }
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_bool(true)
    }
    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i8(1)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i16(1)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i32(1)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_i64(1)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u8(1)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u16(1)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u32(1)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(1)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_f32(0.5)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_f64(0.5)
    }
    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_char('x')
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str("x")
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_string("x".into())
    }
    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_bytes(&[0, 255])
    }
    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_byte_buf(vec![0, 255])
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.none {
            visitor.visit_none()
        } else {
            visitor.visit_some(self.inner())
        }
    }
    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self.inner())
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let remaining = self.elements();
        visitor.visit_seq(Elements {
            parent: self,
            remaining,
        })
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_seq(Elements {
            parent: self,
            remaining: len,
        })
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_tuple(len, visitor)
    }
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let remaining = self.elements();
        visitor.visit_map(Elements {
            parent: self,
            remaining,
        })
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_tuple(fields.len(), visitor)
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        if self.pick.is_some() {
            self.count.set(Some(variants.len()));
        }
        visitor.visit_enum(self)
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_u64(0)
    }
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    enum Shape {
        Empty,
        Pair(u8, String),
        Named {
            sizes: Vec<f64>,
            label: Option<String>,
        },
        Inner(Box<Shape>),
    }

    #[test]
    fn every_variant_once_in_order_with_invented_fields() {
        let all = every_variant::<Shape>().unwrap();
        assert_eq!(
            all,
            vec![
                Shape::Empty,
                Shape::Pair(1, "x".into()),
                Shape::Named {
                    sizes: vec![0.5],
                    label: Some("x".into())
                },
                Shape::Inner(Box::new(Shape::Empty)),
            ]
        );
    }

    #[test]
    fn a_struct_is_no_enum() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Plain {
            a: u8,
        }
        assert!(every_variant::<Plain>().is_err());
    }
}
