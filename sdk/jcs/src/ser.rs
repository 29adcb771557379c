//! The canonical text of any `Serialize` value, written as it is serialized: no
//! `serde_json::Value` tree in between.
//!
//! Why: an agent's reply was its result turned into a `Value` (an allocation per member, per
//! key and per string, members sorted into a map) and that tree then written by
//! [`crate::write_value`]; both steps together were ~40 % of a small call's own work. Here each
//! object's members are written out as they come; an object whose members did not come in
//! RFC 8785 order is put in that order when it ends.
//!
//! It owns that writing only, and it must give exactly the text `write_value(&to_value(v)?)`
//! gives. What it does not handle the same way itself (a map key that is not a string, a
//! duplicate key, an integer past 64 bits, serde_json's raw values, an error raised by a
//! `Serialize` impl) makes it start over through `serde_json::to_value`, so the text, or the
//! error, is that path's.

use std::borrow::Cow;
use std::fmt::Display;

use serde::Serialize;
use serde::ser::{self, Impossible};

use crate::{key_order, write_f64, write_i64, write_string, write_u64, write_value};

/// The struct name serde_json serializes its raw values by (`serde_json::value::RawValue`).
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Appends the canonical text of what `value` serializes to: the bytes
/// `write_value(&serde_json::to_value(value)?, out)` appends. Fails as `to_value` fails.
pub fn write_serialized<T: Serialize + ?Sized>(
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    let mark = out.len();
    if value.serialize(Writer { out: &mut *out }).is_ok() {
        return Ok(());
    }
    out.truncate(mark);
    let value = serde_json::to_value(value)?;
    write_value(&value, out);
    Ok(())
}

/// Something this writer leaves to `serde_json::to_value` (see the module's doc).
#[derive(Debug)]
struct Unhandled;

impl Display for Unhandled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("left to serde_json::to_value")
    }
}

impl std::error::Error for Unhandled {}

impl ser::Error for Unhandled {
    fn custom<T: Display>(_: T) -> Self {
        Unhandled
    }
}

/// Writes one value's canonical text to `out`.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> ser::Serializer for Writer<'a> {
    type Ok = ();
    type Error = Unhandled;
    type SerializeSeq = Array<'a>;
    type SerializeTuple = Array<'a>;
    type SerializeTupleStruct = Array<'a>;
    type SerializeTupleVariant = Array<'a>;
    type SerializeMap = Object<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = Object<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Unhandled> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }

    fn serialize_i8(self, v: i8) -> Result<(), Unhandled> {
        self.serialize_i64(v.into())
    }

    fn serialize_i16(self, v: i16) -> Result<(), Unhandled> {
        self.serialize_i64(v.into())
    }

    fn serialize_i32(self, v: i32) -> Result<(), Unhandled> {
        self.serialize_i64(v.into())
    }

    fn serialize_i64(self, v: i64) -> Result<(), Unhandled> {
        write_i64(v, self.out);
        Ok(())
    }

    fn serialize_i128(self, v: i128) -> Result<(), Unhandled> {
        match (i64::try_from(v), u64::try_from(v)) {
            (Ok(i), _) => write_i64(i, self.out),
            (_, Ok(u)) => write_u64(u, self.out),
            _ => return Err(Unhandled),
        }
        Ok(())
    }

    fn serialize_u8(self, v: u8) -> Result<(), Unhandled> {
        self.serialize_u64(v.into())
    }

    fn serialize_u16(self, v: u16) -> Result<(), Unhandled> {
        self.serialize_u64(v.into())
    }

    fn serialize_u32(self, v: u32) -> Result<(), Unhandled> {
        self.serialize_u64(v.into())
    }

    fn serialize_u64(self, v: u64) -> Result<(), Unhandled> {
        write_u64(v, self.out);
        Ok(())
    }

    fn serialize_u128(self, v: u128) -> Result<(), Unhandled> {
        let v = u64::try_from(v).map_err(|_| Unhandled)?;
        self.serialize_u64(v)
    }

    fn serialize_f32(self, v: f32) -> Result<(), Unhandled> {
        // serde_json keeps an f32 as the f64 it widens to.
        self.serialize_f64(v.into())
    }

    fn serialize_f64(self, v: f64) -> Result<(), Unhandled> {
        // A non-finite double is no JSON number: serde_json makes it null.
        match v.is_finite() {
            true => write_f64(v, self.out),
            false => self.out.extend_from_slice(b"null"),
        }
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Unhandled> {
        write_string(v.encode_utf8(&mut [0; 4]), self.out);
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Unhandled> {
        write_string(v, self.out);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Unhandled> {
        // serde_json makes bytes an array of numbers.
        self.out.push(b'[');
        for (i, byte) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            write_u64((*byte).into(), self.out);
        }
        self.out.push(b']');
        Ok(())
    }

    fn serialize_none(self) -> Result<(), Unhandled> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unhandled> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Unhandled> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Unhandled> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Unhandled> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Unhandled> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Unhandled> {
        // One member: already in order.
        self.out.push(b'{');
        write_string(variant, self.out);
        self.out.push(b':');
        value.serialize(Writer {
            out: &mut *self.out,
        })?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Array<'a>, Unhandled> {
        self.out.push(b'[');
        Ok(Array {
            out: self.out,
            empty: true,
            close: b"]",
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<Array<'a>, Unhandled> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Array<'a>, Unhandled> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Array<'a>, Unhandled> {
        self.out.push(b'{');
        write_string(variant, self.out);
        self.out.extend_from_slice(b":[");
        Ok(Array {
            out: self.out,
            empty: true,
            close: b"]}",
        })
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Object<'a>, Unhandled> {
        Ok(Object::new(self.out, false))
    }

    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Object<'a>, Unhandled> {
        // A raw value is a struct of one member by this name, its text.
        if name == RAW_VALUE_TOKEN {
            return Err(Unhandled);
        }
        Ok(Object::new(self.out, false))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Object<'a>, Unhandled> {
        self.out.push(b'{');
        write_string(variant, self.out);
        self.out.push(b':');
        Ok(Object::new(self.out, true))
    }
}

/// An array being written: its items go straight to `out`.
struct Array<'a> {
    out: &'a mut Vec<u8>,
    empty: bool,
    close: &'static [u8],
}

impl Array<'_> {
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unhandled> {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        value.serialize(Writer {
            out: &mut *self.out,
        })
    }

    fn close(self) -> Result<(), Unhandled> {
        self.out.extend_from_slice(self.close);
        Ok(())
    }
}

/// The four kinds of array serde has, written alike.
macro_rules! array_kind {
    ($($kind:ident::$method:ident),*) => {
        $(impl ser::$kind for Array<'_> {
            type Ok = ();
            type Error = Unhandled;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unhandled> {
                self.item(value)
            }

            fn end(self) -> Result<(), Unhandled> {
                self.close()
            }
        })*
    };
}

array_kind!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// An object's members, written to `out` as they come (`"key":value`, after a comma from the
/// second on). Members that came in RFC 8785 order (struct fields declared so, a `BTreeMap`'s
/// keys) are then already in place; otherwise the object's text is copied out once and written
/// back in that order when the object ends.
struct Object<'a> {
    out: &'a mut Vec<u8>,
    /// Where the first member starts in `out`, just after the `{`.
    base: usize,
    /// Each member's key and where its `"key":value` lies in `out`.
    members: Vec<(Cow<'static, str>, usize, usize)>,
    /// Whether every key so far came after the one before it in RFC 8785 order.
    in_order: bool,
    /// A map's key, given before its value.
    key: Option<String>,
    /// Inside a struct variant's `{"variant":`, closed with the object.
    in_variant: bool,
}

impl<'a> Object<'a> {
    fn new(out: &'a mut Vec<u8>, in_variant: bool) -> Self {
        out.push(b'{');
        let base = out.len();
        Self {
            out,
            base,
            members: Vec::new(),
            in_order: true,
            key: None,
            in_variant,
        }
    }

    fn member<T: Serialize + ?Sized>(
        &mut self,
        key: Cow<'static, str>,
        value: &T,
    ) -> Result<(), Unhandled> {
        if let Some((last, ..)) = self.members.last() {
            self.out.push(b',');
            // Equal keys are out of order too: the repeat is found when sorting.
            self.in_order &= key_order(last, &key).is_lt();
        }
        let start = self.out.len();
        write_string(&key, self.out);
        self.out.push(b':');
        value.serialize(Writer {
            out: &mut *self.out,
        })?;
        self.members.push((key, start, self.out.len()));
        Ok(())
    }

    fn close(mut self) -> Result<(), Unhandled> {
        if !self.in_order {
            self.members.sort_unstable_by(|a, b| key_order(&a.0, &b.0));
            // A repeated key: serde_json keeps the last one; left to it.
            if self.members.windows(2).any(|pair| pair[0].0 == pair[1].0) {
                return Err(Unhandled);
            }
            let written = self.out.split_off(self.base);
            for (i, (_, start, end)) in self.members.iter().enumerate() {
                if i > 0 {
                    self.out.push(b',');
                }
                self.out
                    .extend_from_slice(&written[start - self.base..end - self.base]);
            }
        }
        self.out.push(b'}');
        if self.in_variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

impl ser::SerializeMap for Object<'_> {
    type Ok = ();
    type Error = Unhandled;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Unhandled> {
        self.key = Some(key.serialize(KeyWriter)?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unhandled> {
        let key = self.key.take().ok_or(Unhandled)?;
        self.member(Cow::Owned(key), value)
    }

    fn end(self) -> Result<(), Unhandled> {
        self.close()
    }
}

/// A struct's members and a struct variant's, written alike.
macro_rules! struct_kind {
    ($($kind:ident),*) => {
        $(impl ser::$kind for Object<'_> {
            type Ok = ();
            type Error = Unhandled;

            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Unhandled> {
                self.member(Cow::Borrowed(key), value)
            }

            fn end(self) -> Result<(), Unhandled> {
                self.close()
            }
        })*
    };
}

struct_kind!(SerializeStruct, SerializeStructVariant);

/// A map key: a string (or a char) as it is; any other key is left to serde_json.
struct KeyWriter;

/// The key kinds [`KeyWriter`] leaves to serde_json.
macro_rules! unhandled_keys {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<String, Unhandled> {
            Err(Unhandled)
        })*
    };
}

impl ser::Serializer for KeyWriter {
    type Ok = String;
    type Error = Unhandled;
    type SerializeSeq = Impossible<String, Unhandled>;
    type SerializeTuple = Impossible<String, Unhandled>;
    type SerializeTupleStruct = Impossible<String, Unhandled>;
    type SerializeTupleVariant = Impossible<String, Unhandled>;
    type SerializeMap = Impossible<String, Unhandled>;
    type SerializeStruct = Impossible<String, Unhandled>;
    type SerializeStructVariant = Impossible<String, Unhandled>;

    fn serialize_str(self, v: &str) -> Result<String, Unhandled> {
        Ok(v.to_owned())
    }

    fn serialize_char(self, v: char) -> Result<String, Unhandled> {
        Ok(v.to_string())
    }

    unhandled_keys!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<String, Unhandled> {
        Err(Unhandled)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<String, Unhandled> {
        Err(Unhandled)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, Unhandled> {
        Err(Unhandled)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unhandled> {
        Err(Unhandled)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unhandled> {
        Err(Unhandled)
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Unhandled> {
        Err(Unhandled)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unhandled> {
        Err(Unhandled)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unhandled> {
        Err(Unhandled)
    }

    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, Unhandled> {
        Err(Unhandled)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unhandled> {
        Err(Unhandled)
    }
}

#[cfg(test)]
mod tests;
