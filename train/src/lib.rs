//! GRPO training for floe (work in progress).

pub use floe_core as core;

#[cfg(test)]
mod tests {
    #[test]
    fn libtorch_runs() {
        let t = tch::Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
        let s = (&t * &t).sum(tch::Kind::Float).double_value(&[]);
        assert!((s - 14.0).abs() < 1e-9);
    }
}
