//! The GGUF file format (version 3, as llama.cpp writes it): its metadata and its tensors, read
//! in place from the file's bytes.
//!
//! It owns the parsing and every check that a tensor lies inside the file with the size its type
//! and shape give. It must not copy the weights (the narrator's 98 MB stay where the component's
//! data segment put them) and must not allocate more than the file's own length implies: every
//! count is checked against what is left of the file before anything is reserved for it.

use crate::Error;
use crate::limits::{
    GGUF_ARRAY_LEN_MAX, GGUF_KV_COUNT_MAX, GGUF_STRING_BYTES_MAX, GGUF_TENSOR_COUNT_MAX,
    GGUF_TENSOR_DIMS_MAX,
};

/// "GGUF" read as a little-endian u32.
const MAGIC: u32 = u32::from_le_bytes(*b"GGUF");
/// The alignment of the tensor data when `general.alignment` does not say (the format's default).
const DEFAULT_ALIGNMENT: u64 = 32;

/// A tensor's element type, as ggml numbers them (only those this engine computes with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    F32,
    F16,
    /// Blocks of 32: an f16 scale `d`, an f16 minimum `m`, 16 bytes of 4-bit `q`; `d·q + m`.
    Q4_1,
    /// Blocks of 32: an f16 scale `d` and 32 signed bytes `q`; `d·q`.
    Q8_0,
}

impl DType {
    fn from_ggml(code: u32) -> Option<DType> {
        match code {
            0 => Some(DType::F32),
            1 => Some(DType::F16),
            3 => Some(DType::Q4_1),
            8 => Some(DType::Q8_0),
            _ => None,
        }
    }

    /// Elements per block and bytes per block.
    pub fn block(self) -> (u64, u64) {
        match self {
            DType::F32 => (1, 4),
            DType::F16 => (1, 2),
            DType::Q4_1 => (32, 20),
            DType::Q8_0 => (32, 34),
        }
    }
}

/// One metadata value.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    /// Any of the integer types, widened.
    Int(i128),
    /// f32 or f64, widened.
    Float(f64),
    Bool(bool),
    /// A string's bytes (GGUF says UTF-8; the tokenizer checks where it matters).
    Str(&'a [u8]),
    Array(Vec<Value<'a>>),
}

/// A tensor: its name, shape (ne0 first: the length of a row) and bytes in the file.
#[derive(Debug, Clone)]
pub struct Tensor<'a> {
    pub name: String,
    pub dims: Vec<u64>,
    pub dtype: DType,
    pub data: &'a [u8],
}

impl Tensor<'_> {
    /// The length of a row (ne0).
    pub fn row_len(&self) -> usize {
        self.dims[0] as usize
    }

    /// The number of rows (the product of the other dims).
    pub fn rows(&self) -> usize {
        self.dims[1..].iter().product::<u64>() as usize
    }
}

/// A parsed GGUF file, borrowing its bytes.
#[derive(Debug)]
pub struct Gguf<'a> {
    pub version: u32,
    pub metadata: Vec<(String, Value<'a>)>,
    pub tensors: Vec<Tensor<'a>>,
}

impl<'a> Gguf<'a> {
    /// Reads the header, the metadata and the tensor table, and checks that every tensor's bytes
    /// lie inside `bytes` with the size its type and shape give.
    pub fn parse(bytes: &'a [u8]) -> Result<Gguf<'a>, Error> {
        let mut r = Reader { bytes, at: 0 };
        if r.u32()? != MAGIC {
            return Err(Error::Format("not a GGUF file (bad magic)".into()));
        }
        let version = r.u32()?;
        if version != 3 {
            return Err(Error::Format(format!(
                "GGUF version {version}; only 3 is read"
            )));
        }
        let tensor_count = r.u64()?;
        let kv_count = r.u64()?;
        if tensor_count > GGUF_TENSOR_COUNT_MAX || kv_count > GGUF_KV_COUNT_MAX {
            return Err(Error::Format(format!(
                "{tensor_count} tensors and {kv_count} metadata entries: over the bounds"
            )));
        }
        let mut metadata = Vec::with_capacity(kv_count as usize);
        for _ in 0..kv_count {
            let key = r.utf8()?;
            let kind = r.u32()?;
            let value = r.value(kind)?;
            metadata.push((key, value));
        }
        let mut table = Vec::with_capacity(tensor_count as usize);
        for _ in 0..tensor_count {
            let name = r.utf8()?;
            let n_dims = r.u32()?;
            if n_dims == 0 || n_dims > GGUF_TENSOR_DIMS_MAX {
                return Err(Error::Format(format!("tensor {name}: {n_dims} dimensions")));
            }
            let mut dims = Vec::with_capacity(n_dims as usize);
            for _ in 0..n_dims {
                dims.push(r.u64()?);
            }
            let code = r.u32()?;
            let dtype = DType::from_ggml(code).ok_or_else(|| {
                Error::Format(format!(
                    "tensor {name}: ggml type {code} is not computed here"
                ))
            })?;
            let offset = r.u64()?;
            table.push((name, dims, dtype, offset));
        }
        let alignment = match metadata.iter().find(|(k, _)| k == "general.alignment") {
            Some((_, Value::Int(a))) if *a > 0 && *a <= 1 << 16 && (*a & (*a - 1)) == 0 => {
                *a as u64
            }
            Some(_) => {
                return Err(Error::Format(
                    "general.alignment is not a power of two".into(),
                ));
            }
            None => DEFAULT_ALIGNMENT,
        };
        let start = (r.at as u64).div_ceil(alignment) * alignment;
        let data = bytes
            .get(start as usize..)
            .ok_or_else(|| Error::Format("the tensor data starts past the end".into()))?;
        let mut tensors = Vec::with_capacity(table.len());
        for (name, dims, dtype, offset) in table {
            let elements = dims
                .iter()
                .try_fold(1u64, |n, d| n.checked_mul(*d))
                .filter(|n| *n > 0)
                .ok_or_else(|| Error::Format(format!("tensor {name}: shape {dims:?}")))?;
            let (per_block, block_bytes) = dtype.block();
            if dims[0] % per_block != 0 {
                return Err(Error::Format(format!(
                    "tensor {name}: a row of {} is not whole blocks of {per_block}",
                    dims[0]
                )));
            }
            let size = elements / per_block * block_bytes;
            let end = offset
                .checked_add(size)
                .filter(|end| *end <= data.len() as u64)
                .ok_or_else(|| {
                    Error::Format(format!("tensor {name}: its {size} bytes run past the file"))
                })?;
            tensors.push(Tensor {
                name,
                dims,
                dtype,
                data: &data[offset as usize..end as usize],
            });
        }
        Ok(Gguf {
            version,
            metadata,
            tensors,
        })
    }

    /// A metadata value by key.
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// A metadata integer by key, or a format error naming it.
    pub fn int(&self, key: &str) -> Result<i128, Error> {
        match self.get(key) {
            Some(Value::Int(n)) => Ok(*n),
            _ => Err(Error::Format(format!("{key}: missing or not an integer"))),
        }
    }

    /// A metadata float by key, or a format error naming it.
    pub fn float(&self, key: &str) -> Result<f64, Error> {
        match self.get(key) {
            Some(Value::Float(x)) => Ok(*x),
            _ => Err(Error::Format(format!("{key}: missing or not a float"))),
        }
    }

    /// A metadata array by key, or a format error naming it.
    pub fn array(&self, key: &str) -> Result<&[Value<'a>], Error> {
        match self.get(key) {
            Some(Value::Array(items)) => Ok(items),
            _ => Err(Error::Format(format!("{key}: missing or not an array"))),
        }
    }

    /// A tensor by name, or a format error naming it.
    pub fn tensor(&self, name: &str) -> Result<&Tensor<'a>, Error> {
        self.tensors
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| Error::Format(format!("no tensor {name}")))
    }
}

/// A cursor over the file's bytes; every read is checked against the end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64) -> Result<&'a [u8], Error> {
        let left = (self.bytes.len() - self.at) as u64;
        if n > left {
            return Err(Error::Format(format!(
                "truncated: {n} bytes wanted at {}, {left} left",
                self.at
            )));
        }
        let taken = &self.bytes[self.at..self.at + n as usize];
        self.at += n as usize;
        Ok(taken)
    }

    fn left(&self) -> u64 {
        (self.bytes.len() - self.at) as u64
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N as u64)?);
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, Error> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn string(&mut self) -> Result<&'a [u8], Error> {
        let len = self.u64()?;
        if len > GGUF_STRING_BYTES_MAX {
            return Err(Error::Format(format!("a string of {len} bytes")));
        }
        self.take(len)
    }

    fn utf8(&mut self) -> Result<String, Error> {
        let bytes = self.string()?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| Error::Format("a key or tensor name is not UTF-8".into()))
    }

    /// A value of GGUF type `kind`. Arrays hold scalars or strings; an array of arrays is
    /// refused (llama.cpp writes none, and refusing it bounds the recursion).
    fn value(&mut self, kind: u32) -> Result<Value<'a>, Error> {
        Ok(match kind {
            0 => Value::Int(self.array::<1>()?[0] as i128),
            1 => Value::Int(i8::from_le_bytes(self.array()?) as i128),
            2 => Value::Int(u16::from_le_bytes(self.array()?) as i128),
            3 => Value::Int(i16::from_le_bytes(self.array()?) as i128),
            4 => Value::Int(self.u32()? as i128),
            5 => Value::Int(i32::from_le_bytes(self.array()?) as i128),
            6 => Value::Float(f32::from_le_bytes(self.array()?) as f64),
            7 => match self.array::<1>()?[0] {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                b => return Err(Error::Format(format!("a bool of {b}"))),
            },
            8 => Value::Str(self.string()?),
            9 => {
                let item = self.u32()?;
                if item == 9 {
                    return Err(Error::Format("an array of arrays".into()));
                }
                let len = self.u64()?;
                // Every item takes at least one byte: a count past what is left is a lie,
                // refused before anything is reserved for it.
                if len > GGUF_ARRAY_LEN_MAX || len > self.left() {
                    return Err(Error::Format(format!("an array of {len} items")));
                }
                let mut items = Vec::with_capacity(len as usize);
                for _ in 0..len {
                    items.push(self.value(item)?);
                }
                Value::Array(items)
            }
            10 => Value::Int(self.u64()? as i128),
            11 => Value::Int(i64::from_le_bytes(self.array()?) as i128),
            12 => Value::Float(f64::from_le_bytes(self.array()?)),
            other => return Err(Error::Format(format!("metadata type {other}"))),
        })
    }
}
