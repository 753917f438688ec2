//! The PPO policy: one actor-critic shared by every agent, reading that agent's own window (its
//! three planes of `(2r+1)²` cells: holes and cells off the grid, other agents, its goal, which
//! shows on the window's border when it lies outside): two tanh layers, a head of five action
//! logits and a value. No parameter depends on the board's size or the agent's index, so one
//! policy plays boards of any size with any number of agents.

use tch::nn::{self, Module};
use tch::{Device, Kind, Tensor};

/// Orthogonal initialisation with gain `gain` and zero biases (CleanRL's `layer_init`).
fn layer(p: nn::Path<'_>, i: i64, o: i64, gain: f64) -> nn::Linear {
    let cfg = nn::LinearConfig {
        ws_init: nn::Init::Orthogonal { gain },
        bs_init: Some(nn::Init::Const(0.0)),
        bias: true,
    };
    nn::linear(p, i, o, cfg)
}

/// The shared actor-critic.
#[derive(Debug)]
pub struct ActorCritic {
    l1: nn::Linear,
    l2: nn::Linear,
    pi: nn::Linear,
    v: nn::Linear,
    /// Inputs per agent: `3 · (2r+1)²`.
    pub inputs: i64,
}

impl ActorCritic {
    /// A policy for windows of radius `radius` with `hidden` units a layer, its variables in `vs`.
    #[must_use]
    pub fn new(vs: &nn::VarStore, radius: u32, hidden: i64) -> Self {
        let w = i64::from(2 * radius + 1);
        let inputs = 3 * w * w;
        let root = vs.root();
        ActorCritic {
            l1: layer(&root / "l1", inputs, hidden, 2f64.sqrt()),
            l2: layer(&root / "l2", hidden, hidden, 2f64.sqrt()),
            pi: layer(&root / "pi", hidden, 5, 0.01),
            v: layer(&root / "v", hidden, 1, 1.0),
            inputs,
        }
    }

    /// Logits `[n, 5]` and values `[n]` of `n` agents' windows (`[n, inputs]`, 0/1 floats).
    pub fn forward(&self, x: &Tensor) -> (Tensor, Tensor) {
        let h = self.l2.forward(&self.l1.forward(x).tanh()).tanh();
        (self.pi.forward(&h), self.v.forward(&h).squeeze_dim(-1))
    }

    /// One action a row, sampled from the policy's `logits` (`[n, 5]`): training and evaluation
    /// draw them alike.
    pub fn sample(logits: &Tensor) -> Tensor {
        logits.softmax(-1, Kind::Float).multinomial(1, true).squeeze_dim(-1)
    }

    /// Writes `actions` (one a row of `rows`, as [`ActorCritic::sample`] draws them) into the
    /// engine's action buffer `out` (one byte an agent row).
    ///
    /// # Errors
    /// A tensor that does not read as integers.
    pub fn put_actions(rows: &[i64], actions: &Tensor, out: &mut [u8]) -> Result<(), tch::TchError> {
        for (&row, a) in rows.iter().zip(Vec::<i64>::try_from(actions)?) {
            out[row as usize] = a as u8;
        }
        Ok(())
    }

    /// The agent rows of `obs` (`stride` bytes each) that hold an agent in play: those whose goal
    /// plane has its mark (an agent off the board or done has none).
    #[must_use]
    pub fn rows_in_play(&self, obs: &[u8], stride: usize) -> Vec<i64> {
        let plane = (self.inputs / 3) as usize;
        obs.chunks_exact(stride.max(1))
            .enumerate()
            .filter(|(_, o)| o[2 * plane..3 * plane].iter().any(|&b| b != 0))
            .map(|(i, _)| i as i64)
            .collect()
    }

    /// The agents' windows of a step's observations: rows of the engine's `bytes` observations
    /// (`stride` bytes each), as floats, only the rows in `rows` (or all).
    pub fn windows(&self, obs: &[u8], stride: usize, rows: Option<&Tensor>) -> Tensor {
        let n = (obs.len() / stride.max(1)) as i64;
        let all = Tensor::from_slice(obs).view([n, stride as i64]).narrow(1, 0, self.inputs);
        let picked = match rows {
            Some(r) => all.index_select(0, r),
            None => all,
        };
        picked.to_kind(Kind::Float)
    }
}

/// The number of parameters of a var store.
#[must_use]
pub fn parameters(vs: &nn::VarStore) -> i64 {
    vs.trainable_variables().iter().map(Tensor::numel).sum::<usize>() as i64
}

/// A var store on the CPU.
#[must_use]
pub fn store() -> nn::VarStore {
    nn::VarStore::new(Device::Cpu)
}
