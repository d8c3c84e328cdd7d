//! The word form of Bryan's edges-only report: each sticker slot is a letter `a`..`x`, and a
//! position is the word of the letters sitting in the slots. A cubie's stickers move together, so
//! the letters at the reference slots determine the rest: 12 letters describe the edges and 8 the
//! corners.
//! Corners and edges use separate 24-letter alphabets (corner slot `3i+k`, edge slot `2i+k`).

use super::pieces::Pieces;
use super::state::Cube;

/// A word that does not describe a position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WordError {
    #[error("{part} word has {len} letters: expected {short} (reference slots) or 24")]
    Length { part: &'static str, len: usize, short: usize },
    #[error("{part} word: `{letter}` is not a letter a..x")]
    Letter { part: &'static str, letter: char },
    #[error("{part} word `{word}` does not describe whole cubies (a letter repeats, a cubie is split, or the twists do not sum to zero)")]
    NotAPosition { part: &'static str, word: String },
}

fn letter(v: u8) -> char {
    (b'a' + v) as char
}

fn word_of<const N: usize, const O: u8>(p: &Pieces<N, O>, full: bool) -> String {
    let s = p.to_stickers();
    let step = if full { 1 } else { O as usize };
    s.iter().step_by(step).map(|&v| letter(v)).collect()
}

fn parse_part<const N: usize, const O: u8>(
    part: &'static str,
    word: &str,
) -> Result<Pieces<N, O>, WordError> {
    let letters: Vec<u8> = word
        .chars()
        .map(|c| {
            if ('a'..='x').contains(&c) {
                Ok(c as u8 - b'a')
            } else {
                Err(WordError::Letter { part, letter: c })
            }
        })
        .collect::<Result<_, _>>()?;
    let o = O as usize;
    let bad = || WordError::NotAPosition { part, word: word.to_string() };
    let stickers: [u8; 24] = if letters.len() == 24 {
        letters.try_into().expect("length checked")
    } else if letters.len() == N {
        let mut s = [0u8; 24];
        for (i, &l) in letters.iter().enumerate() {
            let (cubie, twist) = (l as usize / o, l as usize % o);
            for k in 0..o {
                s[o * i + k] = (o * cubie + (twist + k) % o) as u8;
            }
        }
        s
    } else {
        return Err(WordError::Length { part, len: letters.len(), short: N });
    };
    Pieces::from_stickers(&stickers).ok_or_else(bad)
}

impl Cube {
    /// The 12-letter edge word (letters at the edge reference slots).
    pub fn edge_word(&self) -> String {
        word_of(&self.edges, false)
    }

    /// The 8-letter corner word (letters at the corner reference slots).
    pub fn corner_word(&self) -> String {
        word_of(&self.corners, false)
    }

    /// The full 24-letter words (edges, corners): every slot's letter.
    pub fn full_words(&self) -> (String, String) {
        (word_of(&self.edges, true), word_of(&self.corners, true))
    }

    /// Parses an edge word and a corner word, each either short (12 / 8 letters) or full (24).
    pub fn from_words(edges: &str, corners: &str) -> Result<Cube, WordError> {
        Ok(Cube { edges: parse_part("edge", edges)?, corners: parse_part("corner", corners)? })
    }
}
