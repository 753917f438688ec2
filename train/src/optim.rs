//! AdamW with decoupled weight decay and global-norm gradient clipping, over a policy's named
//! variables, with a state that goes into checkpoints (so a resumed run continues exactly).

use serde::{Deserialize, Serialize};
use tch::{Kind, Tensor};

/// AdamW's hyperparameters (serde; defaults in brackets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdamConfig {
    /// First-moment decay \[0.9\].
    pub beta1: f64,
    /// Second-moment decay \[0.999\].
    pub beta2: f64,
    /// Added to the root of the second moment \[1e-8\].
    pub eps: f64,
    /// Decoupled weight decay per step, times the learning rate \[0.01\].
    pub weight_decay: f64,
}

impl Default for AdamConfig {
    fn default() -> Self {
        AdamConfig { beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.01 }
    }
}

/// AdamW over named parameters (sorted by name, so every reduction runs in one order).
#[derive(Debug)]
pub struct AdamW {
    params: Vec<(String, Tensor)>,
    m: Vec<Tensor>,
    v: Vec<Tensor>,
    /// Steps taken.
    pub steps: i64,
    pub config: AdamConfig,
}

impl AdamW {
    /// An optimizer with zero moments.
    #[must_use]
    pub fn new(params: Vec<(String, Tensor)>, config: AdamConfig) -> Self {
        let m = params.iter().map(|(_, p)| p.zeros_like()).collect();
        let v = params.iter().map(|(_, p)| p.zeros_like()).collect();
        AdamW { params, m, v, steps: 0, config }
    }

    /// Clears every gradient.
    pub fn zero_grad(&mut self) {
        for (_, p) in &mut self.params {
            let mut g = p.grad();
            if g.defined() {
                let _ = g.zero_();
            }
        }
    }

    /// The variables' gradients, in the optimizer's order (undefined where a variable has none).
    fn grads(&self) -> Vec<Tensor> {
        self.params.iter().map(|(_, p)| p.grad()).collect()
    }

    /// Scales the gradients so that their global L2 norm is at most `max_norm` (no scaling when
    /// `max_norm` is 0 or not finite) and returns the norm before clipping.
    pub fn clip_grad_norm(&mut self, max_norm: f64) -> f64 {
        clip(&mut self.grads(), max_norm)
    }

    /// One AdamW step at learning rate `lr`.
    pub fn step(&mut self, lr: f64) {
        let grads = self.grads();
        self.step_on(&grads, lr);
    }

    /// One step on gradients given apart from the variables' own (one per variable, in the
    /// order of [`AdamW::new`]'s; an undefined tensor where a variable has none), clipped
    /// first as [`AdamW::clip_grad_norm`] clips; returns the norm before clipping. The
    /// variables' own gradients are left as they are.
    ///
    /// # Panics
    /// When `grads` has another length than the variables.
    pub fn step_with(&mut self, grads: &mut [Tensor], lr: f64, max_norm: f64) -> f64 {
        assert_eq!(grads.len(), self.params.len(), "one gradient per variable");
        let norm = clip(grads, max_norm);
        self.step_on(grads, lr);
        norm
    }

    fn step_on(&mut self, grads: &[Tensor], lr: f64) {
        self.steps += 1;
        let c = &self.config;
        let t = self.steps as i32;
        let (bc1, bc2) = (1.0 - c.beta1.powi(t), 1.0 - c.beta2.powi(t));
        tch::no_grad(|| {
            for ((((_, p), m), v), g) in self.params.iter_mut().zip(&mut self.m).zip(&mut self.v).zip(grads) {
                if !g.defined() {
                    continue;
                }
                let _ = m.g_mul_scalar_(c.beta1).g_add_(&(g * (1.0 - c.beta1)));
                let _ = v.g_mul_scalar_(c.beta2).g_add_(&(g.square() * (1.0 - c.beta2)));
                if c.weight_decay > 0.0 {
                    let _ = p.g_mul_scalar_(1.0 - lr * c.weight_decay);
                }
                let denom = (&*v / bc2).sqrt() + c.eps;
                let _ = p.g_sub_(&((&*m / bc1) / denom * lr));
            }
        });
    }

    /// The moments as named tensors (`adam.m.<name>`, `adam.v.<name>`).
    #[must_use]
    pub fn state(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::with_capacity(2 * self.params.len());
        for (((n, _), m), v) in self.params.iter().zip(&self.m).zip(&self.v) {
            out.push((format!("adam.m.{n}"), m.shallow_clone()));
            out.push((format!("adam.v.{n}"), v.shallow_clone()));
        }
        out
    }

    /// Restores the moments from [`AdamW::state`]'s tensors and the step count.
    ///
    /// # Errors
    /// A missing tensor or one of the wrong shape, by name.
    pub fn load_state(&mut self, tensors: &[(String, Tensor)], steps: i64) -> Result<(), String> {
        let find = |name: &str| tensors.iter().find(|(n, _)| n == name).map(|(_, t)| t);
        for (((n, p), m), v) in self.params.iter().zip(&mut self.m).zip(&mut self.v) {
            for (prefix, slot) in [("adam.m.", &mut *m), ("adam.v.", &mut *v)] {
                let key = format!("{prefix}{n}");
                let t = find(&key).ok_or_else(|| format!("checkpoint has no {key}"))?;
                if t.size() != p.size() {
                    return Err(format!("{key}: shape {:?}, expected {:?}", t.size(), p.size()));
                }
                tch::no_grad(|| slot.copy_(t));
            }
        }
        self.steps = steps;
        Ok(())
    }
}

/// Scales `grads` in place so that their global L2 norm is at most `max_norm` (no scaling when
/// `max_norm` is 0 or not finite); returns the norm before. Undefined tensors count as none.
fn clip(grads: &mut [Tensor], max_norm: f64) -> f64 {
    tch::no_grad(|| {
        let mut sq = 0.0;
        for g in grads.iter().filter(|g| g.defined()) {
            sq += g.square().sum(Kind::Double).double_value(&[]);
        }
        let norm = sq.sqrt();
        if max_norm > 0.0 && max_norm.is_finite() && norm > max_norm {
            let s = max_norm / (norm + 1e-6);
            for g in grads.iter_mut().filter(|g| g.defined()) {
                let _ = g.g_mul_scalar_(s);
            }
        }
        norm
    })
}

/// The sum per variable of the parts' gradients, in part order (undefined where no part has
/// one).
pub(crate) fn sum_grads(parts: impl IntoIterator<Item = Vec<Tensor>>) -> Vec<Tensor> {
    let mut sum: Vec<Tensor> = Vec::new();
    for grads in parts {
        if sum.is_empty() {
            sum = grads;
            continue;
        }
        for (s, g) in sum.iter_mut().zip(grads) {
            if !g.defined() {
                continue;
            }
            if s.defined() {
                let _ = s.g_add_(&g);
            } else {
                *s = g;
            }
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_steps_by_hand() {
        // One parameter x = 1, loss = x² (gradient 2x), lr 0.1, no weight decay.
        let x = Tensor::from_slice(&[1.0f32]).set_requires_grad(true);
        let cfg = AdamConfig { weight_decay: 0.0, ..AdamConfig::default() };
        let mut opt = AdamW::new(vec![("x".into(), x.shallow_clone())], cfg);
        for _ in 0..2 {
            opt.zero_grad();
            (&x * &x).sum(Kind::Float).backward();
            opt.step(0.1);
        }
        // Step 1: g = 2, m̂ = 2, v̂ = 4, x = 1 − 0.1·2/2 = 0.9.
        // Step 2: g = 1.8, m = 0.9·0.2 + 0.1·1.8 = 0.36, v = 0.999·0.004 + 0.001·3.24 = 0.007236,
        // m̂ = 0.36/0.19, v̂ = 0.007236/0.001999, x = 0.9 − 0.1·m̂/√v̂ = 0.8004124.
        let got = x.double_value(&[0]);
        let (m_hat, v_hat) = (0.36 / 0.19, 0.007236 / (1.0 - 0.999f64.powi(2)));
        assert!((got - (0.9 - 0.1 * m_hat / v_hat.sqrt())).abs() < 1e-6, "{got}");
        assert!((got - 0.8004124).abs() < 1e-6);
        // Weight decay alone: lr · wd shrinks the weight; a zero gradient leaves Adam's part at 0.
        let y = Tensor::from_slice(&[2.0f32]).set_requires_grad(true);
        let mut opt = AdamW::new(vec![("y".into(), y.shallow_clone())], AdamConfig::default());
        opt.zero_grad();
        (&y * 0.0).sum(Kind::Float).backward();
        opt.step(0.5);
        assert!((y.double_value(&[0]) - 2.0 * (1.0 - 0.5 * 0.01)).abs() < 1e-6);
    }

    #[test]
    fn clipping_scales_to_the_max_norm() {
        let x = Tensor::from_slice(&[0.0f32, 0.0]).set_requires_grad(true);
        let mut opt = AdamW::new(vec![("x".into(), x.shallow_clone())], AdamConfig::default());
        (&x * Tensor::from_slice(&[3.0f32, 4.0])).sum(Kind::Float).backward();
        assert!((opt.clip_grad_norm(1.0) - 5.0).abs() < 1e-9);
        let g = x.grad();
        assert!((g.double_value(&[0]) - 0.6).abs() < 1e-5 && (g.double_value(&[1]) - 0.8).abs() < 1e-5);
        assert!((opt.clip_grad_norm(0.0) - 1.0).abs() < 1e-5);
    }
}
