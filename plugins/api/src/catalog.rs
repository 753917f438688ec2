//! What a plugin library offers: a list of [`Entry`]s (kind, name, version, description, the
//! [`Capabilities`] it declares, and a constructor that takes the plugin's parameters as JSON). A library implements
//! [`PluginLibrary`]; [`crate::abi::root_module`] turns it into the exported abi_stable root
//! module, and the same catalog serves in-process users of the library's `rlib`.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, PluginError};
use crate::levels::LevelSampler;
use crate::traits::{Curriculum, EnvEngineer, RewardFn};

/// The plugin kinds, with the codes both ABIs use (`FLOE_PLUGIN_KIND_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PluginKind {
    /// A [`RewardFn`].
    Reward = 1,
    /// A [`Curriculum`].
    Curriculum = 2,
    /// An [`EnvEngineer`].
    EnvEngineer = 3,
    /// A [`LevelSampler`].
    LevelSampler = 4,
}

impl PluginKind {
    /// The kind's code on the ABI.
    #[must_use]
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The kind of a code, if it is one.
    #[must_use]
    pub fn from_code(code: u32) -> Option<Self> {
        match code {
            1 => Some(PluginKind::Reward),
            2 => Some(PluginKind::Curriculum),
            3 => Some(PluginKind::EnvEngineer),
            4 => Some(PluginKind::LevelSampler),
            _ => None,
        }
    }

    /// The snake-case name (as in JSON).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            PluginKind::Reward => "reward",
            PluginKind::Curriculum => "curriculum",
            PluginKind::EnvEngineer => "env_engineer",
            PluginKind::LevelSampler => "level_sampler",
        }
    }
}

impl std::fmt::Display for PluginKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a plugin declares it can do, beyond the one call its kind requires (a curriculum's
/// `next_config`, an engineer's `design`): a set of flags with the codes both ABIs use
/// (`FLOE_PLUGIN_CAP_*` in `floe_plugin.h`). The host reads them from the plugin's info and
/// never calls for what a plugin did not declare; nothing is found out by trying.
///
/// | flag | code | kind | what |
/// |---|---|---|---|
/// | [`Capabilities::SCORES_PLANS`] | 1 | reward | [`RewardFn::verdict_rewards`]: scores verified plans (what GRPO on plans needs) |
/// | [`Capabilities::SCORES_STEPS`] | 2 | reward | [`RewardFn::step_rewards`]: scores step outcomes |
/// | [`Capabilities::REPLAYS`] | 4 | curriculum | [`Curriculum::sample_replay`]: chooses earlier instances to replay |
///
/// A reward declares at least one of the first two. In JSON (`floe plugin inspect`) it is the
/// list of the flags' names, such as `["scores_plans"]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Capabilities(u32);

impl Capabilities {
    /// Nothing beyond the kind's required call.
    pub const NONE: Capabilities = Capabilities(0);
    /// A reward that scores verified plans.
    pub const SCORES_PLANS: Capabilities = Capabilities(1);
    /// A reward that scores step outcomes.
    pub const SCORES_STEPS: Capabilities = Capabilities(2);
    /// A curriculum that chooses instances to replay.
    pub const REPLAYS: Capabilities = Capabilities(4);
    /// Every flag with its name, in code order.
    pub const ALL: [(Capabilities, &'static str); 3] = [
        (Capabilities::SCORES_PLANS, "scores_plans"),
        (Capabilities::SCORES_STEPS, "scores_steps"),
        (Capabilities::REPLAYS, "replays"),
    ];

    /// Both sets' flags.
    #[must_use]
    pub const fn with(self, other: Capabilities) -> Capabilities {
        Capabilities(self.0 | other.0)
    }

    /// Whether every flag of `other` is declared.
    #[must_use]
    pub const fn contains(self, other: Capabilities) -> bool {
        self.0 & other.0 == other.0
    }

    /// The code on the ABI: the flags' codes or-ed together.
    #[must_use]
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// The flags of a code; bits this host does not know (a newer plugin's) are dropped.
    #[must_use]
    pub const fn from_bits(bits: u32) -> Capabilities {
        Capabilities(bits & 7)
    }

    /// The declared flags' names, in code order.
    #[must_use]
    pub fn names(self) -> Vec<&'static str> {
        Capabilities::ALL.iter().filter(|(c, _)| self.contains(*c)).map(|&(_, n)| n).collect()
    }

    /// Checks that a plugin of `kind` may declare these: a reward scores plans or steps (or
    /// both) and does not replay; a curriculum may replay; an engineer and a level sampler
    /// declare nothing.
    ///
    /// # Errors
    /// What does not fit, in words.
    pub fn check(self, kind: PluginKind) -> Result<(), String> {
        let scores = Capabilities::SCORES_PLANS.with(Capabilities::SCORES_STEPS);
        let allowed = match kind {
            PluginKind::Reward => scores,
            PluginKind::Curriculum => Capabilities::REPLAYS,
            PluginKind::EnvEngineer | PluginKind::LevelSampler => Capabilities::NONE,
        };
        if let Some((_, n)) =
            Capabilities::ALL.iter().find(|(c, _)| self.contains(*c) && !allowed.contains(*c))
        {
            return Err(format!("a {kind} plugin cannot declare {n}"));
        }
        if kind == PluginKind::Reward && self.0 & scores.0 == 0 {
            return Err("a reward plugin must declare scores_plans, scores_steps or both".into());
        }
        Ok(())
    }
}

impl Serialize for Capabilities {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Capabilities {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        names.iter().try_fold(Capabilities::NONE, |acc, n| {
            let flag = Capabilities::ALL.iter().find(|(_, name)| name == n).map(|&(c, _)| c);
            flag.map(|c| acc.with(c))
                .ok_or_else(|| serde::de::Error::custom(format!("unknown capability {n:?}")))
        })
    }
}

/// A plugin's description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginInfo {
    /// Its kind.
    pub kind: PluginKind,
    /// Its name, unique per kind within a library.
    pub name: String,
    /// Its version.
    pub version: String,
    /// One line for people.
    pub description: String,
    /// What it declares it can do.
    pub capabilities: Capabilities,
}

/// Makes a reward function from its parameters (JSON text; empty means defaults).
pub type RewardCtor = fn(&str) -> Result<Box<dyn RewardFn>, PluginError>;
/// Makes a curriculum from its parameters.
pub type CurriculumCtor = fn(&str) -> Result<Box<dyn Curriculum>, PluginError>;
/// Makes an environment engineer from its parameters.
pub type EngineerCtor = fn(&str) -> Result<Box<dyn EnvEngineer>, PluginError>;
/// Makes a level sampler from its parameters.
pub type LevelSamplerCtor = fn(&str) -> Result<Box<dyn LevelSampler>, PluginError>;

/// A constructor, which also tells the kind.
#[derive(Debug, Clone, Copy)]
pub enum Constructor {
    /// A reward function.
    Reward(RewardCtor),
    /// A curriculum.
    Curriculum(CurriculumCtor),
    /// An environment engineer.
    EnvEngineer(EngineerCtor),
    /// A level sampler.
    LevelSampler(LevelSamplerCtor),
}

/// One plugin of a library.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// Name, unique per kind within the library.
    pub name: &'static str,
    /// Version.
    pub version: &'static str,
    /// One line for people.
    pub description: &'static str,
    /// What it can do ([`Capabilities::check`] says what fits its kind).
    pub capabilities: Capabilities,
    /// How to make one.
    pub make: Constructor,
}

impl Entry {
    /// The plugin's kind.
    #[must_use]
    pub fn kind(&self) -> PluginKind {
        match self.make {
            Constructor::Reward(_) => PluginKind::Reward,
            Constructor::Curriculum(_) => PluginKind::Curriculum,
            Constructor::EnvEngineer(_) => PluginKind::EnvEngineer,
            Constructor::LevelSampler(_) => PluginKind::LevelSampler,
        }
    }

    /// The plugin's description.
    #[must_use]
    pub fn info(&self) -> PluginInfo {
        PluginInfo {
            kind: self.kind(),
            name: self.name.to_string(),
            version: self.version.to_string(),
            description: self.description.to_string(),
            capabilities: self.capabilities,
        }
    }
}

/// A library of plugins: implement it on a unit struct and export it with
/// [`crate::abi::root_module`] (see the crate docs).
pub trait PluginLibrary {
    /// Every plugin of the library.
    fn catalog() -> Vec<Entry>;
}

fn unknown(kind: PluginKind, name: &str) -> PluginError {
    PluginError::UnknownPlugin(format!("{kind} {name}"))
}

/// Makes the reward function `name` of a catalog.
///
/// # Errors
/// [`PluginError::UnknownPlugin`], or what the constructor returns.
pub fn new_reward(entries: &[Entry], name: &str, params: &str) -> Result<Box<dyn RewardFn>, PluginError> {
    let make = entries.iter().find_map(|e| match e.make {
        Constructor::Reward(f) if e.name == name => Some(f),
        _ => None,
    });
    make.ok_or_else(|| unknown(PluginKind::Reward, name))?(params)
}

/// Makes the curriculum `name` of a catalog.
///
/// # Errors
/// [`PluginError::UnknownPlugin`], or what the constructor returns.
pub fn new_curriculum(
    entries: &[Entry],
    name: &str,
    params: &str,
) -> Result<Box<dyn Curriculum>, PluginError> {
    let make = entries.iter().find_map(|e| match e.make {
        Constructor::Curriculum(f) if e.name == name => Some(f),
        _ => None,
    });
    make.ok_or_else(|| unknown(PluginKind::Curriculum, name))?(params)
}

/// Makes the environment engineer `name` of a catalog.
///
/// # Errors
/// [`PluginError::UnknownPlugin`], or what the constructor returns.
pub fn new_engineer(
    entries: &[Entry],
    name: &str,
    params: &str,
) -> Result<Box<dyn EnvEngineer>, PluginError> {
    let make = entries.iter().find_map(|e| match e.make {
        Constructor::EnvEngineer(f) if e.name == name => Some(f),
        _ => None,
    });
    make.ok_or_else(|| unknown(PluginKind::EnvEngineer, name))?(params)
}

/// Makes the level sampler `name` of a catalog.
///
/// # Errors
/// [`PluginError::UnknownPlugin`], or what the constructor returns.
pub fn new_level_sampler(
    entries: &[Entry],
    name: &str,
    params: &str,
) -> Result<Box<dyn LevelSampler>, PluginError> {
    let make = entries.iter().find_map(|e| match e.make {
        Constructor::LevelSampler(f) if e.name == name => Some(f),
        _ => None,
    });
    make.ok_or_else(|| unknown(PluginKind::LevelSampler, name))?(params)
}

/// Parses a plugin's parameters: empty text (or only whitespace) or `null` gives the defaults;
/// otherwise a JSON object of the parameter struct (which should reject unknown fields).
///
/// # Errors
/// [`ConfigError::Json`] for malformed JSON or unknown fields.
pub fn parse_params<T: DeserializeOwned + Default>(text: &str) -> Result<T, ConfigError> {
    let t = text.trim();
    if t.is_empty() || t == "null" {
        return Ok(T::default());
    }
    Ok(serde_json::from_str(t)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_fit_their_kind_and_read_back() {
        let plans = Capabilities::SCORES_PLANS;
        let both = plans.with(Capabilities::SCORES_STEPS);
        assert!(both.contains(plans) && !plans.contains(both));
        assert_eq!((both.bits(), Capabilities::REPLAYS.bits()), (3, 4));
        // A newer plugin's unknown flags are dropped, the known ones kept.
        assert_eq!(Capabilities::from_bits(0x105), plans.with(Capabilities::REPLAYS));
        plans.check(PluginKind::Reward).unwrap();
        both.check(PluginKind::Reward).unwrap();
        Capabilities::NONE.check(PluginKind::Curriculum).unwrap();
        Capabilities::REPLAYS.check(PluginKind::Curriculum).unwrap();
        Capabilities::NONE.check(PluginKind::EnvEngineer).unwrap();
        let e = Capabilities::NONE.check(PluginKind::Reward).unwrap_err();
        assert!(e.contains("must declare scores_plans, scores_steps or both"), "{e}");
        let e = Capabilities::REPLAYS.check(PluginKind::Reward).unwrap_err();
        assert_eq!(e, "a reward plugin cannot declare replays");
        assert!(plans.check(PluginKind::Curriculum).is_err());
        assert!(Capabilities::REPLAYS.check(PluginKind::EnvEngineer).is_err());
        let json = serde_json::to_string(&both).unwrap();
        assert_eq!(json, r#"["scores_plans","scores_steps"]"#);
        assert_eq!(serde_json::from_str::<Capabilities>(&json).unwrap(), both);
        assert!(serde_json::from_str::<Capabilities>(r#"["flies"]"#).is_err());
    }
}
