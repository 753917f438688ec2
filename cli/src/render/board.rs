//! Pictures of an instance and a plan: `floe render --png FILE` and `--gif FILE`.
//!
//! The grid is drawn with frozen cells pale blue, holes dark, and a margin of a quarter cell
//! around it, or of one cell when the plan takes an agent off the grid (it is shown there); each agent has its colour: its goal is a square
//! frame of that colour (with the agent's number where the cells are large enough), its start a
//! ring, the agent a disc with its number, and the way it came a line. Above the grid a header
//! names the instance and the time step and says how the plan fares; below it a key. Agents that
//! share a cell are drawn side by side in it.
//!
//! - The GIF has one frame per time step t = 0, 1, …, T, where T is the plan's last step, or the
//!   step of its first failure, then a held frame: the whole plan, as the PNG draws it. Without a
//!   plan to play (none given, an answer that cannot be read, a plan for another number of
//!   agents) it is that one frame.
//! - The PNG is one picture of the whole plan: every agent's path up to T, the agents where they
//!   stand at T, and the verdict.
//!
//! A failure, as the verifier reports it (kind, agent, time step), is marked in red at its time
//! step on the cells it concerns: a cross on the cell of a hole, of an agent off the grid or of
//! an illegal jump (with the jump drawn dashed); both cells of a swap (edge conflict) joined by a
//! line; the shared cell of a vertex conflict; for an agent not on its goal at the end, its cell
//! and its goal joined by a dashed line.

use floe_core::verify::Verdict;
use floe_core::FailureKind;
use floe_core::{Instance, Plan};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::canvas::{self, err, Area};
use super::palette::palette_and_indices;
use super::{paths, positions_at};

/// What is drawn over the instance.
#[derive(Debug, Clone, Copy)]
pub enum Shown<'a> {
    /// The instance alone: starts and goals.
    Alone,
    /// An answer that could not be read into a plan, and why.
    Unreadable(&'a str),
    /// A plan and the verifier's verdict on it.
    Plan(&'a Plan, &'a Verdict),
}

/// The delay of a time step's frame in the GIF, in hundredths of a second.
pub const STEP_DELAY_CS: u16 = 70;
/// The delay of the held last frame, in hundredths of a second.
pub const HOLD_DELAY_CS: u16 = 300;

/// The header's height: a title line and up to two lines of verdict.
const HEADER: u32 = 80;
/// The key's height, below the grid.
const FOOTER: u32 = 34;
/// The narrowest picture (room for the header's text).
const MIN_WIDTH: u32 = 480;
/// The grid with its margin is drawn about this many pixels across.
const BOARD_PIXELS: u32 = 560;

const ICE: RGBColor = RGBColor(214, 234, 248);
const HOLE: RGBColor = RGBColor(36, 52, 82);
const INK: RGBColor = RGBColor(40, 40, 40);
const GREY: RGBColor = RGBColor(110, 110, 110);
const FAIL: RGBColor = RGBColor(220, 20, 60);
const GOOD: RGBColor = RGBColor(0, 120, 60);

/// Agent colours: distinct, none of them the failure's red.
const PALETTE: [RGBColor; 9] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
];

/// Agent `i`'s colour: the palette, then hues a golden angle apart.
fn agent_color(i: usize) -> RGBColor {
    if let Some(&c) = PALETTE.get(i) {
        return c;
    }
    let hue = (i as f64 * 137.508) % 360.0;
    // Keep clear of the failure's red: hues from 25° to 320° only.
    let hue = if hue < 25.0 {
        hue + 25.0
    } else if hue > 320.0 {
        hue - 40.0
    } else {
        hue
    };
    let (r, g, b) = HSLColor(hue / 360.0, 0.65, 0.45).rgb();
    RGBColor(r, g, b)
}

/// How a line of text reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tone {
    Plain,
    Good,
    Bad,
}

impl Tone {
    fn color(self) -> RGBColor {
        match self {
            Tone::Plain => GREY,
            Tone::Good => GOOD,
            Tone::Bad => FAIL,
        }
    }
}

/// A cell by (row, col); may be off the grid.
type Cell = (i64, i64);

/// Where and when a failure is marked.
#[derive(Debug, Clone)]
struct Mark {
    time: usize,
    /// Cells framed in red.
    framed: Vec<Cell>,
    /// A cell crossed out in red.
    crossed: Option<Cell>,
    /// Red lines between cell centres: (from, to, dashed).
    lines: Vec<(Cell, Cell, bool)>,
    text: String,
}

/// An instance and what is shown over it, ready to draw.
#[derive(Debug)]
pub struct Board<'a> {
    inst: &'a Instance,
    /// Every agent's position at t = 0, 1, …, T (only the starts when no plan is played).
    steps: Vec<Vec<Cell>>,
    played: bool,
    mark: Option<Mark>,
    verdict: (String, Tone),
    cell: u32,
    width: u32,
    height: u32,
    /// The pixel of the grid's top-left corner (cell (0, 0)).
    origin: (i32, i32),
}

/// The side of a cell in pixels for a grid of `width` × `height` cells: the grid and a margin of
/// a cell on each side about [`BOARD_PIXELS`] across, between 4 and 96 pixels a cell.
#[must_use]
pub fn cell_size(width: u32, height: u32) -> u32 {
    (BOARD_PIXELS / (width.max(height) + 2)).clamp(4, 96)
}

/// The margin around the grid in pixels: a cell when an agent is drawn off the grid, else a
/// quarter of one.
fn margin(cell: u32, off_grid: bool) -> u32 {
    if off_grid {
        cell
    } else {
        cell / 4
    }
}

/// The picture's size in pixels for a grid of `width` × `height` cells, `off_grid` when the plan
/// takes an agent off it: the grid and its margin, at least [`MIN_WIDTH`] wide, with the header
/// and the key.
#[must_use]
pub fn picture_size(width: u32, height: u32, off_grid: bool) -> (u32, u32) {
    let c = cell_size(width, height);
    let m = margin(c, off_grid);
    ((width * c + 2 * m).max(MIN_WIDTH), HEADER + height * c + 2 * m + FOOTER)
}

impl<'a> Board<'a> {
    /// The picture of `inst` with `shown` over it. A failure's time step must lie within the plan
    /// (as the verifier's do).
    #[must_use]
    pub fn new(inst: &'a Instance, shown: Shown<'_>) -> Self {
        let starts: Vec<Cell> =
            inst.agents.iter().map(|a| (i64::from(a.start.row), i64::from(a.start.col))).collect();
        let (steps, played, mark, verdict) = match shown {
            Shown::Alone => {
                (vec![starts], false, None, ("no plan: the starts and goals".to_string(), Tone::Plain))
            }
            Shown::Unreadable(why) => {
                (vec![starts], false, None, (format!("the answer cannot be read: {why}"), Tone::Bad))
            }
            Shown::Plan(plan, v) if plan.num_agents() != inst.num_agents() || failed_unplayed(v) => {
                let text = v
                    .failure
                    .as_ref()
                    .map_or_else(String::new, |f| format!("invalid: {}, {}", f.kind, f.detail));
                (vec![starts], false, None, (text, Tone::Bad))
            }
            Shown::Plan(plan, v) => {
                let last =
                    v.failure.as_ref().and_then(|f| f.time).map_or_else(|| plan.horizon(), |t| t as usize);
                let paths = paths(inst, plan);
                let steps: Vec<Vec<Cell>> = (0..=last).map(|t| positions_at(&paths, t)).collect();
                let mark = v.failure.as_ref().and_then(|f| {
                    let (agent, time) = (f.agent?, f.time? as usize);
                    Some(failure_mark(inst, &steps, f.kind, agent, time, &f.detail))
                });
                let verdict = match &v.failure {
                    Some(f) => (
                        format!(
                            "invalid at t = {}: {}, {}",
                            f.time.map_or_else(|| "?".into(), |t| t.to_string()),
                            f.kind,
                            f.detail
                        ),
                        Tone::Bad,
                    ),
                    None => (
                        format!(
                            "valid, sum of costs {}, makespan {}{}",
                            v.soc.unwrap_or(0),
                            v.makespan.unwrap_or(0),
                            match v.optimal_soc {
                                Some(o) if v.optimal => format!(" (optimal: {o})"),
                                Some(o) => format!(" (the optimum is {o})"),
                                None => String::new(),
                            }
                        ),
                        Tone::Good,
                    ),
                };
                (steps, true, mark, verdict)
            }
        };
        let (w, h) = (inst.grid.width(), inst.grid.height());
        let off_grid = steps.iter().flatten().any(|&(r, c)| !inst.grid.in_bounds(r, c));
        let cell = cell_size(w, h);
        let (width, height) = picture_size(w, h, off_grid);
        let m = margin(cell, off_grid);
        let origin = (((width - w * cell) / 2) as i32, (HEADER + m) as i32);
        Board { inst, steps, played, mark, verdict, cell, width, height, origin }
    }

    /// The picture's size in pixels.
    #[must_use]
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// The GIF's frames: one per time step and the held one, or one without a plan to play.
    #[must_use]
    pub fn frames(&self) -> usize {
        if self.played {
            self.steps.len() + 1
        } else {
            1
        }
    }

    /// The last time step drawn (that of the first failure, or the plan's end).
    #[must_use]
    pub fn last_step(&self) -> usize {
        self.steps.len() - 1
    }

    /// The PNG: the whole plan in one picture.
    ///
    /// # Errors
    /// A drawing or encoding failure, as text.
    pub fn png(&self) -> Result<Vec<u8>, String> {
        let rgb = canvas::rgb(self.width, self.height, |a| self.draw(a, self.last_step(), true))?;
        canvas::png(self.width, self.height, &rgb)
    }

    /// The GIF: each time step, then the whole plan held (see the module's documentation); it
    /// loops.
    ///
    /// # Errors
    /// A picture too large for a GIF (65535 pixels a side), a drawing or encoding failure.
    pub fn gif(&self) -> Result<Vec<u8>, String> {
        let too_large = || format!("a {}×{} picture is too large for a GIF", self.width, self.height);
        let w = u16::try_from(self.width).map_err(|_| too_large())?;
        let h = u16::try_from(self.height).map_err(|_| too_large())?;
        let mut enc = gif::Encoder::new(Vec::new(), w, h, &[]).map_err(err)?;
        enc.set_repeat(gif::Repeat::Infinite).map_err(err)?;
        let mut put = |t: usize, whole: bool, delay: u16| -> Result<(), String> {
            let rgb = canvas::rgb(self.width, self.height, |a| self.draw(a, t, whole))?;
            let (palette, pixels) = palette_and_indices(&rgb);
            let mut frame = gif::Frame::from_palette_pixels(w, h, pixels, palette, None);
            frame.delay = delay;
            enc.write_frame(&frame).map_err(err)
        };
        if self.played {
            for t in 0..self.steps.len() {
                put(t, false, STEP_DELAY_CS)?;
            }
        }
        put(self.last_step(), true, HOLD_DELAY_CS)?;
        enc.into_inner().map_err(err)
    }

    /// The pixel centre of a cell (off-grid cells are drawn in the margin).
    fn centre(&self, (r, c): Cell) -> (i32, i32) {
        let (r, c) = self.clamp((r, c));
        let s = self.cell as i32;
        (self.origin.0 + c as i32 * s + s / 2, self.origin.1 + r as i32 * s + s / 2)
    }

    /// A cell moved into the grid and a ring of cells around it (the margin when an agent is off
    /// the grid).
    fn clamp(&self, (r, c): Cell) -> Cell {
        let g = &self.inst.grid;
        (r.clamp(-1, i64::from(g.height())), c.clamp(-1, i64::from(g.width())))
    }

    /// The pixel corners of a cell, `inset` pixels in from its sides.
    fn square(&self, cell: Cell, inset: i32) -> [(i32, i32); 2] {
        let (x, y) = self.centre(cell);
        let half = self.cell as i32 / 2;
        [(x - half + inset, y - half + inset), (x + half - inset, y + half - inset)]
    }

    /// One picture: the positions at time `t`, the paths up to `t`; `whole` for the picture of the
    /// whole plan (the PNG, the GIF's held frame).
    fn draw(&self, area: &Area<'_>, t: usize, whole: bool) -> Result<(), String> {
        self.draw_header(area, t, whole)?;
        self.draw_grid(area)?;
        self.draw_goals_and_starts(area)?;
        if self.played {
            self.draw_paths(area, t)?;
        }
        self.draw_agents(area, &self.steps[t])?;
        if let Some(m) = self.mark.as_ref().filter(|m| m.time == t) {
            self.draw_mark(area, m)?;
        }
        self.draw_key(area)
    }

    fn draw_header(&self, area: &Area<'_>, t: usize, whole: bool) -> Result<(), String> {
        let inst = self.inst;
        let mut title = inst.id.as_ref().map_or_else(String::new, |id| format!("{id} · "));
        title.push_str(&format!(
            "{}×{} map, {}",
            inst.grid.height(),
            inst.grid.width(),
            floe_core::text::count(inst.num_agents() as u64, "agent", "agents")
        ));
        let last = self.last_step();
        if self.played {
            title.push_str(&if whole {
                format!(" · t = 0 to {last}")
            } else {
                format!(" · t = {t} of {last}")
            });
        }
        let (line, tone) = if whole || !self.played {
            self.verdict.clone()
        } else if let Some(m) = self.mark.as_ref().filter(|m| m.time == t) {
            (m.text.clone(), Tone::Bad)
        } else if t == last && self.mark.is_none() {
            self.verdict.clone()
        } else {
            let on_goal = self.steps[t]
                .iter()
                .zip(&inst.agents)
                .filter(|(p, a)| **p == (i64::from(a.goal.row), i64::from(a.goal.col)))
                .count();
            (format!("agents on their goals: {on_goal} of {}", inst.num_agents()), Tone::Plain)
        };
        let head = canvas::style(18.0, INK, HPos::Left, VPos::Top);
        let title = canvas::wrap(area, &title, &head, self.width - 20, 1)?;
        canvas::text(area, title.first().map_or("", String::as_str), (10, 10), &head)?;
        let body = canvas::style(15.0, tone.color(), HPos::Left, VPos::Top);
        for (i, l) in canvas::wrap(area, &line, &body, self.width - 20, 2)?.iter().enumerate() {
            canvas::text(area, l, (10, 38 + 18 * i as i32), &body)?;
        }
        Ok(())
    }

    fn draw_grid(&self, area: &Area<'_>) -> Result<(), String> {
        let g = &self.inst.grid;
        let gap = i32::from(self.cell >= 12);
        for r in 0..g.height() {
            for c in 0..g.width() {
                let color = if g.is_hole(g.cell(floe_core::Pos::new(r, c))) { HOLE } else { ICE };
                let cell = (i64::from(r), i64::from(c));
                area.draw(&Rectangle::new(self.square(cell, gap), color.filled())).map_err(err)?;
            }
        }
        let [tl, _] = self.square((0, 0), 0);
        let [_, br] = self.square((i64::from(g.height()) - 1, i64::from(g.width()) - 1), 0);
        area.draw(&Rectangle::new([(tl.0 - 1, tl.1 - 1), (br.0, br.1)], INK.stroke_width(1))).map_err(err)
    }

    fn draw_goals_and_starts(&self, area: &Area<'_>) -> Result<(), String> {
        let s = self.cell as i32;
        let stroke = (s / 12).max(1) as u32;
        for (i, a) in self.inst.agents.iter().enumerate() {
            let color = agent_color(i);
            let goal = (i64::from(a.goal.row), i64::from(a.goal.col));
            let [p, q] = self.square(goal, (s / 10).max(1));
            area.draw(&Rectangle::new([p, q], color.mix(0.22).filled())).map_err(err)?;
            area.draw(&Rectangle::new([p, q], color.stroke_width(stroke))).map_err(err)?;
            if s >= 32 {
                let label = canvas::style(f64::from(s) * 0.22, color, HPos::Left, VPos::Top);
                canvas::text(area, &i.to_string(), (p.0 + stroke as i32 + 1, p.1 + stroke as i32), &label)?;
            }
            let start = self.centre((i64::from(a.start.row), i64::from(a.start.col)));
            let ring = (f64::from(s) * 0.3) as i32;
            area.draw(&Circle::new(start, ring, color.stroke_width(stroke.max(2)))).map_err(err)?;
        }
        Ok(())
    }

    /// Each agent's way from t = 0 to `t`, a line of its colour, a little apart from the others'.
    fn draw_paths(&self, area: &Area<'_>, t: usize) -> Result<(), String> {
        let s = self.cell as i32;
        let width = (s / 10).max(1) as u32;
        for i in 0..self.inst.num_agents() {
            let shift = ((i % 3) as i32 - 1) * s / 10;
            let shift_y = ((i / 3 % 3) as i32 - 1) * s / 10;
            let mut points: Vec<(i32, i32)> = Vec::new();
            for step in &self.steps[..=t] {
                let (x, y) = self.centre(step[i]);
                let p = (x + shift, y + shift_y);
                if points.last() != Some(&p) {
                    points.push(p);
                }
            }
            if points.len() > 1 {
                area.draw(&PathElement::new(points, agent_color(i).mix(0.7).stroke_width(width)))
                    .map_err(err)?;
            }
        }
        Ok(())
    }

    /// The agents as numbered discs; agents on one cell side by side in it.
    fn draw_agents(&self, area: &Area<'_>, at: &[Cell]) -> Result<(), String> {
        let s = f64::from(self.cell);
        let mut groups: Vec<(Cell, Vec<usize>)> = Vec::new();
        for (i, &p) in at.iter().enumerate() {
            let p = self.clamp(p);
            match groups.iter_mut().find(|(q, _)| *q == p) {
                Some((_, g)) => g.push(i),
                None => groups.push((p, vec![i])),
            }
        }
        for (cell, agents) in &groups {
            let (cx, cy) = self.centre(*cell);
            let k = agents.len();
            let radius = if k == 1 { s * 0.32 } else { s * 0.32 / (1.0 + 0.35 * (k as f64 - 1.0)) };
            for (j, &i) in agents.iter().enumerate() {
                let (x, y) = if k == 1 {
                    (cx, cy)
                } else {
                    let angle = std::f64::consts::PI * (1.0 + 2.0 * j as f64 / k as f64);
                    (cx + (s * 0.22 * angle.cos()) as i32, cy + (s * 0.22 * angle.sin()) as i32)
                };
                let r = radius.max(1.5) as i32;
                area.draw(&Circle::new((x, y), r, agent_color(i).filled())).map_err(err)?;
                area.draw(&Circle::new((x, y), r, INK.stroke_width(1))).map_err(err)?;
                if r >= 9 {
                    let label = canvas::style(f64::from(r) * 1.1, WHITE, HPos::Center, VPos::Center);
                    canvas::text(area, &i.to_string(), (x, y), &label)?;
                }
            }
        }
        Ok(())
    }

    fn draw_mark(&self, area: &Area<'_>, m: &Mark) -> Result<(), String> {
        let s = self.cell as i32;
        let width = (s / 14).max(2) as u32;
        for &(from, to, dashed) in &m.lines {
            let (a, b) = (self.centre(from), self.centre(to));
            if dashed {
                let dash = (s / 6).max(3);
                area.draw(&DashedPathElement::new(vec![a, b], dash, dash, FAIL.stroke_width(width)))
                    .map_err(err)?;
            } else {
                area.draw(&PathElement::new(vec![a, b], FAIL.stroke_width(width))).map_err(err)?;
            }
        }
        for &cell in &m.framed {
            area.draw(&Rectangle::new(self.square(cell, 1), FAIL.stroke_width(width + 1))).map_err(err)?;
        }
        if let Some(cell) = m.crossed {
            let [p, q] = self.square(cell, (s / 6).max(1));
            for line in [vec![p, q], vec![(p.0, q.1), (q.0, p.1)]] {
                area.draw(&PathElement::new(line, FAIL.mix(0.9).stroke_width(width + 1))).map_err(err)?;
            }
        }
        Ok(())
    }

    /// The key: ring start, frame goal, disc agent, red cross failure.
    fn draw_key(&self, area: &Area<'_>) -> Result<(), String> {
        let y = (self.height - FOOTER / 2) as i32;
        let label = canvas::style(14.0, INK, HPos::Left, VPos::Center);
        let mut x = 12;
        let color = agent_color(0);
        area.draw(&Circle::new((x + 7, y), 7, color.stroke_width(2))).map_err(err)?;
        canvas::text(area, "start", (x + 20, y), &label)?;
        x += 74;
        area.draw(&Rectangle::new([(x, y - 7), (x + 14, y + 7)], color.stroke_width(2))).map_err(err)?;
        canvas::text(area, "goal", (x + 20, y), &label)?;
        x += 66;
        area.draw(&Circle::new((x + 7, y), 7, color.filled())).map_err(err)?;
        canvas::text(area, "agent", (x + 20, y), &label)?;
        x += 76;
        for line in [vec![(x, y - 7), (x + 14, y + 7)], vec![(x, y + 7), (x + 14, y - 7)]] {
            area.draw(&PathElement::new(line, FAIL.stroke_width(3))).map_err(err)?;
        }
        canvas::text(area, "failure", (x + 20, y), &label)
    }
}

/// Whether the verdict is a failure found before any step (nothing to play).
fn failed_unplayed(v: &Verdict) -> bool {
    v.failure.as_ref().is_some_and(|f| {
        matches!(f.kind, FailureKind::ParseError | FailureKind::WrongAgentCount) || f.time.is_none()
    })
}

/// The red marks of a failure of `agent` at `time`, from the positions the plan gives.
fn failure_mark(
    inst: &Instance,
    steps: &[Vec<Cell>],
    kind: FailureKind,
    agent: usize,
    time: usize,
    detail: &str,
) -> Mark {
    let at = |t: usize, i: usize| steps.get(t).and_then(|s| s.get(i)).copied().unwrap_or((-1, -1));
    let now = at(time, agent);
    let before = at(time.saturating_sub(1), agent);
    let mut m = Mark {
        time,
        framed: vec![now],
        crossed: None,
        lines: Vec::new(),
        text: format!("t = {time}: {kind}, {detail}"),
    };
    match kind {
        FailureKind::OutOfBounds | FailureKind::Hole => {
            m.crossed = Some(now);
            if before != now {
                m.lines.push((before, now, false));
            }
        }
        FailureKind::IllegalMove => {
            m.crossed = Some(now);
            // At time 0, a path that does not begin on the agent's start.
            let from = if time == 0 {
                inst.agents.get(agent).map_or(now, |a| (i64::from(a.start.row), i64::from(a.start.col)))
            } else {
                before
            };
            m.lines.push((from, now, true));
        }
        FailureKind::EdgeConflict => {
            m.framed.push(before);
            m.lines.push((before, now, false));
        }
        FailureKind::VertexConflict => {}
        FailureKind::GoalNotReached => {
            if let Some(a) = inst.agents.get(agent) {
                let goal = (i64::from(a.goal.row), i64::from(a.goal.col));
                m.framed.push(goal);
                m.lines.push((now, goal, true));
            }
        }
        FailureKind::ParseError | FailureKind::WrongAgentCount => m.framed.clear(),
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The failure's red as the render tests find it (with blending and a GIF palette).
    fn reddish(c: RGBColor) -> bool {
        c.0 >= 180 && c.1 <= 90 && c.2 <= 110
    }

    #[test]
    fn no_agent_is_drawn_in_the_failures_red() {
        assert!(reddish(FAIL));
        for i in 0..1000 {
            let c = agent_color(i);
            assert!(!reddish(c), "agent {i}: {c:?}");
            // Blended over ice for a goal's tint, or a path's line.
            for alpha in [0.22, 0.7] {
                let mix = |a: u8, b: u8| (f64::from(a) * alpha + f64::from(b) * (1.0 - alpha)) as u8;
                assert!(!reddish(RGBColor(mix(c.0, ICE.0), mix(c.1, ICE.1), mix(c.2, ICE.2))), "agent {i}");
            }
        }
        assert_eq!(agent_color(0), PALETTE[0]);
        assert_ne!(agent_color(9), agent_color(10));
    }

    #[test]
    fn sizes_follow_the_grid() {
        // 3×3: 560 / 5 = 112, at most 96 a cell; a margin of 24 (336 across, widened to 480),
        // or of a cell for an agent off the grid (480 across).
        assert_eq!(cell_size(3, 3), 96);
        assert_eq!(picture_size(3, 3, false), (480, HEADER + 3 * 96 + 48 + FOOTER));
        assert_eq!(picture_size(3, 3, true), (480, HEADER + 5 * 96 + FOOTER));
        // 10×10: 560 / 12 = 46 a cell, margins of 11 or 46.
        assert_eq!(picture_size(10, 10, false), (482, HEADER + 460 + 22 + FOOTER));
        assert_eq!(picture_size(10, 10, true), (552, HEADER + 12 * 46 + FOOTER));
        // A wide map: its longer side sets the cell.
        assert_eq!(cell_size(30, 4), 17);
        assert_eq!(picture_size(30, 4, true), (544, HEADER + 6 * 17 + FOOTER));
        assert_eq!(picture_size(30, 4, false), (518, HEADER + 4 * 17 + 8 + FOOTER));
        // Large maps: at least 4 pixels a cell.
        assert_eq!(cell_size(500, 500), 4);
    }
}
