//! What a plugin library offers: a list of [`Entry`]s (kind, name, version, description and a
//! constructor that takes the plugin's parameters as JSON). A library implements
//! [`PluginLibrary`]; [`crate::abi::root_module`] turns it into the exported abi_stable root
//! module, and the same catalog serves in-process users of the library's `rlib`.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, PluginError};
use crate::traits::{Curriculum, EnvEngineer, RewardFn};

/// The three plugin kinds, with the codes both ABIs use (`FLOE_PLUGIN_KIND_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PluginKind {
    /// A [`RewardFn`].
    Reward = 1,
    /// A [`Curriculum`].
    Curriculum = 2,
    /// An [`EnvEngineer`].
    EnvEngineer = 3,
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
        }
    }
}

impl std::fmt::Display for PluginKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
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
}

/// Makes a reward function from its parameters (JSON text; empty means defaults).
pub type RewardCtor = fn(&str) -> Result<Box<dyn RewardFn>, PluginError>;
/// Makes a curriculum from its parameters.
pub type CurriculumCtor = fn(&str) -> Result<Box<dyn Curriculum>, PluginError>;
/// Makes an environment engineer from its parameters.
pub type EngineerCtor = fn(&str) -> Result<Box<dyn EnvEngineer>, PluginError>;

/// A constructor, which also tells the kind.
#[derive(Debug, Clone, Copy)]
pub enum Constructor {
    /// A reward function.
    Reward(RewardCtor),
    /// A curriculum.
    Curriculum(CurriculumCtor),
    /// An environment engineer.
    EnvEngineer(EngineerCtor),
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
