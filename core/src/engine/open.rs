//! Opening an engine from a configuration, the one way every front end does it (the C API, the
//! Python package, the CLI's benchmarks): the backend's choice, the GPU's limits checked before
//! any adapter is looked for, one GPU context shared by the process, and what each refusal
//! means ([`OpenError`]).
//!
//! ```
//! use std::sync::Arc;
//! use floe_core::engine::open::{open, Backend, EngineSpec, OpenError};
//! use floe_core::engine::{InstancePool, Optima};
//! use floe_core::generator::{generate, GeneratorConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let levels = generate(&GeneratorConfig::default().size(5).agents(3).hole_ratio(0.1).wait_ratio(0.5).count(8).seed(7))?;
//! let pool = Arc::new(InstancePool::new(&levels, Optima::AsStored)?);
//! let spec = EngineSpec::from_json_text(r#"{"backend": "cpu", "num_envs": 16, "mode": "soft"}"#)?;
//! assert_eq!(spec.backend, Backend::Cpu);
//! let engine = open(&spec, Arc::clone(&pool))?;
//! assert_eq!(engine.sizes().num_envs, 16);
//! // Out of range is a configuration error on either backend, with or without a GPU.
//! let wide = EngineSpec::from_json_text(r#"{"backend": "gpu", "obs_radius": 8}"#)?;
//! assert!(matches!(open(&wide, pool), Err(OpenError::Config(_) | OpenError::NotBuilt)));
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use super::{CpuEngine, Engine, EnvConfig, InstancePool};

/// Where the environments run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// [`CpuEngine`], the reference; always built.
    #[default]
    Cpu,
    /// The wgpu compute-shader engine (`gpu` feature).
    Gpu,
}

impl FromStr for Backend {
    type Err = OpenError;
    fn from_str(s: &str) -> Result<Self, OpenError> {
        match s {
            "cpu" => Ok(Self::Cpu),
            "gpu" => Ok(Self::Gpu),
            other => Err(OpenError::Config(format!("backend {other:?}: \"cpu\" or \"gpu\""))),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Cpu => "cpu",
            Self::Gpu => "gpu",
        })
    }
}

/// An engine to open: its backend and its [`EnvConfig`]. In JSON, one object: `"backend"`
/// (`"cpu"`, the default, or `"gpu"`) beside the configuration's fields, all optional; unknown
/// fields are errors. (An engine whose steps a reward plugin scores is the plugin registry's
/// spec, which adds `"step_reward"`.)
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineSpec {
    /// Where the environments run.
    pub backend: Backend,
    /// The environments' configuration.
    pub config: EnvConfig,
}

impl EngineSpec {
    /// Reads a spec from a JSON value, which must be an object.
    ///
    /// # Errors
    /// [`OpenError::Config`]: not an object, a backend other than `"cpu"` or `"gpu"`, a field
    /// of the wrong type or unknown.
    pub fn from_json(mut value: serde_json::Value) -> Result<Self, OpenError> {
        let obj = value
            .as_object_mut()
            .ok_or_else(|| OpenError::Config("the engine configuration must be a JSON object".into()))?;
        let backend = match obj.remove("backend") {
            None => Backend::Cpu,
            Some(serde_json::Value::String(s)) => s.parse()?,
            Some(v) => return Err(OpenError::Config(format!("backend {v}: \"cpu\" or \"gpu\""))),
        };
        let config = serde_json::from_value(value)
            .map_err(|e| OpenError::Config(format!("engine configuration: {e}")))?;
        Ok(Self { backend, config })
    }

    /// Reads a spec from JSON text (see [`EngineSpec::from_json`]).
    ///
    /// # Errors
    /// [`OpenError::Config`]: text that is not JSON, or what [`EngineSpec::from_json`] refuses.
    pub fn from_json_text(text: &str) -> Result<Self, OpenError> {
        let value = crate::json::from_str(text)
            .map_err(|e| OpenError::Config(format!("engine configuration: {e}")))?;
        Self::from_json(value)
    }

    /// The spec as one JSON object, every field written (the inverse of
    /// [`EngineSpec::from_json`]).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.config).unwrap_or_else(|_| serde_json::json!({}));
        if let Some(o) = v.as_object_mut() {
            o.insert("backend".into(), serde_json::Value::String(self.backend.to_string()));
        }
        v
    }
}

/// Why an engine did not open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    /// The configuration does not parse, or is out of range for its backend (the GPU's limits
    /// included, found before any adapter is looked for).
    #[error("{0}")]
    Config(String),
    /// No GPU adapter opens, or the device cannot hold the buffers.
    #[error("{0}")]
    Gpu(String),
    /// The GPU backend was asked for in a build without the `gpu` feature.
    #[error("this floe was built without the gpu feature")]
    NotBuilt,
    /// The engine's own memory (its state, its maps) for this configuration cannot be had.
    #[error(transparent)]
    TooLarge(#[from] crate::error::TooLarge),
}

/// A refusal of the CPU engine (or of the GPU engine past its device's limits) as an
/// [`OpenError`]: its memory is [`OpenError::TooLarge`], a device's refusal [`OpenError::Gpu`],
/// anything else the configuration's.
fn open_error(e: super::EngineError) -> OpenError {
    match e {
        super::EngineError::TooLarge(t) => OpenError::TooLarge(t),
        super::EngineError::Gpu(_) => OpenError::Gpu(e.to_string()),
        other => OpenError::Config(other.to_string()),
    }
}

/// Opens the engine `spec` describes, playing `pool`'s instances.
///
/// # Errors
/// See [`OpenError`].
pub fn open(spec: &EngineSpec, pool: Arc<InstancePool>) -> Result<Box<dyn Engine>, OpenError> {
    let cfg = spec.config.clone();
    match spec.backend {
        Backend::Cpu => {
            let engine = CpuEngine::new(cfg, pool).map_err(open_error)?;
            Ok(Box::new(engine))
        }
        Backend::Gpu => open_gpu(cfg, pool),
    }
}

/// Every range error of a configuration and a pool on the GPU (the configuration's own, then
/// the backend's limits): [`OpenError::Config`], found before any adapter is looked for (a host
/// without a GPU gets the same answer as one with). The CPU engine checks its own in `new`.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
fn gpu_limits(cfg: &EnvConfig, pool: &InstancePool) -> Result<(), OpenError> {
    use super::shaders::{GPU_MAX_AGENTS, GPU_MAX_RADIUS};
    cfg.validate().map_err(|e| OpenError::Config(e.to_string()))?;
    if cfg.obs_radius > GPU_MAX_RADIUS {
        return Err(OpenError::Config(format!(
            "obs_radius {} is over the GPU backend's limit of {GPU_MAX_RADIUS}",
            cfg.obs_radius
        )));
    }
    if pool.max_agents() > GPU_MAX_AGENTS {
        return Err(OpenError::Config(format!(
            "the pool has {} agents per environment; the GPU backend takes at most {GPU_MAX_AGENTS}",
            pool.max_agents()
        )));
    }
    Ok(())
}

#[cfg(feature = "gpu")]
fn open_gpu(cfg: EnvConfig, pool: Arc<InstancePool>) -> Result<Box<dyn Engine>, OpenError> {
    use super::gpu::GpuEngine;
    gpu_limits(&cfg, &pool)?;
    let ctx = shared_gpu_context()?;
    // Past the limits above, what the GPU engine refuses is the device's, its host memory's or
    // the configuration's.
    let engine = GpuEngine::new(ctx, cfg, pool).map_err(open_error)?;
    Ok(Box::new(engine))
}

#[cfg(not(feature = "gpu"))]
fn open_gpu(_: EnvConfig, _: Arc<InstancePool>) -> Result<Box<dyn Engine>, OpenError> {
    Err(OpenError::NotBuilt)
}

/// The process's one GPU context, opened on first use; a failure to open it is remembered, so
/// every later call gets the same [`OpenError::Gpu`] without looking again.
///
/// # Errors
/// [`OpenError::Gpu`]: no adapter, or no device on it.
#[cfg(feature = "gpu")]
pub fn shared_gpu_context() -> Result<Arc<super::gpu::GpuContext>, OpenError> {
    use super::gpu::GpuContext;
    use std::sync::OnceLock;
    static CONTEXT: OnceLock<Result<Arc<GpuContext>, String>> = OnceLock::new();
    CONTEXT
        .get_or_init(|| GpuContext::new().map(Arc::new).map_err(|e| e.to_string()))
        .clone()
        .map_err(OpenError::Gpu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{CollisionMode, Optima};
    use crate::generator::{random_instances, GeneratorConfig};

    /// Unsolved boards of `agents` agents on 12×12 (room for 65).
    fn pool(agents: usize) -> Arc<InstancePool> {
        let levels = random_instances(
            &GeneratorConfig::default().size(12).agents(agents).hole_ratio(0.1).count(2).seed(3),
        )
        .unwrap();
        Arc::new(InstancePool::new(&levels, Optima::AsStored).unwrap())
    }

    #[test]
    fn spec_reads_backend_beside_the_config_and_refuses_what_it_does_not_know() {
        let spec =
            EngineSpec::from_json_text(r#"{"backend": "gpu", "num_envs": 3, "mode": "soft"}"#).unwrap();
        assert_eq!(spec.backend, Backend::Gpu);
        assert_eq!((spec.config.num_envs, spec.config.mode), (3, CollisionMode::Soft));
        assert_eq!(EngineSpec::from_json_text("{}").unwrap(), EngineSpec::default());
        assert_eq!(EngineSpec::from_json(spec.to_json()).unwrap(), spec);
        // A step reward is the plugin registry's field, not floe-core's.
        for bad in [
            r#"{"backend": "tpu"}"#,
            r#"{"backend": 1}"#,
            r#"{"num_env": 3}"#,
            "[1]",
            "{",
            r#"{"step_reward": {"name": "shaped"}}"#,
        ] {
            assert!(matches!(EngineSpec::from_json_text(bad), Err(OpenError::Config(_))), "{bad}");
        }
        assert_eq!("gpu".parse::<Backend>().unwrap().to_string(), "gpu");
    }

    #[test]
    fn open_checks_ranges_before_any_device() {
        let cpu =
            EngineSpec { config: EnvConfig { num_envs: 5, ..EnvConfig::default() }, ..EngineSpec::default() };
        assert_eq!(open(&cpu, pool(2)).unwrap().sizes().num_envs, 5);
        let zero =
            EngineSpec { config: EnvConfig { num_envs: 0, ..EnvConfig::default() }, ..EngineSpec::default() };
        assert!(matches!(open(&zero, pool(2)), Err(OpenError::Config(_))));
        // The GPU's limits are configuration errors with or without an adapter; in a build
        // without the feature the answer is that it is not built.
        let wide =
            EngineSpec { backend: Backend::Gpu, config: EnvConfig { obs_radius: 8, ..EnvConfig::default() } };
        let crowd = EngineSpec { backend: Backend::Gpu, ..EngineSpec::default() };
        let built = cfg!(feature = "gpu");
        for (spec, pool) in [(wide, pool(2)), (crowd, pool(65))] {
            let refusal = open(&spec, pool).err();
            assert!(
                matches!(
                    (&refusal, built),
                    (Some(OpenError::Config(_)), true) | (Some(OpenError::NotBuilt), false)
                ),
                "gpu feature {built}: {refusal:?}"
            );
        }
    }
}
