//! The five moves of MAPF-FrozenLake.

use serde::{Deserialize, Serialize};

/// One step of one agent. The discriminants are the action codes of the batched engine
/// (0 wait, 1 up, 2 down, 3 left, 4 right).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[repr(u8)]
pub enum Move {
    /// Stay in place.
    Wait = 0,
    /// Row − 1.
    Up = 1,
    /// Row + 1.
    Down = 2,
    /// Column − 1.
    Left = 3,
    /// Column + 1.
    Right = 4,
}

impl Move {
    /// The (row, col) change of each move, by code: wait, up, down, left, right.
    pub const DELTAS: [(i64, i64); 5] = [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)];

    /// All moves in action-code order.
    pub const ALL: [Move; 5] = [Move::Wait, Move::Up, Move::Down, Move::Left, Move::Right];

    /// The letter used in move strings: `W`, `U`, `D`, `L`, `R`.
    #[must_use]
    pub fn letter(self) -> char {
        match self {
            Move::Wait => 'W',
            Move::Up => 'U',
            Move::Down => 'D',
            Move::Left => 'L',
            Move::Right => 'R',
        }
    }

    /// The word used in the paper's text answers: `WAIT`, `UP`, `DOWN`, `LEFT`, `RIGHT`.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            Move::Wait => "WAIT",
            Move::Up => "UP",
            Move::Down => "DOWN",
            Move::Left => "LEFT",
            Move::Right => "RIGHT",
        }
    }

    /// Parses one move letter (upper case only; move strings are case-sensitive).
    #[must_use]
    pub fn from_letter(ch: char) -> Option<Move> {
        match ch {
            'W' => Some(Move::Wait),
            'U' => Some(Move::Up),
            'D' => Some(Move::Down),
            'L' => Some(Move::Left),
            'R' => Some(Move::Right),
            _ => None,
        }
    }

    /// The move for an action code 0..=4.
    #[must_use]
    pub fn from_code(code: u8) -> Option<Move> {
        Move::ALL.get(usize::from(code)).copied()
    }

    /// (Δrow, Δcol).
    #[must_use]
    pub fn delta(self) -> (i64, i64) {
        Self::DELTAS[self as usize]
    }

    /// The move that takes `from` to `to` if they are equal or 4-adjacent; `None` for a jump.
    #[must_use]
    pub fn between(from: (i64, i64), to: (i64, i64)) -> Option<Move> {
        let d = (to.0 - from.0, to.1 - from.1);
        Move::ALL.into_iter().find(|m| m.delta() == d)
    }
}

/// Parses a move string such as `"RRDW"`; the error carries the index and character of the first
/// unknown letter.
pub fn parse_moves(s: &str) -> Result<Vec<Move>, (usize, char)> {
    s.chars().enumerate().map(|(i, ch)| Move::from_letter(ch).ok_or((i, ch))).collect()
}

/// Writes moves as a string of letters.
#[must_use]
pub fn moves_to_string(moves: &[Move]) -> String {
    moves.iter().map(|m| m.letter()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_round_trip_and_codes_match_the_engine() {
        for (code, m) in Move::ALL.into_iter().enumerate() {
            assert_eq!(Move::from_letter(m.letter()), Some(m));
            assert_eq!(Move::from_code(code as u8), Some(m));
            assert_eq!(m as u8, code as u8);
        }
        assert_eq!(parse_moves("RRDW").map(|v| moves_to_string(&v)), Ok("RRDW".into()));
        assert_eq!(parse_moves("RxD"), Err((1, 'x')));
        assert_eq!(Move::between((1, 1), (1, 3)), None);
        assert_eq!(Move::between((1, 1), (0, 1)), Some(Move::Up));
    }
}
