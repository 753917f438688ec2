//! The device and queue, and what the engine and the verifier both do with them: upload a pool,
//! check that a buffer can be bound.

use std::borrow::Cow;
use std::sync::mpsc;

use bytemuck::Zeroable;
use wgpu::util::DeviceExt;

use super::{Params, GPU_MAX_AGENTS, WORKGROUP_SIZE};
use crate::error::EngineError;
use crate::pool::InstancePool;

/// A device and queue; one per process is enough.
#[derive(Debug, Clone)]
pub struct GpuContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// The adapter's name and backend, for reports.
    pub adapter: String,
}

impl GpuContext {
    /// Opens the first adapter wgpu finds (Vulkan first; Mesa's lavapipe counts; OpenGL only
    /// where no Vulkan adapter opens). `WGPU_BACKEND` (wgpu's own variable, e.g. `vulkan` or
    /// `gl`) narrows the backends tried.
    ///
    /// # Errors
    /// No adapter, or no device on it: [`EngineError::Gpu`] in floe's words, naming the adapters
    /// seen, the Vulkan loader's variables and the container setting to check
    /// ([`no_adapter_message`]).
    pub fn new() -> Result<Self, EngineError> {
        let allowed = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::all());
        let instance_for = |backends: wgpu::Backends| {
            wgpu::Instance::new(wgpu::InstanceDescriptor {
                backends,
                ..wgpu::InstanceDescriptor::new_without_display_handle()
            })
        };
        let mut tried = Vec::new();
        // Vulkan first (GPUs and lavapipe); OpenGL only where no Vulkan adapter exists.
        for (name, backends) in [("Vulkan", wgpu::Backends::VULKAN), ("OpenGL", wgpu::Backends::GL)] {
            if !allowed.contains(backends) {
                continue;
            }
            let instance = instance_for(backends);
            let requested = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            }));
            match requested {
                Ok(adapter) => {
                    let info = adapter.get_info();
                    let (device, queue) =
                        pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
                            label: Some("floe device"),
                            required_limits: adapter.limits(),
                            ..Default::default()
                        }))
                        .map_err(|e| EngineError::Gpu(format!("no device on {}: {e}", info.name)))?;
                    return Ok(Self {
                        device,
                        queue,
                        adapter: format!("{} ({:?})", info.name, info.backend),
                    });
                }
                Err(e) => {
                    let seen = pollster::block_on(instance.enumerate_adapters(backends))
                        .iter()
                        .map(|a| {
                            let i = a.get_info();
                            format!("{} ({:?}, {:?})", i.name, i.backend, i.device_type)
                        })
                        .collect();
                    tried.push(Tried { backend: name, seen, error: e.to_string() });
                }
            }
        }
        let var = |name: &str| std::env::var(name).ok();
        Err(EngineError::Gpu(no_adapter_message(&tried, &var, &installed_icds())))
    }
    pub(super) fn storage(&self, label: &str, contents: &[u8], extra: wgpu::BufferUsages) -> wgpu::Buffer {
        let mut data = contents.to_vec();
        data.resize(data.len().max(4).next_multiple_of(4), 0);
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: &data,
            usage: wgpu::BufferUsages::STORAGE | extra,
        })
    }

    pub(super) fn staging(&self, label: &str, size: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4).next_multiple_of(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    pub(super) fn pipeline(&self, label: &str, src: String, entry: &str) -> wgpu::ComputePipeline {
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(Cow::Owned(src)),
        });
        self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: None,
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
    }

    pub(super) fn bind_group(
        &self,
        label: &str,
        pipeline: &wgpu::ComputePipeline,
        buffers: &[(u32, &wgpu::Buffer)],
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
            .iter()
            .map(|&(binding, b)| wgpu::BindGroupEntry { binding, resource: b.as_entire_binding() })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
    }

    /// Reads buffers back: copies each into its staging buffer, maps them all, returns the bytes.
    pub(super) fn read(&self, pairs: &[(&wgpu::Buffer, &wgpu::Buffer)]) -> Result<Vec<Vec<u8>>, EngineError> {
        let whole: Vec<_> = pairs.iter().map(|&(src, staging)| (src, 0, staging, src.size())).collect();
        self.read_ranges(&whole)
    }

    /// Reads `len` bytes from `offset` of buffers back (both multiples of 4, within each buffer),
    /// through their staging buffers.
    pub(super) fn read_ranges(
        &self,
        parts: &[(&wgpu::Buffer, u64, &wgpu::Buffer, u64)],
    ) -> Result<Vec<Vec<u8>>, EngineError> {
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("floe read-back") });
        for &(src, offset, staging, len) in parts {
            enc.copy_buffer_to_buffer(src, offset, staging, 0, len);
        }
        self.queue.submit([enc.finish()]);
        let (tx, rx) = mpsc::channel();
        for (i, &(_, _, staging, len)) in parts.iter().enumerate() {
            let tx = tx.clone();
            staging.map_async(wgpu::MapMode::Read, ..len, move |r| {
                let _ = tx.send((i, r));
            });
        }
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| EngineError::Gpu(format!("waiting for the device: {e}")))?;
        for _ in parts {
            let (i, r) = rx.recv().map_err(|e| EngineError::Gpu(format!("read-back lost: {e}")))?;
            r.map_err(|e| EngineError::Gpu(format!("mapping buffer {i}: {e}")))?;
        }
        let mut out = Vec::with_capacity(parts.len());
        for &(_, _, staging, len) in parts {
            let view = staging
                .get_mapped_range(..len)
                .map_err(|e| EngineError::Gpu(format!("mapped range: {e}")))?;
            out.push(view.to_vec());
            drop(view);
            staging.unmap();
        }
        Ok(out)
    }

    /// Dispatches `n` invocations of `pipeline` (2-D when more than 65 535 workgroups).
    pub(super) fn dispatch(pass: &mut wgpu::ComputePass<'_>, n: usize) {
        let groups = (n as u32).div_ceil(WORKGROUP_SIZE).max(1);
        let (x, y) = if groups <= 65_535 { (groups, 1) } else { (65_535, groups.div_ceil(65_535)) };
        pass.dispatch_workgroups(x, y, 1);
    }
}

/// One backend tried for an adapter: what it saw and what wgpu said.
#[derive(Debug, Clone)]
pub struct Tried {
    /// "Vulkan" or "OpenGL".
    pub backend: &'static str,
    /// The adapters it listed (name, backend, device type).
    pub seen: Vec<String>,
    /// wgpu's words.
    pub error: String,
}

/// The Vulkan loader's variables that choose, add or hide drivers (ICDs).
pub const VULKAN_ICD_VARIABLES: [&str; 5] = [
    "VK_ICD_FILENAMES",
    "VK_DRIVER_FILES",
    "VK_ADD_DRIVER_FILES",
    "VK_LOADER_DRIVERS_SELECT",
    "VK_LOADER_DRIVERS_DISABLE",
];

/// The Vulkan driver manifests installed where the loader looks on Linux.
fn installed_icds() -> Vec<String> {
    let mut found = Vec::new();
    for dir in ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d"] {
        if let Ok(entries) = std::fs::read_dir(dir) {
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok())
                .map(|e| format!("{dir}/{}", e.file_name().to_string_lossy()))
                .collect();
            names.sort();
            found.extend(names);
        }
    }
    found
}

/// Why no adapter opened, in floe's words: the adapters each backend saw, the Vulkan loader's
/// variables as they are set (`var` reads the environment), the driver manifests installed
/// (`icds`), the container setting NVIDIA's driver needs for Vulkan, `WGPU_BACKEND`, and wgpu's
/// own words.
#[must_use]
pub fn no_adapter_message(tried: &[Tried], var: &dyn Fn(&str) -> Option<String>, icds: &[String]) -> String {
    let shown = |name: &str| var(name).map_or_else(|| format!("{name} (unset)"), |v| format!("{name}={v:?}"));
    let seen: Vec<String> = tried
        .iter()
        .map(|t| {
            let list = if t.seen.is_empty() { "none".to_string() } else { t.seen.join(", ") };
            format!("{}: {list}", t.backend)
        })
        .collect();
    let mut lines = vec![
        "no GPU adapter could be opened".to_string(),
        format!(
            "adapters seen: {}",
            if seen.is_empty() {
                "none (WGPU_BACKEND allows no backend floe uses)".into()
            } else {
                seen.join("; ")
            }
        ),
        format!(
            "Vulkan ICD variables to check: {}",
            VULKAN_ICD_VARIABLES.iter().map(|v| shown(v)).collect::<Vec<_>>().join(", ")
        ),
    ];
    if var("VK_LOADER_DRIVERS_DISABLE").is_some() {
        lines.push(
            "VK_LOADER_DRIVERS_DISABLE hides every driver it matches ('*' hides them all): unset it".into(),
        );
    }
    lines.push(if icds.is_empty() {
        "Vulkan drivers installed: none found in /usr/share/vulkan/icd.d or /etc/vulkan/icd.d (Mesa's \
         lavapipe: apt-get install mesa-vulkan-drivers; or your GPU vendor's driver)"
            .into()
    } else {
        format!("Vulkan drivers installed: {}", icds.join(", "))
    });
    lines.push(format!(
        "in a container, NVIDIA's Vulkan driver is mounted only when NVIDIA_DRIVER_CAPABILITIES includes \
         `graphics` (or is `all`): {}",
        shown("NVIDIA_DRIVER_CAPABILITIES")
    ));
    if let Some(b) = var("WGPU_BACKEND") {
        lines.push(format!("WGPU_BACKEND={b:?} limits the backends tried"));
    }
    for t in tried {
        lines.push(format!("wgpu ({}): {}", t.backend, t.error));
    }
    lines.join("\n  ")
}

/// The pool as one word array: dims | starts | goals | holes | optimal sums of costs | the
/// sampling weights' alias table (two words a slot, [`crate::engine::levels`]; `[ALIAS_ONE, i]`,
/// the unweighted draw, until weights are set). Every region has a fixed size per slot, so a
/// refilled slot's words are written in place ([`PoolLayout::slot_words`]).
pub(super) fn pack_pool(pool: &InstancePool) -> (Vec<u32>, PoolLayout) {
    let p = pool.len();
    let mut words = pool.dims.clone();
    let off_starts = words.len() as u32;
    words.extend(&pool.starts);
    let off_goals = words.len() as u32;
    words.extend(&pool.goals);
    let off_holes = words.len() as u32;
    words.extend(&pool.holes);
    let off_opt = words.len() as u32;
    words.extend(&pool.optimal_soc);
    let off_alias = words.len() as u32;
    words.extend((0..p as u32).flat_map(|i| [crate::engine::levels::ALIAS_ONE, i]));
    debug_assert_eq!(words.len(), p * (4 + 2 * pool.max_agents) + p * pool.words);
    (words, PoolLayout { off_starts, off_goals, off_holes, off_opt, off_alias })
}

/// Where each region of the packed pool begins, in words.
#[derive(Debug, Clone, Copy)]
pub(super) struct PoolLayout {
    pub(super) off_starts: u32,
    pub(super) off_goals: u32,
    pub(super) off_holes: u32,
    pub(super) off_opt: u32,
    pub(super) off_alias: u32,
}

impl PoolLayout {
    /// Slot `i`'s words of every region but the alias table, as (word offset, words) pairs.
    pub(super) fn slot_words(&self, pool: &InstancePool, i: usize) -> [(u32, Vec<u32>); 5] {
        let (k, w) = (pool.max_agents, pool.words);
        [
            (i as u32, vec![pool.dims[i]]),
            (self.off_starts + (i * k) as u32, pool.starts[i * k..(i + 1) * k].to_vec()),
            (self.off_goals + (i * k) as u32, pool.goals[i * k..(i + 1) * k].to_vec()),
            (self.off_holes + (i * w) as u32, pool.holes[i * w..(i + 1) * w].to_vec()),
            (self.off_opt + i as u32, vec![pool.optimal_soc[i]]),
        ]
    }
}

pub(super) fn base_params(pool: &InstancePool, layout: PoolLayout) -> Params {
    Params {
        k_max: pool.max_agents as u32,
        words: pool.words as u32,
        pool_len: pool.len() as u32,
        off_starts: layout.off_starts,
        off_goals: layout.off_goals,
        off_holes: layout.off_holes,
        off_opt: layout.off_opt,
        off_alias: layout.off_alias,
        ..Params::zeroed()
    }
}

/// Refuses a storage buffer the device cannot bind (its `max_storage_buffer_binding_size` or
/// `max_buffer_size`), naming it, instead of a wgpu validation panic when the bind group is made.
pub(super) fn check_binding(ctx: &GpuContext, what: &str, bytes: usize) -> Result<(), EngineError> {
    let limits = ctx.device.limits();
    let max = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
    if bytes as u64 > max {
        return Err(EngineError::Gpu(format!(
            "{what} would take {bytes} bytes; this adapter binds at most {max} bytes per buffer: use fewer \
             environments (or agents, or a smaller observation radius) per engine"
        )));
    }
    Ok(())
}

pub(super) fn check_pool(pool: &InstancePool) -> Result<(), EngineError> {
    if pool.max_agents > GPU_MAX_AGENTS {
        return Err(EngineError::Gpu(format!(
            "{} agents per environment; the GPU backend takes at most {GPU_MAX_AGENTS}",
            pool.max_agents
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_no_adapter_message_names_what_to_check() {
        let tried = [
            Tried { backend: "Vulkan", seen: vec![], error: "No suitable graphics adapter found".into() },
            Tried { backend: "OpenGL", seen: vec!["llvmpipe (Gl, Cpu)".into()], error: "no GL".into() },
        ];
        let env = |name: &str| match name {
            "VK_LOADER_DRIVERS_DISABLE" => Some("*".to_string()),
            "NVIDIA_DRIVER_CAPABILITIES" => Some("compute,utility".to_string()),
            _ => None,
        };
        let m = no_adapter_message(&tried, &env, &["/usr/share/vulkan/icd.d/lvp_icd.x86_64.json".into()]);
        for want in [
            "no GPU adapter could be opened",
            "adapters seen: Vulkan: none; OpenGL: llvmpipe (Gl, Cpu)",
            "VK_ICD_FILENAMES (unset)",
            "VK_LOADER_DRIVERS_DISABLE=\"*\"",
            "hides every driver it matches",
            "lvp_icd.x86_64.json",
            "NVIDIA_DRIVER_CAPABILITIES includes `graphics`",
            "NVIDIA_DRIVER_CAPABILITIES=\"compute,utility\"",
            "wgpu (Vulkan): No suitable graphics adapter found",
        ] {
            assert!(m.contains(want), "{want:?} not in:\n{m}");
        }
        let none = no_adapter_message(&[], &|_| None, &[]);
        assert!(
            none.contains("WGPU_BACKEND allows no backend") && none.contains("mesa-vulkan-drivers"),
            "{none}"
        );
        assert!(!none.contains("hides every driver"));
    }
}
