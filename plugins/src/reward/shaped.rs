//! A shaped stepping reward over per-agent [`StepOutcome`]s: potential-based progress towards the
//! goal (Ng et al. 1999, potential `-progress · distance`), a step cost, penalties for collisions,
//! holes and leaving the grid, and a bonus on arrival:
//!
//! ```text
//! r = progress · (prev_distance − gamma · new_distance)      (0 if either distance is unknown)
//!   − step_cost                                               (not while resting on the goal)
//!   − collision · [COLLIDED] − hole · [FELL_IN_HOLE] − out_of_bounds · [OUT_OF_BOUNDS]
//!   + goal · [REACHED_GOAL]
//! ```
//!
//! "Resting on the goal" is a step with both distances 0. `REACHED_GOAL` comes with an agent's
//! first arrival of the episode only (the engine's `REACHED`), so the goal bonus is paid once per
//! agent and episode: an agent that steps off its goal and back earns the progress terms, which
//! cancel, less two step costs, never a second bonus. Defaults: progress 0.1, gamma 1, step cost
//! 0.01, collision 0.5, hole 1, out of bounds 0.5, goal 1.

use floe_plugin_api::{step_flags, ConfigError, PluginError, RewardFn, StepOutcome, UNKNOWN};
use serde::{Deserialize, Serialize};

use super::non_negative;

/// Parameters of [`ShapedReward`] (JSON fields of the same names; all optional).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShapedParams {
    /// Reward per cell of progress.
    pub progress: f32,
    /// Discount of the potential after the step, in `[0, 1]`.
    pub gamma: f32,
    /// Cost of every step (not while resting on the goal).
    pub step_cost: f32,
    /// Penalty for a conflict.
    pub collision: f32,
    /// Penalty for entering a hole.
    pub hole: f32,
    /// Penalty for trying to leave the grid.
    pub out_of_bounds: f32,
    /// Bonus for arriving on the goal, once per agent and episode.
    pub goal: f32,
}

impl Default for ShapedParams {
    fn default() -> Self {
        ShapedParams {
            progress: 0.1,
            gamma: 1.0,
            step_cost: 0.01,
            collision: 0.5,
            hole: 1.0,
            out_of_bounds: 0.5,
            goal: 1.0,
        }
    }
}

impl ShapedParams {
    /// Checks that every weight is finite and non-negative and `gamma` is in `[0, 1]`.
    ///
    /// # Errors
    /// [`ConfigError::Param`] naming the parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        non_negative("progress", self.progress)?;
        non_negative("step_cost", self.step_cost)?;
        non_negative("collision", self.collision)?;
        non_negative("hole", self.hole)?;
        non_negative("out_of_bounds", self.out_of_bounds)?;
        non_negative("goal", self.goal)?;
        if !(0.0..=1.0).contains(&non_negative("gamma", self.gamma)?) {
            return Err(ConfigError::param("gamma", format!("{} is outside [0, 1]", self.gamma)));
        }
        Ok(())
    }
}

/// The shaped reward (see the module docs).
#[derive(Debug, Clone)]
pub struct ShapedReward {
    p: ShapedParams,
}

impl ShapedReward {
    /// A shaped reward with checked parameters.
    ///
    /// # Errors
    /// What [`ShapedParams::validate`] finds.
    pub fn new(p: ShapedParams) -> Result<Self, ConfigError> {
        p.validate()?;
        Ok(ShapedReward { p })
    }

    /// The reward of one step.
    ///
    /// # Errors
    /// [`PluginError::BadInput`] for undefined flags.
    pub fn reward(&self, s: &StepOutcome) -> Result<f32, PluginError> {
        s.check()?;
        let p = &self.p;
        let mut r = 0.0;
        if s.prev_distance != UNKNOWN && s.new_distance != UNKNOWN {
            r += p.progress * (s.prev_distance as f32 - p.gamma * s.new_distance as f32);
        }
        if !(s.prev_distance == 0 && s.new_distance == 0) {
            r -= p.step_cost;
        }
        for (flag, weight) in [
            (step_flags::COLLIDED, -p.collision),
            (step_flags::FELL_IN_HOLE, -p.hole),
            (step_flags::OUT_OF_BOUNDS, -p.out_of_bounds),
            (step_flags::REACHED_GOAL, p.goal),
        ] {
            if s.has(flag) {
                r += weight;
            }
        }
        Ok(r)
    }
}

impl RewardFn for ShapedReward {
    fn step_rewards(&mut self, steps: &[StepOutcome], out: &mut [f32]) -> Result<(), PluginError> {
        floe_plugin_api::traits::check_lengths(steps.len(), out.len())?;
        for (s, o) in steps.iter().zip(out.iter_mut()) {
            *o = self.reward(s)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_plugin_api::step_flags::{COLLIDED, FELL_IN_HOLE, REACHED_GOAL, WAITED};

    fn step(prev: u32, new: u32, flags: u32) -> StepOutcome {
        StepOutcome { prev_distance: prev, new_distance: new, flags }
    }

    #[test]
    fn the_math_by_hand() {
        let mut s = ShapedReward::new(ShapedParams::default()).unwrap();
        let batch = [
            step(3, 2, 0),                  // 0.1 * 1 - 0.01 = 0.09
            step(1, 0, REACHED_GOAL),       // 0.1 - 0.01 + 1 = 1.09
            step(2, 3, COLLIDED),           // -0.1 - 0.01 - 0.5 = -0.61
            step(2, UNKNOWN, FELL_IN_HOLE), // no progress term: -0.01 - 1 = -1.01
            step(2, 2, WAITED),             // -0.01
            step(0, 0, WAITED),             // resting on the goal: 0
        ];
        let mut out = [0.0; 6];
        s.step_rewards(&batch, &mut out).unwrap();
        for (got, want) in out.iter().zip([0.09, 1.09, -0.61, -1.01, -0.01, 0.0]) {
            assert!((got - want).abs() < 1e-6, "{got} != {want}");
        }
        // gamma 0.5: 0.1 * (3 - 0.5 * 2) - 0.01 = 0.19.
        let g = ShapedReward::new(ShapedParams { gamma: 0.5, ..ShapedParams::default() }).unwrap();
        assert!((g.reward(&step(3, 2, 0)).unwrap() - 0.19).abs() < 1e-6);
    }

    #[test]
    fn bad_input_and_parameters() {
        let mut s = ShapedReward::new(ShapedParams::default()).unwrap();
        assert!(matches!(s.step_rewards(&[step(1, 1, 1 << 9)], &mut [0.0]), Err(PluginError::BadInput(_))));
        assert!(matches!(s.verdict_rewards(&[], &mut []), Err(PluginError::Unsupported(_))));
        assert!(ShapedReward::new(ShapedParams { gamma: 1.5, ..ShapedParams::default() }).is_err());
        assert!(ShapedReward::new(ShapedParams { hole: -1.0, ..ShapedParams::default() }).is_err());
    }
}
