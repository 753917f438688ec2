//! Batched plan verification on the GPU.

use std::sync::Arc;

use super::context::{base_params, check_binding, check_pool, pack_pool, GpuContext};
use super::{wgsl, Params, GPU_MAX_AGENTS};
use crate::error::EngineError;
use crate::pool::InstancePool;
use crate::verify::batch::PlanBatch;
use crate::verify::{Verifier, VerifyOut};

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
}

impl Verifier for GpuVerifier {
    /// Verifies every plan of the batch (as [`crate::verify::verify_batch`]).
    ///
    /// # Errors
    /// A malformed batch, an output of the wrong length, or a device error.
    fn verify(&self, batch: &PlanBatch, out: &mut [VerifyOut]) -> Result<(), EngineError> {
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
