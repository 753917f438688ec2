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
//! start is taken to come before it). Rules, so that every answer has one reading and no line
//! is passed over:
//! - if the answer has `<answer>…</answer>` tags, only the last tagged part is read;
//! - an *agent line* begins with `Agent <n>` followed by `:`, `=` or `-`; every other line is
//!   prose and is skipped (so "Agent 0 needs to go from (0, 0) to (1, 2)" is never read);
//! - every agent line is a *plan line*: its body is made only of moves (or `none`), or only of
//!   coordinates and separators. An agent line with any other body (`Agent 1: I am not sure`)
//!   is a parse error naming the line, wherever it stands;
//! - agents are numbered 0…k−1, or 1…k if no agent line names agent 0; an agent line for an
//!   agent the instance lacks (`Agent 7:` for three agents) is a parse error naming the line;
//! - agent lines that follow each other (blank lines allowed) form a block, and a block names
//!   each agent once: a second line for an agent in one block is a parse error;
//! - the **last** block is the answer, so a model may restate its plan at the end; a last block
//!   that leaves agents out is `wrong_agent_count`.

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

/// How [`write_answer`] writes a plan: three of the forms [`parse_answer`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnswerForm {
    /// The prompt's example: `Agent 0: RIGHT DOWN WAIT`.
    #[default]
    Words,
    /// One letter a move, the shortest form read: `Agent 0: R D W`.
    Letters,
    /// The cells each agent passes through, from its start, a wait repeating a cell:
    /// `Agent 0: (0, 0) -> (0, 1) -> (1, 1) -> (1, 1)`.
    Coordinates,
}

impl AnswerForm {
    /// Every form, by its name.
    pub const ALL: [(&'static str, AnswerForm); 3] = [
        ("words", AnswerForm::Words),
        ("letters", AnswerForm::Letters),
        ("coordinates", AnswerForm::Coordinates),
    ];
}

impl std::str::FromStr for AnswerForm {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        AnswerForm::ALL.iter().find(|(n, _)| *n == s).map(|&(_, f)| f).ok_or_else(|| {
            let names: Vec<&str> = AnswerForm::ALL.iter().map(|(n, _)| *n).collect();
            format!("{s}: not an answer form; use {}", names.join(", "))
        })
    }
}

/// `moves` (one list per agent of the instance) written as an answer in `form`, one line an
/// agent, which [`parse_answer`] reads back as the same plan. An agent without a move writes one
/// wait.
///
/// # Errors
/// As many move lists as the instance has agents are needed.
pub fn write_answer(instance: &Instance, moves: &[Vec<Move>], form: AnswerForm) -> Result<String, String> {
    if moves.len() != instance.num_agents() {
        return Err(format!(
            "{} move lists for {}",
            moves.len(),
            count(instance.num_agents() as u64, "agent", "agents")
        ));
    }
    let line = |(a, m): (usize, &Vec<Move>)| -> String {
        let m: &[Move] = if m.is_empty() { &[Move::Wait] } else { m };
        let body = match form {
            AnswerForm::Words => m.iter().map(|m| m.word()).collect::<Vec<_>>().join(" "),
            AnswerForm::Letters => m.iter().map(|m| m.letter().to_string()).collect::<Vec<_>>().join(" "),
            AnswerForm::Coordinates => {
                let start =
                    (i64::from(instance.agents[a].start.row), i64::from(instance.agents[a].start.col));
                let cells = std::iter::once(start).chain(m.iter().scan(start, |at, mv| {
                    let (dr, dc) = mv.delta();
                    *at = (at.0 + dr, at.1 + dc);
                    Some(*at)
                }));
                cells.map(|(r, c)| format!("({r}, {c})")).collect::<Vec<_>>().join(" -> ")
            }
        };
        format!("Agent {a}: {body}")
    };
    Ok(moves.iter().enumerate().map(line).collect::<Vec<_>>().join("\n"))
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

/// One line of an answer that begins `Agent <n>:`: its number (1-based), the agent's number as
/// written (`None` when it does not fit a `usize`), and its body read as a plan or why not.
struct AgentLine<'a> {
    line: usize,
    digits: &'a str,
    id: Option<usize>,
    body: Result<Body, String>,
}

/// `agent 0`, `agents 0 and 1`, `agents 1 to 3`: the numbers of `k` agents from `base`.
fn numbering(base: usize, k: usize) -> String {
    match k {
        1 => format!("agent {base}"),
        2 => format!("agents {base} and {}", base + 1),
        _ => format!("agents {base} to {}", base + k - 1),
    }
}

/// Reads a free-text answer (see the module docs for the accepted forms and the rules).
///
/// # Errors
/// [`AnswerError::Parse`] naming the first line that breaks a rule (an agent line that is not a
/// plan, one for an agent the instance lacks, a second line for one agent in a block) or saying
/// that no plan line was found; [`AnswerError::WrongAgentCount`] when the answer's plan leaves
/// agents out.
pub fn parse_answer(text: &str, instance: &Instance) -> Result<Plan, AnswerError> {
    let k = instance.num_agents();
    let text = last_tagged(text).unwrap_or(text);
    // Every agent line in order; `None` for a prose line, which ends a block.
    let mut lines: Vec<Option<AgentLine<'_>>> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        lines.push(plan_header(line).map(|(digits, body)| {
            let id = digits.parse().ok();
            AgentLine { line: n + 1, digits, id, body: read_body(digits, body) }
        }));
    }
    // Agents are numbered from 0, or from 1 when no line names an agent 0.
    let base = usize::from(!lines.iter().flatten().any(|l| l.id == Some(0)));
    let mut slots = Vec::new();
    for l in lines.iter().flatten() {
        let Some(slot) = l.id.and_then(|i| i.checked_sub(base)).filter(|&s| s < k) else {
            return Err(AnswerError::Parse(format!(
                "line {}: the instance has no agent {}: it has {} ({}), and every line that begins 'Agent <n>:' must be a plan for one of them",
                l.line,
                l.digits,
                count(k as u64, "agent", "agents"),
                numbering(base, k)
            )));
        };
        if let Err(why) = &l.body {
            return Err(AnswerError::Parse(format!("line {}: {why}", l.line)));
        }
        slots.push(slot);
    }
    // Blocks of agent lines that follow each other; the last one is the answer.
    let mut blocks: Vec<Vec<(usize, &AgentLine<'_>)>> = Vec::new();
    let mut slots = slots.into_iter();
    for group in lines.split(Option::is_none).filter(|g| !g.is_empty()) {
        let mut block: Vec<(usize, &AgentLine<'_>)> = Vec::with_capacity(group.len());
        for l in group.iter().flatten() {
            let slot = slots.next().expect("one slot per agent line");
            if let Some((_, first)) = block.iter().find(|(s, _)| *s == slot) {
                return Err(AnswerError::Parse(format!(
                    "line {}: a second line for agent {} (the first is line {}); a plan gives each agent one line",
                    l.line, l.digits, first.line
                )));
            }
            block.push((slot, l));
        }
        blocks.push(block);
    }
    let Some(mut block) = blocks.pop() else {
        return Err(AnswerError::Parse(
            "no plan line found (expected lines such as 'Agent 0: RIGHT DOWN WAIT')".into(),
        ));
    };
    // The slots of a block are distinct and below k: it covers every agent when it has k lines.
    if block.len() != k {
        return Err(AnswerError::WrongAgentCount { found: block.len(), expected: k });
    }
    block.sort_unstable_by_key(|(slot, _)| *slot);
    let bodies: Vec<Body> = block
        .into_iter()
        .map(|(_, l)| l.body.clone().expect("unreadable lines were refused above"))
        .collect();
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

/// The body of agent `digits`'s line as a plan, or why it is not one.
fn read_body(digits: &str, body: &str) -> Result<Body, String> {
    if let Some(b) = parse_body(body) {
        return Ok(b);
    }
    if body.is_empty() {
        return Err(format!(
            "agent {digits}'s line has no moves (write 'none' for an agent that does not move)"
        ));
    }
    if body.contains(|c: char| c.is_ascii_digit()) {
        return Err(format!(
            "agent {digits}: '{body}' is neither moves nor a list of (row, col) cells such as (0, 0) -> (0, 1)"
        ));
    }
    let bad = parse_moves(body).err().unwrap_or(UnknownMove { word: body.to_string(), position: 1 });
    Err(format!(
        "'{}' (move {} of agent {digits}) is not a move; moves are UP, DOWN, LEFT, RIGHT and WAIT (or U, D, L, R, W)",
        bad.word, bad.position
    ))
}

/// Splits `Agent <n><sep> <body>` into the agent's number as written and the body; `None` for
/// prose.
fn plan_header(line: &str) -> Option<(&str, &str)> {
    let s = line.trim().trim_start_matches(['-', '*', '#', '>', '`', '|', '•']).trim_start();
    let lower = s.to_ascii_lowercase();
    let rest = lower.strip_prefix("agent")?;
    let rest_orig = &s[s.len() - rest.len()..];
    let rest_orig = rest_orig.trim_start_matches([' ', '_', '#']);
    let digits = rest_orig.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let after = rest_orig[digits..].trim_start_matches(['*', '`', ' ']);
    let body = after.strip_prefix([':', '=', '-'])?;
    let body = body.trim().trim_matches(['*', '`']).trim().trim_end_matches('.');
    Some((&rest_orig[..digits], body))
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

    fn one_agent() -> Instance {
        Instance::from_json(r#"{"grid": ["FF", "FF"], "agents": [{"start": [0, 0], "goal": [1, 0]}]}"#)
            .expect("valid")
    }

    #[test]
    fn every_agent_line_is_read_or_the_answer_is_refused() {
        let one = one_agent();
        for (text, reason) in [
            (
                "Agent 0: DOWN\nAgent 1: SIDEWAYS",
                "line 2: the instance has no agent 1: it has 1 agent (agent 0)",
            ),
            ("Agent 0: DOWN\nAgent 7: …", "line 2: the instance has no agent 7: it has 1 agent (agent 0)"),
            ("Agent 0: DOWN\nAgent 1: I am not sure", "line 2: the instance has no agent 1"),
            ("Agent 0: DOWN\nAgent 1: UP", "line 2: the instance has no agent 1"),
            ("Agent 0: SIDEWAYS\nAgent 0: DOWN", "line 1: 'SIDEWAYS' (move 1 of agent 0) is not a move"),
            ("Agent 0: DOWN\nAgent 0: DOWN", "line 2: a second line for agent 0 (the first is line 1)"),
            ("Agent 0: DOWN\n\nAgent 0: UP", "line 3: a second line for agent 0 (the first is line 1)"),
            (
                "Agent 0: DOWN\nThen:\nAgent 0: UP\nAgent 0: DOWN",
                "line 4: a second line for agent 0 (the first is line 3)",
            ),
            ("Agent 0:\nDOWN", "line 1: agent 0's line has no moves"),
            ("Agent 0: go to (1, 0)", "line 1: agent 0: 'go to (1, 0)' is neither moves nor"),
            ("Agent 99999999999999999999999: DOWN", "the instance has no agent 99999999999999999999999"),
        ] {
            match parse_answer(text, &one) {
                Err(AnswerError::Parse(m)) => {
                    assert!(m.starts_with(reason) || m.contains(reason), "{text:?}: {m}")
                }
                other => panic!("{text:?} should be a parse error, got {other:?}"),
            }
        }
        // Numbered from 1 when no agent 0 appears; a restated plan is still the last block.
        assert_eq!(parse_answer("Agent 1: DOWN", &one), Ok(Plan::Moves(vec![vec![Move::Down]])));
        assert_eq!(
            parse_answer("Agent 0: UP\nSo, finally:\nAgent 0: DOWN", &one),
            Ok(Plan::Moves(vec![vec![Move::Down]]))
        );
        // Two agents: a third agent's line is not a count mismatch but a line the instance lacks.
        assert!(matches!(
            parse_answer("Agent 0: RR\nAgent 1: RR\nAgent 2: RR", &inst()),
            Err(AnswerError::Parse(m)) if m.starts_with("line 3: the instance has no agent 2: it has 2 agents (agents 0 and 1)")
        ));
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
    fn every_written_form_reads_back_as_the_plan() {
        let i = inst();
        let moves = vec![vec![Move::Right, Move::Wait, Move::Right], vec![]];
        let want = |form: &str| -> Vec<Vec<(i64, i64)>> {
            let plan = parse_answer(&write_answer(&i, &moves, form.parse().unwrap()).unwrap(), &i).unwrap();
            let start = |a: usize| (i64::from(i.agents[a].start.row), i64::from(i.agents[a].start.col));
            (0..2).map(|a| plan.path(a, start(a)).unwrap()).collect()
        };
        assert_eq!(
            write_answer(&i, &moves, AnswerForm::Words).unwrap(),
            "Agent 0: RIGHT WAIT RIGHT\nAgent 1: WAIT"
        );
        assert_eq!(write_answer(&i, &moves, AnswerForm::Letters).unwrap(), "Agent 0: R W R\nAgent 1: W");
        assert_eq!(
            write_answer(&i, &moves, AnswerForm::Coordinates).unwrap(),
            "Agent 0: (0, 0) -> (0, 1) -> (0, 1) -> (0, 2)\nAgent 1: (2, 0) -> (2, 0)"
        );
        let words = want("words");
        assert_eq!(words, [vec![(0, 0), (0, 1), (0, 1), (0, 2)], vec![(2, 0), (2, 0)]]);
        assert_eq!((want("letters"), want("coordinates")), (words.clone(), words));
        assert!("json".parse::<AnswerForm>().unwrap_err().contains("words, letters, coordinates"));
        assert_eq!(
            write_answer(&i, &moves[..1], AnswerForm::Words).unwrap_err(),
            "1 move lists for 2 agents"
        );
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
        // Every agent line is read: a complete plan elsewhere does not excuse a line with a typo.
        expect("Agent 0: R JUMP\n\nAgent 0: RR\nAgent 1: RR", 1, "JUMP", 2, 0);
        // Nor is a line that begins "Agent 0:" skipped as prose, moves or not.
        expect("Agent 0: is the first agent", 1, "is", 1, 0);
        // Prose that does not begin "Agent <n>:" is skipped.
        assert_eq!(
            parse_answer("Agent 0 is the first agent.\nAgents move at once.", &i),
            Err(AnswerError::Parse(
                "no plan line found (expected lines such as 'Agent 0: RIGHT DOWN WAIT')".into()
            ))
        );
    }
}
