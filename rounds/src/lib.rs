//! # floe-rounds
//!
//! The paper's round protocol, once, for every trainee: train a round, validate, count the
//! failures by kind per map size, assemble the engineer's context, ask the engineer (or a
//! curriculum), adopt its configuration, and go again. floe's planner on libtorch
//! (`floe-train`), a language model in TRL and one in verl (`floe.rounds`, `floe.verl`, through
//! floe-py) are implementations of [`Trainee`]; the driver, the designers, the run folder and
//! the tables are here, and link no libtorch.
//!
//! | module | what |
//! |---|---|
//! | [`driver`] | [`Trainee`], [`Session`] (a run as the trainee sees it), [`run`]: one run of the protocol |
//! | [`design`] | each round's configuration: round 0, the curriculum, or the engineer's reply adopted within the limits |
//! | [`context`] | the engineer's context: modules F, G, H, S, T, presets V1–V6, the template |
//! | [`limits`] | an engineer's reply read strictly, clamped into the design limits, adopted ([`limits::Adoption`]) |
//! | [`grammar`] | the reply's JSON schema and GBNF grammar from the limits ([`grammar::ReplyFormat`]) |
//! | [`replay`] | the pool of played instances and their statistics, from which curricula replay |
//! | [`data`] | the validation set, generation as a stage, and the seeds of every random choice |
//! | [`verdicts`] | a trainee's answers (plans or written text) verified in batches, as reward records |
//! | [`report`] | a validation counted per agent count × map size, the paper's tables |
//! | [`state`] | stages, evaluations and the run state |
//! | [`folder`] | the run folder: every file written and read in one place |
//! | [`metrics`] | JSON Lines metrics, cut back on resume |
//! | [`stats`] | standard errors clustered by seed and instance, paired differences |
//! | [`experiment`] | the comparison of designs over any trainee ([`experiment::Contest`]): contenders, seeds, suite outcomes, the table |
//! | [`config`] | [`RoundsConfig`], [`ValidationConfig`] |
//! | [`settings`] | [`RunSettings`]: a run's settings in one typed value (a language model's), and [`settings::RunRecord`], its `config.json` |

pub mod config;
pub mod context;
pub mod data;
pub mod design;
pub mod driver;
pub mod error;
pub mod experiment;
pub mod folder;
pub mod grammar;
pub mod limits;
pub mod metrics;
pub mod replay;
pub mod report;
pub mod settings;
pub mod state;
pub mod stats;
pub mod verdicts;

pub use config::{RoundsConfig, ValidationConfig};
pub use design::Designers;
pub use driver::{run, Protocol, RoundData, RunOptions, Session, Trained, Trainee};
pub use error::RoundsError;
pub use folder::RunFolder;
pub use report::{EvalCell, EvalReport, Outcome};
pub use settings::{RunRecord, RunSettings};
pub use state::{RunState, Stage, StageEval};
pub use verdicts::{Answer, DecodedPlan};
