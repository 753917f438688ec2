//! The wgpu backend: the same step, observation and verification as [`super::cpu`], as WGSL
//! compute kernels (`shaders/`). State stays on the device across steps; outputs are read back
//! only when asked ([`GpuEngine::read_outputs`], through staging buffers and `map_async`).
//! Pipelines, layouts and bind groups are built once per engine.
//!
//! Limits of this backend: at most [`GPU_MAX_AGENTS`] agents per environment and an observation
//! radius of at most [`GPU_MAX_RADIUS`].

use std::borrow::Cow;
use std::sync::{mpsc, Arc};

use bytemuck::Zeroable;
use wgpu::util::DeviceExt;

use super::cpu::global_state;
use super::layout::{obs_plane_words, CollisionMode, EnvConfig, EnvInfo, HoleRule, ObsFormat};
use super::{checks, BufferSizes, Engine, EnvState, RawState, StepBuffersMut};
use crate::error::EngineError;
use crate::pool::InstancePool;
use crate::verify::batch::PlanBatch;
use crate::verify::VerifyOut;

pub use super::shaders::{wgsl, Params, GPU_MAX_AGENTS, GPU_MAX_RADIUS, WORKGROUP_SIZE};

/// Words of per-environment status: flags, steps, outcome, failure kind, failure agent, the
/// pool instance of the episode that ended.
const STATUS_WORDS: usize = 6;

/// A device and queue; one per process is enough.
#[derive(Debug, Clone)]
pub struct GpuContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// The adapter's name and backend, for reports.
    pub adapter: String,
}

impl GpuContext {
    /// Opens the first adapter wgpu finds (Vulkan first; Mesa's lavapipe counts).
    ///
    /// # Errors
    /// No adapter, or no device on it.
    pub fn new() -> Result<Self, EngineError> {
        let request = |backends: wgpu::Backends| {
            let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
                backends,
                ..wgpu::InstanceDescriptor::new_without_display_handle()
            });
            pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            }))
        };
        // Vulkan first (GPUs and lavapipe); OpenGL only where no Vulkan adapter exists.
        let adapter = request(wgpu::Backends::VULKAN)
            .or_else(|_| request(wgpu::Backends::GL))
            .map_err(|e| EngineError::Gpu(format!("no GPU adapter: {e}")))?;
        let info = adapter.get_info();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("floe device"),
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| EngineError::Gpu(format!("no device on {}: {e}", info.name)))?;
        Ok(Self { device, queue, adapter: format!("{} ({:?})", info.name, info.backend) })
    }

    fn storage(&self, label: &str, contents: &[u8], extra: wgpu::BufferUsages) -> wgpu::Buffer {
        let mut data = contents.to_vec();
        data.resize(data.len().max(4).next_multiple_of(4), 0);
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: &data,
            usage: wgpu::BufferUsages::STORAGE | extra,
        })
    }

    fn staging(&self, label: &str, size: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4).next_multiple_of(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    fn pipeline(&self, label: &str, src: String, entry: &str) -> wgpu::ComputePipeline {
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

    fn bind_group(
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
    fn read(&self, pairs: &[(&wgpu::Buffer, &wgpu::Buffer)]) -> Result<Vec<Vec<u8>>, EngineError> {
        let whole: Vec<_> = pairs.iter().map(|&(src, staging)| (src, 0, staging, src.size())).collect();
        self.read_ranges(&whole)
    }

    /// Reads `len` bytes from `offset` of buffers back (both multiples of 4, within each buffer),
    /// through their staging buffers.
    fn read_ranges(
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
    fn dispatch(pass: &mut wgpu::ComputePass<'_>, n: usize) {
        let groups = (n as u32).div_ceil(WORKGROUP_SIZE).max(1);
        let (x, y) = if groups <= 65_535 { (groups, 1) } else { (65_535, groups.div_ceil(65_535)) };
        pass.dispatch_workgroups(x, y, 1);
    }
}

/// The pool as one word array: dims | starts | goals | holes | optimal sums of costs.
fn pack_pool(pool: &InstancePool) -> (Vec<u32>, [u32; 4]) {
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
    debug_assert_eq!(words.len(), p * (2 + 2 * pool.max_agents) + p * pool.words);
    (words, [off_starts, off_goals, off_holes, off_opt])
}

fn base_params(pool: &InstancePool, offsets: [u32; 4]) -> Params {
    Params {
        k_max: pool.max_agents as u32,
        words: pool.words as u32,
        pool_len: pool.len() as u32,
        off_starts: offsets[0],
        off_goals: offsets[1],
        off_holes: offsets[2],
        off_opt: offsets[3],
        ..Params::zeroed()
    }
}

/// Refuses a storage buffer the device cannot bind (its `max_storage_buffer_binding_size` or
/// `max_buffer_size`), naming it, instead of a wgpu validation panic when the bind group is made.
fn check_binding(ctx: &GpuContext, what: &str, bytes: usize) -> Result<(), EngineError> {
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

fn check_pool(pool: &InstancePool) -> Result<(), EngineError> {
    if pool.max_agents > GPU_MAX_AGENTS {
        return Err(EngineError::Gpu(format!(
            "{} agents per environment; the GPU backend takes at most {GPU_MAX_AGENTS}",
            pool.max_agents
        )));
    }
    Ok(())
}

struct Buffers {
    params: wgpu::Buffer,
    env: wgpu::Buffer,
    agents: wgpu::Buffer,
    actions: wgpu::Buffer,
    rewards: wgpu::Buffer,
    events: wgpu::Buffer,
    status: wgpu::Buffer,
    final_agents: wgpu::Buffer,
    obs: wgpu::Buffer,
    final_obs: wgpu::Buffer,
}

/// A batch of environments resident on the GPU.
pub struct GpuEngine {
    ctx: Arc<GpuContext>,
    cfg: EnvConfig,
    pool: Arc<InstancePool>,
    sizes: BufferSizes,
    /// Whether the engine has been reset.
    was_reset: bool,
    params: Params,
    buf: Buffers,
    staging: Vec<wgpu::Buffer>,
    step: (wgpu::ComputePipeline, wgpu::BindGroup),
    reset: (wgpu::ComputePipeline, wgpu::BindGroup),
    observe: (wgpu::ComputePipeline, wgpu::BindGroup),
}

impl std::fmt::Debug for GpuEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuEngine").field("adapter", &self.ctx.adapter).field("cfg", &self.cfg).finish()
    }
}

impl GpuEngine {
    /// Uploads the pool and allocates every buffer for `cfg`.
    ///
    /// # Errors
    /// A configuration [`EnvConfig::validate`] refuses, or one over the backend's limits.
    pub fn new(ctx: Arc<GpuContext>, cfg: EnvConfig, pool: Arc<InstancePool>) -> Result<Self, EngineError> {
        cfg.validate()?;
        check_pool(&pool)?;
        if cfg.obs_radius > GPU_MAX_RADIUS {
            return Err(EngineError::Gpu(format!(
                "observation radius {} > {GPU_MAX_RADIUS}",
                cfg.obs_radius
            )));
        }
        let (b, k) = (cfg.num_envs, pool.max_agents);
        let stride = cfg.obs_format.stride(cfg.obs_radius);
        let (words, offsets) = pack_pool(&pool);
        let mut params = base_params(&pool, offsets);
        params.num_envs = b as u32;
        params.stride_words = (stride / 4) as u32;
        params.mode = u32::from(cfg.mode == CollisionMode::Soft);
        params.hole_block = u32::from(cfg.holes == HoleRule::Block);
        params.episode_limit = cfg.episode_limit;
        params.radius = cfg.obs_radius;
        params.obs_bits = u32::from(cfg.obs_format == ObsFormat::Bits);
        params.plane_words = obs_plane_words(cfg.obs_radius) as u32;
        let r = cfg.rewards;
        (params.w_reach, params.w_step, params.w_blocked) = (r.reach_goal, r.step, r.blocked);
        (params.w_off, params.w_hole, params.w_conflict) = (r.off_grid, r.hole, r.conflict);
        check_binding(&ctx, "the observations", b * k * stride)?;
        check_binding(&ctx, "the agents' words", b * k * 4)?;
        check_binding(&ctx, "the instance pool", words.len() * 4)?;
        let rw = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let zeros = |n: usize| vec![0u8; n];
        let buf = Buffers {
            params: ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("floe params"),
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            }),
            env: ctx.storage("floe env state", &zeros(b * 16), rw),
            agents: ctx.storage("floe agents", &zeros(b * k * 4), rw),
            actions: ctx.storage("floe actions", &zeros(b * k), rw),
            rewards: ctx.storage("floe rewards", &zeros(b * k * 4), rw),
            events: ctx.storage("floe events", &zeros(b * k * 4), rw),
            status: ctx.storage("floe status", &zeros(b * STATUS_WORDS * 4), rw),
            final_agents: ctx.storage("floe final agents", &zeros(b * k * 4), rw),
            // With the `none` format the observation buffers are a placeholder word (a binding
            // needs one) that no kernel writes and nothing reads back.
            obs: ctx.storage("floe obs", &zeros((b * k * stride).max(4)), rw),
            final_obs: ctx.storage("floe final obs", &zeros((b * k * stride).max(4)), rw),
        };
        let pool_buf = ctx.storage("floe pool", bytemuck::cast_slice(&words), wgpu::BufferUsages::empty());
        let src = |kernel| wgsl::source(kernel, k, stride / 4);
        let step_p = ctx.pipeline("floe step", src(wgsl::STEP), "step");
        let reset_p = ctx.pipeline("floe reset", src(wgsl::STEP), "reset");
        let observe_p =
            ctx.pipeline("floe observe", wgsl::observe_source(k, stride / 4, pool.max_side()), "observe");
        let step_bg = ctx.bind_group(
            "floe step bindings",
            &step_p,
            &[
                (0, &buf.params),
                (1, &pool_buf),
                (2, &buf.env),
                (3, &buf.agents),
                (4, &buf.actions),
                (5, &buf.rewards),
                (6, &buf.events),
                (7, &buf.status),
                (8, &buf.final_agents),
            ],
        );
        let reset_bg = ctx.bind_group(
            "floe reset bindings",
            &reset_p,
            &[(0, &buf.params), (1, &pool_buf), (2, &buf.env), (3, &buf.agents), (7, &buf.status)],
        );
        let observe_bg = ctx.bind_group(
            "floe observe bindings",
            &observe_p,
            &[
                (0, &buf.params),
                (1, &pool_buf),
                (2, &buf.env),
                (3, &buf.agents),
                (4, &buf.final_agents),
                (5, &buf.status),
                (6, &buf.obs),
                (7, &buf.final_obs),
            ],
        );
        let staging =
            [&buf.obs, &buf.final_obs, &buf.rewards, &buf.events, &buf.status, &buf.env, &buf.agents]
                .iter()
                .map(|b| ctx.staging("floe staging", b.size()))
                .collect();
        let sizes = BufferSizes::new(&cfg, &pool);
        Ok(Self {
            ctx,
            cfg,
            pool,
            sizes,
            was_reset: false,
            params,
            buf,
            staging,
            step: (step_p, step_bg),
            reset: (reset_p, reset_bg),
            observe: (observe_p, observe_bg),
        })
    }

    /// The adapter in use.
    #[must_use]
    pub fn adapter(&self) -> &str {
        &self.ctx.adapter
    }

    /// Invocations of the observation kernel for `n` agent slots: none with the `none` format.
    fn observed(&self, n: usize) -> usize {
        if self.sizes.obs_stride == 0 {
            0
        } else {
            n
        }
    }

    fn write_params(&self) {
        self.ctx.queue.write_buffer(&self.buf.params, 0, bytemuck::bytes_of(&self.params));
    }

    fn run(&self, label: &str, passes: &[(&(wgpu::ComputePipeline, wgpu::BindGroup), usize)], repeat: u32) {
        let mut enc =
            self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: None,
            });
            for _ in 0..repeat {
                for ((pipeline, bind_group), n) in passes.iter().filter(|(_, n)| *n > 0) {
                    pass.set_pipeline(pipeline);
                    pass.set_bind_group(0, bind_group, &[]);
                    GpuContext::dispatch(&mut pass, *n);
                }
            }
        }
        self.ctx.queue.submit([enc.finish()]);
    }

    /// `steps` steps with the engine's random actions (as [`super::CpuEngine::step_random`]) in
    /// one submission, with no host round-trip between them and no read-back; for benchmarks and
    /// tests. [`GpuEngine::read_outputs`] then gives the last step's outputs.
    ///
    /// # Errors
    /// Not reset yet.
    #[cfg(feature = "testing")]
    pub fn step_random(&mut self, steps: u32) -> Result<(), EngineError> {
        if !self.was_reset {
            return Err(EngineError::NotReset("step_random"));
        }
        if self.params.random_actions != 1 {
            self.params.random_actions = 1;
            self.write_params();
        }
        let n = self.cfg.num_envs * self.pool.max_agents;
        self.run("floe steps", &[(&self.step, self.cfg.num_envs), (&self.observe, self.observed(n))], steps);
        Ok(())
    }

    /// Waits until the device has finished all submitted work.
    ///
    /// # Errors
    /// The device was lost.
    pub fn sync(&self) -> Result<(), EngineError> {
        self.ctx
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| EngineError::Gpu(format!("waiting for the device: {e}")))
    }

    /// Reads the last step's outputs into caller-owned buffers (what [`Engine::step`] does after
    /// its dispatch).
    ///
    /// # Errors
    /// Buffers of the wrong size, or a device error.
    pub fn read_outputs(&self, out: StepBuffersMut<'_>) -> Result<(), EngineError> {
        out.check(&self.sizes)?;
        let s = &self.staging;
        let n = out.obs.len();
        // With the `none` format there are no observations to read.
        let reads = [
            (&self.buf.rewards, &s[2]),
            (&self.buf.events, &s[3]),
            (&self.buf.status, &s[4]),
            (&self.buf.obs, &s[0]),
            (&self.buf.final_obs, &s[1]),
        ];
        let bufs = self.ctx.read(&reads[..if n == 0 { 3 } else { 5 }])?;
        if n > 0 {
            out.obs.copy_from_slice(&bufs[3][..n]);
            out.final_obs.copy_from_slice(&bufs[4][..n]);
        }
        let m = out.rewards.len();
        out.rewards.copy_from_slice(&bytemuck::pod_collect_to_vec::<u8, f32>(&bufs[0])[..m]);
        out.events.copy_from_slice(&bytemuck::pod_collect_to_vec::<u8, u32>(&bufs[1])[..m]);
        let status: Vec<u32> = bytemuck::pod_collect_to_vec(&bufs[2]);
        for e in 0..self.cfg.num_envs {
            let st = &status[e * STATUS_WORDS..(e + 1) * STATUS_WORDS];
            out.terminated[e] = u8::from(st[0] & 1 != 0);
            out.truncated[e] = u8::from(st[0] & 2 != 0);
            out.info[e] =
                EnvInfo { episode_steps: st[1], outcome: st[2], failure_kind: st[3], failure_agent: st[4] };
        }
        Ok(())
    }

    fn read_raw_state(&self) -> Result<RawState, EngineError> {
        let s = &self.staging;
        let bufs = self.ctx.read(&[(&self.buf.env, &s[5]), (&self.buf.agents, &s[6])])?;
        let env_words: Vec<u32> = bytemuck::pod_collect_to_vec(&bufs[0]);
        let env =
            env_words.chunks_exact(4).take(self.cfg.num_envs).map(|c| [c[0], c[1], c[2], c[3]]).collect();
        let mut agents: Vec<u32> = bytemuck::pod_collect_to_vec(&bufs[1]);
        agents.truncate(self.cfg.num_envs * self.pool.max_agents);
        Ok(RawState { env, agents })
    }
}

impl Engine for GpuEngine {
    fn backend(&self) -> String {
        format!("gpu ({})", self.ctx.adapter)
    }

    fn config(&self) -> &EnvConfig {
        &self.cfg
    }

    fn pool(&self) -> &Arc<InstancePool> {
        &self.pool
    }

    fn sizes(&self) -> BufferSizes {
        self.sizes
    }

    fn reset(&mut self, seed: u64, out: StepBuffersMut<'_>) -> Result<(), EngineError> {
        checks::reset(&self.sizes, &out)?;
        self.params.seed_lo = seed as u32;
        self.params.seed_hi = (seed >> 32) as u32;
        self.write_params();
        let (b, k) = (self.cfg.num_envs, self.pool.max_agents);
        self.run("floe reset", &[(&self.reset, b), (&self.observe, self.observed(b * k))], 1);
        let n = out.obs.len();
        if n > 0 {
            let bufs = self.ctx.read(&[(&self.buf.obs, &self.staging[0])])?;
            out.obs.copy_from_slice(&bufs[0][..n]);
        }
        self.was_reset = true;
        Ok(())
    }

    fn reset_to(&mut self, env: usize, instance: usize, out: StepBuffersMut<'_>) -> Result<(), EngineError> {
        checks::reset_to(&self.sizes, self.was_reset, self.pool.len(), env, instance, &out)?;
        let k = self.pool.max_agents;
        let dims = self.pool.dims[instance];
        // The environment's words are [dims, t, episode, instance]: its episode counter stays on
        // the device (nothing is read back), the other three are written.
        let base = (env * 16) as u64;
        self.ctx.queue.write_buffer(&self.buf.env, base, bytemuck::cast_slice(&[dims, 0u32]));
        self.ctx.queue.write_buffer(&self.buf.env, base + 12, bytemuck::bytes_of(&(instance as u32)));
        let agents: Vec<u32> = (0..k)
            .map(|a| {
                if a < (dims >> 24) as usize {
                    self.pool.starts[instance * k + a] | crate::words::AGENT_ACTIVE
                } else {
                    0
                }
            })
            .collect();
        self.ctx.queue.write_buffer(&self.buf.agents, (env * k * 4) as u64, bytemuck::cast_slice(&agents));
        let n = self.cfg.num_envs * k;
        if self.sizes.obs_stride == 0 {
            return Ok(());
        }
        self.run("floe observe", &[(&self.observe, n)], 1);
        // Only this environment's observations come back (the stride is a multiple of 4 bytes).
        let part = env * k * self.sizes.obs_stride..(env + 1) * k * self.sizes.obs_stride;
        let bufs = self.ctx.read_ranges(&[(
            &self.buf.obs,
            part.start as u64,
            &self.staging[0],
            part.len() as u64,
        )])?;
        out.obs[part].copy_from_slice(&bufs[0]);
        Ok(())
    }

    fn step(&mut self, actions: &[u8], out: StepBuffersMut<'_>) -> Result<(), EngineError> {
        checks::step(&self.sizes, self.was_reset, actions, &out)?;
        if self.params.random_actions != 0 {
            self.params.random_actions = 0;
            self.write_params();
        }
        let n = actions.len();
        let mut padded = actions.to_vec();
        padded.resize(n.next_multiple_of(4), 0);
        self.ctx.queue.write_buffer(&self.buf.actions, 0, &padded);
        self.run("floe step", &[(&self.step, self.cfg.num_envs), (&self.observe, self.observed(n))], 1);
        self.read_outputs(out)
    }

    fn state(&self) -> Result<EnvState, EngineError> {
        Ok(self.read_raw_state()?.typed())
    }

    fn global_state(&self, out: &mut [u8]) -> Result<(), EngineError> {
        checks::global_state(&self.sizes, out)?;
        global_state(&self.pool, &self.read_raw_state()?, out);
        Ok(())
    }
}

/// Batched plan verification on the GPU; the pool is uploaded once.
pub struct GpuVerifier {
    ctx: Arc<GpuContext>,
    pool: Arc<InstancePool>,
    pool_buf: wgpu::Buffer,
    params: Params,
    pipeline: wgpu::ComputePipeline,
    /// The batch's buffers and bind group, kept between calls and grown (to a power of two)
    /// only when a batch does not fit.
    scratch: std::sync::Mutex<Option<VerifyScratch>>,
}

/// A verifier's device buffers for one batch size (bytes).
struct VerifyScratch {
    plan_bytes: u64,
    result_bytes: u64,
    params: wgpu::Buffer,
    plans: wgpu::Buffer,
    results: wgpu::Buffer,
    staging: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
}

impl VerifyScratch {
    fn new(v: &GpuVerifier, plan_bytes: u64, result_bytes: u64) -> Self {
        let ctx = &v.ctx;
        let buffer = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        let params = buffer(
            "floe verify params",
            std::mem::size_of::<Params>() as u64,
            wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        );
        let plans =
            buffer("floe plans", plan_bytes, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST);
        let results = buffer(
            "floe verify results",
            result_bytes,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        );
        let staging = ctx.staging("floe verify staging", result_bytes);
        let bind_group = ctx.bind_group(
            "floe verify bindings",
            &v.pipeline,
            &[(0, &params), (1, &v.pool_buf), (2, &plans), (3, &results)],
        );
        VerifyScratch { plan_bytes, result_bytes, params, plans, results, staging, bind_group }
    }
}

impl std::fmt::Debug for GpuVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuVerifier").field("adapter", &self.ctx.adapter).finish()
    }
}

impl GpuVerifier {
    /// # Errors
    /// A pool over the backend's limits.
    pub fn new(ctx: Arc<GpuContext>, pool: Arc<InstancePool>) -> Result<Self, EngineError> {
        check_pool(&pool)?;
        let (words, offsets) = pack_pool(&pool);
        check_binding(&ctx, "the instance pool", words.len() * 4)?;
        let pool_buf =
            ctx.storage("floe verify pool", bytemuck::cast_slice(&words), wgpu::BufferUsages::empty());
        let pipeline = ctx.pipeline("floe verify", wgsl::source(wgsl::VERIFY, pool.max_agents, 1), "verify");
        Ok(Self {
            params: base_params(&pool, offsets),
            ctx,
            pool,
            pool_buf,
            pipeline,
            scratch: std::sync::Mutex::new(None),
        })
    }

    /// Verifies every plan of the batch (as [`crate::verify::verify_batch_cpu`]).
    ///
    /// # Errors
    /// A malformed batch, an output of the wrong length, or a device error.
    pub fn verify(&self, batch: &PlanBatch, out: &mut [VerifyOut]) -> Result<(), EngineError> {
        batch.check(&self.pool)?;
        if out.len() != batch.len() {
            return Err(EngineError::BufferSize {
                what: "verify output",
                expected: batch.len(),
                got: out.len(),
            });
        }
        if batch.max_agents > GPU_MAX_AGENTS {
            return Err(EngineError::Gpu(format!("plans for more than {GPU_MAX_AGENTS} agents")));
        }
        let n = batch.len();
        let mut words: Vec<u32> = batch.instance.clone();
        words.extend(&batch.agents);
        let mut moves = batch.moves.clone();
        moves.resize(moves.len().next_multiple_of(4), 0);
        words.extend(bytemuck::pod_collect_to_vec::<u8, u32>(&moves));
        let params = Params {
            num_plans: n as u32,
            plan_len: batch.max_len as u32,
            plan_k: batch.max_agents as u32,
            off_moves: (2 * n) as u32,
            ..self.params
        };
        if n == 0 {
            return Ok(());
        }
        let ctx = &self.ctx;
        check_binding(ctx, "the batch's plans", words.len() * 4)?;
        check_binding(ctx, "the batch's results", n * std::mem::size_of::<VerifyOut>())?;
        let plan_bytes = (words.len() * 4) as u64;
        let result_bytes = (n * std::mem::size_of::<VerifyOut>()) as u64;
        let mut guard =
            self.scratch.lock().map_err(|_| EngineError::Gpu("an earlier verification panicked".into()))?;
        if guard.as_ref().is_none_or(|s| s.plan_bytes < plan_bytes || s.result_bytes < result_bytes) {
            let have = guard.as_ref().map_or((0, 0), |s| (s.plan_bytes, s.result_bytes));
            let grow = |need: u64, had: u64| need.max(had).next_power_of_two().max(4);
            *guard = Some(VerifyScratch::new(self, grow(plan_bytes, have.0), grow(result_bytes, have.1)));
        }
        let scratch = guard.as_ref().expect("made above");
        ctx.queue.write_buffer(&scratch.params, 0, bytemuck::bytes_of(&params));
        ctx.queue.write_buffer(&scratch.plans, 0, bytemuck::cast_slice(&words));
        let mut enc =
            ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("floe verify") });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("floe verify"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &scratch.bind_group, &[]);
            GpuContext::dispatch(&mut pass, n);
        }
        ctx.queue.submit([enc.finish()]);
        let bytes = ctx.read_ranges(&[(&scratch.results, 0, &scratch.staging, result_bytes)])?;
        out.copy_from_slice(&bytemuck::pod_collect_to_vec::<u8, VerifyOut>(&bytes[0])[..n]);
        Ok(())
    }
}
