//! The paper's text forms: an instance rendered as a prompt, and a language model's free-text
//! answer read back into a [`Plan`].
//!
//! # The prompt
//! ```text
//! You are a multi-agent path planning expert. There is a 3x3 frozen lake map with 2 agents:
//! S F H
//! F F G
//! s g F
//! Legend: F = frozen (safe), H = hole (never step on it); S s A B C = start of agent 0 1 2 3 4; G g a b c = goal of agent 0 1 2 3 4.
//! Coordinates are (row, col), counted from 0 at the top-left.
//! Agent 0 needs to go from (0, 0) to (1, 2).
//! Agent 1 needs to go from (2, 0) to (2, 1).
//! …rules and the answer format…
//! ```
//! The text form names agents by letter, so it holds at most five agents. A cell that is one
//! agent's start and another's goal shows the start letter; the coordinate lines are exact.
//!
//! # The answer format floe asks for
//! One line per agent, in agent order: `Agent 0: RIGHT DOWN WAIT`. The parser also accepts, per
//! line, the letters `R D W`, compact strings `RDW`, `STAY` for `WAIT`, commas or arrows
//! between moves, `none` for an agent that does not move, or a coordinate list such as
//! `Agent 0: (0, 0) -> (0, 1) -> (1, 1)` (if the list does not begin with the start cell, the
//! start is taken to come before it). Rules, so that every answer has one reading:
//! - a *plan line* is `Agent <n>` followed by `:`, `=` or `-` and a body made only of moves, or
//!   only of coordinates and separators; any other line is prose and is skipped (so
//!   "Agent 0 needs to go from (0, 0) to (1, 2)" is never read as a plan);
//! - if the answer has `<answer>…</answer>` tags, only the last tagged part is read;
//! - plan lines that follow each other (blank lines allowed) form a block; the **last** block is
//!   the answer, so a model may restate its plan at the end;
//! - in that block, agents are numbered 0…k−1 (or 1…k, if no agent 0 appears), each once.

use crate::instance::Instance;
use crate::moves::Move;
use crate::plan::Plan;

pub use crate::error::count;

/// Start letters of agents 0–4 in the paper's prompt.
pub const START_LETTERS: [char; 5] = ['S', 's', 'A', 'B', 'C'];
/// Goal letters of agents 0–4 in the paper's prompt.
pub const GOAL_LETTERS: [char; 5] = ['G', 'g', 'a', 'b', 'c'];

/// Renders the paper-style prompt for an instance.
///
/// # Errors
/// More agents than the text form has letters for (five).
pub fn render_prompt(instance: &Instance) -> Result<String, String> {
    let k = instance.num_agents();
    if k > START_LETTERS.len() {
        return Err(format!(
            "the text prompt names agents by letter and holds at most {} agents; this instance has {k}",
            START_LETTERS.len()
        ));
    }
    let grid = &instance.grid;
    let mut letters: Vec<Vec<char>> = grid.to_rows().iter().map(|r| r.chars().collect()).collect();
    for (i, a) in instance.agents.iter().enumerate() {
        letters[a.goal.row as usize][a.goal.col as usize] = GOAL_LETTERS[i];
    }
    for (i, a) in instance.agents.iter().enumerate() {
        letters[a.start.row as usize][a.start.col as usize] = START_LETTERS[i];
    }
    let mut out = format!(
        "You are a multi-agent path planning expert. There is a {}x{} frozen lake map with {k} agent{}:\n",
        grid.height(),
        grid.width(),
        if k == 1 { "" } else { "s" }
    );
    for row in &letters {
        let line: Vec<String> = row.iter().map(char::to_string).collect();
        out.push_str(&line.join(" "));
        out.push('\n');
    }
    let ids: Vec<String> = (0..k).map(|i| i.to_string()).collect();
    let starts: String = START_LETTERS[..k].iter().map(|c| format!("{c} ")).collect();
    let goals: String = GOAL_LETTERS[..k].iter().map(|c| format!("{c} ")).collect();
    out.push_str(&format!(
        "Legend: F = frozen (safe), H = hole (never step on it); {starts}= start of agent {ids}; {goals}= goal of agent {ids}.\n",
        ids = ids.join(" ")
    ));
    out.push_str("Coordinates are (row, col), counted from 0 at the top-left.\n");
    for (i, a) in instance.agents.iter().enumerate() {
        out.push_str(&format!("Agent {i} needs to go from {} to {}.\n", a.start, a.goal));
    }
    out.push_str(
        "At each time step every agent moves UP, DOWN, LEFT or RIGHT by one cell, or WAITs. \
         No agent may leave the map or step on a hole. Two agents may never be on the same cell at \
         the same time, nor swap cells in one step. An agent that has finished stays on its goal and \
         still occupies it.\n\
         Find a plan that brings every agent to its goal with the smallest sum of costs (an agent's \
         cost is the time step of its final arrival on its goal).\n\
         Give your answer as one line per agent, in agent order, listing its moves, for example:\n",
    );
    for i in 0..k.min(2) {
        out.push_str(&format!("Agent {i}: {}\n", if i == 0 { "RIGHT DOWN WAIT" } else { "UP LEFT" }));
    }
    Ok(out)
}

/// Why an answer could not be turned into a plan for the instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerError {
    /// Nothing readable, or readable but ambiguous.
    Parse(String),
    /// A readable plan for the wrong number of agents.
    WrongAgentCount { found: usize, expected: usize },
}

impl std::fmt::Display for AnswerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnswerError::Parse(m) => f.write_str(m),
            AnswerError::WrongAgentCount { found, expected } => {
                write!(
                    f,
                    "the answer has plans for {}, the instance has {expected}",
                    count(*found as u64, "agent", "agents")
                )
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Body {
    Moves(Vec<Move>),
    Coords(Vec<(i64, i64)>),
}

/// Reads a free-text answer (see the module docs for the accepted forms).
///
/// # Errors
/// [`AnswerError`].
pub fn parse_answer(text: &str, instance: &Instance) -> Result<Plan, AnswerError> {
    let k = instance.num_agents();
    let text = last_tagged(text).unwrap_or(text);
    let mut blocks: Vec<Vec<(usize, Body)>> = Vec::new();
    // Lines that look like plan lines but hold a word that is not a move, for the error message.
    let mut unreadable: Vec<(usize, usize, UnknownMove)> = Vec::new();
    let mut in_block = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match plan_line(line) {
            Line::Plan(id, body) => {
                if !in_block {
                    blocks.push(Vec::new());
                    in_block = true;
                }
                blocks.last_mut().expect("a block was pushed").push((id, body));
            }
            Line::UnknownMove(id, bad) => {
                unreadable.push((n + 1, id, bad));
                in_block = false;
            }
            Line::Prose => in_block = false,
        }
    }
    let unknown_move = |missing: &dyn Fn(usize) -> bool| {
        unreadable.iter().find(|(_, id, _)| missing(*id)).map(|(line, id, bad)| {
            AnswerError::Parse(format!(
                "line {line}: '{}' (move {} of agent {id}) is not a move; moves are UP, DOWN, LEFT, RIGHT and WAIT (or U, D, L, R, W)",
                bad.word, bad.position
            ))
        })
    };
    let Some(block) = blocks.pop() else {
        return Err(unknown_move(&|_| true).unwrap_or_else(|| {
            AnswerError::Parse(
                "no plan line found (expected lines such as 'Agent 0: RIGHT DOWN WAIT')".into(),
            )
        }));
    };
    let mut ids: Vec<usize> = block.iter().map(|(i, _)| *i).collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(AnswerError::Parse(format!("agent {} has more than one plan line", w[0])));
    }
    if ids.len() != k {
        if let Some(e) = unknown_move(&|id| ids.binary_search(&id).is_err()) {
            return Err(e);
        }
        return Err(AnswerError::WrongAgentCount { found: ids.len(), expected: k });
    }
    let base = if ids[0] == 1 { 1 } else { 0 };
    if ids.iter().enumerate().any(|(n, &i)| i != n + base) {
        return Err(AnswerError::Parse(format!(
            "agents must be numbered 0..{} (or 1..{k}); found {ids:?}",
            k - 1
        )));
    }
    let mut bodies: Vec<Option<Body>> = vec![None; k];
    for (i, body) in block {
        bodies[i - base] = Some(body);
    }
    let bodies: Vec<Body> = bodies.into_iter().map(|b| b.expect("every agent has a line")).collect();
    if bodies.iter().all(|b| matches!(b, Body::Moves(_))) {
        return Ok(Plan::Moves(
            bodies.into_iter().map(|b| if let Body::Moves(m) = b { m } else { Vec::new() }).collect(),
        ));
    }
    // Some lines are coordinate lists: express every agent as a path from its start.
    let paths = bodies
        .into_iter()
        .zip(&instance.agents)
        .map(|(b, a)| {
            let start = (i64::from(a.start.row), i64::from(a.start.col));
            match b {
                Body::Coords(mut c) => {
                    if c.first() != Some(&start) {
                        c.insert(0, start);
                    }
                    c
                }
                Body::Moves(m) => {
                    let mut p = vec![start];
                    for mv in m {
                        let (r, c) = *p.last().expect("non-empty");
                        let (dr, dc) = mv.delta();
                        p.push((r + dr, c + dc));
                    }
                    p
                }
            }
        })
        .collect();
    Ok(Plan::Paths(paths))
}

/// The content of the last `<answer>…</answer>` pair, if any.
fn last_tagged(text: &str) -> Option<&str> {
    let lower = text.to_ascii_lowercase();
    let open = lower.rfind("<answer>")?;
    let from = open + "<answer>".len();
    let close = lower[from..].find("</answer>").map_or(text.len(), |c| from + c);
    Some(&text[from..close])
}

/// A word in a plan line that is not a move: the word and its place (1-based) among the moves.
#[derive(Debug, Clone, PartialEq)]
struct UnknownMove {
    word: String,
    position: usize,
}

/// What one line of an answer is.
enum Line {
    Plan(usize, Body),
    /// `Agent <n>:` followed by moves and a word that is not one: not a plan line, but named in
    /// the error when the answer has no plan for that agent.
    UnknownMove(usize, UnknownMove),
    Prose,
}

fn plan_line(line: &str) -> Line {
    let Some((id, body)) = plan_header(line) else {
        return Line::Prose;
    };
    match parse_body(body) {
        Some(b) => Line::Plan(id, b),
        None => match parse_moves(body) {
            // A line with at least one move (a word or letters) reads as a plan with a typo.
            Err(bad) if has_a_move(body) => Line::UnknownMove(id, bad),
            _ => Line::Prose,
        },
    }
}

/// Splits `Agent <n><sep> <body>` into the agent number and the body; `None` for prose.
fn plan_header(line: &str) -> Option<(usize, &str)> {
    let s = line.trim().trim_start_matches(['-', '*', '#', '>', '`', '|', '•']).trim_start();
    let lower = s.to_ascii_lowercase();
    let rest = lower.strip_prefix("agent")?;
    let rest_orig = &s[s.len() - rest.len()..];
    let rest_orig = rest_orig.trim_start_matches([' ', '_', '#']);
    let digits = rest_orig.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let id: usize = rest_orig[..digits].parse().ok()?;
    let after = rest_orig[digits..].trim_start_matches(['*', '`', ' ']);
    let body = after.strip_prefix([':', '=', '-'])?;
    let body = body.trim().trim_matches(['*', '`']).trim().trim_end_matches('.');
    Some((id, body))
}

fn parse_body(body: &str) -> Option<Body> {
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "none" | "(none)" | "[]" | "no moves" | "-") {
        return Some(Body::Moves(Vec::new()));
    }
    if body.is_empty() {
        return None;
    }
    if body.contains(|c: char| c.is_ascii_digit()) {
        return parse_coords(body).map(Body::Coords);
    }
    parse_moves(body).ok().map(Body::Moves)
}

/// A whole-word move: `UP`, `DOWN`, `LEFT`, `RIGHT`, `WAIT` or `STAY`, in any case.
fn move_word(word: &str) -> Option<Move> {
    match word.to_ascii_uppercase().as_str() {
        "UP" => Some(Move::Up),
        "DOWN" => Some(Move::Down),
        "LEFT" => Some(Move::Left),
        "RIGHT" => Some(Move::Right),
        "WAIT" | "STAY" => Some(Move::Wait),
        _ => None,
    }
}

/// What separates moves in a plan line.
fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | ';' | '|' | '>' | '→' | '[' | ']' | '"' | '\'')
}

/// The tokens of a plan line's body: the text between separators, without dashes, equals signs
/// and periods around it.
fn tokens(body: &str) -> impl Iterator<Item = &str> {
    body.split(is_separator).map(|t| t.trim_matches(['-', '=', '.'])).filter(|t| !t.is_empty())
}

fn has_a_move(body: &str) -> bool {
    tokens(body).any(|t| parse_moves(t).is_ok())
}

/// Moves as words (`RIGHT DOWN`), letters (`R D`) or compact letters (`RDW`), between any of
/// the accepted separators; the first word that is none of these is the error.
fn parse_moves(body: &str) -> Result<Vec<Move>, UnknownMove> {
    let mut moves = Vec::new();
    for token in tokens(body) {
        if let Some(m) = move_word(token) {
            moves.push(m);
            continue;
        }
        let letters: Option<Vec<Move>> =
            token.chars().map(|ch| Move::from_letter(ch.to_ascii_uppercase())).collect();
        match letters {
            Some(l) => moves.extend(l),
            None => return Err(UnknownMove { word: token.to_string(), position: moves.len() + 1 }),
        }
    }
    Ok(moves)
}

/// Parses `(r, c)` / `[r, c]` pairs separated only by commas, semicolons, arrows and spaces.
fn parse_coords(body: &str) -> Option<Vec<(i64, i64)>> {
    let mut out = Vec::new();
    let mut rest = body.trim();
    // An optional outer bracket around the whole list.
    if let Some(inner) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        if inner.trim_start().starts_with(['(', '[']) {
            rest = inner;
        }
    }
    loop {
        rest = rest.trim_start_matches(|c: char| {
            c.is_whitespace() || matches!(c, ',' | ';' | '-' | '>' | '→' | '=')
        });
        if rest.is_empty() {
            break;
        }
        let close = match rest.chars().next()? {
            '(' => ')',
            '[' => ']',
            _ => return None,
        };
        let end = rest.find(close)?;
        let inner = &rest[1..end];
        let mut parts = inner.split(',');
        let r: i64 = parts.next()?.trim().parse().ok()?;
        let c: i64 = parts.next()?.trim().parse().ok()?;
        if parts.next().is_some() {
            return None;
        }
        out.push((r, c));
        rest = &rest[end + 1..];
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst() -> Instance {
        Instance::from_json(
            r#"{"grid": ["FFF", "FHF", "FFF"], "agents": [{"start": [0, 0], "goal": [0, 2]}, {"start": [2, 0], "goal": [2, 2]}]}"#,
        )
        .expect("valid")
    }

    #[test]
    fn prompt_has_the_papers_shape() {
        let p = render_prompt(&inst()).expect("two agents fit");
        assert!(p.starts_with("You are a multi-agent path planning expert. There is a 3x3 frozen lake map with 2 agents:\nS F G\nF H F\ns F g\n"));
        assert!(p.contains("Agent 1 needs to go from (2, 0) to (2, 2)."));
    }

    #[test]
    fn answers_in_every_accepted_form_read_the_same() {
        let want = Plan::Moves(vec![vec![Move::Right, Move::Right], vec![Move::Right, Move::Right]]);
        for text in [
            "Agent 0: RIGHT RIGHT\nAgent 1: RIGHT RIGHT",
            "agent 0: R R\nagent 1: r, r",
            "**Agent 0:** RR\n**Agent 1:** R -> R.",
            "Thinking...\nAgent 0: UP\nAgent 1: UP\nFinal answer:\nAgent 0: RIGHT RIGHT\n\nAgent 1: RIGHT RIGHT\n",
            "Agent 1: RIGHT RIGHT\nAgent 2: RIGHT RIGHT",
            "<answer>\nAgent 0: RIGHT RIGHT\nAgent 1: RIGHT RIGHT\n</answer>\nAgent 0: UP",
        ] {
            assert_eq!(parse_answer(text, &inst()), Ok(want.clone()), "{text}");
        }
        let coords = parse_answer("Agent 0: (0, 0) -> (0, 1) -> (0, 2)\nAgent 1: [(2,1), (2,2)]", &inst());
        assert_eq!(coords, Ok(Plan::Paths(vec![vec![(0, 0), (0, 1), (0, 2)], vec![(2, 0), (2, 1), (2, 2)]])));
    }

    #[test]
    fn unreadable_or_ambiguous_answers_are_rejected() {
        let i = inst();
        assert!(matches!(parse_answer("I cannot solve this.", &i), Err(AnswerError::Parse(_))));
        assert!(matches!(parse_answer("Agent 0: R\nAgent 0: R", &i), Err(AnswerError::Parse(_))));
        assert_eq!(
            parse_answer("Agent 0: RR", &i),
            Err(AnswerError::WrongAgentCount { found: 1, expected: 2 })
        );
        assert!(matches!(parse_answer("Agent 0: R\nAgent 3: R", &i), Err(AnswerError::Parse(_))));
        // Prose that mentions coordinates is never a plan line.
        assert!(matches!(
            parse_answer("Agent 0 needs to go from (0, 0) to (0, 2).", &i),
            Err(AnswerError::Parse(_))
        ));
        assert!(matches!(parse_answer("Agent 0: RIGHT JUMP", &i), Err(AnswerError::Parse(_))));
    }

    #[test]
    fn an_unknown_move_is_named_with_its_place() {
        let i = inst();
        let expect = |text: &str, line: usize, word: &str, at: usize, agent: usize| {
            let Err(AnswerError::Parse(m)) = parse_answer(text, &i) else {
                panic!("{text:?} should not parse");
            };
            assert!(
                m.starts_with(&format!("line {line}: '{word}' (move {at} of agent {agent}) is not a move")),
                "{m}"
            );
        };
        expect("Agent 0: RIGHT RIGHT JUMP DOWN", 1, "JUMP", 3, 0);
        expect("Agent 0: hop right", 1, "hop", 1, 0);
        expect("Plan:\nAgent 0: RR\nAgent 1: R, R, fly", 3, "fly", 3, 1);
        // A complete plan elsewhere wins over a line with a typo.
        assert!(parse_answer("Agent 0: R JUMP\n\nAgent 0: RR\nAgent 1: RR", &i).is_ok());
        // Prose without a move word is still just prose.
        assert_eq!(
            parse_answer("Agent 0: is the first agent", &i),
            Err(AnswerError::Parse(
                "no plan line found (expected lines such as 'Agent 0: RIGHT DOWN WAIT')".into()
            ))
        );
    }
}
