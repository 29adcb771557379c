//! The model's tokenizer: GPT-2's byte-level BPE with SmolLM's pre-tokenizer (every digit alone,
//! then GPT-2's split), built from the vocabulary and merges the GGUF file carries.
//!
//! It owns text → token ids and ids → bytes. It must never produce a control token from text:
//! `<|im_start|>` typed in a message is text and is encoded as text, so a message cannot open a
//! turn of its own in the narrator's prompt. Control tokens are placed by the prompt's builder,
//! by id ([`Tokenizer::control`]).
//!
//! One difference from the reference pre-tokenizer is known: it splits on Unicode letters
//! (`\p{L}`), this one on `char::is_alphabetic` (letters, plus marks and letter-numbers that are
//! alphabetic). They agree on every letter; text with combining marks may split differently.

use std::collections::HashMap;

use crate::Error;
use crate::gguf::{Gguf, Value};
use crate::limits::ENCODE_BYTES_MAX;

/// ggml's token type for a control token (`<|im_start|>`, `<|im_end|>`, …).
const TOKEN_TYPE_CONTROL: i128 = 3;

/// GPT-2's byte-to-character table: the printable bytes stand for themselves, the others for
/// 256, 257, … in byte order, so every byte string is a printable string.
fn byte_chars() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut next = 256u32;
    for b in 0..=255u8 {
        let printable = matches!(b, b'!'..=b'~' | 0xa1..=0xac | 0xae..=0xff);
        let code = if printable {
            b as u32
        } else {
            next += 1;
            next - 1
        };
        table[b as usize] = char::from_u32(code).expect("256..=323 are chars");
    }
    table
}

/// The vocabulary, merges and control tokens of one model.
pub struct Tokenizer {
    tokens: Vec<String>,
    /// (left, right) → (rank, merged id); a lower rank merges first.
    merges: HashMap<(u32, u32), (u32, u32)>,
    control: HashMap<String, u32>,
    /// Each byte's token; six control characters and the bytes UTF-8 never uses have none.
    byte_ids: [Option<u32>; 256],
    char_bytes: HashMap<char, u8>,
}

impl Tokenizer {
    /// Reads `tokenizer.ggml.{model,tokens,token_type,merges}`; only the `gpt2` model is read.
    pub fn from_gguf(g: &Gguf) -> Result<Tokenizer, Error> {
        match g.get("tokenizer.ggml.model") {
            Some(Value::Str(b"gpt2")) => {}
            _ => return Err(Error::Format("tokenizer.ggml.model is not gpt2".into())),
        }
        let tokens: Vec<String> = g
            .array("tokenizer.ggml.tokens")?
            .iter()
            .map(|v| match v {
                Value::Str(s) => String::from_utf8(s.to_vec())
                    .map_err(|_| Error::Format("a token is not UTF-8".into())),
                _ => Err(Error::Format("a token is not a string".into())),
            })
            .collect::<Result<_, _>>()?;
        let types = g.array("tokenizer.ggml.token_type")?;
        if types.len() != tokens.len() {
            return Err(Error::Format(
                "token types and tokens differ in number".into(),
            ));
        }
        let ids: HashMap<String, u32> = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        let mut control = HashMap::new();
        for (i, t) in types.iter().enumerate() {
            if matches!(t, Value::Int(TOKEN_TYPE_CONTROL)) {
                control.insert(tokens[i].clone(), i as u32);
            }
        }
        let mut merges = HashMap::new();
        for (rank, m) in g.array("tokenizer.ggml.merges")?.iter().enumerate() {
            let Value::Str(m) = m else {
                return Err(Error::Format("a merge is not a string".into()));
            };
            let m =
                std::str::from_utf8(m).map_err(|_| Error::Format("a merge is not UTF-8".into()))?;
            let (left, right) = m
                .split_once(' ')
                .ok_or_else(|| Error::Format(format!("merge {m:?} is not two tokens")))?;
            let id = |t: &str| {
                ids.get(t)
                    .copied()
                    .ok_or_else(|| Error::Format(format!("merge {m:?}: {t:?} is no token")))
            };
            let merged = id(&format!("{left}{right}"))?;
            if control.values().any(|c| *c == merged) {
                continue;
            }
            merges
                .entry((id(left)?, id(right)?))
                .or_insert((rank as u32, merged));
        }
        let chars = byte_chars();
        let mut byte_ids = [None; 256];
        let mut char_bytes = HashMap::new();
        for (b, c) in chars.iter().enumerate() {
            byte_ids[b] = ids.get(&c.to_string()).copied();
            char_bytes.insert(*c, b as u8);
        }
        if byte_ids[32..127].iter().any(Option::is_none) {
            return Err(Error::Format("a printable ASCII byte has no token".into()));
        }
        Ok(Tokenizer {
            tokens,
            merges,
            control,
            byte_ids,
            char_bytes,
        })
    }

    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the vocabulary is empty (never, once built).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// A control token's id by its text (`<|im_start|>`).
    pub fn control(&self, text: &str) -> Result<u32, Error> {
        self.control
            .get(text)
            .copied()
            .ok_or_else(|| Error::Format(format!("no control token {text}")))
    }

    /// Whether `id` is a control token.
    pub fn is_control(&self, id: u32) -> bool {
        self.control.values().any(|c| *c == id)
    }

    /// `text` as token ids, never a control token.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, Error> {
        if text.len() > ENCODE_BYTES_MAX {
            return Err(Error::TooLong {
                what: "text to encode",
                len: text.len(),
                max: ENCODE_BYTES_MAX,
            });
        }
        let mut out = Vec::new();
        for word in pre_tokenize(text) {
            self.bpe(word.as_bytes(), &mut out);
        }
        Ok(out)
    }

    /// One pre-tokenized word's bytes through the merges, lowest rank first, leftmost first. A
    /// byte without a token (SmolLM2 has none for 0x04, 0x06, 0x13, 0x14, 0x16, 0x1d) is left
    /// out, as the reference tokenizer leaves out what it has no token for.
    fn bpe(&self, word: &[u8], out: &mut Vec<u32>) {
        let mut symbols: Vec<u32> = word
            .iter()
            .filter_map(|b| self.byte_ids[*b as usize])
            .collect();
        loop {
            let best = symbols
                .windows(2)
                .enumerate()
                .filter_map(|(i, p)| self.merges.get(&(p[0], p[1])).map(|(r, m)| (*r, i, *m)))
                .min();
            let Some((_, i, merged)) = best else { break };
            symbols[i] = merged;
            symbols.remove(i + 1);
        }
        out.extend(symbols);
    }

    /// The bytes token `id` stands for (a control token's are its text), or `None` for an id
    /// past the vocabulary.
    pub fn token_bytes(&self, id: u32) -> Option<Vec<u8>> {
        let token = self.tokens.get(id as usize)?;
        if self.is_control(id) {
            return Some(token.as_bytes().to_vec());
        }
        let mut bytes = Vec::with_capacity(token.len());
        for c in token.chars() {
            match self.char_bytes.get(&c) {
                Some(b) => bytes.push(*b),
                None => bytes.extend(c.to_string().as_bytes()),
            }
        }
        Some(bytes)
    }

    /// The bytes of `ids`, one after another.
    pub fn decode(&self, ids: &[u32]) -> Vec<u8> {
        ids.iter()
            .filter_map(|id| self.token_bytes(*id))
            .flatten()
            .collect()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Class {
    Letter,
    Number,
    Space,
    Other,
}

fn class(c: char) -> Class {
    if c.is_alphabetic() {
        Class::Letter
    } else if c.is_numeric() {
        Class::Number
    } else if c.is_whitespace() {
        Class::Space
    } else {
        Class::Other
    }
}

/// SmolLM's pre-tokenizer: each numeric character alone, and GPT-2's pattern over the rest:
/// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`.
pub fn pre_tokenize(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        // The next numeric character, which is a word alone, and the text before it.
        let (before, digit) = match rest.char_indices().find(|(_, c)| c.is_numeric()) {
            Some((i, c)) => (&rest[..i], Some(&rest[i..i + c.len_utf8()])),
            None => (rest, None),
        };
        gpt2_split(before, &mut words);
        match digit {
            Some(d) => {
                words.push(d);
                rest = &rest[before.len() + d.len()..];
            }
            None => rest = "",
        }
    }
    words
}

/// GPT-2's pattern over text that holds no numeric character (so ` ?\p{N}+` never matches).
fn gpt2_split<'t>(text: &'t str, words: &mut Vec<&'t str>) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let end_of = |i: usize| chars.get(i).map_or(text.len(), |(at, _)| *at);
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        let run = |from: usize, class_: Class| {
            let mut j = from;
            while j < chars.len() && class(chars[j].1) == class_ {
                j += 1;
            }
            j
        };
        let j = if c == '\'' && contraction(&text[start..]) > 0 {
            i + contraction(&text[start..])
        } else if matches!(class(c), Class::Letter | Class::Other) {
            run(i, class(c))
        } else if c == ' '
            && chars
                .get(i + 1)
                .is_some_and(|(_, n)| matches!(class(*n), Class::Letter | Class::Other))
        {
            run(i + 1, class(chars[i + 1].1))
        } else {
            // Whitespace: the run, less its last character when a non-space follows it (that
            // character goes with the word after it, or alone when the run is one long).
            let j = run(i, Class::Space);
            if j < chars.len() && j - i > 1 {
                j - 1
            } else {
                j
            }
        };
        words.push(&text[start..end_of(j)]);
        i = j;
    }
}

/// The length in characters of an English contraction at the start of `s` (`'s`, `'ll`), or 0.
fn contraction(s: &str) -> usize {
    for suffix in ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d"] {
        if s.starts_with(suffix) {
            return suffix.len();
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits worked out by hand from the pattern and the digit rule.
    #[test]
    fn the_pre_tokenizer_splits_as_gpt2_with_each_digit_alone() {
        assert_eq!(pre_tokenize("Hello world"), ["Hello", " world"]);
        assert_eq!(
            pre_tokenize("at 10:30"),
            ["at", " ", "1", "0", ":", "3", "0"]
        );
        assert_eq!(
            pre_tokenize("it's  done!\n\nok"),
            ["it", "'s", " ", " done", "!", "\n", "\n", "ok"]
        );
        assert_eq!(pre_tokenize("a  \tb"), ["a", "  ", "\t", "b"]);
        assert_eq!(
            pre_tokenize("$12.50 ok "),
            ["$", "1", "2", ".", "5", "0", " ok", " "]
        );
        assert_eq!(pre_tokenize("Zoë's café"), ["Zoë", "'s", " café"]);
        assert_eq!(
            pre_tokenize("<|im_start|>"),
            ["<|", "im", "_", "start", "|>"]
        );
    }

    #[test]
    fn the_byte_table_is_gpt2s() {
        let t = byte_chars();
        assert_eq!(t[b'a' as usize], 'a');
        assert_eq!(t[b' ' as usize], 'Ġ'); // U+0120: 256 + 32, the 33rd unprintable byte
        assert_eq!(t[b'\n' as usize], 'Ċ'); // U+010A: 256 + 10
        assert_eq!(t[0xad], 'Ń'); // U+0143: 256 + 67, soft hyphen is the last unprintable
    }
}
