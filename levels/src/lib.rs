//! # floe-levels
//!
//! Level sampling for floe's batched engine: which levels of the pool its environments play,
//! steered by a level sampler between steps, with new levels from the generator. The engine
//! draws each episode's level from per-slot weights and takes refills of its slots
//! (`floe_core::engine::Engine::set_weights`, `refill`); a sampler
//! ([`floe_plugin_api::LevelSampler`]) turns ended episodes into such weights and refills; this
//! crate is the driver every host calls between the two ([`Levels`]), the source of new levels
//! ([`LevelSource`] over a [`LevelSpace`]), the samplers over generator configurations
//! (`frontier`, `difficulty-scaling` and the environment engineer between phases:
//! [`phases`]), and the settings that name them all ([`LevelsSpec`]).
//!
//! | sampler | from | what |
//! |---|---|---|
//! | `uniform` | floe-plugins | domain randomisation; optionally a new level after `max_plays` episodes |
//! | `plr` | floe-plugins | robust prioritized level replay (the host's scores, or a proxy) |
//! | `learnability` | floe-plugins | Sampling For Learnability: p·(1−p) of recent successes |
//! | `frontier`, `difficulty-scaling` | here, over floe-plugins' curricula | the configuration per map size redesigned between phases |
//! | `engineer` | here, over floe-rounds' context | the environment engineer's configuration between phases |
//! | a library's | a Rust or C plugin | the same ABI as the built-ins |

pub mod driver;
pub mod error;
pub mod phases;
pub mod space;
pub mod spec;

pub use driver::{Applied, Decision, Levels, Shape};
pub use error::LevelsError;
pub use space::{LevelSource, LevelSpace};
pub use spec::{sampler, LevelsSpec, PHASE_SAMPLERS};
