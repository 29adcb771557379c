//! Plain-text helpers shared by the comms tools: word tokens with their positions, splitting a
//! message body into sentences, collapsing whitespace and cutting text cleanly at a bound; and
//! the one list of phrases that ask the reader something ([`ASK_READER_PHRASES`]), which triage
//! and extraction both look for.
//!
//! It knows nothing of urgency, owners or dates; it must not allocate more than a small
//! multiple of its input, and every function is linear in its input (bodies are at most
//! 20,000 characters).

use std::borrow::Cow;

/// A word of a text: a maximal run of letters and digits, where a joiner (`- : . / '` or `’`)
/// between two letters or digits stays inside the word ("2026-12-01", "3:30pm", "e.g",
/// "i'll", "time-sensitive").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token<'a> {
    /// Byte offset of the first character in the text.
    pub start: usize,
    /// Byte offset just past the last character.
    pub end: usize,
    /// The word lower-cased, with `’` written as `'`: borrowed from the buffer of
    /// [`lowered`] for ASCII words, owned for the rare others.
    pub lower: Cow<'a, str>,
}

#[inline(always)]
fn is_joiner(c: char) -> bool {
    matches!(c, '-' | ':' | '.' | '/' | '\'' | '’')
}

/// The buffer [`tokenize`] borrows ASCII words from: `text` with ASCII letters lower-cased
/// (every byte offset stays the same).
pub fn lowered(text: &str) -> String {
    text.to_ascii_lowercase()
}

/// The words of `text`, in order; `lowered` must be [`lowered`]`(text)`. One pass; only words
/// with non-ASCII characters allocate.
pub fn tokenize<'a>(text: &str, lowered: &'a str) -> Vec<Token<'a>> {
    debug_assert_eq!(text.len(), lowered.len());
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let (c, width) = char_at(text, i);
        if !c.is_alphanumeric() {
            i += width;
            continue;
        }
        let start = i;
        let mut ascii = c.is_ascii();
        i += width;
        while i < bytes.len() {
            let (next, width) = char_at(text, i);
            if next.is_alphanumeric() {
                ascii &= next.is_ascii();
                i += width;
            } else if is_joiner(next)
                && i + width < bytes.len()
                && char_at(text, i + width).0.is_alphanumeric()
            {
                let (after, after_width) = char_at(text, i + width);
                ascii &= next.is_ascii() && after.is_ascii();
                i += width + after_width;
            } else {
                break;
            }
        }
        let lower = if ascii {
            Cow::Borrowed(&lowered[start..i])
        } else {
            Cow::Owned(text[start..i].to_lowercase().replace('’', "'"))
        };
        tokens.push(Token {
            start,
            end: i,
            lower,
        });
    }
    tokens
}

/// The character at byte `i` (a char boundary) and its width; ASCII without decoding.
/// (Always inlined: agents are built for size, and a call per character costs more than the
/// character's work.)
#[inline(always)]
fn char_at(text: &str, i: usize) -> (char, usize) {
    let b = text.as_bytes()[i];
    if b.is_ascii() {
        (char::from(b), 1)
    } else {
        let c = text[i..]
            .chars()
            .next()
            .unwrap_or(char::REPLACEMENT_CHARACTER);
        (c, c.len_utf8())
    }
}

/// Whether the words of `tokens` starting at `i` are exactly `words`.
pub fn words_at(tokens: &[Token<'_>], i: usize, words: &[&str]) -> bool {
    words.len() <= tokens.len().saturating_sub(i)
        && words.iter().zip(&tokens[i..]).all(|(w, t)| t.lower == *w)
}

/// Phrases that ask the reader something ("can you …", "let me know"): the core that both
/// triage (a direct question, `triage::REPLY_REQUEST_PHRASES` added) and extraction (a request,
/// `actions::ACTION_REQUEST_PHRASES` added) look for.
pub const ASK_READER_PHRASES: &[&[&str]] = &[
    &["can", "you"],
    &["could", "you"],
    &["would", "you"],
    &["will", "you"],
    &["can", "u"],
    &["could", "u"],
    &["do", "you", "mind"],
    &["let", "me", "know"],
];

/// Whether a phrase of one of `lists` starts at token `i`.
pub fn any_phrase_at(tokens: &[Token<'_>], i: usize, lists: &[&[&[&str]]]) -> bool {
    lists
        .iter()
        .any(|list| list.iter().any(|phrase| words_at(tokens, i, phrase)))
}

/// Whether `words` occurs anywhere in `tokens`.
pub fn contains_words(tokens: &[Token<'_>], words: &[&str]) -> bool {
    (0..tokens.len()).any(|i| words_at(tokens, i, words))
}

/// Abbreviations whose final '.' does not end a sentence (compared lower-cased, without it).
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "eg", "ie", "vs", "mr", "mrs", "ms", "dr", "approx", "incl", "cf",
];

/// Whether a line starts the quoted history of a reply or a signature: everything from it on
/// is not the sender's new text. Recognized: the signature delimiter "-- ", a line
/// "On … wrote:", "-----Original Message-----", and an Outlook rule of 10+ underscores.
fn ends_new_text(raw: &str, line: &str) -> bool {
    raw.trim_end_matches(['\r', '\n']) == "-- "
        || line == "--"
        || (line.starts_with("On ") && line.ends_with("wrote:"))
        || (line.starts_with("-----") && line.to_lowercase().contains("original message"))
        || (line.len() >= 10 && line.bytes().all(|b| b == b'_'))
}

/// The text after a list bullet ("- ", "* ", "• ", "+ ", "1. ", "12) "), if `line` has one.
fn strip_bullet(line: &str) -> Option<&str> {
    for bullet in ["- ", "* ", "• ", "+ "] {
        if let Some(rest) = line.strip_prefix(bullet) {
            return Some(rest.trim_start());
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if (1..=3).contains(&digits) {
        let rest = &line[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return Some(rest.trim_start());
        }
    }
    None
}

/// Collapses every run of whitespace to one space and trims the ends. Works on bytes: ASCII
/// whitespace is found without decoding, and runs of other characters are copied at once.
pub fn collapse_whitespace(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        let (c, width) = char_at(s, i);
        if c.is_whitespace() {
            i += width;
            continue;
        }
        let start = i;
        while i < bytes.len() {
            let (c, width) = char_at(s, i);
            if c.is_whitespace() {
                break;
            }
            i += width;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&s[start..i]);
    }
    out
}

/// The first `max` characters of `s` (no counting when it has at most `max` bytes).
pub fn first_chars(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    match s.char_indices().nth(max) {
        Some((cut, _)) => &s[..cut],
        None => s,
    }
}

/// `s` without leading and trailing whitespace (ASCII checked without decoding).
pub fn trim_ws(s: &str) -> &str {
    let bytes = s.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        let (c, width) = char_at(s, start);
        if !c.is_whitespace() {
            break;
        }
        start += width;
    }
    let mut end = bytes.len();
    while end > start {
        let b = bytes[end - 1];
        if b.is_ascii() {
            if !b.is_ascii_whitespace() && b != 0x0b {
                break;
            }
            end -= 1;
        } else {
            match s[start..end].chars().next_back() {
                Some(c) if c.is_whitespace() => end -= c.len_utf8(),
                _ => break,
            }
        }
    }
    &s[start..end]
}

/// The sentences of one or more bodies, kept in one buffer: the text whitespace-collapsed
/// (words separated by one space, paragraphs by a line break) and each sentence's byte span in
/// it. One buffer instead of a string per sentence: splitting stays a few passes over the text
/// with no allocation per sentence.
///
/// Rules (per body added): reading stops at the start of quoted history or a signature (see
/// [`ends_new_text`]); lines starting with '>' are skipped; a blank line, a skipped line and a
/// list bullet each end the current paragraph (other line breaks are soft wraps and join with a
/// space); a paragraph splits after a run of `. ! ?` (and closing quotes or brackets) that is
/// followed by whitespace or the end, except after the abbreviations in [`ABBREVIATIONS`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sentences {
    /// The collapsed text.
    pub text: String,
    /// Byte spans of the sentences in `text`, in order; never empty, never overlapping.
    pub spans: Vec<(usize, usize)>,
    /// Start of the paragraph being built, if any.
    open: Option<usize>,
}

impl Sentences {
    /// The sentences of `body`.
    pub fn of(body: &str) -> Self {
        let mut sentences = Self::default();
        sentences.add(body);
        sentences
    }

    /// Adds the sentences of another body (module rules).
    pub fn add(&mut self, body: &str) {
        for raw in body.lines() {
            let line = trim_ws(raw);
            if ends_new_text(raw, line) {
                break;
            }
            if line.is_empty() || line.starts_with('>') {
                self.end_paragraph();
                continue;
            }
            let content = match strip_bullet(line) {
                Some(rest) => {
                    self.end_paragraph();
                    rest
                }
                None => line,
            };
            self.append_words(content);
        }
        self.end_paragraph();
    }

    /// The sentences as text, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.spans
            .iter()
            .map(|&(start, end)| &self.text[start..end])
    }

    /// For each sentence, the range of `tokens` (the words of `self.text`, in order) inside it.
    pub fn token_ranges(&self, tokens: &[Token<'_>]) -> Vec<(usize, usize)> {
        let mut ranges = Vec::with_capacity(self.spans.len());
        let mut t = 0;
        for &(start, end) in &self.spans {
            while t < tokens.len() && tokens[t].start < start {
                t += 1;
            }
            let first = t;
            while t < tokens.len() && tokens[t].end <= end {
                t += 1;
            }
            ranges.push((first, t));
        }
        ranges
    }

    /// Appends the words of a trimmed line to the open paragraph (opening one if needed).
    fn append_words(&mut self, line: &str) {
        if self.open.is_none() {
            if !self.text.is_empty() {
                self.text.push('\n');
            }
            self.open = Some(self.text.len());
        } else {
            self.text.push(' ');
        }
        let bytes = line.as_bytes();
        let mut i = 0;
        let mut first = true;
        while i < bytes.len() {
            let (c, width) = char_at(line, i);
            if c.is_whitespace() {
                i += width;
                continue;
            }
            let start = i;
            while i < bytes.len() {
                let (c, width) = char_at(line, i);
                if c.is_whitespace() {
                    break;
                }
                i += width;
            }
            if !first {
                self.text.push(' ');
            }
            first = false;
            self.text.push_str(&line[start..i]);
        }
    }

    /// Splits the open paragraph into sentences.
    fn end_paragraph(&mut self) {
        let Some(offset) = self.open.take() else {
            return;
        };
        let paragraph = &self.text[offset..];
        let bytes = paragraph.as_bytes();
        let mut start = 0;
        let mut i = 0;
        let mut push = |from: usize, to: usize| {
            // Words are separated by single spaces: skip the one after a boundary.
            let from = if paragraph[from..to].starts_with(' ') {
                from + 1
            } else {
                from
            };
            if from < to {
                self.spans.push((offset + from, offset + to));
            }
        };
        while i < bytes.len() {
            // Terminators are ASCII, so byte positions are char boundaries.
            if !matches!(bytes[i], b'.' | b'!' | b'?') {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while let Some(c) = paragraph[j..].chars().next().filter(|&c| is_closer(c)) {
                j += c.len_utf8();
            }
            let boundary = paragraph[j..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace);
            if boundary && !(bytes[i] == b'.' && j == i + 1 && after_abbreviation(paragraph, i)) {
                push(start, j);
                start = j;
            }
            i = j;
        }
        push(start, paragraph.len());
    }
}

/// The sentences of a message body as strings (see [`Sentences`]).
pub fn sentences(body: &str) -> Vec<String> {
    Sentences::of(body).iter().map(str::to_owned).collect()
}

/// Closing characters that stay with the sentence they end.
#[inline(always)]
fn is_closer(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '"' | '\'' | ')' | '’' | '”' | ']')
}

/// Whether the word ending just before byte `dot` is an abbreviation.
fn after_abbreviation(text: &str, dot: usize) -> bool {
    // Abbreviations are short ASCII words: look at most 7 bytes back, without allocating.
    let bytes = text.as_bytes();
    let mut start = dot;
    while start > 0 && dot - start < 7 && !matches!(bytes[start - 1], b' ' | b'\n' | b'(') {
        start -= 1;
    }
    let at_word_start = start == 0 || matches!(bytes[start - 1], b' ' | b'\n' | b'(');
    at_word_start
        && ABBREVIATIONS
            .iter()
            .any(|a| a.as_bytes().eq_ignore_ascii_case(&bytes[start..dot]))
}

/// `s` if it has at most `max` characters (and false); otherwise a clean cut (and true): the
/// first `max - 1` characters, shortened to the last word boundary when that keeps at least
/// half of them, with trailing spaces and `, ; : -` removed, followed by '…'. The result never
/// has more than `max` characters. `max` must be at least 2.
pub fn cut_clean(s: &str, max: usize) -> (String, bool) {
    debug_assert!(max >= 2);
    let Some((limit, next)) = s.char_indices().nth(max - 1) else {
        return (s.to_owned(), false);
    };
    // More than max - 1 characters; exactly max fits as is.
    if s[limit..].chars().nth(1).is_none() {
        return (s.to_owned(), false);
    }
    let prefix = &s[..limit];
    let cut = if next.is_whitespace() {
        prefix
    } else {
        match prefix.rfind(char::is_whitespace) {
            Some(b) if prefix[..b].chars().count() >= (max - 1) / 2 => &prefix[..b],
            _ => prefix,
        }
    };
    let cut = cut.trim_end_matches(|c: char| {
        c.is_whitespace() || matches!(c, ',' | ';' | ':' | '-' | '–' | '—')
    });
    (format!("{cut}…"), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let lower = lowered(text);
        tokenize(text, &lower)
            .into_iter()
            .map(|t| t.lower.into_owned())
            .collect()
    }

    #[test]
    fn tokens_keep_joined_words_and_positions() {
        assert_eq!(
            words("Send it by 3:30pm, e.g. Friday (2026-12-01)! I’ll do it—ok?"),
            [
                "send",
                "it",
                "by",
                "3:30pm",
                "e.g",
                "friday",
                "2026-12-01",
                "i'll",
                "do",
                "it",
                "ok"
            ]
        );
        // Joiners at the edges are not part of a word; non-ASCII letters are.
        assert_eq!(words("-x- 'y' Zoë's"), ["x", "y", "zoë's"]);
        let text = "Hi Zoë, ok";
        let lower = lowered(text);
        let t = tokenize(text, &lower);
        // "Zoë" is 4 bytes: Z o ë(2).
        assert_eq!((t[1].start, t[1].end), (3, 7));
        assert_eq!(t[1].lower, "zoë");
        assert!(words("  ,.!? ").is_empty());
        // Non-ASCII capitals are lower-cased in owned words; ASCII ones borrow.
        assert_eq!(words("ÉTÉ Été ete"), ["été", "été", "ete"]);
        assert!(matches!(t[0].lower, Cow::Borrowed("hi")));
        assert_eq!(collapse_whitespace(" a \t\u{a0} b\n"), "a b");
        assert_eq!(collapse_whitespace("ab  cd"), "ab cd");
        assert_eq!(trim_ws("\u{a0} a b \t\u{2003}"), "a b");
        assert_eq!(trim_ws(" \u{b} "), "");
        assert_eq!(trim_ws("é"), "é");
        assert_eq!(first_chars("héllo", 2), "hé");
        assert_eq!(first_chars("héllo", 5), "héllo");
        assert_eq!(first_chars("hé", 9), "hé");
        assert!(words_at(&t, 1, &["zoë", "ok"]));
        assert!(!words_at(&t, 2, &["ok", "more"]));
        assert!(contains_words(&t, &["ok"]));
    }

    #[test]
    fn sentences_split_join_and_skip_quotes() {
        let body = "Hi Ann,\n\nCan you send the\nreport by Friday? I will review it, e.g. the\n\
                    numbers. Thanks!\n- first point\n2) second point\n> quoted line.\nAfter.\n\
                    On Mon, 23 Nov 2026, Bob wrote:\nOld text.";
        assert_eq!(
            sentences(body),
            [
                "Hi Ann,",
                "Can you send the report by Friday?",
                "I will review it, e.g. the numbers.",
                "Thanks!",
                "first point",
                "second point",
                "After.",
            ]
        );
        // The signature delimiter ends the new text; "!!" and ".)" end sentences; a dot inside
        // a word does not.
        assert_eq!(
            sentences("Done!! See v1.2 (soon.) Next\n-- \nAnn\nCall me."),
            ["Done!!", "See v1.2 (soon.)", "Next"]
        );
        assert_eq!(
            sentences("Ask Dr. Who (approx. 2 min). Done."),
            ["Ask Dr. Who (approx. 2 min).", "Done."]
        );
        assert!(sentences("").is_empty());
        assert!(sentences("\n\n  \n").is_empty());
        assert_eq!(sentences("no terminator"), ["no terminator"]);
    }

    #[test]
    fn one_buffer_with_spans_and_token_ranges() {
        let mut s = Sentences::of("Hi  there.\tOk?\n\nNew   para");
        s.add("Second body. End");
        assert_eq!(s.text, "Hi there. Ok?\nNew para\nSecond body. End");
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            ["Hi there.", "Ok?", "New para", "Second body.", "End"]
        );
        let lower = lowered(&s.text);
        let tokens = tokenize(&s.text, &lower);
        // hi there | ok | new para | second body | end
        assert_eq!(
            s.token_ranges(&tokens),
            [(0, 2), (2, 3), (3, 5), (5, 7), (7, 8)]
        );
        assert_eq!(Sentences::of("").spans, []);
        assert_eq!(Sentences::of("...").iter().collect::<Vec<_>>(), ["..."]);
    }

    #[test]
    fn clean_cuts() {
        // Short enough: unchanged.
        assert_eq!(cut_clean("hello", 5), ("hello".into(), false));
        assert_eq!(cut_clean("", 5), ("".into(), false));
        // "hello world again" (17 chars) at 12: the first 11 are "hello world", and the 12th
        // char is a space, so the cut is at the boundary: "hello world…" (12 chars).
        assert_eq!(
            cut_clean("hello world again", 12),
            ("hello world…".into(), true)
        );
        // At 10: the first 9 are "hello wor"; the last space leaves "hello" (5 ≥ 9/2 = 4).
        assert_eq!(cut_clean("hello world again", 10), ("hello…".into(), true));
        // One long word: no boundary, hard cut at 5 chars + '…'.
        assert_eq!(cut_clean("abcdefghij", 6), ("abcde…".into(), true));
        // Trailing punctuation goes: "one, two, three" at 10 → "one, two," → "one, two…".
        assert_eq!(cut_clean("one, two, three", 10), ("one, two…".into(), true));
        // Characters, not bytes: 4 × 'é' at 3 → "éé…".
        assert_eq!(cut_clean("éééé", 3), ("éé…".into(), true));
        let (cut, _) = cut_clean(&"word ".repeat(300), 1000);
        assert!(cut.chars().count() <= 1000);
    }
}
