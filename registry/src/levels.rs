//! Level samplers by name, the one factory of them: the built-in level samplers and a library's,
//! and the samplers that redesign the generator configuration between phases, over any
//! curriculum (built in or a library's) or the environment engineer ([`crate::phases`]). The C
//! API (`floe_plugin_new`, `floe_levels_new`), Python's `floe.LevelSampler`, `floe levels` and
//! every JSON spec make their samplers here, so a name means the same sampler everywhere.
//!
//! | name | sampler |
//! |---|---|
//! | `uniform`, `plr`, `learnability` | the built-in level samplers (floe-plugins) |
//! | any built-in curriculum but `plr` (`fixed`, `difficulty-scaling`, `sec`, `frontier`, `schedule`) | phases designed by that curriculum (`params.curriculum`: its own parameters) |
//! | `phases` | phases designed by `params.designer`, a curriculum's spec: any built-in (`plr` included) or a library's |
//! | `engineer` | phases designed by the environment engineer (`params.engineer`, a spec; `params.context`) |
//! | a spec with `library` | that library's level sampler |
//!
//! Every phase sampler takes `phase_episodes` (ended episodes a phase \[1024\]) and `phases` (how
//! many a run is planned to have, for module T \[8\]).

use floe_levels::{LevelSpace, Levels, LevelsSpec};
use floe_plugin_api::design::DesignLimits;
use floe_plugin_api::{Entry, LevelSampler, PluginError, PluginKind, PluginSpec};
use floe_rounds::context::ContextOptions;
use serde::Deserialize;

use crate::phases::{Designer, PhaseSampler};
use crate::RegistryError;

/// The parameters of a sampler over generator configurations.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PhaseParams {
    /// Ended episodes a phase.
    #[serde(default = "default_phase_episodes")]
    phase_episodes: u32,
    /// Phases a run is planned to have (the engineer's module T says it).
    #[serde(default = "default_phases")]
    phases: u32,
    /// A curriculum named as the sampler: its own parameters.
    #[serde(default)]
    curriculum: serde_json::Value,
    /// `phases`: the curriculum that designs them.
    #[serde(default)]
    designer: Option<PluginSpec>,
    /// `engineer`: the engineer (a plugin spec) \[the embedded model\].
    #[serde(default)]
    engineer: Option<PluginSpec>,
    /// `engineer`: how its context is assembled.
    #[serde(default)]
    context: Option<ContextOptions>,
}

fn default_phase_episodes() -> u32 {
    1024
}

fn default_phases() -> u32 {
    8
}

/// Whether the built-ins hold a plugin `name` of `kind`.
fn built_in(kind: PluginKind, name: &str) -> bool {
    floe_plugins::catalog().iter().any(|e: &Entry| e.kind() == kind && e.name == name)
}

/// Whether `spec` names a sampler over generator configurations (its phases designed by a
/// curriculum or the engineer) rather than a level sampler.
#[must_use]
pub fn designs_phases(spec: &PluginSpec) -> bool {
    spec.library.is_none()
        && !built_in(PluginKind::LevelSampler, &spec.name)
        && (spec.name == "phases" || spec.name == "engineer" || built_in(PluginKind::Curriculum, &spec.name))
}

/// Makes the level sampler `spec` names (see the module's table); a phase sampler designs within
/// `limits` (a level space's: [`LevelSpace::limits`]).
///
/// # Errors
/// A library that does not load, a name that is none of the table's ([`RegistryError::Plugin`]
/// naming the level samplers and curricula there are), parameters a sampler, a curriculum or an
/// engineer refuses.
pub fn level_sampler(
    spec: &PluginSpec,
    limits: &DesignLimits,
) -> Result<Box<dyn LevelSampler>, RegistryError> {
    if !designs_phases(spec) {
        return crate::resolve(
            spec,
            PluginKind::LevelSampler,
            |lib, name, params| lib.new_level_sampler(name, params),
            floe_plugin_api::catalog::new_level_sampler,
        )
        .map(|(s, _)| s)
        .map_err(|e| match e {
            RegistryError::Plugin { source: PluginError::UnknownPlugin(_), .. } if spec.library.is_none() => {
                unknown(spec)
            }
            other => other,
        });
    }
    let config = |why: String| RegistryError::Plugin {
        kind: PluginKind::LevelSampler,
        name: spec.name.clone(),
        source: PluginError::Config(why),
    };
    let params = if spec.params.is_null() { serde_json::json!({}) } else { spec.params.clone() };
    let p: PhaseParams = serde_json::from_value(params).map_err(|e| config(e.to_string()))?;
    let takes = |what: &str, who: &str| config(format!("takes no `{what}` (only `{who}` does)"));
    let designer = match spec.name.as_str() {
        "engineer" => {
            if !p.curriculum.is_null() {
                return Err(takes("curriculum", "a curriculum named as the sampler"));
            }
            if p.designer.is_some() {
                return Err(takes("designer", "phases"));
            }
            let engineer = p.engineer.unwrap_or_else(|| PluginSpec::builtin("embedded"));
            let context = p.context.unwrap_or_else(|| ContextOptions {
                history_json: engineer.name == "rules" && engineer.library.is_none(),
                ..ContextOptions::default()
            });
            context.check_reader(&engineer).map_err(|e| config(e.to_string()))?;
            context.validate().map_err(|e| config(e.to_string()))?;
            Designer::Engineer { engineer: crate::engineer(&engineer)?, context }
        }
        name => {
            if p.engineer.is_some() {
                return Err(takes("engineer", "engineer"));
            }
            if p.context.is_some() {
                return Err(takes("context", "engineer"));
            }
            let curriculum = if name == "phases" {
                if !p.curriculum.is_null() {
                    return Err(config(
                        "takes no `curriculum`: its `designer` is the curriculum's spec, with its params"
                            .into(),
                    ));
                }
                p.designer.ok_or_else(|| {
                    config(
                        "needs a `designer`: the curriculum's spec, {\"name\": ..., \"library\": ...}".into(),
                    )
                })?
            } else {
                if p.designer.is_some() {
                    return Err(takes("designer", "phases"));
                }
                PluginSpec { name: name.to_string(), params: p.curriculum, library: None }
            };
            Designer::Curriculum(crate::curriculum(&curriculum)?)
        }
    };
    let phases = PhaseSampler::new(designer, limits.clone(), p.phase_episodes, p.phases).map_err(|e| {
        RegistryError::Plugin { kind: PluginKind::LevelSampler, name: spec.name.clone(), source: e }
    })?;
    Ok(Box::new(phases))
}

/// An unknown level sampler's name, with the names there are.
fn unknown(spec: &PluginSpec) -> RegistryError {
    let names = |kind| {
        floe_plugins::catalog()
            .iter()
            .filter(|e| e.kind() == kind)
            .map(|e| format!("`{}`", e.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    RegistryError::Plugin {
        kind: PluginKind::LevelSampler,
        name: spec.name.clone(),
        source: PluginError::UnknownPlugin(format!(
            "no level sampler `{}`: the built-ins are {}; a curriculum designs phases ({}), and so do \
             `phases` (any curriculum's spec as `designer`) and `engineer`",
            spec.name,
            names(PluginKind::LevelSampler),
            names(PluginKind::Curriculum)
        )),
    }
}

/// The level-sampling driver `spec` describes: its sampler made here, designing within its
/// space's limits.
///
/// # Errors
/// A space out of range, or a phase designer over a file's or maps' levels (it designs the
/// generator's configuration) ([`RegistryError::Levels`]); what [`level_sampler`] refuses.
pub fn levels(spec: &LevelsSpec) -> Result<Levels, RegistryError> {
    let limits = space_limits(&spec.space)?;
    if spec.source.is_some() && designs_phases(&spec.sampler) {
        return Err(RegistryError::Levels(floe_levels::LevelsError::Config(format!(
            "level sampler `{}` designs the generator's configuration between phases, and `source` takes levels \
             from a file or maps: give it a `space`",
            spec.sampler.name
        ))));
    }
    let sampler = level_sampler(&spec.sampler, &limits)?;
    Ok(spec.build_with(sampler)?)
}

/// The design limits of a level space, checked.
fn space_limits(space: &LevelSpace) -> Result<DesignLimits, RegistryError> {
    space.validate()?;
    Ok(space.limits())
}

#[cfg(test)]
mod tests {
    use floe_plugin_api::LevelRecord;

    use super::*;

    fn limits() -> DesignLimits {
        LevelSpace { agents: [2, 3], size: [5, 7], ..LevelSpace::default() }.limits()
    }

    #[test]
    fn every_curriculum_and_the_engineer_design_phases_and_level_samplers_stay_level_samplers() {
        let levels = [LevelRecord { slot: 0, width: 5, height: 5, agents: 2, ..LevelRecord::default() }; 3];
        for (name, params) in [
            ("fixed", serde_json::json!({"phase_episodes": 4})),
            ("difficulty-scaling", serde_json::json!({})),
            ("sec", serde_json::json!({"curriculum": {}})),
            ("frontier", serde_json::Value::Null),
            ("schedule", serde_json::json!({"phases": 3})),
            ("phases", serde_json::json!({"designer": {"name": "plr"}})),
            ("engineer", serde_json::json!({"engineer": {"name": "rules"}})),
        ] {
            let spec = PluginSpec { name: name.into(), params, library: None };
            assert!(designs_phases(&spec), "{name}");
            let mut s = level_sampler(&spec, &limits()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let plan = s.update(&levels, &[], None).unwrap();
            let config = plan.config.unwrap_or_else(|| panic!("{name}: the first phase's configuration"));
            assert!(config.sizes.iter().all(|c| (5..=7).contains(&c.size)), "{name}: {config:?}");
            assert_eq!(plan.refill, vec![0, 1, 2], "{name}: the pool refilled from it");
        }
        for name in ["uniform", "plr", "learnability"] {
            let spec = PluginSpec::builtin(name);
            assert!(!designs_phases(&spec), "{name}");
            level_sampler(&spec, &limits()).unwrap();
        }
    }

    #[test]
    fn a_phase_sampler_refuses_what_it_does_not_take_and_unknown_names_list_the_known() {
        let make = |name: &str, params: serde_json::Value| {
            level_sampler(&PluginSpec { name: name.into(), params, library: None }, &limits())
                .err()
                .expect("refused")
                .to_string()
        };
        let e = make("phases", serde_json::json!({}));
        assert!(e.contains("needs a `designer`"), "{e}");
        let e = make("fixed", serde_json::json!({"engineer": {"name": "rules"}}));
        assert!(e.contains("takes no `engineer`"), "{e}");
        let e = make("fixed", serde_json::json!({"designer": {"name": "sec"}}));
        assert!(e.contains("takes no `designer`"), "{e}");
        let e = make("fixed", serde_json::json!({"phase_episodes": 0}));
        assert!(e.contains("phase_episodes"), "{e}");
        let e = make("phases", serde_json::json!({"designer": {"name": "nope"}}));
        assert!(e.contains("nope"), "{e}");
        let e = make("nope", serde_json::Value::Null);
        assert!(e.contains("`uniform`") && e.contains("`sec`") && e.contains("engineer"), "{e}");
    }
}
