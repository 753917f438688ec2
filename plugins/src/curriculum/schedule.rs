//! `schedule`: a configuration given per round: round `r` trains on `configs[r]`, and every
//! round past the list on its last entry. With one entry it is `fixed`. floe's hindsight search
//! (`floe experiment`'s `best-of-n`) replays the designs it chose with it; a researcher can
//! write a curriculum by hand with it.

use floe_plugin_api::{ConfigError, Curriculum, History, PluginError, RoundConfig};
use serde::{Deserialize, Serialize};

/// Parameters of [`Schedule`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScheduleParams {
    /// The configuration of round 0, 1, …; the last one stands for every later round \[floe's
    /// round-0 default alone\].
    pub configs: Vec<RoundConfig>,
}

impl Default for ScheduleParams {
    fn default() -> Self {
        ScheduleParams { configs: vec![RoundConfig::round0_default()] }
    }
}

/// The schedule curriculum.
#[derive(Debug, Clone)]
pub struct Schedule {
    configs: Vec<RoundConfig>,
}

impl Schedule {
    /// A schedule of checked configurations.
    ///
    /// # Errors
    /// [`ConfigError::Param`] for an empty list, or what [`RoundConfig::validate`] finds in an
    /// entry.
    pub fn new(p: ScheduleParams) -> Result<Self, ConfigError> {
        if p.configs.is_empty() {
            return Err(ConfigError::param("configs", "is empty: give round 0's configuration at least"));
        }
        for c in &p.configs {
            c.validate()?;
        }
        Ok(Schedule { configs: p.configs })
    }
}

impl Curriculum for Schedule {
    fn next_config(&mut self, history: &History) -> Result<RoundConfig, PluginError> {
        let r = (history.next_round() as usize).min(self.configs.len() - 1);
        Ok(self.configs[r].clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_plugin_api::RoundRecord;

    #[test]
    fn each_round_its_entry_then_the_last() {
        let a = RoundConfig::round0_default();
        let mut b = a.clone();
        b.sizes.truncate(2);
        b.sizes[0].data_ratio = 0.25;
        b.sizes[1].data_ratio = 0.75;
        let mut s = Schedule::new(ScheduleParams { configs: vec![a.clone(), b.clone()] }).unwrap();
        let mut h = History::default();
        for want in [&a, &b, &b] {
            let c = s.next_config(&h).unwrap();
            assert_eq!(&c, want);
            h.rounds.push(RoundRecord { round: h.next_round(), config: c, results: vec![] });
        }
        let empty = ScheduleParams { configs: vec![] };
        assert!(Schedule::new(empty).unwrap_err().to_string().contains("configs"));
        b.sizes[0].data_ratio = 0.5;
        assert!(Schedule::new(ScheduleParams { configs: vec![b] }).is_err());
    }
}
