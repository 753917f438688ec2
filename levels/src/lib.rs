//! # floe-levels
//!
//! Level sampling for floe's batched engine: which levels of the pool its environments play,
//! steered by a level sampler between steps, with new levels from the generator. The engine
//! draws each episode's level from per-slot weights and takes refills of its slots
//! (`floe_core::engine::Engine::set_weights`, `refill`); a sampler
//! ([`floe_plugin_api::LevelSampler`]) turns ended episodes into such weights and refills; this
//! crate is the driver every host calls between the two ([`Levels`]), the source of new levels
//! ([`LevelSource`] over a [`LevelSpace`], or a file of levels, MovingAI maps or a host's
//! function: [`origin`]), the settings that name a sampler
//! ([`LevelsSpec`]), and held-out levels played by any policy ([`eval`]: per-level success, cost
//! over the optimum, CVaR). It depends on floe-core and the plugin API only: samplers are made by
//! floe-plugin-registry, the one factory of every plugin (`floe_plugin_registry::levels` makes
//! the driver a spec describes), and reach this crate through the [`LevelSampler`] trait.
//!
//! | sampler | made from | what |
//! |---|---|---|
//! | `uniform` | floe-plugins | every slot alike over a fixed pool by default; with `max_plays` 1, domain randomisation (a new level after each level's episode) |
//! | `plr` | floe-plugins | robust prioritized level replay (the host's scores, or a proxy) |
//! | `learnability` | floe-plugins | Sampling For Learnability: p·(1−p) of recent successes |
//! | `fixed`, `difficulty-scaling`, `sec`, `frontier`, `schedule`, `phases` | the registry, over any curriculum | the configuration per map size redesigned between phases |
//! | `engineer` | the registry, over floe-rounds' context | the environment engineer's configuration between phases |
//! | a library's | a Rust or C plugin | the same ABI as the built-ins |
//!
//! [`LevelSampler`]: floe_plugin_api::LevelSampler

pub mod driver;
pub mod error;
pub mod eval;
pub mod space;
pub mod spec;

pub use driver::state::{LevelsState, STATE_VERSION};
pub use driver::{Applied, Decision, Levels, Shape};
pub use error::LevelsError;
pub use space::origin;
pub use space::origin::{FileSource, LevelFn, MapsSource, SourceSpec};
pub use space::{LevelSource, LevelSpace};
pub use spec::LevelsSpec;
