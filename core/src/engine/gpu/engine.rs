//! A batch of environments resident on the GPU.

use std::sync::Arc;

use wgpu::util::DeviceExt;

use super::context::{base_params, check_binding, check_pool, pack_pool, GpuContext, PoolLayout};
use super::{wgsl, Params, GPU_MAX_RADIUS};
use crate::engine::config::{obs_plane_words, CollisionMode, EnvConfig, HoleRule, ObsFormat};
use crate::engine::cpu::global_state;
use crate::engine::hash::env_seed;
use crate::engine::levels::{level_pick, LevelWeights};
use crate::engine::records::EnvInfo;
use crate::engine::{
    check_env_outputs, checks, BufferSizes, Engine, EngineId, EnvState, Expected, RawState, Refilled,
    StepBuffersMut,
};
use crate::error::EngineError;
use crate::instance::Instance;
use crate::pool::{InstancePool, Optima};
use crate::words::AGENT_ACTIVE;

/// Words of per-environment status (see [`super::super::shaders::STATUS_WORDS`]).
const STATUS_WORDS: usize = super::super::shaders::STATUS_WORDS as usize;

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
    /// The packed pool (its slots rewritten by refills, its alias table by new weights).
    pool: wgpu::Buffer,
}

/// A batch of environments resident on the GPU.
pub struct GpuEngine {
    ctx: Arc<GpuContext>,
    cfg: EnvConfig,
    pool: Arc<InstancePool>,
    sizes: BufferSizes,
    /// Whether the engine has been reset.
    was_reset: bool,
    /// The seed of the last reset.
    seed: u64,
    /// The sampling weights, if set (their alias table is in the pool buffer).
    weights: Option<LevelWeights>,
    layout: PoolLayout,
    params: Params,
    buf: Buffers,
    staging: Vec<wgpu::Buffer>,
    step: (wgpu::ComputePipeline, wgpu::BindGroup),
    reset: (wgpu::ComputePipeline, wgpu::BindGroup),
    observe: (wgpu::ComputePipeline, wgpu::BindGroup),
    id: EngineId,
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
        let (words, layout) = pack_pool(&pool);
        let mut params = base_params(&pool, layout);
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
        // Every buffer against the device's limits, with checked arithmetic, before the host
        // allocates its zeros.
        let sizes = BufferSizes::checked(&cfg, &pool)?;
        let bytes = |factors: &[usize]| crate::error::checked_product(factors).unwrap_or(usize::MAX);
        check_binding(&ctx, "the observations", sizes.obs)?;
        check_binding(&ctx, "the agents' words", bytes(&[sizes.agents, 4]))?;
        check_binding(&ctx, "the environments' state", bytes(&[b, 16]))?;
        check_binding(&ctx, "the environments' status", bytes(&[b, STATUS_WORDS, 4]))?;
        check_binding(&ctx, "the instance pool", bytes(&[words.len(), 4]))?;
        let rw = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let zeros = |n: usize| vec![0u8; n];
        let pool_buf = ctx.storage("floe pool", bytemuck::cast_slice(&words), wgpu::BufferUsages::COPY_DST);
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
            pool: pool_buf,
        };
        let pool_buf = &buf.pool;
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
                (1, pool_buf),
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
            &[(0, &buf.params), (1, pool_buf), (2, &buf.env), (3, &buf.agents), (7, &buf.status)],
        );
        let observe_bg = ctx.bind_group(
            "floe observe bindings",
            &observe_p,
            &[
                (0, &buf.params),
                (1, pool_buf),
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
        Ok(Self {
            ctx,
            cfg,
            pool,
            sizes,
            was_reset: false,
            seed: 0,
            weights: None,
            layout,
            params,
            buf,
            staging,
            step: (step_p, step_bg),
            reset: (reset_p, reset_bg),
            observe: (observe_p, observe_bg),
            id: EngineId::next(),
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
            out.info[e] = self.info_of(st);
        }
        Ok(())
    }

    /// The `info` record an environment's status words hold.
    fn info_of(&self, st: &[u32]) -> EnvInfo {
        EnvInfo {
            episode_steps: st[1],
            outcome: st[2],
            failure_kind: st[3],
            failure_agent: st[4],
            instance: st[5],
            generation: self.pool.generation(st[5] as usize),
            episode_return: f32::from_bits(st[6]),
            agents_on_goal: st[7],
        }
    }

    /// Runs the observation kernel over the current state only: the final observations of the
    /// last step stay as the step left them (what `reset_to` and `refill` need).
    fn observe_current(&mut self) {
        let n = self.cfg.num_envs * self.pool.max_agents;
        self.params.skip_final = 1;
        self.write_params();
        self.run("floe observe", &[(&self.observe, n)], 1);
        self.params.skip_final = 0;
        self.write_params();
    }

    /// Sets environment `env`'s running return to 0.
    fn zero_return(&self, env: usize) {
        let at = ((env * STATUS_WORDS + 8) * 4) as u64;
        self.ctx.queue.write_buffer(&self.buf.status, at, bytemuck::bytes_of(&0u32));
    }

    /// Puts environment `env` on pool slot `instance`, episode `episode`, step 0 (the device's
    /// words of it; no kernel runs).
    fn place(&self, env: usize, instance: usize, episode: u32) {
        let k = self.pool.max_agents;
        let dims = self.pool.dims[instance];
        let words = [dims, 0u32, episode, instance as u32];
        self.ctx.queue.write_buffer(&self.buf.env, (env * 16) as u64, bytemuck::cast_slice(&words));
        let agents: Vec<u32> = (0..k)
            .map(|a| {
                if a < (dims >> 24) as usize {
                    self.pool.starts[instance * k + a] | AGENT_ACTIVE
                } else {
                    0
                }
            })
            .collect();
        self.ctx.queue.write_buffer(&self.buf.agents, (env * k * 4) as u64, bytemuck::cast_slice(&agents));
        self.zero_return(env);
    }

    /// Checks the outputs of the environments `envs` against what the device holds of the last
    /// call (see [`Engine::check_outputs`]): its observations and status words. `returns`: the
    /// running returns to compare (`None`: the device's), `check_return` false leaves them out.
    fn check_envs(
        &self,
        envs: &[usize],
        out: &StepBuffersMut<'_>,
        returns: Option<&[f32]>,
        check_return: bool,
    ) -> Result<(), EngineError> {
        if envs.is_empty() {
            return Ok(());
        }
        let state = self.read_raw_state()?;
        let s = &self.staging;
        let per_env = self.pool.max_agents * self.sizes.obs_stride;
        let reads = [(&self.buf.status, &s[4]), (&self.buf.obs, &s[0])];
        let bufs = self.ctx.read(&reads[..if per_env == 0 { 1 } else { 2 }])?;
        let status: Vec<u32> = bytemuck::pod_collect_to_vec(&bufs[0]);
        for &e in envs {
            let st = &status[e * STATUS_WORDS..(e + 1) * STATUS_WORDS];
            let running = (state.env[e][1] > 0).then(|| EnvInfo {
                episode_return: returns.map_or(f32::from_bits(st[6]), |r| r[e]),
                ..self.info_of(st)
            });
            let obs = if per_env == 0 { &[][..] } else { &bufs[1][e * per_env..(e + 1) * per_env] };
            check_env_outputs(e, &Expected { obs, running, return_checked: check_return }, out, per_env)?;
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
        self.seed = seed;
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
        // The new episode's return starts at 0.
        self.zero_return(env);
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
        if self.sizes.obs_stride == 0 {
            return Ok(());
        }
        self.observe_current();
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

    fn set_weights(&mut self, weights: Option<&[f64]>) -> Result<(), EngineError> {
        let weights = weights.map(|w| LevelWeights::new(w, self.pool.len())).transpose()?;
        let table = weights.as_ref().map_or(&[][..], LevelWeights::table);
        // Only a new table is uploaded: equal weights (or none) draw without one.
        if !table.is_empty() {
            let at = u64::from(self.layout.off_alias) * 4;
            self.ctx.queue.write_buffer(&self.buf.pool, at, bytemuck::cast_slice(table));
        }
        let weighted = u32::from(!table.is_empty());
        if self.params.weighted != weighted {
            self.params.weighted = weighted;
            self.write_params();
        }
        self.weights = weights;
        Ok(())
    }

    fn weights(&self) -> Option<&[f64]> {
        self.weights.as_ref().map(LevelWeights::weights)
    }

    fn refill(
        &mut self,
        slots: &[usize],
        levels: &[Instance],
        mut out: StepBuffersMut<'_>,
    ) -> Result<Refilled, EngineError> {
        checks::refill(&self.sizes, self.was_reset, &self.pool, slots, levels, &out)?;
        let state = self.read_raw_state()?;
        let moves = crate::engine::refill_moves(&state.env, self.pool.len(), slots);
        let moved: Vec<usize> = moves.iter().map(|m| m.env).collect();
        self.check_envs(&moved, &out, None, false)?;
        let pool = Arc::make_mut(&mut self.pool);
        for (&slot, level) in slots.iter().zip(levels) {
            pool.replace(slot, level, Optima::AsStored)?;
        }
        for &slot in slots {
            for (at, words) in self.layout.slot_words(&self.pool, slot) {
                self.ctx.queue.write_buffer(&self.buf.pool, u64::from(at) * 4, bytemuck::cast_slice(&words));
            }
        }
        let table = self.weights.as_ref().map_or(&[][..], LevelWeights::table);
        let len = self.pool.len() as u32;
        let per_env = self.pool.max_agents * self.sizes.obs_stride;
        let mut done = Refilled::default();
        for m in &moves {
            let [_, _, episode, instance] = state.env[m.env];
            if m.cut {
                crate::engine::cut_episode(&mut out, m.env, per_env);
                let seed = env_seed(self.seed, m.env as u32);
                self.place(m.env, level_pick(seed, episode + 1, len, table) as usize, episode + 1);
                done.truncated += 1;
            } else {
                self.place(m.env, instance as usize, episode);
                done.restarted += 1;
            }
        }
        if per_env > 0 && !moves.is_empty() {
            // The final observations of the last step stay as they are (the slots some of them
            // played hold other levels now); a truncated episode's is the one it ended with.
            for m in moves.iter().filter(|m| m.cut) {
                let part = m.env * per_env..(m.env + 1) * per_env;
                self.ctx.queue.write_buffer(&self.buf.final_obs, part.start as u64, &out.final_obs[part]);
            }
            self.observe_current();
            let bufs = self.ctx.read(&[(&self.buf.obs, &self.staging[0])])?;
            for m in &moves {
                let part = m.env * per_env..(m.env + 1) * per_env;
                out.obs[part.clone()].copy_from_slice(&bufs[0][part]);
            }
        }
        Ok(done)
    }

    fn id(&self) -> EngineId {
        self.id
    }

    fn was_reset(&self) -> bool {
        self.was_reset
    }

    fn check_outputs(&self, out: &StepBuffersMut<'_>, returns: Option<&[f32]>) -> Result<(), EngineError> {
        checks::outputs(&self.sizes, self.was_reset, out, returns)?;
        let all: Vec<usize> = (0..self.sizes.num_envs).collect();
        self.check_envs(&all, out, returns, true)
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
