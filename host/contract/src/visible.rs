//! What people read: text from agents (and anything else untrusted) made visible.
//!
//! It owns the one rule for every human-facing output (the run's lines, summaries, questions
//! and rationales, the CLI's messages, log lines): characters that would act on a terminal or
//! change how text reads are shown as escapes, never written raw. C0 and C1 controls, DEL,
//! newlines and tabs (so no line can be forged), Unicode line and paragraph separators, and the
//! bidirectional controls (which can reorder what is shown) become `\n`, `\t`, `\r` or
//! `\u{…}`; a backslash becomes `\\`, so an escape in the output always means one was made. It
//! must not be applied to JSON written for programs (traces.jsonl, `--json`, result.v1): JSON
//! escapes what it must itself, and its strings stay the data they are.

/// `text` with every character that would act on a terminal shown as an escape.
pub fn visible(text: &str) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_owned();
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        match character {
            '\\' => shown.push_str("\\\\"),
            '\n' => shown.push_str("\\n"),
            '\r' => shown.push_str("\\r"),
            '\t' => shown.push_str("\\t"),
            other if needs_escape(other) => {
                shown.push_str(&format!("\\u{{{:x}}}", u32::from(other)));
            }
            other => shown.push(other),
        }
    }
    shown
}

/// Whether a character is shown as an escape.
pub(crate) fn needs_escape(character: char) -> bool {
    character == '\\'
        || character.is_control()
        || matches!(
            character,
            // Line and paragraph separators: a new line on some terminals and in HTML.
            '\u{2028}' | '\u{2029}'
            // Bidirectional embeddings, overrides and isolates: they reorder what is shown.
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            // Left-to-right and right-to-left marks, and the Arabic letter mark.
            | '\u{200e}' | '\u{200f}' | '\u{061c}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_passes_as_it_is() {
        let text = "Stress 40 (moderate); Ärger über 12 € — 東京 😀";
        assert_eq!(visible(text), text);
    }

    #[test]
    fn what_acts_on_a_terminal_is_shown_as_escapes() {
        // ESC [ 2 J clears the screen; the newline would start a forged line.
        assert_eq!(
            visible("calm\u{1b}[2J\n09:00  WATCH  forged"),
            "calm\\u{1b}[2J\\n09:00  WATCH  forged"
        );
        assert_eq!(visible("a\tb\rc\u{7f}d\u{0}e"), "a\\tb\\rc\\u{7f}d\\u{0}e");
        // C1 controls (U+009B is CSI, an escape sequence in one character).
        assert_eq!(visible("x\u{9b}2J"), "x\\u{9b}2J");
        // Separators and bidirectional controls.
        assert_eq!(visible("a\u{2028}b\u{2029}"), "a\\u{2028}b\\u{2029}");
        assert_eq!(visible("\u{202e}gnp.exe"), "\\u{202e}gnp.exe");
        assert_eq!(
            visible("\u{2066}x\u{2069}\u{200f}"),
            "\\u{2066}x\\u{2069}\\u{200f}"
        );
    }

    #[test]
    fn a_backslash_is_escaped_so_escapes_cannot_be_faked() {
        // Text that already spells an escape reads as that text, not as the escape.
        assert_eq!(visible("\\n"), "\\\\n");
        assert_eq!(visible("C:\\dir"), "C:\\\\dir");
        assert_ne!(visible("\\u{1b}"), visible("\u{1b}"));
    }
}
