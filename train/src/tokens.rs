//! Instances and plans as token sequences, for any number of agents.
//!
//! Every token carries five features, each looked up in its own embedding table and summed
//! (the model has no absolute position embedding, so nothing depends on where a token sits in
//! the sequence, only on what it says):
//!
//! | feature | values |
//! |---|---|
//! | kind | [`kind`]: `FROZEN`, `HOLE`, `START`, `GOAL`, `PLAN`, a move `W U D L R`, `SEP`, `END`, `PAD` |
//! | row, col | the cell the token is about; [`Layout::off`] off the grid, [`Layout::none`] for no cell |
//! | agent | the agent the token is about; [`Layout::done`] after the last agent, [`Layout::no_agent`] for none |
//! | time | the time step a plan token reaches (0 at an agent's start); [`Layout::no_time`] in the prompt |
//!
//! The prompt is the grid row by row (one `FROZEN`/`HOLE` token per cell, at its row and
//! column), then per agent `START` and `GOAL` tokens at their cells, then `PLAN`, which stands
//! for agent 0 at its start. The answer is per agent its moves then `SEP`, then `END`:
//!
//! ```text
//! F F H F ... START₀ GOAL₀ START₁ GOAL₁ PLAN₀ | R D D SEP₁ L W L SEP_done END
//! ```
//!
//! Each move token is placed (row, col, time) at the cell the move reaches: the tokeniser
//! follows the moves written so far, so the model reads where each agent is at every step
//! instead of having to add up its own moves. It still writes only moves, and nothing stops it
//! from writing a move into a hole or off the grid (off the grid, the agent's cell becomes
//! `off` for the rest of its moves). A `SEP` stands for the next agent at its start, or for
//! `done` after the last one. The model predicts, after each plan-side token, the next answer
//! token out of [`NUM_OUT`]: the five moves (action codes 0 wait, 1 up, 2 down, 3 left,
//! 4 right), `SEP` ([`OUT_SEP`]) and `END` ([`OUT_END`]).

use floe_core::{Instance, Move};
use serde::{Deserialize, Serialize};

use crate::error::TrainError;

/// Token kinds (the vocabulary of the input embedding).
pub mod kind {
    /// Padding after a sequence's end.
    pub const PAD: i64 = 0;
    /// A frozen cell of the grid.
    pub const FROZEN: i64 = 1;
    /// A hole.
    pub const HOLE: i64 = 2;
    /// An agent's start.
    pub const START: i64 = 3;
    /// An agent's goal.
    pub const GOAL: i64 = 4;
    /// The beginning of the answer (agent 0 at its start).
    pub const PLAN: i64 = 5;
    /// The first move kind; move code `m` is `MOVE + m`.
    pub const MOVE: i64 = 6;
    /// The end of an agent's moves (and the next agent at its start).
    pub const SEP: i64 = 11;
    /// The end of the answer.
    pub const END: i64 = 12;
    /// Size of the vocabulary.
    pub const COUNT: i64 = 13;
}

/// Answer tokens the model chooses from: moves 0..=4, then `SEP` and `END`.
pub const NUM_OUT: i64 = 7;
/// The output index of `SEP`.
pub const OUT_SEP: i64 = 5;
/// The output index of `END`.
pub const OUT_END: i64 = 6;

/// The sizes of the embedding tables: the largest map side, agent count and time step the
/// model can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layout {
    /// Largest map side (rows and columns).
    pub max_side: u32,
    /// Largest agent count.
    pub max_agents: u32,
    /// Time steps the time table distinguishes; later steps share the last entry.
    pub max_time: u32,
}

impl Layout {
    /// The row/col index of a cell off the grid.
    #[must_use]
    pub fn off(&self) -> i64 {
        i64::from(self.max_side)
    }
    /// The row/col index of "no cell".
    #[must_use]
    pub fn none(&self) -> i64 {
        i64::from(self.max_side) + 1
    }
    /// Rows of the row (and column) table.
    #[must_use]
    pub fn side_table(&self) -> i64 {
        i64::from(self.max_side) + 2
    }
    /// The agent index after the last agent.
    #[must_use]
    pub fn done(&self) -> i64 {
        i64::from(self.max_agents)
    }
    /// The agent index of tokens about no agent.
    #[must_use]
    pub fn no_agent(&self) -> i64 {
        i64::from(self.max_agents) + 1
    }
    /// Rows of the agent table.
    #[must_use]
    pub fn agent_table(&self) -> i64 {
        i64::from(self.max_agents) + 2
    }
    /// The time index of prompt tokens.
    #[must_use]
    pub fn no_time(&self) -> i64 {
        i64::from(self.max_time)
    }
    /// Rows of the time table.
    #[must_use]
    pub fn time_table(&self) -> i64 {
        i64::from(self.max_time) + 1
    }

    /// Checks that the model can read `instance`.
    ///
    /// # Errors
    /// [`TrainError::Input`] naming the limit the instance is over.
    pub fn check(&self, instance: &Instance) -> Result<(), TrainError> {
        let (w, h, k) = (instance.grid.width(), instance.grid.height(), instance.num_agents());
        if w > self.max_side || h > self.max_side {
            return Err(TrainError::Input(format!(
                "a {w}x{h} map is larger than the model's max_side {}",
                self.max_side
            )));
        }
        if k as u32 > self.max_agents {
            return Err(TrainError::Input(format!(
                "{k} agents are more than the model's max_agents {}",
                self.max_agents
            )));
        }
        Ok(())
    }

    /// The most moves an agent may write on an instance: four times the longer side, at most
    /// `max_time − 1`.
    #[must_use]
    pub fn moves_cap(&self, instance: &Instance) -> usize {
        let side = instance.grid.width().max(instance.grid.height()) as usize;
        (4 * side).min(self.max_time as usize - 1).max(1)
    }

    /// The most answer tokens on an instance: every agent at its move cap, their separators, and
    /// `END`. A sampled answer that has not ended by then is unfinished (a `parse_error`).
    #[must_use]
    pub fn answer_cap(&self, instance: &Instance) -> usize {
        instance.num_agents() * (self.moves_cap(instance) + 1) + 1
    }
}

/// One token's features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: i64,
    pub row: i64,
    pub col: i64,
    pub agent: i64,
    pub time: i64,
}

/// The prompt of an instance: cells, starts and goals, then `PLAN`.
///
/// # Errors
/// An instance over the layout's limits.
pub fn prompt(layout: &Layout, instance: &Instance) -> Result<Vec<Token>, TrainError> {
    layout.check(instance)?;
    let g = &instance.grid;
    let mut out = Vec::with_capacity(g.cells() as usize + 2 * instance.num_agents() + 1);
    let none_t = layout.no_time();
    for c in 0..g.cells() {
        let p = g.pos(c);
        out.push(Token {
            kind: if g.is_hole(c) { kind::HOLE } else { kind::FROZEN },
            row: i64::from(p.row),
            col: i64::from(p.col),
            agent: layout.no_agent(),
            time: none_t,
        });
    }
    for (a, ag) in instance.agents.iter().enumerate() {
        for (k, p) in [(kind::START, ag.start), (kind::GOAL, ag.goal)] {
            out.push(Token {
                kind: k,
                row: i64::from(p.row),
                col: i64::from(p.col),
                agent: a as i64,
                time: none_t,
            });
        }
    }
    let s = instance.agents[0].start;
    out.push(Token { kind: kind::PLAN, row: i64::from(s.row), col: i64::from(s.col), agent: 0, time: 0 });
    Ok(out)
}

/// Follows an answer as it is written, giving each answer token's input features.
#[derive(Debug, Clone)]
pub struct AnswerState<'a> {
    layout: Layout,
    instance: &'a Instance,
    /// The agent being written (`k` or more once every agent is done).
    agent: usize,
    /// Its cell, `None` once it left the grid.
    pos: Option<(i64, i64)>,
    time: i64,
    /// The moves written, per segment.
    segments: Vec<Vec<Move>>,
    /// Whether `END` was written.
    ended: bool,
    tokens: usize,
}

impl<'a> AnswerState<'a> {
    /// The state after the prompt.
    #[must_use]
    pub fn new(layout: Layout, instance: &'a Instance) -> Self {
        let s = instance.agents[0].start;
        AnswerState {
            layout,
            instance,
            agent: 0,
            pos: Some((i64::from(s.row), i64::from(s.col))),
            time: 0,
            segments: vec![Vec::new()],
            ended: false,
            tokens: 0,
        }
    }

    /// Whether `END` was written.
    #[must_use]
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Answer tokens written so far.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tokens
    }

    /// Whether nothing was written yet.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tokens == 0
    }

    fn agent_index(&self) -> i64 {
        if self.agent < self.instance.num_agents() {
            self.agent as i64
        } else {
            self.layout.done()
        }
    }

    /// Writes answer token `out` (0..[`NUM_OUT`]) and returns its input features (for `END`,
    /// which is never read back, the features of a padding token).
    ///
    /// # Panics
    /// If `out` is outside `0..NUM_OUT`.
    pub fn push(&mut self, out: i64) -> Token {
        assert!((0..NUM_OUT).contains(&out), "answer token {out} out of range");
        self.tokens += 1;
        let l = &self.layout;
        match out {
            OUT_END => {
                self.ended = true;
                Token {
                    kind: kind::PAD,
                    row: l.none(),
                    col: l.none(),
                    agent: l.no_agent(),
                    time: l.no_time(),
                }
            }
            OUT_SEP => {
                self.agent += 1;
                self.segments.push(Vec::new());
                self.time = 0;
                let k = self.instance.num_agents();
                self.pos = (self.agent < k).then(|| {
                    let s = self.instance.agents[self.agent].start;
                    (i64::from(s.row), i64::from(s.col))
                });
                let (row, col) = self.pos.unwrap_or((l.none(), l.none()));
                Token { kind: kind::SEP, row, col, agent: self.agent_index(), time: 0 }
            }
            m => {
                let mv = Move::from_code(m as u8).expect("move code");
                self.segments.last_mut().expect("a segment").push(mv);
                self.time += 1;
                let past = self.agent >= self.instance.num_agents();
                let grid = &self.instance.grid;
                self.pos = self.pos.and_then(|(r, c)| {
                    let (dr, dc) = mv.delta();
                    let (r, c) = (r + dr, c + dc);
                    grid.in_bounds(r, c).then_some((r, c))
                });
                let (row, col) =
                    if past { (l.none(), l.none()) } else { self.pos.unwrap_or((l.off(), l.off())) };
                Token {
                    kind: kind::MOVE + m,
                    row,
                    col,
                    agent: self.agent_index(),
                    time: self.time.min(i64::from(l.max_time) - 1),
                }
            }
        }
    }

    /// The features of a padding token (fed for a sequence that has ended while others of its
    /// batch go on); the state does not change.
    #[must_use]
    pub fn push_pad(&self) -> Token {
        let l = &self.layout;
        Token { kind: kind::PAD, row: l.none(), col: l.none(), agent: l.no_agent(), time: l.no_time() }
    }

    /// The plan written: one move list per `SEP`-terminated segment, plus a last segment that
    /// has moves but no `SEP`.
    #[must_use]
    pub fn plan(&self) -> Vec<Vec<Move>> {
        let mut p = self.segments.clone();
        if p.last().is_some_and(Vec::is_empty) {
            p.pop();
        }
        p
    }
}

/// The answer tokens (output indices) of a plan: per agent its moves and `SEP`, then `END`.
#[must_use]
pub fn answer(plan: &[Vec<Move>]) -> Vec<i64> {
    let mut out = Vec::new();
    for m in plan {
        out.extend(m.iter().map(|&mv| mv as i64));
        out.push(OUT_SEP);
    }
    out.push(OUT_END);
    out
}

/// A whole sequence for teacher forcing: the prompt and the answer's input features, and the
/// target of every position (`-1` where there is none: the prompt before `PLAN`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sequence {
    pub tokens: Vec<Token>,
    pub targets: Vec<i64>,
    /// Index of the `PLAN` token (the first position with a target).
    pub plan_at: usize,
}

/// The teacher-forcing sequence of an instance and an answer (output indices).
///
/// # Errors
/// An instance over the layout's limits.
pub fn sequence(layout: &Layout, instance: &Instance, answer: &[i64]) -> Result<Sequence, TrainError> {
    let mut tokens = prompt(layout, instance)?;
    let plan_at = tokens.len() - 1;
    let mut targets = vec![-1; plan_at];
    let mut state = AnswerState::new(*layout, instance);
    for (i, &o) in answer.iter().enumerate() {
        targets.push(o);
        if i + 1 < answer.len() {
            tokens.push(state.push(o));
        }
    }
    Ok(Sequence { tokens, targets, plan_at })
}

/// The moves of an instance's stored optimal plan.
///
/// # Errors
/// An instance without one, or with a malformed one.
pub fn optimal_moves(instance: &Instance) -> Result<Vec<Vec<Move>>, TrainError> {
    let opt = instance
        .optimal
        .as_ref()
        .ok_or_else(|| TrainError::Input("an instance has no optimal plan to learn from".into()))?;
    opt.moves
        .iter()
        .map(|s| {
            floe_core::moves::parse_moves(s)
                .map_err(|(i, ch)| TrainError::Input(format!("optimal plan: bad move {ch:?} at {i}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::{Agent, Grid, Pos};

    fn layout() -> Layout {
        Layout { max_side: 6, max_agents: 4, max_time: 16 }
    }

    fn inst() -> Instance {
        // 2x3: F F H / F F F; agent 0 (0,0)->(1,2), agent 1 (1,0)->(0,1).
        let grid = Grid::from_rows(&["FFH", "FFF"]).unwrap();
        let agents = vec![
            Agent { start: Pos::new(0, 0), goal: Pos::new(1, 2) },
            Agent { start: Pos::new(1, 0), goal: Pos::new(0, 1) },
        ];
        Instance::new(grid, agents).unwrap()
    }

    #[test]
    fn prompt_and_answer_features() {
        let (l, i) = (layout(), inst());
        let p = prompt(&l, &i).unwrap();
        assert_eq!(p.len(), 6 + 4 + 1);
        assert_eq!(p[2], Token { kind: kind::HOLE, row: 0, col: 2, agent: 5, time: 16 });
        assert_eq!(p[8], Token { kind: kind::START, row: 1, col: 0, agent: 1, time: 16 });
        assert_eq!(p[10], Token { kind: kind::PLAN, row: 0, col: 0, agent: 0, time: 0 });

        // Agent 0: D R R; agent 1: R U; then END.
        let ans = answer(&[vec![Move::Down, Move::Right, Move::Right], vec![Move::Right, Move::Up]]);
        assert_eq!(ans, vec![2, 4, 4, OUT_SEP, 4, 1, OUT_SEP, OUT_END]);
        let s = sequence(&l, &i, &ans).unwrap();
        assert_eq!(s.plan_at, 10);
        assert_eq!(s.tokens.len(), s.targets.len());
        assert_eq!(&s.targets[10..], &ans[..]);
        let t = &s.tokens[11..];
        assert_eq!(t[0], Token { kind: kind::MOVE + 2, row: 1, col: 0, agent: 0, time: 1 });
        assert_eq!(t[2], Token { kind: kind::MOVE + 4, row: 1, col: 2, agent: 0, time: 3 });
        assert_eq!(t[3], Token { kind: kind::SEP, row: 1, col: 0, agent: 1, time: 0 });
        assert_eq!(t[5], Token { kind: kind::MOVE + 1, row: 0, col: 1, agent: 1, time: 2 });
        assert_eq!(t[6], Token { kind: kind::SEP, row: 7, col: 7, agent: 4, time: 0 });
        assert_eq!(t.len(), 7);
    }

    #[test]
    fn leaving_the_grid_and_extra_segments() {
        let (l, i) = (layout(), inst());
        let mut s = AnswerState::new(l, &i);
        assert_eq!(s.push(1).row, l.off()); // up from row 0: off the grid
        assert_eq!(s.push(2).row, l.off()); // and it stays off
        s.push(OUT_SEP);
        s.push(OUT_SEP);
        let extra = s.push(0); // a move after every agent is done
        assert_eq!((extra.agent, extra.row), (l.done(), l.none()));
        s.push(OUT_END);
        assert!(s.ended());
        assert_eq!(s.plan(), vec![vec![Move::Up, Move::Down], vec![], vec![Move::Wait]]);
        assert_eq!(s.len(), 6);
        let big = Layout { max_side: 2, ..l };
        assert!(prompt(&big, &i).unwrap_err().to_string().contains("max_side"));
    }
}
