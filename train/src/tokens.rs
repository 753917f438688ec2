//! Instances and plans as token sequences, for any number of agents.
//!
//! No feature names an agent by its number. Every token carries the features below, each
//! looked up in its own embedding table and summed; which agent a token is about enters the
//! model only through the attention bias of [`crate::model`], which tells "the same agent" from
//! "another agent" (and compares time steps), so what a model learns on 2-agent boards applies
//! to every other agent of a 5-agent board.
//!
//! | feature | values |
//! |---|---|
//! | kind | [`kind`]: `FROZEN`, `HOLE`, `START`, `GOAL`, `PLAN`, a move `W U D L R`, `SEP`, `END`, `PAD` |
//! | row, col | the cell the token is about; [`Layout::off`] off the grid, [`Layout::none`] for no cell |
//! | role | [`role`]: about an agent (and whether an agent written earlier still passes its goal), about none, or after the last agent |
//! | time | the time step a plan token reaches (0 at an agent's start); [`Layout::no_time`] in the prompt |
//! | dist | the cell's distance to the token's agent's goal (cost-to-go, holes as walls), capped; [`Layout::no_dist`] for none |
//! | moves | per move (wait, up, down, left, right) one [`status`]: blocked, closer to the goal, free, or into an agent written earlier |
//!
//! Besides, each token holds its agent's *writing rank* (`-1` for none), read only by the
//! attention bias, which compares ranks for equality.
//!
//! **The order of writing.** Agents are written from the longest cost-to-go (start to goal,
//! holes as walls) to the shortest; equal distances by start cell, row-major. The order depends
//! only on the board, never on the agents' numbering, so relabelling the agents of an instance
//! gives the same tokens and the same plan (mapped back to the new numbers). [`writing_order`]
//! gives it; [`AnswerState::plan`] returns the plan in the instance's agent order.
//!
//! The prompt is the grid row by row (one `FROZEN`/`HOLE` token per cell, at its row and
//! column), then per agent in writing order `START` and `GOAL` tokens at their cells, then
//! `PLAN`, which stands for the first agent at its start. The answer is per agent its moves
//! then `SEP`, then `END`:
//!
//! ```text
//! F F H F ... START GOAL START GOAL PLAN | R D D SEP L W L SEP END
//! ```
//!
//! Each move token is placed (row, col, time) at the cell the move reaches: the tokeniser
//! follows the moves written so far, so the model reads where each agent is at every step, how
//! far it is from its goal, and which next moves would run into an agent written before it (a
//! vertex conflict at the next step, or a swap). It still writes only moves, and nothing stops
//! it from writing a move into a hole, off the grid or into another agent (off the grid, the
//! agent's cell becomes `off` for the rest of its moves). A `SEP` stands for the next agent at
//! its start, or for `done` after the last one. The model predicts, after each plan-side token,
//! the next answer token out of [`NUM_OUT`]: the five moves (action codes 0 wait, 1 up, 2 down,
//! 3 left, 4 right), `SEP` ([`OUT_SEP`]) and `END` ([`OUT_END`]).

use floe_core::grid::UNREACHABLE;
use floe_core::rules;
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
    /// The beginning of the answer (the first agent at its start).
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

/// What a token says of agents (the role table), never which agent.
pub mod role {
    /// About an agent.
    pub const AGENT: i64 = 0;
    /// About the agent being written, whose goal an agent written earlier still passes through
    /// at a later time step (arriving now would be run into).
    pub const GOAL_PASSED_LATER: i64 = 1;
    /// About no agent (cells, padding).
    pub const NONE: i64 = 2;
    /// After the last agent's separator.
    pub const DONE: i64 = 3;
    /// Rows of the role table.
    pub const COUNT: i64 = 4;
}

/// The status of one move from a token's cell, for its agent (the moves table has
/// `5 × COUNT` rows: move `m` with status `s` is row `m · COUNT + s`).
pub mod status {
    /// Off the grid or into a hole.
    pub const BLOCKED: i64 = 0;
    /// Onto a frozen cell nearer the goal.
    pub const CLOSER: i64 = 1;
    /// Onto a frozen cell no nearer the goal (waiting included).
    pub const FREE: i64 = 2;
    /// Into a cell an agent written earlier occupies at the next time step, or a swap with one.
    pub const CONFLICT: i64 = 3;
    /// Not applicable (tokens about no agent's position).
    pub const NA: i64 = 4;
    /// Statuses per move.
    pub const COUNT: i64 = 5;
}

/// Answer tokens the model chooses from: moves 0..=4, then `SEP` and `END`.
pub const NUM_OUT: i64 = 7;
/// The output index of `SEP`.
pub const OUT_SEP: i64 = 5;
/// The output index of `END`.
pub const OUT_END: i64 = 6;

/// What the tokens tell the model besides the board and the moves written so far.
///
/// - `planner` (the default): every feature of the table above.
/// - `map`: only what the paper's language model reads: the grid, the starts and goals, and
///   the moves written so far. Every token's `dist` is "no distance", every move's status "not
///   applicable", and the role never says that an earlier agent passes the goal later: no
///   cost-to-go, no per-move status, no conflict look-ahead. Move tokens still stand at the cell
///   their move reaches (row, col, time): a language model reads its own moves and can count
///   where they lead, and without the position this small network would have to learn dead
///   reckoning before it could learn to plan, which is not the skill the environment's design
///   acts on. Planning a route around the holes, and around the agents written earlier, is left
///   to the model, and that is what grows hard with the map's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Inputs {
    #[default]
    Planner,
    Map,
}

impl Inputs {
    /// Whether these are the default inputs (left out of a written layout, so that a planner's
    /// model files read as before).
    #[must_use]
    pub fn is_planner(&self) -> bool {
        *self == Inputs::Planner
    }
}

/// The sizes of the embedding tables: the largest map side and time step the model can read,
/// and which features the tokens carry. No table depends on the number of agents: any number
/// is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layout {
    /// Largest map side (rows and columns).
    pub max_side: u32,
    /// Time steps the time table distinguishes; later steps share the last entry. Also the cap
    /// of the distance table.
    pub max_time: u32,
    /// The features the tokens carry ([`Inputs`]; `planner` unless given).
    #[serde(default, skip_serializing_if = "Inputs::is_planner")]
    pub inputs: Inputs,
}

impl Layout {
    /// A layout of the planner's inputs.
    #[must_use]
    pub fn new(max_side: u32, max_time: u32) -> Self {
        Layout { max_side, max_time, inputs: Inputs::Planner }
    }

    /// `token` as the model reads it under the layout's [`Inputs`]: under `map`, without the
    /// cost-to-go, the moves' statuses and the goal-passed role.
    #[must_use]
    pub fn reads(&self, mut token: Token) -> Token {
        if self.inputs == Inputs::Map {
            token.dist = self.no_dist();
            token.moves = [status::NA; 5];
            if token.role == role::GOAL_PASSED_LATER {
                token.role = role::AGENT;
            }
        }
        token
    }

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
    /// The distance index of "no distance" (no agent, off the grid, or the goal unreachable).
    #[must_use]
    pub fn no_dist(&self) -> i64 {
        i64::from(self.max_time)
    }
    /// Rows of the distance table.
    #[must_use]
    pub fn dist_table(&self) -> i64 {
        i64::from(self.max_time) + 1
    }
    fn dist_index(&self, d: u32) -> i64 {
        if d == UNREACHABLE {
            self.no_dist()
        } else {
            i64::from(d.min(self.max_time - 1))
        }
    }

    /// Checks that the model can read `instance`.
    ///
    /// # Errors
    /// [`TrainError::Input`] naming the limit the instance is over.
    pub fn check(&self, instance: &Instance) -> Result<(), TrainError> {
        let (w, h) = (instance.grid.width(), instance.grid.height());
        if w > self.max_side || h > self.max_side {
            return Err(TrainError::Input(format!(
                "a {w}x{h} map is larger than the model's max_side {}",
                self.max_side
            )));
        }
        if instance.num_agents() == 0 {
            return Err(TrainError::Input("an instance without agents".into()));
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Token {
    pub kind: i64,
    pub row: i64,
    pub col: i64,
    /// A [`role`].
    pub role: i64,
    /// The writing rank of the agent the token is about, `-1` for none: read only by the
    /// attention bias, for equality.
    pub rank: i64,
    pub time: i64,
    /// Index into the distance table.
    pub dist: i64,
    /// Per move (action-code order), a [`status`].
    pub moves: [i64; 5],
}

impl Token {
    /// A token about no agent and no time: a cell of the prompt, or padding.
    #[must_use]
    pub fn plain(layout: &Layout, kind: i64, row: i64, col: i64) -> Self {
        Token {
            kind,
            row,
            col,
            role: role::NONE,
            rank: -1,
            time: layout.no_time(),
            dist: layout.no_dist(),
            moves: [status::NA; 5],
        }
    }

    /// A padding token.
    #[must_use]
    pub fn pad(layout: &Layout) -> Self {
        Token::plain(layout, kind::PAD, layout.none(), layout.none())
    }
}

/// What the tokeniser knows of an instance before anything is written: the writing order and
/// each agent's cost-to-go.
#[derive(Debug, Clone)]
struct Board {
    /// Instance agent indices, in writing order.
    order: Vec<usize>,
    /// Per instance agent, the distance of every cell to its goal.
    dist: Vec<Vec<u32>>,
}

impl Board {
    fn new(instance: &Instance) -> Self {
        let g = &instance.grid;
        let dist: Vec<Vec<u32>> = instance.agents.iter().map(|a| g.distances_from(g.cell(a.goal))).collect();
        let mut order: Vec<usize> = (0..instance.num_agents()).collect();
        order.sort_by_key(|&a| {
            let d = dist[a][g.cell(instance.agents[a].start) as usize];
            // Unreachable (u32::MAX) sorts first, like the longest distance.
            (std::cmp::Reverse(d), g.cell(instance.agents[a].start))
        });
        Board { order, dist }
    }
}

/// The writing order of an instance: its agent indices, longest cost-to-go first (ties by start
/// cell, row-major).
#[must_use]
pub fn writing_order(instance: &Instance) -> Vec<usize> {
    Board::new(instance).order
}

/// The static statuses of the moves from `cell` for an agent with distances `dist` (no other
/// agent considered): a move the rules fault ([`rules::agent_fault`]: off the grid, into a hole)
/// is blocked.
fn static_moves(instance: &Instance, dist: &[u32], cell: u32) -> [i64; 5] {
    let g = &instance.grid;
    let here = dist[cell as usize];
    Move::ALL.map(|m| {
        let to = g.step(cell, m);
        match (to, rules::agent_fault(to.is_none(), false, to.is_some_and(|n| g.is_hole(n)))) {
            (Some(n), None) if dist[n as usize] < here => status::CLOSER,
            (Some(_), None) => status::FREE,
            _ => status::BLOCKED,
        }
    })
}

/// The prompt of an instance: cells, starts and goals in writing order, then `PLAN`.
///
/// # Errors
/// An instance over the layout's limits.
pub fn prompt(layout: &Layout, instance: &Instance) -> Result<Vec<Token>, TrainError> {
    layout.check(instance)?;
    Ok(prompt_of(layout, instance, &Board::new(instance)))
}

fn prompt_of(layout: &Layout, instance: &Instance, board: &Board) -> Vec<Token> {
    let g = &instance.grid;
    let mut out = Vec::with_capacity(g.cells() as usize + 2 * instance.num_agents() + 1);
    for c in 0..g.cells() {
        let p = g.pos(c);
        let k = if g.is_hole(c) { kind::HOLE } else { kind::FROZEN };
        out.push(Token::plain(layout, k, i64::from(p.row), i64::from(p.col)));
    }
    for (rank, &a) in board.order.iter().enumerate() {
        let ag = &instance.agents[a];
        let dist = &board.dist[a];
        for (k, p) in [(kind::START, ag.start), (kind::GOAL, ag.goal)] {
            let c = g.cell(p);
            out.push(layout.reads(Token {
                kind: k,
                row: i64::from(p.row),
                col: i64::from(p.col),
                role: role::AGENT,
                rank: rank as i64,
                time: layout.no_time(),
                dist: layout.dist_index(dist[c as usize]),
                moves: if k == kind::START { static_moves(instance, dist, c) } else { [status::NA; 5] },
            }));
        }
    }
    let mut st = AnswerState::with_board(*layout, instance, board.clone());
    out.push(st.position_token(kind::PLAN));
    out
}

/// Follows an answer as it is written, giving each answer token's input features.
#[derive(Debug, Clone)]
pub struct AnswerState<'a> {
    layout: Layout,
    instance: &'a Instance,
    board: Board,
    /// The writing rank of the agent being written (`k` or more once every agent is done).
    rank: usize,
    /// Its cell, `None` once it left the grid.
    pos: Option<u32>,
    time: i64,
    /// The cells of the agents written so far, per rank, per time step from 0 (`None` off the
    /// grid); the agent being written last.
    paths: Vec<Vec<Option<u32>>>,
    /// The last time step at which an agent written earlier is on the current agent's goal
    /// (`i64::MAX` if one ends there, `-1` if none passes).
    goal_passed_until: i64,
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
        Self::with_board(layout, instance, Board::new(instance))
    }

    fn with_board(layout: Layout, instance: &'a Instance, board: Board) -> Self {
        let mut s = AnswerState {
            layout,
            instance,
            board,
            rank: 0,
            pos: None,
            time: 0,
            paths: Vec::new(),
            goal_passed_until: -1,
            segments: vec![Vec::new()],
            ended: false,
            tokens: 0,
        };
        s.start_agent();
        s
    }

    /// Puts the agent of `self.rank` (if any) at its start, time 0.
    fn start_agent(&mut self) {
        self.time = 0;
        let Some(&a) = self.board.order.get(self.rank) else {
            self.pos = None;
            return;
        };
        let g = &self.instance.grid;
        let start = g.cell(self.instance.agents[a].start);
        let goal = g.cell(self.instance.agents[a].goal);
        self.goal_passed_until = self
            .paths
            .iter()
            .filter_map(|p| {
                if p.last().copied().flatten() == Some(goal) {
                    Some(i64::MAX)
                } else {
                    p.iter().rposition(|&c| c == Some(goal)).map(|t| t as i64)
                }
            })
            .max()
            .unwrap_or(-1);
        self.pos = Some(start);
        self.paths.push(vec![Some(start)]);
    }

    /// The features of a token at the current agent's position and time.
    fn position_token(&mut self, kind: i64) -> Token {
        let l = self.layout;
        let Some(&a) = self.board.order.get(self.rank) else {
            let mut t = Token::plain(&l, kind, l.none(), l.none());
            t.role = role::DONE;
            t.time = 0;
            return t;
        };
        let time = self.time.min(i64::from(l.max_time) - 1);
        let Some(cell) = self.pos else {
            let mut t = Token::plain(&l, kind, l.off(), l.off());
            (t.role, t.rank, t.time) = (role::AGENT, self.rank as i64, time);
            return t;
        };
        let g = &self.instance.grid;
        let dist = &self.board.dist[a];
        let mut moves = static_moves(self.instance, dist, cell);
        // The steps of the agents written earlier from this time to the next, as the rules see
        // them ([`rules::at`]: an ended path stays on its last cell); one that left the grid
        // is no longer on it, and conflicts with nobody.
        let t = u32::try_from(self.time).expect("time steps fit in u32");
        let earlier = &self.paths[..self.rank];
        for (m, s) in Move::ALL.iter().zip(&mut moves) {
            if *s == status::BLOCKED {
                continue;
            }
            let to = g.step(cell, *m).expect("not blocked");
            let conflict = earlier.iter().any(|p| {
                rules::at(p, t)
                    .zip(rules::at(p, t + 1))
                    .is_some_and(|step| rules::steps_conflict((cell, to), step))
            });
            if conflict {
                *s = status::CONFLICT;
            }
        }
        let p = g.pos(cell);
        l.reads(Token {
            kind,
            row: i64::from(p.row),
            col: i64::from(p.col),
            role: if self.goal_passed_until > self.time { role::GOAL_PASSED_LATER } else { role::AGENT },
            rank: self.rank as i64,
            time,
            dist: l.dist_index(dist[cell as usize]),
            moves,
        })
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

    /// Writes answer token `out` (0..[`NUM_OUT`]) and returns its input features (for `END`,
    /// which is never read back, the features of a padding token).
    ///
    /// # Panics
    /// If `out` is outside `0..NUM_OUT`.
    pub fn push(&mut self, out: i64) -> Token {
        assert!((0..NUM_OUT).contains(&out), "answer token {out} out of range");
        self.tokens += 1;
        match out {
            OUT_END => {
                self.ended = true;
                Token::pad(&self.layout)
            }
            OUT_SEP => {
                self.rank += 1;
                self.segments.push(Vec::new());
                self.start_agent();
                self.position_token(kind::SEP)
            }
            m => {
                let mv = Move::from_code(m as u8).expect("move code");
                self.segments.last_mut().expect("a segment").push(mv);
                self.time += 1;
                if self.rank < self.board.order.len() {
                    let g = &self.instance.grid;
                    self.pos = self.pos.and_then(|c| g.step(c, mv));
                    self.paths.last_mut().expect("a path").push(self.pos);
                }
                self.position_token(kind::MOVE + m)
            }
        }
    }

    /// The features of a padding token (fed for a sequence that has ended while others of its
    /// batch go on); the state does not change.
    #[must_use]
    pub fn push_pad(&self) -> Token {
        Token::pad(&self.layout)
    }

    /// The plan written, in the instance's agent order when it has one segment per agent (a
    /// segment is the moves up to a `SEP`, plus a last one that has moves but no `SEP`);
    /// otherwise the segments as written, which the verifier refuses for their count.
    #[must_use]
    pub fn plan(&self) -> Vec<Vec<Move>> {
        let mut p = self.segments.clone();
        if p.last().is_some_and(Vec::is_empty) {
            p.pop();
        }
        let order = &self.board.order;
        if p.len() != order.len() {
            return p;
        }
        let mut out = vec![Vec::new(); order.len()];
        for (seg, &a) in p.into_iter().zip(order) {
            out[a] = seg;
        }
        out
    }
}

/// The answer tokens (output indices) of a plan given in the instance's agent order: per agent in
/// writing order its moves and `SEP`, then `END`.
///
/// # Panics
/// If the plan does not have one move list per agent.
#[must_use]
pub fn answer(instance: &Instance, plan: &[Vec<Move>]) -> Vec<i64> {
    assert_eq!(plan.len(), instance.num_agents(), "one move list per agent");
    let mut out = Vec::new();
    for a in writing_order(instance) {
        out.extend(plan[a].iter().map(|&mv| mv as i64));
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

/// The teacher-forcing sequence of an instance and an answer (output indices, in writing order).
///
/// # Errors
/// An instance over the layout's limits.
pub fn sequence(layout: &Layout, instance: &Instance, answer: &[i64]) -> Result<Sequence, TrainError> {
    layout.check(instance)?;
    let board = Board::new(instance);
    let mut tokens = prompt_of(layout, instance, &board);
    let plan_at = tokens.len() - 1;
    let mut targets = vec![-1; plan_at];
    let mut state = AnswerState::with_board(*layout, instance, board);
    for (i, &o) in answer.iter().enumerate() {
        targets.push(o);
        if i + 1 < answer.len() {
            tokens.push(state.push(o));
        }
    }
    Ok(Sequence { tokens, targets, plan_at })
}

/// The moves of an instance's stored optimal plan, in the instance's agent order.
///
/// # Errors
/// An instance without one, or with a malformed one.
pub fn optimal_moves(instance: &Instance) -> Result<Vec<Vec<Move>>, TrainError> {
    let opt = instance
        .optimal
        .as_ref()
        .ok_or_else(|| TrainError::Input("an instance has no optimal plan to learn from".into()))?;
    let moves: Vec<Vec<Move>> = opt
        .moves
        .iter()
        .map(|s| {
            floe_core::moves::parse_moves(s)
                .map_err(|(i, ch)| TrainError::Input(format!("optimal plan: bad move {ch:?} at {i}")))
        })
        .collect::<Result<_, _>>()?;
    if moves.len() != instance.num_agents() {
        return Err(TrainError::Input(format!(
            "optimal plan: {} move lists for {} agents",
            moves.len(),
            instance.num_agents()
        )));
    }
    Ok(moves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::{Agent, Grid, Pos};

    fn layout() -> Layout {
        Layout::new(6, 16)
    }

    /// 2x3: F F H / F F F; agent 0 (0,0)->(1,2) (3 moves away), agent 1 (1,0)->(0,1) (2 away).
    fn agents() -> [Agent; 2] {
        [
            Agent { start: Pos::new(0, 0), goal: Pos::new(1, 2) },
            Agent { start: Pos::new(1, 0), goal: Pos::new(0, 1) },
        ]
    }

    fn inst_of(a: Vec<Agent>) -> Instance {
        Instance::new(Grid::from_rows(&["FFH", "FFF"]).unwrap(), a).unwrap()
    }

    fn inst() -> Instance {
        inst_of(agents().to_vec())
    }

    use status::{BLOCKED as B, CLOSER as C, CONFLICT as X, FREE as F, NA};

    #[test]
    fn prompt_and_answer_features() {
        let (l, i) = (layout(), inst());
        assert_eq!(writing_order(&i), vec![0, 1]);
        let p = prompt(&l, &i).unwrap();
        assert_eq!(p.len(), 6 + 4 + 1);
        assert_eq!(p[2], Token::plain(&l, kind::HOLE, 0, 2));
        assert_eq!((p[2].role, p[2].rank, p[2].time, p[2].dist), (role::NONE, -1, 16, 16));
        // Agent 1's start: distance 2 to (0,1); up and right are closer, down and left leave.
        assert_eq!(
            p[8],
            Token {
                kind: kind::START,
                row: 1,
                col: 0,
                role: role::AGENT,
                rank: 1,
                time: 16,
                dist: 2,
                moves: [F, C, B, B, C]
            }
        );
        assert_eq!(p[9].moves, [NA; 5]);
        assert_eq!(
            (p[10].kind, p[10].row, p[10].col, p[10].rank, p[10].time, p[10].dist),
            (kind::PLAN, 0, 0, 0, 0, 3)
        );

        // Agent 0: D R R; agent 1: R U; then END.
        let plan = [vec![Move::Down, Move::Right, Move::Right], vec![Move::Right, Move::Up]];
        let ans = answer(&i, &plan);
        assert_eq!(ans, vec![2, 4, 4, OUT_SEP, 4, 1, OUT_SEP, OUT_END]);
        let s = sequence(&l, &i, &ans).unwrap();
        assert_eq!(s.plan_at, 10);
        assert_eq!(s.tokens.len(), s.targets.len());
        assert_eq!(&s.targets[10..], &ans[..]);
        let t = &s.tokens[11..];
        assert_eq!(
            (t[0].kind, t[0].row, t[0].col, t[0].rank, t[0].time, t[0].dist),
            (kind::MOVE + 2, 1, 0, 0, 1, 2)
        );
        assert_eq!((t[2].row, t[2].col, t[2].time, t[2].dist), (1, 2, 3, 0));
        // Agent 1 at its start, time 0: agent 0 enters (1,0) at time 1 (waiting runs into it)
        // and leaves (0,0) for it (moving up would swap).
        assert_eq!((t[3].kind, t[3].row, t[3].col, t[3].rank, t[3].time), (kind::SEP, 1, 0, 1, 0));
        assert_eq!(t[3].moves, [X, X, B, B, C]);
        // At (1,1), time 1: agent 0 comes to (1,1) at time 2 and leaves (1,0) for it.
        assert_eq!((t[4].row, t[4].col, t[4].time, t[4].dist), (1, 1, 1, 1));
        assert_eq!(t[4].moves, [X, C, B, X, F]);
        assert_eq!((t[5].row, t[5].col, t[5].dist, t[5].role), (0, 1, 0, role::AGENT));
        assert_eq!((t[6].kind, t[6].role, t[6].rank, t[6].row), (kind::SEP, role::DONE, -1, 7));
        assert_eq!(t.len(), 7);
    }

    #[test]
    fn an_earlier_agent_passing_the_goal_later_is_flagged() {
        let (l, i) = (layout(), inst());
        // Agent 0: R D R passes (0,1), agent 1's goal, at time 1.
        let s = sequence(&l, &i, &[4, 2, 4, OUT_SEP, 4, OUT_SEP, OUT_END]).unwrap();
        let t = &s.tokens[11..];
        assert_eq!(t[3].role, role::GOAL_PASSED_LATER);
        assert_eq!(t[4].role, role::AGENT);
    }

    #[test]
    fn relabelling_the_agents_gives_the_same_tokens_and_the_same_plan() {
        let l = layout();
        let (a, b) = (inst(), inst_of(agents().into_iter().rev().collect()));
        assert_eq!(writing_order(&b), vec![1, 0]);
        let ans = [2, 4, 4, OUT_SEP, 4, 1, OUT_SEP, OUT_END];
        assert_eq!(sequence(&l, &a, &ans).unwrap(), sequence(&l, &b, &ans).unwrap());
        let plan_of = |i: &Instance| {
            let mut s = AnswerState::new(l, i);
            for &o in &ans {
                s.push(o);
            }
            s.plan()
        };
        let (pa, mut pb) = (plan_of(&a), plan_of(&b));
        pb.reverse();
        assert_eq!(pa, pb);
        assert_eq!(pa[0], vec![Move::Down, Move::Right, Move::Right]);
        assert_eq!(
            answer(&b, &[vec![Move::Right, Move::Up], vec![Move::Down, Move::Right, Move::Right]]),
            ans
        );
    }

    #[test]
    fn leaving_the_grid_and_extra_segments() {
        let (l, i) = (layout(), inst());
        let mut s = AnswerState::new(l, &i);
        let up = s.push(1); // up from row 0: off the grid
        assert_eq!((up.row, up.dist, up.moves), (l.off(), l.no_dist(), [NA; 5]));
        assert_eq!(s.push(2).row, l.off()); // and it stays off
        s.push(OUT_SEP);
        s.push(OUT_SEP);
        let extra = s.push(0); // a move after every agent is done
        assert_eq!((extra.role, extra.row), (role::DONE, l.none()));
        s.push(OUT_END);
        assert!(s.ended());
        assert_eq!(s.plan(), vec![vec![Move::Up, Move::Down], vec![], vec![Move::Wait]]);
        assert_eq!(s.len(), 6);
        let small = Layout { max_side: 2, ..l };
        assert!(prompt(&small, &i).unwrap_err().to_string().contains("max_side"));
    }

    /// The statuses of the moves from `cell` for the agent being written, as the tokeniser
    /// computed them with its own bounds, hole, vertex and swap checks before it called
    /// floe-core's rules: the judge the tokens must still agree with (the training figures
    /// depend on every feature).
    fn statuses_by_hand(
        g: &Grid,
        dist: &[u32],
        cell: u32,
        earlier: &[Vec<Option<u32>>],
        time: i64,
    ) -> [i64; 5] {
        let at = |p: &Vec<Option<u32>>, t: i64| p[(t.max(0) as usize).min(p.len() - 1)];
        Move::ALL.map(|m| match g.step(cell, m) {
            None => B,
            Some(n) if g.is_hole(n) => B,
            Some(to) => {
                let conflict = earlier.iter().any(|p| {
                    let next = at(p, time + 1);
                    next == Some(to) || (next == Some(cell) && at(p, time) == Some(to) && to != cell)
                });
                if conflict {
                    X
                } else if dist[to as usize] < dist[cell as usize] {
                    C
                } else {
                    F
                }
            }
        })
    }

    /// A random instance: a `w` × `h` grid with about a fifth holes, and up to five agents with
    /// distinct starts and goals on frozen cells.
    fn random_instance(rng: &mut floe_core::rng::Rng) -> Option<Instance> {
        let (w, h) = (2 + rng.below(5), 2 + rng.below(5));
        let mut grid = Grid::new(w, h);
        for c in 0..grid.cells() {
            grid.set_hole(c, rng.below(5) == 0);
        }
        let mut frozen: Vec<u32> = (0..grid.cells()).filter(|&c| !grid.is_hole(c)).collect();
        if frozen.is_empty() {
            return None;
        }
        let k = (1 + rng.below(5) as usize).min(frozen.len());
        let mut pick = |frozen: &mut Vec<u32>| {
            for i in 0..k {
                let j = i + rng.below((frozen.len() - i) as u32) as usize;
                frozen.swap(i, j);
            }
            frozen[..k].iter().map(|&c| grid.pos(c)).collect::<Vec<Pos>>()
        };
        let starts = pick(&mut frozen);
        let goals = pick(&mut frozen);
        let agents = starts.into_iter().zip(goals).map(|(start, goal)| Agent { start, goal }).collect();
        Instance::new(grid, agents).ok()
    }

    /// Under `map` inputs no token holds a cost-to-go, a move status or the goal-passed role, on
    /// random instances and random answers; everything else (kind, cell, time, rank, role
    /// otherwise) is the planner's token. A planner's layout is written as before.
    #[test]
    fn map_inputs_hold_no_cost_to_go_and_no_status() {
        let planner = Layout::new(8, 16);
        let map = Layout { inputs: Inputs::Map, ..planner };
        assert_eq!(serde_json::to_string(&planner).unwrap(), r#"{"max_side":8,"max_time":16}"#);
        let back: Layout = serde_json::from_str(r#"{"max_side":8,"max_time":16,"inputs":"map"}"#).unwrap();
        assert_eq!(back, map);
        let mut rng = floe_core::rng::Rng::from_counters(&[12]);
        let (mut informative, mut tokens) = (0usize, 0usize);
        for _ in 0..500 {
            let Some(i) = random_instance(&mut rng) else { continue };
            let cap = planner.answer_cap(&i);
            let answer: Vec<i64> = (0..cap)
                .map(|_| match rng.below(12) {
                    0..=9 => i64::from(rng.below(5)),
                    _ => OUT_SEP,
                })
                .chain([OUT_END])
                .collect();
            let (a, b) = (sequence(&planner, &i, &answer).unwrap(), sequence(&map, &i, &answer).unwrap());
            assert_eq!(a.tokens.len(), b.tokens.len());
            for (p, m) in a.tokens.iter().zip(&b.tokens) {
                tokens += 1;
                assert_eq!(m.dist, map.no_dist(), "{m:?}");
                assert_eq!(m.moves, [status::NA; 5], "{m:?}");
                assert_ne!(m.role, role::GOAL_PASSED_LATER);
                if p.dist != planner.no_dist() || p.moves != [status::NA; 5] || p.role != m.role {
                    informative += 1;
                }
                let role = if p.role == role::GOAL_PASSED_LATER { role::AGENT } else { p.role };
                assert_eq!(
                    (m.kind, m.row, m.col, m.time, m.rank, m.role),
                    (p.kind, p.row, p.col, p.time, p.rank, role)
                );
            }
        }
        // The planner's tokens did carry what the map's lack (on a fifth of them: the grid's cells carry none).
        assert!(tokens > 5000 && informative > tokens / 10, "{informative} of {tokens}");
    }

    /// On many random instances and random partial answers (moves into holes, off the grid and
    /// into other agents included), every token's move statuses, now judged by floe-core's
    /// rules, are the ones the tokeniser's own checks gave.
    #[test]
    fn statuses_by_the_rules_are_the_statuses_by_hand() {
        let l = Layout::new(8, 16);
        let mut rng = floe_core::rng::Rng::from_counters(&[11]);
        let (mut tokens, mut seen) = (0, [0usize; 4]);
        for _ in 0..3000 {
            let Some(i) = random_instance(&mut rng) else { continue };
            let board = Board::new(&i);
            let starts = prompt(&l, &i).unwrap().into_iter().filter(|t| t.kind == kind::START);
            for (t, &a) in starts.zip(&board.order) {
                let cell = i.grid.cell(i.agents[a].start);
                assert_eq!(t.moves, statuses_by_hand(&i.grid, &board.dist[a], cell, &[], 0), "{i:?}");
            }
            let mut s = AnswerState::new(l, &i);
            let cap = l.answer_cap(&i);
            while !s.ended() && s.len() < cap {
                // Mostly moves, now and then the next agent, rarely the end.
                let out = match rng.below(16) {
                    0..=11 => i64::from(rng.below(5)),
                    12..=14 => OUT_SEP,
                    _ => OUT_END,
                };
                let token = s.push(out);
                if let (Some(cell), Some(&a), false) = (s.pos, s.board.order.get(s.rank), s.ended()) {
                    let by_hand =
                        statuses_by_hand(&i.grid, &s.board.dist[a], cell, &s.paths[..s.rank], s.time);
                    assert_eq!(token.moves, by_hand, "{i:?} after {out}");
                    tokens += 1;
                    for st in token.moves {
                        seen[st as usize] += 1;
                    }
                }
            }
        }
        // Every status came up, conflicts too.
        assert!(tokens > 10_000 && seen.iter().all(|&n| n > 1000), "{tokens} tokens, {seen:?}");
    }

    /// The test hook of floe-core that breaks the swap rule (`rules::hooks`) reaches the token
    /// statuses as it reaches the verifier: the tokeniser judges by the same rule (floe-core's
    /// `one_broken_rule_breaks_every_judge` checks the verifiers and the engine's strict step).
    #[test]
    fn a_broken_swap_rule_reaches_the_token_statuses() {
        use floe_core::rules::hooks::with_swaps_allowed;
        use floe_core::verify::{verify, Check};
        use floe_core::{FailureKind, Plan};

        let (l, i) = (layout(), inst());
        // Agent 0: D R R; agent 1: U R, swapping (0,0) and (1,0) between times 0 and 1.
        let ans = [2, 4, 4, OUT_SEP, 1, 4, OUT_SEP, OUT_END];
        let plan = Plan::from_move_strings(&["DRR", "UR"]).unwrap();
        let judge = || {
            let s = sequence(&l, &i, &ans).unwrap();
            // Agent 1 at its start, time 0; then at (0,0), time 1.
            let (start, up) = (s.tokens[14], s.tokens[15]);
            assert_eq!((start.kind, start.rank, up.row, up.col), (kind::SEP, 1, 0, 0));
            let v = verify(&i, &plan, Check::against(None));
            (start.moves, v.failure.map(|f| (f.kind, f.time)))
        };
        // Waiting runs into agent 0 (vertex), moving up swaps with it.
        assert_eq!(judge(), ([X, X, B, B, C], Some((FailureKind::EdgeConflict, Some(1)))));
        // With swaps allowed, moving up is only closer to the goal, and the plan is valid.
        assert_eq!(with_swaps_allowed(judge), ([X, C, B, B, C], None));
        assert_eq!(judge().0, [X, X, B, B, C], "the hook is off again");
    }

    #[test]
    fn five_agents_read_like_two() {
        // No table grows with the agent count: a 5-agent board tokenises within the same layout.
        let grid = Grid::from_rows(&["FFFFF", "FFFFF", "FFFFF", "FFFFF", "FFFFF"]).unwrap();
        let agents = (0..5).map(|k| Agent { start: Pos::new(k, 0), goal: Pos::new(4 - k, 4) }).collect();
        let i = Instance::new(grid, agents).unwrap();
        let p = prompt(&layout(), &i).unwrap();
        assert_eq!(p.len(), 25 + 10 + 1);
        assert!(p.iter().all(|t| t.role < role::COUNT && t.rank < 5));
    }
}
