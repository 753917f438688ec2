//! Plugins that misbehave in each way the host must survive: a panic in a call, a panic in a
//! constructor, an error returned, an invalid configuration returned.

use floe_plugin_api::abi::{root_module, FloePluginLibRef};
use floe_plugin_api::{
    Capabilities, Constructor, Curriculum, Entry, History, PluginError, PluginLibrary, RewardFn, RoundConfig,
    VerdictRecord,
};

struct Panics;

impl RewardFn for Panics {
    fn verdict_rewards(&mut self, records: &[VerdictRecord], _out: &mut [f32]) -> Result<(), PluginError> {
        panic!("panics: {} records are too many", records.len())
    }
}

struct Fails;

impl RewardFn for Fails {
    fn verdict_rewards(&mut self, _: &[VerdictRecord], _: &mut [f32]) -> Result<(), PluginError> {
        Err(PluginError::Failed("fails: this reward always refuses".into()))
    }
}

struct BadConfig;

impl Curriculum for BadConfig {
    fn next_config(&mut self, _: &History) -> Result<RoundConfig, PluginError> {
        let mut c = RoundConfig::round0_default();
        c.sizes[0].hole_ratio = 1.0;
        Ok(c)
    }
}

struct Library;

/// This library panics on purpose, and the host turns each panic into an error value. A cdylib
/// has a standard library and panic hook of its own, which the host's hook does not reach; so the
/// library silences its own hook, to keep the deliberate panics out of the test log. Nothing
/// else changes: the panics unwind to the boundary exactly as before.
fn keep_deliberate_panics_quiet() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::panic::set_hook(Box::new(|_| {})));
}

impl PluginLibrary for Library {
    fn catalog() -> Vec<Entry> {
        keep_deliberate_panics_quiet();
        vec![
            Entry {
                name: "panics",
                version: "0.0.1",
                description: "panics in verdict_rewards",
                capabilities: Capabilities::SCORES_PLANS,
                make: Constructor::Reward(|_| Ok(Box::new(Panics))),
            },
            Entry {
                name: "fails",
                version: "0.0.1",
                description: "returns an error from verdict_rewards",
                capabilities: Capabilities::SCORES_PLANS,
                make: Constructor::Reward(|_| Ok(Box::new(Fails))),
            },
            Entry {
                name: "panics-on-create",
                version: "0.0.1",
                description: "panics in its constructor",
                capabilities: Capabilities::SCORES_PLANS,
                make: Constructor::Reward(|_| panic!("panics-on-create: no instance today")),
            },
            Entry {
                name: "bad-config",
                version: "0.0.1",
                description: "returns a configuration with hole_ratio 1",
                capabilities: Capabilities::NONE,
                make: Constructor::Curriculum(|_| Ok(Box::new(BadConfig))),
            },
        ]
    }
}

#[abi_stable::export_root_module]
pub fn floe_root_module() -> FloePluginLibRef {
    root_module::<Library>()
}
